#include "core/kernel_signature.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>

#include "core/error.hpp"

namespace culua::detail::rtc {

namespace {

bool is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}
bool is_ident_char(char c) {
  return is_ident_start(c) || (c >= '0' && c <= '9');
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// ---------------------------------------------------------------------------------------------
// Source tokens: what a declaration scan needs of the C++ lexical grammar. Comments and
// preprocessor lines produce no tokens; literals are single tokens, so nothing inside them is
// ever taken for a declaration.

struct Token {
  enum class Kind : uint8_t { Ident, Number, String, Char, Punct };
  Kind kind;
  std::string_view text;
  size_t begin;
  size_t end;
  int line;
};

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
    const std::string closing = ")" + std::string(src_.substr(pos_ + 1, open - pos_ - 1)) + "\"";
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

bool is_punct(const Token& t, std::string_view p) {
  return t.kind == Token::Kind::Punct && t.text == p;
}
bool is_ident(const Token& t, std::string_view w) {
  return t.kind == Token::Kind::Ident && t.text == w;
}

// Words that spell (part of) a type, or qualify one: a parameter's last identifier is its name
// only when it is none of these.
bool is_type_keyword(std::string_view w) {
  static constexpr std::string_view kWords[] = {"void",     "bool",         "char",
                                                "short",    "int",          "long",
                                                "signed",   "unsigned",     "float",
                                                "double",   "wchar_t",      "char8_t",
                                                "char16_t", "char32_t",     "auto",
                                                "__int128", "const",        "volatile",
                                                "restrict", "__restrict__", "__restrict",
                                                "struct",   "class",        "union",
                                                "enum",     "typename",     "__grid_constant__"};
  return std::find(std::begin(kWords), std::end(kWords), w) != std::end(kWords);
}
// Words that qualify a type without naming one.
bool is_qualifier(std::string_view w) {
  static constexpr std::string_view kWords[] = {
      "const", "volatile", "restrict", "__restrict__", "__restrict",       "struct",
      "class", "union",    "enum",     "typename",     "__grid_constant__"};
  return std::find(std::begin(kWords), std::end(kWords), w) != std::end(kWords);
}
// Identifiers followed by a parenthesized argument list that are not the kernel's name.
bool is_attribute_call(std::string_view w) {
  return w == "__launch_bounds__" || w == "__attribute__" || w == "__declspec" || w == "alignas" ||
         w == "__maxnreg__" || w == "__cluster_dims__" || w == "__align__" || w == "decltype";
}

// ---------------------------------------------------------------------------------------------
// The declaration scan.

class Scanner {
 public:
  explicit Scanner(std::string_view src) : toks_(Lexer(src).run()) {}

  std::vector<KernelDecl> run() {
    size_t decl_start = 0;
    size_t i = 0;
    while (i < toks_.size()) {
      const Token& t = toks_[i];
      if (is_punct(t, "{")) {
        scopes_.push_back(Scope{});
        decl_start = ++i;
      } else if (is_punct(t, "}")) {
        if (!scopes_.empty()) scopes_.pop_back();
        decl_start = ++i;
      } else if (is_punct(t, ";")) {
        decl_start = ++i;
      } else if (is_ident(t, "namespace") && open_namespace(i)) {
        decl_start = i;
      } else if (is_ident(t, "extern") && open_linkage_block(i)) {
        decl_start = i;
      } else if (is_ident(t, "__global__")) {
        i = kernel(decl_start, i);
      } else {
        ++i;
      }
    }
    return std::move(found_);
  }

 private:
  struct Scope {
    enum class Kind : uint8_t { Block, Namespace, ExternC, ExternCxx };
    Kind kind = Kind::Block;
    std::string name;  // "a" or "a::b" for a named namespace, "" otherwise
  };

  size_t size() const { return toks_.size(); }

  // `namespace a {`, `namespace a::b {`, `namespace {`, `namespace a::inline b {`: pushes the
  // scope and moves `i` past the brace. Aliases and using-directives are left alone.
  bool open_namespace(size_t& i) {
    std::string name;
    size_t j = i + 1;
    while (j < size()) {
      const Token& t = toks_[j];
      if (is_punct(t, "{")) {
        scopes_.push_back(Scope{Scope::Kind::Namespace, name});
        i = j + 1;
        return true;
      }
      if (is_ident(t, "inline")) {
        ++j;
      } else if (t.kind == Token::Kind::Ident) {
        name += t.text;
        ++j;
      } else if (is_punct(t, "::")) {
        name += "::";
        ++j;
      } else {
        return false;
      }
    }
    return false;
  }

  // `extern "C" {` and `extern "C++" {`.
  bool open_linkage_block(size_t& i) {
    if (i + 2 >= size() || toks_[i + 1].kind != Token::Kind::String ||
        !is_punct(toks_[i + 2], "{")) {
      return false;
    }
    const std::string_view lang = toks_[i + 1].text;
    scopes_.push_back(Scope{lang == "\"C\"" ? Scope::Kind::ExternC : Scope::Kind::ExternCxx, ""});
    i += 3;
    return true;
  }

  bool in_extern_c_block() const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      if (it->kind == Scope::Kind::ExternC) return true;
      if (it->kind == Scope::Kind::ExternCxx) return false;
    }
    return false;
  }

  std::string qualifier() const {
    std::string q;
    for (const Scope& s : scopes_) {
      if (s.kind == Scope::Kind::Namespace && !s.name.empty()) q += s.name + "::";
    }
    return q;
  }

  // The index of the bracket closing the one at `open` ((, [ or {), or npos.
  size_t match_bracket(size_t open) const {
    int depth = 0;
    for (size_t k = open; k < size(); ++k) {
      const Token& t = toks_[k];
      if (t.kind != Token::Kind::Punct) continue;
      if (t.text == "(" || t.text == "[" || t.text == "{") ++depth;
      if (t.text == ")" || t.text == "]" || t.text == "}") {
        if (--depth == 0) return k;
      }
    }
    return std::string_view::npos;
  }

  // The index of the `>` closing the `<` at `open`, or npos. Angle brackets inside parentheses
  // (`N > 3` in `(N > 3)`) do not count; a statement or block boundary ends the search.
  size_t match_angle(size_t open) const {
    int angle = 0;
    int paren = 0;
    for (size_t k = open; k < size(); ++k) {
      const Token& t = toks_[k];
      if (t.kind != Token::Kind::Punct) continue;
      if (t.text == ";" || t.text == "{" || t.text == "}") return std::string_view::npos;
      if (t.text == "(" || t.text == "[") ++paren;
      if (t.text == ")" || t.text == "]") --paren;
      if (paren != 0) continue;
      if (t.text == "<") ++angle;
      if (t.text == ">" && --angle == 0) return k;
    }
    return std::string_view::npos;
  }

  // Tokens [b, e) as text: one space where the source had whitespace or a comment (or a token
  // that was left out), none inside brackets, around `::` or before commas.
  std::string join(size_t b, size_t e, size_t skip = std::string_view::npos) const {
    std::string out;
    const Token* prev = nullptr;
    for (size_t k = b; k < e; ++k) {
      if (k == skip) continue;
      const Token& t = toks_[k];
      const bool tight = prev == nullptr || t.begin == prev->end || is_punct(*prev, "(") ||
                         is_punct(*prev, "[") || is_punct(*prev, "::") || is_punct(t, ")") ||
                         is_punct(t, "]") || is_punct(t, "[") || is_punct(t, ",") ||
                         is_punct(t, "::");
      if (!tight) out += ' ';
      out += t.text;
      prev = &t;
    }
    return out;
  }

  // Top-level pieces of the tokens [b, e), split at commas outside (), [], {} and <>.
  std::vector<std::pair<size_t, size_t>> split(size_t b, size_t e) const {
    std::vector<std::pair<size_t, size_t>> out;
    int depth = 0;
    int angle = 0;
    size_t start = b;
    for (size_t k = b; k < e; ++k) {
      const Token& t = toks_[k];
      if (t.kind != Token::Kind::Punct) continue;
      if (t.text == "(" || t.text == "[" || t.text == "{") ++depth;
      if (t.text == ")" || t.text == "]" || t.text == "}") --depth;
      if (depth == 0 && t.text == "<") ++angle;
      if (depth == 0 && t.text == ">" && angle > 0) --angle;
      if (depth == 0 && angle == 0 && t.text == ",") {
        out.emplace_back(start, k);
        start = k + 1;
      }
    }
    out.emplace_back(start, e);
    return out;
  }

  // One parameter, tokens [b, e): its type text and name.
  std::pair<std::string, std::string> parameter(size_t b, size_t e) const {
    // Attributes ([[maybe_unused]]) are not part of the type.
    while (b + 1 < e && is_punct(toks_[b], "[") && is_punct(toks_[b + 1], "[")) {
      const size_t close = match_bracket(b);
      if (close == std::string_view::npos || close >= e) break;
      b = close + 1;
    }
    // A default argument is not part of the type.
    int depth = 0;
    for (size_t k = b; k < e; ++k) {
      const Token& t = toks_[k];
      if (t.kind != Token::Kind::Punct) continue;
      if (t.text == "(" || t.text == "[" || t.text == "{" || t.text == "<") ++depth;
      if (t.text == ")" || t.text == "]" || t.text == "}" || t.text == ">") --depth;
      if (depth == 0 && t.text == "=") {
        e = k;
        break;
      }
    }
    // A function pointer names itself inside its declarator: void (*name)(int).
    for (size_t k = b; k + 3 < e; ++k) {
      if (!is_punct(toks_[k], "(") ||
          !(is_punct(toks_[k + 1], "*") || is_punct(toks_[k + 1], "&"))) {
        continue;
      }
      size_t n = k + 2;
      while (n < e && toks_[n].kind == Token::Kind::Ident && is_qualifier(toks_[n].text)) ++n;
      if (n + 1 < e && toks_[n].kind == Token::Kind::Ident && is_punct(toks_[n + 1], ")")) {
        return {join(b, e, n), std::string(toks_[n].text)};
      }
    }
    // Array suffixes follow the name: float x[4].
    size_t last = e;
    while (last > b && is_punct(toks_[last - 1], "]")) {
      int d = 0;
      size_t k = last;
      while (k > b) {
        --k;
        if (is_punct(toks_[k], "]")) ++d;
        if (is_punct(toks_[k], "[") && --d == 0) break;
      }
      last = k;
    }
    if (last > b + 1) {
      const Token& cand = toks_[last - 1];
      bool names_a_type = false;
      for (size_t k = b; k + 1 < last; ++k) {
        if (toks_[k].kind != Token::Kind::Ident || !is_qualifier(toks_[k].text)) {
          names_a_type = true;
        }
      }
      if (cand.kind == Token::Kind::Ident && !is_type_keyword(cand.text) &&
          !is_punct(toks_[last - 2], "::") && names_a_type) {
        return {join(b, e, last - 1), std::string(cand.text)};
      }
    }
    return {join(b, e), ""};
  }

  // The declaration whose `__global__` is at `g`; returns where the scan continues.
  size_t kernel(size_t decl_start, size_t g) {
    KernelDecl d;
    for (size_t k = decl_start; k < g; ++k) {
      if (is_ident(toks_[k], "template")) {
        if (k + 1 < g && is_punct(toks_[k + 1], "<")) {
          const size_t close = match_angle(k + 1);
          if (close == std::string_view::npos || close >= g) return g + 1;
          d.is_template = true;
          d.template_params = join(k + 2, close);
          k = close;
        } else {
          // An explicit instantiation of a template listed at its own declaration.
          return g + 1;
        }
      } else if (is_ident(toks_[k], "extern") && k + 1 < g &&
                 toks_[k + 1].kind == Token::Kind::String) {
        d.extern_c = toks_[k + 1].text == "\"C\"";
      }
    }
    // The name: the first identifier (possibly qualified) followed by `(`, after the return type
    // and attributes.
    size_t j = g + 1;
    size_t name_begin = 0;
    size_t name_end = 0;
    while (true) {
      if (j >= size()) return j;
      const Token& t = toks_[j];
      if (is_punct(t, ";") || is_punct(t, "{") || is_punct(t, "}")) return j;
      if (is_punct(t, "[") && j + 1 < size() && is_punct(toks_[j + 1], "[")) {
        const size_t close = match_bracket(j);
        if (close == std::string_view::npos) return size();
        j = close + 1;
        continue;
      }
      if (t.kind != Token::Kind::Ident) {
        ++j;
        continue;
      }
      if (is_attribute_call(t.text) && j + 1 < size() && is_punct(toks_[j + 1], "(")) {
        const size_t close = match_bracket(j + 1);
        if (close == std::string_view::npos) return size();
        j = close + 1;
        continue;
      }
      size_t last = j;
      while (last + 2 < size() && is_punct(toks_[last + 1], "::") &&
             toks_[last + 2].kind == Token::Kind::Ident) {
        last += 2;
      }
      const size_t next = last + 1;
      if (next < size() && is_punct(toks_[next], "(")) {
        name_begin = j;
        name_end = next;
        break;
      }
      if (next < size() && is_punct(toks_[next], "<")) {
        const size_t close = match_angle(next);
        if (close == std::string_view::npos) return next;
        if (close + 1 < size() && is_punct(toks_[close + 1], "(")) {
          // A template-id: an explicit specialization or instantiation, not a new kernel.
          const size_t end = match_bracket(close + 1);
          return end == std::string_view::npos ? size() : end + 1;
        }
        j = close + 1;
        continue;
      }
      j = next;
    }
    const size_t open = name_end;
    const size_t close = match_bracket(open);
    if (close == std::string_view::npos) return size();

    d.name = qualifier() + join(name_begin, name_end);
    d.extern_c = d.extern_c || in_extern_c_block();
    d.line = toks_[name_begin].line;
    const bool no_params =
        close == open + 1 || (close == open + 2 && is_ident(toks_[open + 1], "void"));
    if (!no_params) {
      for (const auto& [b, e] : split(open + 1, close)) {
        auto [type, name] = parameter(b, e);
        d.param_types.push_back(std::move(type));
        d.param_names.push_back(std::move(name));
      }
    }
    add(std::move(d));
    return close + 1;
  }

  // Adds `d` unless it repeats an earlier declaration (same name and parameter types), in which
  // case the earlier one takes the names and linkage the repetition adds.
  void add(KernelDecl d) {
    std::vector<std::string> types;
    for (const std::string& t : d.param_types) types.push_back(parse_type(t).spelling);
    for (size_t k = 0; k < found_.size(); ++k) {
      KernelDecl& old = found_[k];
      if (old.name != d.name || found_types_[k] != types) continue;
      for (size_t p = 0; p < old.param_names.size(); ++p) {
        if (old.param_names[p].empty()) old.param_names[p] = d.param_names[p];
      }
      old.extern_c = old.extern_c || d.extern_c;
      return;
    }
    found_.push_back(std::move(d));
    found_types_.push_back(std::move(types));
  }

  std::vector<Token> toks_;
  std::vector<Scope> scopes_;
  std::vector<KernelDecl> found_;
  std::vector<std::vector<std::string>> found_types_;
};

// ---------------------------------------------------------------------------------------------
// Type spellings.

struct TypeToken {
  bool word;  // identifier (qualified names are one word: "std::size_t") or number
  std::string text;
};

std::vector<TypeToken> type_tokens(std::string_view s) {
  std::vector<TypeToken> out;
  size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (is_space(c)) {
      ++i;
    } else if (is_ident_char(c) || (c == ':' && i + 1 < s.size() && s[i + 1] == ':')) {
      // A qualified name is one word, also when spaced: "std :: size_t" -> "std::size_t".
      std::string word;
      while (true) {
        while (i < s.size() && is_ident_char(s[i])) word += s[i++];
        size_t j = i;
        while (j < s.size() && is_space(s[j])) ++j;
        if (j + 1 >= s.size() || s[j] != ':' || s[j + 1] != ':') break;
        word += "::";
        i = j + 2;
        while (i < s.size() && is_space(s[i])) ++i;
      }
      out.push_back({true, std::move(word)});
    } else if (s.substr(i, 3) == "...") {
      out.push_back({false, "..."});
      i += 3;
    } else if (s.substr(i, 2) == "&&") {
      out.push_back({false, "&&"});
      i += 2;
    } else {
      out.push_back({false, std::string(1, c)});
      ++i;
    }
  }
  return out;
}

// The demangler's layout: "float const*", "void (*)(float, int)", "unsigned long".
std::string join_type(const std::vector<TypeToken>& toks) {
  std::string out;
  for (size_t k = 0; k < toks.size(); ++k) {
    const TypeToken& t = toks[k];
    if (k > 0) {
      const TypeToken& p = toks[k - 1];
      const bool tight_after = !p.word && (p.text == "(" || p.text == "[" || p.text == "<");
      const bool tight_before =
          !t.word && (t.text == "*" || t.text == "&" || t.text == "&&" || t.text == "," ||
                      t.text == ")" || t.text == "]" || t.text == "[" || t.text == "<" ||
                      t.text == ">" || (t.text == "(" && !p.word));
      if (!tight_after && !tight_before) out += ' ';
    }
    out += t.text;
  }
  return out;
}

bool is_cv_or_restrict(std::string_view w) {
  return w == "const" || w == "volatile" || w == "restrict" || w == "__restrict__" ||
         w == "__restrict" || w == "__grid_constant__";
}

// What a type name denotes, before any pointer.
struct Base {
  enum class Cat : uint8_t { Int, Float, Bool, Void, Complex, Vector, Unknown, Invalid };
  Cat cat = Cat::Unknown;
  bool is_signed = true;
  uint8_t size = 0;
  uint8_t align = 0;
  FloatFormat format = FloatFormat::Single;
  std::optional<DType> element;  // the dtype of one element, when culua has one
  int vector = 1;
  uint8_t vector_align = 1;
  std::string reason;  // Invalid: why, when more is known than "not a valid type"
};

Base integer_base(bool is_signed, uint8_t size, std::optional<DType> element) {
  Base b;
  b.cat = Base::Cat::Int;
  b.is_signed = is_signed;
  b.size = b.align = b.vector_align = size;
  b.element = element;
  return b;
}
Base float_base(FloatFormat f, uint8_t size, DType element) {
  Base b;
  b.cat = Base::Cat::Float;
  b.format = f;
  b.size = b.align = b.vector_align = size;
  b.element = element;
  return b;
}
std::optional<DType> signed_dtype(uint8_t size) {
  switch (size) {
    case 1:
      return DType::I8;
    case 2:
      return DType::I16;
    case 4:
      return DType::I32;
    default:
      return DType::I64;
  }
}
std::optional<DType> unsigned_dtype(uint8_t size) {
  if (size == 1) return DType::U8;
  if (size == 4) return DType::U32;
  return std::nullopt;  // no u16 or u64 dtype
}

// The builtin spellings: any order of signed, unsigned, char, short, int, long, float, double,
// bool, void.
Base builtin_base(const std::vector<std::string>& words) {
  int n_signed = 0, n_unsigned = 0, n_char = 0, n_short = 0, n_int = 0, n_long = 0, n_float = 0,
      n_double = 0, n_bool = 0, n_void = 0;
  for (const std::string& w : words) {
    n_signed += w == "signed";
    n_unsigned += w == "unsigned";
    n_char += w == "char";
    n_short += w == "short";
    n_int += w == "int";
    n_long += w == "long";
    n_float += w == "float";
    n_double += w == "double";
    n_bool += w == "bool";
    n_void += w == "void";
  }
  Base invalid;
  invalid.cat = Base::Cat::Invalid;
  const int total = static_cast<int>(words.size());
  if (n_signed + n_unsigned + n_char + n_short + n_int + n_long + n_float + n_double + n_bool +
          n_void !=
      total) {
    return invalid;  // a builtin word beside a name: "unsigned size_t"
  }
  if (n_double == 1 && n_long == 1 && total == 2) {
    Base b = invalid;
    b.reason = "long double is not supported";
    return b;
  }
  if (total == 1 && n_float == 1) return float_base(FloatFormat::Single, 4, DType::F32);
  if (total == 1 && n_double == 1) return float_base(FloatFormat::Double, 8, DType::F64);
  if (total == 1 && n_bool == 1) {
    Base b;
    b.cat = Base::Cat::Bool;
    b.size = b.align = b.vector_align = 1;
    b.element = DType::Bool;
    return b;
  }
  if (total == 1 && n_void == 1) {
    Base b;
    b.cat = Base::Cat::Void;
    return b;
  }
  const bool sign_ok = n_signed + n_unsigned <= 1;
  if (n_char == 1 && sign_ok && total == 1 + n_signed + n_unsigned) {
    return n_unsigned ? integer_base(false, 1, DType::U8) : integer_base(true, 1, DType::I8);
  }
  const bool int_words_only = n_char + n_float + n_double + n_bool + n_void == 0;
  if (int_words_only && sign_ok && n_int <= 1 && n_short <= 1 && n_long <= 2 &&
      !(n_short && n_long) && total > 0) {
    const uint8_t size = n_short ? 2 : n_long ? 8 : 4;
    return n_unsigned ? integer_base(false, size, unsigned_dtype(size))
                      : integer_base(true, size, signed_dtype(size));
  }
  return invalid;
}

// Alignment of a CUDA vector type of `n` elements of `size` bytes (vector_types.h). The
// 32-byte 4-vectors of 8-byte elements (double4, long4, ...) take their strictest alignment.
uint8_t vector_alignment(uint8_t size, int n) {
  if (n == 3 || n == 1) return size;
  return static_cast<uint8_t>(size * n);
}

// Named types: fixed-width typedefs, CUDA's half types, vector and complex types.
Base named_base(std::string name) {
  for (std::string_view prefix : {"::", "cuda::std::", "std::"}) {
    if (name.compare(0, prefix.size(), prefix) == 0) {
      name.erase(0, prefix.size());
      break;
    }
  }
  struct Named {
    std::string_view name;
    bool is_signed;
    uint8_t size;
  };
  static constexpr Named kInts[] = {
      {"int8_t", true, 1},    {"uint8_t", false, 1},  {"int16_t", true, 2}, {"uint16_t", false, 2},
      {"int32_t", true, 4},   {"uint32_t", false, 4}, {"int64_t", true, 8}, {"uint64_t", false, 8},
      {"size_t", false, 8},   {"ptrdiff_t", true, 8}, {"ssize_t", true, 8}, {"intptr_t", true, 8},
      {"uintptr_t", false, 8}};
  for (const Named& n : kInts) {
    if (name == n.name) {
      return n.is_signed ? integer_base(true, n.size, signed_dtype(n.size))
                         : integer_base(false, n.size, unsigned_dtype(n.size));
    }
  }
  if (name == "__half" || name == "half") return float_base(FloatFormat::Half, 2, DType::F16);
  if (name == "__nv_bfloat16" || name == "nv_bfloat16") {
    return float_base(FloatFormat::BFloat16, 2, DType::BF16);
  }
  if (name == "float2" || name == "cuFloatComplex" || name == "cuComplex" || name == "double2" ||
      name == "cuDoubleComplex") {
    const bool dbl = name == "double2" || name == "cuDoubleComplex";
    Base b;
    b.cat = Base::Cat::Complex;
    b.format = dbl ? FloatFormat::Double : FloatFormat::Single;
    b.size = b.align = b.vector_align = dbl ? 16 : 8;
    b.element = dbl ? DType::F64 : DType::F32;
    b.vector = 2;
    return b;
  }
  struct Vec {
    std::string_view prefix;
    bool is_signed;
    uint8_t size;
    std::optional<DType> element;
  };
  static const Vec kVecs[] = {
      {"char", true, 1, DType::I8},      {"uchar", false, 1, DType::U8},
      {"short", true, 2, DType::I16},    {"ushort", false, 2, std::nullopt},
      {"int", true, 4, DType::I32},      {"uint", false, 4, DType::U32},
      {"longlong", true, 8, DType::I64}, {"ulonglong", false, 8, std::nullopt},
      {"long", true, 8, DType::I64},     {"ulong", false, 8, std::nullopt},
      {"float", true, 4, DType::F32},    {"double", true, 8, DType::F64}};
  for (const Vec& v : kVecs) {
    if (name.size() < v.prefix.size() + 1 || name.compare(0, v.prefix.size(), v.prefix) != 0) {
      continue;
    }
    const std::string_view rest = std::string_view(name).substr(v.prefix.size());
    if (rest[0] < '1' || rest[0] > '4') continue;
    const int n = rest[0] - '0';
    uint8_t align = vector_alignment(v.size, n);
    if (rest.size() > 1) {
      // CUDA 13's explicitly aligned 4-vectors of 8-byte elements: double4_16a, long4_32a.
      if (n != 4 || v.size != 8 || (rest.substr(1) != "_16a" && rest.substr(1) != "_32a")) {
        continue;
      }
      align = rest.substr(1) == "_16a" ? 16 : 32;
    }
    Base b;
    b.cat = Base::Cat::Vector;
    b.is_signed = v.is_signed;
    b.size = static_cast<uint8_t>(v.size * n);
    b.align = align;
    b.element = v.element;
    b.vector = n;
    b.vector_align = align;
    return b;
  }
  Base unknown;
  unknown.cat = Base::Cat::Unknown;
  return unknown;
}

constexpr std::string_view kStructReason =
    "struct parameters are not supported: pass the fields as separate parameters";

ParamType unsupported(ParamType p, std::string reason) {
  p.kind = ParamKind::Unsupported;
  p.size = p.align = 0;
  p.unsupported = std::move(reason);
  return p;
}

}  // namespace

std::vector<KernelDecl> scan_kernels(std::string_view source) {
  return Scanner(source).run();
}

ParamType parse_type(std::string_view spelling) {
  const std::vector<TypeToken> toks = type_tokens(spelling);
  ParamType p;
  p.spelling = join_type(toks);
  if (toks.empty()) return unsupported(std::move(p), "an empty type is not a parameter type");

  int angle = 0;
  for (size_t k = 0; k < toks.size(); ++k) {
    const TypeToken& t = toks[k];
    if (t.word) continue;
    if (t.text == "<") ++angle;
    if (t.text == ">" && angle > 0) --angle;
    if (angle > 0) continue;
    if (t.text == "...") return unsupported(std::move(p), "variadic kernels are not supported");
    if (t.text == "(") {
      const bool pointer = k + 1 < toks.size() && toks[k + 1].text == "*";
      return unsupported(std::move(p), pointer && toks.back().text == "]"
                                           ? "pointers to arrays are not supported"
                                           : "function pointer parameters are not supported");
    }
    if (t.text == "&" || t.text == "&&") {
      return unsupported(std::move(p),
                         "reference parameters are not supported: pass a pointer or the value");
    }
  }

  // Base words before the first declarator; then pointers and array suffixes.
  std::vector<std::string> words;
  bool base_const = false;
  bool elaborated = false;  // struct Foo, enum E
  int pointers = 0;
  int arrays = 0;
  for (size_t k = 0; k < toks.size(); ++k) {
    const TypeToken& t = toks[k];
    if (t.word && pointers == 0 && arrays == 0) {
      if (t.text == "const") {
        base_const = true;
      } else if (t.text == "struct" || t.text == "class" || t.text == "union" || t.text == "enum") {
        elaborated = true;
      } else if (!is_cv_or_restrict(t.text) && t.text != "typename") {
        words.push_back(t.text);
      }
    } else if (t.text == "<" && !words.empty() && pointers == 0 && arrays == 0) {
      // A template (std::complex<float>): one name culua does not know.
      int depth = 0;
      for (; k < toks.size(); ++k) {
        depth += toks[k].text == "<" ? 1 : toks[k].text == ">" ? -1 : 0;
        words.back() += toks[k].text;
        if (depth == 0) break;
      }
    } else if (t.word) {
      if (!is_cv_or_restrict(t.text)) {
        return unsupported(std::move(p), fmt::format("'{}' is not a valid type", p.spelling));
      }
    } else if (t.text == "*") {
      ++pointers;
    } else if (t.text == "[") {
      ++arrays;
      while (k < toks.size() && toks[k].text != "]") ++k;
    } else {
      return unsupported(std::move(p), fmt::format("'{}' is not a valid type", p.spelling));
    }
  }
  if (arrays > 1) {
    return unsupported(std::move(p), "multi-dimensional array parameters are not supported");
  }
  pointers += arrays;  // an array parameter is a pointer
  if (pointers > 1) return unsupported(std::move(p), "pointers to pointers are not supported");
  if (words.empty()) {
    return unsupported(std::move(p), fmt::format("'{}' is not a valid type", p.spelling));
  }

  bool builtin = false;
  for (const std::string& w : words) {
    if (w == "signed" || w == "unsigned" || w == "char" || w == "short" || w == "int" ||
        w == "long" || w == "float" || w == "double" || w == "bool" || w == "void") {
      builtin = true;
    }
  }
  Base base;
  if (builtin) {
    base = builtin_base(words);
  } else if (words.size() == 1 && !elaborated) {
    base = named_base(words[0]);
  } else if (words.size() > 1) {
    base.cat = Base::Cat::Invalid;
  }
  std::string pointee;  // the base type's words: "unsigned short"
  for (const std::string& w : words) pointee += (pointee.empty() ? "" : " ") + w;

  if (base.cat == Base::Cat::Invalid) {
    return unsupported(std::move(p), base.reason.empty()
                                         ? fmt::format("'{}' is not a valid type", p.spelling)
                                         : base.reason);
  }

  if (pointers == 1) {
    p.kind = ParamKind::Pointer;
    p.size = p.align = 8;
    p.pointee_const = base_const;
    switch (base.cat) {
      case Base::Cat::Void:
        p.pointee_void = true;
        return p;
      case Base::Cat::Unknown:
        if (elaborated) {
          return unsupported(std::move(p),
                             "pointers to structs are not supported: declare the parameter as "
                             "void* to pass any array");
        }
        return unsupported(std::move(p),
                           fmt::format("'{}' is not a type culua knows: declare the parameter as "
                                       "void* to pass any array",
                                       pointee));
      default:
        break;
    }
    if (!base.element) {
      return unsupported(std::move(p),
                         fmt::format("no culua dtype matches '{}': declare the parameter as "
                                     "void* to pass any array",
                                     pointee));
    }
    p.element = *base.element;
    p.vector = base.vector;
    p.pointee_align = base.vector_align;
    return p;
  }

  switch (base.cat) {
    case Base::Cat::Int:
      p.kind = base.is_signed ? ParamKind::Signed : ParamKind::Unsigned;
      break;
    case Base::Cat::Float:
      p.kind = ParamKind::Float;
      break;
    case Base::Cat::Bool:
      p.kind = ParamKind::Bool;
      break;
    case Base::Cat::Complex:
      p.kind = ParamKind::Complex;
      break;
    case Base::Cat::Void:
      return unsupported(std::move(p), "void is not a parameter type");
    case Base::Cat::Vector:
      return unsupported(std::move(p),
                         fmt::format("vector types by value are not supported: pass the "
                                     "components of {} as separate parameters",
                                     pointee));
    default:
      if (elaborated) return unsupported(std::move(p), std::string(kStructReason));
      return unsupported(std::move(p),
                         fmt::format("'{}' is not a type culua knows; {}", pointee, kStructReason));
  }
  p.size = base.size;
  p.align = base.align;
  p.format = base.format;
  return p;
}

std::vector<std::string> split_top_level(std::string_view list) {
  std::vector<std::string> out;
  if (trim(list).empty()) return out;
  int depth = 0;
  int angle = 0;
  size_t start = 0;
  for (size_t k = 0; k < list.size(); ++k) {
    const char c = list[k];
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') --depth;
    if (c == '<') ++angle;
    if (c == '>' && angle > 0) --angle;
    if (c == ',' && depth == 0 && angle == 0) {
      out.emplace_back(trim(list.substr(start, k - start)));
      start = k + 1;
    }
  }
  out.emplace_back(trim(list.substr(start)));
  return out;
}

namespace {

struct Group {
  size_t open;
  size_t close;
};

// The bracket groups of `text` at top level: parenthesized lists outside any <>, and <> lists
// outside any parentheses (a `>` inside parentheses is a comparison).
void top_level_groups(std::string_view text, std::vector<Group>* parens,
                      std::vector<Group>* angles) {
  int paren = 0;
  int angle = 0;
  size_t paren_open = 0;
  size_t angle_open = 0;
  for (size_t k = 0; k < text.size(); ++k) {
    const char c = text[k];
    if (c == '(') {
      if (paren == 0 && angle == 0) paren_open = k;
      ++paren;
    } else if (c == ')') {
      if (paren > 0 && --paren == 0 && angle == 0) parens->push_back({paren_open, k});
    } else if (paren == 0 && c == '<') {
      if (angle == 0) angle_open = k;
      ++angle;
    } else if (paren == 0 && c == '>' && angle > 0) {
      if (--angle == 0) angles->push_back({angle_open, k});
    }
  }
}

}  // namespace

std::optional<std::vector<std::string>> demangled_parameters(std::string_view demangled) {
  std::vector<Group> parens;
  std::vector<Group> angles;
  top_level_groups(demangled, &parens, &angles);
  if (parens.empty()) return std::nullopt;
  const Group g = parens.back();
  const std::string_view inside = trim(demangled.substr(g.open + 1, g.close - g.open - 1));
  if (inside.empty() || inside == "void") return std::vector<std::string>{};
  return split_top_level(inside);
}

std::string demangle(const std::string& symbol) {
  // Only function and variable names: __cxa_demangle also reads type codes ("i" -> "int"),
  // which would misread an extern "C" kernel named like one.
  if (symbol.compare(0, 2, "_Z") != 0) return {};
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(
      abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status), std::free);
  if (status != 0 || !out) return {};
  return out.get();
}

std::optional<std::string> template_argument(std::string_view demangled) {
  std::vector<Group> parens;
  std::vector<Group> angles;
  top_level_groups(demangled, &parens, &angles);
  if (angles.empty()) return std::nullopt;
  const Group g = angles.back();
  std::vector<std::string> args =
      split_top_level(demangled.substr(g.open + 1, g.close - g.open - 1));
  if (args.size() != 1 || args[0].empty()) return std::nullopt;
  return std::move(args[0]);
}

namespace {

// The dtypes a pointer parameter takes, in the order messages list them.
std::vector<DType> accepted_list(const ParamType& p) {
  if (p.kind != ParamKind::Pointer || p.pointee_void) return {};
  if (p.vector == 1 && (p.element == DType::I8 || p.element == DType::U8)) {
    return {DType::I8, DType::U8, DType::Bool};  // the byte types alias anything byte-sized
  }
  if (p.vector == 2 && p.element == DType::F32) return {DType::F32, DType::C64};
  if (p.vector == 2 && p.element == DType::F64) return {DType::F64, DType::C128};
  return {p.element};
}

}  // namespace

bool pointer_accepts(const ParamType& p, DType t) {
  return (accepted_mask(p) >> static_cast<unsigned>(t)) & 1u;
}

uint32_t accepted_mask(const ParamType& p) {
  if (p.kind != ParamKind::Pointer) return 0;
  if (p.pointee_void) return (1u << kNumDTypes) - 1;
  uint32_t mask = 0;
  for (DType t : accepted_list(p)) mask |= 1u << static_cast<unsigned>(t);
  return mask;
}

std::string accepted_dtypes(const ParamType& p) {
  if (p.kind != ParamKind::Pointer) return {};
  if (p.pointee_void) return "any dtype";
  const std::vector<DType> ok = accepted_list(p);
  std::string out;
  for (size_t k = 0; k < ok.size(); ++k) {
    if (k > 0) out += k + 1 == ok.size() ? " or " : ", ";
    out += name(ok[k]);
  }
  return out;
}

namespace {

std::string_view type_name(const ParamType& p) {
  return p.spelling.empty() ? std::string_view("the parameter type") : p.spelling;
}

// Significant bits of |v|: from the highest set bit to the lowest.
int significant_bits(uint64_t m) {
  if (m == 0) return 0;
  int top = 63;
  while (!(m >> top)) --top;
  int bottom = 0;
  while (!((m >> bottom) & 1)) ++bottom;
  return top - bottom + 1;
}

uint64_t magnitude(int64_t v) {
  return v < 0 ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
}

template <class T>
void store(void* out, T v) {
  std::memcpy(out, &v, sizeof v);
}

void encode_integer(const ParamType& p, const Scalar& v, void* out, std::string_view what) {
  const bool is_signed = p.kind == ParamKind::Signed;
  const int bits = p.size * 8;
  // Range as text, for messages (made only for one).
  const auto range = [&] {
    return is_signed ? fmt::format("{} to {}",
                                   bits == 64 ? std::numeric_limits<int64_t>::min()
                                              : -(int64_t{1} << (bits - 1)),
                                   bits == 64 ? std::numeric_limits<int64_t>::max()
                                              : (int64_t{1} << (bits - 1)) - 1)
                     : fmt::format("0 to {}", bits == 64 ? std::numeric_limits<uint64_t>::max()
                                                         : (uint64_t{1} << bits) - 1);
  };
  uint64_t u = 0;  // the value's two's complement bits
  switch (v.kind) {
    case Scalar::Kind::Bool:
    case Scalar::Kind::Complex:
      fail(ErrorKind::Type, "{} must be an integer, got {}", what, v.str());
    case Scalar::Kind::Int: {
      const bool ok = is_signed ? bits == 64 || (v.i >= -(int64_t{1} << (bits - 1)) &&
                                                 v.i < (int64_t{1} << (bits - 1)))
                                : v.i >= 0 && (bits == 64 || v.i < (int64_t{1} << bits));
      if (!ok) {
        fail(ErrorKind::Value, "{}: {} is out of range for {} ({})", what, v.str(), type_name(p),
             range());
      }
      u = static_cast<uint64_t>(v.i);
      break;
    }
    case Scalar::Kind::Float: {
      const double d = v.re;
      if (!std::isfinite(d) || std::trunc(d) != d) {
        fail(ErrorKind::Value, "{} must be an integer, got {}", what, v.str());
      }
      // Powers of two are exact doubles, so these comparisons are exact at the edges.
      const double lo = is_signed ? -std::ldexp(1.0, bits - 1) : 0.0;
      const double hi = std::ldexp(1.0, is_signed ? bits - 1 : bits);
      if (!(d >= lo && d < hi)) {
        fail(ErrorKind::Value, "{}: {} is out of range for {} ({})", what, v.str(), type_name(p),
             range());
      }
      u = d < 0 ? static_cast<uint64_t>(static_cast<int64_t>(d)) : static_cast<uint64_t>(d);
      break;
    }
  }
  switch (p.size) {
    case 1:
      store(out, static_cast<uint8_t>(u));
      break;
    case 2:
      store(out, static_cast<uint16_t>(u));
      break;
    case 4:
      store(out, static_cast<uint32_t>(u));
      break;
    default:
      store(out, u);
      break;
  }
}

// One real component `d` (or the integer v.i when `from_int`) in `format`, written to `out`;
// messages name the whole value `v` and the parameter's `type`.
void encode_real(FloatFormat format, const Scalar& v, double d, bool from_int, void* out,
                 std::string_view what, std::string_view type) {
  if (from_int) {
    static constexpr int kSignificand[] = {11, 8, 24, 53};  // Half, BFloat16, Single, Double
    const uint64_t m = magnitude(v.i);
    if (format == FloatFormat::Half && m > 65504) {
      fail(ErrorKind::Value, "{}: {} overflows {}", what, v.str(), type);
    }
    if (significant_bits(m) > kSignificand[static_cast<int>(format)]) {
      fail(ErrorKind::Value, "{}: {} is not exactly representable as {}", what, v.str(), type);
    }
    d = v.i < 0 ? -static_cast<double>(m) : static_cast<double>(m);  // exact: checked above
  }
  switch (format) {
    case FloatFormat::Double:
      store(out, d);
      return;
    case FloatFormat::Single: {
      // Round-to-nearest gives infinity from the midpoint between FLT_MAX and 2^128 up.
      if (std::isfinite(d) && std::fabs(d) >= std::ldexp(std::ldexp(1.0, 25) - 1.0, 103)) {
        fail(ErrorKind::Value, "{}: {} overflows {}", what, v.str(), type);
      }
      store(out, static_cast<float>(d));
      return;
    }
    case FloatFormat::Half:
    case FloatFormat::BFloat16: {
      // Rounded once, from the double (no intermediate float).
      const uint16_t bits =
          format == FloatFormat::Half ? half::from_double(d).bits : bfloat16::from_double(d).bits;
      const uint16_t inf = format == FloatFormat::Half ? 0x7C00 : 0x7F80;
      if (std::isfinite(d) && (bits & 0x7FFF) == inf) {
        fail(ErrorKind::Value, "{}: {} overflows {}", what, v.str(), type);
      }
      store(out, bits);
      return;
    }
  }
}

}  // namespace

void encode_param(const ParamType& p, const Scalar& v, void* out, std::string_view what) {
  switch (p.kind) {
    case ParamKind::Pointer:
      fail(ErrorKind::Type, "{} must be an array, got {}", what, v.str());
    case ParamKind::Unsupported:
      fail(ErrorKind::Unsupported, "{}: {}", what, p.unsupported);
    case ParamKind::Signed:
    case ParamKind::Unsigned:
      encode_integer(p, v, out, what);
      return;
    case ParamKind::Bool: {
      const bool is_number = v.kind == Scalar::Kind::Int || v.kind == Scalar::Kind::Float;
      if (v.kind == Scalar::Kind::Bool) {
        store(out, static_cast<uint8_t>(v.b));
      } else if (is_number && (v.as_double() == 0 || v.as_double() == 1)) {
        store(out, static_cast<uint8_t>(v.as_double() != 0));
      } else {
        fail(is_number ? ErrorKind::Value : ErrorKind::Type,
             "{} must be true, false, 0 or 1, got {}", what, v.str());
      }
      return;
    }
    case ParamKind::Float:
      if (v.kind == Scalar::Kind::Bool || v.kind == Scalar::Kind::Complex) {
        fail(ErrorKind::Type, "{} must be a real number, got {}", what, v.str());
      }
      encode_real(p.format, v, v.re, v.kind == Scalar::Kind::Int, out, what, type_name(p));
      return;
    case ParamKind::Complex: {
      if (v.kind == Scalar::Kind::Bool) {
        fail(ErrorKind::Type, "{} must be a number, got {}", what, v.str());
      }
      const size_t half_size = p.format == FloatFormat::Double ? 8 : 4;
      unsigned char parts[16] = {};
      if (v.kind == Scalar::Kind::Complex) {
        encode_real(p.format, v, v.re, false, parts, what, type_name(p));
        encode_real(p.format, v, v.im, false, parts + half_size, what, type_name(p));
      } else {
        encode_real(p.format, v, v.re, v.kind == Scalar::Kind::Int, parts, what, type_name(p));
        encode_real(p.format, Scalar::real(0), 0.0, false, parts + half_size, what, type_name(p));
      }
      std::memcpy(out, parts, 2 * half_size);
      return;
    }
  }
}

}  // namespace culua::detail::rtc
