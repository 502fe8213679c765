#include "fuse/plan.hpp"

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "core/backend.hpp"
#include "core/dtype.hpp"
#include "core/elementwise_group.hpp"
#include "core/layout.hpp"
#include "core/op_table.hpp"

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

// One view a group reads or writes, with the bytes it touches; a group keeps each distinct view
// once (`write`: written by some operation of the group), so checking an operation against the
// group costs the number of distinct views, not of accesses (a step of an ODE solver touches a
// dozen buffers through ~200 accesses).
struct Access {
  const StridedView* view;
  Span span;
  bool write;
};

// True when the access (v, write) may join a group whose distinct views are `group`.
bool compatible(const StridedView& v, const Span& span, bool write,
                const std::vector<Access>& group) {
  for (const Access& b : group) {
    if ((write || b.write) && span.overlaps(b.span) && !same_view(v, *b.view)) return false;
  }
  return true;
}

// True when `c` may join a group whose distinct views so far are `group`.
bool may_join(const ElementwiseCall& c, const std::vector<Access>& group) {
  for (int i = 0; i < elementwise_inputs(c); ++i) {
    if (!c.in[i].is_scalar() && !compatible(c.in[i].view, span_of(c.in[i].view), false, group)) {
      return false;
    }
  }
  return compatible(c.out, span_of(c.out), true, group);
}

void add_access(const StridedView& v, bool write, std::vector<Access>& group) {
  for (Access& b : group) {
    if (b.view->data == v.data && same_view(v, *b.view)) {
      b.write = b.write || write;
      return;
    }
  }
  group.push_back({&v, span_of(v), write});
}

void accesses(const ElementwiseCall& c, std::vector<Access>& group) {
  for (int i = 0; i < elementwise_inputs(c); ++i) {
    if (!c.in[i].is_scalar()) add_access(c.in[i].view, false, group);
  }
  add_access(c.out, true, group);
}

}  // namespace

int op_weight(const ElementwiseCall& c) {
  bool heavy = false;
  if (c.kind == ElementwiseCall::Kind::Binary) {
    switch (static_cast<BinaryOp>(c.op)) {
      case BinaryOp::Pow:
      case BinaryOp::Atan2:
      case BinaryOp::Hypot:
      case BinaryOp::Logaddexp:
      case BinaryOp::FloorDiv:
      case BinaryOp::Mod:
        heavy = true;
        break;
      case BinaryOp::Div:
        heavy = is_complex(c.compute);
        break;
      default:
        break;
    }
  } else if (c.kind == ElementwiseCall::Kind::Unary) {
    const auto op = static_cast<UnaryOp>(c.op);
    heavy = (op >= UnaryOp::Exp && op <= UnaryOp::Tanh) ||
            (op >= UnaryOp::Acos && op <= UnaryOp::Log10) ||
            (op == UnaryOp::Abs && is_complex(c.compute));
  }
  if (!heavy) return 1;
  return is_complex(c.compute) ? 8 : 4;
}

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
      return "the group is full (64 operations, or the weight of its functions)";
  }
  return "";
}

std::vector<Group> plan_groups(const std::vector<Entry>& tape) {
  std::vector<Group> groups;
  std::vector<Access> group_access;
  int weight = 0;
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
      } else if (g.count >= kMaxGroupOps || weight + op_weight(e.call) > kMaxGroupWeight) {
        why = Barrier::Size;
      } else if (!may_join(e.call, group_access)) {
        why = Barrier::Alias;
      }
      if (why == Barrier::None) {
        ++g.count;
        weight += op_weight(e.call);
        accesses(e.call, group_access);
        continue;
      }
      g.ends = why;
    }
    groups.push_back(Group{i, 1, Barrier::None});
    weight = op_weight(e.call);
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
