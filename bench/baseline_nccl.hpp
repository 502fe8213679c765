// culua-baseline nccl: the native NCCL loop scripts/bench/collectives.lua compares cu.nccl with
// (bench/baseline_nccl.cpp).
#pragma once

namespace culua_baseline {

// `culua-baseline nccl [--ops LIST] [--min BYTES] [--max BYTES] [--iters N] [--warmup N]`:
// allreduce, allgather and reducescatter of f32 over all visible GPUs (one process,
// ncclCommInitAll), one JSON record per line. Returns the exit status (2: bad arguments, 1: CUDA
// or NCCL failure, 3: no libnccl.so.2).
int nccl(int argc, char** argv);

}  // namespace culua_baseline
