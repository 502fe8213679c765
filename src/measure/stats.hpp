// Descriptive statistics of timing samples (pure C++; no device, no Lua).
//
// Definitions:
// - stddev is the sample standard deviation (divides by n - 1); 0 for fewer than two values.
// - noise is the relative standard deviation stddev / mean (a fraction: 0.01 = 1%); 0 when all
//   values are equal, +inf when the mean is 0 but the values differ.
// - percentile(p) interpolates linearly between the two closest ranks of the sorted values: with
//   h = p * (n - 1) (p in [0, 1], ranks from 0), it is x[floor(h)] + (h - floor(h)) *
//   (x[floor(h) + 1] - x[floor(h)]). This is numpy's default ("linear", Hyndman & Fan type 7):
//   percentile(0) is the minimum, percentile(1) the maximum and percentile(0.5) the median.
// Empty inputs give NaN (count 0).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace culua::detail::measure {

struct Summary {
  int64_t count = 0;
  double min = 0;
  double max = 0;
  double median = 0;
  double mean = 0;
  double stddev = 0;
  double p10 = 0;
  double p90 = 0;
  double noise = 0;  // stddev / mean
};

double mean(std::span<const double> x);
double stddev(std::span<const double> x);  // sample standard deviation
double relative_stddev(std::span<const double> x);
// p in [0, 1]; `sorted` must be in ascending order.
double percentile_sorted(std::span<const double> sorted, double p);
double percentile(std::span<const double> x, double p);  // sorts a copy
double median(std::span<const double> x);
Summary summarize(std::span<const double> x);

// Mean and sample variance updated one value at a time (Welford's algorithm), so a stopping rule
// can look at the noise after every sample without going over all of them again.
class RunningStats {
 public:
  void add(double x);
  int64_t count() const { return n_; }
  double mean() const;
  double stddev() const;
  double noise() const;  // stddev / mean, with the conventions above
  double sum() const { return sum_; }

 private:
  int64_t n_ = 0;
  double mean_ = 0;
  double m2_ = 0;
  double sum_ = 0;
};

}  // namespace culua::detail::measure
