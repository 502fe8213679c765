#include "fuse/plan.hpp"

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "core/backend.hpp"
#include "core/dtype.hpp"
#include "core/elementwise_group.hpp"
#include "core/layout.hpp"

namespace culua::detail::fuse {

namespace {

// The bytes a view touches, [lo, hi) (empty for no elements).
struct Span {
  uintptr_t lo = 0, hi = 0;
  bool overlaps(const Span& o) const { return lo < o.hi && o.lo < hi; }
};

Span span_of(const StridedView& v) {
  if (v.data == nullptr || v.size == 0) return {};
  int64_t first = 0, last = 0;
  for (int d = 0; d < v.ndim; ++d) {
    const int64_t reach = (v.shape[d] - 1) * v.strides[d];
    (reach < 0 ? first : last) += reach;
  }
  const auto base = reinterpret_cast<uintptr_t>(v.data);
  const auto item = static_cast<int64_t>(itemsize(v.dtype));
  return {base + static_cast<uintptr_t>(first * item),
          base + static_cast<uintptr_t>((last + 1) * item)};
}

bool same_view(const StridedView& a, const StridedView& b) {
  if (a.data != b.data || a.dtype != b.dtype || a.ndim != b.ndim) return false;
  for (int d = 0; d < a.ndim; ++d) {
    if (a.shape[d] != b.shape[d]) return false;
    if (a.shape[d] != 1 && a.strides[d] != b.strides[d]) return false;
  }
  return true;
}

bool same_shape(const StridedView& a, const StridedView& b) {
  if (a.ndim != b.ndim) return false;
  for (int d = 0; d < a.ndim; ++d) {
    if (a.shape[d] != b.shape[d]) return false;
  }
  return true;
}

struct Access {
  const StridedView* view;
  Span span;
  bool write;
};

void accesses(const ElementwiseCall& c, std::vector<Access>& out) {
  for (int i = 0; i < elementwise_inputs(c); ++i) {
    if (!c.in[i].is_scalar()) out.push_back({&c.in[i].view, span_of(c.in[i].view), false});
  }
  out.push_back({&c.out, span_of(c.out), true});
}

// True when `c` may join a group whose accesses so far are `group`.
bool may_join(const ElementwiseCall& c, const std::vector<Access>& group) {
  std::vector<Access> mine;
  accesses(c, mine);
  for (const Access& a : mine) {
    for (const Access& b : group) {
      if ((a.write || b.write) && a.span.overlaps(b.span) && !same_view(*a.view, *b.view)) {
        return false;
      }
    }
  }
  return true;
}

}  // namespace

const char* barrier_text(Barrier b) {
  switch (b) {
    case Barrier::None:
      return "end of the tape";
    case Barrier::Stream:
      return "the next operation is on another stream";
    case Barrier::Shape:
      return "the next operation has another shape";
    case Barrier::Alias:
      return "the next operation reads or writes memory of the group through another view";
    case Barrier::Size:
      return "the group is full";
  }
  return "";
}

std::vector<Group> plan_groups(const std::vector<Entry>& tape) {
  std::vector<Group> groups;
  std::vector<Access> group_access;
  for (size_t i = 0; i < tape.size(); ++i) {
    const Entry& e = tape[i];
    if (!groups.empty()) {
      Group& g = groups.back();
      const Entry& head = tape[g.first];
      Barrier why = Barrier::None;
      if (e.stream != head.stream) {
        why = Barrier::Stream;
      } else if (!same_shape(e.call.out, head.call.out)) {
        why = Barrier::Shape;
      } else if (g.count >= kMaxGroupOps) {
        why = Barrier::Size;
      } else if (!may_join(e.call, group_access)) {
        why = Barrier::Alias;
      }
      if (why == Barrier::None) {
        ++g.count;
        accesses(e.call, group_access);
        continue;
      }
      g.ends = why;
    }
    groups.push_back(Group{i, 1, Barrier::None});
    group_access.clear();
    accesses(e.call, group_access);
  }
  return groups;
}

std::string explain(const std::vector<Entry>& tape, const std::vector<Group>& groups) {
  std::string s;
  for (size_t k = 0; k < groups.size(); ++k) {
    const Group& g = groups[k];
    const StridedView& out = tape[g.first].call.out;
    std::string shape = "{";
    for (int d = 0; d < out.ndim; ++d) shape += fmt::format("{}{}", d ? "," : "", out.shape[d]);
    shape += "}";
    s += fmt::format("group {}: {} op{} over {}:", k + 1, g.count, g.count == 1 ? "" : "s", shape);
    for (size_t i = g.first; i < g.first + g.count; ++i)
      s += fmt::format(" {}", tape[i].call.name());
    s += fmt::format(" ({})\n", barrier_text(g.ends));
  }
  return s;
}

void run_group(Backend& backend, const std::vector<Entry>& tape, const Group& g) {
  Stream& s = *tape[g.first].stream;
  if (g.count == 1) {
    backend.elementwise(tape[g.first].call, s);
    return;
  }
  std::vector<ElementwiseCall> calls;
  calls.reserve(g.count);
  for (size_t i = g.first; i < g.first + g.count; ++i) calls.push_back(tape[i].call);
  backend.elementwise_group(calls.data(), calls.size(), s);
}

}  // namespace culua::detail::fuse
