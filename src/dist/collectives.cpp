#include "dist/collectives.hpp"

#include <fmt/format.h>

#include "core/base/error.hpp"

#if CULUA_HAVE_CUDA
#include "dist/nccl_communicator.hpp"
#endif

namespace culua::detail::dist {

namespace {

constexpr const char* kOpNames[] = {"sum", "prod", "max", "min", "avg"};

std::string rank_name(size_t i, const std::vector<int>& devices) {
  return fmt::format("rank {} (device {})", i, devices[i]);
}

// Byte ranges of two live arrays overlap.
bool overlap(const Array& a, const Array& b) {
  if (a.buffer() != b.buffer()) return false;
  const auto* a0 = static_cast<const char*>(a.data());
  const auto* b0 = static_cast<const char*>(b.data());
  return a0 < b0 + b.nbytes() && b0 < a0 + a.nbytes();
}

void check_array(const Array& a, const char* role, size_t rank, const std::vector<int>& devices) {
  if (!a.alive()) {  // the role is formatted for a released array only
    a.check_alive(fmt::format("the {} of {}", role, rank_name(rank, devices)));
  }
  if (a.location() != Location::Device) {
    fail(ErrorKind::Value, "the {} of {} is a host array; collectives need device arrays", role,
         rank_name(rank, devices));
  }
  if (a.device() != devices[rank]) {
    fail(ErrorKind::Value, "the {} of {} is on device {}", role, rank_name(rank, devices),
         a.device());
  }
  if (!a.is_contiguous()) {
    fail(ErrorKind::Value, "the {} of {} is not contiguous; call contiguous() first", role,
         rank_name(rank, devices));
  }
}

void require_nccl(Runtime& rt) {
#if CULUA_HAVE_CUDA
  if (rt.kind() != BackendKind::Cuda) {
    fail(ErrorKind::Unsupported, "cu.nccl needs the CUDA backend; this run uses the {} backend",
         backend_name(rt.kind()));
  }
#else
  (void)rt;
  fail(ErrorKind::Unsupported, "cu.nccl needs the CUDA backend; this build of culua has none");
#endif
}

}  // namespace

ReduceOp parse_reduce_op(std::string_view name) {
  for (size_t i = 0; i < std::size(kOpNames); ++i) {
    if (name == kOpNames[i]) return static_cast<ReduceOp>(i);
  }
  fail(ErrorKind::Value, "expected one of sum, prod, max, min, avg, got '{}'", name);
}

const char* reduce_op_name(ReduceOp op) {
  return kOpNames[static_cast<size_t>(op)];
}

const char* collective_name(Collective c) {
  switch (c) {
    case Collective::AllReduce:
      return "nccl.allreduce";
    case Collective::Reduce:
      return "nccl.reduce";
    case Collective::Broadcast:
      return "nccl.broadcast";
    case Collective::AllGather:
      return "nccl.allgather";
    case Collective::ReduceScatter:
      return "nccl.reducescatter";
    case Collective::Send:
      return "nccl.send";
    case Collective::Recv:
      return "nccl.recv";
  }
  return "nccl";
}

bool reduces(Collective c) {
  return c == Collective::AllReduce || c == Collective::Reduce || c == Collective::ReduceScatter;
}

WireType wire_type(DType t, Collective c, ReduceOp op) {
  if (!reduces(c)) return {nccl_type::Uint8, static_cast<int>(itemsize(t))};  // moved as bytes
  switch (t) {
    case DType::F32:
      return {nccl_type::Float32, 1};
    case DType::F64:
      return {nccl_type::Float64, 1};
    case DType::F16:
      return {nccl_type::Float16, 1};
    case DType::BF16:
      return {nccl_type::Bfloat16, 1};
    case DType::I8:
      return {nccl_type::Int8, 1};
    case DType::I32:
      return {nccl_type::Int32, 1};
    case DType::I64:
      return {nccl_type::Int64, 1};
    case DType::U8:
      return {nccl_type::Uint8, 1};
    case DType::U32:
      return {nccl_type::Uint32, 1};
    case DType::U64:
      return {nccl_type::Uint64, 1};
    case DType::C64:
    case DType::C128:
      if (op != ReduceOp::Sum && op != ReduceOp::Avg) {
        fail(ErrorKind::Type, "{} reduces {} arrays with sum or avg only, not {}",
             collective_name(c), name(t), reduce_op_name(op));
      }
      return {t == DType::C64 ? nccl_type::Float32 : nccl_type::Float64, 2};
    case DType::I16:
    case DType::U16:
    case DType::Bool:
      break;
  }
  fail(ErrorKind::Type, "{} cannot reduce {} arrays (NCCL has no such type); convert with astype()",
       collective_name(c), name(t));
}

int64_t output_size(Collective c, int64_t input_size, int nranks) {
  if (c == Collective::AllGather) return input_size * nranks;
  if (c == Collective::ReduceScatter) {
    if (input_size % nranks != 0) {
      fail(ErrorKind::Value, "{} needs a size divisible by the {} ranks, got {} elements",
           collective_name(c), nranks, input_size);
    }
    return input_size / nranks;
  }
  return input_size;
}

void check_inputs(const CollectiveCall& call, const std::vector<int>& devices, int nranks) {
  const size_t n = devices.size();
  if (call.inputs.size() != n) {
    fail(ErrorKind::Value, "expected {} array{} (one per device of the communicator), got {}", n,
         n == 1 ? "" : "s", call.inputs.size());
  }
  const bool movement_only = call.kind == Collective::Send || call.kind == Collective::Recv;
  if ((call.kind == Collective::Reduce || call.kind == Collective::Broadcast) &&
      (call.root < 0 || call.root >= nranks)) {
    fail(ErrorKind::Value, "root must be a rank from 0 to {}, got {}", nranks - 1, call.root);
  }
  if (movement_only) {
    if (call.peers.size() != n) {
      fail(ErrorKind::Value, "expected {} peer{} (one per device of the communicator), got {}", n,
           n == 1 ? "" : "s", call.peers.size());
    }
    for (int peer : call.peers) {
      if (peer < 0 || peer >= nranks) {
        fail(ErrorKind::Value, "peer must be a rank from 0 to {}, got {}", nranks - 1, peer);
      }
    }
  }
  const char* role = call.kind == Collective::Recv ? "receive buffer" : "input";
  for (size_t i = 0; i < n; ++i) check_array(call.inputs[i], role, i, devices);
  const Array& first = call.inputs[0];
  for (size_t i = 1; i < n; ++i) {
    const Array& a = call.inputs[i];
    if (a.dtype() != first.dtype()) {
      fail(ErrorKind::Type, "the {} of {} is {}, the {} of rank 0 {}", role, rank_name(i, devices),
           name(a.dtype()), role, name(first.dtype()));
    }
    if (a.size() != first.size()) {
      fail(ErrorKind::Value, "the {} of {} has {} elements, the {} of rank 0 {}", role,
           rank_name(i, devices), a.size(), role, first.size());
    }
  }
  wire_type(first.dtype(), call.kind, call.op);
  output_size(call.kind, first.size(), nranks);
  if (!call.streams.empty()) {
    if (call.streams.size() != n) {
      fail(ErrorKind::Value, "expected {} stream{} (one per device), got {}", n, n == 1 ? "" : "s",
           call.streams.size());
    }
    for (size_t i = 0; i < n; ++i) {
      const Stream* s = call.streams[i];
      if (s && s->device() != devices[i]) {
        fail(ErrorKind::Value, "the stream of {} belongs to device {}", rank_name(i, devices),
             s->device());
      }
    }
  }
}

void check_call(const CollectiveCall& call, const std::vector<int>& devices, int nranks) {
  check_inputs(call, devices, nranks);
  const size_t n = devices.size();
  const bool movement_only = call.kind == Collective::Send || call.kind == Collective::Recv;
  const Array& first = call.inputs[0];
  const int64_t out_size = output_size(call.kind, first.size(), nranks);
  if (call.outputs.empty()) {
    if (call.kind == Collective::AllGather || call.kind == Collective::ReduceScatter) {
      fail(ErrorKind::Value, "{} needs output arrays", collective_name(call.kind));
    }
  } else {
    if (movement_only) {
      fail(ErrorKind::Value, "{} takes no output arrays", collective_name(call.kind));
    }
    if (call.outputs.size() != n) {
      fail(ErrorKind::Value, "expected {} output array{} (one per device), got {}", n,
           n == 1 ? "" : "s", call.outputs.size());
    }
    for (size_t i = 0; i < n; ++i) {
      const Array& o = call.outputs[i];
      check_array(o, "output", i, devices);
      if (o.dtype() != first.dtype()) {
        fail(ErrorKind::Type, "the output of {} is {}, the input {}", rank_name(i, devices),
             name(o.dtype()), name(first.dtype()));
      }
      if (o.size() != out_size) {
        fail(ErrorKind::Value, "the output of {} has {} elements, {} needs {}",
             rank_name(i, devices), o.size(), collective_name(call.kind), out_size);
      }
      const Array& in = call.inputs[i];
      if (overlap(o, in) && o.data() != in.data()) {
        fail(ErrorKind::Value,
             "the output of {} overlaps its input; NCCL needs the same memory or separate memory",
             rank_name(i, devices));
      }
      if (o.data() == in.data() &&
          (call.kind == Collective::AllGather || call.kind == Collective::ReduceScatter)) {
        fail(ErrorKind::Value, "the output of {} is its input; {} needs separate memory",
             rank_name(i, devices), collective_name(call.kind));
      }
    }
  }
}

std::string nccl_unavailable(Runtime& rt) {
  try {
    require_nccl(rt);
#if CULUA_HAVE_CUDA
    nccl_version_string();
#endif
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

std::string nccl_version(Runtime& rt) {
  require_nccl(rt);
#if CULUA_HAVE_CUDA
  return nccl_version_string();
#else
  return {};
#endif
}

std::shared_ptr<Communicator> Communicator::local(Runtime& rt, const std::vector<int>& devices,
                                                  const CommOptions& options) {
  require_nccl(rt);
  if (devices.empty()) fail(ErrorKind::Value, "a communicator needs at least one device");
  const int count = rt.backend().device_count();
  for (size_t i = 0; i < devices.size(); ++i) {
    if (devices[i] < 0 || devices[i] >= count) {
      fail(ErrorKind::Value, "device {} does not exist (devices 0 to {})", devices[i], count - 1);
    }
    for (size_t j = 0; j < i; ++j) {
      if (devices[j] == devices[i]) {
        fail(ErrorKind::Value, "device {} is listed twice (one rank per device)", devices[i]);
      }
    }
  }
  if (options.timeout < 0)
    fail(ErrorKind::Value, "timeout must be positive, got {}", options.timeout);
#if CULUA_HAVE_CUDA
  return make_nccl_local(rt, devices, options);
#else
  return nullptr;
#endif
}

std::string Communicator::unique_id(Runtime& rt) {
  require_nccl(rt);
#if CULUA_HAVE_CUDA
  return nccl_unique_id();
#else
  return {};
#endif
}

std::shared_ptr<Communicator> Communicator::rank_of(Runtime& rt, const std::string& id, int nranks,
                                                    int rank, int device,
                                                    const CommOptions& options) {
  require_nccl(rt);
  if (nranks < 1) fail(ErrorKind::Value, "nranks must be at least 1, got {}", nranks);
  if (rank < 0 || rank >= nranks) {
    fail(ErrorKind::Value, "rank must be from 0 to {}, got {}", nranks - 1, rank);
  }
  const int count = rt.backend().device_count();
  if (device < 0 || device >= count) {
    fail(ErrorKind::Value, "device {} does not exist (devices 0 to {})", device, count - 1);
  }
  if (options.timeout < 0)
    fail(ErrorKind::Value, "timeout must be positive, got {}", options.timeout);
#if CULUA_HAVE_CUDA
  return make_nccl_rank(rt, id, nranks, rank, device, options);
#else
  (void)id;
  return nullptr;
#endif
}

}  // namespace culua::detail::dist
