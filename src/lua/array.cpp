// cu.Array: the userdata, its methods and properties, and the functions that create arrays
// (cu.empty, cu.array, cu.arange, cu.host.*, ...) or move them (cu.copy).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <vector>

#include "core/base/error.hpp"
#include "core/ops/format.hpp"
#include "core/ops/manip.hpp"
#include "core/ops/ops.hpp"
#include "core/runtime/capture.hpp"
#include "lua/binding.hpp"
#include "lua/dtypes.hpp"
#include "lua/indexing.hpp"

namespace culua::detail::lua {

namespace {

Location host_location(lua_State* L, int opts) {
  return opt_boolean(L, opts, "pinned", false) ? Location::Pinned : Location::Pageable;
}

// --- creation -----------------------------------------------------------------------------

// cu.* creates device arrays (with stream=), cu.host.* host arrays (with pinned=).
template <bool Host>
struct Creation {
  DTypeAndOptions t;
  Location loc;
  Stream* stream;

  Creation(lua_State* L, int idx) {
    if constexpr (Host) {
      t = check_dtype_and_options(L, idx, {"dtype", "pinned"});
      loc = host_location(L, t.opts);
      stream = nullptr;
    } else {
      t = check_dtype_and_options(L, idx, {"dtype", "stream"});
      loc = Location::Device;
      stream = opt_stream(L, t.opts);
    }
  }
};

template <bool Host>
int create_empty(lua_State* L) {
  const Shape shape = check_shape(L, 1);
  const Creation<Host> c(L, 2);
  ArrayBox* box = new_array(L);
  box->array = empty(runtime(L), shape, c.t.dtype, c.loc, c.stream);
  // A bool element must hold 0 or 1: kernels load it as a C++ bool (any other byte is undefined
  // behaviour, which UBSan found in fuzz programs), so cu.empty's bool arrays start false.
  if (c.t.dtype == DType::Bool) fill(runtime(L), box->array, Scalar::boolean(false), c.stream);
  return 1;
}

template <bool Host>
int create_full_value(lua_State* L, const Scalar& value, int trailing_idx) {
  const Shape shape = check_shape(L, 1);
  const Creation<Host> c(L, trailing_idx);
  ArrayBox* box = new_array(L);
  box->array = full(runtime(L), shape, c.t.dtype, value, c.loc, c.stream);
  return 1;
}

template <bool Host>
int create_zeros(lua_State* L) {
  return create_full_value<Host>(L, Scalar::integer(0), 2);
}
template <bool Host>
int create_ones(lua_State* L) {
  return create_full_value<Host>(L, Scalar::integer(1), 2);
}
template <bool Host>
int create_full(lua_State* L) {
  const Scalar v = check_scalar(L, 2);
  return create_full_value<Host>(L, v, 3);
}

// Nested Lua tables to arrays.
struct TableData {
  Shape shape;
  std::vector<Scalar> values;
  bool all_bool = true;
  bool any_complex = false;
};

void collect(lua_State* L, int idx, int dim, TableData& d) {
  check_stack(L, 2, "nested table too deep");
  const lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, idx));
  if (n != d.shape[dim]) {
    fail(ErrorKind::Value, "ragged nested table: a row at depth {} has {} elements, expected {}",
         dim + 1, n, lua_Integer(d.shape[dim]));
  }
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_rawgeti(L, idx, i);
    if (dim + 1 < d.shape.ndim) {
      if (lua_type(L, -1) != LUA_TTABLE) {
        fail(ErrorKind::Type, "ragged nested table: expected a table at depth {}, got {}", dim + 2,
             luaL_typename(L, -1));
      }
      collect(L, lua_gettop(L), dim + 1, d);
    } else {
      if (lua_type(L, -1) == LUA_TTABLE) {
        fail(ErrorKind::Value, "ragged nested table: unexpected table at depth {}", dim + 2);
      }
      const Scalar v = check_scalar(L, -1);
      d.all_bool = d.all_bool && v.kind == Scalar::Kind::Bool;
      d.any_complex = d.any_complex || v.kind == Scalar::Kind::Complex;
      d.values.push_back(v);
    }
    lua_pop(L, 1);
  }
}

TableData read_table(lua_State* L, int idx) {
  TableData d;
  if (lua_type(L, idx) != LUA_TTABLE) {
    d.values.push_back(check_scalar(L, idx));  // a scalar makes a 0-d array
    d.all_bool = d.values[0].kind == Scalar::Kind::Bool;
    d.any_complex = d.values[0].kind == Scalar::Kind::Complex;
    return d;
  }
  // The shape follows the first element at each depth; collect() checks every row against it.
  lua_pushvalue(L, idx);
  for (;;) {
    const auto n = static_cast<int64_t>(lua_rawlen(L, -1));
    d.shape.push(n);
    if (n == 0) break;
    lua_rawgeti(L, -1, 1);
    if (lua_type(L, -1) != LUA_TTABLE) {
      lua_pop(L, 1);
      break;
    }
    lua_remove(L, -2);
  }
  lua_pop(L, 1);
  checked_numel(d.shape, 1);
  d.values.reserve(static_cast<size_t>(d.shape.numel()));
  collect(L, lua_absindex(L, idx), 0, d);  // checks every row, also when some are empty
  if (d.values.empty()) d.all_bool = false;
  return d;
}

Array array_from(lua_State* L, int idx, const DTypeAndOptions& t, Location loc, Stream* s) {
  Runtime& rt = runtime(L);
  if (ArrayBox* src = test_array(L, idx)) {
    src->array.check_alive("the source array");
    Array out = empty(rt, src->array.shape(), t.has_dtype ? t.dtype : src->array.dtype(), loc, s);
    copy(rt, out, src->array, s);
    return out;
  }
  const TableData d = as_argument(idx, [&] { return read_table(L, idx); });
  const DType dtype = t.has_dtype     ? t.dtype
                      : d.any_complex ? DType::C64
                      : d.all_bool    ? DType::Bool
                                      : DType::F32;
  const size_t size = itemsize(dtype);
  std::vector<unsigned char> bytes(d.values.size() * size);
  for (size_t i = 0; i < d.values.size(); ++i) encode_scalar(dtype, d.values[i], &bytes[i * size]);
  Array out = empty(rt, d.shape, dtype, loc, s);
  if (is_host(loc)) {
    if (!bytes.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
  } else if (!bytes.empty()) {
    copy(rt, out,
         Array::wrap(rt.backend_ptr(), bytes.data(), d.shape, dtype, Location::Pageable, 0));
  }
  return out;
}

template <bool Host>
int create_array(lua_State* L) {
  arg_any(L, 1);
  const Creation<Host> c(L, 2);
  ArrayBox* box = new_array(L);
  box->array = array_from(L, 1, c.t, c.loc, c.stream);
  return 1;
}

Scalar check_real(lua_State* L, int idx, const char* what) {
  if (lua_type(L, idx) != LUA_TNUMBER) {
    arg_error(idx, fmt::format("number expected for {}, got {}", what, luaL_typename(L, idx)),
              ErrorKind::Type);
  }
  return check_scalar(L, idx);
}

int l_arange(lua_State* L) {
  // arange(n), arange(start, stop [, step]); then [dtype] [options]
  int nums = 0;
  while (nums < 3 && lua_type(L, nums + 1) == LUA_TNUMBER) ++nums;
  if (nums == 0) type_error(L, 1, "number");
  Scalar start = Scalar::integer(0), stop, step = Scalar::integer(1);
  if (nums == 1) {
    stop = check_real(L, 1, "n");
  } else {
    start = check_real(L, 1, "start");
    stop = check_real(L, 2, "stop");
    if (nums == 3) step = check_real(L, 3, "step");
  }
  const DTypeAndOptions t = check_dtype_and_options(L, nums + 1, {"dtype", "stream"});
  // Integer and bool arrays hold values exactly or not at all: cu.arange(0, 1, 0.1, "i32") would
  // otherwise truncate every value to 0.
  // Whole floats count as the integers they are: the range is then computed exactly in int64 (in
  // doubles, cu.arange(2^63 - 4, 2^63 - 1, 1.0, "i64") was empty: the span rounded to 0).
  if (is_integer(t.dtype) || t.dtype == DType::Bool) {
    const char* names[] = {"start", "stop", "step"};
    Scalar* args[] = {&start, &stop, &step};
    for (int i = 1; i <= nums; ++i) {
      if (lua_isinteger(L, i)) continue;
      const double v = lua_tonumber(L, i);
      const char* what = nums == 1 ? "n" : names[i - 1];
      if (!(std::isfinite(v) && std::trunc(v) == v)) {
        arg_error(i, fmt::format("{} must be a whole number for dtype {} (integer arrays hold "
                                 "exact values), got {}",
                                 what, name(t.dtype), lua_tostring(L, i)));
      }
      if (!(v >= -0x1p63 && v < 0x1p63)) {
        arg_error(i, fmt::format("{} must be within int64's range for dtype {} (integer ranges "
                                 "are computed exactly in int64), got {}",
                                 what, name(t.dtype), lua_tostring(L, i)));
      }
      *args[nums == 1 ? 1 : i - 1] = Scalar::integer(static_cast<int64_t>(v));
    }
  }
  Stream* s = opt_stream(L, t.opts);
  ArrayBox* box = new_array(L);
  box->array = arange(runtime(L), start, stop, step, t.dtype, Location::Device, s);
  return 1;
}

int l_linspace(lua_State* L) {
  const double a = check_real(L, 1, "start").as_double();
  const double b = check_real(L, 2, "stop").as_double();
  const int64_t n = as_argument(3, [&] { return check_integer(L, 3, "count"); });
  const DTypeAndOptions t = check_dtype_and_options(L, 4, {"dtype", "endpoint", "stream"});
  Stream* s = opt_stream(L, t.opts);
  // endpoint = false (the Array API's and numpy's option): the first n of n + 1 values.
  const bool endpoint = opt_boolean(L, t.opts, "endpoint", true);
  if (!endpoint && (n < 0 || n == std::numeric_limits<int64_t>::max()))
    arg_error(3, fmt::format("count {} is out of range", n));
  ArrayBox* box = new_array(L);
  if (endpoint) {
    box->array = linspace(runtime(L), a, b, n, t.dtype, Location::Device, s);
  } else {
    const Array all = linspace(runtime(L), a, b, n + 1, t.dtype, Location::Device, s);
    box->array = all.with_layout(all.layout().narrow(0, 0, n));
  }
  return 1;
}

int l_copy(lua_State* L) {
  Array& dst = check_array(L, 1);
  Array& src = check_array(L, 2);
  check_options(L, 3, {"stream"});
  Stream* s = opt_stream(L, 3);
  if (s) {
    // The copy runs on the destination's device (the source's when the destination is host
    // memory); a copy between devices waits there for the source's work.
    const Array& side = dst.location() == Location::Device ? dst : src;
    if (side.location() == Location::Device && s->device() != side.device()) {
      option_error(
          3, "stream", ErrorKind::Value,
          fmt::format("stream of device {}, expected device {} (the {}'s device)", s->device(),
                      side.device(), &side == &dst ? "destination" : "source"));
    }
  }
  copy(runtime(L), dst, src, s);
  lua_settop(L, 1);
  return 1;
}

// --- the cu.Array type -----------------------------------------------------------------------

void push_shape(lua_State* L, const Array& a) {
  lua_createtable(L, a.ndim(), 0);
  for (int i = 0; i < a.ndim(); ++i) {
    lua_pushinteger(L, a.layout().shape[static_cast<size_t>(i)]);
    lua_rawseti(L, -2, i + 1);
  }
}

int a_view(lua_State* L) {
  Array& a = check_array(L, 1);
  const Shape s = check_shape_args(L, 2);
  push_array(L, view_as(a, s));
  return 1;
}

int a_reshape(lua_State* L) {
  Array& a = check_array(L, 1);
  const Shape s = check_shape_args(L, 2);
  push_array(L, reshape(runtime(L), a, s));
  return 1;
}

int check_dim(lua_State* L, int idx, const Array& a) {
  const int64_t d = as_argument(idx, [&] { return check_integer(L, idx, "dimension"); });
  if (d < 1 || d > a.ndim()) {
    arg_error(idx, fmt::format("dimension {} is out of range 1..{}", lua_Integer(d), a.ndim()),
              ErrorKind::Index);
  }
  return static_cast<int>(d - 1);
}

int a_narrow(lua_State* L) {
  Array& a = check_array(L, 1);
  const int dim = check_dim(L, 2, a);
  const int64_t start = as_argument(3, [&] { return check_integer(L, 3, "start"); });
  const int64_t len = as_argument(4, [&] { return check_integer(L, 4, "length"); });
  if (start < 1)
    arg_error(3, fmt::format("start {} is out of range: indices start at 1", lua_Integer(start)),
              ErrorKind::Index);
  push_array(L, a.with_layout(a.layout().narrow(dim, start - 1, len)));
  return 1;
}

int a_transpose(lua_State* L) {
  Array& a = check_array(L, 1);
  if (lua_isnoneornil(L, 2)) {
    if (a.ndim() < 2) {
      lua_settop(L, 1);
      return 1;
    }
    push_array(L, a.with_layout(a.layout().transpose(a.ndim() - 2, a.ndim() - 1)));
    return 1;
  }
  const int d1 = check_dim(L, 2, a);
  const int d2 = check_dim(L, 3, a);
  push_array(L, a.with_layout(a.layout().transpose(d1, d2)));
  return 1;
}

int a_contiguous(lua_State* L) {
  Array& a = check_array(L, 1);
  check_options(L, 2, {"stream"});
  if (a.is_contiguous()) {
    lua_settop(L, 1);
    return 1;
  }
  Stream* s = opt_stream(L, 2);
  ArrayBox* box = new_array(L);
  box->array = contiguous(runtime(L), a, s);
  return 1;
}

int a_astype(lua_State* L) {
  Array& a = check_array(L, 1);
  const DType t = check_dtype(L, 2);
  check_options(L, 3, {"stream"});
  Stream* s = opt_stream(L, 3);
  ArrayBox* box = new_array(L);
  box->array = astype(runtime(L), a, t, s);
  return 1;
}

int a_clone(lua_State* L) {
  Array& a = check_array(L, 1);
  check_options(L, 2, {"stream"});
  Stream* s = opt_stream(L, 2);
  ArrayBox* box = new_array(L);
  box->array = clone(runtime(L), a, s);
  return 1;
}

int a_fill(lua_State* L) {
  Array& a = check_array(L, 1);
  const Scalar v = check_scalar(L, 2);
  check_options(L, 3, {"stream"});
  fill(runtime(L), a, v, opt_stream(L, 3));
  lua_settop(L, 1);
  return 1;
}

// The one release of an array handle: __close and :free() free the memory (stream-ordered),
// __gc only drops this handle's reference. Both are idempotent.
int a_free(lua_State* L) {
  ArrayBox* box = test_array(L, 1);
  if (!box) type_error(L, 1, kArrayType);
  if (box->array.buffer()) {
    Buffer& b = *box->array.buffer();
    if (!b.freed()) {
      if (const GraphTag* user = b.graph_user()) {
        // Memory a graph uses stays with the graph. An array created inside the graph's function
        // (a temporary, or one closed with <close> there) lets go of its handle only; freeing one
        // that the graph reads or writes is an error.
        if (!b.made_in_capture()) {
          fail(ErrorKind::Value,
               "the array is used by {}, which keeps it alive; free the graph first "
               "(g:free()), or let go of the array without freeing it",
               user->label);
        }
      } else {
        runtime(L).note_explicit_free(b.bytes(), box->array.location());
        b.release();
      }
    }
    box->array.reset();
  }
  // An empty handle needs no finalizer: the collector then frees the userdata without a call.
  const Context& ctx = context(L);
  if (ctx.released_array_mt_ref != LUA_NOREF) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, ctx.released_array_mt_ref);
    lua_setmetatable(L, 1);
  }
  return 0;
}

int a_gc(lua_State* L) {
  ArrayBox* box = test_array(L, 1);
  if (!box) type_error(L, 1, kArrayType);
  box->array.reset();
  return 0;
}

Array single_element(const Array& a) {
  if (a.size() != 1) {
    fail(ErrorKind::Value, "an array of one element expected, got shape {}", a.shape().str());
  }
  Layout l;
  l.offset = a.layout().offset;
  return a.with_layout(l);
}

int a_item(lua_State* L) {
  Array& a = check_array(L, 1);
  push_scalar(L, read_element(runtime(L), single_element(a)));
  return 1;
}

void push_nested(lua_State* L, const Array& a, const unsigned char* data, int dim, size_t& offset) {
  check_stack(L, 3, "array too deep for totable");
  const int64_t n = a.layout().shape[static_cast<size_t>(dim)];
  lua_createtable(L, static_cast<int>(std::min<int64_t>(n, std::numeric_limits<int>::max())), 0);
  const size_t size = itemsize(a.dtype());
  for (int64_t i = 0; i < n; ++i) {
    if (dim + 1 == a.ndim()) {
      push_scalar(L, decode_scalar(a.dtype(), data + offset));
      offset += size;
    } else {
      push_nested(L, a, data, dim + 1, offset);
    }
    lua_rawseti(L, -2, i + 1);
  }
}

// The tables totable makes: one per row of every dimension but the last. For an array with
// elements they are at most 1 + (ndim - 1) * size, bounded by the array itself ({2^24, 1} makes
// 2^24 + 1 tables, which is fine). An empty array can have huge dimensions before its 0
// ({2^62, 0}): refuse rather than build tables until memory runs out.
void check_table_count(const Array& a) {
  if (a.size() > 0) return;
  constexpr int64_t kMaxTables = int64_t{1} << 24;
  int64_t rows = 1, tables = 1;
  for (int d = 0; d + 1 < a.ndim(); ++d) {
    const int64_t n = a.layout().shape[static_cast<size_t>(d)];
    if (n != 0 && rows > kMaxTables / n)
      rows = kMaxTables + 1;
    else
      rows *= n;
    tables += rows;
    if (tables > kMaxTables) {
      fail(ErrorKind::Value, "shape {} would make more than {} Lua tables", a.shape().str(),
           kMaxTables);
    }
  }
}

int a_totable(lua_State* L) {
  Array& a = check_array(L, 1);
  check_table_count(a);
  const std::vector<unsigned char> bytes = read_contiguous(runtime(L), a);
  if (a.ndim() == 0) {
    push_scalar(L, decode_scalar(a.dtype(), bytes.data()));
    return 1;
  }
  size_t offset = 0;
  push_nested(L, a, bytes.data(), 0, offset);
  return 1;
}

int a_to_host(lua_State* L) {
  Array& a = check_array(L, 1);
  check_options(L, 2, {"pinned", "stream"});
  const Location loc = host_location(L, 2);
  Stream* s = opt_stream(L, 2);
  ArrayBox* box = new_array(L);
  box->array = to_location(runtime(L), a, loc, s);
  return 1;
}

// a:to_device([device] [, {stream=}]): a copy on `device` (the current device when absent; the
// stream's when only stream= is given).
int a_to_device(lua_State* L) {
  Array& a = check_array(L, 1);
  int opts = 2;
  std::optional<int> device;
  if (lua_type(L, 2) == LUA_TNUMBER) {
    device = check_device_index(L, 2);
    opts = 3;
  } else if (!lua_isnoneornil(L, 2) && !lua_istable(L, 2)) {
    type_error(L, 2, "device index or options table");
  }
  check_options(L, opts, {"stream"});
  Stream* s = opt_stream(L, opts);
  Runtime& rt = runtime(L);
  if (device && s && s->device() != *device) {
    option_error(opts, "stream", ErrorKind::Value,
                 fmt::format("stream of device {}, expected device {} (the target device)",
                             s->device(), *device));
  }
  ArrayBox* box = new_array(L);
  if (device && !s) {
    // Allocated on, and copied by, the target device's current stream.
    const DeviceSelection selected(rt, *device);
    box->array = to_location(rt, a, Location::Device, nullptr);
  } else {
    box->array = to_location(rt, a, Location::Device, s);
  }
  return 1;
}

int a_tostring(lua_State* L) {
  ArrayBox* box = test_array(L, 1);
  if (!box) type_error(L, 1, kArrayType);
  const std::string s = format_array(runtime(L), box->array);
  lua_pushlstring(L, s.data(), s.size());
  return 1;
}

int a_len(lua_State* L) {
  Array& a = check_array(L, 1);
  if (a.ndim() == 0) fail(ErrorKind::Value, "a 0-d array has no length; use :item()");
  lua_pushinteger(L, a.layout().shape[0]);
  return 1;
}

bool push_property(lua_State* L, const Array& a, const char* key) {
  if (std::strcmp(key, "freed") == 0) {
    lua_pushboolean(L, !a.alive());
    return true;
  }
  a.check_alive();
  if (std::strcmp(key, "shape") == 0) {
    push_shape(L, a);
  } else if (std::strcmp(key, "dtype") == 0) {
    const auto n = name(a.dtype());
    lua_pushlstring(L, n.data(), n.size());
  } else if (std::strcmp(key, "ndim") == 0) {
    lua_pushinteger(L, a.ndim());
  } else if (std::strcmp(key, "size") == 0) {
    lua_pushinteger(L, a.size());
  } else if (std::strcmp(key, "nbytes") == 0) {
    lua_pushinteger(L, static_cast<lua_Integer>(a.nbytes()));
  } else if (std::strcmp(key, "location") == 0) {
    const auto n = location_name(a.location());
    lua_pushlstring(L, n.data(), n.size());
  } else if (std::strcmp(key, "device") == 0) {
    lua_pushinteger(L, a.device());
  } else if (std::strcmp(key, "strides") == 0) {
    lua_createtable(L, a.ndim(), 0);
    for (int i = 0; i < a.ndim(); ++i) {
      lua_pushinteger(L, a.layout().strides[static_cast<size_t>(i)]);
      lua_rawseti(L, -2, i + 1);
    }
  } else if (std::strcmp(key, "is_contiguous") == 0) {
    lua_pushboolean(L, a.is_contiguous());
  } else if (std::strcmp(key, "mT") == 0) {
    push_array(L, matrix_transpose(a));
  } else if (std::strcmp(key, "T") == 0) {
    // The standard's x.T: 2-D arrays only (a.mT or cu.permute_dims for more dimensions).
    if (a.ndim() != 2)
      fail(ErrorKind::Value, "a.T needs a 2-D array, got {} dimensions (a.mT swaps the last two)",
           a.ndim());
    push_array(L, matrix_transpose(a));
  } else {
    return false;
  }
  return true;
}

int a_index(lua_State* L) {
  ArrayBox* box = test_array(L, 1);
  if (!box) type_error(L, 1, kArrayType);
  // Methods first: a:free() and friends should cost one table lookup here.
  if (push_upvalue_method(L)) return 1;
  if (lua_type(L, 2) == LUA_TSTRING) {
    if (push_property(L, box->array, lua_tostring(L, 2))) return 1;
    fail(ErrorKind::Index, "cu.Array has no field or method '{}'", lua_tostring(L, 2));
  }
  Array& a = check_array(L, 1);
  if (index_by(L, a, 2)) return 1;
  if (a.ndim() == 0) fail(ErrorKind::Value, "cannot index a 0-d array; use :item()");
  const int64_t i = check_index(L, 2, a.layout().shape[0]);
  Array row = a.with_layout(a.layout().select(i));
  if (row.ndim() == 0) {
    push_scalar(L, read_element(runtime(L), row));
  } else {
    push_array(L, std::move(row));
  }
  return 1;
}

int a_newindex(lua_State* L) {
  Array& a = check_array(L, 1);
  if (assign_by(L, a, 2, 3)) return 0;
  if (lua_type(L, 2) != LUA_TNUMBER) {
    fail(ErrorKind::Value, "cannot set field '{}' of a cu.Array", luaL_tolstring(L, 2, nullptr));
  }
  if (a.ndim() == 0) fail(ErrorKind::Value, "cannot index a 0-d array; use :fill()");
  const int64_t i = check_index(L, 2, a.layout().shape[0]);
  Array row = a.with_layout(a.layout().select(i));
  if (ArrayBox* src = test_array(L, 3)) {
    copy(runtime(L), row, src->array);
  } else if (is_scalar(L, 3)) {
    write_element(runtime(L), row, check_scalar(L, 3));
  } else {
    fail(ErrorKind::Value, "cannot assign a {} to an array element", luaL_typename(L, 3));
  }
  return 0;
}

// Registry key of the methods table (the upvalue of __index), extended by add_array_methods.
constexpr char kArrayMethods[] = "cu.Array.methods";

const luaL_Reg kMethods[] = {
    {"view", entry<a_view>},
    {"reshape", entry<a_reshape>},
    {"narrow", entry<a_narrow>},
    {"transpose", entry<a_transpose>},
    {"contiguous", entry<a_contiguous>},
    {"astype", entry<a_astype>},
    {"clone", entry<a_clone>},
    {"fill", entry<a_fill>},
    {"free", entry<a_free>},
    {"item", entry<a_item>},
    {"totable", entry<a_totable>},
    {"to_host", entry<a_to_host>},
    {"to_device", entry<a_to_device>},
    {nullptr, nullptr},
};

const luaL_Reg kMetamethods[] = {
    {"__gc", entry<a_gc>},   {"__close", entry<a_free>},        {"__tostring", entry<a_tostring>},
    {"__len", entry<a_len>}, {"__newindex", entry<a_newindex>}, {nullptr, nullptr},
};

const luaL_Reg kModuleFunctions[] = {
    {"empty", entry<create_empty<false>>},
    {"zeros", entry<create_zeros<false>>},
    {"ones", entry<create_ones<false>>},
    {"full", entry<create_full<false>>},
    {"array", entry<create_array<false>>},
    {"arange", entry<l_arange>},
    {"linspace", entry<l_linspace>},
    {"copy", entry<l_copy>},
    {nullptr, nullptr},
};

const luaL_Reg kHostFunctions[] = {
    {"empty", entry<create_empty<true>>}, {"zeros", entry<create_zeros<true>>},
    {"ones", entry<create_ones<true>>},   {"full", entry<create_full<true>>},
    {"array", entry<create_array<true>>}, {nullptr, nullptr},
};

}  // namespace

ArrayBox* new_array(lua_State* L) {
  const Context* ctx = refuse_when_closing_context(L, "arrays");
  auto* box = static_cast<ArrayBox*>(lua_newuserdatauv(L, sizeof(ArrayBox), 0));
  new (box) ArrayBox{};
  // The metatable by its integer reference: an array per operation makes this lookup hot.
  if (ctx && ctx->array_mt_ref != LUA_NOREF) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, ctx->array_mt_ref);
    lua_setmetatable(L, -2);
  } else {
    set_metatable(L, kArrayType);
  }
  return box;
}

void push_array(lua_State* L, Array a) {
  new_array(L)->array = std::move(a);
}

ArrayBox* test_array(lua_State* L, int idx) {
  if (lua_type(L, idx) != LUA_TUSERDATA || !lua_getmetatable(L, idx)) return nullptr;
  const void* mt = lua_topointer(L, -1);
  lua_pop(L, 1);
  const Context& ctx = context(L);
  if (mt != ctx.array_mt && mt != ctx.released_array_mt) return nullptr;
  return static_cast<ArrayBox*>(lua_touserdata(L, idx));
}

Array& check_array(lua_State* L, int idx) {
  ArrayBox* box = test_array(L, idx);
  if (!box) type_error(L, idx, kArrayType);
  box->array.check_alive();
  return box->array;
}

void add_array_methods(lua_State* L, const luaL_Reg* methods) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, kArrayMethods);
  luaL_setfuncs(L, methods, 0);
  lua_pop(L, 1);
}

void register_array(lua_State* L) {
  new_metatable(L, kArrayType);
  context(L).array_mt = lua_topointer(L, -1);
  lua_pushvalue(L, -1);
  context(L).array_mt_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  luaL_setfuncs(L, kMetamethods, 0);
  luaL_newlib(L, kMethods);
  lua_pushvalue(L, -1);
  lua_rawsetp(L, LUA_REGISTRYINDEX, kArrayMethods);
  lua_pushcclosure(L, entry<a_index>, 1);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
  luaL_setfuncs(L, kModuleFunctions, 0);
  luaL_newlib(L, kHostFunctions);
  lua_setfield(L, -2, "host");
}

void register_released_array(lua_State* L) {
  // Every field of the array metatable but __gc (the same __name: still a cu.Array to messages,
  // and to cu.help), after every type has added its metamethods.
  lua_rawgetp(L, LUA_REGISTRYINDEX, kArrayType);
  lua_newtable(L);
  lua_pushnil(L);
  while (lua_next(L, -3) != 0) {
    if (lua_type(L, -2) == LUA_TSTRING && std::strcmp(lua_tostring(L, -2), "__gc") == 0) {
      lua_pop(L, 1);
      continue;
    }
    lua_pushvalue(L, -2);
    lua_insert(L, -2);
    lua_rawset(L, -4);
  }
  context(L).released_array_mt = lua_topointer(L, -1);
  context(L).released_array_mt_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_pop(L, 1);
}

}  // namespace culua::detail::lua
