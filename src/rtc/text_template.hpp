// Text templates with named placeholders, for generated CUDA source: the kernel text is written as
// it will read (a raw string with `${name}` where a value goes), and the C++ computes only the
// values. Filling is strict: a placeholder without a value, a value no placeholder uses, a name
// given twice or a malformed placeholder throws std::logic_error (a bug in the generator, never
// the user's input).
//
// Rules:
//  - `${name}` (name: a C identifier) inside a line is replaced by its value, which must not
//    contain a newline.
//  - A placeholder alone on its line (nothing before it on the line, a newline right after it) is
//    a block: its value replaces the whole line, newline included, so it must be empty (the line
//    disappears) or end with a newline.
//  - `${next_line}` is built in: the number of the line after the one it is on, counted in the
//    whole output (what `out` held before included), for the `#line` directive that restores the
//    generated file's numbering after the user's code. No value may be called `next_line`.
//  - Values are inserted as they are: a `${` inside a value (the user's code) is not a
//    placeholder. A template itself cannot contain a literal `${`.
#pragma once

#include <concepts>
#include <initializer_list>
#include <string>
#include <string_view>

namespace culua::detail::rtc {

// The value of one placeholder.
struct TemplateArg {
  TemplateArg(std::string_view n, std::string_view v) : name(n), value(v) {}
  TemplateArg(std::string_view n, const char* v) : name(n), value(v) {}
  TemplateArg(std::string_view n, const std::string& v) : name(n), value(v) {}
  template <std::integral I>
  requires(!std::same_as<I, bool> && !std::same_as<I, char>) TemplateArg(std::string_view n, I v)
      : name(n), value(std::to_string(v)) {}

  std::string_view name;
  std::string value;
};

// Appends `text` to `out` with every placeholder replaced by its value in `args`.
void fill_into(std::string& out, std::string_view text, std::initializer_list<TemplateArg> args);

// `text` with every placeholder replaced by its value in `args`.
std::string fill(std::string_view text, std::initializer_list<TemplateArg> args);

}  // namespace culua::detail::rtc
