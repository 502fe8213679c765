// The fusion engine's plan (docs/fusion.md): a tape of resolved elementwise operations, each
// already type-checked and broadcast by the core (core/elementwise_call.hpp), cut into groups
// that may run as one pass over their elements. No Lua here.
//
// A group is a run of operations on one stream over one iteration space (the same output shape),
// in which every two accesses to overlapping memory, one of them a write, go through the identical
// view (same address, dtype, shape and strides): element i of a value written in the group is read
// later only as element i. Then running the group tile by tile (every operation over tile 1, then
// every operation over tile 2, ...) gives exactly what running the operations one after another
// over all elements gives.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/elementwise_call.hpp"

namespace culua::detail {
class Backend;
class Stream;
}  // namespace culua::detail

namespace culua::detail::fuse {

// The most operations one group holds (bounds a generated kernel's parameters).
inline constexpr size_t kMaxGroupOps = 64;
// The most weight one group holds (op_weight): NVRTC's time grows faster than the kernel, so a
// group of many transcendental functions is cut (56 complex functions in one kernel took minutes
// to compile where each alone takes a fraction of a second).
inline constexpr int kMaxGroupWeight = 64;

// An operation's weight in a generated kernel: 1 for arithmetic, comparisons and the like, 4 for a
// real transcendental function (exp, sqrt, pow, hypot, ...), 8 for one on complex values.
int op_weight(const ElementwiseCall& c);

struct Entry {
  ElementwiseCall call;
  Stream* stream = nullptr;
};

// Why a group ended before the next operation (Barrier::None: the tape's end).
enum class Barrier : uint8_t { None, Stream, Shape, Alias, Size };
const char* barrier_text(Barrier b);

struct Group {
  size_t first = 0, count = 0;  // tape entries [first, first + count)
  Barrier ends = Barrier::None;
};

// The groups of `tape`, in order, covering it.
std::vector<Group> plan_groups(const std::vector<Entry>& tape);

// The groups as text: one line per group (its operations, shape and why it ended).
std::string explain(const std::vector<Entry>& tape, const std::vector<Group>& groups);

// Queues the group on its stream through `backend`: one operation as it is, several as one
// Backend::elementwise_group (the host backend: one pass, tile by tile; the CUDA backend: one by
// one until groups are generated kernels).
void run_group(Backend& backend, const std::vector<Entry>& tape, const Group& g);

}  // namespace culua::detail::fuse
