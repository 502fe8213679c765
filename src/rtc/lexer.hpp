// The C++ lexical grammar that a declaration scan needs: identifiers, numbers, string and
// character literals (raw ones included) and punctuation, with comments, line splices and
// preprocessor lines skipped. Knows nothing of CUDA or Lua.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace culua::detail::rtc {

inline bool is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}
inline bool is_ident_char(char c) {
  return is_ident_start(c) || (c >= '0' && c <= '9');
}
inline bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
inline bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// A source token; `text` views the source given to lex(). `::` is one Punct token.
struct Token {
  enum class Kind : uint8_t { Ident, Number, String, Char, Punct };
  Kind kind;
  std::string_view text;
  size_t begin;
  size_t end;
  int line;  // 1-based
};

// The tokens of `source`. Comments and preprocessor lines produce no tokens; literals are single
// tokens, so nothing inside them is ever taken for a declaration.
std::vector<Token> lex(std::string_view source);

inline bool is_punct(const Token& t, std::string_view p) {
  return t.kind == Token::Kind::Punct && t.text == p;
}
inline bool is_ident(const Token& t, std::string_view w) {
  return t.kind == Token::Kind::Ident && t.text == w;
}

}  // namespace culua::detail::rtc
