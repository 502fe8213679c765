#include "cli/compare.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/base/error.hpp"
#include "measure/compare.hpp"
#include "measure/results.hpp"

namespace culua::detail::cli {

namespace {

// Exit status for unreadable or invalid input.
constexpr int kBadInput = 2;

std::string describe(const measure::ResultFile& f) {
  const measure::Value run(f.run);
  std::string s;
  const auto add = [&](const char* path) {
    const measure::Value* v = run.at_path(path);
    if (v && v->is_string() && !v->as_string().empty())
      s += (s.empty() ? "" : ", ") + v->as_string();
  };
  add("device.name");
  add("date");
  if (const measure::Value* v = run.get("culua_version"); v && v->is_string()) {
    s += (s.empty() ? "culua " : ", culua ") + v->as_string();
  }
  return s;
}

std::string device_of(const measure::ResultFile& f) {
  const measure::Value run(f.run);
  const measure::Value* v = run.at_path("device.name");
  return v && v->is_string() ? v->as_string() : std::string();
}

// --threshold: a finite percentage, 0 or more. (CLI::NonNegativeNumber printed its range as 0 to
// DBL_MAX in 309 digits and let nan through.)
std::string check_percentage(std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end == text.c_str() || *end != '\0' || !std::isfinite(v) || v < 0)
    return "expected a percentage: a finite number, 0 or more, such as 2 or 0.5; got '" + text +
           "'";
  return {};
}

}  // namespace

int compare_main(int argc, char** argv) {
  CLI::App app{
      "Compares two result files of culua sweeps (culua --json FILE, or json= in cu.sweep) point "
      "by point. Points match by sweep name and parameters; each is same, faster or slower: a "
      "difference counts only when it exceeds the measured noise of both runs and the threshold.",
      std::string(argc > 0 && argv[0] && argv[0][0] ? argv[0] : "culua") + " compare"};
  std::string old_path, new_path, metric;
  double threshold = 2.0;
  bool fail_on_slower = false;
  app.add_option("old", old_path, "the reference result file")->required()->type_name("OLD.json");
  app.add_option("new", new_path, "the result file to judge")->required()->type_name("NEW.json");
  app.add_option("--threshold", threshold,
                 "smallest relative difference that counts, in percent, whatever the noise "
                 "(default 2)")
      ->type_name("PERCENT")
      ->check(CLI::Validator(check_percentage, ""));
  app.add_option("--metric", metric,
                 "the field to compare, a dotted path such as gpu.median or cpu.median "
                 "(default: gpu.median of bench results, ms of run functions that return a "
                 "number, else the first numeric field)")
      ->type_name("PATH");
  app.add_flag("--fail-on-slower", fail_on_slower, "exit with status 1 when any point is slower");
  app.footer("Exit status: 0, or 1 with --fail-on-slower when a point is slower; 2 on bad input.");
  try {
    app.parse(argc - 1, argv + 1);  // argv[1] is "compare"
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::fprintf(stderr, "%s: %s\nRun '%s --help' for more information.\n", app.get_name().c_str(),
                 e.what(), app.get_name().c_str());
    return kBadInput;
  }

  measure::ResultFile old_file, new_file;
  try {
    old_file = measure::parse_results(measure::read_text_file(old_path), old_path);
    new_file = measure::parse_results(measure::read_text_file(new_path), new_path);
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: %s\n", app.get_name().c_str(), e.what());
    return kBadInput;
  }

  measure::CompareOptions options;
  options.threshold = threshold / 100.0;
  options.metric = metric;
  const auto comparisons = measure::compare(old_file, new_file, options);

  std::string out = "old: " + old_path + " (" + describe(old_file) + ")\n";
  out += "new: " + new_path + " (" + describe(new_file) + ")\n";
  if (device_of(old_file) != device_of(new_file)) {
    out += "note: the files come from different devices\n";
  }
  out += "\n";
  if (!comparisons.empty()) out += measure::comparison_markdown(comparisons) + "\n";
  out += measure::comparison_summary(comparisons) + fmt::format(" (threshold {}%)\n", threshold);
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);

  const bool slower = std::any_of(comparisons.begin(), comparisons.end(), [](const auto& c) {
    return c.verdict == measure::Verdict::Slower;
  });
  return fail_on_slower && slower ? 1 : 0;
}

}  // namespace culua::detail::cli
