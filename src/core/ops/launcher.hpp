// Launcher: how every array operation of the core reaches the machine. It decides where the work
// runs (host arrays on the calling thread, device arrays on a stream of their device), makes the
// new arrays there, waits for the queued work on host arrays before the host math touches them,
// records the use of device buffers on the stream (stream-ordered frees, graph captures), and hands
// the call description to the host math or the backend. Also here: the fixed list of an
// operation's arrays, the overlap test, and the out= destination of the reductions, scans and
// products (the result written into out directly, or computed apart, converted and copied in).
// Header-only where it is on the elementwise path: a launch costs what the hand-written calls did
// (no allocation, no indirection beyond the backend's own virtual call).
#pragma once

#include <cstddef>
#include <initializer_list>
#include <optional>

#include "core/backend/backend.hpp"
#include "core/model/array.hpp"
#include "core/ops/ops.hpp"
#include "core/runtime/runtime.hpp"

namespace culua::detail {

// The arrays of one operation (at most N of them), without a heap allocation.
template <size_t N>
class ArrayList {
 public:
  ArrayList() = default;
  ArrayList(std::initializer_list<const Array*> arrays) {
    for (const Array* a : arrays) push(a);
  }
  void push(const Array* a) { a_[n_++] = a; }
  const Array* const* begin() const { return a_; }
  const Array* const* end() const { return a_ + n_; }

 private:
  const Array* a_[N] = {};
  size_t n_ = 0;
};

// Do the memory ranges that two views span overlap? (An empty view spans no element but sits at
// its offset: inside another view's range it counts as overlapping.)
inline bool overlaps(const Array& a, const Array& b) {
  if (a.buffer() != b.buffer()) return false;
  const auto sa = static_cast<int64_t>(itemsize(a.dtype()));
  const auto sb = static_cast<int64_t>(itemsize(b.dtype()));
  return a.layout().extent_begin() * sa < b.layout().extent_end() * sb &&
         b.layout().extent_begin() * sb < a.layout().extent_end() * sa;
}

// The backend's and the host math's entry for each call description. Products and transforms run
// on devices only: they have no host entry.
struct CallEntry {
  static void queue(Backend& b, const ElementwiseCall& c, Stream& s) { b.elementwise(c, s); }
  static void queue(Backend& b, const ReduceCall& c, Stream& s) { b.reduce(c, s); }
  static void queue(Backend& b, const ScanCall& c, Stream& s) { b.scan(c, s); }
  static void queue(Backend& b, const SortCall& c, Stream& s) { b.sort(c, s); }
  static void queue(Backend& b, const GatherCall& c, Stream& s) { b.gather(c, s); }
  static void queue(Backend& b, const RandomCall& c, Stream& s) { b.random(c, s); }
  static void queue(Backend& b, const FftCall& c, Stream& s) { b.fft(c, s); }
  static void queue(Backend& b, const MatmulCall& c, Stream& s) { b.matmul(c, s); }
  static void queue(Backend& b, const DotCall& c, Stream& s) { b.dot(c, s); }
  static void compute(HostExecutor& h, const ElementwiseCall& c) { h.elementwise(c); }
  static void compute(HostExecutor& h, const ReduceCall& c) { h.reduce(c); }
  static void compute(HostExecutor& h, const ScanCall& c) { h.scan(c); }
  static void compute(HostExecutor& h, const SortCall& c) { h.sort(c); }
  static void compute(HostExecutor& h, const GatherCall& c) { h.gather(c); }
  static void compute(HostExecutor& h, const RandomCall& c) { h.random(c); }
};

namespace launch_detail {

// Calls f on each array of `arrays`: an array, a pointer to one (null: none), an ArrayList, or a
// range of arrays (a std::vector<Array> of temporaries).
template <class F>
void each(const Array& a, F& f) {
  f(a);
}
template <class F>
void each(const Array* a, F& f) {
  if (a) f(*a);
}
template <size_t N, class F>
void each(const ArrayList<N>& list, F& f) {
  for (const Array* a : list) f(*a);
}
template <class R, class F>
requires requires(const R& r) {
  r.begin();
  r.end();
}
void each(const R& range, F& f) {
  for (const auto& a : range) each(a, f);
}

}  // namespace launch_detail

// The place of one operation's work and the steps of its launch (see the file's comment).
class Launcher {
 public:
  // Work on `first`'s side: on the calling thread when it is a host array, else on `stream` (which
  // must belong to its device) or its device's current stream. `host_what` names the operation in
  // the messages of the waits for host arrays ("a host reduction"); device-only operations
  // (products, transforms) leave it out.
  Launcher(Runtime& rt, const Array& first, Stream* stream, const char* host_what = "")
      : Launcher(rt, Side{&first, is_host(first.location())}, stream, host_what) {}

  Runtime& runtime() const { return rt_; }
  bool host() const { return host_; }
  // The stream of device work; null for host work.
  Stream* stream() const { return s_; }
  // The array whose side the work is on.
  const Array& first() const { return *first_; }

  // A new array where the work runs (pageable memory for host work).
  Array empty(const Shape& shape, DType dtype) const {
    return detail::empty(rt_, shape, dtype, host_ ? Location::Pageable : Location::Device, s_);
  }

  // Host work: waits until the work queued on these host arrays is done (an implicit
  // synchronization, refused under cu.strict and in a capture). Device work: nothing.
  template <class... Arrays>
  void wait(const Arrays&... arrays) const {
    if (!host_) return;
    [[maybe_unused]] auto f = [this](const Array& a) { wait_host_access(rt_, *a.buffer(), what_); };
    (launch_detail::each(arrays, f), ...);
  }

  // Device work: records the use of these arrays' buffers on the stream (their frees wait for the
  // work; a capture keeps them). Host work: nothing.
  template <class... Arrays>
  void record(const Arrays&... arrays) const {
    if (!host_) record_on_stream(arrays...);
  }

  // Host work: the host math computes `c` now (after wait() for the arrays it touches). Device
  // work: the use of `used` is recorded on the stream, then the backend queues `c`.
  template <class Call, class... Arrays>
  void run(const Call& c, const Arrays&... used) const {
    if (host_) {
      CallEntry::compute(rt_.host_math(), c);
      return;
    }
    queue(c, used...);
  }

  // Device work only (products, transforms): records the use of `used`, then queues `c`.
  template <class Call, class... Arrays>
  void queue(const Call& c, const Arrays&... used) const {
    record_on_stream(used...);
    CallEntry::queue(rt_.backend(), c, *s_);
  }

 protected:
  // The array the work follows and whether it is a host array, for launchers that learn both
  // while they check their operands.
  struct Side {
    const Array* first;
    bool host;
  };
  Launcher(Runtime& rt, Side side, Stream* stream, const char* host_what)
      : rt_(rt), first_(side.first), what_(host_what), host_(side.host) {
    if (!host_) s_ = &stream_for(rt, *first_, stream);
  }

 private:
  template <class... Arrays>
  void record_on_stream(const Arrays&... arrays) const {
    [[maybe_unused]] auto f = [this](const Array& a) { a.buffer()->record_use(*s_); };
    (launch_detail::each(arrays, f), ...);
  }

  Runtime& rt_;
  const Array* first_;
  const char* what_;
  Stream* s_ = nullptr;
  bool host_;
};

// Where an operation with an optional out= array puts its result: straight into out when out has
// the result's dtype, nothing converts the result afterwards and out shares no element with what
// the operation reads (the kernels never write memory they read); else into a new array, which
// finish() converts to `convert_to` (when set) and copies into out (numpy's casting on output).
class Destination {
 public:
  Destination(const Array* out, DType result, std::optional<DType> convert_to,
              std::initializer_list<const Array*> reads);

  // out itself, or a new array of `shape` where the launcher works.
  Array array(const Launcher& l, const Shape& shape) const {
    return direct_ ? *out_ : l.empty(shape, result_);
  }
  bool direct() const { return direct_; }
  // What the operation returns: out (the result converted and copied in, unless it was written
  // there directly), or the result, converted when asked. `stream`: the launcher's.
  Array finish(Runtime& rt, Array result, Stream* stream) const;

 private:
  const Array* out_;
  DType result_;
  std::optional<DType> convert_to_;
  bool direct_;
};

// The out= checks of the reductions and scans: `out` has the result's shape (of operation `op`,
// named in the message) and is where `input` is (device or host, and on its device).
void check_out_place(const Array& out, const Shape& shape, const Array& input, const char* op);

}  // namespace culua::detail
