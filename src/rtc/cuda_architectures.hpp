// The CUDA architectures that the built-in kernels were compiled for (CMake's list, from the
// build's generated/build/cuda_architectures.hpp), and whether they hold code that a given GPU can
// run: machine code (SASS) of its own architecture or PTX that its driver compiles. Pure functions
// of the list, so that they are tested without a GPU; the CUDA backend checks each GPU it opens,
// and `culua -v` prints the list.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace culua::detail::rtc {

// One entry of the list: `NN[a|f][-real|-virtual]` (90-real: sm_90; 90-virtual: compute_90; 90:
// both). An entry that is not a number (all, all-major, native) keeps its text and number 0.
struct CudaArchitecture {
  int number = 0;     // 90 for compute capability 9.0, 120 for 12.0
  char variant = 0;   // 'a' (that exact GPU only), 'f' (a family: the same major), or 0
  bool sass = false;  // machine code, sm_NN
  bool ptx = false;   // PTX, compute_NN
  std::string text;   // the entry as written
};

// Parses CMake's list; entries are separated by ',' or ';'.
std::vector<CudaArchitecture> parse_cuda_architectures(std::string_view list);

// This build's list (empty without CUDA).
const std::vector<CudaArchitecture>& built_cuda_architectures();

// "sm_90, compute_90", as nvcc names the images; "none" for an empty list.
std::string describe_cuda_architectures(const std::vector<CudaArchitecture>& archs);

// Whether a GPU of compute capability major.minor runs code of the list: machine code of its major
// version and a minor not above its own (sm_80 runs on 8.6; sm_90a only on 9.0), or PTX of a
// compute capability not above its own (compute_90 runs on 9.0, 10.0 and 12.0). A list holding an
// entry that is not a number (native, all) is taken to cover every GPU.
bool cuda_architectures_cover(const std::vector<CudaArchitecture>& archs, int major, int minor);

}  // namespace culua::detail::rtc
