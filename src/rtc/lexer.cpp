#include "rtc/lexer.hpp"

#include <algorithm>
#include <string>

namespace culua::detail::rtc {

namespace {

class Lexer {
 public:
  explicit Lexer(std::string_view src) : src_(src) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    while (pos_ < src_.size()) {
      const char c = src_[pos_];
      if (c == '\n') {
        ++line_;
        ++pos_;
        at_line_start_ = true;
      } else if (is_space(c)) {
        ++pos_;
      } else if (c == '\\' && spliced_newline(pos_)) {
        skip_splice();
      } else if (c == '/' && peek(1) == '/') {
        skip_line_comment();
      } else if (c == '/' && peek(1) == '*') {
        skip_block_comment();
      } else if (c == '#' && at_line_start_) {
        skip_directive();
      } else {
        at_line_start_ = false;
        out.push_back(next_token());
      }
    }
    return out;
  }

 private:
  char peek(size_t ahead) const { return pos_ + ahead < src_.size() ? src_[pos_ + ahead] : '\0'; }
  // A backslash at `at` followed by a newline (optionally "\r\n"): a line splice.
  bool spliced_newline(size_t at) const {
    size_t k = at + 1;
    if (k < src_.size() && src_[k] == '\r') ++k;
    return k < src_.size() && src_[k] == '\n';
  }
  void skip_splice() {
    pos_ += src_[pos_ + 1] == '\r' ? 3 : 2;
    ++line_;
  }
  // Up to the end of the line; a comment ending in a line splice continues on the next line.
  void skip_line_comment() {
    while (pos_ < src_.size() && src_[pos_] != '\n') {
      if (src_[pos_] == '\\' && spliced_newline(pos_)) {
        skip_splice();
      } else {
        ++pos_;
      }
    }
  }
  void skip_block_comment() {
    pos_ += 2;
    while (pos_ < src_.size() && !(src_[pos_] == '*' && peek(1) == '/')) {
      if (src_[pos_] == '\n') ++line_;
      ++pos_;
    }
    pos_ = std::min(src_.size(), pos_ + 2);
  }
  // Skips a quoted literal starting at pos_ (the opening quote); stops at an unescaped newline.
  void skip_quoted(char quote) {
    ++pos_;
    while (pos_ < src_.size() && src_[pos_] != quote && src_[pos_] != '\n') {
      if (src_[pos_] == '\\' && pos_ + 1 < src_.size()) {
        if (src_[pos_ + 1] == '\n') ++line_;
        ++pos_;
      }
      ++pos_;
    }
    if (pos_ < src_.size() && src_[pos_] == quote) ++pos_;
  }
  // R"delim( ... )delim", pos_ at the opening quote.
  void skip_raw_string() {
    const size_t open = src_.find('(', pos_ + 1);
    if (open == std::string_view::npos || open - pos_ - 1 > 16) {
      skip_quoted('"');
      return;
    }
    // Built by appending: GCC 12 misreports `")" + std::string(...)` here (-Wrestrict).
    std::string closing = ")";
    closing += src_.substr(pos_ + 1, open - pos_ - 1);
    closing += '"';
    const size_t close = src_.find(closing, open + 1);
    const size_t end = close == std::string_view::npos ? src_.size() : close + closing.size();
    line_ += static_cast<int>(std::count(src_.begin() + static_cast<std::ptrdiff_t>(pos_),
                                         src_.begin() + static_cast<std::ptrdiff_t>(end), '\n'));
    pos_ = end;
  }
  // A preprocessor line, with its splices, comments and literals.
  void skip_directive() {
    while (pos_ < src_.size() && src_[pos_] != '\n') {
      const char c = src_[pos_];
      if (c == '\\' && spliced_newline(pos_)) {
        skip_splice();
      } else if (c == '/' && peek(1) == '/') {
        skip_line_comment();
      } else if (c == '/' && peek(1) == '*') {
        skip_block_comment();
      } else if (c == '"' || c == '\'') {
        skip_quoted(c);
      } else {
        ++pos_;
      }
    }
  }

  Token next_token() {
    const size_t start = pos_;
    const int line = line_;
    Token::Kind kind = Token::Kind::Punct;
    const char c = src_[pos_];
    if (is_ident_start(c)) {
      while (pos_ < src_.size() && is_ident_char(src_[pos_])) ++pos_;
      const std::string_view word = src_.substr(start, pos_ - start);
      const char after = pos_ < src_.size() ? src_[pos_] : '\0';
      const bool encoding = word == "u8" || word == "u" || word == "U" || word == "L";
      if (after == '"' &&
          (word == "R" || word == "u8R" || word == "uR" || word == "UR" || word == "LR")) {
        skip_raw_string();
        kind = Token::Kind::String;
      } else if (after == '"' && encoding) {
        skip_quoted('"');
        kind = Token::Kind::String;
      } else if (after == '\'' && encoding) {
        skip_quoted('\'');
        kind = Token::Kind::Char;
      } else {
        kind = Token::Kind::Ident;
      }
    } else if (is_digit(c) || (c == '.' && is_digit(peek(1)))) {
      // A pp-number, with digit separators (1'000) and exponent signs (1e+5, 0x1p-3).
      ++pos_;
      while (pos_ < src_.size()) {
        const char d = src_[pos_];
        if ((d == '+' || d == '-') && (src_[pos_ - 1] == 'e' || src_[pos_ - 1] == 'E' ||
                                       src_[pos_ - 1] == 'p' || src_[pos_ - 1] == 'P')) {
          ++pos_;
        } else if (d == '\'' && pos_ + 1 < src_.size() && is_ident_char(src_[pos_ + 1])) {
          pos_ += 2;
        } else if (is_ident_char(d) || d == '.') {
          ++pos_;
        } else {
          break;
        }
      }
      kind = Token::Kind::Number;
    } else if (c == '"') {
      skip_quoted('"');
      kind = Token::Kind::String;
    } else if (c == '\'') {
      skip_quoted('\'');
      kind = Token::Kind::Char;
    } else if (c == ':' && peek(1) == ':') {
      pos_ += 2;
    } else {
      ++pos_;
    }
    return Token{kind, src_.substr(start, pos_ - start), start, pos_, line};
  }

  std::string_view src_;
  size_t pos_ = 0;
  int line_ = 1;
  bool at_line_start_ = true;
};

}  // namespace

std::vector<Token> lex(std::string_view source) {
  return Lexer(source).run();
}

}  // namespace culua::detail::rtc
