// Comparing two result files point by point against the measured noise (as nvbench's
// nvbench_compare.py does): a difference counts only when it exceeds the noise of both runs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "measure/results.hpp"

namespace culua::detail::measure {

struct CompareOptions {
  // The smallest relative difference that counts (a fraction), whatever the measured noise.
  double threshold = 0.02;
  // The metric to compare (a dotted path such as "gpu.median"); empty: each point's primary one.
  std::string metric;
};

enum class Verdict {
  Same,     // |new - old| / old within max(noise_old, noise_new, threshold)
  Faster,   // better beyond the noise (lower time, or higher throughput)
  Slower,   // worse beyond the noise
  Added,    // only in the new file
  Removed,  // only in the old file
  Failed,   // failed in either file
  Unknown,  // no comparable metric (missing, different metrics, old value 0)
};
const char* verdict_name(Verdict v);

struct Comparison {
  std::string sweep;
  std::vector<std::string> axes;  // of the sweep, to lay out tables
  Value::Object params;
  std::string metric;
  std::optional<double> old_value, new_value;
  double diff = 0;   // (new - old) / old
  double noise = 0;  // max(noise_old, noise_new)
  Verdict verdict = Verdict::Unknown;
  std::string note;  // why a point failed or is unknown
};

// Points match by sweep name and parameters (in any order of the axes). Results follow the new
// file's order; points only in the old file come after their sweep's.
std::vector<Comparison> compare(const ResultFile& old_file, const ResultFile& new_file,
                                const CompareOptions& options);

// Markdown tables, one per sweep: params, old, new, diff, noise, status.
std::string comparison_markdown(const std::vector<Comparison>& c);
// "12 points: 9 same, 1 faster, 1 slower, 1 added, 0 removed, 0 failed, 0 unknown".
std::string comparison_summary(const std::vector<Comparison>& c);

}  // namespace culua::detail::measure
