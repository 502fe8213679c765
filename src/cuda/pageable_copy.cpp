#include "cuda/pageable_copy.hpp"

#include <algorithm>
#include <cstring>

namespace culua::detail::cuda {

namespace {

// Lanes: the calling thread and workers, up to 8 and half the hardware threads. Host memcpy from
// one thread reaches 8-12 GB/s; a few lanes keep a PCIe 5 link busy.
size_t lane_count() {
  const unsigned hw = std::thread::hardware_concurrency();
  return std::clamp<size_t>(hw / 2, 1, 8);
}

}  // namespace

PageableCopier::PageableCopier(std::shared_ptr<Health> health)
    : health_(std::move(health)), lanes_(lane_count()), failures_(lanes_.size()) {}

PageableCopier::~PageableCopier() {
  {
    std::lock_guard lock(m_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : threads_) t.join();
}

PageableCopier::DeviceLane* PageableCopier::device_lane(Lane& lane, int device,
                                                        Failure& failure) noexcept {
  auto fail_with = [&](cudaError_t e, const char* call) -> DeviceLane* {
    failure = {e, call};
    return nullptr;
  };
  const auto d = static_cast<size_t>(device);
  if (lane.devices.size() <= d) lane.devices.resize(d + 1);
  DeviceLane& dl = lane.devices[d];
  if (!dl.stream) {
    cudaStream_t s = nullptr;
    cudaError_t e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    if (e != cudaSuccess) return fail_with(e, "cudaStreamCreateWithFlags");
    dl.stream = UniqueStream(s, DestroyStream{device});
  }
  for (UniqueEvent& done : dl.done) {
    if (done) continue;
    cudaEvent_t ev = nullptr;
    const cudaError_t e = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
    if (e != cudaSuccess) return fail_with(e, "cudaEventCreateWithFlags");
    done = UniqueEvent(ev, DestroyEvent{device});
  }
  for (UniquePinned& slot : lane.slot) {
    if (slot) continue;
    void* p = nullptr;
    const cudaError_t e = cudaHostAlloc(&p, kChunk, cudaHostAllocPortable);
    if (e != cudaSuccess) return fail_with(e, "cudaHostAlloc");
    slot = UniquePinned(p, FreePinned{device});
  }
  return &dl;
}

void PageableCopier::run_lane(size_t index, const Job& job, Failure& failure) noexcept {
  auto check = [&](cudaError_t e, const char* call) {
    if (e != cudaSuccess && failure.error == cudaSuccess) failure = {e, call};
    return e == cudaSuccess;
  };
  // Lane 0 runs on the caller's thread: its current device is given back.
  const DeviceScope scope(job.device, std::nothrow);
  if (!scope.ok()) {
    check(cudaErrorInvalidDevice, "making the device current (cuCtxSetCurrent)");
    return;
  }
  Lane& lane = lanes_[index];
  DeviceLane* dl = device_lane(lane, job.device, failure);
  if (!dl) return;
  cudaStream_t stream = dl->stream.get();
  if (!check(cudaStreamWaitEvent(stream, job.start, 0), "cudaStreamWaitEvent")) return;

  // This lane's chunks: index, index + used, index + 2 used, ...
  const size_t mine = (job.chunks - index + job.used - 1) / job.used;
  auto offset = [&](size_t i) { return (index + i * job.used) * job.chunk; };
  auto length = [&](size_t i) { return std::min(job.chunk, job.bytes - offset(i)); };
  bool ok = true;
  if (job.to_device) {
    bool pending[2] = {false, false};
    for (size_t i = 0; i < mine && ok; ++i) {
      const size_t k = i & 1;
      if (pending[k]) ok = check(cudaEventSynchronize(dl->done[k].get()), "cudaEventSynchronize");
      if (!ok) break;
      std::memcpy(lane.slot[k].get(), job.src + offset(i), length(i));
      ok = check(cudaMemcpyAsync(job.dst + offset(i), lane.slot[k].get(), length(i),
                                 cudaMemcpyHostToDevice, stream),
                 "cudaMemcpyAsync") &&
           check(cudaEventRecord(dl->done[k].get(), stream), "cudaEventRecord");
      pending[k] = ok;
    }
  } else {
    auto fetch = [&](size_t i) {
      const size_t k = i & 1;
      return check(cudaMemcpyAsync(lane.slot[k].get(), job.src + offset(i), length(i),
                                   cudaMemcpyDeviceToHost, stream),
                   "cudaMemcpyAsync") &&
             check(cudaEventRecord(dl->done[k].get(), stream), "cudaEventRecord");
    };
    for (size_t i = 0; i < std::min<size_t>(2, mine) && ok; ++i) ok = fetch(i);
    for (size_t i = 0; i < mine && ok; ++i) {
      const size_t k = i & 1;
      ok = check(cudaEventSynchronize(dl->done[k].get()), "cudaEventSynchronize");
      if (!ok) break;
      std::memcpy(job.dst + offset(i), lane.slot[k].get(), length(i));
      if (i + 2 < mine) ok = fetch(i + 2);
    }
  }
  // Whatever happened, nothing of this lane stays queued once it reports back.
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}

void PageableCopier::worker(size_t index) {
  uint64_t seen = 0;
  for (;;) {
    Job job;
    {
      std::unique_lock lock(m_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      job = job_;
    }
    Failure failure;
    if (index < job.used) run_lane(index, job, failure);
    {
      std::lock_guard lock(m_);
      failures_[index] = failure;
      if (--remaining_ == 0) finished_.notify_one();
    }
  }
}

void PageableCopier::copy(void* dst, const void* src, size_t bytes, bool to_device, int device,
                          cudaStream_t after) {
  if (bytes == 0) return;
  const DeviceScope scope(device, *health_);
  const auto d = static_cast<size_t>(device);
  if (start_.size() <= d) start_.resize(d + 1);
  if (!start_[d]) {
    cudaEvent_t e = nullptr;
    CULUA_CUDA_CHECK(*health_, cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    start_[d] = UniqueEvent(e, DestroyEvent{device});
  }
  CULUA_CUDA_CHECK(*health_, cudaEventRecord(start_[d].get(), after));

  Job job;
  job.dst = static_cast<char*>(dst);
  job.src = static_cast<const char*>(src);
  job.bytes = bytes;
  // Two chunks per lane at least, so that each lane overlaps its copies with its transfers.
  const size_t per = (bytes + 2 * lanes_.size() - 1) / (2 * lanes_.size());
  job.chunk = std::clamp((per + 65535) / 65536 * 65536, kMinChunk, kChunk);
  job.chunks = (bytes + job.chunk - 1) / job.chunk;
  job.to_device = to_device;
  job.device = device;
  job.start = start_[d].get();

  Failure first;
  if (job.chunks > 1 && lanes_.size() > 1) {
    {
      std::lock_guard lock(m_);
      // Workers start with the first copy that needs them.
      while (threads_.size() + 1 < lanes_.size()) {
        const size_t i = threads_.size() + 1;
        threads_.emplace_back([this, i] { worker(i); });
      }
      job.used = std::min(job.chunks, threads_.size() + 1);
      job_ = job;
      remaining_ = threads_.size();
      ++generation_;
    }
    wake_.notify_all();
    run_lane(0, job, first);
    std::unique_lock lock(m_);
    finished_.wait(lock, [&] { return remaining_ == 0; });
    for (size_t i = 1; i < job.used; ++i) {
      if (first.error == cudaSuccess) first = failures_[i];
    }
  } else {
    job.used = 1;
    run_lane(0, job, first);
  }
  if (first.error != cudaSuccess) health_->check(first.error, first.call, __FILE__, __LINE__);
}

}  // namespace culua::detail::cuda
