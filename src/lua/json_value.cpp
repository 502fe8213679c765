#include "lua/json_value.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/error.hpp"
#include "lua/binding.hpp"
#include "measure/results.hpp"

namespace culua::detail::lua {

namespace {

// cu.json.null is a light userdata pointing here: unique, immutable, and not a table (code that
// walks decoded data with type(v) == "table" never mistakes it for an object).
constexpr char kNull[] = "cu.json.null";

// The deepest nesting of tables converted.
constexpr size_t kMaxDepth = 200;

bool is_identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

// A key as Lua source would quote it: "a b", "é", "\255" (bytes of invalid UTF-8 as escapes).
std::string quoted(std::string_view s) {
  const bool utf8 = json::valid_utf8_prefix(s) == s.size();
  std::string out = "\"";
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (utf8 && c >= 0x80) {
      out += ch;
      continue;
    }
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c >= 0x7F) {
      out += fmt::format("\\{:03}", unsigned(c));
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

class Converter {
 public:
  Converter(lua_State* L, const ToJsonOptions& options) : L_(L), options_(options) {}

  // The value at idx; nullopt for a value a lenient conversion leaves out.
  std::optional<json::Value> convert(int idx) {
    switch (lua_type(L_, idx)) {
      case LUA_TNIL:
        if (options_.strict) fail_here("cannot encode nil (cu.json.null is JSON's null)");
        return std::nullopt;
      case LUA_TBOOLEAN:
        return json::Value(lua_toboolean(L_, idx) != 0);
      case LUA_TNUMBER: {
        if (lua_isinteger(L_, idx)) {
          return json::Value(static_cast<int64_t>(lua_tointeger(L_, idx)));
        }
        const double d = lua_tonumber(L_, idx);
        if (options_.strict && !std::isfinite(d)) {
          fail_here(fmt::format("cannot encode {} (JSON numbers are finite)",
                                std::isnan(d) ? "nan" : (d > 0 ? "inf" : "-inf")));
        }
        return json::Value(d);
      }
      case LUA_TSTRING: {
        size_t n = 0;
        const char* s = lua_tolstring(L_, idx, &n);
        if (options_.strict) check_utf8(std::string_view(s, n), "a string");
        return json::Value(std::string(s, n));
      }
      case LUA_TLIGHTUSERDATA:
        if (is_json_null(L_, idx)) return json::Value();
        if (options_.strict) fail_here("cannot encode a light userdata");
        return std::nullopt;
      case LUA_TTABLE:
        return table(idx);
      default: {
        if (!options_.strict) return std::nullopt;
        // Userdata by their type name (cu.Array); luaL_getmetafield reads the metatable raw.
        std::string type = luaL_typename(L_, idx);
        if (luaL_getmetafield(L_, idx, "__name") != LUA_TNIL) {
          if (lua_type(L_, -1) == LUA_TSTRING) type = lua_tostring(L_, -1);
          lua_pop(L_, 1);
        }
        fail_here(fmt::format("cannot encode a {}", type));
      }
    }
  }

 private:
  // One step of the path from the converted value to the one being converted: a key (a string on
  // the Lua stack while it is visited) or an array index.
  struct Step {
    const char* key = nullptr;
    size_t len = 0;
    lua_Integer index = 0;
  };

  std::string path() const {
    std::string p;
    for (const Step& s : path_) {
      if (!s.key) {
        p += fmt::format("[{}]", s.index);
      } else if (const std::string_view k(s.key, s.len); is_identifier(k)) {
        p += fmt::format(".{}", k);
      } else {
        p += fmt::format("[{}]", quoted(k));
      }
    }
    return p;
  }

  [[noreturn]] void fail_here(const std::string& what) const {
    const std::string p = path();
    if (p.empty()) fail(ErrorKind::Value, "{}{}", options_.who, what);
    fail(ErrorKind::Value, "{}{} at {}", options_.who, what, p);
  }

  void check_utf8(std::string_view s, const char* what) const {
    const size_t bad = json::valid_utf8_prefix(s);
    if (bad == s.size()) return;
    fail_here(fmt::format("cannot encode {} that is not valid UTF-8 (byte {} is 0x{:02X})", what,
                          bad + 1, static_cast<unsigned>(static_cast<unsigned char>(s[bad]))));
  }

  // The text of the key on top of the stack, or nullopt for keys other than strings and numbers
  // (a number is converted on a copy: converting the key in place would confuse lua_next).
  std::optional<std::string> key_text() {
    if (lua_type(L_, -1) == LUA_TSTRING) {
      size_t n = 0;
      const char* k = lua_tolstring(L_, -1, &n);
      return std::string(k, n);
    }
    if (lua_type(L_, -1) != LUA_TNUMBER) return std::nullopt;
    lua_pushvalue(L_, -1);
    std::string k = lua_tostring(L_, -1);
    lua_pop(L_, 1);
    return k;
  }

  void sort(json::Value::Object& o) const {
    if (options_.order == ToJsonOptions::Order::Keys) {
      std::sort(o.begin(), o.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    } else {
      measure::sort_result_fields(o);
    }
  }

  // Lists: exactly the integer keys 1..n (n >= 1). Objects: any other keys.
  json::Value table(int idx) {
    idx = lua_absindex(L_, idx);
    const void* self = lua_topointer(L_, idx);
    for (const void* t : tables_) {
      if (t == self) fail_here("cannot encode a table that contains itself (a cycle)");
    }
    if (tables_.size() >= kMaxDepth)
      fail_here(fmt::format("cannot encode tables nested deeper than {} levels", kMaxDepth));
    check_stack(L_, 4, "JSON value");

    lua_Integer count = 0, max_index = 0;
    bool other_keys = false;
    std::string first_string, first_integer;  // for the message of a mixed table
    lua_pushnil(L_);
    while (lua_next(L_, idx)) {
      lua_pop(L_, 1);
      ++count;
      if (lua_isinteger(L_, -1) && lua_tointeger(L_, -1) >= 1) {
        if (first_integer.empty()) first_integer = describe_json_key(L_, -1);
        max_index = std::max(max_index, lua_tointeger(L_, -1));
      } else {
        other_keys = true;
        if (!options_.strict) continue;
        if (lua_type(L_, -1) != LUA_TSTRING) {
          fail_here(fmt::format(
              "cannot encode a table with the key {} (JSON objects have string keys, arrays the "
              "keys 1..n)",
              describe_json_key(L_, -1)));
        }
        if (first_string.empty()) first_string = describe_json_key(L_, -1);
      }
      if (options_.strict && !first_string.empty() && !first_integer.empty()) {
        fail_here(
            fmt::format("cannot encode a table with both string and integer keys (keys {} and {})",
                        first_string, first_integer));
      }
    }
    if (count == 0) {
      return options_.empty_is_object ? json::Value(json::Value::Object{})
                                      : json::Value(json::Value::List{});
    }

    tables_.push_back(self);
    json::Value out;
    if (!other_keys && max_index == count) {
      json::Value::List l;
      l.reserve(static_cast<size_t>(count));
      for (lua_Integer i = 1; i <= count; ++i) {
        lua_rawgeti(L_, idx, i);
        path_.push_back({nullptr, 0, i});
        std::optional<json::Value> v = convert(-1);
        l.push_back(v ? std::move(*v) : json::Value());
        path_.pop_back();
        lua_pop(L_, 1);
      }
      out = json::Value(std::move(l));
    } else if (options_.strict && !other_keys) {
      fail_here(fmt::format(
          "cannot encode a table with the key {} and {} integer key{} (an array has the keys "
          "1..n; cu.json.null fills holes)",
          max_index, count, count == 1 ? "" : "s"));
    } else {
      json::Value::Object o;
      lua_pushnil(L_);
      while (lua_next(L_, idx)) {
        lua_pushvalue(L_, -2);
        std::optional<std::string> k = key_text();
        lua_pop(L_, 1);
        if (k) {
          const char* key = nullptr;
          size_t n = 0;
          if (lua_type(L_, -2) == LUA_TSTRING) key = lua_tolstring(L_, -2, &n);
          path_.push_back({key ? key : k->c_str(), key ? n : k->size(), 0});
          if (options_.strict) check_utf8(*k, "a key");
          std::optional<json::Value> v = convert(-1);
          path_.pop_back();
          if (v) o.emplace_back(std::move(*k), std::move(*v));
        }
        lua_pop(L_, 1);
      }
      sort(o);
      out = json::Value(std::move(o));
    }
    tables_.pop_back();
    return out;
  }

  lua_State* L_;
  const ToJsonOptions& options_;
  std::vector<Step> path_;
  std::vector<const void*> tables_;  // the tables being converted, outermost first
};

}  // namespace

void push_json_null(lua_State* L) {
  lua_pushlightuserdata(L, const_cast<char*>(kNull));
}

bool is_json_null(lua_State* L, int idx) {
  return lua_type(L, idx) == LUA_TLIGHTUSERDATA && lua_touserdata(L, idx) == kNull;
}

std::string describe_json_key(lua_State* L, int idx) {
  switch (lua_type(L, idx)) {
    case LUA_TSTRING: {
      size_t n = 0;
      const char* s = lua_tolstring(L, idx, &n);
      return quoted(std::string_view(s, n));
    }
    case LUA_TNUMBER:
      if (lua_isinteger(L, idx)) return fmt::format("{}", lua_tointeger(L, idx));
      return fmt::format("{}", lua_tonumber(L, idx));
    case LUA_TBOOLEAN:
      return lua_toboolean(L, idx) ? "true" : "false";
    default:
      return fmt::format("a {}", luaL_typename(L, idx));
  }
}

json::Value to_json_value(lua_State* L, int idx, const ToJsonOptions& options) {
  std::optional<json::Value> v = Converter(L, options).convert(lua_absindex(L, idx));
  return v ? std::move(*v) : json::Value();
}

}  // namespace culua::detail::lua
