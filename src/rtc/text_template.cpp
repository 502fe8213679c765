// Filling text templates (rtc/text_template.hpp): placeholders found left to right, each value
// looked up by name, every rule checked as the text is copied.
#include "rtc/text_template.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <stdexcept>
#include <vector>

namespace culua::detail::rtc {

namespace {

constexpr std::string_view kNextLine = "next_line";

bool is_identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

[[noreturn]] void bad_template(std::string_view text, size_t at, std::string_view what) {
  // The template's line where it went wrong, for the generator's author.
  const size_t newline = text.rfind('\n', at);
  const size_t from = newline == std::string_view::npos ? 0 : newline + 1;
  const std::string_view line = text.substr(from, text.find('\n', at) - from);
  throw std::logic_error(fmt::format("text template: {} (in the line '{}')", what, line));
}

// `text` filled, to follow `lines_before` lines of output; `at_line_start`: the output so far ends
// a line (or is empty).
std::string filled_text(std::string_view text, std::initializer_list<TemplateArg> args,
                        bool at_line_start, std::ptrdiff_t lines_before) {
  const TemplateArg* const values = args.begin();
  for (size_t k = 0; k < args.size(); ++k) {
    if (!is_identifier(values[k].name) || values[k].name == kNextLine) {
      throw std::logic_error(
          fmt::format("text template: '{}' cannot name a value", values[k].name));
    }
    for (size_t j = 0; j < k; ++j) {
      if (values[j].name == values[k].name) {
        throw std::logic_error(
            fmt::format("text template: the value '{}' is given twice", values[k].name));
      }
    }
  }
  std::vector<bool> used(args.size(), false);
  std::string filled;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t at = text.find("${", pos);
    if (at == std::string_view::npos) {
      filled.append(text.substr(pos));
      break;
    }
    filled.append(text.substr(pos, at - pos));
    const size_t close = text.find('}', at + 2);
    if (close == std::string_view::npos) bad_template(text, at, "'${' without its '}'");
    const std::string_view name = text.substr(at + 2, close - at - 2);
    if (!is_identifier(name)) {
      bad_template(text, at, fmt::format("'${{{}}}' is not a placeholder", name));
    }
    pos = close + 1;
    if (name == kNextLine) {
      filled += std::to_string(lines_before + std::count(filled.begin(), filled.end(), '\n') + 2);
      continue;
    }
    const TemplateArg* const found = std::find_if(
        args.begin(), args.end(), [&](const TemplateArg& a) { return a.name == name; });
    if (found == args.end()) bad_template(text, at, fmt::format("no value for ${{{}}}", name));
    used[static_cast<size_t>(found - values)] = true;
    const std::string& value = found->value;
    const bool line_start = at == 0 ? at_line_start : text[at - 1] == '\n';
    const bool block = line_start && pos < text.size() && text[pos] == '\n';
    if (block) {
      if (!value.empty() && value.back() != '\n') {
        bad_template(text, at,
                     fmt::format("the block ${{{}}} needs a value that is empty or ends with a "
                                 "newline",
                                 name));
      }
      ++pos;  // the value replaces the line, newline included
    } else if (value.find('\n') != std::string::npos) {
      bad_template(text, at,
                   fmt::format("${{{}}} inside a line needs a value without newlines", name));
    }
    filled += value;
  }
  for (size_t k = 0; k < args.size(); ++k) {
    if (!used[k]) {
      throw std::logic_error(
          fmt::format("text template: no placeholder uses the value '{}'", values[k].name));
    }
  }
  return filled;
}

}  // namespace

void fill_into(std::string& out, std::string_view text, std::initializer_list<TemplateArg> args) {
  // Filled apart, then appended: a failure leaves `out` as it was.
  out += filled_text(text, args, out.empty() || out.back() == '\n',
                     std::count(out.begin(), out.end(), '\n'));
}

std::string fill(std::string_view text, std::initializer_list<TemplateArg> args) {
  return filled_text(text, args, true, 0);
}

}  // namespace culua::detail::rtc
