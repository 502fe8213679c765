// cu.mpi: MPI for scripts started by mpirun (src/dist/mpi.hpp initializes MPI on first use).
//
// Lua values travel as culua's own bytes (nil, booleans, integers and floats kept apart, strings,
// tables without cycles, arrays with dtype, shape and place); arrays given to send, bcast and
// allreduce travel as their raw contents, straight from their memory where MPI can reach it
// (host arrays; device arrays on the host backend, and on a CUDA-aware MPI), else staged through
// pinned host memory. Collectives first exchange a small header per rank (what each rank gave:
// the root, the op, the dtype and shape of its array, or that its arguments were invalid), so that
// a mismatch raises the same error on every rank instead of corrupting memory or hanging.
//
// On a build without MPI, cu.mpi is a table whose available() returns false and whose other
// functions and fields raise "culua was built without MPI".
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/base/error.hpp"
#include "core/ops/ops.hpp"
#include "lua/binding.hpp"
#include "lua/mpi_values.hpp"

#if defined(CULUA_HAVE_MPI)
#include "dist/mpi.hpp"
#endif

namespace culua::detail::lua {

namespace {

#if defined(CULUA_HAVE_MPI)

namespace mpi = dist::mpi;

// ---- arrays through MPI ----

// Whether the CPU can read and write `a`'s memory (host arrays; every array on the host backend),
// and whether MPI can (also device arrays on a CUDA-aware MPI). CULUA_MPI_STAGING=always treats
// the host backend's device arrays as a CUDA build without a CUDA-aware MPI treats device arrays,
// so that the staging path runs (and is tested) on machines without a GPU.
bool forced_staging() {
  static const bool forced = [] {
    const char* v = std::getenv("CULUA_MPI_STAGING");
    return v && std::strcmp(v, "always") == 0;
  }();
  return forced;
}

bool host_reachable(Runtime& rt, const Array& a) {
  return is_host(a.location()) || (rt.kind() == BackendKind::Host && !forced_staging());
}

bool mpi_reachable(Runtime& rt, const Array& a) {
  return host_reachable(rt, a) || (rt.kind() == BackendKind::Cuda && mpi::cuda_aware());
}

// Waits for the queued work on `a` before the CPU or MPI touches its memory.
void wait_for_array(Runtime& rt, const Array& a) {
  if (is_host(a.location())) {
    wait_host_access(rt, *a.buffer(), "an MPI transfer");
  } else {
    a.buffer()->wait_idle();
  }
}

// The staging memory of this Lua state: one pinned host buffer, kept between calls and grown to
// the largest message up to kKeptStagingBytes, so that a message costs no allocation (a pinned
// pool's lookup, and an event recorded at its free). Larger requests get a buffer of their own.
// The buffer is waited for (an asynchronous copy from it may still be queued) before it is
// returned. One call uses it at a time.
constexpr size_t kKeptStagingBytes = (size_t{1} << 20) + 4096;
const char kStagingKey = 's';

Array staging_buffer(lua_State* L, Runtime& rt, size_t bytes) {
  const size_t want = std::max<size_t>(bytes, 1);
  if (want > kKeptStagingBytes) {
    return empty(rt, Shape{static_cast<int64_t>(want)}, DType::U8, Location::Pinned);
  }
  Array kept;
  lua_rawgetp(L, LUA_REGISTRYINDEX, &kStagingKey);
  if (ArrayBox* box = test_array(L, -1)) kept = box->array;
  lua_pop(L, 1);
  if (!kept.alive() || kept.nbytes() < want) {
    size_t size = 4096;
    while (size < want) size <<= 1;
    size = std::min(size, kKeptStagingBytes);
    kept = empty(rt, Shape{static_cast<int64_t>(size)}, DType::U8, Location::Pinned);
    push_array(L, kept);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &kStagingKey);
  }
  wait_host_access(rt, *kept.buffer(), "an MPI transfer");
  return kept;
}

// A contiguous array of `dtype` and `shape` over `buffer`'s memory from byte `offset` (a multiple
// of the item size).
Array view_at(const Array& buffer, size_t offset, DType dtype, const Shape& shape) {
  Layout l = Layout::contiguous(shape);
  l.offset = static_cast<int64_t>(offset / itemsize(dtype));
  return Array(buffer.buffer(), dtype, l);
}

// Contiguous memory that MPI may read or write for `a`: the array's own where MPI can reach it,
// else staging memory (pinned) that `read` fills from `a`.
struct Reachable {
  Array memory;
  bool staged = false;
};

Reachable reachable(lua_State* L, Runtime& rt, const Array& a, bool read) {
  if (a.is_contiguous() && mpi_reachable(rt, a)) {
    wait_for_array(rt, a);
    return {a, false};
  }
  Array staging = view_at(staging_buffer(L, rt, a.nbytes()), 0, a.dtype(), a.shape());
  if (read) copy(rt, staging, a);
  return {staging, true};
}

// After MPI wrote `r`'s memory: the staged contents go to `a`.
void written(Runtime& rt, const Array& a, const Reachable& r) {
  if (r.staged) copy(rt, a, r.memory);
}

// ---- the header each rank gives a collective ----

enum class Given : int32_t { Error, Nil, Integer, Float, Array, Value };

struct Header {
  Given given = Given::Nil;
  int32_t root = 0;
  int32_t op = 0;
  int32_t dtype = 0;
  int32_t ndim = 0;
  int32_t location = 0;
  int64_t dims[kMaxDims] = {};
};

Header array_header(const Array& a) {
  Header h;
  h.given = Given::Array;
  h.dtype = static_cast<int32_t>(a.dtype());
  h.ndim = a.ndim();
  h.location = static_cast<int32_t>(a.location());
  const Shape s = a.shape();
  for (int i = 0; i < h.ndim; ++i) h.dims[i] = s[i];
  return h;
}

Shape header_shape(const Header& h) {
  Shape s;
  for (int i = 0; i < h.ndim; ++i) s.push(h.dims[i]);
  return s;
}

std::string describe(const Header& h) {
  switch (h.given) {
    case Given::Error:
      return "invalid arguments";
    case Given::Nil:
      return "nil";
    case Given::Integer:
      return "an integer";
    case Given::Float:
      return "a float";
    case Given::Value:
      return "a Lua value";
    case Given::Array:
      break;
  }
  std::string dims;
  for (int i = 0; i < h.ndim; ++i) dims += fmt::format("{}{}", i ? "x" : "", h.dims[i]);
  return fmt::format("{}[{}]", name(static_cast<DType>(h.dtype)), dims);
}

bool same_array(const Header& a, const Header& b) {
  if (a.dtype != b.dtype || a.ndim != b.ndim) return false;
  return std::equal(a.dims, a.dims + a.ndim, b.dims);
}

// The headers of every rank. A rank whose local checks failed (`local` holds its error) takes
// part with Given::Error, then raises its own error; the others raise one naming that rank.
std::vector<Header> exchange(const Header& mine, const std::exception_ptr& local) {
  const std::vector<unsigned char> bytes = mpi::allgather(&mine, sizeof mine);
  std::vector<Header> all(bytes.size() / sizeof(Header));
  std::memcpy(all.data(), bytes.data(), bytes.size());
  if (local) std::rethrow_exception(local);
  for (size_t r = 0; r < all.size(); ++r) {
    if (all[r].given == Given::Error) {
      fail(ErrorKind::Value, "rank {} gave invalid arguments (its own error says which)", r);
    }
  }
  for (size_t r = 1; r < all.size(); ++r) {
    if (all[r].root != all[0].root) {
      fail(ErrorKind::Value, "the ranks name different roots (rank 0: {}, rank {}: {})",
           all[0].root, r, all[r].root);
    }
    if (all[r].op != all[0].op) {
      fail(ErrorKind::Value, "the ranks name different ops (rank 0: {}, rank {}: {})",
           mpi::op_name(static_cast<mpi::Op>(all[0].op)), r,
           mpi::op_name(static_cast<mpi::Op>(all[r].op)));
    }
  }
  return all;
}

// "rank 0 f32[4x4], rank 1 f64[4]" (the first 8 ranks).
std::string list_ranks(const std::vector<Header>& all) {
  std::string out;
  for (size_t r = 0; r < all.size() && r < 8; ++r) {
    out += fmt::format("{}rank {} {}", r ? ", " : "", r, describe(all[r]));
  }
  if (all.size() > 8) out += ", ...";
  return out;
}

// Runs the local checks of a collective: their error is kept for exchange().
template <class F>
Header checked(std::exception_ptr& error, F&& f) {
  try {
    return f();
  } catch (const std::exception&) {
    error = std::current_exception();
    Header h;
    h.given = Given::Error;
    return h;
  }
}

int check_rank_arg(lua_State* L, int arg, const char* what) {
  const lua_Integer r = arg_integer(L, arg);
  const int n = mpi::size();
  if (r < 0 || r >= n) {
    arg_error(arg, fmt::format("{} {} is not a rank of this job (0..{})", what, r, n - 1));
  }
  return static_cast<int>(r);
}

int opt_root(lua_State* L, int arg) {
  if (lua_isnoneornil(L, arg)) return 0;
  return check_rank_arg(L, arg, "root");
}

mpi::Op check_op(lua_State* L, int opts) {
  if (!get_option(L, opts, "op")) return mpi::Op::Sum;
  const char* s = lua_tostring(L, -1);
  const std::string name = lua_type(L, -1) == LUA_TSTRING ? s : "";
  lua_pop(L, 1);
  for (mpi::Op op : {mpi::Op::Sum, mpi::Op::Prod, mpi::Op::Max, mpi::Op::Min}) {
    if (name == mpi::op_name(op)) return op;
  }
  option_error(opts, "op", ErrorKind::Value, "expected \"sum\", \"prod\", \"max\" or \"min\"");
}

// The MPI element type of a reduction over `dtype` with `op`; raises for those MPI cannot reduce.
mpi::Type reduce_type(DType dtype, mpi::Op op) {
  const bool order = op == mpi::Op::Max || op == mpi::Op::Min;
  switch (dtype) {
    case DType::F32:
      return mpi::Type::F32;
    case DType::F64:
      return mpi::Type::F64;
    case DType::I8:
      return mpi::Type::I8;
    case DType::I16:
      return mpi::Type::I16;
    case DType::I32:
      return mpi::Type::I32;
    case DType::I64:
      return mpi::Type::I64;
    case DType::U8:
      return mpi::Type::U8;
    case DType::U16:
      return mpi::Type::U16;
    case DType::U32:
      return mpi::Type::U32;
    case DType::U64:
      return mpi::Type::U64;
    case DType::C64:
    case DType::C128:
      if (order) {
        fail(ErrorKind::Value, "op '{}' is not defined for complex arrays", mpi::op_name(op));
      }
      return dtype == DType::C64 ? mpi::Type::C64 : mpi::Type::C128;
    case DType::Bool:
      fail(ErrorKind::Unsupported,
           "MPI cannot reduce bool arrays; convert with astype(\"u8\") (max is or, min is and)");
    case DType::F16:
    case DType::BF16:
      break;
  }
  fail(ErrorKind::Unsupported, "MPI cannot reduce {} arrays; convert with astype(\"f32\")",
       name(dtype));
}

// ---- the functions ----

int l_barrier(lua_State*) {
  mpi::barrier();
  return 0;
}

// cu.mpi.bcast(v [, root [, {out=}]]): the root's value on every rank. A Lua value is returned; an
// array at the root is copied into the array each rank gives (v or out=, of the same dtype and
// shape), or into a new array where a rank gives none.
int l_bcast(lua_State* L) {
  Runtime& rt = runtime(L);
  std::exception_ptr error;
  Array target;
  std::string bytes;  // the root's Lua value
  const Header mine = checked(error, [&] {
    check_options(L, 3, {"out"});
    const int root = opt_root(L, 2);
    Array* out = opt_array(L, 3, "out");
    ArrayBox* box = test_array(L, 1);
    if (box) as_argument(1, [&] { box->array.check_alive(); });
    Header h;
    if (mpi::rank() == root) {
      if (box) {
        if (out && (out->dtype() != box->array.dtype() || out->shape() != box->array.shape())) {
          option_error(3, "out", ErrorKind::Value, "out must have the dtype and shape of v");
        }
        h = array_header(box->array);
        target = out ? *out : box->array;
      } else {
        if (out) option_error(3, "out", ErrorKind::Value, "out is for arrays; v is not one");
        bytes = pack_value(L, 1, "v");
        h.given = Given::Value;
      }
    } else if (const Array* given = out ? out : (box ? &box->array : nullptr)) {
      h = array_header(*given);
      target = *given;
    }
    h.root = root;
    return h;
  });
  const std::vector<Header> all = exchange(mine, error);
  const Header& root = all[static_cast<size_t>(mine.root)];
  const bool at_root = mpi::rank() == mine.root;
  if (root.given == Given::Value) {
    mpi::broadcast_bytes(bytes, mine.root);
    if (at_root) {
      lua_settop(L, 1);
      return 1;
    }
    unpack_value(L, bytes);
    return 1;
  }
  for (size_t r = 0; r < all.size(); ++r) {
    if (all[r].given == Given::Array && !same_array(all[r], root)) {
      fail(ErrorKind::Value, "the arrays differ across ranks: {}", list_ranks(all));
    }
  }
  if (!target.alive()) {
    target = empty(rt, header_shape(root), static_cast<DType>(root.dtype),
                   static_cast<Location>(root.location));
  }
  if (at_root) {
    ArrayBox* box = test_array(L, 1);
    if (target.buffer() != box->array.buffer()) copy(rt, target, box->array);
  }
  if (target.size() > 0) {
    const Reachable r = reachable(L, rt, target, at_root);
    mpi::broadcast(r.memory.data(), target.nbytes(), mine.root);
    if (!at_root) written(rt, target, r);
  }
  push_array(L, target);
  return 1;
}

// cu.mpi.allreduce(v [, {op=, out=}]): numbers reduce to a number (an integer when every rank gives
// an integer); arrays reduce in place, or into out=.
int l_allreduce(lua_State* L) {
  Runtime& rt = runtime(L);
  std::exception_ptr error;
  Array target;
  mpi::Type type = mpi::Type::F64;
  const Header mine = checked(error, [&] {
    check_options(L, 2, {"op", "out"});
    const mpi::Op op = check_op(L, 2);
    Header h;
    if (lua_type(L, 1) == LUA_TNUMBER) {
      if (opt_array(L, 2, "out")) {
        option_error(2, "out", ErrorKind::Value, "out is for arrays; v is a number");
      }
      h.given = lua_isinteger(L, 1) ? Given::Integer : Given::Float;
    } else if (ArrayBox* box = test_array(L, 1)) {
      as_argument(1, [&] { box->array.check_alive(); });
      Array* out = opt_array(L, 2, "out");
      if (out && (out->dtype() != box->array.dtype() || out->shape() != box->array.shape())) {
        option_error(2, "out", ErrorKind::Value, "out must have the dtype and shape of v");
      }
      as_argument(1, [&] { type = reduce_type(box->array.dtype(), op); });
      h = array_header(box->array);
      target = out ? *out : box->array;
    } else {
      type_error(L, 1, "number or cu.Array");
    }
    h.op = static_cast<int32_t>(op);
    return h;
  });
  const std::vector<Header> all = exchange(mine, error);
  const mpi::Op op = static_cast<mpi::Op>(mine.op);
  if (mine.given == Given::Integer || mine.given == Given::Float) {
    bool integers = true;
    for (const Header& h : all) {
      if (h.given == Given::Array) {
        fail(ErrorKind::Value, "some ranks give numbers, others arrays: {}", list_ranks(all));
      }
      integers = integers && h.given == Given::Integer;
    }
    if (integers) {
      int64_t v = lua_tointeger(L, 1);
      mpi::allreduce(&v, 1, mpi::Type::I64, op);
      lua_pushinteger(L, v);
    } else {
      double v = lua_tonumber(L, 1);
      mpi::allreduce(&v, 1, mpi::Type::F64, op);
      lua_pushnumber(L, v);
    }
    return 1;
  }
  for (const Header& h : all) {
    if (h.given != Given::Array || !same_array(h, mine)) {
      fail(ErrorKind::Value, "the arrays differ across ranks: {}", list_ranks(all));
    }
  }
  const Array& v = check_array(L, 1);
  if (target.buffer() != v.buffer() || target.data() != v.data()) copy(rt, target, v);
  if (target.size() > 0) {
    const Reachable r = reachable(L, rt, target, true);
    mpi::allreduce(r.memory.data(), static_cast<size_t>(target.size()), type, op);
    written(rt, target, r);
  }
  push_array(L, target);
  return 1;
}

// cu.mpi.gather(v [, root]): at the root, the list of every rank's value (rank r at index r + 1);
// nil elsewhere.
int l_gather(lua_State* L) {
  std::exception_ptr error;
  std::string bytes;
  const Header mine = checked(error, [&] {
    Header h;
    h.root = opt_root(L, 2);
    bytes = pack_value(L, 1, "v");
    h.given = Given::Value;
    return h;
  });
  exchange(mine, error);
  const std::vector<std::string> all = mpi::gather_bytes(bytes, mine.root);
  if (all.empty()) {
    lua_pushnil(L);
    return 1;
  }
  check_stack(L, 4, "cu.mpi.gather");
  lua_createtable(L, static_cast<int>(all.size()), 0);
  for (size_t r = 0; r < all.size(); ++r) {
    unpack_value(L, all[r]);
    lua_rawseti(L, -2, static_cast<lua_Integer>(r + 1));
  }
  return 1;
}

// Messages of send/recv: a Lua value ('V' and its bytes); a small array in one message ('I', its
// header, then its contents from kInlineOffset); a larger array in two messages of the same tag
// ('A' and its header, then its contents).
constexpr char kValueMessage = 'V';
constexpr char kInlineArrayMessage = 'I';
constexpr char kArrayMessage = 'A';
// The contents of an inline array start at a multiple of the largest item size (c128).
constexpr size_t kInlineOffset = (1 + sizeof(Header) + 15) / 16 * 16;
// Arrays up to this size travel inline, where a copy of their contents costs less than a second
// message: those the CPU reaches, and staged device arrays. (Larger staged arrays keep two
// messages: the receiver reads the header and gets ready while the sender copies the contents
// from the device. Device arrays on a CUDA-aware MPI go straight from their memory.)
constexpr size_t kInlineBytes = 4096;

size_t inline_limit(Runtime& rt, const Array& a) {
  return host_reachable(rt, a) || !mpi_reachable(rt, a) ? kInlineBytes : 0;
}

// The contents of `a` into `message` from kInlineOffset.
void pack_contents(Runtime& rt, const Array& message, const Array& a) {
  if (a.size() == 0) return;
  if (a.is_contiguous() && host_reachable(rt, a)) {
    wait_for_array(rt, a);
    std::memcpy(static_cast<char*>(message.data()) + kInlineOffset, a.data(), a.nbytes());
  } else {
    copy(rt, view_at(message, kInlineOffset, a.dtype(), a.shape()), a);
  }
}

// The contents in `message` into `a`. Into a device array the copy is queued on its device's
// current stream (after the work queued on the array, which is waited for), as the operations that
// follow it; the staging buffer is waited for before its next use.
void unpack_contents(Runtime& rt, const Array& message, const Array& a) {
  if (a.size() == 0) return;
  const Array contents = view_at(message, kInlineOffset, a.dtype(), a.shape());
  if (a.is_contiguous() && host_reachable(rt, a)) {
    wait_for_array(rt, a);
    std::memcpy(a.data(), contents.data(), a.nbytes());
  } else if (!is_host(a.location())) {
    a.buffer()->wait_idle();
    copy(rt, a, contents, &stream_for(rt, a, nullptr));
  } else {
    copy(rt, a, contents);
  }
}

int opt_tag(lua_State* L, int arg, bool any) {
  if (lua_isnoneornil(L, arg)) return 0;
  if (any && lua_type(L, arg) == LUA_TSTRING && std::strcmp(lua_tostring(L, arg), "any") == 0) {
    return mpi::kAny;
  }
  if (!lua_isinteger(L, arg)) type_error(L, arg, any ? "integer tag or \"any\"" : "integer tag");
  const lua_Integer tag = lua_tointeger(L, arg);
  const int top = mpi::max_tag();
  if (tag < 0 || tag > top) arg_error(arg, fmt::format("tag {} is out of range 0..{}", tag, top));
  return static_cast<int>(tag);
}

// cu.mpi.send(v, dest [, tag])
int l_send(lua_State* L) {
  Runtime& rt = runtime(L);
  arg_any(L, 1);
  const int dest = check_rank_arg(L, 2, "dest");
  const int tag = opt_tag(L, 3, false);
  if (ArrayBox* box = test_array(L, 1)) {
    const Array& a = box->array;
    as_argument(1, [&] { a.check_alive(); });
    const Header h = array_header(a);
    if (a.nbytes() <= inline_limit(rt, a)) {
      const size_t bytes = kInlineOffset + a.nbytes();
      const Array message = staging_buffer(L, rt, bytes);
      auto* p = static_cast<char*>(message.data());
      std::memset(p, 0, kInlineOffset);
      p[0] = kInlineArrayMessage;
      std::memcpy(p + 1, &h, sizeof h);
      pack_contents(rt, message, a);
      mpi::send(p, bytes, dest, tag);
      return 0;
    }
    std::string head(1, kArrayMessage);
    head.append(reinterpret_cast<const char*>(&h), sizeof h);
    mpi::send(head.data(), head.size(), dest, tag);
    const Reachable r = reachable(L, rt, a, true);
    mpi::send(a.size() ? r.memory.data() : nullptr, a.nbytes(), dest, tag);
    return 0;
  }
  std::string bytes(1, kValueMessage);
  bytes += pack_value(L, 1, "v");
  mpi::send(bytes.data(), bytes.size(), dest, tag);
  return 0;
}

// The byte size of the contents an inline array message's header announces (SIZE_MAX for a header
// that cu.mpi.send cannot have written).
size_t inline_contents_bytes(const Header& h) {
  if (h.ndim < 0 || h.ndim > kMaxDims || h.dtype < 0 || h.dtype >= kNumDTypes) return SIZE_MAX;
  size_t n = itemsize(static_cast<DType>(h.dtype));
  for (int i = 0; i < h.ndim; ++i) {
    if (h.dims[i] < 0 || h.dims[i] > int64_t{1} << 40) return SIZE_MAX;
    n *= static_cast<size_t>(h.dims[i]);
    if (n > kKeptStagingBytes) return SIZE_MAX;
  }
  return n;
}

// cu.mpi.recv(src [, tag [, {out=}]]) -> value, source, tag; src and tag may be "any" (tag
// default 0); an array arrives in out= when given (same dtype and shape, else an error once the
// message is received).
int l_recv(lua_State* L) {
  Runtime& rt = runtime(L);
  check_options(L, 3, {"out"});
  Array* out = opt_array(L, 3, "out");
  int source = mpi::kAny;
  if (lua_type(L, 1) == LUA_TSTRING && std::strcmp(lua_tostring(L, 1), "any") == 0) {
    source = mpi::kAny;
  } else if (lua_isinteger(L, 1)) {
    source = check_rank_arg(L, 1, "src");
  } else {
    type_error(L, 1, "rank or \"any\"");
  }
  const int tag = opt_tag(L, 2, true);
  const mpi::Message m = mpi::probe(source, tag);
  // Messages that fit the kept staging buffer arrive there (pinned memory: an inline array's
  // contents go on to the device from it), larger ones in a string.
  Array message;
  std::string large;
  char* p = nullptr;
  if (m.bytes <= kKeptStagingBytes) {
    message = staging_buffer(L, rt, m.bytes);
    p = static_cast<char*>(message.data());
  } else {
    large.resize(m.bytes);
    p = large.data();
  }
  mpi::recv(p, m.bytes, m.source, m.tag);
  const char kind = m.bytes > 0 ? p[0] : '\0';
  Header h;
  if (kind == kArrayMessage || kind == kInlineArrayMessage) {
    if (m.bytes >= 1 + sizeof h) std::memcpy(&h, p + 1, sizeof h);
  }
  const bool valid = kind == kValueMessage || (kind == kArrayMessage && m.bytes == 1 + sizeof h) ||
                     (kind == kInlineArrayMessage && message.alive() && m.bytes >= kInlineOffset &&
                      inline_contents_bytes(h) == m.bytes - kInlineOffset);
  if (!valid) {
    fail(ErrorKind::Value, "a message from rank {} (tag {}) was not sent by cu.mpi.send", m.source,
         m.tag);
  }
  if (kind == kValueMessage) {
    unpack_value(L, std::string_view(p + 1, m.bytes - 1));
  } else {
    const bool fits =
        out && out->dtype() == static_cast<DType>(h.dtype) && out->shape() == header_shape(h);
    Array a = fits ? *out
                   : empty(rt, header_shape(h), static_cast<DType>(h.dtype),
                           static_cast<Location>(h.location));
    if (kind == kInlineArrayMessage) {
      unpack_contents(rt, message, a);
    } else {
      const Reachable r = reachable(L, rt, a, false);
      mpi::recv(a.size() ? r.memory.data() : nullptr, a.nbytes(), m.source, m.tag);
      written(rt, a, r);
    }
    if (out && !fits) {
      option_error(3, "out", ErrorKind::Value,
                   fmt::format("rank {} sent {}; out is {}", m.source, describe(h),
                               describe(array_header(*out))));
    }
    push_array(L, std::move(a));
  }
  lua_pushinteger(L, m.source);
  lua_pushinteger(L, m.tag);
  return 3;
}

int l_cuda_aware(lua_State* L) {
  lua_pushboolean(L, mpi::cuda_aware());
  return 1;
}

int l_initialized(lua_State* L) {
  lua_pushboolean(L, mpi::initialized());
  return 1;
}

// cu.mpi.abort([message [, code]]): ends every rank of the job.
int l_abort(lua_State* L) {
  const char* message = opt_arg_string(L, 1, "");
  const lua_Integer code = opt_arg_integer(L, 2, 1);
  mpi::abort(*message ? mpi::rank_prefix() + message : std::string(), static_cast<int>(code));
}

// The fields read lazily: rank, size, local_rank (reading one initializes MPI).
int mpi_index(lua_State* L) {
  const char* key = lua_tostring(L, 2);
  const std::string k = lua_type(L, 2) == LUA_TSTRING ? key : "";
  if (k == "rank") {
    lua_pushinteger(L, mpi::rank());
  } else if (k == "size") {
    lua_pushinteger(L, mpi::size());
  } else if (k == "local_rank") {
    lua_pushinteger(L, mpi::local_rank());
  } else {
    lua_pushnil(L);
  }
  return 1;
}

// os.exit(status) with a failure status on one rank of several: MPI_Abort ends every rank (the
// MPI_Finalize at exit would wait for ranks that may be waiting for this one).
int l_exit_guard(lua_State* L) {
  int status = EXIT_SUCCESS;
  if (lua_isboolean(L, 1)) {
    status = lua_toboolean(L, 1) ? EXIT_SUCCESS : EXIT_FAILURE;
  } else if (lua_isinteger(L, 1)) {
    status = static_cast<int>(lua_tointeger(L, 1));
  }
  if (status != EXIT_SUCCESS) {
    std::fflush(nullptr);
    mpi::abort_on_error(status);
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  call_lua(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

void guard_os_exit(lua_State* L) {
  const int top = lua_gettop(L);
  if (lua_getglobal(L, "os") == LUA_TTABLE && lua_getfield(L, -1, "exit") == LUA_TFUNCTION &&
      lua_tocfunction(L, -1) != entry<l_exit_guard>) {
    lua_pushcclosure(L, entry<l_exit_guard>, 1);
    lua_setfield(L, -2, "exit");
  }
  lua_settop(L, top);
}

constexpr bool kAvailable = true;

#else

int built_without_mpi(lua_State*) {
  fail(ErrorKind::Unsupported,
       "culua was built without MPI (install Open MPI's development files, libopenmpi-dev, and "
       "rebuild); cu.mpi.available() tells scripts");
}

int mpi_index(lua_State* L) {
  const char* key = lua_tostring(L, 2);
  const std::string k = lua_type(L, 2) == LUA_TSTRING ? key : "";
  if (k == "rank" || k == "size" || k == "local_rank") {
    fail(ErrorKind::Unsupported,
         "cu.mpi.{}: culua was built without MPI (install libopenmpi-dev and rebuild); "
         "cu.mpi.available() tells scripts",
         k);
  }
  lua_pushnil(L);
  return 1;
}

constexpr lua_CFunction l_barrier = built_without_mpi;
constexpr lua_CFunction l_bcast = built_without_mpi;
constexpr lua_CFunction l_allreduce = built_without_mpi;
constexpr lua_CFunction l_gather = built_without_mpi;
constexpr lua_CFunction l_send = built_without_mpi;
constexpr lua_CFunction l_recv = built_without_mpi;
constexpr lua_CFunction l_cuda_aware = built_without_mpi;
constexpr lua_CFunction l_abort = built_without_mpi;

int l_initialized(lua_State* L) {
  lua_pushboolean(L, 0);
  return 1;
}

void guard_os_exit(lua_State*) {}

constexpr bool kAvailable = false;

#endif

int l_available(lua_State* L) {
  lua_pushboolean(L, kAvailable);
  return 1;
}

}  // namespace

void register_mpi(lua_State* L) {
  const luaL_Reg functions[] = {{"available", entry<l_available>},
                                {"initialized", entry<l_initialized>},
                                {"cuda_aware", entry<l_cuda_aware>},
                                {"barrier", entry<l_barrier>},
                                {"bcast", entry<l_bcast>},
                                {"allreduce", entry<l_allreduce>},
                                {"gather", entry<l_gather>},
                                {"send", entry<l_send>},
                                {"recv", entry<l_recv>},
                                {"abort", entry<l_abort>},
                                {nullptr, nullptr}};
  luaL_newlib(L, functions);
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, entry<mpi_index>);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, -2);
  lua_setfield(L, -2, "mpi");
  guard_os_exit(L);
}

}  // namespace culua::detail::lua
