#include "rtc/templates.hpp"

#include <algorithm>
#include <cctype>

#include "core/backend/cuda_text.hpp"
#include "core/base/error.hpp"

namespace culua::detail::rtc {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool is_identifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

bool is_ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      out.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  return out;
}

void parse_list(std::string_view text, std::vector<TemplateParam>& out, bool outputs,
                std::string_view whole) {
  if (trim(text).empty()) return;
  for (std::string_view piece : split(text, ',')) {
    std::vector<std::string_view> words;
    size_t i = 0;
    while (i < piece.size()) {
      while (i < piece.size() && std::isspace(static_cast<unsigned char>(piece[i]))) ++i;
      const size_t start = i;
      while (i < piece.size() && !std::isspace(static_cast<unsigned char>(piece[i]))) ++i;
      if (i > start) words.push_back(piece.substr(start, i - start));
    }
    TemplateParam p;
    if (!words.empty() && words[0] == "raw") {
      p.raw = true;
      words.erase(words.begin());
    }
    if (words.size() != 2) {
      fail(ErrorKind::Value,
           "signature '{}': each parameter is 'TYPE NAME' (such as 'f32 x' or 'T x'), got '{}'",
           whole, piece);
    }
    p.type = words[0];
    p.name = words[1];
    if (!is_identifier(p.type)) {
      fail(ErrorKind::Value, "signature '{}': '{}' is not a dtype or a type placeholder", whole,
           p.type);
    }
    if (p.raw && outputs) {
      fail(ErrorKind::Value, "signature '{}': outputs cannot be raw ('{}')", whole, p.name);
    }
    p.fixed = parse_dtype(p.type);
    p.role = (outputs ? "out '" : "input '") + p.name + "'";
    out.push_back(std::move(p));
  }
}

}  // namespace

bool TemplateParam::placeholder() const {
  return !dtype().has_value();
}

TemplateSignature parse_template_signature(std::string_view text, bool reduction) {
  const size_t arrow = text.find("->");
  if (arrow == std::string_view::npos || text.find("->", arrow + 2) != std::string_view::npos) {
    fail(ErrorKind::Value,
         "signature '{}' needs one '->' between inputs and outputs, as in "
         "\"f32 x, f32 y -> f32 z\"",
         text);
  }
  TemplateSignature sig;
  parse_list(text.substr(0, arrow), sig.inputs, false, text);
  parse_list(text.substr(arrow + 2), sig.outputs, true, text);
  if (sig.outputs.empty()) fail(ErrorKind::Value, "signature '{}' has no outputs", text);
  std::vector<std::string> names;
  for (const auto* list : {&sig.inputs, &sig.outputs}) {
    for (const TemplateParam& p : *list) {
      if (!is_identifier(p.name)) {
        fail(ErrorKind::Value, "signature '{}': '{}' is not a valid name", text, p.name);
      }
      const bool reserved = p.name == "i" || p.name == "n" || p.name.rfind("culua_", 0) == 0 ||
                            p.name[0] == '_' || (reduction && (p.name == "a" || p.name == "b"));
      if (reserved) {
        fail(ErrorKind::Value,
             "signature '{}': the name '{}' is reserved (i, n{}, and names starting with _ or "
             "culua_)",
             text, p.name, reduction ? ", a, b" : "");
      }
      if (std::find(names.begin(), names.end(), p.name) != names.end()) {
        fail(ErrorKind::Value, "signature '{}': the name '{}' is used twice", text, p.name);
      }
      names.push_back(p.name);
    }
  }
  return sig;
}

std::string storage_type(DType t) {
  return cuda_type_name(t, TypeSpelling::Cuda);
}

std::string value_type(DType t) {
  return t == DType::F16 || t == DType::BF16 ? "float" : storage_type(t);
}

bool reads_variable(std::string_view body, std::string_view name) {
  for (size_t at = body.find(name); at != std::string_view::npos; at = body.find(name, at + 1)) {
    const bool starts = at == 0 || (!is_ident_char(body[at - 1]) && body[at - 1] != '.' &&
                                    !(at >= 2 && body[at - 2] == '-' && body[at - 1] == '>'));
    const size_t end = at + name.size();
    if (!starts || (end < body.size() && is_ident_char(body[end]))) continue;
    size_t j = end;
    while (j < body.size() && std::isspace(static_cast<unsigned char>(body[j]))) ++j;
    const bool assignment =
        j < body.size() && body[j] == '=' && (j + 1 >= body.size() || body[j + 1] != '=');
    if (!assignment) return true;
  }
  return false;
}

ReduceLayout merge_reduce_dims(const Shape& shape, const std::vector<bool>& reduced,
                               const std::vector<std::vector<int64_t>>& strides) {
  struct Dim {
    int64_t size;
    bool red;
    std::vector<int64_t> st;
  };
  std::vector<Dim> dims;
  for (int d = 0; d < shape.ndim; ++d) {
    if (shape[d] == 1) continue;
    Dim x{shape[d], reduced[static_cast<size_t>(d)], {}};
    for (const auto& s : strides) x.st.push_back(s[static_cast<size_t>(d)]);
    if (!dims.empty() && dims.back().red == x.red) {
      Dim& outer = dims.back();
      bool ok = true;
      for (size_t k = 0; k < x.st.size(); ++k) ok = ok && outer.st[k] == x.st[k] * x.size;
      if (ok) {
        outer.size *= x.size;
        outer.st = x.st;
        continue;
      }
    }
    dims.push_back(std::move(x));
  }
  ReduceLayout l;
  l.kept_strides.resize(strides.size());
  l.reduced_strides.resize(strides.size());
  for (const Dim& d : dims) {
    (d.red ? l.reduced_sizes : l.kept_sizes).push_back(d.size);
    for (size_t k = 0; k < strides.size(); ++k) {
      (d.red ? l.reduced_strides : l.kept_strides)[k].push_back(d.st[k]);
    }
  }
  return l;
}

}  // namespace culua::detail::rtc
