// Runner of the GPU tests: exits 77 (ctest: skipped) when no CUDA device is usable.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdio>
#include <string>

#include "cuda/cuda_backend.hpp"

int main(int argc, char** argv) {
  std::string why;
  if (!culua::detail::cuda::device_available(&why)) {
    std::printf("no CUDA device (%s): skipping the GPU tests\n", why.c_str());
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
