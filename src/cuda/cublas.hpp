// cuBLAS for the CUDA backend: one handle per device, created on first use on that device and
// bound to the caller's stream for each call. The handles keep cuBLAS's default per-stream
// workspaces (a workspace of our own shared by two streams would race) and the default,
// deterministic atomics mode; f32 products use CUBLAS_COMPUTE_32F (no TF32) unless a call asks for
// TF32.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "core/model/stream.hpp"
#include "cuda/scoped.hpp"

namespace culua::detail {
struct MatmulCall;
struct DotCall;
}  // namespace culua::detail

namespace culua::detail::cuda {

struct Health;

class Cublas {
 public:
  explicit Cublas(std::shared_ptr<Health> health);
  ~Cublas();  // destroys the handles, each on its device (never throws)
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;

  // Queued on `s`; the caller has made the stream's device current. With a `workspace` (under
  // graph capture) cuBLAS uses it instead of its own, for this call only.
  void matmul(const MatmulCall& c, Stream& s, void* workspace = nullptr, size_t bytes = 0);
  // Writes the result to device memory (CUBLAS_POINTER_MODE_DEVICE): no synchronization.
  void dot(const DotCall& c, Stream& s, void* workspace = nullptr, size_t bytes = 0);

 private:
  // The device's handle, bound to `s` (which resets its workspace to cuBLAS's own), then to
  // `workspace` when one is given. The binding is kept between calls: cublasSetStream is called
  // only when the stream or the workspace changes (it costs microseconds, as much as a small
  // product on the GPU, when matmuls are queued back to back).
  cublasContext* handle(Stream& s, void* workspace, size_t bytes);

  struct Binding {
    void* stream = nullptr;     // the cudaStream_t the handle is bound to
    void* workspace = nullptr;  // a workspace of culua's set on it, else cuBLAS's own
    bool bound = false;
  };

  std::shared_ptr<Health> health_;
  std::mutex mutex_;
  std::vector<UniqueCublas> handles_;  // per device
  std::vector<Binding> bindings_;      // per device
};

}  // namespace culua::detail::cuda
