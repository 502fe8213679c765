// Isolated sweep points without Lua (src/measure/isolate.hpp): child processes that exit, crash,
// hang or leave processes behind, their output's tail, the journal file, the points by index.
#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/base/error.hpp"
#include "measure/isolate.hpp"
#include "measure/sweep.hpp"

using namespace culua::detail;
using namespace culua::detail::measure;

namespace {

ChildRun shell(const std::string& command, double timeout_s = 0) {
  ChildRun run;
  run.executable = "/bin/sh";
  run.argv = {"sh", "-c", command};
  run.timeout_s = timeout_s;
  return run;
}

}  // namespace

TEST_CASE("run_child: exit status, signal, output tail and the result file") {
  const ChildOutcome exited = run_child(shell("echo one >&2; echo two >&2; exit 3"));
  CHECK(exited.end == ChildOutcome::End::Exited);
  CHECK(exited.code == 3);
  CHECK_FALSE(exited.has_result);
  CHECK(exited.output == "one\ntwo");
  CHECK(describe_child_failure(exited, 0) == "exited with status 3 without a result\none\ntwo");

  const ChildOutcome lua_error = run_child(
      shell("printf 'culua: x.lua:1: boom\\nstack traceback:\\n\\t[C]: in ?\\n' >&2; exit 1"));
  CHECK(lua_error.output == "culua: x.lua:1: boom");

  const ChildOutcome crashed = run_child(shell("echo dying >&2; kill -SEGV $$"));
  CHECK(crashed.end == ChildOutcome::End::Signaled);
  CHECK(crashed.code == SIGSEGV);
  CHECK(describe_child_failure(crashed, 0) == "crashed: signal 11 (Segmentation fault)\ndying");

  TempFolder folder("culua-test-isolate-");
  ChildRun with_result = shell("printf 'the result' > \"$RESULT_FILE\"; echo ignored");
  with_result.result_path = folder.path() + "/result";
  with_result.environment = {{"RESULT_FILE", with_result.result_path}};
  const ChildOutcome result = run_child(with_result);
  CHECK(result.end == ChildOutcome::End::Exited);
  CHECK(result.has_result);
  CHECK(result.result == "the result");
  CHECK(result.output.empty());  // stdout goes to /dev/null
}

TEST_CASE("run_child: a timeout kills the child's whole process group") {
  const std::string marker = fmt::format("/tmp/culua_test_isolate_{}", ::getpid());
  std::remove(marker.c_str());
  const auto t0 = std::chrono::steady_clock::now();
  // The grandchild would write the marker after 2 s if it outlived the group.
  const ChildOutcome hung = run_child(
      shell("(sleep 2; touch " + marker + ") & echo started >&2; while :; do :; done", 0.3));
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(hung.end == ChildOutcome::End::TimedOut);
  CHECK(took < 1.5);
  CHECK(describe_child_failure(hung, 0.3) == "timed out after 0.3 s (killed)\nstarted");
  ::sleep(3);
  CHECK(::access(marker.c_str(), F_OK) != 0);
}

TEST_CASE("run_child: a grandchild left holding stderr does not keep the parent waiting") {
  const auto t0 = std::chrono::steady_clock::now();
  const ChildOutcome done = run_child(shell("sleep 30 & exit 0"));
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(done.end == ChildOutcome::End::Exited);
  CHECK(done.code == 0);
  CHECK(took < 5);
}

TEST_CASE("run_child: a program that cannot start raises") {
  ChildRun run;
  run.executable = "/nonexistent/program";
  run.argv = {"program"};
  CHECK_THROWS_WITH(run_child(run), Catch::Contains("cannot start a child process"));
}

TEST_CASE("last_lines keeps the last non-empty lines, each cut") {
  CHECK(last_lines("a\nb\n\nc\nd\n", 2) == "c\nd");
  CHECK(last_lines("only", 5) == "only");
  CHECK(last_lines("", 5).empty());
  CHECK(last_lines(std::string(400, 'x') + "\n", 1) == std::string(300, 'x'));
}

TEST_CASE("the journal reads back what it wrote") {
  JournalEntry e;
  e.name = "copy";
  e.occurrence = 2;
  e.counts = {{"copy", 2}, {"inner", 5}};
  e.sweep.name = "copy";
  e.sweep.axes = {"n"};
  Point ok;
  ok.params = {{"n", Value(4)}};
  ok.result = {{"ms", Value(1.5)}, {"shape", Value(Value::List{Value(2), Value(3)})}};
  Point failed;
  failed.params = {{"n", Value(8)}};
  failed.ok = false;
  failed.error = "crashed: signal 11 (Segmentation fault)\nlast words";
  e.sweep.points = {ok, failed};
  const std::vector<JournalEntry> back = parse_journal(journal_json({e, e}), "journal");
  REQUIRE(back.size() == 2);
  CHECK(back[1].name == "copy");
  CHECK(back[1].occurrence == 2);
  CHECK(back[1].counts == e.counts);
  REQUIRE(back[1].sweep.points.size() == 2);
  CHECK(back[1].sweep.points[0].result == ok.result);
  CHECK_FALSE(back[1].sweep.points[1].ok);
  CHECK(back[1].sweep.points[1].error == failed.error);
  CHECK(parse_journal(journal_json({}), "journal").empty());
  CHECK_THROWS_WITH(parse_journal(results_json({}), "the journal"),
                    Catch::Contains("the journal: not a sweep journal"));
}

TEST_CASE("sweep_point gives the point of an index, the last axis fastest") {
  const std::vector<SweepAxis> axes = {{"n", {Value(1), Value(2)}},
                                       {"t", {Value("a"), Value("b"), Value("c")}}};
  const SweepPoint p = sweep_point(axes, 4);
  CHECK(p.index == 4);
  CHECK(p.at == std::vector<size_t>{1, 1});
  CHECK(p.label == "n=2 t=b");
  CHECK(p.params == Value::Object{{"n", Value(2)}, {"t", Value("b")}});
}

TEST_CASE("the child environment is all or nothing, and taken away") {
  ::setenv(kIsolateSweepVar, "s", 1);
  CHECK_THROWS_WITH(take_point_child_environment(), Catch::Contains("all of them or none"));
  CHECK(std::getenv(kIsolateSweepVar) == nullptr);
  CHECK_FALSE(take_point_child_environment().active());
  ::setenv(kIsolateSweepVar, "s", 1);
  ::setenv(kIsolateOccurrenceVar, "2", 1);
  ::setenv(kIsolatePointVar, "x", 1);
  ::setenv(kIsolateJournalVar, "/j", 1);
  ::setenv(kIsolateResultVar, "/r", 1);
  CHECK_THROWS_WITH(take_point_child_environment(), Catch::Contains("CULUA_ISOLATE_POINT must"));
  ::setenv(kIsolateSweepVar, "s", 1);
  ::setenv(kIsolateOccurrenceVar, "2", 1);
  ::setenv(kIsolatePointVar, "7", 1);
  ::setenv(kIsolateJournalVar, "/j", 1);
  ::setenv(kIsolateResultVar, "/r", 1);
  const PointChild c = take_point_child_environment();
  CHECK(c.active());
  CHECK(c.sweep == "s");
  CHECK(c.occurrence == 2);
  CHECK(c.point == 7);
  CHECK(c.journal == "/j");
  CHECK(c.result == "/r");
  CHECK(std::getenv(kIsolateResultVar) == nullptr);
}
