// The kernel both sides of scripts/bench/bench_agreement.lua time: culua through cu.compile and
// cu.bench, culua-baseline through NVRTC and a native event-timed loop.
extern "C" __global__ void saxpy(float a, const float* __restrict__ x, float* __restrict__ y,
                                 long long n) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    y[i] = a * x[i] + y[i];
  }
}
