// cuBLAS for the CUDA backend: one handle per device, created on first use.
#pragma once

#include <memory>

#include "core/stream.hpp"

namespace culua {
struct MatmulCall;
struct DotCall;
}  // namespace culua

namespace culua::cuda {

struct Health;

class Cublas {
 public:
  explicit Cublas(std::shared_ptr<Health> health);
  ~Cublas();
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;

  // Queued on `s`; the caller has made the stream's device current.
  void matmul(const MatmulCall& c, Stream& s);
  void dot(const DotCall& c, Stream& s);

 private:
  std::shared_ptr<Health> health_;
};

}  // namespace culua::cuda
