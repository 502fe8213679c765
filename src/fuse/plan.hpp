// The fusion engine's plan (docs/fusion.md): a tape of resolved elementwise operations, each
// already type-checked and broadcast by the core (core/backend/elementwise_call.hpp), cut into
// groups that may run as one pass over their elements. No Lua here.
//
// A group is a run of operations on one stream over one iteration space (the same output shape),
// in which every two accesses to overlapping memory, one of them a write, go through the identical
// view (same address, dtype, shape and strides): element i of a value written in the group is read
// later only as element i. Then running the group tile by tile (every operation over tile 1, then
// every operation over tile 2, ...) gives exactly what running the operations one after another
// over all elements gives.
//
// Around that body a group may have a **prologue**: 0-d operations on 0-d values (coefficients
// computed on the device) that came just before it, recomputed by every element of a generated
// kernel instead of running as a kernel of their own; and an **epilogue**: a whole-array reduction
// of a value of the body's shape, then 0-d operations on its result (the post-map, such as a
// division by the count), run by a second, one-block kernel after the body's; or a reduction
// along axes of such a value (no post-map).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/backend/elementwise_call.hpp"
#include "core/backend/reduce_call.hpp"

namespace culua::detail {
class Backend;
class Stream;
}  // namespace culua::detail

namespace culua::detail::fuse {

// The most operations one group holds (bounds a generated kernel's parameters).
inline constexpr size_t kMaxGroupOps = 96;
// The most weight one group holds (op_weight): NVRTC's time grows faster than the kernel, so a
// group of many transcendental functions is cut (56 complex functions in one kernel took minutes
// to compile where each alone takes a fraction of a second).
inline constexpr int kMaxGroupWeight = 96;
// The most weight of a group whose threads do chunks of several elements (each element of a chunk
// is a copy of the group's code).
inline constexpr int kMaxChunkWeight = 64;
// The most 0-d operations after a group's reduction (its post-map).
inline constexpr size_t kMaxPostOps = 16;

// An operation's weight in a generated kernel: 1 for arithmetic, comparisons and the like, 4 for a
// real transcendental function (exp, sqrt, pow, hypot, ...), 8 for one on complex values.
int op_weight(const ElementwiseCall& c);

// The bytes a view touches, [lo, hi) (empty for no elements).
struct Span {
  uintptr_t lo = 0, hi = 0;
  bool overlaps(const Span& o) const { return lo < o.hi && o.lo < hi; }
  bool contains(const Span& o) const { return lo <= o.lo && o.hi <= hi; }
};
Span span_of(const StridedView& v);

// One recorded operation: an elementwise call, or (reduce >= 0) the reduction reduces[reduce] of
// the recorder's list (Tape::reduces).
struct Entry {
  ElementwiseCall call;
  Stream* stream = nullptr;
  int32_t reduce = -1;

  Entry() = default;
  // Built in place in the tape (emplace_back): the call, several hundred bytes, is copied once.
  Entry(const ElementwiseCall& c, Stream* s) : call(c), stream(s) {}
};

struct Tape {
  std::vector<Entry> entries;
  std::vector<ReduceCall> reduces;
  void clear() {
    entries.clear();
    reduces.clear();
  }
};

// True for the reductions a group may end with, over the whole array or along axes: every op of
// the op table (sum, prod, mean, norm, max, min, argmax, argmin, var, std, any, all, nan*) on
// every dtype it accepts.
bool fusable_reduction(const ReduceCall& r);

// Why a group ended before the next operation (Barrier::None: the tape's end).
enum class Barrier : uint8_t { None, Stream, Shape, Alias, Size, Epilogue, Reduction };
const char* barrier_text(Barrier b);

// Tape entries [first, first + count): `prologue` 0-d operations, the body, then with `reduces`
// the reduction and `post` 0-d operations on its result.
struct Group {
  size_t first = 0, count = 0;
  Barrier ends = Barrier::None;
  size_t prologue = 0;
  size_t post = 0;
  bool reduces = false;
  // An axis reduction's epilogue: a generated kernel runs the body over its dimensions in
  // `order` (those the result keeps, in the result's order, then the reduced ones by decreasing
  // stride), so that element (row, j) of the reduction's input is element row * R + j (R: the
  // reduced elements of a row); `axis_in` is the view reduced, of the body's shape, in that order.
  bool axis = false;
  int8_t order[kMaxDims] = {};
  StridedView axis_in;

  size_t body_first() const { return first + prologue; }
  size_t body_count() const { return count - prologue - post - (reduces ? 1 : 0); }
  size_t reduce_at() const { return body_first() + body_count(); }  // when `reduces`
};

// The groups of `tape`, in order, covering it.
std::vector<Group> plan_groups(const Tape& tape);

// The groups as text: one line per group (its operations, shape and why it ended).
std::string explain(const Tape& tape, const std::vector<Group>& groups);

// The calls a generated kernel of `g` computes per element: the prologue's with their views
// broadcast to the body's shape (their 0-d outputs are stored once, by element 0), then the
// body's.
// With an axis epilogue, their dimensions in the group's `order`.
std::vector<ElementwiseCall> element_calls(const Tape& tape, const Group& g);

// `v` with its dimensions in `order`.
StridedView permuted(const StridedView& v, const int8_t* order);

// For an axis reduction `r` of the values of `v` (a view of the body's shape on the memory and
// dtype `r` reads): the order of v's dimensions in which element row * R + j is element (row, j)
// of r's input (the dimensions r keeps, in its order, then the reduced ones by decreasing stride);
// false when r's input is not such a view of v.
bool axis_order(const ReduceCall& r, const StridedView& v, int8_t* order);

// Queues the group on its stream through `backend`, operation by operation except the body: one
// operation as it is, several as one Backend::elementwise_group (the host backend: one pass, tile
// by tile).
void run_group(Backend& backend, const Tape& tape, const Group& g);

}  // namespace culua::detail::fuse
