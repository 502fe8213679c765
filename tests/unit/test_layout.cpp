#include <catch2/catch.hpp>

#include "core/base/error.hpp"
#include "core/model/layout.hpp"
#include "helpers.hpp"

using namespace culua::detail;
using culua::detail::test::error_kind_of;

TEST_CASE("contiguous layouts have row-major strides") {
  const Layout l = Layout::contiguous(Shape{2, 3, 4});
  CHECK(l.strides[0] == 12);
  CHECK(l.strides[1] == 4);
  CHECK(l.strides[2] == 1);
  CHECK(l.is_contiguous());
  CHECK_FALSE(l.transpose(0, 2).is_contiguous());
}

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

namespace {

Shape shape_of(std::initializer_list<int64_t> d) {
  return Shape(d);
}

// Element offsets of a layout in row-major order of its indices (independent of the code).
std::vector<int64_t> offsets(int ndim, const int64_t* shape, const int64_t* strides, int64_t base) {
  std::vector<int64_t> out;
  int64_t n = 1;
  for (int i = 0; i < ndim; ++i) n *= shape[i];
  if (n == 0) return out;
  std::vector<int64_t> idx(static_cast<size_t>(ndim), 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t off = base;
    for (int i = 0; i < ndim; ++i) off += idx[static_cast<size_t>(i)] * strides[i];
    out.push_back(off);
    for (int i = ndim - 1; i >= 0; --i) {
      if (++idx[static_cast<size_t>(i)] < shape[i]) break;
      idx[static_cast<size_t>(i)] = 0;
    }
  }
  return out;
}

std::vector<int64_t> offsets(const Layout& l) {
  return offsets(l.ndim, l.shape.data(), l.strides.data(), l.offset);
}

StridedView view_of(const Layout& l) {
  StridedView v;
  v.ndim = l.ndim;
  v.size = l.size();
  v.data = nullptr;
  for (int i = 0; i < l.ndim; ++i) {
    v.shape[i] = l.shape[static_cast<size_t>(i)];
    v.strides[i] = l.strides[static_cast<size_t>(i)];
  }
  return v;
}

}  // namespace

TEST_CASE("shape basics", "[layout]") {
  const Shape s{2, 3, 4};
  CHECK(s.ndim == 3);
  CHECK(s.numel() == 24);
  CHECK(s.str() == "{2,3,4}");
  CHECK(Shape{}.str() == "{}");
  CHECK(Shape{}.numel() == 1);
  CHECK(s == shape_of({2, 3, 4}));
  CHECK_FALSE(s == shape_of({2, 3}));
  CHECK_FALSE(s == shape_of({2, 3, 5}));
  CHECK(error_kind_of([] { Shape t{1, 1, 1, 1, 1, 1, 1, 1, 1}; }) == ErrorKind::Value);
  Shape eight{1, 2, 1, 2, 1, 2, 1, 2};
  CHECK(eight.numel() == 16);
  CHECK(error_kind_of([&] { eight.push(1); }) == ErrorKind::Value);
}

TEST_CASE("contiguity of layouts", "[layout]") {
  const Layout l = Layout::contiguous(Shape{2, 3, 4});
  CHECK(l.offset == 0);
  CHECK(l.size() == 24);
  CHECK(l.dims() == shape_of({2, 3, 4}));
  CHECK(l.narrow(0, 1, 1).is_contiguous());  // a leading-dim slice stays contiguous
  CHECK(l.narrow(1, 0, 3).is_contiguous());  // the whole dimension
  CHECK_FALSE(l.narrow(1, 1, 2).is_contiguous());
  CHECK_FALSE(l.narrow(2, 0, 2).is_contiguous());
  CHECK(l.narrow(1, 1, 1).narrow(0, 0, 1).is_contiguous());  // {1,1,4}: one row
  CHECK(l.select(1).is_contiguous());
  CHECK(l.transpose(1, 1).is_contiguous());
  CHECK_FALSE(l.transpose(0, 1).is_contiguous());
  // Size-1 dimensions may have any stride.
  Layout odd = Layout::contiguous(Shape{3, 1, 5});
  odd.strides[1] = 999;
  CHECK(odd.is_contiguous());
  // Empty layouts are contiguous whatever their strides.
  Layout empty = Layout::contiguous(Shape{4, 0, 3}).transpose(0, 2);
  CHECK(empty.is_contiguous());
  CHECK(empty.size() == 0);
  // 0-d
  const Layout scalar = Layout::contiguous(Shape{});
  CHECK(scalar.ndim == 0);
  CHECK(scalar.size() == 1);
  CHECK(scalar.is_contiguous());
  // Zero-size dims do not zero the strides of the others.
  const Layout z = Layout::contiguous(Shape{2, 0, 3});
  CHECK(z.strides[0] == 3);
  CHECK(z.strides[2] == 1);
}

TEST_CASE("narrow, transpose and select produce the right element offsets", "[layout]") {
  const Layout l = Layout::contiguous(Shape{3, 4, 5});
  const Layout n = l.narrow(1, 1, 2);
  CHECK(n.offset == 5);
  CHECK(n.dims() == shape_of({3, 2, 5}));
  CHECK(offsets(n).front() == 5);
  CHECK(offsets(n)[5] == 10);   // [0][1][0]
  CHECK(offsets(n)[10] == 25);  // [1][0][0]
  const Layout t = l.transpose(0, 2);
  CHECK(t.dims() == shape_of({5, 4, 3}));
  CHECK(offsets(t)[1] == 20);  // [0][0][1] -> original [1][0][0]
  CHECK(offsets(t)[3] == 5);   // [0][1][0] -> original [0][1][0]
  const Layout s = l.select(2);
  CHECK(s.ndim == 2);
  CHECK(s.offset == 40);
  CHECK(s.dims() == shape_of({4, 5}));
  const Layout ss = s.select(3).select(4);
  CHECK(ss.ndim == 0);
  CHECK(ss.offset == 40 + 15 + 4);
  // Views of views compose.
  const Layout v = l.transpose(0, 1).narrow(0, 2, 2).select(1);  // {3,5}: original [:,3,:]
  CHECK(v.dims() == shape_of({3, 5}));
  CHECK(offsets(v)[0] == 15);
  CHECK(offsets(v)[6] == 20 + 15 + 1);
  // Zero-length narrows at the end are allowed.
  CHECK(l.narrow(2, 5, 0).size() == 0);
  CHECK(l.narrow(0, 0, 3).dims() == l.dims());
}

TEST_CASE("narrow, transpose and select reject bad arguments", "[layout]") {
  const Layout l = Layout::contiguous(Shape{3, 4});
  CHECK(error_kind_of([&] { (void)l.narrow(2, 0, 1); }) == ErrorKind::Index);
  CHECK(error_kind_of([&] { (void)l.narrow(-1, 0, 1); }) == ErrorKind::Index);
  CHECK(error_kind_of([&] { (void)l.narrow(0, 0, -1); }) == ErrorKind::Value);
  CHECK(error_kind_of([&] { (void)l.narrow(0, -1, 1); }) == ErrorKind::Index);
  CHECK(error_kind_of([&] { (void)l.narrow(0, 4, 0); }) == ErrorKind::Index);
  CHECK(error_kind_of([&] { (void)l.narrow(1, 2, 3); }) == ErrorKind::Index);
  CHECK(error_kind_of([&] { (void)l.narrow(1, 2, std::numeric_limits<int64_t>::max()); }) ==
        ErrorKind::Index);
  CHECK(error_kind_of([&] { (void)l.transpose(0, 2); }) == ErrorKind::Index);
  CHECK(error_kind_of([&] { (void)l.transpose(-1, 0); }) == ErrorKind::Index);
  CHECK(error_kind_of([&] { (void)l.select(3); }) == ErrorKind::Index);
  CHECK(error_kind_of([&] { (void)l.select(-1); }) == ErrorKind::Index);
  CHECK(error_kind_of([&] { (void)Layout::contiguous(Shape{}).select(0); }) == ErrorKind::Index);
  CHECK(error_kind_of([&] {
          (void)Layout::contiguous(Shape{0, 2}).select(0);
        }) == ErrorKind::Index);
}

TEST_CASE("extent_begin and extent_end bound every element offset", "[layout]") {
  Layout l = Layout::contiguous(Shape{2, 3});
  l.offset = 5;
  CHECK(l.extent_begin() == 5);
  CHECK(l.extent_end() == 11);
  CHECK(l.transpose(0, 1).extent_begin() == 5);
  CHECK(l.transpose(0, 1).extent_end() == 11);
  const Layout n = Layout::contiguous(Shape{3, 4}).narrow(1, 1, 2);
  CHECK(n.extent_begin() == 1);
  CHECK(n.extent_end() == 11);
  const Layout e = Layout::contiguous(Shape{3, 0}).narrow(0, 1, 2);
  CHECK(e.extent_begin() == e.extent_end());
  Layout neg;
  neg.ndim = 2;
  neg.shape = {4, 3};
  neg.strides = {-3, 1};
  neg.offset = 9;
  CHECK(neg.extent_begin() == 0);
  CHECK(neg.extent_end() == 12);
  // Property: for random views, [begin, end) is the tightest range holding all offsets.
  std::mt19937 rng(5);
  for (int iter = 0; iter < 500; ++iter) {
    Layout v = Layout::contiguous(Shape{4, 5, 6});
    v.offset = 3;
    std::uniform_int_distribution<int> d3(0, 2);
    for (int k = 0; k < 3; ++k) {
      const int dim = d3(rng);
      const int64_t size = v.shape[static_cast<size_t>(dim)];
      std::uniform_int_distribution<int64_t> st(0, size);
      const int64_t start = st(rng);
      std::uniform_int_distribution<int64_t> len(size > start ? 1 : 0, size - start);
      v = v.narrow(dim, start, len(rng));
      v = v.transpose(d3(rng), d3(rng));
    }
    const auto offs = offsets(v);
    if (offs.empty()) {
      CHECK(v.extent_begin() == v.extent_end());
      continue;
    }
    CHECK(v.extent_begin() == *std::min_element(offs.begin(), offs.end()));
    CHECK(v.extent_end() == *std::max_element(offs.begin(), offs.end()) + 1);
  }
}

TEST_CASE("coalesce merges contiguous dims, keeps transposed ones apart, drops size-1 dims",
          "[layout]") {
  {
    StridedView v = view_of(Layout::contiguous(Shape{2, 3, 4}));
    coalesce(&v, 1);
    CHECK(v.ndim == 1);
    CHECK(v.shape[0] == 24);
    CHECK(v.strides[0] == 1);
  }
  {
    // A transposed source and a contiguous destination cannot merge.
    StridedView v[2] = {view_of(Layout::contiguous(Shape{4, 3})),
                        view_of(Layout::contiguous(Shape{3, 4}).transpose(0, 1))};
    coalesce(v, 2);
    CHECK(v[0].ndim == 2);
    CHECK(v[1].ndim == 2);
    CHECK(v[1].strides[0] == 1);
    CHECK(v[1].strides[1] == 4);
  }
  {
    // A row slice: the leading dims merge, the last one stays.
    StridedView v[2] = {view_of(Layout::contiguous(Shape{2, 3, 4})),
                        view_of(Layout::contiguous(Shape{2, 3, 8}).narrow(2, 2, 4))};
    coalesce(v, 2);
    REQUIRE(v[0].ndim == 2);
    CHECK(v[0].shape[0] == 6);
    CHECK(v[0].shape[1] == 4);
    CHECK(v[1].strides[0] == 8);
    CHECK(v[1].strides[1] == 1);
  }
  {
    Layout l = Layout::contiguous(Shape{1, 5, 1});
    l.strides[0] = 77;
    l.strides[2] = 13;
    StridedView v = view_of(l);
    coalesce(&v, 1);
    CHECK(v.ndim == 1);
    CHECK(v.shape[0] == 5);
    CHECK(v.strides[0] == 1);
  }
  {
    StridedView v = view_of(Layout::contiguous(Shape{1, 1, 1}));
    coalesce(&v, 1);
    CHECK(v.ndim == 0);
  }
  {
    // Transposed in both views: the (swapped) dims are contiguous in neither order.
    StridedView v = view_of(Layout::contiguous(Shape{3, 4, 5}).transpose(0, 2));
    coalesce(&v, 1);
    CHECK(v.ndim == 3);
  }
}

TEST_CASE("coalesce keeps the row-major element order of every view", "[layout]") {
  std::mt19937 rng(99);
  for (int iter = 0; iter < 2000; ++iter) {
    std::uniform_int_distribution<int> ndim_d(0, 5);
    std::uniform_int_distribution<int64_t> size_d(1, 4);
    const int nd = ndim_d(rng);
    Shape base;
    for (int i = 0; i < nd; ++i) base.push(size_d(rng) + 1);
    // Two views with the same shape but differently derived layouts.
    auto random_view = [&](const Shape& want) {
      // Build from a larger contiguous base by narrowing, then permute dims so that the final
      // shape is `want`.
      std::vector<int> perm(static_cast<size_t>(want.ndim));
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), rng);
      Shape big;
      for (int i = 0; i < want.ndim; ++i) {
        big.push(want[perm[static_cast<size_t>(i)]] + (rng() % 2 ? 0 : 2));
      }
      Layout l = Layout::contiguous(big);
      for (int i = 0; i < want.ndim; ++i) {
        const int64_t need = want[perm[static_cast<size_t>(i)]];
        l = l.narrow(i, l.shape[static_cast<size_t>(i)] - need, need);
      }
      // Now dim i of l has size want[perm[i]]; apply the inverse permutation by swaps.
      std::vector<int> where(perm);  // where[i] = which target dim l's dim i is
      for (int i = 0; i < want.ndim; ++i) {
        for (int j = i; j < want.ndim; ++j) {
          if (where[static_cast<size_t>(j)] == i) {
            l = l.transpose(i, j);
            std::swap(where[static_cast<size_t>(i)], where[static_cast<size_t>(j)]);
            break;
          }
        }
      }
      return l;
    };
    Shape want = base;
    // Sprinkle size-1 dims.
    if (want.ndim < kMaxDims && rng() % 2) {
      Shape w2;
      for (int i = 0; i < want.ndim; ++i) {
        if (i == 1) w2.push(1);
        w2.push(want[i]);
      }
      if (w2.ndim < kMaxDims) w2.push(1);
      want = w2;
    }
    const Layout a = random_view(want);
    const Layout b = rng() % 3 ? random_view(want) : Layout::contiguous(want);
    REQUIRE(a.dims() == want);
    REQUIRE(b.dims() == want);
    StridedView v[2] = {view_of(a), view_of(b)};
    coalesce(v, 2);
    REQUIRE(v[0].ndim == v[1].ndim);
    for (int i = 0; i < v[0].ndim; ++i) {
      CHECK(v[0].shape[i] == v[1].shape[i]);
      CHECK(v[0].shape[i] > 1);
    }
    CHECK(offsets(v[0].ndim, v[0].shape, v[0].strides, a.offset) == offsets(a));
    CHECK(offsets(v[1].ndim, v[1].shape, v[1].strides, b.offset) == offsets(b));
    if (a.is_contiguous() && b.is_contiguous()) CHECK(v[0].ndim <= 1);
  }
}

TEST_CASE("resolve_reshape infers -1 and rejects bad shapes", "[layout]") {
  const Shape from{3, 4};
  CHECK(resolve_reshape(shape_of({-1, 4}), 12, from) == shape_of({3, 4}));
  CHECK(resolve_reshape(shape_of({2, -1, 2}), 12, from) == shape_of({2, 3, 2}));
  CHECK(resolve_reshape(shape_of({-1}), 12, from) == shape_of({12}));
  CHECK(resolve_reshape(shape_of({12, 1}), 12, from) == shape_of({12, 1}));
  CHECK(resolve_reshape(Shape{}, 1, shape_of({1})) == Shape{});
  CHECK(resolve_reshape(shape_of({-1}), 0, shape_of({0, 3})) == shape_of({0}));
  CHECK(resolve_reshape(shape_of({0, 5}), 0, shape_of({0, 3})) == shape_of({0, 5}));
  CHECK(error_kind_of([&] { resolve_reshape(shape_of({-1, -1}), 12, from); }) == ErrorKind::Value);
  CHECK(error_kind_of([&] { resolve_reshape(shape_of({-2, 6}), 12, from); }) == ErrorKind::Value);
  CHECK(error_kind_of([&] { resolve_reshape(shape_of({5}), 12, from); }) == ErrorKind::Value);
  CHECK(error_kind_of([&] { resolve_reshape(shape_of({-1, 5}), 12, from); }) == ErrorKind::Value);
  CHECK(error_kind_of([&] {
          resolve_reshape(shape_of({-1, 0}), 0, shape_of({0}));
        }) == ErrorKind::Value);
  CHECK(error_kind_of([&] { resolve_reshape(Shape{}, 12, from); }) == ErrorKind::Value);
  CHECK(error_kind_of([&] {
          resolve_reshape(shape_of({int64_t{1} << 40, int64_t{1} << 40}), 12, from);
        }) == ErrorKind::Value);
  // The -1 product must not overflow silently either.
  CHECK(error_kind_of([&] {
          resolve_reshape(shape_of({int64_t{1} << 32, int64_t{1} << 32, -1}), 12, from);
        }) == ErrorKind::Value);
  try {
    resolve_reshape(shape_of({5}), 12, from);
  } catch (const Error& e) {
    CHECK_THAT(e.what(), Catch::Contains("{3,4}") && Catch::Contains("{5}"));
  }
}

TEST_CASE("checked_numel rejects negative sizes and overflow", "[layout]") {
  CHECK(checked_numel(shape_of({2, 3}), 4) == 6);
  CHECK(checked_numel(Shape{}, 8) == 1);
  CHECK(checked_numel(shape_of({0, int64_t{1} << 62, int64_t{1} << 62}), 8) == 0);
  CHECK(checked_numel(shape_of({int64_t{1} << 31, int64_t{1} << 31}), 1) == int64_t{1} << 62);
  CHECK(error_kind_of([] { checked_numel(shape_of({2, -3}), 4); }) == ErrorKind::Value);
  CHECK(error_kind_of([] { checked_numel(shape_of({0, -1}), 4); }) == ErrorKind::Value);
  CHECK(error_kind_of([] {
          checked_numel(shape_of({int64_t{1} << 31, int64_t{1} << 31}), 2);
        }) == ErrorKind::Value);
  CHECK(error_kind_of([] {
          checked_numel(shape_of({int64_t{1} << 32, int64_t{1} << 32}), 1);
        }) == ErrorKind::Value);
  CHECK(error_kind_of([] {
          checked_numel(shape_of({3, std::numeric_limits<int64_t>::max()}), 1);
        }) == ErrorKind::Value);
  CHECK(error_kind_of([] { checked_numel(shape_of({std::numeric_limits<int64_t>::max()}), 16); }) ==
        ErrorKind::Value);
  try {
    checked_numel(shape_of({2, -3}), 4);
  } catch (const Error& e) {
    CHECK_THAT(e.what(), Catch::Contains("-3"));
  }
}
