// The one JSON writer (src/core/base/json.hpp): escaping, numbers, layouts, nesting.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "core/base/json.hpp"

using culua::detail::json::Layout;
using culua::detail::json::number_text;
using culua::detail::json::parse;
using culua::detail::json::Value;
using culua::detail::json::write;

TEST_CASE("json::write escapes strings") {
  CHECK(write(Value("plain")) == "\"plain\"");
  CHECK(write(Value("a \"q\" \\ /")) == "\"a \\\"q\\\" \\\\ /\"");
  CHECK(write(Value("\b\f\n\r\t")) == "\"\\b\\f\\n\\r\\t\"");
  CHECK(write(Value(std::string("\0\x01\x1f\x7f", 4))) == "\"\\u0000\\u0001\\u001f\x7f\"");
  CHECK(write(Value("µs é ∑ 😀")) == "\"µs é ∑ 😀\"");  // valid UTF-8 stays as it is
  // Each byte that is not valid UTF-8 becomes \ufffd: a lone continuation byte, a truncated
  // sequence, an overlong form, a surrogate.
  CHECK(write(Value(std::string("a\xff"
                                "b"))) == "\"a\\ufffdb\"");
  CHECK(write(Value(std::string("\x80"))) == "\"\\ufffd\"");
  CHECK(write(Value(std::string("x\xe2\x82"))) == "\"x\\ufffd\\ufffd\"");
  CHECK(write(Value(std::string("\xc0\xaf"))) == "\"\\ufffd\\ufffd\"");
  CHECK(write(Value(std::string("\xed\xa0\x80"))) == "\"\\ufffd\\ufffd\\ufffd\"");
  // Keys are escaped the same way.
  CHECK(write(Value(Value::Object{{"k\"\n", 1}})) == "{\"k\\\"\\n\":1}");
  // What it writes, a JSON parser reads back.
  const std::string nasty("q\"\\\b\f\n\r\t\x01\x1f end é");
  CHECK(nlohmann::json::parse(write(Value(nasty))).get<std::string>() == nasty);
}

TEST_CASE("json::write numbers: integers, floats that stay floats, non-finite as null") {
  CHECK(write(Value(0)) == "0");
  CHECK(write(Value(int64_t{-7})) == "-7");
  CHECK(write(Value(std::numeric_limits<int64_t>::max())) == "9223372036854775807");
  CHECK(write(Value(std::numeric_limits<int64_t>::min())) == "-9223372036854775808");
  CHECK(write(Value(uint64_t{1} << 63)) == "9.223372036854776e+18");  // beyond int64: a double
  CHECK(write(Value(1.0)) == "1.0");
  CHECK(write(Value(-0.0)) == "-0.0");
  CHECK(write(Value(2.5)) == "2.5");
  CHECK(write(Value(0.1)) == "0.1");
  CHECK(write(Value(1e300)) == "1e+300");
  CHECK(write(Value(1e-7)) == "1e-07");
  CHECK(write(Value(1e15)) == "1000000000000000.0");
  CHECK(write(Value(std::nan(""))) == "null");
  CHECK(write(Value(HUGE_VAL)) == "null");
  CHECK(write(Value(-HUGE_VAL)) == "null");
  CHECK(write(Value(Value::List{1.5, std::nan(""), 2})) == "[1.5,null,2]");
}

TEST_CASE("json::write doubles read back exactly, in the fewest digits") {
  std::mt19937_64 gen(24);
  std::vector<double> values = {0.1,
                                1.0 / 3,
                                M_PI,
                                5e-324,
                                2.2250738585072014e-308,
                                1e308,
                                1.7976931348623157e308,
                                9007199254740993.0,
                                1e21,
                                123456789.123456789};
  for (int i = 0; i < 20000; ++i) {
    const uint64_t bits = gen();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    if (std::isfinite(d)) values.push_back(d);
  }
  for (const double d : values) {
    const std::string text = number_text(d);
    INFO(text);
    if (d == 0.1) CHECK(text == "0.1");
    const nlohmann::json back = nlohmann::json::parse(text);
    REQUIRE(back.is_number_float());
    CHECK(back.get<double>() == d);
    // At most 17 significant digits (what %.17g writes), fewer where fewer read back.
    std::string digits = text.substr(0, text.find_first_of("eE"));
    digits.erase(
        std::remove_if(digits.begin(), digits.end(), [](char c) { return c < '0' || c > '9'; }),
        digits.end());
    digits.erase(0, digits.find_first_not_of('0'));
    digits.erase(digits.find_last_not_of('0') + 1);
    CHECK(digits.size() <= 17);
  }
}

TEST_CASE("json::write nests lists and objects in every layout") {
  const Value v(Value::Object{{"name", "copy"},
                              {"sizes", Value::List{1, 2}},
                              {"gpu", Value::Object{{"median", 0.5}}},
                              {"empty", Value::Object{}},
                              {"none", Value::List{}},
                              {"deep", Value::List{Value::List{Value::Object{{"k", Value()}}}}}});
  CHECK(write(v) ==
        "{\"name\":\"copy\",\"sizes\":[1,2],\"gpu\":{\"median\":0.5},\"empty\":{},\"none\":[],"
        "\"deep\":[[{\"k\":null}]]}");
  // Every container spread over lines (as cu.json.encode's indent=).
  CHECK(write(v, {2, false}) == R"({
  "name": "copy",
  "sizes": [
    1,
    2
  ],
  "gpu": {
    "median": 0.5
  },
  "empty": {},
  "none": [],
  "deep": [
    [
      {
        "k": null
      }
    ]
  ]
})");
  CHECK(write(Value(Value::List{1}), {0, false}) == "[\n1\n]");
  // Result files: lists of scalars and short objects of scalars stay on one line.
  CHECK(write(v, {2, true}) == R"({
  "name": "copy",
  "sizes": [1, 2],
  "gpu": {"median": 0.5},
  "empty": {},
  "none": [],
  "deep": [
    [
      {"k": null}
    ]
  ]
})");
  // Member order is insertion order; parsing keeps it.
  const Value back = parse(write(v, {2, true}), "test");
  CHECK(back == v);
  CHECK(back.as_object().front().first == "name");
}

TEST_CASE("json::parse refuses deep nesting and names the text") {
  const std::string deep = std::string(201, '[') + std::string(201, ']');
  CHECK_THROWS_WITH(parse(deep, "deep.json"),
                    Catch::Contains("deep.json nests arrays and objects deeper than 200 levels"));
  CHECK_THROWS_WITH(parse("{\"a\": ", "file.json"),
                    Catch::StartsWith("file.json is not valid JSON"));
  CHECK(parse("18446744073709551615", "t").is_number());  // beyond int64: a double
}
