// The architectures of the built-in kernels (rtc/cuda_architectures.hpp): CMake's list read, named
// as nvcc names the images, and the decision the CUDA backend takes when it opens a GPU: whether
// the binary holds code that GPU runs. No GPU needed.
#include <catch2/catch.hpp>

#include <string>

#include "rtc/cuda_architectures.hpp"

using namespace culua::detail;

namespace {

bool covers(const std::string& list, int major, int minor) {
  return rtc::cuda_architectures_cover(rtc::parse_cuda_architectures(list), major, minor);
}

std::string names(const std::string& list) {
  return rtc::describe_cuda_architectures(rtc::parse_cuda_architectures(list));
}

}  // namespace

TEST_CASE("cuda architectures: CMake's list, named as nvcc's images", "[rtc][architectures]") {
  CHECK(names("90-real") == "sm_90");
  CHECK(names("90-virtual") == "compute_90");
  CHECK(names("90") == "sm_90, compute_90");
  CHECK(names("80-real,90-real,100-real,100-virtual") == "sm_80, sm_90, sm_100, compute_100");
  CHECK(names("80-real;90a-real") == "sm_80, sm_90a");
  CHECK(names(" 120f-real , native") == "sm_120f, native");
  CHECK(names("") == "none");
  CHECK(rtc::parse_cuda_architectures("").empty());
  const auto archs = rtc::parse_cuda_architectures("86-real");
  REQUIRE(archs.size() == 1);
  CHECK(archs[0].number == 86);
  CHECK(archs[0].sass);
  CHECK_FALSE(archs[0].ptx);
}

TEST_CASE("cuda architectures: machine code runs on its major version, minor not above",
          "[rtc][architectures]") {
  CHECK(covers("90-real", 9, 0));
  CHECK_FALSE(covers("90-real", 8, 0));
  CHECK_FALSE(covers("90-real", 10, 0));  // Blackwell does not run Hopper's machine code
  CHECK(covers("80-real", 8, 6));         // sm_80 runs on 8.6 and 8.9
  CHECK(covers("80-real", 8, 9));
  CHECK_FALSE(covers("86-real", 8, 0));
  CHECK(covers("90a-real", 9, 0));
  CHECK_FALSE(covers("90a-real", 9, 1));  // arch-specific: that GPU only
  CHECK(covers("100f-real", 10, 3));      // a family: its later members
  CHECK_FALSE(covers("100f-real", 12, 0));
}

TEST_CASE("cuda architectures: PTX runs on its compute capability and every later one",
          "[rtc][architectures]") {
  CHECK(covers("90-virtual", 9, 0));
  CHECK(covers("90-virtual", 10, 0));
  CHECK(covers("90-virtual", 12, 0));
  CHECK_FALSE(covers("90-virtual", 8, 9));
  CHECK(covers("90", 12, 1));  // plain: machine code and PTX
  CHECK_FALSE(covers("90a-virtual", 10, 0));
  CHECK(covers("100f-virtual", 10, 3));
  CHECK_FALSE(covers("100f-virtual", 12, 0));
  // A distribution build (-DCULUA_CUDA_DIST_ARCHS="80;90;100"): every GPU from 8.0 on.
  const std::string dist = "80-real,90-real,100-real,100-virtual";
  CHECK(covers(dist, 8, 0));
  CHECK(covers(dist, 8, 6));
  CHECK(covers(dist, 9, 0));
  CHECK(covers(dist, 10, 0));
  CHECK(covers(dist, 12, 0));
  CHECK_FALSE(covers(dist, 7, 5));
}

TEST_CASE("cuda architectures: no list covers nothing, an unknown entry covers all",
          "[rtc][architectures]") {
  CHECK_FALSE(covers("", 9, 0));
  CHECK(covers("native", 7, 5));
  CHECK(covers("all-major", 12, 0));
}
