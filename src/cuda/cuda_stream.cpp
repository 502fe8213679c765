#include "cuda/cuda_stream.hpp"

#include "kernels/kernels.hpp"

namespace culua::detail::cuda {

StreamRegistry::~StreamRegistry() {
  for (const Entry& e : entries_) {
    if (e.retired) DestroyStream{e.device}(e.stream);
  }
}

void StreamRegistry::add(cudaStream_t s, int device) {
  std::lock_guard lock(m_);
  entries_.push_back(Entry{s, device, false});
}

void StreamRegistry::retire(cudaStream_t s, int device, bool owned) noexcept {
  std::lock_guard lock(m_);
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (entries_[i].stream != s) continue;
    if (owned) {
      const DeviceScope scope(device, std::nothrow);
      if (scope.ok() && cudaStreamQuery(s) == cudaErrorNotReady) {
        cudaGetLastError();
        entries_[i].retired = true;
        return;
      }
      if (scope.ok()) cudaGetLastError();
      DestroyStream{device}(s);
    }
    entries_[i] = entries_.back();
    entries_.pop_back();
    return;
  }
  if (owned) DestroyStream{device}(s);
}

bool StreamRegistry::device_idle(int device, Health& health) {
  const DeviceScope scope(device, health);
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
      DestroyStream{e.device}(e.stream);
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
    const DeviceScope scope(e.device, std::nothrow);
    if (!scope.ok()) continue;
    if (cudaStreamQuery(e.stream) == cudaErrorNotReady) ++busy;
    cudaGetLastError();
  }
  return busy;
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

// Neither path blocks: queued work still completes.
CudaStream::~CudaStream() {
  if (!health_->poisoned.load()) {
    const DeviceScope scope(device(), std::nothrow);
    if (scope.ok()) {
      if (scratch_ && cudaFreeAsync(scratch_, stream_) != cudaSuccess) cudaGetLastError();
      for (const std::vector<void*>& kept : small_) {
        for (void* p : kept) {
          if (cudaFreeAsync(p, stream_) != cudaSuccess) cudaGetLastError();
        }
      }
    }
  }
  if (registry_) {
    registry_->retire(stream_, device(), owned_);
  } else if (owned_) {
    DestroyStream{device()}(stream_);
  }
}

void* CudaStream::take_small(size_t bytes) {
  if (bytes == 0 || bytes > kSmallMax) return nullptr;
  std::lock_guard lock(scratch_mutex_);
  std::vector<void*>& kept = small_[(bytes - 1) / kSmallGranule];
  if (kept.empty()) return nullptr;
  void* p = kept.back();
  kept.pop_back();
  return p;
}

bool CudaStream::keep_small(void* p, size_t bytes) {
  if (bytes == 0 || bytes > kSmallMax) return false;
  std::lock_guard lock(scratch_mutex_);
  std::vector<void*>& kept = small_[(bytes - 1) / kSmallGranule];
  if (kept.size() >= kSmallKept) return false;
  if (kept.capacity() == 0) kept.reserve(kSmallKept);
  kept.push_back(p);
  return true;
}

void* CudaStream::scratch(cudaMemPool_t pool) {
  std::lock_guard lock(scratch_mutex_);
  if (scratch_ || !pool) return scratch_;
  // The caller holds a DeviceScope for this stream's device.
  void* p = nullptr;
  if (cudaMallocFromPoolAsync(&p, kernels::cuda::kStreamScratchBytes, pool, stream_) !=
      cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  if (cudaMemsetAsync(p, 0, kernels::cuda::kStreamCounters * sizeof(unsigned), stream_) !=
      cudaSuccess) {
    cudaGetLastError();
    cudaFreeAsync(p, stream_);
    return nullptr;
  }
  scratch_ = p;
  return scratch_;
}

void CudaStream::do_synchronize() {
  health_->check_usable();
  const DeviceScope scope(device(), *health_);
  CULUA_CUDA_CHECK(*health_, cudaStreamSynchronize(stream_));
}

bool CudaStream::do_query() {
  health_->check_usable();
  const DeviceScope scope(device(), *health_);
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
  const DeviceScope scope(device(), *health_);
  CULUA_CUDA_CHECK(*health_, cudaStreamWaitEvent(stream_, static_cast<CudaEvent&>(e).get(), 0));
}

CudaEvent::CudaEvent(int device, bool timing, std::shared_ptr<Health> health)
    : Event(device, timing), health_(std::move(health)) {
  health_->check_usable();
  const DeviceScope scope(device, *health_);
  const RelaxedCaptureMode relaxed;
  cudaEvent_t e = nullptr;
  CULUA_CUDA_CHECK(
      *health_, cudaEventCreateWithFlags(&e, timing ? cudaEventDefault : cudaEventDisableTiming));
  event_ = UniqueEvent(e, DestroyEvent{device});
}

void CudaEvent::do_record(Stream& s) {
  health_->check_usable();
  const DeviceScope scope(s.device(), *health_);
  CULUA_CUDA_CHECK(*health_, cudaEventRecord(event_.get(), static_cast<CudaStream&>(s).get()));
}

void CudaEvent::do_synchronize() {
  health_->check_usable();
  const DeviceScope scope(device(), *health_);
  CULUA_CUDA_CHECK(*health_, cudaEventSynchronize(event_.get()));
}

bool CudaEvent::do_query() {
  health_->check_usable();
  const DeviceScope scope(device(), *health_);
  const cudaError_t e = cudaEventQuery(event_.get());
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
  const DeviceScope scope(device(), *health_);
  float ms = 0;
  CULUA_CUDA_CHECK(*health_, cudaEventElapsedTime(&ms, event_.get(), other.event_.get()));
  return ms;
}

}  // namespace culua::detail::cuda
