// The sweep engine of src/measure/sweep.hpp, without Lua: iteration order, failing and
// interrupted points, collisions, result fields and files.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "core/base/error.hpp"
#include "measure/results.hpp"
#include "measure/sweep.hpp"

using namespace culua::detail;
using namespace culua::detail::measure;

namespace {

SweepSpec two_axes() {
  SweepSpec spec;
  spec.name = "grid";
  spec.axes = {{"n", {Value(1024), Value(4096)}},
               {"dtype", {Value("f32"), Value("f64"), Value("i8")}}};
  spec.quiet = true;
  return spec;
}

std::string temp_path(const char* name) {
  return fmt::format("/tmp/culua_test_sweep_{}_{}", ::getpid(), name);
}

}  // namespace

TEST_CASE("sweep: every combination, the last axis fastest, with its parameters and label") {
  SweepSpec spec = two_axes();
  std::vector<std::string> seen;
  spec.run = [&](const SweepPoint& p) {
    CHECK(p.index == seen.size());
    REQUIRE(p.params.size() == 2);
    CHECK(p.params[0].first == "n");
    CHECK(p.params[1].first == "dtype");
    CHECK(p.at.size() == 2);
    seen.push_back(p.label);
    return PointRun::ok({{"ms", 0.5 * static_cast<double>(p.index)}});
  };
  SweepSession session;
  const SweepReport r = run_sweep(spec, session, nullptr);
  CHECK(seen == std::vector<std::string>{"n=1024 dtype=f32", "n=1024 dtype=f64", "n=1024 dtype=i8",
                                         "n=4096 dtype=f32", "n=4096 dtype=f64",
                                         "n=4096 dtype=i8"});
  const Sweep& s = r.sweep;
  CHECK(s.name == "grid");
  CHECK(s.axes == std::vector<std::string>{"n", "dtype"});
  CHECK_FALSE(s.interrupted);
  CHECK(s.seconds >= 0);
  CHECK(s.started.size() == 20);  // 2026-11-21T17:22:32Z
  REQUIRE(s.points.size() == 6);
  CHECK(*find(s.points[4].params, "n") == Value(4096));
  CHECK(*find(s.points[4].params, "dtype") == Value("f64"));
  CHECK(s.points[4].ok);
  CHECK(*find(s.points[4].result, "ms") == Value(2.0));
  CHECK(r.collisions.empty());
  CHECK(r.failures.empty());
}

TEST_CASE("sweep: a failing point is recorded and the sweep goes on") {
  SweepSpec spec = two_axes();
  spec.run = [](const SweepPoint& p) {
    if (p.index == 1) return PointRun::failed("out of shared memory");
    if (p.index == 3) fail(ErrorKind::Value, "thrown for {}", p.label);
    return PointRun::ok({{"GBps", 100.0 + static_cast<double>(p.index)}});
  };
  SweepSession session;
  const Sweep s = run_sweep(spec, session, nullptr).sweep;
  REQUIRE(s.points.size() == 6);
  CHECK_FALSE(s.points[1].ok);
  CHECK(s.points[1].error == "out of shared memory");
  CHECK(s.points[1].result.empty());
  CHECK_FALSE(s.points[3].ok);
  CHECK(s.points[3].error == "thrown for n=4096 dtype=f32");
  for (size_t i : {0, 2, 4, 5}) {
    CHECK(s.points[i].ok);
    CHECK(*find(s.points[i].result, "GBps") == Value(100.0 + static_cast<double>(i)));
  }
  const std::string table = sweep_markdown(s);
  CHECK(table.find("failed: out of shared memory") != std::string::npos);
}

TEST_CASE("sweep: an interruption ends it and keeps the points before") {
  SweepSpec spec = two_axes();
  int calls = 0;
  spec.run = [&](const SweepPoint& p) {
    ++calls;
    if (p.index == 2) return PointRun::interrupted();
    return PointRun::ok({{"ms", 1.0}});
  };
  SweepSession session;
  const Sweep s = run_sweep(spec, session, nullptr).sweep;
  CHECK(calls == 3);
  CHECK(s.interrupted);
  CHECK(s.points.size() == 2);

  spec.run = [](const SweepPoint& p) -> PointRun {
    if (p.index == 4) fail(ErrorKind::Interrupted, "interrupted");
    return PointRun::ok({});
  };
  const Sweep t = run_sweep(spec, session, nullptr).sweep;
  CHECK(t.interrupted);
  CHECK(t.points.size() == 4);
}

TEST_CASE("sweep: fields named like an axis or status are dropped and reported") {
  SweepSpec spec = two_axes();
  spec.run = [](const SweepPoint&) {
    return PointRun::ok({{"n", 1}, {"status", "mine"}, {"bytes", 64}});
  };
  SweepSession session;
  const SweepReport r = run_sweep(spec, session, nullptr);
  CHECK(r.collisions == std::vector<std::string>{"n", "status"});
  for (const Point& p : r.sweep.points) {
    CHECK(p.result == Value::Object{{"bytes", 64}});
    CHECK(*find(p.params, "n") != Value(1));
  }
  const std::vector<Value> rows = sweep_rows(r.sweep);
  REQUIRE(rows.size() == 6);
  CHECK(rows[0].get("status")->as_string() == "ok");
  CHECK(rows[0].get("bytes")->as_integer() == 64);
}

TEST_CASE("sweep: what is checked before anything runs") {
  SweepSpec spec = two_axes();
  int calls = 0;
  spec.run = [&](const SweepPoint&) {
    ++calls;
    return PointRun::ok({});
  };
  SweepSession session;
  SECTION("axes") {
    spec.axes.push_back({"status", {Value(1)}});
    CHECK_THROWS_WITH(run_sweep(spec, session, nullptr),
                      "'status' cannot be an axis name (it is a column of the results)");
    spec.axes.back() = {"n", {Value(1)}};
    CHECK_THROWS_WITH(run_sweep(spec, session, nullptr), "axis 'n' is given twice");
    spec.axes.back() = {"m", {}};
    CHECK_THROWS_WITH(run_sweep(spec, session, nullptr), "axis 'm' has no values");
  }
  SECTION("outputs") {
    spec.outputs.json = "/nonexistent-dir/x.json";
    CHECK_THROWS_WITH(run_sweep(spec, session, nullptr),
                      Catch::StartsWith("cannot write json= file /nonexistent-dir/x.json"));
  }
  CHECK(calls == 0);
}

TEST_CASE("sweep: result files of several sweeps of one session") {
  const std::string json = temp_path("out.json"), csv = temp_path("out.csv");
  SweepSession session;
  for (const char* name : {"first", "second"}) {
    SweepSpec spec = two_axes();
    spec.name = name;
    spec.outputs.json = json;
    spec.outputs.csv = csv;
    spec.run = [](const SweepPoint& p) {
      if (p.index == 0) return PointRun::failed("bad, \"quoted\"");
      return PointRun::ok(
          {{"gpu", Value::Object{{"median", 0.25}, {"noise", 0.01}}}, {"samples", 10}});
    };
    CHECK(run_sweep(spec, session, [] {
            return Value::Object{{"host", "test"}};
          }).failures.empty());
  }
  const ResultFile f = parse_results(read_text_file(json), json);
  CHECK(f.run == Value::Object{{"format", kResultFormat},
                               {"format_version", kResultFormatVersion},
                               {"host", "test"}});
  REQUIRE(f.sweeps.size() == 2);
  CHECK(f.sweeps[1].name == "second");
  REQUIRE(f.sweeps[0].points.size() == 6);
  CHECK_FALSE(f.sweeps[0].points[0].ok);
  CHECK(f.sweeps[0].points[0].error == "bad, \"quoted\"");
  CHECK(f.sweeps[0].points[5].result ==
        Value::Object{{"gpu", Value::Object{{"median", 0.25}, {"noise", 0.01}}}, {"samples", 10}});
  const std::string text = read_text_file(csv);
  CHECK(text.rfind("sweep,n,dtype,status,error,gpu.median,gpu.noise,samples\n", 0) == 0);
  CHECK(text.find("first,1024,f32,failed,\"bad, \"\"quoted\"\"\"") != std::string::npos);
  CHECK(text.find("second,4096,i8,ok,,0.25,0.01,10") != std::string::npos);
  std::remove(json.c_str());
  std::remove(csv.c_str());
}

TEST_CASE("sweep: shared by processes, each runs its round-robin points, rank 0 writes") {
  // Rank 1 of 3 (no MPI here: gather is a stand-in that records what it was given).
  SweepSpec spec = two_axes();  // 6 points
  std::vector<size_t> ran;
  spec.run = [&](const SweepPoint& at) {
    ran.push_back(at.index);
    if (at.index == 4) throw Error(ErrorKind::Value, "point 4 fails");
    return PointRun::ok({{"ms", Value(1.0)}});
  };
  std::vector<size_t> gathered;
  spec.share.rank = 1;
  spec.share.size = 3;
  spec.share.gather = [&](const std::vector<size_t>& indices, std::vector<Point> points, bool&) {
    gathered = indices;
    return points;
  };
  const std::string json = temp_path("shared.json");
  std::remove(json.c_str());
  spec.outputs.json = json;
  SweepSession session;
  const Sweep s = run_sweep(spec, session, nullptr).sweep;
  CHECK(ran == std::vector<size_t>{1, 4});
  CHECK(gathered == std::vector<size_t>{1, 4});
  REQUIRE(s.points.size() == 2);
  CHECK(s.points[0].ok);
  CHECK_FALSE(s.points[1].ok);
  CHECK(s.points[1].error == "point 4 fails");
  CHECK(std::fopen(json.c_str(), "r") == nullptr);  // only rank 0 writes

  // Rank 0: gather's points (every process's) are the sweep, and its files hold them.
  spec.share.rank = 0;
  ran.clear();
  spec.share.gather = [&](const std::vector<size_t>& indices, std::vector<Point> points,
                          bool& interrupted) {
    CHECK(indices == std::vector<size_t>{0, 3});
    interrupted = true;  // another rank was interrupted
    Point extra;
    extra.params = {{"n", Value(1)}, {"dtype", Value("x")}};
    points.push_back(extra);
    return points;
  };
  const Sweep t = run_sweep(spec, session, nullptr).sweep;
  CHECK(ran == std::vector<size_t>{0, 3});
  CHECK(t.points.size() == 3);
  CHECK(t.interrupted);
  std::FILE* f = std::fopen(json.c_str(), "r");
  CHECK(f != nullptr);
  if (f) std::fclose(f);
  std::remove(json.c_str());
}
