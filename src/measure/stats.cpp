#include "measure/stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace culua::detail::measure {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double relative(double sd, double m) {
  if (std::isnan(sd) || std::isnan(m)) return kNaN;
  if (sd == 0) return 0;
  if (m == 0) return std::numeric_limits<double>::infinity();
  return sd / std::abs(m);
}

}  // namespace

double mean(std::span<const double> x) {
  if (x.empty()) return kNaN;
  double sum = 0;
  for (double v : x) sum += v;
  return sum / static_cast<double>(x.size());
}

double stddev(std::span<const double> x) {
  if (x.empty()) return kNaN;
  if (x.size() < 2) return 0;
  const double m = mean(x);
  double ss = 0;
  for (double v : x) ss += (v - m) * (v - m);
  return std::sqrt(ss / static_cast<double>(x.size() - 1));
}

double relative_stddev(std::span<const double> x) {
  return relative(stddev(x), mean(x));
}

double percentile_sorted(std::span<const double> sorted, double p) {
  if (sorted.empty() || std::isnan(p)) return kNaN;
  p = std::clamp(p, 0.0, 1.0);
  const double h = p * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(h));
  if (lo + 1 >= sorted.size()) return sorted.back();
  const double frac = h - static_cast<double>(lo);
  return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

double percentile(std::span<const double> x, double p) {
  std::vector<double> sorted(x.begin(), x.end());
  std::sort(sorted.begin(), sorted.end());
  return percentile_sorted(sorted, p);
}

double median(std::span<const double> x) {
  return percentile(x, 0.5);
}

Summary summarize(std::span<const double> x) {
  Summary s;
  s.count = static_cast<int64_t>(x.size());
  if (x.empty()) {
    s.min = s.max = s.median = s.mean = s.stddev = s.p10 = s.p90 = s.noise = kNaN;
    return s;
  }
  std::vector<double> sorted(x.begin(), x.end());
  std::sort(sorted.begin(), sorted.end());
  s.min = sorted.front();
  s.max = sorted.back();
  s.median = percentile_sorted(sorted, 0.5);
  s.p10 = percentile_sorted(sorted, 0.1);
  s.p90 = percentile_sorted(sorted, 0.9);
  s.mean = mean(x);
  s.stddev = stddev(x);
  s.noise = relative(s.stddev, s.mean);
  return s;
}

void RunningStats::add(double x) {
  ++n_;
  sum_ += x;
  const double delta = x - mean_;
  mean_ += delta / static_cast<double>(n_);
  m2_ += delta * (x - mean_);
}

double RunningStats::mean() const {
  return n_ == 0 ? kNaN : mean_;
}

double RunningStats::stddev() const {
  if (n_ == 0) return kNaN;
  if (n_ < 2) return 0;
  return std::sqrt(std::max(0.0, m2_) / static_cast<double>(n_ - 1));
}

double RunningStats::noise() const {
  return relative(stddev(), mean());
}

}  // namespace culua::detail::measure
