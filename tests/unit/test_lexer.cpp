// The lexer under the kernel declaration scanner (rtc/lexer.hpp): tokens, lines, and what it
// skips (comments, preprocessor lines, literals as single tokens).
#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "rtc/lexer.hpp"

using namespace culua::detail;
using rtc::Token;

namespace {

std::vector<std::string> texts(const std::vector<Token>& toks) {
  std::vector<std::string> out;
  for (const Token& t : toks) out.emplace_back(t.text);
  return out;
}

}  // namespace

TEST_CASE("lexer: a kernel declaration", "[rtc][lexer]") {
  const std::string_view src =
      "extern \"C\" __global__ void __launch_bounds__(256)\n"
      "saxpy(float a, const float* __restrict__ x, ns::T* y, int n) {}\n";
  const std::vector<Token> toks = rtc::lex(src);
  CHECK(texts(toks) == std::vector<std::string>{"extern",
                                                "\"C\"",
                                                "__global__",
                                                "void",
                                                "__launch_bounds__",
                                                "(",
                                                "256",
                                                ")",
                                                "saxpy",
                                                "(",
                                                "float",
                                                "a",
                                                ",",
                                                "const",
                                                "float",
                                                "*",
                                                "__restrict__",
                                                "x",
                                                ",",
                                                "ns",
                                                "::",
                                                "T",
                                                "*",
                                                "y",
                                                ",",
                                                "int",
                                                "n",
                                                ")",
                                                "{",
                                                "}"});
  CHECK(toks[1].kind == Token::Kind::String);
  CHECK(toks[6].kind == Token::Kind::Number);
  CHECK(toks[8].kind == Token::Kind::Ident);
  CHECK(toks[20].kind == Token::Kind::Punct);  // "::" is one token
  CHECK(toks[0].line == 1);
  CHECK(toks[8].line == 2);
  // Offsets view the source.
  CHECK(src.substr(toks[8].begin, toks[8].end - toks[8].begin) == "saxpy");
  CHECK(rtc::is_ident(toks[8], "saxpy"));
  CHECK_FALSE(rtc::is_ident(toks[9], "("));
  CHECK(rtc::is_punct(toks[9], "("));
}

TEST_CASE("lexer: comments, directives and literals hide what they contain", "[rtc][lexer]") {
  const std::string_view src =
      "#define K __global__ void fake(int x)\n"
      "// __global__ void c1(int);\n"
      "/* __global__ void c2(int);\n */ int a = 1'000 + 0x1p-3;\n"
      "const char* s = R\"x(__global__ void r(int); )\" )x\";\n"
      "  # pragma once \\\n continued\n"
      "char q = '\\'';\n";
  const std::vector<Token> toks = rtc::lex(src);
  for (const Token& t : toks) CHECK(t.text != "__global__");
  const std::vector<std::string> got = texts(toks);
  CHECK(got == std::vector<std::string>{
                   "int", "a", "=", "1'000", "+", "0x1p-3", ";", "const", "char", "*", "s", "=",
                   "R\"x(__global__ void r(int); )\" )x\"", ";", "char", "q", "=", "'\\''", ";"});
  // Lines count through block comments, raw strings and line splices.
  CHECK(toks[0].line == 4);
  CHECK(toks[7].line == 5);
  CHECK(toks[14].line == 8);
}

TEST_CASE("lexer: trim and character classes", "[rtc][lexer]") {
  CHECK(rtc::trim("  \t float x \n") == "float x");
  CHECK(rtc::trim("   ").empty());
  CHECK(rtc::is_ident_start('_'));
  CHECK_FALSE(rtc::is_ident_start('1'));
  CHECK(rtc::is_ident_char('1'));
  CHECK(rtc::lex("").empty());
}
