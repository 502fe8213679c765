// measure/stats: the statistics of cu.bench (sample stddev, linearly interpolated percentiles,
// relative stddev) against values computed by hand and with numpy's definitions.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "measure/stats.hpp"

using namespace culua::detail::measure;
using Catch::Detail::Approx;

TEST_CASE("stats: mean, sample stddev and noise of a known sample", "[stats]") {
  const std::vector<double> x = {2, 4, 4, 4, 5, 5, 7, 9};
  CHECK(mean(x) == 5.0);
  // Sum of squared deviations 32, n - 1 = 7.
  CHECK(stddev(x) == Approx(std::sqrt(32.0 / 7.0)));
  CHECK(relative_stddev(x) == Approx(std::sqrt(32.0 / 7.0) / 5.0));
}

TEST_CASE("stats: percentiles interpolate linearly between closest ranks", "[stats]") {
  const std::vector<double> x = {15, 20, 35, 40, 50};  // unsorted input is sorted first
  const std::vector<double> shuffled = {40, 15, 50, 35, 20};
  CHECK(percentile(shuffled, 0.0) == 15);
  CHECK(percentile(shuffled, 1.0) == 50);
  CHECK(percentile(shuffled, 0.5) == 35);
  // numpy.percentile([15, 20, 35, 40, 50], [10, 40, 90]) = [17, 29, 46]
  CHECK(percentile(x, 0.1) == Approx(17.0));
  CHECK(percentile(x, 0.4) == Approx(29.0));
  CHECK(percentile(x, 0.9) == Approx(46.0));
  // An even count: the median is the mean of the two middle values.
  CHECK(median(std::vector<double>{4, 1, 3, 2}) == Approx(2.5));
  // Out-of-range p is clamped.
  CHECK(percentile(x, -1) == 15);
  CHECK(percentile(x, 2) == 50);
}

TEST_CASE("stats: summarize", "[stats]") {
  std::vector<double> x;
  for (int i = 1; i <= 11; ++i) x.push_back(i);  // 1..11
  const Summary s = summarize(x);
  CHECK(s.count == 11);
  CHECK(s.min == 1);
  CHECK(s.max == 11);
  CHECK(s.median == 6);
  CHECK(s.mean == Approx(6));
  CHECK(s.p10 == Approx(2));                   // h = 0.1 * 10 = 1: the second value
  CHECK(s.p90 == Approx(10));                  // h = 9
  CHECK(s.stddev == Approx(std::sqrt(11.0)));  // sum of squares 110, / 10
  CHECK(s.noise == Approx(std::sqrt(11.0) / 6));
  CHECK(s.min <= s.p10);
  CHECK(s.p10 <= s.median);
  CHECK(s.median <= s.p90);
  CHECK(s.p90 <= s.max);
}

TEST_CASE("stats: degenerate samples", "[stats]") {
  const std::vector<double> empty;
  const Summary e = summarize(empty);
  CHECK(e.count == 0);
  CHECK(std::isnan(e.median));
  CHECK(std::isnan(e.noise));
  CHECK(std::isnan(mean(empty)));

  const std::vector<double> one = {3.5};
  const Summary o = summarize(one);
  CHECK(o.min == 3.5);
  CHECK(o.median == 3.5);
  CHECK(o.p10 == 3.5);
  CHECK(o.p90 == 3.5);
  CHECK(o.stddev == 0);
  CHECK(o.noise == 0);

  const std::vector<double> same = {2, 2, 2};
  CHECK(relative_stddev(same) == 0);
  const std::vector<double> zeros = {0, 0};
  CHECK(relative_stddev(zeros) == 0);
  const std::vector<double> around_zero = {-1, 1};
  CHECK(std::isinf(relative_stddev(around_zero)));
}

TEST_CASE("stats: RunningStats agrees with the batch formulas", "[stats]") {
  std::mt19937_64 rng(42);
  std::normal_distribution<double> dist(1.5, 0.01);
  std::vector<double> x;
  RunningStats r;
  CHECK(r.count() == 0);
  CHECK(std::isnan(r.mean()));
  for (int i = 0; i < 10000; ++i) {
    const double v = dist(rng);
    x.push_back(v);
    r.add(v);
    if (i == 0) {
      CHECK(r.stddev() == 0);
      CHECK(r.noise() == 0);
    }
    if (i == 9 || i == 999 || i == 9999) {
      CHECK(r.count() == i + 1);
      CHECK(r.mean() == Approx(mean(x)).epsilon(1e-12));
      CHECK(r.stddev() == Approx(stddev(x)).epsilon(1e-9));
      CHECK(r.noise() == Approx(relative_stddev(x)).epsilon(1e-9));
    }
  }
  double sum = 0;
  for (double v : x) sum += v;
  CHECK(r.sum() == Approx(sum));
  // A large offset does not destroy the variance (the naive sum-of-squares formula would).
  RunningStats big;
  for (double v : {1e9 + 4, 1e9 + 7, 1e9 + 13, 1e9 + 16}) big.add(v);
  CHECK(big.stddev() == Approx(std::sqrt(30.0)));
}
