#include "core/ops/ops.hpp"

#include "core/runtime/capture.hpp"

#include <cmath>
#include <cstring>
#include <optional>

#include "core/base/error.hpp"
#include "core/base/interrupt.hpp"

namespace culua::detail {

namespace {

bool same_memory(const Array& a, const Array& b) {
  if (a.buffer() != b.buffer()) return false;
  const auto size = static_cast<int64_t>(itemsize(a.dtype()));
  const int64_t a0 = a.layout().extent_begin() * size, a1 = a.layout().extent_end() * size;
  const int64_t b0 = b.layout().extent_begin() * static_cast<int64_t>(itemsize(b.dtype()));
  const int64_t b1 = b.layout().extent_end() * static_cast<int64_t>(itemsize(b.dtype()));
  return a0 < b1 && b0 < a1;
}

bool same_layout(const Layout& a, const Layout& b) {
  if (a.ndim != b.ndim || a.offset != b.offset) return false;
  for (int i = 0; i < a.ndim; ++i) {
    const auto k = static_cast<size_t>(i);
    if (a.shape[k] != b.shape[k] || (a.shape[k] > 1 && a.strides[k] != b.strides[k])) return false;
  }
  return true;
}

// A synchronous copy between host and device memory queues the copy only once everything it
// depends on is done (an interruptible wait: nothing touching host memory is queued yet), then
// waits for the copy itself without interruption. An interrupted wait must never leave a copy
// into or out of host memory queued: that memory may be gone right after the throw (pageable
// memory is freed at once, a caller's buffer leaves its scope).
void wait_for_sync_copy(Stream& s) {
  InterruptScope uninterruptible(nullptr);
  s.synchronize();
}

void host_copy(Runtime& rt, const Array& dst, const Array& src) {
  wait_host_access(rt, *dst.buffer(), "a host copy");
  wait_host_access(rt, *src.buffer(), "a host copy");
  rt.host_math().copy_cast(dst.view(), src.view());
}

// A copy between two devices, queued on `s` (a stream of the destination's device): a strided
// source is first packed on its own device, the packed bytes move with Backend::memcpy_peer (peer
// access, or staged through host memory), and a strided or converting destination is filled
// from them by a copy on its device. The copy waits for the work queued on the source device's
// current stream (an event recorded there, waited for on `s`); the buffers record `s` among their
// uses, so that their frees wait for it.
void peer_copy(Runtime& rt, const Array& dst, const Array& src, Stream& s) {
  Backend& b = rt.backend();
  Stream& src_stream = rt.stream_for_device(src.device());
  Array packed = src;
  if (!src.is_contiguous()) {
    packed = empty(rt, src.shape(), src.dtype(), Location::Device, &src_stream);
    src.buffer()->record_use(src_stream);
    b.copy_cast(packed.view(), src.view(), src_stream);
  }
  auto ready = b.create_event(src.device(), false);
  rt.monitor().flush_recorded();
  ready->record(src_stream);
  s.wait(*ready);
  Array landed = dst;
  if (!dst.is_contiguous() || dst.dtype() != src.dtype()) {
    landed = empty(rt, dst.shape(), src.dtype(), Location::Device, &s);
  }
  packed.buffer()->record_use(s);
  if (packed.buffer() != src.buffer()) src.buffer()->record_use(s);
  landed.buffer()->record_use(s);
  dst.buffer()->record_use(s);
  b.memcpy_peer(landed.data(), dst.device(), packed.data(), src.device(), packed.nbytes(), s);
  if (landed.buffer() != dst.buffer()) b.copy_cast(dst.view(), landed.view(), s);
}

void device_copy(Runtime& rt, const Array& dst, const Array& src, Stream& s) {
  if (dst.device() != src.device()) {
    peer_copy(rt, dst, src, s);
    return;
  }
  Backend& b = rt.backend();
  dst.buffer()->record_use(s);
  src.buffer()->record_use(s);
  if (dst.dtype() == src.dtype() && dst.is_contiguous() && src.is_contiguous()) {
    b.memcpy(dst.data(), src.data(), dst.nbytes(), s, {});
    return;
  }
  b.copy_cast(dst.view(), src.view(), s);
}

void host_to_device(Runtime& rt, const Array& dst, const Array& src, Stream& s, bool async) {
  Backend& b = rt.backend();
  Array h = src;
  if (!src.is_contiguous()) {
    h = empty(rt, src.shape(), src.dtype(), src.location());
    host_copy(rt, h, src);
  }
  Array d = dst;
  if (!dst.is_contiguous() || dst.dtype() != h.dtype())
    d = empty(rt, dst.shape(), h.dtype(), Location::Device, &s);
  h.buffer()->record_use(s);
  d.buffer()->record_use(s);
  if (d.buffer() != dst.buffer()) dst.buffer()->record_use(s);
  if (!async) s.synchronize();
  b.memcpy(d.data(), h.data(), h.nbytes(), s, {Location::Device, h.location()});
  if (d.buffer() != dst.buffer()) b.copy_cast(dst.view(), d.view(), s);
  if (async) {
    h.buffer()->mark_pending(s);
  } else {
    wait_for_sync_copy(s);
  }
}

void device_to_host(Runtime& rt, const Array& dst, const Array& src, Stream& s, bool async) {
  Backend& b = rt.backend();
  Array d = src;
  src.buffer()->record_use(s);
  if (!src.is_contiguous() || src.dtype() != dst.dtype()) {
    d = empty(rt, src.shape(), dst.dtype(), Location::Device, &s);
    b.copy_cast(d.view(), src.view(), s);
  }
  Array h = dst;
  if (!dst.is_contiguous()) h = empty(rt, dst.shape(), dst.dtype(), Location::Pageable);
  if (!async) {
    h.buffer()->wait_idle();
    s.synchronize();
  }
  h.buffer()->record_use(s);
  b.memcpy(h.data(), d.data(), d.nbytes(), s, {h.location(), Location::Device});
  if (async) {
    h.buffer()->mark_pending(s);
    return;
  }
  wait_for_sync_copy(s);
  if (h.buffer() != dst.buffer()) host_copy(rt, dst, h);
}

// The number of values start + i*step below stop (above it for negative steps). A span that is
// not zero and has the step's sign holds at least `start`, also when span / step underflows to 0
// (cu.arange(0, 10, inf) is {0}, as numpy).
int64_t checked_count(const Scalar& start, const Scalar& stop, const Scalar& step) {
  const double span = stop.as_double() - start.as_double();
  double n = std::ceil(span / step.as_double());
  if (n == 0 && span != 0 && (span > 0) == (step.as_double() > 0)) n = 1;
  if (!(n < 9.2e18)) {
    fail(ErrorKind::Value,
         "the range from start {} to stop {} by step {} would have too many "
         "elements ({})",
         start.str(), stop.str(), step.str(), n);
  }
  return n > 0 ? static_cast<int64_t>(n) : 0;
}

bool fits(DType t, double v) {
  Scalar s = Scalar::real(v);
  unsigned char tmp[kMaxItemSize];
  try {
    encode_scalar(t, s, tmp);
  } catch (const Error&) {
    return false;
  }
  return true;
}

// A new 1-D array of n elements filled by `spec` (arange, linspace).
Array sequence(Runtime& rt, int64_t n, const SequenceSpec& spec, DType dtype, Location loc,
               Stream* stream) {
  Array out = empty(rt, Shape{n}, dtype, loc, stream);
  if (n == 0) return out;
  if (is_host(loc)) {
    rt.host_math().sequence(out.view(), spec);
  } else {
    // As every queued operation: the free waits for it, and a graph capturing it keeps `out`.
    Stream& s = stream_for(rt, out, stream);
    out.buffer()->record_use(s);
    rt.backend().sequence(out.view(), spec, s);
  }
  return out;
}

}  // namespace

Stream& stream_for(Runtime& rt, const Array& a, Stream* stream) {
  if (stream) {
    if (a.location() == Location::Device && stream->device() != a.device()) {
      fail(ErrorKind::Value, "the stream belongs to device {} but the array to device {}",
           stream->device(), a.device());
    }
    return *stream;
  }
  return a.location() == Location::Device ? rt.stream_for_device(a.device()) : rt.current_stream();
}

Array empty(Runtime& rt, const Shape& shape, DType dtype, Location loc, Stream* stream) {
  const int64_t n = checked_numel(shape, itemsize(dtype));
  const size_t bytes = static_cast<size_t>(n) * itemsize(dtype);
  std::shared_ptr<Buffer> buf;
  if (loc == Location::Device) {
    Stream& s = stream ? *stream : rt.current_stream();
    buf = rt.allocate(bytes, loc, s.device(), &s);
  } else {
    buf = rt.allocate(bytes, loc, rt.device(), nullptr);
  }
  return Array(std::move(buf), dtype, Layout::contiguous(shape));
}

Array full(Runtime& rt, const Shape& shape, DType dtype, const Scalar& value, Location loc,
           Stream* stream) {
  unsigned char bytes[kMaxItemSize];
  encode_scalar(dtype, value, bytes);  // check the value before allocating
  Array a = empty(rt, shape, dtype, loc, stream);
  fill(rt, a, value, stream);
  return a;
}

void fill(Runtime& rt, const Array& a, const Scalar& value, Stream* stream) {
  a.check_alive();
  unsigned char bytes[kMaxItemSize];
  encode_scalar(a.dtype(), value, bytes);
  if (a.size() == 0) return;
  if (is_host(a.location())) {
    wait_host_access(rt, *a.buffer(), "filling a host array");
    rt.host_math().fill(a.view(), bytes);
    return;
  }
  Stream& s = stream_for(rt, a, stream);
  a.buffer()->record_use(s);
  rt.backend().fill(a.view(), bytes, s);
}

Array arange(Runtime& rt, const Scalar& start, const Scalar& stop, const Scalar& step, DType dtype,
             Location loc, Stream* stream) {
  const char* names[] = {"start", "stop", "step"};
  const Scalar* args[] = {&start, &stop, &step};
  for (int k = 0; k < 3; ++k) {
    if (args[k]->kind == Scalar::Kind::Complex || args[k]->kind == Scalar::Kind::Bool) {
      fail(ErrorKind::Type, "{}: a real number expected, got {}", names[k], args[k]->str());
    }
    if (std::isnan(args[k]->as_double())) fail(ErrorKind::Value, "{} must not be NaN", names[k]);
  }
  if (step.as_double() == 0) fail(ErrorKind::Value, "step must not be zero");
  SequenceSpec spec;
  int64_t n = 0;
  const bool integral = start.kind == Scalar::Kind::Int && stop.kind == Scalar::Kind::Int &&
                        step.kind == Scalar::Kind::Int;
  const bool exact_target = is_integer(dtype) || dtype == DType::Bool;
  if (integral && exact_target) {
    // Exact integer arithmetic: counts and values past 2^53 must not round.
    spec.integral = true;
    spec.istart = start.i;
    spec.istep = step.i;
    // Exact in uint64: the distance between two int64 values always fits.
    uint64_t count = 0;
    if (step.i > 0 && stop.i > start.i) {
      const uint64_t span = static_cast<uint64_t>(stop.i) - static_cast<uint64_t>(start.i);
      count = (span - 1) / static_cast<uint64_t>(step.i) + 1;
    } else if (step.i < 0 && stop.i < start.i) {
      const uint64_t span = static_cast<uint64_t>(start.i) - static_cast<uint64_t>(stop.i);
      const uint64_t magnitude = static_cast<uint64_t>(-(step.i + 1)) + 1;
      count = (span - 1) / magnitude + 1;
    }
    if (count > static_cast<uint64_t>(INT64_MAX)) {
      fail(ErrorKind::Value,
           "the range from start {} to stop {} by step {} would have too many elements ({})",
           start.i, stop.i, step.i, count);
    }
    n = static_cast<int64_t>(count);
    if (n > 0) {
      const auto last =
          static_cast<int64_t>(static_cast<uint64_t>(start.i) +
                               static_cast<uint64_t>(n - 1) * static_cast<uint64_t>(step.i));
      for (const int64_t v : {start.i, last}) {
        unsigned char tmp[kMaxItemSize];
        try {
          encode_scalar(dtype, Scalar::integer(v), tmp);
        } catch (const Error&) {
          fail(ErrorKind::Value, "values from {} to {} do not fit in {}", start.i, last,
               name(dtype));
        }
      }
    }
  } else {
    spec.start = start.as_double();
    spec.step = step.as_double();
    n = checked_count(start, stop, step);
    if (n == 1) spec.step = 0;  // start alone: start + 0 * inf would be NaN
    if (exact_target && n > 0) {
      const double first = spec.start;
      const double last = first + static_cast<double>(n - 1) * spec.step;
      if (!fits(dtype, std::trunc(first)) || !fits(dtype, std::trunc(last))) {
        fail(ErrorKind::Value, "values from {} to {} do not fit in {}", first, last, name(dtype));
      }
    }
  }
  return sequence(rt, n, spec, dtype, loc, stream);
}

Array linspace(Runtime& rt, double a, double b, int64_t n, DType dtype, Location loc,
               Stream* stream) {
  if (n < 0) fail(ErrorKind::Value, "count {} is negative", n);
  SequenceSpec spec;
  spec.start = a;
  spec.step = n > 1 ? (b - a) / static_cast<double>(n - 1) : 0.0;
  spec.pin_last = n > 1;
  spec.stop = b;
  return sequence(rt, n, spec, dtype, loc, stream);
}

void copy(Runtime& rt, const Array& dst, const Array& src, Stream* stream) {
  dst.check_alive("the destination array");
  src.check_alive("the source array");
  if (!(dst.shape() == src.shape())) {
    fail(ErrorKind::Value, "shapes differ: destination {} and source {}", dst.shape().str(),
         src.shape().str());
  }
  if (dst.size() == 0) return;
  if (same_memory(dst, src)) {
    if (dst.dtype() == src.dtype() && same_layout(dst.layout(), src.layout())) return;
    // Overlapping views of one buffer: copy through a temporary.
    copy(rt, dst, clone(rt, src, stream), stream);
    return;
  }
  const bool dst_host = is_host(dst.location());
  const bool src_host = is_host(src.location());
  if (dst_host && src_host) {
    host_copy(rt, dst, src);
    return;
  }
  if (const Capture* c = Capture::active();
      c && !dst_host && !src_host && dst.device() != src.device()) {
    fail(ErrorKind::Capture,
         "a copy from device {} to device {} cannot be captured into {}: copy outside the "
         "graph's function",
         src.device(), dst.device(), c->label());
  }
  // Inside a graph's capture every copy is queued work (nothing can wait): a copy without
  // stream= goes to the current stream, asynchronously where the host side is pinned.
  if (!stream && Capture::active()) stream = &rt.current_stream();
  const Array& device_side = dst_host ? src : dst;
  Stream& s = stream_for(rt, device_side, stream);
  // Transfers are asynchronous only from or to pinned memory with a stream; the others wait.
  const bool async = stream && (dst_host ? dst.location() == Location::Pinned && dst.is_contiguous()
                                         : src.location() == Location::Pinned);
  std::optional<Monitor::Wait> wait;
  if (dst_host != src_host && !async) {
    const bool pageable = (dst_host ? dst : src).location() == Location::Pageable;
    const char* what = dst_host
                           ? (pageable ? "copying device memory to pageable host memory"
                                       : "copying device memory to host memory without stream=")
                           : (pageable ? "copying pageable host memory to the device"
                                       : "copying host memory to the device without stream=");
    wait.emplace(rt.monitor(), what, true);
  }
  if (dst_host != src_host && !stream) {
    // A synchronous transfer sees all the work issued before it on any stream, as an element
    // read does.
    device_side.buffer()->wait_idle();
  }
  if (!dst_host && !src_host) {
    device_copy(rt, dst, src, s);
  } else if (dst_host) {
    device_to_host(rt, dst, src, s, async);
  } else {
    host_to_device(rt, dst, src, s, async);
  }
}

Array contiguous(Runtime& rt, const Array& a, Stream* stream) {
  a.check_alive();
  if (a.is_contiguous()) return a;
  return clone(rt, a, stream);
}

Array clone(Runtime& rt, const Array& a, Stream* stream) {
  return astype(rt, a, a.dtype(), stream);
}

Array astype(Runtime& rt, const Array& a, DType dtype, Stream* stream) {
  a.check_alive();
  Stream* alloc_on = a.location() == Location::Device ? &stream_for(rt, a, stream) : nullptr;
  Array out = empty(rt, a.shape(), dtype, a.location(), alloc_on);
  copy(rt, out, a, stream);
  return out;
}

Array view_as(const Array& a, const Shape& shape) {
  a.check_alive();
  const Shape s = resolve_reshape(shape, a.size(), a.shape());
  if (!a.is_contiguous()) {
    fail(ErrorKind::Value, "view needs a contiguous array; use reshape() or contiguous()");
  }
  return a.with_layout(a.layout().reshaped(s));
}

Array reshape(Runtime& rt, const Array& a, const Shape& shape, Stream* stream) {
  a.check_alive();
  const Shape s = resolve_reshape(shape, a.size(), a.shape());
  if (a.is_contiguous()) return a.with_layout(a.layout().reshaped(s));
  Array c = clone(rt, a, stream);
  return c.with_layout(c.layout().reshaped(s));
}

Array to_location(Runtime& rt, const Array& a, Location loc, Stream* stream) {
  a.check_alive();
  Stream* alloc_on = nullptr;
  if (loc == Location::Device) alloc_on = stream ? stream : &rt.current_stream();
  Array out = empty(rt, a.shape(), a.dtype(), loc, alloc_on);
  copy(rt, out, a, stream);
  return out;
}

Scalar read_element(Runtime& rt, const Array& element) {
  element.check_alive();
  unsigned char bytes[kMaxItemSize];
  const size_t n = itemsize(element.dtype());
  if (is_host(element.location())) {
    wait_host_access(rt, *element.buffer(), "reading an element");
    std::memcpy(bytes, element.data(), n);
  } else {
    Monitor::Wait wait(rt.monitor(), "reading an element of a device array", true);
    Buffer& b = *element.buffer();
    Stream* last = b.last_use();
    if (last && !last->capture() && last->device() == element.device()) {
      // One round trip: the copy is queued behind the work on the stream that used the array
      // last (the other streams' work on it is waited for first: usually there is none), into
      // pinned memory of the runtime's, and one wait covers both. An interrupted wait leaves the
      // copy queued: the staging memory goes (freed after it) and the next read takes new memory.
      b.wait_idle_except(*last);
      std::shared_ptr<Buffer>& staging = rt.read_staging(element.device(), n);
      rt.backend().memcpy(staging->data(), element.data(), n, *last,
                          {Location::Pinned, Location::Device});
      staging->mark_pending(*last);
      struct Retire {  // an interrupted wait: the queued copy keeps this memory, not the next read
        std::shared_ptr<Buffer>& staging;
        bool done = false;
        ~Retire() {
          if (!done) staging.reset();
        }
      } retire{staging};
      last->synchronize();
      retire.done = true;
      std::memcpy(bytes, staging->data(), n);
    } else {
      b.wait_idle();
      Stream& s = rt.stream_for_device(element.device());
      b.record_use(s);
      s.synchronize();  // the copy into `bytes` (this frame) must not be left queued
      rt.backend().memcpy(bytes, element.data(), n, s, {Location::Pageable, Location::Device});
      wait_for_sync_copy(s);
    }
  }
  return decode_scalar(element.dtype(), bytes);
}

void write_element(Runtime& rt, const Array& element, const Scalar& value) {
  fill(rt, element, value, nullptr);
}

std::vector<unsigned char> read_contiguous(Runtime& rt, const Array& a) {
  a.check_alive();
  std::vector<unsigned char> out(a.nbytes());
  if (out.empty()) return out;
  Array host = Array::wrap(rt.backend_ptr(), out.data(), a.shape(), a.dtype(), Location::Pageable,
                           a.device());
  copy(rt, host, a, nullptr);
  return out;
}

void wait_host_access(Runtime& rt, Buffer& host_buffer, const char* what) {
  if (const Capture* c = Capture::active()) {
    fail(ErrorKind::Capture,
         "{} runs on the CPU when it is called, not when a graph launches, so it cannot be "
         "captured into {}; prepare host arrays outside the graph's function (copies between "
         "pinned host arrays and the device can be captured)",
         what, c->label());
  }
  if (!host_buffer.busy()) return;
  Monitor::Wait wait(rt.monitor(), what, true);
  host_buffer.wait_idle();
}

void sleep(Runtime& rt, double seconds, Stream* stream) {
  if (!(seconds >= 0) || seconds > 3600)
    fail(ErrorKind::Value, "time {} s is out of range", seconds);
  Stream& s = stream ? *stream : rt.current_stream();
  rt.backend().sleep(seconds, s);
}

}  // namespace culua::detail
