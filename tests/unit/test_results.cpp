// Result files, tables, comparisons and plot scripts of src/measure/ (no Lua, no gnuplot run).
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <string>

#include "core/base/error.hpp"
#include "measure/compare.hpp"
#include "measure/plot.hpp"
#include "measure/results.hpp"

using namespace culua::detail;
using namespace culua::detail::measure;

namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

Value::Object bench(double median, double noise) {
  return Value::Object{{"samples", 10},
                       {"gpu", Value::Object{{"median", median}, {"noise", noise}}},
                       {"cpu", Value::Object{{"median", median * 2}}}};
}

Point point(Value::Object params, Value::Object result) {
  Point p;
  p.params = std::move(params);
  p.result = std::move(result);
  return p;
}

Point failed(Value::Object params, std::string error) {
  Point p;
  p.params = std::move(params);
  p.ok = false;
  p.error = std::move(error);
  return p;
}

const Comparison& find_comparison(const std::vector<Comparison>& all, int64_t n) {
  for (const Comparison& c : all) {
    const Value* v = find(c.params, "n");
    if (v && v->as_integer() == n) return c;
  }
  FAIL("no comparison for n = " << n);
  return all.front();
}

}  // namespace

TEST_CASE("JSON text round-trips values and keeps member order and float types") {
  Value v(
      Value::Object{{"z", 1},
                    {"a", 1.0},
                    {"s", "quote \" backslash \\ newline \n µs"},
                    {"list", Value::List{1, 2.5, "x", true, Value()}},
                    {"nested", Value::Object{{"deep", Value::List{Value::Object{{"k", -3}}}}}}});
  const std::string text = to_json(v, 2);
  const Value back = parse_json(text, "test");
  CHECK(back == v);
  CHECK(back.get("a")->is_number());
  CHECK_FALSE(back.get("a")->is_integer());
  CHECK(back.get("z")->is_integer());
  REQUIRE(back.as_object().front().first == "z");
  CHECK(to_json(Value(Value::Object{{"n", 1024}, {"dtype", "f32"}}), 2) ==
        "{\"n\": 1024, \"dtype\": \"f32\"}");
  CHECK(to_json(Value(Value::List{1, 2, 3}), 2) == "[1, 2, 3]");
  CHECK(to_json(Value(1.0)) == "1.0");
  CHECK(to_json(Value(0.1)) == "0.1");
}

TEST_CASE("JSON text: non-finite numbers are null and invalid UTF-8 becomes U+FFFD") {
  CHECK(to_json(Value(std::nan(""))) == "null");
  CHECK(to_json(Value(INFINITY)) == "null");
  CHECK(to_json(Value(std::string("a\xff"
                                  "b"))) == "\"a\\ufffdb\"");
  CHECK(to_json(Value(std::string("\x01"))) == "\"\\u0001\"");
  CHECK(parse_json("\"a\\ufffdb\"", "t").as_string() ==
        "a\xEF\xBF\xBD"
        "b");
  CHECK(error_of([] {
          parse_json("{\"a\": ", "file.json");
        }).find("file.json is not valid JSON: parse error") == 0);
}

TEST_CASE("paths into values") {
  const Value v(bench(0.5, 0.02));
  CHECK(v.number_at("gpu.median") == Approx(0.5));
  CHECK(v.number_at("gpu.noise") == Approx(0.02));
  CHECK_FALSE(v.number_at("gpu.mean"));
  CHECK_FALSE(v.number_at("samples.x"));
  CHECK(v.number_at("samples") == 10);
}

TEST_CASE("numbers for tables have four significant digits") {
  CHECK(format_significant(12.3456) == "12.35");
  CHECK(format_significant(1234.6) == "1235");
  CHECK(format_significant(123456.0) == "123456");
  CHECK(format_significant(0.00123456) == "0.001235");
  CHECK(format_significant(-2.5) == "-2.500");
  CHECK(format_significant(0) == "0");
  CHECK(format_significant(1e-7) == "1e-07");
  CHECK(format_significant(NAN) == "nan");
  CHECK(std::string(choose_time_unit({0.5, 0.7, 2.0}).name) == "µs");
  CHECK(choose_time_unit({0.5, 0.7, 2.0}).per_ms == 1000.0);
  CHECK(std::string(choose_time_unit({1.0, 2.0}).name) == "ms");
  CHECK(std::string(choose_time_unit({}).name) == "ms");
}

TEST_CASE("the summary table of bench points") {
  Sweep s;
  s.name = "copy";
  s.axes = {"n", "dtype"};
  Value::Object r1 = bench(0.0125, 0.034);
  r1.emplace_back("GBps", 8.192);
  r1.emplace_back("launch_bound", true);
  s.points.push_back(point({{"n", 1024}, {"dtype", "f32"}}, r1));
  s.points.push_back(failed({{"n", 1024}, {"dtype", "f64"}}, "no | pipes\nsecond line"));
  const Table t = summary_table(s);
  CHECK(t.header == std::vector<std::string>{"n", "dtype", "gpu median (µs)", "noise", "GB/s",
                                             "cpu median (µs)", "samples", "notes", "status"});
  CHECK(t.rows[0] == std::vector<std::string>{"1024", "f32", "12.50", "3.4%", "8.192", "25.00",
                                              "10", "launch-bound", "ok"});
  CHECK(t.rows[1] ==
        std::vector<std::string>{"1024", "f64", "", "", "", "", "", "", "failed: no | pipes"});
  const std::string md = markdown(t);
  CHECK(md.find("| failed: no \\| pipes |") != std::string::npos);
  CHECK(md.find("| ---: | ----- | --------------: |") != std::string::npos);
}

TEST_CASE("CSV: every sweep with quoted fields and nested fields flattened") {
  Sweep a;
  a.name = "a";
  a.axes = {"n"};
  a.points.push_back(point({{"n", 1}}, {{"ms", 0.25}, {"stats", Value::Object{{"max", 3}}}}));
  a.points.push_back(failed({{"n", 2}}, "bad, \"very\"\nbad"));
  Sweep b;
  b.name = "b";
  b.axes = {"m"};
  b.points.push_back(point({{"m", "x y"}}, {{"GBps", 12.5}, {"times", Value::List{1, 2}}}));
  CHECK(sweeps_csv({&a, &b}) ==
        "sweep,n,m,status,error,ms,stats.max,GBps\n"
        "a,1,,ok,,0.25,3,\n"
        "a,2,,failed,\"bad, \"\"very\"\"\nbad\",,,\n"
        "b,,x y,ok,,,,12.5\n");
}

TEST_CASE("the primary metric of a point") {
  auto m = primary_metric(point({}, bench(0.5, 0.03)));
  REQUIRE(m);
  CHECK(m->path == "gpu.median");
  CHECK(m->value == 0.5);
  CHECK(m->noise == 0.03);
  CHECK(m->lower_is_better);
  m = primary_metric(point({}, {{"ms", 2.0}, {"noise", 0.1}}));
  REQUIRE(m);
  CHECK(m->path == "ms");
  CHECK(m->noise == 0.1);
  m = primary_metric(point({}, {{"label", "x"}, {"GBps", 300.0}}));
  REQUIRE(m);
  CHECK(m->path == "GBps");
  CHECK_FALSE(m->lower_is_better);
  m = primary_metric(point({}, bench(0.5, 0.03)), "cpu.median");
  REQUIRE(m);
  CHECK(m->value == 1.0);
  CHECK(m->noise == 0);
  CHECK_FALSE(primary_metric(failed({}, "x")));
  CHECK_FALSE(primary_metric(point({}, {{"label", "x"}})));
  CHECK(is_milliseconds("gpu.median"));
  CHECK(is_milliseconds("ms"));
  CHECK(is_milliseconds("copy_ms"));
  CHECK_FALSE(is_milliseconds("GBps"));
}

TEST_CASE("result files round-trip and are recognized") {
  ResultFile f;
  f.run = {{"culua_version", "0.1.0"}, {"backend", "host"}};
  Sweep s;
  s.name = "k";
  s.axes = {"n"};
  s.seconds = 1.5;
  s.points.push_back(point({{"n", 1}}, bench(0.5, 0.01)));
  s.points.push_back(failed({{"n", 2}}, "boom"));
  f.sweeps.push_back(s);
  const std::string text = results_json(f);
  CHECK(text.rfind("{\n  \"format\": \"culua-results\",\n  \"format_version\": 1,", 0) == 0);
  const ResultFile back = parse_results(text, "r.json");
  REQUIRE(back.sweeps.size() == 1);
  const Sweep& b = back.sweeps[0];
  CHECK(b.name == "k");
  CHECK(b.axes == std::vector<std::string>{"n"});
  CHECK(b.seconds == 1.5);
  REQUIRE(b.points.size() == 2);
  CHECK(b.points[0].params == s.points[0].params);
  CHECK(b.points[0].result == s.points[0].result);
  CHECK_FALSE(b.points[1].ok);
  CHECK(b.points[1].error == "boom");
  CHECK(find(back.run, "backend")->as_string() == "host");

  CHECK(error_of([] { parse_results("{\"sweeps\": []}", "x.json"); }) ==
        "x.json is not a culua result file (it has no \"format\": \"culua-results\")");
  CHECK(error_of([] {
          parse_results("{\"format\": \"culua-results\", \"format_version\": 9, \"sweeps\": []}",
                        "x.json");
        }).find("x.json has format version 9") == 0);
  CHECK(error_of([] {
          parse_results("{\"format\": \"culua-results\", \"sweeps\": [{\"name\": \"a\"}]}",
                        "x.json");
        }) == "x.json: sweep 1: \"points\" is missing");
}

TEST_CASE("compare: verdicts against the larger noise and the threshold") {
  ResultFile old_file, new_file;
  Sweep o, n;
  o.name = n.name = "k";
  o.axes = n.axes = {"n"};
  const auto add = [](Sweep& s, int64_t i, double median, double noise) {
    s.points.push_back(point({{"n", i}}, bench(median, noise)));
  };
  add(o, 1, 1.0, 0.05), add(n, 1, 1.03, 0.01);     // same: within the old run's 5%
  add(o, 2, 1.0, 0.01), add(n, 2, 0.9, 0.01);      // faster
  add(o, 3, 1.0, 0.01), add(n, 3, 1.1, 0.04);      // slower
  add(o, 4, 1.0, 0.001), add(n, 4, 1.015, 0.001);  // same: under the 2% floor
  add(o, 5, 0.0, 0.0), add(n, 5, 1.0, 0.0);        // unknown: old is 0
  add(n, 6, 1.0, 0.0);                             // added
  add(o, 7, 1.0, 0.0);                             // removed
  n.points.push_back(failed({{"n", 8}}, "oops"));
  add(o, 8, 1.0, 0.0);
  old_file.sweeps.push_back(o);
  new_file.sweeps.push_back(n);

  const auto c = compare(old_file, new_file, {});
  REQUIRE(c.size() == 8);
  CHECK(find_comparison(c, 1).verdict == Verdict::Same);
  CHECK(find_comparison(c, 1).noise == 0.05);
  CHECK(find_comparison(c, 1).diff == Approx(0.03));
  CHECK(find_comparison(c, 2).verdict == Verdict::Faster);
  CHECK(find_comparison(c, 3).verdict == Verdict::Slower);
  CHECK(find_comparison(c, 4).verdict == Verdict::Same);
  CHECK(find_comparison(c, 5).verdict == Verdict::Unknown);
  CHECK(find_comparison(c, 6).verdict == Verdict::Added);
  CHECK(find_comparison(c, 7).verdict == Verdict::Removed);
  CHECK(find_comparison(c, 8).verdict == Verdict::Failed);
  CHECK(find_comparison(c, 8).note == "new: oops");
  CHECK(c.back().verdict == Verdict::Removed);  // after the new file's points
  CHECK(comparison_summary(c) ==
        "8 points: 2 same, 1 faster, 1 slower, 1 added, 1 removed, 1 failed, 1 unknown");

  CompareOptions strict;
  strict.threshold = 0.01;
  CHECK(find_comparison(compare(old_file, new_file, strict), 4).verdict == Verdict::Slower);
}

TEST_CASE("compare: a sweep run twice matches run by run and parameter order does not matter") {
  ResultFile a, b;
  for (double median : {1.0, 2.0}) {
    Sweep s;
    s.name = "twice";
    s.axes = {"n", "t"};
    s.points.push_back(point({{"n", 1}, {"t", "f32"}}, bench(median, 0.0)));
    a.sweeps.push_back(s);
    Sweep r = s;
    r.points[0].params = {{"t", "f32"}, {"n", 1}};
    b.sweeps.push_back(r);
  }
  const auto c = compare(a, b, {});
  REQUIRE(c.size() == 2);
  CHECK(c[0].verdict == Verdict::Same);
  CHECK(c[1].verdict == Verdict::Same);
  CHECK(*c[1].old_value == 2.0);
  CHECK(*c[1].new_value == 2.0);
}

TEST_CASE("FNV-1a 64 of script contents") {
  CHECK(fnv1a64_hex("") == "cbf29ce484222325");
  CHECK(fnv1a64_hex("a") == "af63dc4c8601ec8c");
  CHECK(fnv1a64_hex("foobar") == "85944171f73967e8");
}

TEST_CASE("plot scripts: one data block per series with sorted x and log x for wide ranges") {
  std::vector<Value> rows;
  for (int64_t n : {4096, 1024, 262144}) {
    for (const char* t : {"f32", "f64"}) {
      rows.emplace_back(Value::Object{{"n", n}, {"t", t}, {"gpu", Value::Object{{"median", 0.5}}}});
    }
  }
  rows.emplace_back(Value::Object{{"n", 2}, {"t", "f32"}, {"status", "failed"}});
  PlotSpec spec;
  spec.x = "n";
  spec.y = "gpu.median";
  spec.series = {"t"};
  spec.file = "it's.svg";
  spec.title = "Bob's plot";
  const PlotScript p = plot_script(rows, spec, "/tmp/data.tsv", "test");
  CHECK(p.series == 2);
  CHECK(p.points == 6);
  CHECK(p.data == "1024\t0.5\n4096\t0.5\n262144\t0.5\n\n\n1024\t0.5\n4096\t0.5\n262144\t0.5\n");
  CHECK(p.script.find("set terminal svg") != std::string::npos);
  CHECK(p.script.find("set output 'it''s.svg'") != std::string::npos);
  CHECK(p.script.find("set title 'Bob''s plot'") != std::string::npos);
  CHECK(p.script.find("set logscale x 2") != std::string::npos);
  CHECK(p.script.find("set xtics (1024, 4096, 262144)") != std::string::npos);
  CHECK(p.script.find("set ylabel 'gpu.median (ms)'") != std::string::npos);
  CHECK(p.script.find("title 't=f32'") != std::string::npos);
  CHECK(p.script.find("'' index 1 using 1:2") != std::string::npos);

  spec.logx = false;
  spec.file = "p.png";
  const PlotScript q = plot_script(rows, spec, "/tmp/data.tsv", "test");
  CHECK(q.script.find("logscale") == std::string::npos);
  CHECK(q.script.find("pngcairo") != std::string::npos);
}

TEST_CASE("plot scripts: text x values and errors") {
  std::vector<Value> rows{Value(Value::Object{{"op", "mul"}, {"ms", 2}}),
                          Value(Value::Object{{"op", "add"}, {"ms", 1}})};
  PlotSpec spec;
  spec.x = "op";
  spec.y = "ms";
  spec.file = "p.png";
  const PlotScript p = plot_script(rows, spec, "d", "test");
  CHECK(p.data == "0\tmul\t2\n1\tadd\t1\n");
  CHECK(p.script.find("using 1:3:xtic(2)") != std::string::npos);
  CHECK(p.script.find("set ylabel 'time (ms)'") != std::string::npos);
  spec.file = "p.gif";
  CHECK(error_of([&] { plot_script(rows, spec, "d", "cu.plot"); }) ==
        "cu.plot cannot write 'p.gif': the file name must end in .png or .svg");
  spec.file = "p.png";
  spec.y = "gpu.median";
  CHECK(error_of([&] { plot_script(rows, spec, "d", "cu.plot"); }) ==
        "no row has a number at y = 'gpu.median' (fields of the first row: op, ms)");
  spec.y = "ms";
  spec.logx = true;
  CHECK(error_of([&] { plot_script(rows, spec, "d", "cu.plot"); }) ==
        "logx needs numbers at x = 'op'");
  CHECK(gnuplot_missing_message("cu.plot") ==
        "cu.plot needs gnuplot (Debian package gnuplot-nox), which was not found on PATH");
}
