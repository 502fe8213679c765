#include "fuse/plan.hpp"

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "core/backend/backend.hpp"
#include "core/backend/elementwise_group.hpp"
#include "core/backend/op_table.hpp"
#include "core/model/dtype.hpp"
#include "core/model/layout.hpp"

namespace culua::detail::fuse {

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

namespace {

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

bool fusable_reduction(const ReduceCall& r) {
  // Every reduction the core makes (its result in the op's own dtype, which the generated kernel
  // stores through the built-in functor's finalize).
  return r.out.dtype == reduce_result_dtype(r.op, r.in.dtype);
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
      return "the group is full (96 operations, or the weight of its functions)";
    case Barrier::Epilogue:
      return "the group ended with its reduction and the 0-d operations on its result";
    case Barrier::Reduction:
      return "the next operation is a reduction the group cannot end with";
  }
  return "";
}

namespace {

// Every operand view of an elementwise call is 0-d (or a scalar), its output too.
bool all_zero_d(const ElementwiseCall& c) {
  if (c.out.ndim != 0) return false;
  for (int i = 0; i < elementwise_inputs(c); ++i) {
    if (!c.in[i].is_scalar() && c.in[i].view.ndim != 0) return false;
  }
  return true;
}

// A read of `v` (a view of the body's shape) that overlaps a 0-d value the prologue writes must
// be that value broadcast (the same element, every stride 0): element i then uses the value its
// own prologue computed.
bool broadcast_of(const StridedView& v, const StridedView& zero_d) {
  if (v.data != zero_d.data || v.dtype != zero_d.dtype) return false;
  for (int d = 0; d < v.ndim; ++d) {
    if (v.shape[d] != 1 && v.strides[d] != 0) return false;
  }
  return true;
}

// May the body read `v` (write it with `write`) beside the prologue's accesses `pro`?
bool fits_prologue(const StridedView& v, bool write, const std::vector<Access>& pro) {
  if (pro.empty()) return true;
  const Span span = span_of(v);
  for (const Access& a : pro) {
    if (!span.overlaps(a.span)) continue;
    if (write || !a.write || !broadcast_of(v, *a.view)) return false;
  }
  return true;
}

bool call_fits_prologue(const ElementwiseCall& c, const std::vector<Access>& pro) {
  if (pro.empty()) return true;
  for (int i = 0; i < elementwise_inputs(c); ++i) {
    if (!c.in[i].is_scalar() && !fits_prologue(c.in[i].view, false, pro)) return false;
  }
  return fits_prologue(c.out, true, pro);
}

// May the 0-d operations tape[first, first + count) become a prologue: every element of a kernel
// recomputes them, and element 0 stores their results, so none may read a value the prologue
// writes before it is written (another element could already have stored it).
bool may_be_prologue(const Tape& tape, size_t first, size_t count) {
  std::vector<const void*> written;
  for (size_t i = first; i < first + count; ++i) {
    if (tape.entries[i].reduce >= 0 || !all_zero_d(tape.entries[i].call)) return false;
    written.push_back(tape.entries[i].call.out.data);
  }
  std::vector<const void*> so_far;
  for (size_t i = first; i < first + count; ++i) {
    const ElementwiseCall& c = tape.entries[i].call;
    for (int k = 0; k < elementwise_inputs(c); ++k) {
      if (c.in[k].is_scalar()) continue;
      const Span span = span_of(c.in[k].view);
      for (size_t j = first; j < first + count; ++j) {
        const StridedView& w = tape.entries[j].call.out;
        if (!span.overlaps(span_of(w))) continue;
        const bool before = std::find(so_far.begin(), so_far.end(), w.data) != so_far.end();
        if (!before || w.dtype != c.in[k].view.dtype || w.data != c.in[k].view.data) return false;
      }
    }
    so_far.push_back(c.out.data);
  }
  return true;
}

}  // namespace

StridedView permuted(const StridedView& v, const int8_t* order) {
  StridedView p = v;
  for (int d = 0; d < v.ndim; ++d) {
    p.shape[d] = v.shape[order[d]];
    p.strides[d] = v.strides[order[d]];
  }
  return p;
}

bool axis_order(const ReduceCall& r, const StridedView& v, int8_t* order) {
  // r.in: the kept dimensions of the reduction's source (shape and stride each), then its
  // reduced ones as one run of R elements `rs` apart (core/ops/reduce.cpp axis_call).
  if (r.full || r.in.ndim < 1 || r.in.ndim - 1 > v.ndim) return false;
  const int kept = r.in.ndim - 1;
  const int64_t R = r.in.shape[kept];
  const int64_t rs = r.in.strides[kept];
  if (R <= 0) return false;
  int n = 0;
  std::vector<int> reduced;
  int d = 0;
  for (int k = 0; k < kept; ++k, ++d) {
    while (d < v.ndim &&
           !(v.shape[d] == r.in.shape[k] && (v.shape[d] == 1 || v.strides[d] == r.in.strides[k]))) {
      reduced.push_back(d++);
    }
    if (d == v.ndim) return false;
    order[n++] = static_cast<int8_t>(d);
  }
  for (; d < v.ndim; ++d) reduced.push_back(d);
  // The reduced dimensions: size 1 first, then by decreasing stride; row-major over them, the
  // element j of the run must be j * rs from its start.
  std::stable_sort(reduced.begin(), reduced.end(), [&](int x, int y) {
    if ((v.shape[x] == 1) != (v.shape[y] == 1)) return v.shape[x] == 1;
    const int64_t sx = v.strides[x] < 0 ? -v.strides[x] : v.strides[x];
    const int64_t sy = v.strides[y] < 0 ? -v.strides[y] : v.strides[y];
    return sx > sy;
  });
  int64_t count = 1, step = rs;
  for (size_t i = reduced.size(); i-- > 0;) {
    const int x = reduced[i];
    if (v.shape[x] != 1 && v.strides[x] != step) return false;
    count *= v.shape[x];
    step *= v.shape[x];
  }
  if (count != R) return false;
  for (const int x : reduced) order[n++] = static_cast<int8_t>(x);
  return n == v.ndim;
}

std::vector<Group> plan_groups(const Tape& tape) {
  const std::vector<Entry>& entries = tape.entries;
  std::vector<Group> groups;
  std::vector<Access> body, pro, post;
  int weight = 0;
  const auto start = [&](size_t i) {
    Group& fresh = groups.emplace_back();
    fresh.first = i;
    fresh.count = 1;
    body.clear();
    pro.clear();
    post.clear();
    weight = 0;
    if (entries[i].reduce >= 0) {
      groups.back().reduces = true;  // alone: it runs as the built-in reduction
      return;
    }
    weight = op_weight(entries[i].call);
    accesses(entries[i].call, body);
  };
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    if (groups.empty()) {
      start(i);
      continue;
    }
    Group& g = groups.back();
    const Entry& head = entries[g.first];
    Barrier why = Barrier::None;
    if (e.stream != head.stream) {
      why = Barrier::Stream;
    } else if (g.reduces) {
      // The post-map: 0-d operations after the reduction (run once, after it).
      if (g.body_count() == 0 || g.axis) {
        why = Barrier::Epilogue;
      } else if (e.reduce >= 0 || !all_zero_d(e.call) || g.post >= kMaxPostOps) {
        why = Barrier::Epilogue;
      } else if (!may_join(e.call, post)) {
        why = Barrier::Alias;
      } else {
        ++g.post;
        ++g.count;
        accesses(e.call, post);
        continue;
      }
    } else if (e.reduce >= 0) {
      const ReduceCall& r = tape.reduces[static_cast<size_t>(e.reduce)];
      const StridedView& shape = entries[g.body_first()].call.out;
      // An axis reduction reads a view of the body's values: one the body reads or writes.
      const StridedView* in = r.full ? &r.in : nullptr;
      if (!r.full && g.body_count() > 0) {
        for (size_t k = g.body_first(); k < g.first + g.count && !in; ++k) {
          const ElementwiseCall& c = entries[k].call;
          const auto candidate = [&](const StridedView& v) {
            if (!in && v.data == r.in.data && v.dtype == r.in.dtype && same_shape(v, shape) &&
                axis_order(r, v, g.order))
              in = &v;
          };
          candidate(c.out);
          for (int k2 = 0; k2 < elementwise_inputs(c); ++k2) {
            if (!c.in[k2].is_scalar()) candidate(c.in[k2].view);
          }
        }
      }
      if (g.body_count() == 0 || !fusable_reduction(r)) {
        why = Barrier::Reduction;
      } else if (!in || !same_shape(*in, shape)) {
        why = Barrier::Shape;
      } else if (!compatible(*in, span_of(*in), false, body) || !fits_prologue(*in, false, pro)) {
        why = Barrier::Alias;
      } else {
        g.reduces = true;
        g.axis = !r.full;
        if (g.axis) g.axis_in = permuted(*in, g.order);
        ++g.count;
        post.clear();
        add_access(r.out, true, post);
        continue;
      }
    } else {
      const StridedView& shape = entries[g.body_first()].call.out;
      if (!same_shape(e.call.out, shape)) {
        // 0-d operations followed by a larger shape become its prologue.
        if (g.prologue == 0 && shape.ndim == 0 && e.call.out.ndim > 0 &&
            g.count + 1 <= kMaxGroupOps && weight + op_weight(e.call) <= kMaxGroupWeight &&
            may_be_prologue(tape, g.first, g.count)) {
          std::vector<Access> candidate = body;
          if (call_fits_prologue(e.call, candidate)) {
            g.prologue = g.count;
            ++g.count;
            pro = std::move(candidate);
            body.clear();
            weight += op_weight(e.call);
            accesses(e.call, body);
            continue;
          }
        }
        why = Barrier::Shape;
      } else if (g.count >= kMaxGroupOps || weight + op_weight(e.call) > kMaxGroupWeight) {
        why = Barrier::Size;
      } else if (!may_join(e.call, body) || !call_fits_prologue(e.call, pro)) {
        why = Barrier::Alias;
      }
      if (why == Barrier::None) {
        ++g.count;
        weight += op_weight(e.call);
        accesses(e.call, body);
        continue;
      }
    }
    g.ends = why;
    start(i);
  }
  return groups;
}

namespace {

std::string shape_text(const StridedView& v) {
  std::string shape = "{";
  for (int d = 0; d < v.ndim; ++d) shape += fmt::format("{}{}", d ? "," : "", v.shape[d]);
  return shape + "}";
}

std::string entry_name(const Tape& tape, const Entry& e) {
  return e.reduce >= 0 ? tape.reduces[static_cast<size_t>(e.reduce)].name() : e.call.name();
}

}  // namespace

std::string explain(const Tape& tape, const std::vector<Group>& groups) {
  std::string s;
  for (size_t k = 0; k < groups.size(); ++k) {
    const Group& g = groups[k];
    const Entry& head = tape.entries[g.body_first()];
    const std::string shape = head.reduce >= 0
                                  ? shape_text(tape.reduces[static_cast<size_t>(head.reduce)].in)
                                  : shape_text(head.call.out);
    s += fmt::format("group {}: {} op{} over {}:", k + 1, g.count, g.count == 1 ? "" : "s", shape);
    for (size_t i = g.first; i < g.first + g.count; ++i) {
      if (i == g.body_first() && g.prologue > 0) s += " |";
      if (g.reduces && i == g.reduce_at() && g.body_count() > 0) s += " |";
      s += fmt::format(" {}", entry_name(tape, tape.entries[i]));
    }
    s += fmt::format(" ({})\n", barrier_text(g.ends));
    if (g.prologue > 0) {
      s += fmt::format("  prologue: the first {} 0-d op{}, recomputed by every element\n",
                       g.prologue, g.prologue == 1 ? "" : "s");
    }
    if (g.reduces && g.body_count() > 0) {
      s += fmt::format("  epilogue: the {} of the group's values{}{}\n",
                       entry_name(tape, tape.entries[g.reduce_at()]), g.axis ? " along axes" : "",
                       g.post
                           ? fmt::format(", then {} 0-d op{} on it", g.post, g.post == 1 ? "" : "s")
                           : std::string());
    }
  }
  return s;
}

std::vector<ElementwiseCall> element_calls(const Tape& tape, const Group& g) {
  std::vector<ElementwiseCall> calls;
  calls.reserve(g.prologue + g.body_count());
  const StridedView& shape = tape.entries[g.body_first()].call.out;
  const auto broadcast = [&](StridedView& v) {
    v.ndim = shape.ndim;
    v.size = shape.size;
    for (int d = 0; d < shape.ndim; ++d) {
      v.shape[d] = shape.shape[d];
      v.strides[d] = 0;
    }
  };
  for (size_t i = g.first; i < g.body_first(); ++i) {
    ElementwiseCall c = tape.entries[i].call;
    broadcast(c.out);
    for (int k = 0; k < elementwise_inputs(c); ++k) {
      if (!c.in[k].is_scalar()) broadcast(c.in[k].view);
    }
    calls.push_back(c);
  }
  for (size_t i = g.body_first(); i < g.body_first() + g.body_count(); ++i)
    calls.push_back(tape.entries[i].call);
  if (g.axis) {
    for (ElementwiseCall& c : calls) {
      c.out = permuted(c.out, g.order);
      for (int k = 0; k < elementwise_inputs(c); ++k) {
        if (!c.in[k].is_scalar()) c.in[k].view = permuted(c.in[k].view, g.order);
      }
    }
  }
  return calls;
}

void run_group(Backend& backend, const Tape& tape, const Group& g) {
  const std::vector<Entry>& entries = tape.entries;
  Stream& s = *entries[g.first].stream;
  for (size_t i = g.first; i < g.body_first(); ++i) backend.elementwise(entries[i].call, s);
  const size_t body = g.body_count();
  if (body == 1) {
    backend.elementwise(entries[g.body_first()].call, s);
  } else if (body > 1) {
    std::vector<ElementwiseCall> calls;
    calls.reserve(body);
    for (size_t i = g.body_first(); i < g.body_first() + body; ++i)
      calls.push_back(entries[i].call);
    backend.elementwise_group(calls.data(), calls.size(), s);
  }
  if (g.reduces) {
    backend.reduce(tape.reduces[static_cast<size_t>(entries[g.reduce_at()].reduce)], s);
    for (size_t i = g.reduce_at() + 1; i < g.first + g.count; ++i)
      backend.elementwise(entries[i].call, s);
  }
}

}  // namespace culua::detail::fuse
