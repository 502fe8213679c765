// The text that cu.elementwise and cu.reduction sources with complex operands start with, embedded
// at build time (cmake/EmbedPrelude.cmake): the std shims of the fused kernels
// (src/fuse/nvrtc/std.cuh), core/model/numeric.hpp, kernels/real_math.cuh,
// kernels/complex_math.cuh and rtc/nvrtc/complex.cuh, which defines cuda::std::complex over
// culua's complex element. NVRTC compiles it in a few milliseconds, where libcu++'s
// <cuda/std/complex> took over a second. Its unannotated constexpr shims need NVRTC's
// -default-device (template_request passes it).
#pragma once

namespace culua::detail::rtc {

extern const char kComplexPrelude[];
// The prelude's SHA-256 (hex): stands for it in the kernel cache's key (template_key_source).
extern const char kComplexPreludeHash[];

}  // namespace culua::detail::rtc
