// Lua values to json::Value: the one conversion behind cu.json.encode, res:json() and the rows of
// cu.sweep's results.
#pragma once

#include <lua.hpp>

#include <string>
#include <string_view>

#include "core/base/json.hpp"

namespace culua::detail::lua {

struct ToJsonOptions {
  // Strict (cu.json.encode): raise for what JSON cannot hold (nil, nan and inf, text that is not
  // UTF-8, functions and userdata, tables with both string and integer keys or with holes).
  // Otherwise such members are left out of objects and are null in arrays, numbers that are not
  // finite are written as null, and invalid UTF-8 becomes U+FFFD; keys of other types than
  // strings and numbers are left out. Cycles and nesting deeper than 200 levels raise either way.
  bool strict = false;
  // Members sorted by key (bytes), or cu.bench's fields first (measure::sort_result_fields).
  enum class Order { Keys, Fields } order = Order::Keys;
  // An empty table: {} (an object) or [] (a list).
  bool empty_is_object = false;
  // Prefix of error messages ("cu.json.encode: ").
  const char* who = "";
};

// The value at idx. Tables with exactly the keys 1..n (n >= 1) are lists, other tables objects.
// Light userdata cu.json.null is JSON's null.
json::Value to_json_value(lua_State* L, int idx, const ToJsonOptions& options);

// A key or value for messages, without running metamethods: "a", 1, 1.5, true, a table.
std::string describe_json_key(lua_State* L, int idx);

// cu.json.null (a light userdata).
void push_json_null(lua_State* L);
bool is_json_null(lua_State* L, int idx);

}  // namespace culua::detail::lua
