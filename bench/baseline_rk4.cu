// culua-baseline rk4: the native floors of the RK4 loop of scripts/device_resident_loop.lua (the
// fuse group of scripts/bench/suite.lua, docs/fusion.md): two N x N complex64 matrices F, G,
//   kF = -2i X - i d (2Y - 1),   kG = -i conj(d) X + i d conj(X),
// four stages of classic RK4 with step dt, then delta = sum(F) / N^2 read back by the host, which
// computes the next step's d from it. Each version runs `steps` steps `reps` times (after one
// warm-up run) and prints one JSON record per version (total milliseconds of the steps, events
// around the loop):
//   rk4_kernel_sum   the whole step as one kernel, then CUB's sum, the 8-byte copy, a sync
//   rk4_fused_sum    the step kernel also sums F (block reduction, one atomic per block)
//   rk4_graph        a CUDA graph per parity: the step kernel reading d from the device, CUB's
//                    sum, delta = sum / N^2 on the device; one launch, the copy and a sync a step
//   rk4_ops          the script's version B launch for launch: its 64 element-wise operations
//                    (cu.mul, cu.sub, cu.add, cu.conj with out=) as 64 launches of grid-stride
//                    kernels on the same buffers, then CUB's sum, the copy, a sync
//   rk4_stages       the script's version C: its four cu.elementwise stage kernels (the same
//                    arithmetic, inputs and outputs), then CUB's sum, the copy, a sync
// rk4_ops and rk4_stages do the same math as rk4_kernel_sum in another order of operations: their
// last delta must agree with its to kDeltaBound (relative), else they print an error record.
//   culua-baseline rk4 [--n N] [--steps S] [--reps R]
#include <cub/device/device_reduce.cuh>

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/baseline_suite.hpp"

namespace culua_baseline {

namespace {

using Failure = CudaFailure;
#define CK(call) check_cuda((call), #call)

__host__ __device__ inline float2 cadd(float2 a, float2 b) {
  return make_float2(a.x + b.x, a.y + b.y);
}
__host__ __device__ inline float2 cmul(float2 a, float2 b) {
  return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
__host__ __device__ inline float2 csub(float2 a, float2 b) {
  return make_float2(a.x - b.x, a.y - b.y);
}
__host__ __device__ inline float2 cscale(float2 a, float s) {
  return make_float2(a.x * s, a.y * s);
}
__host__ __device__ inline float2 cconj(float2 a) {
  return make_float2(a.x, -a.y);
}

struct Float2Add {
  __host__ __device__ float2 operator()(const float2& a, const float2& b) const {
    return cadd(a, b);
  }
};

// The coefficients of the derivatives: -i d, i d, -i conj(d).
struct Coef {
  float2 mid, id, micd;
};

__host__ __device__ inline Coef coefficients(float2 d) {
  return {make_float2(d.y, -d.x), make_float2(-d.y, d.x), make_float2(-d.y, -d.x)};
}

__device__ inline void derivatives(float2 x, float2 y, const Coef& c, float2& kf, float2& kg) {
  const float2 t = cmul(make_float2(2 * y.x - 1, 2 * y.y), c.mid);
  kf = cadd(make_float2(2 * x.y, -2 * x.x), t);  // -2i x
  kg = cadd(cmul(x, c.micd), cmul(cconj(x), c.id));
}

// One RK4 step of element e: (f, g) -> (fn, gn).
__device__ inline void step_element(float2 f, float2 g, const Coef& c, float dt, float2& fn,
                                    float2& gn) {
  float2 kf, kg;
  derivatives(f, g, c, kf, kg);
  float2 af = cadd(f, cscale(kf, dt / 6)), ag = cadd(g, cscale(kg, dt / 6));
  float2 x = cadd(f, cscale(kf, dt / 2)), y = cadd(g, cscale(kg, dt / 2));
  derivatives(x, y, c, kf, kg);
  af = cadd(af, cscale(kf, dt / 3));
  ag = cadd(ag, cscale(kg, dt / 3));
  x = cadd(f, cscale(kf, dt / 2));
  y = cadd(g, cscale(kg, dt / 2));
  derivatives(x, y, c, kf, kg);
  af = cadd(af, cscale(kf, dt / 3));
  ag = cadd(ag, cscale(kg, dt / 3));
  x = cadd(f, cscale(kf, dt));
  y = cadd(g, cscale(kg, dt));
  derivatives(x, y, c, kf, kg);
  fn = cadd(af, cscale(kf, dt / 6));
  gn = cadd(ag, cscale(kg, dt / 6));
}

constexpr int kBlock = 256;

// The step with the coefficients from the host.
__global__ void step_kernel(const float2* f, const float2* g, float2* fn, float2* gn, long long n,
                            Coef c, float dt) {
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < n;
       e += (long long)gridDim.x * blockDim.x) {
    step_element(f[e], g[e], c, dt, fn[e], gn[e]);
  }
}

// The step with d read from the device (delta of the previous step).
__global__ void step_device_d(const float2* f, const float2* g, float2* fn, float2* gn, long long n,
                              const float2* delta, float dt) {
  const Coef c = coefficients(*delta);
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < n;
       e += (long long)gridDim.x * blockDim.x) {
    step_element(f[e], g[e], c, dt, fn[e], gn[e]);
  }
}

// The step that also sums the new F: a block reduction, one atomic per block and part.
__global__ void step_fused_sum(const float2* f, const float2* g, float2* fn, float2* gn,
                               long long n, Coef c, float dt, float2* sum) {
  float2 acc = make_float2(0, 0);
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < n;
       e += (long long)gridDim.x * blockDim.x) {
    float2 a, b;
    step_element(f[e], g[e], c, dt, a, b);
    fn[e] = a;
    gn[e] = b;
    acc = cadd(acc, a);
  }
  for (int o = 16; o > 0; o >>= 1) {
    acc.x += __shfl_down_sync(0xffffffffu, acc.x, o);
    acc.y += __shfl_down_sync(0xffffffffu, acc.y, o);
  }
  __shared__ float2 warps[kBlock / 32];
  if ((threadIdx.x & 31) == 0) warps[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    float2 s = warps[0];
    for (int w = 1; w < kBlock / 32; ++w) s = cadd(s, warps[w]);
    atomicAdd(&sum->x, s.x);
    atomicAdd(&sum->y, s.y);
  }
}

__global__ void divide(const float2* sum, float2* delta, float inv) {
  *delta = cscale(*sum, inv);
}

// rk4_ops: the element-wise operations of version B, one grid-stride kernel per kind (a op b,
// a op scalar, op a). culua converts a scalar operand to the array's dtype, so a real scalar
// (2, 1, h, w) is a complex one with a zero imaginary part, multiplied as complex numbers.
struct AddOp {
  __device__ float2 operator()(float2 a, float2 b) const { return cadd(a, b); }
};
struct SubOp {
  __device__ float2 operator()(float2 a, float2 b) const { return csub(a, b); }
};
struct MulOp {
  __device__ float2 operator()(float2 a, float2 b) const { return cmul(a, b); }
};
struct ConjOp {
  __device__ float2 operator()(float2 a) const { return cconj(a); }
};

template <class Op>
__global__ void ew_arrays(const float2* a, const float2* b, float2* out, long long n) {
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < n;
       e += (long long)gridDim.x * blockDim.x) {
    out[e] = Op{}(a[e], b[e]);
  }
}

template <class Op>
__global__ void ew_scalar(const float2* a, float2 b, float2* out, long long n) {
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < n;
       e += (long long)gridDim.x * blockDim.x) {
    out[e] = Op{}(a[e], b);
  }
}

template <class Op>
__global__ void ew_unary(const float2* a, float2* out, long long n) {
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < n;
       e += (long long)gridDim.x * blockDim.x) {
    out[e] = Op{}(a[e]);
  }
}

// One launch per call, as each cu.* call of version B is one.
struct Launcher {
  int grid;
  cudaStream_t st;
  long long n;
  void add(const float2* a, const float2* b, float2* out) const {
    ew_arrays<AddOp><<<grid, kBlock, 0, st>>>(a, b, out, n);
  }
  void sub(const float2* a, float2 b, float2* out) const {
    ew_scalar<SubOp><<<grid, kBlock, 0, st>>>(a, b, out, n);
  }
  void mul(const float2* a, float2 b, float2* out) const {
    ew_scalar<MulOp><<<grid, kBlock, 0, st>>>(a, b, out, n);
  }
  void conj(const float2* a, float2* out) const {
    ew_unary<ConjOp><<<grid, kBlock, 0, st>>>(a, out, n);
  }
};

// Version B's buffers (the step's temporaries; F, G, Fb, Gb are the ping-pong pair).
struct OpsBuffers {
  float2 *fa, *ga, *x1, *y1, *x2, *y2, *kf, *kg, *tmp;
};

// The script's derivatives(): 9 launches.
void ops_derivatives(const Launcher& l, const OpsBuffers& b, const float2* x, const float2* y,
                     const Coef& c) {
  l.mul(y, make_float2(2, 0), b.tmp);
  l.sub(b.tmp, make_float2(1, 0), b.tmp);
  l.mul(b.tmp, c.mid, b.tmp);
  l.mul(x, make_float2(0, -2), b.kf);
  l.add(b.kf, b.tmp, b.kf);
  l.conj(x, b.tmp);
  l.mul(b.tmp, c.id, b.tmp);
  l.mul(x, c.micd, b.kg);
  l.add(b.kg, b.tmp, b.kg);
}

// The script's combine(): Xn = F + h kF, Yn = G + h kG (skipped when xn is null), bF = aF + w kF,
// bG = aG + w kG; 8 launches, 4 without Xn.
void ops_combine(const Launcher& l, const OpsBuffers& b, const float2* f, const float2* g, float h,
                 float2* xn, float2* yn, float w, const float2* af, const float2* ag, float2* bf,
                 float2* bg) {
  if (xn) {
    l.mul(b.kf, make_float2(h, 0), xn);
    l.add(xn, f, xn);
    l.mul(b.kg, make_float2(h, 0), yn);
    l.add(yn, g, yn);
  }
  l.mul(b.kf, make_float2(w, 0), b.tmp);
  l.add(af, b.tmp, bf);
  l.mul(b.kg, make_float2(w, 0), b.tmp);
  l.add(ag, b.tmp, bg);
}

// The script's rk4_step(): 4 x 9 + 3 x 8 + 4 = 64 launches; the new state in fn, gn. The scalars
// are Lua numbers there (f64), rounded to c64 by each operation.
void ops_step(const Launcher& l, const OpsBuffers& b, const float2* f, const float2* g, float2* fn,
              float2* gn, const Coef& c, double dt) {
  const float h2 = static_cast<float>(dt / 2), h = static_cast<float>(dt);
  const float w6 = static_cast<float>(dt / 6), w3 = static_cast<float>(dt / 3);
  ops_derivatives(l, b, f, g, c);
  ops_combine(l, b, f, g, h2, b.x1, b.y1, w6, f, g, b.fa, b.ga);
  ops_derivatives(l, b, b.x1, b.y1, c);
  ops_combine(l, b, f, g, h2, b.x2, b.y2, w3, b.fa, b.ga, fn, gn);
  ops_derivatives(l, b, b.x2, b.y2, c);
  ops_combine(l, b, f, g, h, b.x1, b.y1, w3, fn, gn, b.fa, b.ga);
  ops_derivatives(l, b, b.x1, b.y1, c);
  ops_combine(l, b, f, g, 0, nullptr, nullptr, w6, b.fa, b.ga, fn, gn);
}

// rk4_stages: version C's cu.elementwise code, in its order of operations:
//   kF = -2i X - i d (2Y - 1);  kG = -i (conj(d) X - d conj(X))
__device__ inline void stage_derivatives(float2 x, float2 y, float2 d, float2& kf, float2& kg) {
  const float2 i = make_float2(0, 1), minus_i = make_float2(0, -1);
  const float2 t = cmul(cmul(i, d), make_float2(2 * y.x - 1, 2 * y.y));
  kf = csub(cmul(make_float2(0, -2), x), t);
  kg = cmul(minus_i, csub(cmul(cconj(d), x), cmul(d, cconj(x))));
}

// The script's rk4_stage: Xn = F + h kF, Yn = G + h kG, bF = aF + w kF, bG = aG + w kG with the
// derivatives at (X, Y).
__global__ void rk4_stage(const float2* f, const float2* g, const float2* x, const float2* y,
                          const float2* af, const float2* ag, float2 d, float h, float w,
                          float2* xn, float2* yn, float2* bf, float2* bg, long long n) {
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < n;
       e += (long long)gridDim.x * blockDim.x) {
    float2 kf, kg;
    stage_derivatives(x[e], y[e], d, kf, kg);
    xn[e] = cadd(f[e], cscale(kf, h));
    yn[e] = cadd(g[e], cscale(kg, h));
    bf[e] = cadd(af[e], cscale(kf, w));
    bg[e] = cadd(ag[e], cscale(kg, w));
  }
}

// The script's rk4_last_stage: bF = aF + w kF, bG = aG + w kG.
__global__ void rk4_last_stage(const float2* x, const float2* y, const float2* af, const float2* ag,
                               float2 d, float w, float2* bf, float2* bg, long long n) {
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < n;
       e += (long long)gridDim.x * blockDim.x) {
    float2 kf, kg;
    stage_derivatives(x[e], y[e], d, kf, kg);
    bf[e] = cadd(af[e], cscale(kf, w));
    bg[e] = cadd(ag[e], cscale(kg, w));
  }
}

struct Device {
  void* p = nullptr;
  explicit Device(size_t bytes) { CK(cudaMalloc(&p, std::max<size_t>(bytes, 1))); }
  ~Device() { cudaFree(p); }
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  template <class T>
  T* as() const {
    return static_cast<T*>(p);
  }
};

struct Setup {
  int n = 512;
  int steps = 1000;
  int reps = 3;
  double dt = 1e-4;
};

// The initial state of scripts/device_resident_loop.lua: F0 = 0.1 exp(2i m / N^2), G0 = 0.2 m /
// N^2.
void initial_state(long long nn, std::vector<float2>& f0, std::vector<float2>& g0) {
  f0.resize(nn);
  g0.resize(nn);
  for (long long m = 0; m < nn; ++m) {
    const std::complex<double> z = 0.1 * std::exp(std::complex<double>(0, 2.0 * m / nn));
    f0[m] = make_float2(static_cast<float>(z.real()), static_cast<float>(z.imag()));
    g0[m] = make_float2(static_cast<float>(m * (0.2 / nn)), 0);
  }
}

// rel: the last delta's distance from rk4_kernel_sum's, relative to it (printed when >= 0).
void print_record(const char* op, const Setup& s, std::vector<double> ms, std::complex<double> last,
                  const char* how, double rel) {
  std::sort(ms.begin(), ms.end());
  const double median =
      ms.size() % 2 ? ms[ms.size() / 2] : (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]) / 2;
  std::printf(
      "{\"impl\": \"native\", \"op\": \"%s\", \"size\": %d, \"steps\": %d, \"unit\": \"ms\", "
      "\"median\": %.6f, \"min\": %.6f, \"max\": %.6f, \"n\": %zu, \"delta\": [%.9g, %.9g], ",
      op, s.n, s.steps, median, ms.front(), ms.back(), ms.size(), last.real(), last.imag());
  if (rel >= 0) std::printf("\"delta_rel_kernel_sum\": %.3e, ", rel);
  std::printf("\"how\": \"%s\"}\n", how);
  std::fflush(stdout);
}

void print_error(const char* op, const Setup& s, const std::string& what) {
  std::string clean;
  for (char ch : what) clean += (ch == '"' || ch == '\\') ? '\'' : ch;
  std::printf("{\"impl\": \"native\", \"op\": \"%s\", \"size\": %d, \"error\": \"%s\"}\n", op, s.n,
              clean.c_str());
  std::fflush(stdout);
}

enum class Version { KernelSum, FusedSum, Graph, Ops, Stages };

// Runs one version reps + 1 times (the first is the warm-up); returns the times and the last delta.
std::vector<double> run_version(Version v, const Setup& s, std::complex<double>& last) {
  const long long nn = static_cast<long long>(s.n) * s.n;
  std::vector<float2> f0, g0;
  initial_state(nn, f0, g0);
  const size_t bytes = sizeof(float2) * nn;
  Device f(bytes), g(bytes), fb(bytes), gb(bytes), sum(sizeof(float2)), delta(sizeof(float2));
  // The temporaries of versions B and C (the script's Fa, Ga, X1, Y1, X2, Y2; kF, kG, tmp for B).
  const bool staged = v == Version::Ops || v == Version::Stages;
  const size_t stage_bytes = staged ? bytes : 0, ops_bytes = v == Version::Ops ? bytes : 0;
  Device fa(stage_bytes), ga(stage_bytes), x1(stage_bytes), y1(stage_bytes), x2(stage_bytes),
      y2(stage_bytes), kf(ops_bytes), kg(ops_bytes), tmp(ops_bytes);
  const OpsBuffers ob{fa.as<float2>(), ga.as<float2>(), x1.as<float2>(),
                      y1.as<float2>(), x2.as<float2>(), y2.as<float2>(),
                      kf.as<float2>(), kg.as<float2>(), tmp.as<float2>()};
  float2* host_delta = nullptr;
  CK(cudaHostAlloc(reinterpret_cast<void**>(&host_delta), sizeof(float2), cudaHostAllocDefault));
  struct Free {
    float2* p;
    ~Free() { cudaFreeHost(p); }
  } free_pinned{host_delta};
  cudaStream_t st = nullptr;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  struct Stream {
    cudaStream_t s;
    ~Stream() { cudaStreamDestroy(s); }
  } keep_stream{st};
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  int sms = 0, dev = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  const int grid = static_cast<int>(std::min<long long>((nn + kBlock - 1) / kBlock, 8LL * sms));
  size_t temp_bytes = 0;
  CK(cub::DeviceReduce::Reduce(nullptr, temp_bytes, f.as<float2>(), sum.as<float2>(), nn,
                               Float2Add{}, make_float2(0, 0), st));
  Device temp(temp_bytes);
  const float dt = static_cast<float>(s.dt);
  const float inv = 1.0f / static_cast<float>(nn);
  const Launcher launcher{grid, st, nn};
  // Version C's f32 arguments: the script's Lua numbers dt / 2 ... rounded once.
  const float h2 = static_cast<float>(s.dt / 2), h1 = static_cast<float>(s.dt);
  const float w6 = static_cast<float>(s.dt / 6), w3 = static_cast<float>(s.dt / 3);

  // The graphs of the two parities (F -> Fb reads f, writes fb; then the reverse).
  cudaGraphExec_t exec[2] = {nullptr, nullptr};
  struct Execs {
    cudaGraphExec_t* e;
    ~Execs() {
      for (int i = 0; i < 2; ++i)
        if (e[i]) cudaGraphExecDestroy(e[i]);
    }
  } keep_execs{exec};
  if (v == Version::Graph) {
    for (int p = 0; p < 2; ++p) {
      float2* in_f = (p == 0 ? f : fb).as<float2>();
      float2* in_g = (p == 0 ? g : gb).as<float2>();
      float2* out_f = (p == 0 ? fb : f).as<float2>();
      float2* out_g = (p == 0 ? gb : g).as<float2>();
      cudaGraph_t graph = nullptr;
      CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
      step_device_d<<<grid, kBlock, 0, st>>>(in_f, in_g, out_f, out_g, nn, delta.as<float2>(), dt);
      CK(cub::DeviceReduce::Reduce(temp.p, temp_bytes, out_f, sum.as<float2>(), nn, Float2Add{},
                                   make_float2(0, 0), st));
      divide<<<1, 1, 0, st>>>(sum.as<float2>(), delta.as<float2>(), inv);
      CK(cudaStreamEndCapture(st, &graph));
      const cudaError_t inst = cudaGraphInstantiate(&exec[p], graph, 0);
      cudaGraphDestroy(graph);
      CK(inst);
    }
  }

  std::vector<double> times;
  for (int r = 0; r <= s.reps; ++r) {
    CK(cudaMemcpyAsync(f.p, f0.data(), bytes, cudaMemcpyHostToDevice, st));
    CK(cudaMemcpyAsync(g.p, g0.data(), bytes, cudaMemcpyHostToDevice, st));
    const float2 one = make_float2(1, 0);
    CK(cudaMemcpyAsync(delta.p, &one, sizeof one, cudaMemcpyHostToDevice, st));
    CK(cudaStreamSynchronize(st));
    std::complex<double> d(1, 0);
    float2* cf = f.as<float2>();
    float2* cg = g.as<float2>();
    float2* nf = fb.as<float2>();
    float2* ng = gb.as<float2>();
    CK(cudaEventRecord(e0, st));
    for (int k = 0; k < s.steps; ++k) {
      const Coef c =
          coefficients(make_float2(static_cast<float>(d.real()), static_cast<float>(d.imag())));
      switch (v) {
        case Version::KernelSum:
          step_kernel<<<grid, kBlock, 0, st>>>(cf, cg, nf, ng, nn, c, dt);
          CK(cub::DeviceReduce::Reduce(temp.p, temp_bytes, nf, sum.as<float2>(), nn, Float2Add{},
                                       make_float2(0, 0), st));
          CK(cudaMemcpyAsync(host_delta, sum.p, sizeof(float2), cudaMemcpyDeviceToHost, st));
          break;
        case Version::FusedSum:
          CK(cudaMemsetAsync(sum.p, 0, sizeof(float2), st));
          step_fused_sum<<<grid, kBlock, 0, st>>>(cf, cg, nf, ng, nn, c, dt, sum.as<float2>());
          CK(cudaMemcpyAsync(host_delta, sum.p, sizeof(float2), cudaMemcpyDeviceToHost, st));
          break;
        case Version::Graph:
          CK(cudaGraphLaunch(exec[k % 2], st));
          CK(cudaMemcpyAsync(host_delta, delta.p, sizeof(float2), cudaMemcpyDeviceToHost, st));
          break;
        case Version::Ops:
          ops_step(launcher, ob, cf, cg, nf, ng, c, s.dt);
          CK(cudaGetLastError());
          CK(cub::DeviceReduce::Reduce(temp.p, temp_bytes, nf, sum.as<float2>(), nn, Float2Add{},
                                       make_float2(0, 0), st));
          CK(cudaMemcpyAsync(host_delta, sum.p, sizeof(float2), cudaMemcpyDeviceToHost, st));
          break;
        case Version::Stages: {
          const float2 dd = make_float2(static_cast<float>(d.real()), static_cast<float>(d.imag()));
          rk4_stage<<<grid, kBlock, 0, st>>>(cf, cg, cf, cg, cf, cg, dd, h2, w6, ob.x1, ob.y1,
                                             ob.fa, ob.ga, nn);
          rk4_stage<<<grid, kBlock, 0, st>>>(cf, cg, ob.x1, ob.y1, ob.fa, ob.ga, dd, h2, w3, ob.x2,
                                             ob.y2, nf, ng, nn);
          rk4_stage<<<grid, kBlock, 0, st>>>(cf, cg, ob.x2, ob.y2, nf, ng, dd, h1, w3, ob.x1, ob.y1,
                                             ob.fa, ob.ga, nn);
          rk4_last_stage<<<grid, kBlock, 0, st>>>(ob.x1, ob.y1, ob.fa, ob.ga, dd, w6, nf, ng, nn);
          CK(cudaGetLastError());
          CK(cub::DeviceReduce::Reduce(temp.p, temp_bytes, nf, sum.as<float2>(), nn, Float2Add{},
                                       make_float2(0, 0), st));
          CK(cudaMemcpyAsync(host_delta, sum.p, sizeof(float2), cudaMemcpyDeviceToHost, st));
          break;
        }
      }
      CK(cudaStreamSynchronize(st));
      d = std::complex<double>(host_delta->x, host_delta->y);
      if (v != Version::Graph) d /= static_cast<double>(nn);
      std::swap(cf, nf);
      std::swap(cg, ng);
    }
    CK(cudaEventRecord(e1, st));
    CK(cudaEventSynchronize(e1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    if (r > 0) times.push_back(ms);
    last = d;
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  return times;
}

}  // namespace

int rk4(int argc, char** argv) {
  Setup s;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "culua-baseline rk4: %s needs a value\n", a.c_str());
      return 2;
    }
    const int v = std::atoi(argv[++i]);
    if (v < 1) {
      std::fprintf(stderr, "culua-baseline rk4: %s needs a positive integer\n", a.c_str());
      return 2;
    }
    if (a == "--n") {
      s.n = v;
    } else if (a == "--steps") {
      s.steps = v;
    } else if (a == "--reps") {
      s.reps = v;
    } else {
      std::fprintf(stderr, "culua-baseline rk4: unknown option %s (--n, --steps, --reps)\n",
                   a.c_str());
      return 2;
    }
  }
  const struct {
    Version v;
    const char* op;
    const char* how;
  } versions[] = {
      {Version::KernelSum, "rk4_kernel_sum",
       "the step as one kernel, CUB's sum, the copy of the sum, a sync per step"},
      {Version::FusedSum, "rk4_fused_sum",
       "memset, the step kernel summing F (one atomic per block), the copy, a sync per step"},
      {Version::Graph, "rk4_graph",
       "a graph per parity (step kernel reading d from the device, CUB's sum, the division), "
       "one launch, the copy, a sync per step"},
      {Version::Ops, "rk4_ops",
       "version B's 64 element-wise operations as 64 grid-stride kernel launches (one template "
       "per kind: a + b, a - s, a * s, conj a), CUB's sum, the copy of the sum, a sync per step"},
      {Version::Stages, "rk4_stages",
       "version C's four stage kernels (its cu.elementwise arithmetic), CUB's sum, the copy of "
       "the sum, a sync per step"},
  };
  // rk4_ops and rk4_stages against rk4_kernel_sum: c64 arithmetic in another order over the steps;
  // the suite holds culua's last delta to the same bound.
  constexpr double kDeltaBound = 1e-5;
  bool have_reference = false;
  std::complex<double> reference;
  int failed = 0;
  for (const auto& ver : versions) {
    try {
      std::complex<double> last;
      std::vector<double> ms = run_version(ver.v, s, last);
      double rel = -1;
      if (ver.v == Version::KernelSum) {
        reference = last;
        have_reference = true;
      } else if ((ver.v == Version::Ops || ver.v == Version::Stages) && have_reference) {
        rel = std::abs(last - reference) / std::abs(reference);
        if (!(rel <= kDeltaBound)) {
          char what[200];
          std::snprintf(what, sizeof what,
                        "last delta %.9g%+.9gi differs from rk4_kernel_sum's %.9g%+.9gi by %.3e "
                        "relative (bound %.0e)",
                        last.real(), last.imag(), reference.real(), reference.imag(), rel,
                        kDeltaBound);
          print_error(ver.op, s, what);
          ++failed;
          continue;
        }
      }
      print_record(ver.op, s, std::move(ms), last, ver.how, rel);
    } catch (const Failure& e) {
      print_error(ver.op, s, e.what());
      ++failed;
    }
  }
  return failed ? 1 : 0;
}

}  // namespace culua_baseline
