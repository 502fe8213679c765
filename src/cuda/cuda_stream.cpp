#include "cuda/cuda_stream.hpp"

namespace culua::detail::cuda {

CudaStream::CudaStream(cudaStream_t s, bool owned, int device, StreamPriority p, uint64_t id,
                       std::shared_ptr<Health> health)
    : Stream(device, p, id), stream_(s), owned_(owned), health_(std::move(health)) {}

CudaStream::~CudaStream() {
  // cudaStreamDestroy returns at once; queued work still completes.
  if (owned_) cudaStreamDestroy(stream_);
}

void CudaStream::synchronize() {
  health_->check_usable();
  CULUA_CUDA_CHECK(*health_, cudaStreamSynchronize(stream_));
}

bool CudaStream::query() {
  health_->check_usable();
  const cudaError_t e = cudaStreamQuery(stream_);
  if (e == cudaErrorNotReady) {
    cudaGetLastError();
    return false;
  }
  CULUA_CUDA_CHECK(*health_, e);
  return true;
}

void CudaStream::wait(Event& e) {
  health_->check_usable();
  if (!e.recorded()) return;
  CULUA_CUDA_CHECK(*health_, cudaStreamWaitEvent(stream_, static_cast<CudaEvent&>(e).get(), 0));
}

CudaEvent::CudaEvent(int device, bool timing, std::shared_ptr<Health> health)
    : Event(device, timing), health_(std::move(health)) {
  health_->check_usable();
  CULUA_CUDA_CHECK(*health_, cudaEventCreateWithFlags(
                                 &event_, timing ? cudaEventDefault : cudaEventDisableTiming));
}

CudaEvent::~CudaEvent() {
  if (event_) cudaEventDestroy(event_);
}

void CudaEvent::do_record(Stream& s) {
  health_->check_usable();
  CULUA_CUDA_CHECK(*health_, cudaEventRecord(event_, static_cast<CudaStream&>(s).get()));
}

void CudaEvent::do_synchronize() {
  health_->check_usable();
  CULUA_CUDA_CHECK(*health_, cudaEventSynchronize(event_));
}

bool CudaEvent::do_query() {
  health_->check_usable();
  const cudaError_t e = cudaEventQuery(event_);
  if (e == cudaErrorNotReady) {
    cudaGetLastError();
    return false;
  }
  CULUA_CUDA_CHECK(*health_, e);
  return true;
}

double CudaEvent::do_elapsed_ms(Event& later) {
  auto& other = static_cast<CudaEvent&>(later);
  do_synchronize();
  other.do_synchronize();
  float ms = 0;
  CULUA_CUDA_CHECK(*health_, cudaEventElapsedTime(&ms, event_, other.event_));
  return ms;
}

}  // namespace culua::detail::cuda
