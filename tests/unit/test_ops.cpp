// Array operations on the host backend: copies in every direction and between every pair of
// dtypes, their synchronous/asynchronous behaviour, overlapping copies, sequences, fills, element
// access and reshapes.
#include "helpers.hpp"

#include <cmath>
#include <limits>
#include <random>

using namespace culua::detail;
using namespace culua::detail::test;

namespace {

constexpr DType kAllDTypes[] = {DType::F32,  DType::F64, DType::F16,  DType::BF16, DType::I8,
                                DType::I16,  DType::I32, DType::I64,  DType::U8,   DType::U32,
                                DType::Bool, DType::C64, DType::C128, DType::U16,  DType::U64};
constexpr Location kLocations[] = {Location::Device, Location::Pinned, Location::Pageable};

template <class T>
T random_real(std::mt19937_64& rng) {
  static const double specials[] = {0.0,
                                    -0.0,
                                    1.0,
                                    -1.0,
                                    0.5,
                                    -0.5,
                                    127.5,
                                    128.0,
                                    -128.7,
                                    255.9,
                                    256.0,
                                    -1.5,
                                    32767.9,
                                    -32769.0,
                                    2147483647.0,
                                    -2147483649.0,
                                    4294967295.5,
                                    4294967296.0,
                                    9.3e18,
                                    -9.3e18,
                                    65504.0,
                                    65520.0,
                                    1e-6,
                                    1e-30,
                                    1e30,
                                    std::numeric_limits<double>::infinity(),
                                    -std::numeric_limits<double>::infinity(),
                                    std::numeric_limits<double>::quiet_NaN()};
  const uint64_t pick = rng() % 4;
  double d;
  if (pick == 0) {
    d = specials[rng() % (sizeof specials / sizeof specials[0])];
  } else if (pick == 1) {
    d = std::uniform_real_distribution<double>(-300.0, 300.0)(rng);
  } else if (pick == 2) {
    d = std::ldexp(std::uniform_real_distribution<double>(-1.0, 1.0)(rng),
                   static_cast<int>(rng() % 80) - 30);
  } else {
    d = static_cast<double>(static_cast<int64_t>(rng() % 1000) - 500);
  }
  return static_cast<T>(d);
}

// Random elements of any dtype as raw bytes.
void random_elements(DType t, unsigned char* out, int64_t n, std::mt19937_64& rng) {
  dispatch(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t i = 0; i < n; ++i) {
      T v;
      if constexpr (std::is_same_v<T, bool>) {
        v = (rng() & 1) != 0;
      } else if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
        v = T{static_cast<uint16_t>(rng())};
      } else if constexpr (std::is_integral_v<T>) {
        v = static_cast<T>(rng());
      } else if constexpr (is_complex_element<T>::value) {
        using R = decltype(T{}.re);
        v = T{random_real<R>(rng), random_real<R>(rng)};
      } else {
        v = random_real<T>(rng);
      }
      std::memcpy(out + static_cast<size_t>(i) * sizeof(T), &v, sizeof(T));
    }
  });
}

// The bytes of convert<To>(element of type From at `in`).
void convert_bytes(DType to, DType from, const unsigned char* in, unsigned char* out) {
  dispatch(to, [&](auto to_tag) {
    using To = typename decltype(to_tag)::type;
    dispatch(from, [&](auto from_tag) {
      using From = typename decltype(from_tag)::type;
      From x;
      std::memcpy(&x, in, sizeof x);
      const To y = convert<To>(x);
      std::memcpy(out, &y, sizeof y);
    });
  });
}

std::string describe(Location dl, DType dt, Location sl, DType st, bool strided, bool stream) {
  return fmt::format("{} {} <- {} {}{}{}", location_name(dl), name(dt), location_name(sl), name(st),
                     strided ? " strided" : "", stream ? " (stream)" : "");
}

}  // namespace

TEST_CASE("copy: every direction, every dtype pair, strided views", "[ops][copy]") {
  Runtime rt(host_options());
  auto s = rt.backend().create_stream(0, StreamPriority::Normal);
  std::mt19937_64 rng(2024);
  constexpr int64_t R = 3, C = 5, CW = 7;  // logical shape {R, C}; destination base {R, CW}
  int failures = 0;
  for (Location dl : kLocations) {
    for (Location sl : kLocations) {
      for (DType dt : kAllDTypes) {
        for (DType st : kAllDTypes) {
          for (int variant = 0; variant < 4; ++variant) {
            const bool strided = variant & 1;
            const bool use_stream = variant & 2;
            Stream* stream = use_stream ? s.get() : nullptr;
            // Source: base {C, R}, transposed when strided; else a contiguous {R, C}.
            Array src_base = strided ? empty(rt, Shape{C, R}, st, sl, stream)
                                     : empty(rt, Shape{R, C}, st, sl, stream);
            Array dst_base = strided ? empty(rt, Shape{R, CW}, dt, dl, stream)
                                     : empty(rt, Shape{R, C}, dt, dl, stream);
            const size_t ssize = itemsize(st), dsize = itemsize(dt);
            std::vector<unsigned char> src_bytes(static_cast<size_t>(src_base.size()) * ssize);
            random_elements(st, src_bytes.data(), src_base.size(), rng);
            std::vector<unsigned char> sentinel(static_cast<size_t>(dst_base.size()) * dsize, 0xA5);
            rt.backend().synchronize_device(0);
            std::memcpy(src_base.data(), src_bytes.data(), src_bytes.size());
            std::memcpy(dst_base.data(), sentinel.data(), sentinel.size());
            const Array src =
                strided ? src_base.with_layout(src_base.layout().transpose(0, 1)) : src_base;
            const Array dst =
                strided ? dst_base.with_layout(dst_base.layout().narrow(1, 1, C)) : dst_base;
            copy(rt, dst, src, stream);
            rt.backend().synchronize_device(0);
            std::vector<unsigned char> got(sentinel.size());
            std::memcpy(got.data(), dst_base.data(), got.size());
            // Expected: sentinel outside the view, convert() of the source inside.
            std::vector<unsigned char> want = sentinel;
            for (int64_t i = 0; i < R; ++i) {
              for (int64_t j = 0; j < C; ++j) {
                const int64_t si = strided ? j * R + i : i * C + j;
                const int64_t di = strided ? i * CW + 1 + j : i * C + j;
                convert_bytes(dt, st, src_bytes.data() + static_cast<size_t>(si) * ssize,
                              want.data() + static_cast<size_t>(di) * dsize);
              }
            }
            if (got != want && ++failures <= 10) {
              FAIL_CHECK("copy " << describe(dl, dt, sl, st, strided, use_stream)
                                 << " gave wrong bytes");
            }
          }
        }
      }
    }
  }
  CHECK(failures == 0);
}

TEST_CASE("copy: shape mismatch and empty arrays", "[ops][copy]") {
  Runtime rt(host_options());
  Array a = empty(rt, Shape{2, 3}, DType::F32);
  Array b = empty(rt, Shape{3, 2}, DType::F32);
  CHECK(error_kind_of([&] { copy(rt, a, b); }) == ErrorKind::Value);
  CHECK_THAT(error_message_of([&] { copy(rt, a, b); }),
             Catch::Contains("{2,3}") && Catch::Contains("{3,2}"));
  Array e1 = empty(rt, Shape{0, 4}, DType::F32);
  Array e2 = empty(rt, Shape{0, 4}, DType::I8, Location::Pageable);
  copy(rt, e2, e1);
  copy(rt, e1, e2);
  rt.synchronize();
}

TEST_CASE("copy: pinned host memory with an explicit stream is asynchronous", "[ops][copy]") {
  Runtime rt(host_options());
  auto s = rt.backend().create_stream(0, StreamPriority::Normal);
  constexpr int64_t n = 4096;
  Array d = full(rt, Shape{n}, DType::F32, Scalar::real(5.0), Location::Device, s.get());
  Array p = full(rt, Shape{n}, DType::F32, Scalar::real(0.0), Location::Pinned);
  s->synchronize();

  SECTION("device to pinned") {
    sleep(rt, 0.15, s.get());
    const auto t0 = Clock::now();
    copy(rt, p, d, s.get());
    CHECK(ms_since(t0) < 50);
    CHECK(static_cast<const float*>(p.data())[0] == 0.0f);  // the stream is still sleeping
    s->synchronize();
    CHECK(static_cast<const float*>(p.data())[0] == 5.0f);
    CHECK(static_cast<const float*>(p.data())[n - 1] == 5.0f);
  }
  SECTION("pinned to device") {
    fill(rt, p, Scalar::real(3.0));
    sleep(rt, 0.15, s.get());
    const auto t0 = Clock::now();
    copy(rt, d, p, s.get());
    CHECK(ms_since(t0) < 50);
    CHECK(static_cast<const float*>(d.data())[0] == 5.0f);
    s->synchronize();
    CHECK(static_cast<const float*>(d.data())[0] == 3.0f);
    CHECK(static_cast<const float*>(d.data())[n - 1] == 3.0f);
  }
  SECTION("device to device") {
    Array d2 = full(rt, Shape{n}, DType::F32, Scalar::real(1.0), Location::Device, s.get());
    sleep(rt, 0.15, s.get());
    const auto t0 = Clock::now();
    copy(rt, d2, d, s.get());
    CHECK(ms_since(t0) < 50);
    s->synchronize();
    CHECK(static_cast<const float*>(d2.data())[7] == 5.0f);
  }
}

TEST_CASE("copy: pageable or stream-less copies return when complete", "[ops][copy]") {
  Runtime rt(host_options());
  auto s = rt.backend().create_stream(0, StreamPriority::Normal);
  constexpr int64_t n = 4096;
  SECTION("device to pageable, explicit stream") {
    Array d = full(rt, Shape{n}, DType::F32, Scalar::real(5.0), Location::Device, s.get());
    Array h = full(rt, Shape{n}, DType::F32, Scalar::real(0.0), Location::Pageable);
    sleep(rt, 0.15, s.get());
    const auto t0 = Clock::now();
    copy(rt, h, d, s.get());
    CHECK(ms_since(t0) >= 140);
    CHECK(static_cast<const float*>(h.data())[n - 1] == 5.0f);
  }
  SECTION("pageable to device, explicit stream") {
    Array d = full(rt, Shape{n}, DType::F32, Scalar::real(5.0), Location::Device, s.get());
    Array h = full(rt, Shape{n}, DType::F32, Scalar::real(2.0), Location::Pageable);
    sleep(rt, 0.15, s.get());
    const auto t0 = Clock::now();
    copy(rt, d, h, s.get());
    CHECK(ms_since(t0) >= 140);
    CHECK(static_cast<const float*>(d.data())[n - 1] == 2.0f);
  }
  SECTION("device to pinned without a stream") {
    Array d = full(rt, Shape{n}, DType::F32, Scalar::real(5.0));
    Array p = full(rt, Shape{n}, DType::F32, Scalar::real(0.0), Location::Pinned);
    sleep(rt, 0.15);  // the current stream, which the copy uses
    const auto t0 = Clock::now();
    copy(rt, p, d);
    CHECK(ms_since(t0) >= 140);
    CHECK(static_cast<const float*>(p.data())[n - 1] == 5.0f);
  }
  SECTION("pinned to device without a stream") {
    Array d = full(rt, Shape{n}, DType::F32, Scalar::real(5.0));
    Array p = full(rt, Shape{n}, DType::F32, Scalar::real(4.0), Location::Pinned);
    sleep(rt, 0.15);
    const auto t0 = Clock::now();
    copy(rt, d, p);
    CHECK(ms_since(t0) >= 140);
    CHECK(static_cast<const float*>(d.data())[n - 1] == 4.0f);
  }
  SECTION("device to a strided pinned view with a stream") {
    Array d = full(rt, Shape{8, 8}, DType::F32, Scalar::real(5.0), Location::Device, s.get());
    Array p = full(rt, Shape{8, 8}, DType::F32, Scalar::real(0.0), Location::Pinned);
    sleep(rt, 0.15, s.get());
    copy(rt, p.with_layout(p.layout().transpose(0, 1)), d, s.get());
    rt.synchronize();
    CHECK(static_cast<const float*>(p.data())[63] == 5.0f);
  }
}

TEST_CASE("copy: overlapping views of one buffer", "[ops][copy]") {
  Runtime rt(host_options());
  for (Location loc : kLocations) {
    INFO(location_name(loc));
    // Transposing a square matrix onto itself.
    Array a = empty(rt, Shape{4, 4}, DType::F32, loc);
    std::vector<float> v(16);
    for (int i = 0; i < 16; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i);
    write_raw(rt, a, v);
    copy(rt, a, a.with_layout(a.layout().transpose(0, 1)));
    auto got = raw_elements<float>(rt, a);
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 4; ++j) CHECK(got[static_cast<size_t>(i * 4 + j)] == j * 4 + i);
    }
    // Shifting right and left by one element.
    Array b = empty(rt, Shape{10}, DType::I32, loc);
    std::vector<int32_t> w(10);
    for (int i = 0; i < 10; ++i) w[static_cast<size_t>(i)] = i;
    write_raw(rt, b, w);
    copy(rt, b.with_layout(b.layout().narrow(0, 1, 9)), b.with_layout(b.layout().narrow(0, 0, 9)));
    CHECK(raw_elements<int32_t>(rt, b) == std::vector<int32_t>{0, 0, 1, 2, 3, 4, 5, 6, 7, 8});
    write_raw(rt, b, w);
    copy(rt, b.with_layout(b.layout().narrow(0, 0, 9)), b.with_layout(b.layout().narrow(0, 1, 9)));
    CHECK(raw_elements<int32_t>(rt, b) == std::vector<int32_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 9});
    // Every other element onto the first half (interleaved extents).
    write_raw(rt, b, w);
    Layout evens = b.layout();
    evens.shape[0] = 5;
    evens.strides[0] = 2;
    copy(rt, b.with_layout(b.layout().narrow(0, 0, 5)), b.with_layout(evens));
    CHECK(raw_elements<int32_t>(rt, b) == std::vector<int32_t>{0, 2, 4, 6, 8, 5, 6, 7, 8, 9});
    // The same view onto itself is a no-op.
    copy(rt, b, b);
    CHECK(raw_elements<int32_t>(rt, b) == std::vector<int32_t>{0, 2, 4, 6, 8, 5, 6, 7, 8, 9});
  }
}

TEST_CASE("arange: double math for floats, exact integers", "[ops][sequence]") {
  Runtime rt(host_options());
  for (Location loc : kLocations) {
    INFO(location_name(loc));
    {
      Array a =
          arange(rt, Scalar::integer(0), Scalar::integer(10), Scalar::integer(3), DType::I32, loc);
      CHECK(a.shape() == Shape{4});
      CHECK(raw_elements<int32_t>(rt, a) == std::vector<int32_t>{0, 3, 6, 9});
    }
    {
      Array a =
          arange(rt, Scalar::integer(10), Scalar::integer(0), Scalar::integer(-3), DType::I64, loc);
      CHECK(raw_elements<int64_t>(rt, a) == std::vector<int64_t>{10, 7, 4, 1});
    }
    {
      Array a =
          arange(rt, Scalar::real(0.0), Scalar::real(1.0), Scalar::real(0.1), DType::F64, loc);
      const auto got = raw_elements<double>(rt, a);
      REQUIRE(got.size() == 10);
      for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == 0.0 + static_cast<double>(i) * 0.1);
    }
    {
      Array a =
          arange(rt, Scalar::real(0.1), Scalar::real(2.0), Scalar::real(0.3), DType::F32, loc);
      const auto got = raw_elements<float>(rt, a);
      REQUIRE(got.size() == 7);
      for (size_t i = 0; i < got.size(); ++i) {
        CHECK(got[i] == static_cast<float>(0.1 + static_cast<double>(i) * 0.3));
      }
    }
    {
      Array a =
          arange(rt, Scalar::real(1.0), Scalar::real(0.0), Scalar::real(-0.25), DType::F64, loc);
      CHECK(raw_elements<double>(rt, a) == std::vector<double>{1.0, 0.75, 0.5, 0.25});
    }
    {
      // Float sequences into integer arrays truncate.
      Array a =
          arange(rt, Scalar::real(0.5), Scalar::real(3.0), Scalar::real(1.0), DType::I32, loc);
      CHECK(raw_elements<int32_t>(rt, a) == std::vector<int32_t>{0, 1, 2});
    }
    {
      // Integer arange values are exact beyond 2^53 (2^53 + 1 is not a double).
      const int64_t big = (int64_t{1} << 53) + 1;
      Array a = arange(rt, Scalar::integer(big), Scalar::integer(big + 5), Scalar::integer(2),
                       DType::I64, loc);
      CHECK(raw_elements<int64_t>(rt, a) == std::vector<int64_t>{big, big + 2, big + 4});
    }
    {
      Array a =
          arange(rt, Scalar::integer(5), Scalar::integer(5), Scalar::integer(1), DType::F32, loc);
      CHECK(a.size() == 0);
      Array b =
          arange(rt, Scalar::integer(5), Scalar::integer(0), Scalar::integer(1), DType::F32, loc);
      CHECK(b.size() == 0);
    }
    {
      Array a =
          arange(rt, Scalar::integer(0), Scalar::integer(4), Scalar::integer(1), DType::C64, loc);
      const auto got = raw_elements<complex64>(rt, a);
      REQUIRE(got.size() == 4);
      CHECK(got[3].re == 3.0f);
      CHECK(got[3].im == 0.0f);
    }
  }
}

TEST_CASE("arange: element counts of integer ranges are exact", "[ops][sequence]") {
  Runtime rt(host_options());
  const int64_t start = (int64_t{1} << 53) + 1;
  Array a = arange(rt, Scalar::integer(start), Scalar::integer(start + 3), Scalar::integer(1),
                   DType::I64);
  CHECK(raw_elements<int64_t>(rt, a) == std::vector<int64_t>{start, start + 1, start + 2});
  const int64_t top = std::numeric_limits<int64_t>::max();
  Array b =
      arange(rt, Scalar::integer(top - 2), Scalar::integer(top), Scalar::integer(1), DType::I64);
  CHECK(raw_elements<int64_t>(rt, b) == std::vector<int64_t>{top - 2, top - 1});
}

TEST_CASE("arange: errors", "[ops][sequence]") {
  Runtime rt(host_options());
  CHECK(error_kind_of([&] {
          arange(rt, Scalar::integer(0), Scalar::integer(10), Scalar::integer(0), DType::I32);
        }) == ErrorKind::Value);
  CHECK(error_kind_of([&] {
          arange(rt, Scalar::real(0), Scalar::real(1), Scalar::real(0.0), DType::F32);
        }) == ErrorKind::Value);
  CHECK(error_kind_of([&] {
          arange(rt, Scalar::integer(0), Scalar::integer(300), Scalar::integer(1), DType::U8);
        }) == ErrorKind::Value);
  CHECK(error_kind_of([&] {
          arange(rt, Scalar::integer(-1), Scalar::integer(3), Scalar::integer(1), DType::U32);
        }) == ErrorKind::Value);
  CHECK(error_kind_of([&] {
          arange(rt, Scalar::integer(0), Scalar::integer(200), Scalar::integer(1), DType::I8);
        }) == ErrorKind::Value);
  CHECK(error_kind_of([&] {
          arange(rt, Scalar::real(0), Scalar::real(1e10), Scalar::real(1e9), DType::I32);
        }) == ErrorKind::Value);
  CHECK(error_kind_of([&] {
          arange(rt, Scalar::real(0), Scalar::real(1e30), Scalar::real(1e-30), DType::F32);
        }) == ErrorKind::Value);
  CHECK(error_kind_of([&] {
          arange(rt, Scalar::complex(0, 1), Scalar::integer(3), Scalar::integer(1), DType::F32);
        }) == ErrorKind::Type);
  CHECK(error_kind_of([&] {
          arange(rt, Scalar::integer(0), Scalar::boolean(true), Scalar::integer(1), DType::F32);
        }) == ErrorKind::Type);
  CHECK(error_kind_of([&] {
          arange(rt, Scalar::integer(0), Scalar::integer(3), Scalar::integer(1), DType::Bool);
        }) == ErrorKind::Value);
  // The range boundaries that do fit.
  Array ok = arange(rt, Scalar::integer(-128), Scalar::integer(128), Scalar::integer(1), DType::I8);
  const auto v = raw_elements<int8_t>(rt, ok);
  REQUIRE(v.size() == 256);
  CHECK(v.front() == -128);
  CHECK(v.back() == 127);
}

TEST_CASE("linspace: double math and the last value equals stop", "[ops][sequence]") {
  Runtime rt(host_options());
  for (Location loc : kLocations) {
    INFO(location_name(loc));
    for (auto [a, b, n] : {std::tuple{0.0, 1.0, int64_t{7}}, std::tuple{0.1, 0.7, int64_t{7}},
                           std::tuple{-3.3, 17.9, int64_t{50}}, std::tuple{1.0, -1.0, int64_t{3}},
                           std::tuple{0.3, 0.9, int64_t{4}}}) {
      Array x = linspace(rt, a, b, n, DType::F64, loc);
      const auto got = raw_elements<double>(rt, x);
      REQUIRE(got.size() == static_cast<size_t>(n));
      const double step = (b - a) / static_cast<double>(n - 1);
      for (int64_t i = 0; i + 1 < n; ++i) {
        CHECK(got[static_cast<size_t>(i)] == a + static_cast<double>(i) * step);
      }
      CHECK(got.back() == b);
      Array y = linspace(rt, a, b, n, DType::F32, loc);
      const auto got32 = raw_elements<float>(rt, y);
      CHECK(got32.back() == static_cast<float>(b));
      CHECK(got32[1] == static_cast<float>(a + step));
    }
    CHECK(raw_elements<double>(rt, linspace(rt, 2.5, 9.0, 1, DType::F64, loc)) ==
          std::vector<double>{2.5});
    CHECK(linspace(rt, 0.0, 1.0, 0, DType::F64, loc).size() == 0);
    CHECK(raw_elements<int32_t>(rt, linspace(rt, 0.0, 10.0, 5, DType::I32, loc)) ==
          std::vector<int32_t>{0, 2, 5, 7, 10});
  }
  CHECK(error_kind_of([&] { linspace(rt, 0.0, 1.0, -1, DType::F32); }) == ErrorKind::Value);
}

TEST_CASE("fill: strided views and value checks", "[ops][fill]") {
  Runtime rt(host_options());
  for (Location loc : kLocations) {
    INFO(location_name(loc));
    Array a = full(rt, Shape{4, 6}, DType::I16, Scalar::integer(0), loc);
    // Columns 1..3 of the transposed view: rows 1..3 of a... of the transposed {6,4}, narrow
    // dim 0 (a's columns) 2..4 and dim 1 (a's rows) 1..2.
    const Array v = a.with_layout(a.layout().transpose(0, 1).narrow(0, 2, 3).narrow(1, 1, 2));
    fill(rt, v, Scalar::integer(7));
    const auto got = raw_elements<int16_t>(rt, a);
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 6; ++j) {
        const bool inside = i >= 1 && i <= 2 && j >= 2 && j <= 4;
        CHECK(got[static_cast<size_t>(i * 6 + j)] == (inside ? 7 : 0));
      }
    }
    // Every other element (a stride-2 view).
    Layout every_other = a.layout();
    every_other.ndim = 1;
    every_other.shape[0] = 12;
    every_other.strides[0] = 2;
    fill(rt, a.with_layout(every_other), Scalar::integer(-1));
    const auto got2 = raw_elements<int16_t>(rt, a);
    for (size_t k = 0; k < 24; k += 2) CHECK(got2[k] == -1);
    CHECK(got2[1] == 0);
    CHECK(got2[9] == 7);
    // A value that does not fit leaves the array unchanged.
    CHECK(error_kind_of([&] { fill(rt, a, Scalar::integer(40000)); }) == ErrorKind::Value);
    CHECK(error_kind_of([&] { fill(rt, a, Scalar::real(1.5)); }) == ErrorKind::Value);
    CHECK(raw_elements<int16_t>(rt, a) == got2);
    // 16-byte elements.
    Array z = full(rt, Shape{3, 3}, DType::C128, Scalar::complex(0, 0), loc);
    fill(rt, z.with_layout(z.layout().transpose(0, 1).select(1)), Scalar::complex(1.5, -2));
    const auto zs = raw_elements<complex128>(rt, z);
    for (int i = 0; i < 9; ++i) {
      const bool inside = i % 3 == 1;
      CHECK(zs[static_cast<size_t>(i)].re == (inside ? 1.5 : 0.0));
      CHECK(zs[static_cast<size_t>(i)].im == (inside ? -2.0 : 0.0));
    }
  }
  CHECK(error_kind_of([&] { full(rt, Shape{2}, DType::U8, Scalar::integer(300)); }) ==
        ErrorKind::Value);
}

TEST_CASE("read_element and write_element", "[ops][element]") {
  Runtime rt(host_options());
  for (Location loc : kLocations) {
    INFO(location_name(loc));
    Array a =
        arange(rt, Scalar::integer(0), Scalar::integer(6), Scalar::integer(1), DType::I32, loc);
    Array m = view_as(a, Shape{2, 3});
    const Array e = m.with_layout(m.layout().select(1).select(2));
    CHECK(e.ndim() == 0);
    Scalar v = read_element(rt, e);
    CHECK(v.kind == Scalar::Kind::Int);
    CHECK(v.i == 5);
    write_element(rt, e, Scalar::integer(42));
    CHECK(read_element(rt, e).i == 42);
    CHECK(raw_elements<int32_t>(rt, a) == std::vector<int32_t>{0, 1, 2, 3, 4, 42});
    const Array t = m.with_layout(m.layout().transpose(0, 1).select(2).select(0));  // m[0][2]
    CHECK(read_element(rt, t).i == 2);
    CHECK(error_kind_of([&] { write_element(rt, e, Scalar::real(0.5)); }) == ErrorKind::Value);

    Array h = full(rt, Shape{3}, DType::F16, Scalar::real(0), loc);
    const Array h1 = h.with_layout(h.layout().select(1));
    write_element(rt, h1, Scalar::real(0.1));
    const Scalar hv = read_element(rt, h1);
    CHECK(hv.kind == Scalar::Kind::Float);
    CHECK(hv.re == 0.0999755859375);

    Array c = full(rt, Shape{2}, DType::C64, Scalar::complex(1, 2), loc);
    const Scalar cv = read_element(rt, c.with_layout(c.layout().select(0)));
    CHECK(cv.kind == Scalar::Kind::Complex);
    CHECK(cv.re == 1.0);
    CHECK(cv.im == 2.0);

    Array b = full(rt, Shape{2}, DType::Bool, Scalar::boolean(true), loc);
    const Scalar bv = read_element(rt, b.with_layout(b.layout().select(1)));
    CHECK(bv.kind == Scalar::Kind::Bool);
    CHECK(bv.b);
  }
}

TEST_CASE("read_element waits for queued work on other streams", "[ops][element]") {
  Runtime rt(host_options());
  auto s = rt.backend().create_stream(0, StreamPriority::Normal);
  Array a = full(rt, Shape{4}, DType::F64, Scalar::real(1.0), Location::Device, s.get());
  sleep(rt, 0.1, s.get());
  fill(rt, a, Scalar::real(8.0), s.get());
  CHECK(read_element(rt, a.with_layout(a.layout().select(3))).re == 8.0);
}

TEST_CASE("reshape and view_as", "[ops][reshape]") {
  Runtime rt(host_options());
  Array a = arange(rt, Scalar::integer(0), Scalar::integer(12), Scalar::integer(1), DType::F32);
  Array v = view_as(a, Shape{3, -1});
  CHECK(v.shape() == Shape{3, 4});
  CHECK(v.buffer() == a.buffer());
  Array r = reshape(rt, a, Shape{2, 6});
  CHECK(r.buffer() == a.buffer());                            // contiguous: a view
  const Array t = v.with_layout(v.layout().transpose(0, 1));  // {4,3}, not contiguous
  CHECK(error_kind_of([&] { (void)view_as(t, Shape{12}); }) == ErrorKind::Value);
  Array flat = reshape(rt, t, Shape{-1});
  CHECK(flat.buffer() != a.buffer());
  CHECK(flat.shape() == Shape{12});
  CHECK(raw_elements<float>(rt, flat) == std::vector<float>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});
  CHECK(error_kind_of([&] { (void)view_as(a, Shape{5, -1}); }) == ErrorKind::Value);
  CHECK(error_kind_of([&] { (void)reshape(rt, a, Shape{13}); }) == ErrorKind::Value);
  CHECK(error_kind_of([&] { (void)reshape(rt, t, Shape{-1, -1}); }) == ErrorKind::Value);
  // A view with an offset keeps it.
  const Array row = v.with_layout(v.layout().select(2));
  Array row2 = view_as(row, Shape{2, 2});
  CHECK(raw_elements<float>(rt, contiguous(rt, row2.with_layout(row2.layout()))) ==
        std::vector<float>{8, 9, 10, 11});
  CHECK(read_element(rt, row2.with_layout(row2.layout().select(1).select(0))).re == 10.0);
}

TEST_CASE("astype, clone, contiguous and to_location", "[ops]") {
  Runtime rt(host_options());
  Array a = arange(rt, Scalar::real(-1.5), Scalar::real(2.0), Scalar::real(0.5), DType::F64);
  Array i = astype(rt, a, DType::I8);
  CHECK(i.dtype() == DType::I8);
  CHECK(raw_elements<int8_t>(rt, i) == std::vector<int8_t>{-1, -1, 0, 0, 0, 1, 1});
  Array c = clone(rt, a);
  CHECK(c.buffer() != a.buffer());
  CHECK(contiguous(rt, a).buffer() == a.buffer());
  Array h = to_location(rt, a, Location::Pageable);
  CHECK(h.location() == Location::Pageable);
  CHECK(raw_elements<double>(rt, h) == raw_elements<double>(rt, a));
  Array p = to_location(rt, h, Location::Pinned);
  CHECK(p.location() == Location::Pinned);
  Array d = to_location(rt, p, Location::Device);
  CHECK(d.location() == Location::Device);
  CHECK(raw_elements<double>(rt, d) == raw_elements<double>(rt, a));
  const auto bytes = read_contiguous(rt, a.with_layout(a.layout().narrow(0, 2, 3)));
  std::vector<double> mid(3);
  std::memcpy(mid.data(), bytes.data(), bytes.size());
  CHECK(mid == std::vector<double>{-0.5, 0.0, 0.5});
}

TEST_CASE("empty validates shapes before allocating", "[ops]") {
  Runtime rt(host_options());
  CHECK(error_kind_of([&] { empty(rt, Shape{2, -1}, DType::F32); }) == ErrorKind::Value);
  CHECK(error_kind_of([&] {
          empty(rt, Shape{int64_t{1} << 31, int64_t{1} << 31}, DType::F32);
        }) == ErrorKind::Value);
  Array z = empty(rt, Shape{0, 5}, DType::F32);
  CHECK(z.size() == 0);
  CHECK(z.nbytes() == 0);
  Array s = empty(rt, Shape{}, DType::F64);
  CHECK(s.size() == 1);
  CHECK(error_kind_of([&] { sleep(rt, -1.0); }) == ErrorKind::Value);
  CHECK(error_kind_of([&] { sleep(rt, std::nan("")); }) == ErrorKind::Value);
}

TEST_CASE("arrays may outlive their runtime", "[ops][buffer]") {
  Array a, h;
  {
    Runtime rt(host_options());
    a = full(rt, Shape{1000}, DType::F32, Scalar::real(1.5));
    h = full(rt, Shape{10}, DType::I32, Scalar::integer(3), Location::Pinned);
    sleep(rt, 0.02);
    fill(rt, a, Scalar::real(2.5));
  }
  CHECK(a.alive());
  CHECK(static_cast<const float*>(a.data())[999] == 2.5f);
  CHECK(static_cast<const int32_t*>(h.data())[9] == 3);
  a.reset();  // frees on a stream whose runtime is gone; the backend lives until the last buffer
  h.reset();
}
