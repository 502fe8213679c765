#include "cuda/cufft.hpp"

#include "cuda/cufft_api.hpp"

#include <algorithm>

#include "core/backend/fft_call.hpp"
#include "core/base/error.hpp"
#include "core/runtime/capture.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/scoped.hpp"

namespace culua::detail::cuda {

namespace {

// Throws for a failed cuFFT call, naming the status; a sticky CUDA error behind it poisons the
// runtime as any other sticky error does.
void check(Health& health, cufftResult r, const char* call) {
  if (r == CUFFT_SUCCESS) return;
  const cudaError_t e = cudaPeekAtLastError();
  if (e != cudaSuccess && is_sticky(e)) health.check(e, call, __FILE__, __LINE__);
  if (r == CUFFT_ALLOC_FAILED) {
    fail(ErrorKind::OutOfMemory, "cuFFT {} failed: {}", call, cufft_status_name(r));
  }
  fail(ErrorKind::Device, "cuFFT {} failed: {}", call, cufft_status_name(r));
}
#define CULUA_CUFFT_CHECK(call) check(*health_, (call), #call)

cufftType plan_type(const FftCall& c) {
  const bool d = c.real == DType::F64;
  switch (c.kind) {
    case FftKind::C2C:
      return d ? CUFFT_Z2Z : CUFFT_C2C;
    case FftKind::R2C:
      return d ? CUFFT_D2Z : CUFFT_R2C;
    case FftKind::C2R:
      return d ? CUFFT_Z2D : CUFFT_C2R;
  }
  return CUFFT_C2C;
}

bool stream_capturing(cudaStream_t s) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(s, &status) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return status != cudaStreamCaptureStatusNone;
}

}  // namespace

Cufft::Cufft(std::shared_ptr<Health> health) : health_(std::move(health)) {}

Cufft::~Cufft() {
  if (health_->poisoned.load()) return;  // the context is unusable: nothing can be released
  for (WorkArea& a : areas_) free_area(a);
  for (Plan& p : plans_) destroy(p);
}

void Cufft::free_area(WorkArea& a) noexcept {
  // In stream order on the area's own stream, after every transform queued there (the stream is
  // still alive: the cache holds it). Errors are ignored: at exit the context may already be gone.
  const DeviceScope scope(a.stream->device(), std::nothrow);
  if (!scope.ok()) return;
  const RelaxedCaptureMode relaxed;
  if (cudaFreeAsync(a.ptr, static_cast<cudaStream_t>(a.stream->native_handle())) != cudaSuccess) {
    cudaGetLastError();
  }
  a.ptr = nullptr;
  ++stats_.work_frees;
}

void Cufft::release_dropped_streams(const Stream* current) noexcept {
  for (size_t i = 0; i < areas_.size();) {
    WorkArea& a = areas_[i];
    // use_count() == 1: nobody but the cache holds the stream, so nothing can queue on it again.
    if (a.stream.get() == current || a.stream.use_count() != 1) {
      ++i;
      continue;
    }
    free_area(a);
    std::swap(a, areas_.back());
    areas_.pop_back();  // the stream goes with its last reference
  }
}

void* Cufft::work_area(Stream& s, size_t bytes, cudaMemPool_t pool) {
  const auto it = std::find_if(areas_.begin(), areas_.end(),
                               [&](const WorkArea& a) { return a.stream.get() == &s; });
  if (it != areas_.end() && it->bytes >= bytes) return it->ptr;
  std::shared_ptr<Stream> keep = s.weak_from_this().lock();
  if (!keep) return nullptr;
  if (it != areas_.end()) {
    // Grown: the old area is freed first, in order on the same stream, so that the new one can
    // reuse its memory; plans bound to it are bound again when next used (their pointer differs).
    free_area(*it);
    areas_.erase(it);
  }
  void* p = nullptr;
  CULUA_CUDA_CHECK(*health_, cudaMallocFromPoolAsync(&p, bytes, pool,
                                                     static_cast<cudaStream_t>(s.native_handle())));
  ++stats_.work_allocations;
  areas_.push_back(WorkArea{std::move(keep), p, bytes});
  return p;
}

void Cufft::destroy(Plan& p) noexcept {
  // A plan exists only where cuFFT was loaded: cufft_api() does not throw here.
  const DeviceScope scope(p.key.device, std::nothrow);
  if (!scope.ok()) return;
  const RelaxedCaptureMode relaxed;
  cufft_api().destroy(p.handle);
  cudaGetLastError();
}

Cufft::Plan& Cufft::plan(const Key& key, bool capturing) {
  for (auto it = plans_.begin(); it != plans_.end(); ++it) {
    if (it->key == key) {
      plans_.splice(plans_.begin(), plans_, it);  // most recently used first
      ++stats_.hits;
      plans_.front().pinned = plans_.front().pinned || capturing;
      return plans_.front();
    }
  }
  ++stats_.misses;
  // Room first: the least recently used plans that no graph needs (cufftDestroy waits for the
  // device's work, as cudaFree does, so no queued transform still reads it). Never during a
  // capture: that wait is no capture's work (under compute-sanitizer, which makes the free
  // synchronize the context, it invalidated the capture: test_fft_api's capture case after the
  // earlier cases had filled the cache, H200 2026-11-29); the cache grows past kMaxPlans until the
  // next plan made outside a capture.
  if (!capturing) {
    for (auto it = plans_.end(); plans_.size() >= kMaxPlans && it != plans_.begin();) {
      --it;
      if (it->pinned) continue;
      destroy(*it);
      it = plans_.erase(it);
      ++stats_.evictions;
    }
  }
  Plan p;
  p.key = key;
  p.pinned = capturing;
  // A plan made while the stream captures a graph: cuFFT's set-up (allocations, copies of its
  // tables) must not count as work of the capture nor invalidate it.
  const RelaxedCaptureMode relaxed;
  CULUA_CUFFT_CHECK(cufft_api().create(&p.handle));
  struct DestroyOnError {  // until the plan is made
    Cufft* self;
    Plan* plan;
    ~DestroyOnError() {
      if (plan) self->destroy(*plan);
    }
  } guard{this, &p};
  CULUA_CUFFT_CHECK(cufft_api().set_auto_allocation(p.handle, 0));
  // Contiguous rows (cuFFT's basic layout): the key's strides and distances are those.
  long long n = key.n;
  const cufftResult made = cufft_api().make_plan_many_64(
      p.handle, 1, &n, nullptr, key.istride, key.idist, nullptr, key.ostride, key.odist,
      static_cast<cufftType>(key.type), key.batch, &p.work);
  if (made != CUFFT_SUCCESS && capturing) {
    // cuFFT synchronizes the context while it makes some plans (lengths it does by Bluestein's
    // algorithm, such as primes above 127: cuCtxSynchronize inside cufftMakePlanMany64, seen
    // under compute-sanitizer on an H200), which no capture allows: CUFFT_INTERNAL_ERROR.
    cudaGetLastError();
    fail(ErrorKind::Capture,
         "cuFFT cannot make the plan of a transform of length {} (batch {}) while a graph is "
         "captured (it synchronizes the device to make it); run the same transform once before "
         "the capture: its plan is kept",
         key.n, key.batch);
  }
  CULUA_CUFFT_CHECK(made);
  guard.plan = nullptr;
  plans_.push_front(p);
  return plans_.front();
}

void Cufft::execute(const FftCall& c, Stream& s, cudaMemPool_t pool) {
  const auto stream = static_cast<cudaStream_t>(s.native_handle());
  std::lock_guard lock(mutex_);
  Key key;
  key.device = s.device();
  key.type = static_cast<int>(plan_type(c));
  key.n = c.n;
  key.batch = c.batch;
  key.idist = c.in_row();
  key.odist = c.out_row();
  Capture* const capture = s.capture();
  const bool capturing = capture || stream_capturing(stream);
  // Nothing is freed while this thread captures (CUDA refuses stream-ordered frees then).
  const bool any_capture = capturing || Capture::active();
  if (!any_capture) release_dropped_streams(&s);
  Plan& p = plan(key, capturing);
  void* work = nullptr;
  void* own_work = nullptr;  // allocated for this call alone, freed after it
  if (p.work > 0) {
    if (capture) {
      // Lives as long as the graph (the capture allocates it outside the captured work).
      work = capture->scratch(s, p.work);
    } else if (!any_capture) {
      work = work_area(s, p.work, pool);
    }
    if (!work) {
      // A capture culua does not run (an embedding application's), or a stream that no
      // shared_ptr holds: in stream order around the call, as graph memory nodes under capture.
      CULUA_CUDA_CHECK(*health_, cudaMallocFromPoolAsync(&own_work, p.work, pool, stream));
      work = own_work;
    }
  }
  struct FreeWork {  // the call's own work area goes back to the pool after it, in stream order
    void* p;
    cudaStream_t s;
    ~FreeWork() {
      if (p) cudaFreeAsync(p, s);
    }
  } free_work{own_work, stream};
  if (!p.stream_bound || p.bound_stream != stream) {
    p.stream_bound = false;  // until the call succeeds
    CULUA_CUFFT_CHECK(cufft_api().set_stream(p.handle, stream));
    p.bound_stream = stream;
    p.stream_bound = true;
    ++stats_.stream_bindings;
  }
  if (!p.work_bound || p.bound_work != work) {
    p.work_bound = false;
    CULUA_CUFFT_CHECK(cufft_api().set_work_area(p.handle, work));
    p.bound_work = work;
    p.work_bound = true;
    ++stats_.work_area_bindings;
  }
  const cufftHandle h = p.handle;
  switch (static_cast<cufftType>(key.type)) {
    case CUFFT_C2C:
      CULUA_CUFFT_CHECK(cufft_api().exec_c2c(h, static_cast<cufftComplex*>(c.in),
                                             static_cast<cufftComplex*>(c.out),
                                             c.inverse ? CUFFT_INVERSE : CUFFT_FORWARD));
      break;
    case CUFFT_Z2Z:
      CULUA_CUFFT_CHECK(cufft_api().exec_z2z(h, static_cast<cufftDoubleComplex*>(c.in),
                                             static_cast<cufftDoubleComplex*>(c.out),
                                             c.inverse ? CUFFT_INVERSE : CUFFT_FORWARD));
      break;
    case CUFFT_R2C:
      CULUA_CUFFT_CHECK(cufft_api().exec_r2c(h, static_cast<cufftReal*>(c.in),
                                             static_cast<cufftComplex*>(c.out)));
      break;
    case CUFFT_D2Z:
      CULUA_CUFFT_CHECK(cufft_api().exec_d2z(h, static_cast<cufftDoubleReal*>(c.in),
                                             static_cast<cufftDoubleComplex*>(c.out)));
      break;
    case CUFFT_C2R:
      CULUA_CUFFT_CHECK(cufft_api().exec_c2r(h, static_cast<cufftComplex*>(c.in),
                                             static_cast<cufftReal*>(c.out)));
      break;
    case CUFFT_Z2D:
      CULUA_CUFFT_CHECK(cufft_api().exec_z2d(h, static_cast<cufftDoubleComplex*>(c.in),
                                             static_cast<cufftDoubleReal*>(c.out)));
      break;
  }
  CULUA_CUDA_CHECK(*health_, cudaGetLastError());
}

FftPlanStats Cufft::stats() {
  std::lock_guard lock(mutex_);
  FftPlanStats s = stats_;
  s.plans = plans_.size();
  s.work_areas = areas_.size();
  s.work_bytes = 0;
  for (const WorkArea& a : areas_) s.work_bytes += a.bytes;
  return s;
}

}  // namespace culua::detail::cuda
