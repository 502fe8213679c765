// cu.fft: numpy.fft's functions (the Array API standard's fft extension) on device arrays, through
// cuFFT on the CUDA backend and kissfft on the host backend (core/ops/fft.hpp). Options tables
// carry the keyword arguments: {n=, axis=, norm=} for the 1-D transforms, {s=, axes=, norm=} for
// the n-D ones, {axes=} for the shifts, {d=, dtype=} for the frequencies; every one takes stream=.
// Axes are 1-based, negative ones count from the end.
#include "core/ops/fft.hpp"

#include <cmath>
#include <string_view>

#include "core/base/error.hpp"
#include "lua/binding.hpp"

namespace culua::detail::lua {

namespace {

// An axis or a table of axes (the value at idx).
std::vector<int> check_axes(lua_State* L, int idx, int ndim) {
  idx = lua_absindex(L, idx);
  std::vector<int> axes;
  if (lua_type(L, idx) == LUA_TNUMBER) {
    axes.push_back(check_axis(L, idx, ndim));
    return axes;
  }
  if (lua_type(L, idx) != LUA_TTABLE) {
    fail(ErrorKind::Type, "an axis or a table of axes expected, got {}", luaL_typename(L, idx));
  }
  const lua_Integer count = luaL_len(L, idx);
  if (count > kMaxDims) fail(ErrorKind::Value, "{} axes for a {}-d array", count, ndim);
  for (lua_Integer i = 1; i <= count; ++i) {
    lua_geti(L, idx, i);
    axes.push_back(check_axis(L, -1, ndim));
    lua_pop(L, 1);
  }
  return axes;
}

void check_no_more(lua_State* L, int opts) {
  if (!lua_isnoneornil(L, opts) && lua_type(L, opts) != LUA_TTABLE)
    type_error(L, opts, "options table");
  if (lua_gettop(L) > opts)
    arg_error(opts + 1, fmt::format("no value expected, got {}", luaL_typename(L, opts + 1)));
}

FftNorm opt_norm(lua_State* L, int opts) {
  if (!get_option(L, opts, "norm")) return FftNorm::Backward;
  const FftNorm norm = as_option(opts, "norm", [&] {
    if (lua_type(L, -1) != LUA_TSTRING) {
      fail(ErrorKind::Type, "\"backward\", \"ortho\" or \"forward\" expected, got {}",
           luaL_typename(L, -1));
    }
    const std::string_view s = lua_tostring(L, -1);
    if (s == "backward") return FftNorm::Backward;
    if (s == "ortho") return FftNorm::Ortho;
    if (s == "forward") return FftNorm::Forward;
    fail(ErrorKind::Value, "\"backward\", \"ortho\" or \"forward\" expected, got \"{}\"", s);
  });
  lua_pop(L, 1);
  return norm;
}

// A transform length: a positive integer; -1 (numpy's default) where allow_default.
int64_t check_points(lua_State* L, int idx, const char* what, bool allow_default) {
  const int64_t n = check_integer(L, idx, what);
  if (n < 1 && !(allow_default && n == -1)) {
    fail(ErrorKind::Value, "{} must be a positive integer{}, got {}", what,
         allow_default ? " (or -1: the axis's length)" : "", n);
  }
  return n;
}

Array& check_input(lua_State* L) {
  ArrayBox* box = test_array(L, 1);
  if (!box) type_error(L, 1, kArrayType);
  box->array.check_alive();
  return box->array;
}

template <FftFunction F>
int l_fft1(lua_State* L) {
  Array& a = check_input(L);
  check_no_more(L, 2);
  check_options(L, 2, {"n", "axis", "norm", "stream"});
  int64_t n = -1;
  if (get_option(L, 2, "n")) {
    n = as_option(2, "n", [&] { return check_points(L, -1, "n", false); });
    lua_pop(L, 1);
  }
  int axis = -1;
  if (get_option(L, 2, "axis")) {
    axis = as_option(2, "axis", [&] { return check_axis(L, -1, a.ndim()); });
    lua_pop(L, 1);
  } else {
    as_argument(1, [&] {
      if (a.ndim() == 0) fail(ErrorKind::Index, "a 0-d array has no axis to transform");
    });
    axis = a.ndim() - 1;
  }
  const FftNorm norm = opt_norm(L, 2);
  Stream* stream = opt_stream(L, 2);
  check_one_device(L, {1}, 2, nullptr, stream);
  as_argument(1, [&] { fft_real_type(F, a.dtype()); });
  push_array(L, fft1(runtime(L), F, a, axis, n, norm, stream));
  return 1;
}

// fftn and its kin; `two`: fft2 and its kin, whose axes default to the last two.
template <FftFunction F, bool Two>
int l_fftn(lua_State* L) {
  Array& a = check_input(L);
  check_no_more(L, 2);
  check_options(L, 2, {"s", "axes", "norm", "stream"});
  const int ndim = a.ndim();
  std::vector<int64_t> sizes;
  bool has_s = false;
  if (get_option(L, 2, "s")) {
    has_s = true;
    as_option(2, "s", [&] {
      if (lua_type(L, -1) != LUA_TTABLE) {
        fail(ErrorKind::Type, "a table of lengths expected, got {}", luaL_typename(L, -1));
      }
      const lua_Integer count = luaL_len(L, -1);
      if (count > ndim) fail(ErrorKind::Value, "{} lengths for a {}-d array", count, ndim);
      for (lua_Integer i = 1; i <= count; ++i) {
        lua_geti(L, -1, i);
        sizes.push_back(check_points(L, -1, "each length", true));
        lua_pop(L, 1);
      }
    });
    lua_pop(L, 1);
  }
  std::vector<int> axes;
  if (get_option(L, 2, "axes")) {
    axes = as_option(2, "axes", [&] { return check_axes(L, -1, ndim); });
    lua_pop(L, 1);
    for (size_t i = 0; i < axes.size(); ++i) {
      for (size_t j = 0; j < i; ++j) {
        if (axes[i] == axes[j]) {
          option_error(2, "axes", ErrorKind::Value,
                       fmt::format("axis {} appears twice", axes[i] + 1));
        }
      }
    }
  } else {
    // numpy: the last len(s) axes when s is given, else the last two (fft2) or all.
    const int count = has_s ? static_cast<int>(sizes.size()) : Two ? 2 : ndim;
    as_argument(1, [&] {
      if (count > ndim) {
        fail(ErrorKind::Index, "a {}-d array has no {} axes to transform", ndim, count);
      }
    });
    for (int i = ndim - count; i < ndim; ++i) axes.push_back(i);
  }
  if (!has_s) {
    sizes.assign(axes.size(), -1);
  } else if (sizes.size() != axes.size()) {
    option_error(2, "s", ErrorKind::Value,
                 fmt::format("{} lengths for {} axes", sizes.size(), axes.size()));
  }
  as_argument(1, [&] {
    if (axes.empty()) fail(ErrorKind::Index, "no axes to transform (a 0-d array or axes = {{}})");
  });
  const FftNorm norm = opt_norm(L, 2);
  Stream* stream = opt_stream(L, 2);
  check_one_device(L, {1}, 2, nullptr, stream);
  as_argument(1, [&] { fft_real_type(F, a.dtype()); });
  push_array(L, fftn(runtime(L), F, a, axes, sizes, norm, stream));
  return 1;
}

template <bool Inverse>
int l_fftshift(lua_State* L) {
  Array& a = check_input(L);
  check_no_more(L, 2);
  check_options(L, 2, {"axes", "stream"});
  std::vector<int> axes;
  if (get_option(L, 2, "axes")) {
    axes = as_option(2, "axes", [&] { return check_axes(L, -1, a.ndim()); });
    lua_pop(L, 1);
  } else {
    for (int i = 0; i < a.ndim(); ++i) axes.push_back(i);
  }
  Stream* stream = opt_stream(L, 2);
  check_one_device(L, {1}, 2, nullptr, stream);
  push_array(L, fftshift(runtime(L), a, axes, Inverse, stream));
  return 1;
}

// fftfreq(n [, d]) or fftfreq(n, {d=, dtype=, stream=}).
template <bool Real>
int l_fftfreq(lua_State* L) {
  const int64_t n = as_argument(1, [&] { return check_points(L, 1, "n", false); });
  double d = 1;
  DType dtype = DType::F64;
  Stream* stream = nullptr;
  if (lua_type(L, 2) == LUA_TNUMBER) {
    d = lua_tonumber(L, 2);
    if (lua_gettop(L) > 2)
      arg_error(3, fmt::format("no value expected, got {}", luaL_typename(L, 3)));
  } else {
    if (!lua_isnoneornil(L, 2) && lua_type(L, 2) != LUA_TTABLE)
      type_error(L, 2, "number (the sample spacing) or options table");
    check_no_more(L, 2);
    check_options(L, 2, {"d", "dtype", "stream"});
    if (get_option(L, 2, "d")) {
      if (lua_type(L, -1) != LUA_TNUMBER) {
        option_error(2, "d", ErrorKind::Type,
                     fmt::format("number expected, got {}", luaL_typename(L, -1)));
      }
      d = lua_tonumber(L, -1);
      lua_pop(L, 1);
    }
    if (get_option(L, 2, "dtype")) {
      dtype = as_option(2, "dtype", [&] { return check_dtype(L, -1); });
      lua_pop(L, 1);
    }
    stream = opt_stream(L, 2);
  }
  const int arg_d = lua_type(L, 2) == LUA_TNUMBER ? 2 : 0;
  if (d == 0 || !std::isfinite(d)) {
    if (arg_d) arg_error(2, fmt::format("finite nonzero sample spacing expected, got {}", d));
    option_error(2, "d", ErrorKind::Value, fmt::format("must be finite and nonzero, got {}", d));
  }
  if (dtype != DType::F32 && dtype != DType::F64) {
    option_error(2, "dtype", ErrorKind::Type,
                 fmt::format("f32 or f64 expected, got {}", name(dtype)));
  }
  push_array(L, fftfreq(runtime(L), n, d, Real, dtype, stream));
  return 1;
}

const luaL_Reg kFunctions[] = {
    {"fft", entry<l_fft1<FftFunction::Fft>>},
    {"ifft", entry<l_fft1<FftFunction::Ifft>>},
    {"rfft", entry<l_fft1<FftFunction::Rfft>>},
    {"irfft", entry<l_fft1<FftFunction::Irfft>>},
    {"hfft", entry<l_fft1<FftFunction::Hfft>>},
    {"ihfft", entry<l_fft1<FftFunction::Ihfft>>},
    {"fftn", entry<l_fftn<FftFunction::Fft, false>>},
    {"ifftn", entry<l_fftn<FftFunction::Ifft, false>>},
    {"rfftn", entry<l_fftn<FftFunction::Rfft, false>>},
    {"irfftn", entry<l_fftn<FftFunction::Irfft, false>>},
    {"fft2", entry<l_fftn<FftFunction::Fft, true>>},
    {"ifft2", entry<l_fftn<FftFunction::Ifft, true>>},
    {"rfft2", entry<l_fftn<FftFunction::Rfft, true>>},
    {"irfft2", entry<l_fftn<FftFunction::Irfft, true>>},
    {"fftshift", entry<l_fftshift<false>>},
    {"ifftshift", entry<l_fftshift<true>>},
    {"fftfreq", entry<l_fftfreq<false>>},
    {"rfftfreq", entry<l_fftfreq<true>>},
    {nullptr, nullptr},
};

}  // namespace

void register_fft(lua_State* L) {
  lua_newtable(L);
  luaL_setfuncs(L, kFunctions, 0);
  lua_setfield(L, -2, "fft");
}

}  // namespace culua::detail::lua
