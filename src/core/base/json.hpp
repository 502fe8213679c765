// JSON values and the one JSON writer every culua file uses (result files, traces, the kernel
// cache's metadata, cu.json.encode, res:json()). Knows nothing of Lua: the bindings convert Lua
// values into json::Value.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace culua::detail::json {

// A JSON value. Objects keep their members in insertion order (writers choose the order).
class Value {
 public:
  using List = std::vector<Value>;
  using Object = std::vector<std::pair<std::string, Value>>;

  Value() = default;
  Value(bool b) : v_(b) {}
  Value(int i) : v_(int64_t{i}) {}
  Value(int64_t i) : v_(i) {}
  Value(uint64_t u);  // above INT64_MAX: a double
  Value(double d) : v_(d) {}
  Value(const char* s) : v_(std::string(s)) {}
  Value(std::string s) : v_(std::move(s)) {}
  Value(std::string_view s) : v_(std::string(s)) {}
  Value(List l) : v_(std::move(l)) {}
  Value(Object o) : v_(std::move(o)) {}

  bool is_null() const { return v_.index() == 0; }
  bool is_bool() const { return v_.index() == 1; }
  bool is_integer() const { return v_.index() == 2; }
  bool is_number() const { return v_.index() == 2 || v_.index() == 3; }
  bool is_string() const { return v_.index() == 4; }
  bool is_list() const { return v_.index() == 5; }
  bool is_object() const { return v_.index() == 6; }
  bool is_scalar() const { return !is_list() && !is_object(); }

  bool as_bool() const { return std::get<bool>(v_); }
  int64_t as_integer() const { return std::get<int64_t>(v_); }
  double as_number() const;  // integers convert
  const std::string& as_string() const { return std::get<std::string>(v_); }
  const List& as_list() const { return std::get<List>(v_); }
  List& as_list() { return std::get<List>(v_); }
  const Object& as_object() const { return std::get<Object>(v_); }
  Object& as_object() { return std::get<Object>(v_); }

  // An object's member, or null when this is not an object or has no such member.
  const Value* get(std::string_view key) const;
  // A member reached through a dotted path ("gpu.median"); null when any step is missing.
  const Value* at_path(std::string_view path) const;
  // The number at a dotted path, when there is one.
  std::optional<double> number_at(std::string_view path) const;

  friend bool operator==(const Value& a, const Value& b);

 private:
  std::variant<std::monostate, bool, int64_t, double, std::string, List, Object> v_;
};

// Finds a member of an object.
const Value* find(const Value::Object& o, std::string_view key);
// Sets a member, replacing one of the same name.
void set_member(Value::Object& o, std::string key, Value v);

// How write() lays out its text.
struct Layout {
  // < 0: one line without spaces ({"a":[1,2]}). >= 0: containers spread over lines, members
  // indented by `indent` spaces per level, "key": value.
  int indent = -1;
  // With indent >= 0: lists of scalars, and objects of scalars whose one-line text is short, stay
  // on one line ({"n": 1024, "dtype": "f32"}, [1, 2]): result files people read.
  bool compact_scalars = false;
};

// JSON text. Integers as integers; doubles in their shortest form that reads back to the same
// double, with ".0" when that form looks like an integer (1.0, so it reads back as a float);
// non-finite numbers as null. Strings: '"' and '\\' escaped, \b \f \n \r \t, other control
// characters as \u00XX; bytes that are not valid UTF-8 each become \ufffd.
std::string write(const Value& v, Layout layout = {});
// The number text write() uses for a double (finite).
std::string number_text(double d);
// Appends the quoted, escaped string.
void append_string(std::string& out, std::string_view s);
// The length of the valid UTF-8 (RFC 3629) prefix of s: s.size() when all of s is valid.
size_t valid_utf8_prefix(std::string_view s);

// Parses JSON (nesting up to 200 levels); raises culua::detail::Error (ErrorKind::Value) naming
// `what` and the reason.
Value parse(std::string_view text, std::string_view what);

}  // namespace culua::detail::json
