// cu.json: JSON text to Lua values and back (cu.json.encode, cu.json.decode, cu.json.null), through
// nlohmann::json: decoding builds Lua values directly from its SAX parser, encoding builds a
// nlohmann::json tree (whose objects sort their keys) and dumps it.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "lua/binding.hpp"

namespace culua::detail::lua {

namespace {

using Json = nlohmann::json;

// The deepest nesting of arrays and objects either direction accepts.
constexpr size_t kMaxDepth = 200;
constexpr lua_Integer kMaxIndent = 16;

// cu.json.null is a light userdata pointing here: unique, immutable, and not a table (code that
// walks decoded data with type(v) == "table" never mistakes it for an object).
constexpr char kNull[] = "cu.json.null";

void push_null(lua_State* L) {
  lua_pushlightuserdata(L, const_cast<char*>(kNull));
}

bool is_null(lua_State* L, int idx) {
  return lua_type(L, idx) == LUA_TLIGHTUSERDATA && lua_touserdata(L, idx) == kNull;
}

// The length of the valid UTF-8 prefix of s (RFC 3629: no overlong forms, no surrogates, nothing
// above U+10FFFF): s.size() when all of s is valid.
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

// s with the bytes that are not valid UTF-8 written as \xHH (nlohmann's messages quote the input).
std::string valid_utf8(std::string_view s) {
  std::string out;
  while (!s.empty()) {
    const size_t ok = valid_utf8_prefix(s);
    out.append(s.substr(0, ok));
    if (ok == s.size()) break;
    out += fmt::format("\\x{:02X}", static_cast<unsigned>(static_cast<unsigned char>(s[ok])));
    s.remove_prefix(ok + 1);
  }
  return out;
}

// --- decode --------------------------------------------------------------------------------------

// The SAX handler: each value is pushed on the Lua stack and stored into its container at once,
// so the stack holds the open containers (and the pending key of each object) only.
class LuaBuilder {
 public:
  explicit LuaBuilder(lua_State* L) : L_(L) {}

  bool null() {
    push_null(L_);
    return store();
  }
  bool boolean(bool b) {
    lua_pushboolean(L_, b);
    return store();
  }
  bool number_integer(Json::number_integer_t i) {
    lua_pushinteger(L_, static_cast<lua_Integer>(i));
    return store();
  }
  bool number_unsigned(Json::number_unsigned_t u) {
    if (u <= static_cast<Json::number_unsigned_t>(INT64_MAX)) {
      lua_pushinteger(L_, static_cast<lua_Integer>(u));
    } else {
      lua_pushnumber(L_, static_cast<lua_Number>(u));
    }
    return store();
  }
  bool number_float(Json::number_float_t d, const Json::string_t&) {
    lua_pushnumber(L_, static_cast<lua_Number>(d));
    return store();
  }
  bool string(Json::string_t& s) {
    lua_pushlstring(L_, s.data(), s.size());
    return store();
  }
  bool binary(Json::binary_t&) { return false; }  // only binary formats (CBOR, ...) produce these
  bool start_object(std::size_t) { return open(kObject); }
  bool key(Json::string_t& k) {
    lua_pushlstring(L_, k.data(), k.size());
    return true;
  }
  bool end_object() { return close(); }
  bool start_array(std::size_t) { return open(0); }
  bool end_array() { return close(); }
  bool parse_error(std::size_t position, const std::string&, const Json::exception& e) {
    error_position_ = position;
    error_ = e.what();
    return false;
  }

  bool too_deep() const { return too_deep_; }
  size_t error_position() const { return error_position_; }
  const std::string& error() const { return error_; }

 private:
  static constexpr lua_Integer kObject = -1;

  bool open(lua_Integer kind) {
    if (open_.size() >= kMaxDepth) {
      too_deep_ = true;
      return false;
    }
    check_stack(L_, 3, "cu.json.decode");
    lua_newtable(L_);
    open_.push_back(kind);
    return true;
  }
  bool close() {
    open_.pop_back();
    return store();
  }
  // The value on top is complete: into its object (under the key below it) or array, unless it
  // is the document itself.
  bool store() {
    if (open_.empty()) return true;
    lua_Integer& n = open_.back();
    if (n == kObject) {
      lua_rawset(L_, -3);
    } else {
      lua_rawseti(L_, -2, ++n);
    }
    return true;
  }

  lua_State* L_;
  std::vector<lua_Integer> open_;  // per open container: kObject, or an array's length so far
  bool too_deep_ = false;
  size_t error_position_ = 0;
  std::string error_;
};

// The 1-based byte where the nesting first exceeds kMaxDepth (the text up to there parsed).
size_t too_deep_position(std::string_view text) {
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth) return i + 1;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return text.size();
}

// "at byte 27" on the first line, "at byte 27 (line 3, column 5)" after it.
std::string position_text(std::string_view text, size_t byte) {
  const std::string_view before = text.substr(0, byte > 0 ? std::min(byte - 1, text.size()) : 0);
  const size_t line_start = before.rfind('\n');
  if (line_start == std::string_view::npos) return fmt::format("at byte {}", byte);
  size_t line = 1;
  for (char c : before) line += c == '\n';
  return fmt::format("at byte {} (line {}, column {})", byte, line, byte - (line_start + 1));
}

// nlohmann's message without its "[json.exception.parse_error.101] parse error at line 1,
// column 4: " prefix (the position is given in bytes).
std::string parse_reason(std::string message) {
  if (message.rfind("[json.exception.", 0) == 0) {
    const size_t end = message.find("] ");
    if (end != std::string::npos) message.erase(0, end + 2);
  }
  if (message.rfind("parse error", 0) == 0) {
    const size_t colon = message.find(": ");
    if (colon != std::string::npos) message.erase(0, colon + 2);
  }
  return message;
}

// cu.json.decode(text): the value, or nil and a message for text that is not JSON.
int l_decode(lua_State* L) {
  arg_type(L, 1, LUA_TSTRING);
  size_t len = 0;
  const char* s = lua_tolstring(L, 1, &len);
  const std::string_view text(s, len);
  const int top = lua_gettop(L);
  LuaBuilder builder(L);
  if (Json::sax_parse(text.begin(), text.end(), &builder)) return 1;
  lua_settop(L, top);
  std::string message;
  if (builder.too_deep()) {
    message = fmt::format("JSON nested deeper than {} levels {}", kMaxDepth,
                          position_text(text, too_deep_position(text)));
  } else {
    message = fmt::format("invalid JSON {}: {}", position_text(text, builder.error_position()),
                          valid_utf8(parse_reason(builder.error())));
  }
  lua_pushnil(L);
  lua_pushlstring(L, message.data(), message.size());
  return 2;
}

// --- encode --------------------------------------------------------------------------------------

bool is_identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

// A key as Lua source would quote it: "a b", "é", "\255" (bytes of invalid UTF-8 as escapes).
std::string quoted(std::string_view s) {
  const bool utf8 = valid_utf8_prefix(s) == s.size();
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

// A value's description for messages, without running metamethods: "a", 1, 1.5, true, a table.
std::string value_text(lua_State* L, int idx) {
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

class Encoder {
 public:
  explicit Encoder(lua_State* L) : L_(L) {}

  Json encode(int idx) {
    switch (lua_type(L_, idx)) {
      case LUA_TNIL:
        fail_here("cannot encode nil (cu.json.null is JSON's null)");
      case LUA_TBOOLEAN:
        return Json(lua_toboolean(L_, idx) != 0);
      case LUA_TNUMBER: {
        if (lua_isinteger(L_, idx)) return Json(static_cast<int64_t>(lua_tointeger(L_, idx)));
        const double d = lua_tonumber(L_, idx);
        if (!std::isfinite(d)) {
          fail_here(fmt::format("cannot encode {} (JSON numbers are finite)",
                                std::isnan(d) ? "nan" : (d > 0 ? "inf" : "-inf")));
        }
        return Json(d);
      }
      case LUA_TSTRING: {
        size_t n = 0;
        const char* s = lua_tolstring(L_, idx, &n);
        check_utf8(std::string_view(s, n), "a string");
        return Json(std::string(s, n));
      }
      case LUA_TLIGHTUSERDATA:
        if (is_null(L_, idx)) return Json(nullptr);
        fail_here("cannot encode a light userdata");
      case LUA_TTABLE:
        return table(idx);
      default: {
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
  // One step of the path from the encoded value to the one being encoded: a key (a string on the
  // Lua stack while it is visited) or an array index.
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
    if (p.empty()) fail(ErrorKind::Value, "{}", what);
    fail(ErrorKind::Value, "{} at {}", what, p);
  }

  void check_utf8(std::string_view s, const char* what) const {
    const size_t bad = valid_utf8_prefix(s);
    if (bad == s.size()) return;
    fail_here(fmt::format("cannot encode {} that is not valid UTF-8 (byte {} is 0x{:02X})", what,
                          bad + 1, static_cast<unsigned>(static_cast<unsigned char>(s[bad]))));
  }

  // Arrays: exactly the integer keys 1..n (n >= 1). Objects: string keys only, or no keys.
  Json table(int idx) {
    idx = lua_absindex(L_, idx);
    const void* self = lua_topointer(L_, idx);
    for (const void* t : tables_) {
      if (t == self) fail_here("cannot encode a table that contains itself (a cycle)");
    }
    if (tables_.size() >= kMaxDepth)
      fail_here(fmt::format("cannot encode tables nested deeper than {} levels", kMaxDepth));
    check_stack(L_, 4, "cu.json.encode");

    lua_Integer count = 0, max_index = 0;
    std::string first_string, first_integer;  // for the message of a mixed table
    lua_pushnil(L_);
    while (lua_next(L_, idx)) {
      lua_pop(L_, 1);
      ++count;
      if (lua_type(L_, -1) == LUA_TSTRING) {
        if (first_string.empty()) first_string = value_text(L_, -1);
      } else if (lua_isinteger(L_, -1) && lua_tointeger(L_, -1) >= 1) {
        if (first_integer.empty()) first_integer = value_text(L_, -1);
        max_index = std::max(max_index, lua_tointeger(L_, -1));
      } else {
        fail_here(fmt::format(
            "cannot encode a table with the key {} (JSON objects have string keys, arrays the "
            "keys 1..n)",
            value_text(L_, -1)));
      }
      if (!first_string.empty() && !first_integer.empty()) {
        fail_here(
            fmt::format("cannot encode a table with both string and integer keys (keys {} and {})",
                        first_string, first_integer));
      }
    }

    tables_.push_back(self);
    Json out;
    if (!first_integer.empty()) {
      if (max_index != count) {
        fail_here(fmt::format(
            "cannot encode a table with the key {} and {} integer key{} (an array has the keys "
            "1..n; cu.json.null fills holes)",
            max_index, count, count == 1 ? "" : "s"));
      }
      out = Json::array();
      out.get_ref<Json::array_t&>().reserve(static_cast<size_t>(count));
      for (lua_Integer i = 1; i <= count; ++i) {
        lua_rawgeti(L_, idx, i);
        path_.push_back({nullptr, 0, i});
        out.push_back(encode(-1));
        path_.pop_back();
        lua_pop(L_, 1);
      }
    } else {
      out = Json::object();
      lua_pushnil(L_);
      while (lua_next(L_, idx)) {
        size_t n = 0;
        const char* k = lua_tolstring(L_, -2, &n);  // a string: no conversion in place
        path_.push_back({k, n, 0});
        check_utf8(std::string_view(k, n), "a key");
        out[std::string(k, n)] = encode(-1);
        path_.pop_back();
        lua_pop(L_, 1);
      }
    }
    tables_.pop_back();
    return out;
  }

  lua_State* L_;
  std::vector<Step> path_;
  std::vector<const void*> tables_;  // the tables being encoded, outermost first
};

// cu.json.encode(value [, {indent = n}]): JSON text; an error for what JSON cannot hold.
int l_encode(lua_State* L) {
  arg_any(L, 1);
  check_options(L, 2, {"indent"});
  int indent = -1;
  if (get_option(L, 2, "indent")) {
    int ok = 0;
    const lua_Integer n = lua_type(L, -1) == LUA_TNUMBER ? lua_tointegerx(L, -1, &ok) : 0;
    if (!ok || n < 0 || n > kMaxIndent) {
      option_error(2, "indent", ErrorKind::Value,
                   fmt::format("integer 0..{} expected, got {}", kMaxIndent, value_text(L, -1)));
    }
    indent = static_cast<int>(n);
    lua_pop(L, 1);
  }
  const std::string text = as_argument(1, [&] { return Encoder(L).encode(1).dump(indent); });
  lua_pushlstring(L, text.data(), text.size());
  return 1;
}

}  // namespace

void register_json(lua_State* L) {
  const luaL_Reg functions[] = {
      {"encode", entry<l_encode>}, {"decode", entry<l_decode>}, {nullptr, nullptr}};
  luaL_newlib(L, functions);
  push_null(L);
  lua_setfield(L, -2, "null");
  lua_setfield(L, -2, "json");
}

}  // namespace culua::detail::lua
