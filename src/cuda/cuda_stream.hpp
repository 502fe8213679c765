// CUDA streams and events behind the core interface.
#pragma once

#include <cuda_runtime.h>

#include <memory>

#include "core/stream.hpp"
#include "cuda/cuda_check.hpp"

namespace culua::detail::cuda {

class CudaStream final : public Stream {
 public:
  // Takes ownership of `s` when `owned` (destroyed without blocking when the handle goes).
  CudaStream(cudaStream_t s, bool owned, int device, StreamPriority p, uint64_t id,
             std::shared_ptr<Health> health);
  ~CudaStream() override;

  cudaStream_t get() const { return stream_; }
  void synchronize() override;
  bool query() override;
  void wait(Event& e) override;
  void* native_handle() const override { return stream_; }

 private:
  cudaStream_t stream_;
  bool owned_;
  std::shared_ptr<Health> health_;
};

class CudaEvent final : public Event {
 public:
  CudaEvent(int device, bool timing, std::shared_ptr<Health> health);
  ~CudaEvent() override;
  cudaEvent_t get() const { return event_; }

 protected:
  void do_record(Stream& s) override;
  void do_synchronize() override;
  bool do_query() override;
  double do_elapsed_ms(Event& later) override;

 private:
  cudaEvent_t event_ = nullptr;
  std::shared_ptr<Health> health_;
};

}  // namespace culua::detail::cuda
