#include "core/base/json.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/base/error.hpp"

namespace culua::detail::json {

Value::Value(uint64_t u) {
  if (u <= static_cast<uint64_t>(INT64_MAX)) {
    v_ = static_cast<int64_t>(u);
  } else {
    v_ = static_cast<double>(u);
  }
}

double Value::as_number() const {
  if (is_integer()) return static_cast<double>(as_integer());
  return std::get<double>(v_);
}

const Value* find(const Value::Object& o, std::string_view key) {
  for (const auto& [k, v] : o) {
    if (k == key) return &v;
  }
  return nullptr;
}

void set_member(Value::Object& o, std::string key, Value v) {
  for (auto& [k, old] : o) {
    if (k == key) {
      old = std::move(v);
      return;
    }
  }
  o.emplace_back(std::move(key), std::move(v));
}

const Value* Value::get(std::string_view key) const {
  return is_object() ? find(as_object(), key) : nullptr;
}

const Value* Value::at_path(std::string_view path) const {
  const Value* v = this;
  while (v) {
    const size_t dot = path.find('.');
    if (dot == std::string_view::npos) return v->get(path);
    v = v->get(path.substr(0, dot));
    path.remove_prefix(dot + 1);
  }
  return nullptr;
}

std::optional<double> Value::number_at(std::string_view path) const {
  const Value* v = at_path(path);
  if (!v || !v->is_number()) return std::nullopt;
  return v->as_number();
}

bool operator==(const Value& a, const Value& b) {
  return a.v_ == b.v_;
}

size_t valid_utf8_prefix(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    const unsigned char c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t extra = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      extra = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
      extra = 2;
      if (c == 0xE0) lo = 0xA0;  // overlong
      if (c == 0xED) hi = 0x9F;  // surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      extra = 3;
      if (c == 0xF0) lo = 0x90;  // overlong
      if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
    } else {
      return i;
    }
    if (i + extra >= n || p[i + 1] < lo || p[i + 1] > hi) return i;
    for (size_t k = 2; k <= extra; ++k) {
      if (p[i + k] < 0x80 || p[i + k] > 0xBF) return i;
    }
    i += extra + 1;
  }
  return n;
}

void append_string(std::string& out, std::string_view s) {
  out += '"';
  while (!s.empty()) {
    const size_t valid = valid_utf8_prefix(s);
    for (const char c : s.substr(0, valid)) {
      switch (c) {
        case '"':
          out += "\\\"";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\b':
          out += "\\b";
          break;
        case '\f':
          out += "\\f";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        default:
          if (static_cast<unsigned char>(c) < 0x20) {
            out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
          } else {
            out += c;
          }
      }
    }
    if (valid == s.size()) break;
    out += "\\ufffd";  // one per byte that is not valid UTF-8
    s.remove_prefix(valid + 1);
  }
  out += '"';
}

std::string number_text(double d) {
  // fmt's shortest round-trip form (Dragonbox): the fewest digits that read back exactly.
  std::string s = fmt::format("{}", d);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";  // stays a float when read back
  return s;
}

namespace {

void write_value(std::string& out, const Value& v, const Layout& layout, int level);

// An object of scalars and lists of scalars whose one-line text is short.
bool is_small(const Value& v) {
  size_t length = 0;
  for (const auto& [k, m] : v.as_object()) {
    if (m.is_object()) return false;
    if (m.is_list() && !std::all_of(m.as_list().begin(), m.as_list().end(),
                                    [](const Value& e) { return e.is_scalar(); })) {
      return false;
    }
    length += k.size() + 4;
    if (length > 100) return false;
  }
  std::string text;
  write_value(text, v, Layout{}, 0);
  return text.size() <= 100;
}

void write_value(std::string& out, const Value& v, const Layout& layout, int level) {
  const int indent = layout.indent;
  const auto newline = [&](int lvl) {
    if (indent < 0) return;
    out += '\n';
    out.append(static_cast<size_t>(indent) * static_cast<size_t>(lvl), ' ');
  };
  if (v.is_null()) {
    out += "null";
  } else if (v.is_bool()) {
    out += v.as_bool() ? "true" : "false";
  } else if (v.is_integer()) {
    out += fmt::format("{}", v.as_integer());
  } else if (v.is_number()) {
    const double d = v.as_number();
    out += std::isfinite(d) ? number_text(d) : "null";
  } else if (v.is_string()) {
    append_string(out, v.as_string());
  } else if (v.is_list()) {
    const auto& l = v.as_list();
    const bool flat =
        indent < 0 || l.empty() ||
        (layout.compact_scalars &&
         std::all_of(l.begin(), l.end(), [](const Value& e) { return e.is_scalar(); }));
    out += '[';
    for (size_t i = 0; i < l.size(); ++i) {
      if (i) out += flat && indent >= 0 ? ", " : ",";
      if (!flat) newline(level + 1);
      write_value(out, l[i], layout, level + 1);
    }
    if (!flat) newline(level);
    out += ']';
  } else {
    const auto& o = v.as_object();
    if (o.empty()) {
      out += "{}";
    } else if (indent >= 0 && layout.compact_scalars && is_small(v)) {
      out += '{';
      for (size_t i = 0; i < o.size(); ++i) {
        if (i) out += ", ";
        append_string(out, o[i].first);
        out += ": ";
        write_value(out, o[i].second, layout, level + 1);
      }
      out += '}';
    } else {
      out += '{';
      for (size_t i = 0; i < o.size(); ++i) {
        if (i) out += ',';
        newline(level + 1);
        append_string(out, o[i].first);
        out += indent < 0 ? ":" : ": ";
        write_value(out, o[i].second, layout, level + 1);
      }
      newline(level);
      out += '}';
    }
  }
}

Value from_nlohmann(const nlohmann::ordered_json& j) {
  using J = nlohmann::ordered_json;
  switch (j.type()) {
    case J::value_t::boolean:
      return Value(j.get<bool>());
    case J::value_t::number_integer:
      return Value(j.get<int64_t>());
    case J::value_t::number_unsigned:
      return Value(j.get<uint64_t>());
    case J::value_t::number_float:
      return Value(j.get<double>());
    case J::value_t::string:
      return Value(j.get<std::string>());
    case J::value_t::array: {
      Value::List l;
      l.reserve(j.size());
      for (const auto& e : j) l.push_back(from_nlohmann(e));
      return Value(std::move(l));
    }
    case J::value_t::object: {
      Value::Object o;
      o.reserve(j.size());
      for (const auto& [k, e] : j.items()) o.emplace_back(k, from_nlohmann(e));
      return Value(std::move(o));
    }
    default:
      return Value();
  }
}

}  // namespace

std::string write(const Value& v, Layout layout) {
  std::string out;
  write_value(out, v, layout, 0);
  return out;
}

Value parse(std::string_view text, std::string_view what) {
  // Deeper nesting is refused while parsing: converting it (recursively) would overflow the
  // stack. The same limit as cu.json.decode's.
  constexpr int kMaxDepth = 200;
  const auto limit_depth = [&](int depth, nlohmann::ordered_json::parse_event_t event,
                               nlohmann::ordered_json&) {
    if (depth >= kMaxDepth && (event == nlohmann::ordered_json::parse_event_t::object_start ||
                               event == nlohmann::ordered_json::parse_event_t::array_start)) {
      fail(ErrorKind::Value, "{} nests arrays and objects deeper than {} levels", what, kMaxDepth);
    }
    return true;
  };
  try {
    return from_nlohmann(nlohmann::ordered_json::parse(text.begin(), text.end(), limit_depth));
  } catch (const nlohmann::json::exception& e) {
    std::string msg = e.what();
    if (!msg.empty() && msg.front() == '[') msg.erase(0, msg.find("] ") + 2);
    fail(ErrorKind::Value, "{} is not valid JSON: {}", what, msg);
  }
}

}  // namespace culua::detail::json
