// Collectives between devices (cu.nccl): the communicator interface, the reduction operators, how
// each dtype travels, and the checks of a call made before anything is queued. This part needs
// neither CUDA nor NCCL (it is built everywhere and unit-tested without a GPU); the NCCL
// communicator itself lives in nccl_communicator.cpp, built with the CUDA backend only.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/array.hpp"
#include "core/runtime/runtime.hpp"

namespace culua::detail::dist {

enum class ReduceOp : uint8_t { Sum, Prod, Max, Min, Avg };
// "sum" -> Sum; throws Error(Value) "expected one of sum, prod, max, min, avg, got 'x'".
ReduceOp parse_reduce_op(std::string_view name);
const char* reduce_op_name(ReduceOp op);

enum class Collective : uint8_t {
  AllReduce,
  Reduce,
  Broadcast,
  AllGather,
  ReduceScatter,
  Send,
  Recv
};
// The name in traces and messages: "nccl.allreduce".
const char* collective_name(Collective c);
bool reduces(Collective c);  // allreduce, reduce, reducescatter

// How arrays of one dtype travel through NCCL: as `per_item` elements of the ncclDataType_t
// `nccl_type` each. Reductions need a type NCCL reduces (complex numbers as pairs of reals, for
// sum and avg only); data movement (broadcast, allgather, send/recv) moves any dtype as bytes.
struct WireType {
  int nccl_type;  // an ncclDataType_t value
  int per_item;
};
// Throws Error(Type) naming the dtype and the collective when it cannot travel.
WireType wire_type(DType t, Collective c, ReduceOp op);

// The ncclDataType_t values (nccl.h; nccl_communicator.cpp checks them against the header).
namespace nccl_type {
inline constexpr int Int8 = 0, Uint8 = 1, Int32 = 2, Uint32 = 3, Int64 = 4, Uint64 = 5, Float16 = 6,
                     Float32 = 7, Float64 = 8, Bfloat16 = 9;
}

// One collective of a communicator: one input per local rank (in the communicator's order), the
// outputs (empty: in place, only for allreduce, reduce and broadcast), the streams to queue on
// (null entries: the current stream of each array's device).
struct CollectiveCall {
  Collective kind = Collective::AllReduce;
  ReduceOp op = ReduceOp::Sum;
  int root = 0;            // reduce, broadcast: a rank
  std::vector<int> peers;  // send, recv: the peer rank of each local rank
  std::vector<Array> inputs;
  std::vector<Array> outputs;
  std::vector<Stream*> streams;
};

// The elements of each output for `input_size` elements in per rank over `nranks` ranks (allgather:
// n times, reducescatter: 1/n, others the same). Throws Error(Value) when reducescatter's input
// does not divide.
int64_t output_size(Collective c, int64_t input_size, int nranks);

// Every check made before anything is queued: one live contiguous device array per local rank, on
// that rank's device (`devices`), equal sizes and dtypes, outputs of the right size and dtype,
// streams on the right devices, root/peer in range (`nranks` ranks in all), a dtype that can
// travel. Throws Error (Value, Type, Released) with the offending rank in the message.
void check_call(const CollectiveCall& call, const std::vector<int>& devices, int nranks);
// The same without the outputs (checked before allocating them).
void check_inputs(const CollectiveCall& call, const std::vector<int>& devices, int nranks);

struct CommOptions {
  double timeout = 0;  // seconds; > 0: a nonblocking communicator whose waits give up
};

// A communicator: `local_ranks()` ranks driven by this process, one device each, of `size()` in
// all.
class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int size() const = 0;                         // ranks in all
  virtual const std::vector<int>& devices() const = 0;  // the device of each local rank
  virtual int first_rank() const = 0;                   // the rank of the first local device
  virtual bool freed() const = 0;
  // Queues the collective (after check_call); returns the outputs (the inputs when in place).
  virtual std::vector<Array> run(const CollectiveCall& call) = 0;
  // Everything `fn` queues is one NCCL group (ncclGroupStart/End): pairs of send and recv between
  // ranks of this process must be issued in one.
  virtual void group(const std::function<void()>& fn) = 0;
  // Waits for the work queued using the communicator (an explicit wait; with a timeout it gives up
  // after `timeout` seconds, aborting the communicator, and throws).
  virtual void sync() = 0;
  // Waits for the queued work using the communicator, then destroys it. Idempotent. Throws when a
  // graph captured with it is still alive.
  virtual void free() = 0;
  // For finalizers: never throws nor waits; the communicator is destroyed once its work is done.
  virtual void release() noexcept = 0;

  // One process driving `devices` (distinct device indices). Throws Error naming the problem.
  static std::shared_ptr<Communicator> local(Runtime& rt, const std::vector<int>& devices,
                                             const CommOptions& options = {});
  // A world whose ranks are processes (cu.nccl.comm_world): one process calls unique_id() (the
  // bytes of an ncclUniqueId) and sends it to all (through MPI); each then calls rank_of with its
  // rank of `nranks` and its device. Collective: returns once every rank has joined.
  static std::string unique_id(Runtime& rt);
  static std::shared_ptr<Communicator> rank_of(Runtime& rt, const std::string& id, int nranks,
                                               int rank, int device,
                                               const CommOptions& options = {});
};

// Why cu.nccl cannot run here ("this build has no CUDA backend", "the host backend runs", the
// loader's message), or empty when it can (the library is loaded to find out).
std::string nccl_unavailable(Runtime& rt);
// NCCL's version as "2.27.7"; throws as nccl_unavailable would say.
std::string nccl_version(Runtime& rt);

}  // namespace culua::detail::dist
