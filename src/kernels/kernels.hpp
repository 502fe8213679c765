// Entry points of the built-in kernels. The element functors behind them (functors.cuh) are
// written once; host:: runs them on the calling thread, cuda:: launches them on a stream.
#pragma once

#include "core/backend/backend.hpp"
#include "core/backend/elementwise_call.hpp"
#include "core/model/layout.hpp"
#include "core/model/numeric.hpp"

namespace culua::detail {
struct ElementwiseCall;
struct ReduceCall;
struct ScanCall;
struct RandomCall;
struct GatherCall;
struct SortCall;
}  // namespace culua::detail

namespace culua::detail::kernels {

namespace host {
void fill(const StridedView& dst, const void* value);
void copy_cast(const StridedView& dst, const StridedView& src);
void sequence(const StridedView& dst, const SequenceSpec& spec);
void elementwise(const ElementwiseCall& c);  // elementwise.cpp
void reduce(const ReduceCall& c);            // reduce_host.cpp
void scan(const ScanCall& c);                // scan_host.cpp
void random(const RandomCall& c);            // random_host.cpp
void gather(const GatherCall& c);            // gather_host.cpp
void sort(const SortCall& c);                // sort_host.cpp
// a op b for complex scalars (add, sub, mul, div, pow), by the array functors: a cu.complex
// scalar computes exactly as a one-element complex128 array does.
complex128 complex_binary(BinaryOp op, complex128 a, complex128 b);  // elementwise_host.cpp
}  // namespace host

#if defined(CULUA_HAVE_CUDA)
namespace cuda {
// A stream's own scratch memory (cuda/cuda_stream.hpp) for the reductions: kStreamCounters block
// counters, zero whenever no kernel runs (each kernel that counts sets its counters back to 0),
// then room for partial results. Work on one stream runs in order, so one buffer per stream is
// enough; a graph being captured gets none (its kernels may run beside the stream's later work).
inline constexpr size_t kStreamCounters = 1024;
inline constexpr size_t kStreamScratchBytes = size_t{64} << 10;

struct Launch {
  void* stream;  // cudaStream_t
  int sm_count;
  void* pool;  // cudaMemPool_t of the device, for stream-ordered scratch memory
  // The stream's scratch (kStreamScratchBytes, counters first), or null: allocate per launch.
  void* scratch = nullptr;
};
// Each returns the cudaError_t of the launch (as int, so this header needs no CUDA headers).
int fill(const StridedView& dst, const void* value, const Launch& l);
int copy_cast(const StridedView& dst, const StridedView& src, const Launch& l);
int sequence(const StridedView& dst, const SequenceSpec& spec, const Launch& l);
int sleep(double seconds, const Launch& l);
int elementwise(const ElementwiseCall& c, const Launch& l);  // elementwise_*.cu
int reduce(const ReduceCall& c, const Launch& l);            // reduce_cuda.cu
int scan(const ScanCall& c, const Launch& l);                // scan_cuda.cu
int random(const RandomCall& c, const Launch& l);            // random_cuda.cu
int gather(const GatherCall& c, const Launch& l);            // gather_cuda.cu
int sort(const SortCall& c, const Launch& l);                // sort_cuda.cu
// Writes through an invalid address: a sticky error, for testing error handling.
int fault(const Launch& l);
}  // namespace cuda
#endif

}  // namespace culua::detail::kernels
