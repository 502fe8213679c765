#include "cuda/cuda_stream.hpp"

namespace culua::detail::cuda {

StreamRegistry::~StreamRegistry() {
  for (const Entry& e : entries_) {
    if (e.retired) cudaStreamDestroy(e.stream);
  }
}

void StreamRegistry::add(cudaStream_t s, int device) {
  std::lock_guard lock(m_);
  entries_.push_back(Entry{s, device, false});
}

void StreamRegistry::retire(cudaStream_t s, bool owned) noexcept {
  std::lock_guard lock(m_);
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (entries_[i].stream != s) continue;
    if (owned && cudaStreamQuery(s) == cudaErrorNotReady) {
      cudaGetLastError();
      entries_[i].retired = true;
      return;
    }
    cudaGetLastError();
    if (owned) cudaStreamDestroy(s);
    entries_[i] = entries_.back();
    entries_.pop_back();
    return;
  }
  if (owned) cudaStreamDestroy(s);
}

bool StreamRegistry::device_idle(int device, Health& health) {
  std::lock_guard lock(m_);
  for (size_t i = 0; i < entries_.size();) {
    Entry& e = entries_[i];
    if (e.device != device) {
      ++i;
      continue;
    }
    const cudaError_t status = cudaStreamQuery(e.stream);
    if (status == cudaErrorNotReady) {
      cudaGetLastError();
      return false;
    }
    health.check(status, "cudaStreamQuery", __FILE__, __LINE__);
    if (e.retired) {
      cudaStreamDestroy(e.stream);
      e = entries_.back();
      entries_.pop_back();
    } else {
      ++i;
    }
  }
  return true;
}

int StreamRegistry::busy_streams() noexcept {
  std::lock_guard lock(m_);
  int busy = 0;
  for (const Entry& e : entries_) {
    if (cudaStreamQuery(e.stream) == cudaErrorNotReady) ++busy;
    cudaGetLastError();
  }
  return busy;
}

void StreamDestroyer::operator()(cudaStream_t s) const noexcept {
  RelaxedCaptureMode relaxed;
  cudaStreamDestroy(s);
}

CudaStream::CudaStream(cudaStream_t s, bool owned, int device, StreamPriority p, uint64_t id,
                       std::shared_ptr<Health> health, std::shared_ptr<StreamRegistry> registry)
    : Stream(device, p, id),
      stream_(s),
      owned_(owned),
      health_(std::move(health)),
      registry_(std::move(registry)) {
  if (registry_) registry_->add(stream_, device);
}

CudaStream::~CudaStream() {
  RelaxedCaptureMode relaxed;
  // Neither blocks: queued work still completes.
  if (registry_) {
    registry_->retire(stream_, owned_);
  } else if (owned_) {
    cudaStreamDestroy(stream_);
  }
}

void CudaStream::do_synchronize() {
  health_->check_usable();
  CULUA_CUDA_CHECK(*health_, cudaStreamSynchronize(stream_));
}

bool CudaStream::do_query() {
  health_->check_usable();
  const cudaError_t e = cudaStreamQuery(stream_);
  if (e == cudaErrorNotReady) {
    cudaGetLastError();
    return false;
  }
  CULUA_CUDA_CHECK(*health_, e);
  return true;
}

void CudaStream::do_wait(Event& e) {
  health_->check_usable();
  CULUA_CUDA_CHECK(*health_, cudaStreamWaitEvent(stream_, static_cast<CudaEvent&>(e).get(), 0));
}

CudaEvent::CudaEvent(int device, bool timing, std::shared_ptr<Health> health)
    : Event(device, timing), health_(std::move(health)) {
  health_->check_usable();
  RelaxedCaptureMode relaxed;
  CULUA_CUDA_CHECK(*health_, cudaEventCreateWithFlags(
                                 &event_, timing ? cudaEventDefault : cudaEventDisableTiming));
}

CudaEvent::~CudaEvent() {
  RelaxedCaptureMode relaxed;
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
