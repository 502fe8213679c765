// The hardware counters' metric configuration, through CUPTI's Profiler Host API: the host
// object, which metric names the chip counts, the error (with close names) for those it does not,
// the config image and the passes it needs.
#if defined(CULUA_HAVE_CUPTI)

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/base/error.hpp"
#include "fmt/format.h"
#include "measure/cupti_counters_internal.hpp"

namespace culua::detail::measure::cupti_counters {

namespace {

// A metric every chip of the range profiler counts: the check that a CUPTI which rejects every
// name with CUPTI_ERROR_UNKNOWN is not simply failing.
constexpr const char* kAlwaysCounted = "gpu__time_duration.sum";

// Levenshtein distance, for suggesting names close to a misspelt one.
size_t edit_distance(std::string_view x, std::string_view y) {
  std::vector<size_t> row(y.size() + 1);
  for (size_t j = 0; j <= y.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= x.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= y.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({above + 1, row[j - 1] + 1, diagonal + (x[i - 1] == y[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[y.size()];
}

// The chip's metric names, for suggestions: base metrics (dram__bytes_read) by type, and each
// base's rollups and submetrics (.sum, .avg.pct_of_peak_sustained_elapsed). Best effort: a
// listing CUPTI refuses leaves fewer suggestions rather than replacing the error about the name.
class Catalog {
 public:
  Catalog(const Api& a, Host host) : api_(a), host_(std::move(host)) {
    for (int type = 0; type < CUPTI_METRIC_TYPE__COUNT; ++type) {
      auto p = params<CUpti_Profiler_Host_GetBaseMetrics_Params>(
          CUpti_Profiler_Host_GetBaseMetrics_Params_STRUCT_SIZE);
      p.pHostObject = host_.get();
      p.metricType = static_cast<CUpti_MetricType>(type);
      if (api_.host_base_metrics.call(&p) != CUPTI_SUCCESS || !p.ppMetricNames) continue;
      for (size_t i = 0; i < p.numMetrics; ++i) {
        if (!p.ppMetricNames[i]) continue;
        bases_.emplace_back(p.ppMetricNames[i], p.metricType);
        index_.emplace(bases_.back().first, p.metricType);
      }
    }
  }

  // Whether the chip has the metric `name` (a base metric with one of its rollups or submetrics),
  // collectable or not.
  bool knows(const std::string& name) {
    const size_t dot = name.find('.');
    if (dot == std::string::npos) return false;
    const auto it = index_.find(name.substr(0, dot));
    if (it == index_.end()) return false;
    const std::vector<std::string> subs = submetrics(it->first, it->second);
    return std::find(subs.begin(), subs.end(), name.substr(dot)) != subs.end();
  }

  // Up to `count` full names close to `name`.
  std::vector<std::string> close_to(const std::string& name, size_t count) {
    const size_t dot = name.find('.');
    const std::string base = name.substr(0, dot);
    const std::string suffix = dot == std::string::npos ? std::string() : name.substr(dot);
    std::vector<std::pair<size_t, size_t>> ranked;  // (distance, index in bases_)
    ranked.reserve(bases_.size());
    for (size_t i = 0; i < bases_.size(); ++i) {
      ranked.emplace_back(edit_distance(base, bases_[i].first), i);
    }
    const size_t n = std::min(count, ranked.size());
    std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(n),
                      ranked.end());
    std::vector<std::string> out;
    if (n > 0 && ranked[0].first == 0) {
      // The base metric exists: the rollup or submetric is wrong, so offer this base's closest.
      const auto& [b, type] = bases_[ranked[0].second];
      for (const std::string& s : closest(submetrics(b, type), suffix, count)) out.push_back(b + s);
      return out;
    }
    for (size_t k = 0; k < n; ++k) {
      const auto& [b, type] = bases_[ranked[k].second];
      const std::vector<std::string> s = closest(submetrics(b, type), suffix, 1);
      out.push_back(s.empty() ? b : b + s[0]);
    }
    return out;
  }

 private:
  std::vector<std::string> submetrics(const std::string& base, CUpti_MetricType type) {
    auto p = params<CUpti_Profiler_Host_GetSubMetrics_Params>(
        CUpti_Profiler_Host_GetSubMetrics_Params_STRUCT_SIZE);
    p.pHostObject = host_.get();
    p.metricType = type;
    p.pMetricName = base.c_str();
    std::vector<std::string> out;
    if (api_.host_sub_metrics.call(&p) != CUPTI_SUCCESS || !p.ppSubMetrics) return out;
    for (size_t i = 0; i < p.numOfSubmetrics; ++i) {
      if (p.ppSubMetrics[i]) out.emplace_back(p.ppSubMetrics[i]);
    }
    return out;
  }

  // The `count` of `options` closest to `target`, closest first (ties in CUPTI's order).
  static std::vector<std::string> closest(const std::vector<std::string>& options,
                                          const std::string& target, size_t count) {
    std::vector<std::pair<size_t, size_t>> ranked;
    for (size_t i = 0; i < options.size(); ++i) {
      ranked.emplace_back(edit_distance(target, options[i]), i);
    }
    const size_t n = std::min(count, ranked.size());
    std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(n),
                      ranked.end());
    std::vector<std::string> out;
    for (size_t k = 0; k < n; ++k) out.push_back(options[ranked[k].second]);
    return out;
  }

  const Api& api_;
  Host host_;
  std::vector<std::pair<std::string, CUpti_MetricType>> bases_;
  std::unordered_map<std::string, CUpti_MetricType> index_;
};

}  // namespace

Host make_host(const Api& a, const Target& t, const std::vector<uint8_t>& availability) {
  auto p = params<CUpti_Profiler_Host_Initialize_Params>(
      CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
  p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  p.pChipName = t.chip.c_str();
  p.pCounterAvailabilityImage = availability.empty() ? nullptr : availability.data();
  check(a.host_initialize, p, t);
  if (!p.pHostObject) {
    fail(ErrorKind::Device, "hardware counters: cuptiProfilerHostInitialize gave no object");
  }
  return Host(p.pHostObject, HostDeleter{a.host_deinitialize.call});
}

CUptiResult add_metrics(const Api& a, CUpti_Profiler_Host_Object* host,
                        std::vector<const char*>& names) {
  auto p = params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(
      CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
  p.pHostObject = host;
  p.ppMetricNames = names.data();
  p.numMetrics = names.size();
  return a.host_add_metrics.call(&p);
}

// The results by which CUPTI rejects a metric: a name the chip does not know
// (CUPTI_ERROR_INVALID_PARAMETER, whatever the header says), and one it knows but the context
// cannot collect, per the counter availability image (NVLink's and other device-level counters):
// CUPTI_ERROR_UNKNOWN, as seen on an H200 with CUPTI 13.0.
bool rejected_metric(CUptiResult r) {
  return r == CUPTI_ERROR_INVALID_PARAMETER || r == CUPTI_ERROR_INVALID_METRIC_NAME ||
         r == CUPTI_ERROR_NOT_SUPPORTED || r == CUPTI_ERROR_UNKNOWN;
}

// Which of `names` the chip counts. The host API's listings do not settle it (a base metric such
// as sm__throughput has properties yet cannot be collected without a rollup, and a listed metric
// may be unavailable to the context), so each name is added to a config of its own. One rejected
// name leaves a host object unusable (every later add fails with CUPTI_ERROR_UNKNOWN), so a fresh
// object follows each rejection; creating one costs about a millisecond once CUPTI has loaded the
// chip's tables.
std::vector<bool> probe_metrics(const Api& a, const Target& t,
                                const std::vector<uint8_t>& availability,
                                const std::vector<std::string>& names) {
  std::vector<bool> known(names.size(), false);
  bool any_known = false, any_unknown_error = false;
  Host scratch;
  for (size_t i = 0; i < names.size(); ++i) {
    if (!scratch) scratch = make_host(a, t, availability);
    std::vector<const char*> one{names[i].c_str()};
    const CUptiResult r = add_metrics(a, scratch.get(), one);
    if (r == CUPTI_SUCCESS) {
      known[i] = any_known = true;
    } else if (rejected_metric(r)) {
      any_unknown_error = any_unknown_error || r == CUPTI_ERROR_UNKNOWN;
      scratch.reset();
    } else {
      fail_cupti(r, a.host_add_metrics.name, t);
    }
  }
  if (!any_known && any_unknown_error) {
    Host check_host = make_host(a, t, availability);
    std::vector<const char*> one{kAlwaysCounted};
    const CUptiResult r = add_metrics(a, check_host.get(), one);
    if (r != CUPTI_SUCCESS) fail_cupti(r, a.host_add_metrics.name, t);
  }
  return known;
}

[[noreturn]] void fail_unknown(const Api& a, const Target& t,
                               const std::vector<uint8_t>& availability,
                               const std::vector<std::string>& unknown) {
  Catalog catalog(a, make_host(a, t, availability));
  std::string missing, uncollectable;
  size_t missing_count = 0;
  for (const std::string& name : unknown) {
    if (catalog.knows(name)) {
      uncollectable += (uncollectable.empty() ? "'" : ", '") + name + "'";
      continue;
    }
    std::string entry = "'" + name + "'";
    // Suggestions for the first few only: a long list of typos needs no more to be understood.
    if (missing_count < 3) {
      const std::vector<std::string> candidates = catalog.close_to(name, 8);
      const std::vector<bool> collectable = probe_metrics(a, t, availability, candidates);
      std::string close;
      for (size_t i = 0, shown = 0; i < candidates.size() && shown < 4; ++i) {
        if (!collectable[i]) continue;
        close += (close.empty() ? "" : ", ") + candidates[i];
        ++shown;
      }
      if (!close.empty()) entry += " (close: " + close + ")";
    }
    missing += (missing.empty() ? "" : "; ") + entry;
    ++missing_count;
  }
  std::string message;
  if (!missing.empty()) {
    message = fmt::format(
        "{} has no metric{} {} (names as Nsight Compute spells them: a base metric, a rollup and "
        "an optional submetric, e.g. dram__bytes_read.sum, "
        "sm__throughput.avg.pct_of_peak_sustained_elapsed)",
        t.chip, missing_count == 1 ? "" : "s", missing);
  }
  if (!uncollectable.empty()) {
    message += (message.empty() ? "" : "; ") +
               fmt::format(
                   "{} cannot count {} in a context's range (device-level counters such as "
                   "NVLink's and PCIe's, or counters another client holds)",
                   t.text(), uncollectable);
  }
  fail(ErrorKind::Value, "hardware counters: {}", message);
}

std::vector<uint8_t> config_image(const Api& a, const Target& t, CUpti_Profiler_Host_Object* host) {
  auto size = params<CUpti_Profiler_Host_GetConfigImageSize_Params>(
      CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
  size.pHostObject = host;
  check(a.host_config_image_size, size, t);
  std::vector<uint8_t> image(size.configImageSize);
  auto p = params<CUpti_Profiler_Host_GetConfigImage_Params>(
      CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
  p.pHostObject = host;
  p.configImageSize = image.size();
  p.pConfigImage = image.data();
  check(a.host_config_image, p, t);
  return image;
}

size_t passes_needed(const Api& a, const Target& t, std::vector<uint8_t>& config) {
  auto p = params<CUpti_Profiler_Host_GetNumOfPasses_Params>(
      CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
  p.configImageSize = config.size();
  p.pConfigImage = config.data();
  check(a.host_passes, p, t);
  return p.numOfPasses;
}

}  // namespace culua::detail::measure::cupti_counters

#endif
