#include "rtc/kernel_signature.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "rtc/lexer.hpp"
#include "rtc/type_parser.hpp"

namespace culua::detail::rtc {

namespace {

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
  explicit Scanner(std::string_view src) : toks_(lex(src)) {}

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

}  // namespace

std::vector<KernelDecl> scan_kernels(std::string_view source) {
  return Scanner(source).run();
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

}  // namespace culua::detail::rtc
