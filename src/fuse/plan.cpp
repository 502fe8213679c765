#include "fuse/plan.hpp"

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "core/backend.hpp"
#include "core/dtype.hpp"
#include "core/layout.hpp"

namespace culua::detail::fuse {

namespace {

constexpr int64_t kDefaultTile = int64_t{1} << 20;
int64_t g_tile = kDefaultTile;

int inputs_of(const ElementwiseCall& c) {
  switch (c.kind) {
    case ElementwiseCall::Kind::Unary:
      return 1;
    case ElementwiseCall::Kind::Binary:
      return 2;
    case ElementwiseCall::Kind::Where:
      return 3;
  }
  return 0;
}

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
  for (int i = 0; i < inputs_of(c); ++i) {
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

void set_tile_elements(int64_t elements) {
  g_tile = elements > 0 ? elements : kDefaultTile;
}

void run_group(Backend& backend, const std::vector<Entry>& tape, const Group& g, bool tiles) {
  Stream& s = *tape[g.first].stream;
  if (g.count == 1 || !tiles) {
    for (size_t i = g.first; i < g.first + g.count; ++i) backend.elementwise(tape[i].call, s);
    return;
  }
  // Every operation's views (all of the output's shape), coalesced together.
  std::vector<ElementwiseCall> calls;
  calls.reserve(g.count);
  for (size_t i = g.first; i < g.first + g.count; ++i) calls.push_back(tape[i].call);
  std::vector<StridedView> joint;  // each call's output, then its array inputs
  for (const ElementwiseCall& c : calls) {
    joint.push_back(c.out);
    for (int i = 0; i < inputs_of(c); ++i) {
      if (!c.in[i].is_scalar()) joint.push_back(c.in[i].view);
    }
  }
  coalesce(joint.data(), static_cast<int>(joint.size()));
  const StridedView& space = joint[0];
  const int nd = space.ndim;
  // Tiles: the trailing dimensions [k, nd) whole, the block of dimension k - 1, every index of
  // the dimensions before it.
  int k = nd;
  int64_t tail = 1;
  while (k > 0 && tail * space.shape[k - 1] <= g_tile) tail *= space.shape[--k];
  if (k == 0) {  // one tile: the operations as they are
    for (const ElementwiseCall& c : calls) backend.elementwise(c, s);
    return;
  }
  const int d = k - 1;
  const int64_t block = std::max<int64_t>(1, g_tile / tail);
  int64_t outer = 1;
  for (int j = 0; j < d; ++j) outer *= space.shape[j];
  for (int64_t o = 0; o < outer; ++o) {
    // The multi-index of the dimensions before d.
    int64_t index[kMaxDims] = {};
    int64_t rest = o;
    for (int j = d - 1; j >= 0; --j) {
      index[j] = rest % space.shape[j];
      rest /= space.shape[j];
    }
    for (int64_t start = 0; start < space.shape[d]; start += block) {
      const int64_t len = std::min(block, space.shape[d] - start);
      size_t v = 0;
      for (ElementwiseCall& c : calls) {
        // Each view of the call, in the order `joint` lists them.
        StridedView* mine[4] = {&c.out, nullptr, nullptr, nullptr};
        int n = 1;
        for (int i = 0; i < inputs_of(c); ++i) {
          if (!c.in[i].is_scalar()) mine[n++] = &c.in[i].view;
        }
        ElementwiseCall tile = c;
        StridedView* tiled[4] = {&tile.out, nullptr, nullptr, nullptr};
        int t = 1;
        for (int i = 0; i < inputs_of(tile); ++i) {
          if (!tile.in[i].is_scalar()) tiled[t++] = &tile.in[i].view;
        }
        for (int m = 0; m < n; ++m, ++v) {
          const StridedView& j = joint[v];
          StridedView& out = *tiled[m];
          int64_t offset = start * j.strides[d];
          for (int q = 0; q < d; ++q) offset += index[q] * j.strides[q];
          out.data = static_cast<char*>(mine[m]->data) +
                     offset * static_cast<int64_t>(itemsize(mine[m]->dtype));
          out.ndim = nd - d;
          out.shape[0] = len;
          out.strides[0] = j.strides[d];
          for (int q = d + 1; q < nd; ++q) {
            out.shape[q - d] = j.shape[q];
            out.strides[q - d] = j.strides[q];
          }
          out.size = len * tail;
        }
        backend.elementwise(tile, s);
      }
    }
  }
}

}  // namespace culua::detail::fuse
