// cu.json: JSON text to Lua values and back (cu.json.encode, cu.json.decode, cu.json.null).
// Decoding builds Lua values directly from nlohmann::json's SAX parser; encoding converts the value
// to a json::Value (objects sorted by key) and writes it with json::write.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/error.hpp"
#include "lua/binding.hpp"
#include "lua/json_value.hpp"

namespace culua::detail::lua {

namespace {

using Json = nlohmann::json;

// The deepest nesting of arrays and objects either direction accepts.
constexpr size_t kMaxDepth = 200;
constexpr lua_Integer kMaxIndent = 16;

// s with the bytes that are not valid UTF-8 written as \xHH (nlohmann's messages quote the input).
std::string valid_utf8(std::string_view s) {
  std::string out;
  while (!s.empty()) {
    const size_t ok = json::valid_utf8_prefix(s);
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
    push_json_null(L_);
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

// cu.json.encode(value [, {indent = n}]): JSON text; an error for what JSON cannot hold.
int l_encode(lua_State* L) {
  arg_any(L, 1);
  check_options(L, 2, {"indent"});
  int indent = -1;
  if (get_option(L, 2, "indent")) {
    int ok = 0;
    const lua_Integer n = lua_type(L, -1) == LUA_TNUMBER ? lua_tointegerx(L, -1, &ok) : 0;
    if (!ok || n < 0 || n > kMaxIndent) {
      option_error(
          2, "indent", ErrorKind::Value,
          fmt::format("integer 0..{} expected, got {}", kMaxIndent, describe_json_key(L, -1)));
    }
    indent = static_cast<int>(n);
    lua_pop(L, 1);
  }
  const ToJsonOptions strict{.strict = true, .empty_is_object = true, .who = ""};
  const std::string text = as_argument(1, [&] {
    return json::write(to_json_value(L, 1, strict), {indent, false});
  });
  lua_pushlstring(L, text.data(), text.size());
  return 1;
}

}  // namespace

void register_json(lua_State* L) {
  const luaL_Reg functions[] = {
      {"encode", entry<l_encode>}, {"decode", entry<l_decode>}, {nullptr, nullptr}};
  luaL_newlib(L, functions);
  push_json_null(L);
  lua_setfield(L, -2, "null");
  lua_setfield(L, -2, "json");
}

}  // namespace culua::detail::lua
