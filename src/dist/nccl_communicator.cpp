#include "dist/nccl_communicator.hpp"

#include <cuda_runtime.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "core/base/error.hpp"
#include "core/model/buffer.hpp"
#include "core/runtime/capture.hpp"
#include "core/runtime/graph.hpp"
#include "core/runtime/monitor.hpp"
#include "core/runtime/op_scope.hpp"
#include "cuda/scoped.hpp"
#include "dist/nccl_api.hpp"

namespace culua::detail::dist {

static_assert(nccl_type::Int8 == ncclInt8 && nccl_type::Uint8 == ncclUint8 &&
              nccl_type::Int32 == ncclInt32 && nccl_type::Uint32 == ncclUint32 &&
              nccl_type::Int64 == ncclInt64 && nccl_type::Uint64 == ncclUint64 &&
              nccl_type::Float16 == ncclFloat16 && nccl_type::Float32 == ncclFloat32 &&
              nccl_type::Float64 == ncclFloat64 && nccl_type::Bfloat16 == ncclBfloat16);

namespace {

using cuda::DeviceScope;

ncclRedOp_t to_nccl(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
      return ncclSum;
    case ReduceOp::Prod:
      return ncclProd;
    case ReduceOp::Max:
      return ncclMax;
    case ReduceOp::Min:
      return ncclMin;
    case ReduceOp::Avg:
      return ncclAvg;
  }
  return ncclSum;
}

[[noreturn]] void nccl_fail(const NcclApi& api, ncclResult_t r, const char* what,
                            ncclComm_t comm = nullptr) {
  const char* detail = api.get_last_error(comm);
  fail(ErrorKind::Device, "{} failed: {}{}{}", what, api.get_error_string(r),
       detail && *detail ? ": " : "", detail ? detail : "");
}

void check(const NcclApi& api, ncclResult_t r, const char* what, ncclComm_t comm = nullptr) {
  if (r != ncclSuccess && r != ncclInProgress) nccl_fail(api, r, what, comm);
}

// A device made current for NCCL calls (NCCL saves and restores the runtime's current device; a
// thread with no context would otherwise get device 0's).
struct CurrentDevice {
  explicit CurrentDevice(int device) : scope(device, std::nothrow) {
    if (!scope.ok()) fail(ErrorKind::Device, "cannot make device {} current", device);
  }
  DeviceScope scope;
};

// Communicators collected while their work may still run (NcclCommunicator::release).
struct Retired {
  std::vector<ncclComm_t> comms;
  std::vector<int> devices;
  std::vector<std::shared_ptr<Stream>> streams;
  std::vector<std::weak_ptr<GraphTag>> graphs;
};
// Never destroyed: nothing retired is released (no CUDA call) at the process's exit.
std::vector<Retired>& retired() {
  static auto* list = new std::vector<Retired>();
  return *list;
}

void destroy_comms(const NcclApi& api, std::vector<ncclComm_t>& comms,
                   const std::vector<int>& devices) noexcept {
  for (size_t i = 0; i < comms.size(); ++i) {
    if (!comms[i]) continue;
    DeviceScope scope(devices[i], std::nothrow);
    if (scope.ok()) api.comm_destroy(comms[i]);
    comms[i] = nullptr;
  }
}

// Destroys the retired communicators whose streams are idle and whose graphs are gone.
void reap_retired(const NcclApi& api) noexcept {
  if (Capture::active()) return;
  auto& list = retired();
  for (size_t i = 0; i < list.size();) {
    Retired& r = list[i];
    bool idle = true;
    for (const auto& g : r.graphs) idle = idle && g.expired();
    for (const auto& st : r.streams) {
      if (!idle) break;
      try {
        idle = st->query();
      } catch (const std::exception&) {
        idle = false;
      }
    }
    if (!idle) {
      ++i;
      continue;
    }
    destroy_comms(api, r.comms, r.devices);
    list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(Runtime& rt, std::vector<int> devices, int size, int first_rank,
                   const CommOptions& options)
      : rt_(rt),
        api_(nccl_api()),
        devices_(std::move(devices)),
        size_(size),
        first_rank_(first_rank),
        timeout_(options.timeout),
        comms_(devices_.size(), nullptr) {}
  ~NcclCommunicator() override { release(); }

  // Every rank in this process and no timeout: ncclCommInitAll, as a native program would make
  // them.
  void init_all() {
    CurrentDevice current(devices_[0]);
    const ncclResult_t r =
        api_.comm_init_all(comms_.data(), static_cast<int>(devices_.size()), devices_.data());
    if (r != ncclSuccess) {
      abort_all();
      nccl_fail(api_, r, "creating the communicator");
    }
  }

  // Creates the communicators of the local ranks (one NCCL group), from `id`.
  void init(const ncclUniqueId& id) {
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = timeout_ > 0 ? 0 : 1;
    CurrentDevice current(devices_[0]);
    ncclResult_t r = api_.group_start();
    check(api_, r, "ncclGroupStart");
    ncclResult_t first_error = ncclSuccess;
    for (size_t i = 0; i < devices_.size(); ++i) {
      DeviceScope scope(devices_[i], std::nothrow);
      r = api_.comm_init_rank_config(&comms_[i], size_, id, first_rank_ + static_cast<int>(i),
                                     &config);
      if (r != ncclSuccess && r != ncclInProgress && first_error == ncclSuccess) first_error = r;
    }
    r = api_.group_end();
    if (first_error != ncclSuccess || (r != ncclSuccess && r != ncclInProgress)) {
      abort_all();
      nccl_fail(api_, first_error != ncclSuccess ? first_error : r, "creating the communicator");
    }
    wait_ready("creating the communicator");
  }

  int size() const override { return size_; }
  const std::vector<int>& devices() const override { return devices_; }
  int first_rank() const override { return first_rank_; }
  bool freed() const override { return freed_; }

  std::vector<Array> run(const CollectiveCall& call) override {
    check_usable();
    check_call(call, devices_, size_);
    const size_t n = devices_.size();
    if ((call.kind == Collective::Send || call.kind == Collective::Recv) && group_depth_ == 0) {
      for (int peer : call.peers) {
        if (n > 1 || (peer >= first_rank_ && peer < first_rank_ + static_cast<int>(n))) {
          fail(ErrorKind::Value,
               "a send or recv between ranks of this process would wait forever for its other "
               "half: issue both inside comm:group(function() ... end)");
        }
      }
    }
    std::vector<Array> outputs = call.outputs.empty() ? call.inputs : call.outputs;
    std::vector<Stream*> streams(n);
    for (size_t i = 0; i < n; ++i) {
      streams[i] = !call.streams.empty() && call.streams[i] ? call.streams[i]
                                                            : &rt_.stream_for_device(devices_[i]);
    }
    const WireType wire = wire_type(call.inputs[0].dtype(), call.kind, call.op);
    const auto type = static_cast<ncclDataType_t>(wire.nccl_type);
    const size_t in_count = static_cast<size_t>(call.inputs[0].size()) * wire.per_item;
    const size_t out_count = static_cast<size_t>(outputs[0].size()) * wire.per_item;
    const OpInfo info{collective_name(call.kind), OpCategory::Library,
                      static_cast<uint64_t>(call.inputs[0].nbytes() + outputs[0].nbytes())};
    for (size_t i = 0; i < n; ++i) {
      call.inputs[i].buffer()->record_use(*streams[i]);
      outputs[i].buffer()->record_use(*streams[i]);
      remember(*streams[i]);
    }
    // The average over one rank is the sum. NCCL 2.28.3's one-rank average out of place leaves
    // the last element of some sizes unwritten (f64 65537, f32 131073: seen on an H200, driver
    // 580.159); the sum is the same value by another path.
    const ncclRedOp_t red_op = size_ == 1 && call.op == ReduceOp::Avg ? ncclSum : to_nccl(call.op);
    CurrentDevice current(devices_[0]);
    // What cu.fuse recorded runs first (the collective may read it), once, outside NCCL's group.
    rt_.monitor().flush_recorded();
    check(api_, api_.group_start(), "ncclGroupStart");
    ncclResult_t error = ncclSuccess;
    size_t failed_rank = 0;
    for (size_t i = 0; i < n && error == ncclSuccess; ++i) {
      // Reported as the observed backend reports an operation, plus NCCL's calls and bytes (what
      // cu.fuse recorded ran above, before the group).
      const uint64_t bytes = call.inputs[i].nbytes();
      OpScope scope(rt_.monitor(), *streams[i], info, {.flush_recorded = false},
                    [bytes](Ledger& l) {
                      ++l.nccl_calls;
                      l.nccl_bytes += bytes;
                    });
      const void* in = call.inputs[i].data();
      void* out = outputs[i].data();
      auto s = static_cast<cudaStream_t>(streams[i]->native_handle());
      ncclComm_t comm = comms_[i];
      ncclResult_t r = ncclSuccess;
      switch (call.kind) {
        case Collective::AllReduce:
          r = api_.all_reduce(in, out, in_count, type, red_op, comm, s);
          break;
        case Collective::Reduce:
          r = api_.reduce(in, out, in_count, type, red_op, call.root, comm, s);
          break;
        case Collective::Broadcast:
          r = api_.broadcast(in, out, in_count, type, call.root, comm, s);
          break;
        case Collective::AllGather:
          r = api_.all_gather(in, out, in_count, type, comm, s);
          break;
        case Collective::ReduceScatter:
          r = api_.reduce_scatter(in, out, out_count, type, red_op, comm, s);
          break;
        case Collective::Send:
          r = api_.send(in, in_count, type, call.peers[i], comm, s);
          break;
        case Collective::Recv:
          r = api_.recv(out, in_count, type, call.peers[i], comm, s);
          break;
      }
      if (r != ncclSuccess && r != ncclInProgress) {
        error = r;
        failed_rank = i;
      }
    }
    const ncclResult_t end = api_.group_end();
    if (error != ncclSuccess)
      nccl_fail(api_, error, collective_name(call.kind), comms_[failed_rank]);
    if (end != ncclSuccess && end != ncclInProgress) {
      nccl_fail(api_, end, collective_name(call.kind), comms_[0]);
    }
    if (group_depth_ == 0) wait_ready(collective_name(call.kind));
    return outputs;
  }

  void group(const std::function<void()>& fn) override {
    check_usable();
    // Ends the group also when fn raises (a Lua error is a C++ exception here): NCCL then launches
    // what was queued.
    struct Group {
      NcclCommunicator& c;
      ncclResult_t& end;
      Group(NcclCommunicator& comm, ncclResult_t& result) : c(comm), end(result) {
        check(c.api_, c.api_.group_start(), "ncclGroupStart");
        ++c.group_depth_;
      }
      ~Group() {
        --c.group_depth_;
        end = c.api_.group_end();
      }
      Group(const Group&) = delete;
      Group& operator=(const Group&) = delete;
    };
    ncclResult_t end = ncclSuccess;
    {
      CurrentDevice current(devices_[0]);
      Group g(*this, end);
      fn();
    }
    if (end != ncclSuccess && end != ncclInProgress) nccl_fail(api_, end, "the group", comms_[0]);
    if (group_depth_ == 0) wait_ready("the group");
  }

  void sync() override {
    check_usable();
    Monitor::Wait wait(rt_.monitor(), "comm:sync", false);
    const auto t0 = std::chrono::steady_clock::now();
    for (;;) {
      poll_errors("waiting for the communicator");
      bool busy = false;
      for (const auto& s : streams_) busy = busy || !s->query();
      if (!busy) {
        reap_retired(api_);
        return;
      }
      if (timeout_ > 0 && seconds_since(t0) > timeout_) timed_out("waiting for its work");
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

  void free() override {
    if (freed_) return;
    for (const auto& g : graphs_) {
      if (auto tag = g.lock()) {
        fail(ErrorKind::Value,
             "the communicator is used by {}; free the graph first (its launches use it)",
             tag->label);
      }
    }
    if (!aborted_) sync();
    destroy();
    reap_retired(api_);
  }

  // Never destroys here: ncclCommDestroy frees device memory (cudaFree waits for the device) and
  // may wait for queued work. The communicator is retired instead and destroyed at the next
  // explicit point (a new communicator, comm:free(), comm:sync()) once its streams are idle and no
  // graph uses it; what is still retired at the process's end is left to it.
  void release() noexcept override {
    if (freed_) return;
    freed_ = true;
    if (!aborted_) {
      try {
        retired().push_back(Retired{comms_, devices_, streams_, graphs_});
      } catch (const std::exception&) {
        // out of memory: the communicator is left to the process's end
      }
    }
    for (ncclComm_t& c : comms_) c = nullptr;
    streams_.clear();
  }

 private:
  void check_usable() const {
    if (freed_) fail_released("communicator");
    if (aborted_) {
      fail(ErrorKind::Device, "the communicator was aborted after an error or a timeout: {}",
           abort_reason_);
    }
  }

  void remember(Stream& s) {
    if (Capture* c = s.capture()) {
      bool known = false;
      for (const auto& g : graphs_) known = known || g.lock() == c->tag();
      if (!known) graphs_.push_back(c->tag());
      return;
    }
    for (const auto& k : streams_) {
      if (k.get() == &s) return;
    }
    streams_.push_back(s.shared_from_this());
  }

  // Throws (after aborting) when a communicator reports an asynchronous error; true while some
  // operation of a nonblocking communicator is still in progress.
  bool poll_errors(const char* what) {
    bool in_progress = false;
    for (size_t i = 0; i < comms_.size(); ++i) {
      ncclResult_t state = ncclSuccess;
      const ncclResult_t r = api_.comm_get_async_error(comms_[i], &state);
      if (r != ncclSuccess) state = r;
      if (state == ncclInProgress) {
        in_progress = true;
      } else if (state != ncclSuccess) {
        const char* detail = api_.get_last_error(comms_[i]);
        abort_reason_ = fmt::format("{} failed: {}{}{}", what, api_.get_error_string(state),
                                    detail && *detail ? ": " : "", detail ? detail : "");
        abort_all();
        fail(ErrorKind::Device, "{}", abort_reason_);
      }
    }
    return in_progress;
  }

  // A nonblocking communicator's calls return before NCCL is done with them: waits (up to the
  // timeout) until none is in progress.
  void wait_ready(const char* what) {
    if (timeout_ <= 0) return;
    const auto t0 = std::chrono::steady_clock::now();
    while (poll_errors(what)) {
      if (seconds_since(t0) > timeout_) timed_out(what);
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }

  [[noreturn]] void timed_out(const char* what) {
    abort_reason_ = fmt::format(
        "{} did not complete within {} s (timeout=): a rank may be missing or the arrays may not "
        "match across ranks",
        what, timeout_);
    abort_all();
    fail(ErrorKind::Device, "{}; the communicator was aborted", abort_reason_);
  }

  void abort_all() noexcept {
    for (ncclComm_t& c : comms_) {
      if (c) api_.comm_abort(c);
      c = nullptr;
    }
    aborted_ = true;
  }

  void destroy() noexcept {
    destroy_comms(api_, comms_, devices_);
    streams_.clear();
    freed_ = true;
  }

  Runtime& rt_;
  const NcclApi& api_;
  std::vector<int> devices_;
  int size_;
  int first_rank_;
  double timeout_;
  std::vector<ncclComm_t> comms_;
  std::vector<std::shared_ptr<Stream>> streams_;  // streams with work using the communicator
  std::vector<std::weak_ptr<GraphTag>> graphs_;   // graphs whose launches use it
  int group_depth_ = 0;
  bool freed_ = false;
  bool aborted_ = false;
  std::string abort_reason_;
};

}  // namespace

std::string nccl_version_string() {
  const NcclApi& api = nccl_api();
  int v = 0;
  check(api, api.get_version(&v), "ncclGetVersion");
  // NCCL_VERSION(X,Y,Z): X*10000 + Y*100 + Z since 2.9 (X*1000 + Y*100 + Z before).
  if (v >= 20900) return fmt::format("{}.{}.{}", v / 10000, (v % 10000) / 100, v % 100);
  return fmt::format("{}.{}.{}", v / 1000, (v % 1000) / 100, v % 100);
}

std::string nccl_unique_id() {
  const NcclApi& api = nccl_api();
  ncclUniqueId id;
  check(api, api.get_unique_id(&id), "ncclGetUniqueId");
  return std::string(id.internal, sizeof(id.internal));
}

std::shared_ptr<Communicator> make_nccl_local(Runtime& rt, const std::vector<int>& devices,
                                              const CommOptions& options) {
  const NcclApi& api = nccl_api();
  reap_retired(api);
  auto c =
      std::make_shared<NcclCommunicator>(rt, devices, static_cast<int>(devices.size()), 0, options);
  if (options.timeout <= 0) {
    c->init_all();
    return c;
  }
  ncclUniqueId id;
  check(api, api.get_unique_id(&id), "ncclGetUniqueId");
  c->init(id);
  return c;
}

std::shared_ptr<Communicator> make_nccl_rank(Runtime& rt, const std::string& id, int nranks,
                                             int rank, int device, const CommOptions& options) {
  ncclUniqueId uid;
  if (id.size() != sizeof(uid.internal)) {
    fail(ErrorKind::Value, "the NCCL id must be {} bytes (from unique_id()), got {}",
         sizeof(uid.internal), id.size());
  }
  std::memcpy(uid.internal, id.data(), sizeof(uid.internal));
  reap_retired(nccl_api());
  auto c = std::make_shared<NcclCommunicator>(rt, std::vector<int>{device}, nranks, rank, options);
  c->init(uid);
  return c;
}

}  // namespace culua::detail::dist
