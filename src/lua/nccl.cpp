// cu.nccl and cu.NcclComm: NCCL collectives between devices (dist/collectives.hpp). Present on
// every build; where NCCL cannot run (the host backend, a build without CUDA, no libnccl.so.2)
// cu.nccl.available() says why and cu.nccl.comm raises that reason.
#include <new>

#include "core/base/error.hpp"
#include "core/ops/ops.hpp"
#include "dist/collectives.hpp"
#if defined(CULUA_HAVE_MPI)
#include "dist/mpi.hpp"
#endif
#include "lua/binding.hpp"

namespace culua::detail::lua {

namespace {

using dist::Collective;
using dist::CollectiveCall;
using dist::Communicator;

constexpr char kCommType[] = "cu.NcclComm";

struct CommBox {
  std::shared_ptr<Communicator> comm;
};

CommBox* check_box_comm(lua_State* L, int idx) {
  return check_box<CommBox>(L, idx, kCommType);
}

Communicator& check_comm(lua_State* L, int idx) {
  CommBox* box = check_box_comm(L, idx);
  if (!box->comm || box->comm->freed()) fail_released("communicator");
  return *box->comm;
}

// A list of one value per local rank at idx: a table of them, or (one local rank) a single value
// that `single` accepts. `item` converts the value on top of the stack (its position for messages).
template <class T, class Test, class Convert>
std::vector<T> per_rank(lua_State* L, int idx, size_t ranks, const char* what, Test single,
                        Convert item, bool* was_single, int arg, const char* key) {
  std::vector<T> out;
  auto bad = [&](const std::string& message) {
    if (key) option_error(arg, key, ErrorKind::Type, message);
    arg_error(arg, message, ErrorKind::Type);
  };
  if (single(L, idx)) {
    if (ranks != 1) {
      bad(fmt::format("a list of {} {}s expected (one per device of the communicator), got one",
                      ranks, what));
    }
    lua_pushvalue(L, idx);
    out.push_back(item(L, 0));
    lua_pop(L, 1);
    if (was_single) *was_single = true;
    return out;
  }
  if (!lua_istable(L, idx)) {
    bad(fmt::format("{} or list of {}s expected, got {}", what, what, luaL_typename(L, idx)));
  }
  const auto n = static_cast<size_t>(lua_rawlen(L, idx));
  if (n != ranks) {
    bad(fmt::format("a list of {} {}s expected (one per device of the communicator), got {}", ranks,
                    what, n));
  }
  for (size_t i = 1; i <= n; ++i) {
    lua_rawgeti(L, idx, static_cast<lua_Integer>(i));
    if (!single(L, -1)) {
      bad(fmt::format("item {}: {} expected, got {}", i, what, luaL_typename(L, -1)));
    }
    out.push_back(item(L, static_cast<int>(i)));
    lua_pop(L, 1);
  }
  if (was_single) *was_single = false;
  return out;
}

std::vector<Array> arrays_at(lua_State* L, int idx, size_t ranks, bool* was_single, int arg,
                             const char* key = nullptr) {
  return per_rank<Array>(
      L, idx, ranks, "cu.Array", [](lua_State* S, int i) { return test_array(S, i) != nullptr; },
      [](lua_State* S, int) { return test_array(S, -1)->array; }, was_single, arg, key);
}

int opt_rank(lua_State* L, int opts, const char* key, int fallback) {
  if (!get_option(L, opts, key)) return fallback;
  if (!lua_isinteger(L, -1)) {
    option_error(opts, key, ErrorKind::Type,
                 fmt::format("integer expected, got {}", luaL_typename(L, -1)));
  }
  const lua_Integer v = lua_tointeger(L, -1);
  lua_pop(L, 1);
  if (v < 0 || v > 1 << 30) option_error(opts, key, ErrorKind::Value, "must be a rank (from 0)");
  return static_cast<int>(v);
}

void push_arrays(lua_State* L, std::vector<Array> arrays, bool single) {
  if (single) {
    push_array(L, std::move(arrays[0]));
    return;
  }
  lua_createtable(L, static_cast<int>(arrays.size()), 0);
  for (size_t i = 0; i < arrays.size(); ++i) {
    push_array(L, std::move(arrays[i]));
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
}

// The shape of an allocated output: allgather stacks the ranks' inputs on a new first dimension;
// reducescatter splits the first dimension when it divides, else gives a flat array.
Shape output_shape(Collective kind, const Array& in, int nranks, int64_t out_size) {
  Shape in_shape = in.shape();
  if (kind == Collective::AllGather) {
    Shape s{nranks};
    for (int i = 0; i < in_shape.ndim; ++i) s.push(in_shape[i]);
    return s;
  }
  if (in_shape.ndim > 0 && in_shape[0] % nranks == 0) {
    in_shape.dims[0] /= nranks;
    return in_shape;
  }
  return Shape{out_size};
}

// comm:<collective>(arrays [, opts]).
int collective(lua_State* L, Collective kind) {
  Communicator& comm = check_comm(L, 1);
  const size_t ranks = comm.devices().size();
  const bool reducing = dist::reduces(kind);
  const bool rooted = kind == Collective::Reduce || kind == Collective::Broadcast;
  const bool p2p = kind == Collective::Send || kind == Collective::Recv;
  switch (kind) {
    case Collective::AllReduce:
    case Collective::ReduceScatter:
      check_options(L, 3, {"op", "out", "stream"});
      break;
    case Collective::Reduce:
      check_options(L, 3, {"op", "root", "out", "stream"});
      break;
    case Collective::Broadcast:
      check_options(L, 3, {"root", "out", "stream"});
      break;
    case Collective::AllGather:
      check_options(L, 3, {"out", "stream"});
      break;
    case Collective::Send:
    case Collective::Recv:
      check_options(L, 3, {"peer", "stream"});
      break;
  }
  CollectiveCall call;
  call.kind = kind;
  bool single = false;
  call.inputs = arrays_at(L, 2, ranks, &single, 2);
  if (reducing && get_option(L, 3, "op")) {
    if (lua_type(L, -1) != LUA_TSTRING) {
      option_error(3, "op", ErrorKind::Type,
                   fmt::format("string expected, got {}", luaL_typename(L, -1)));
    }
    const std::string name = lua_tostring(L, -1);
    lua_pop(L, 1);
    call.op = as_option(3, "op", [&] { return dist::parse_reduce_op(name); });
  }
  if (rooted) call.root = opt_rank(L, 3, "root", 0);
  if (p2p) {
    if (!get_option(L, 3, "peer")) option_error(3, "peer", ErrorKind::Value, "a rank is required");
    if (lua_istable(L, -1)) {
      const int top = lua_gettop(L);
      const auto n = static_cast<lua_Integer>(lua_rawlen(L, top));
      for (lua_Integer i = 1; i <= n; ++i) {
        lua_rawgeti(L, top, i);
        if (!lua_isinteger(L, -1)) {
          option_error(3, "peer", ErrorKind::Type,
                       fmt::format("item {}: rank expected, got {}", i, luaL_typename(L, -1)));
        }
        const lua_Integer v = lua_tointeger(L, -1);
        call.peers.push_back(v < 0 || v > 1 << 30 ? -1 : static_cast<int>(v));
        lua_pop(L, 1);
      }
      lua_pop(L, 1);
    } else {
      lua_pop(L, 1);
      call.peers.assign(ranks, opt_rank(L, 3, "peer", 0));
    }
  }
  if (get_option(L, 3, "stream")) {
    const int top = lua_gettop(L);
    call.streams = per_rank<Stream*>(
        L, top, ranks, "cu.Stream",
        [](lua_State* S, int i) { return test_stream(S, i) != nullptr; },
        [](lua_State* S, int) { return test_stream(S, -1); }, nullptr, 3, "stream");
    lua_pop(L, 1);
  }
  // Where the outputs already are as a Lua value (given as out=, or the inputs in place): returned
  // as they are, with no new table or array handles per call.
  int given_outputs = 0;
  if (!p2p && get_option(L, 3, "out")) {
    const int top = lua_gettop(L);
    bool out_single = false;
    call.outputs = arrays_at(L, top, ranks, &out_single, 3, "out");
    if (out_single == single) given_outputs = top;  // stays on the stack
  }
  Runtime& rt = runtime(L);
  if (call.outputs.empty() &&
      (kind == Collective::AllGather || kind == Collective::ReduceScatter)) {
    // Allocated after every check of the inputs (nothing is allocated for a bad call).
    dist::check_inputs(call, comm.devices(), comm.size());
    const Array& in = call.inputs[0];
    const int64_t out_size = dist::output_size(kind, in.size(), comm.size());
    for (size_t i = 0; i < ranks; ++i) {
      Stream* s = !call.streams.empty() ? call.streams[i] : nullptr;
      Stream& target = s ? *s : rt.stream_for_device(comm.devices()[i]);
      call.outputs.push_back(empty(rt, output_shape(kind, in, comm.size(), out_size), in.dtype(),
                                   Location::Device, &target));
    }
  }
  const bool in_place = call.outputs.empty();
  std::vector<Array> outputs = comm.run(call);
  if (kind == Collective::Send) return 0;
  if (given_outputs != 0) {
    lua_pushvalue(L, given_outputs);
  } else if (in_place) {
    lua_pushvalue(L, 2);
  } else {
    push_arrays(L, std::move(outputs), single);
  }
  return 1;
}

int c_allreduce(lua_State* L) {
  return collective(L, Collective::AllReduce);
}
int c_reduce(lua_State* L) {
  return collective(L, Collective::Reduce);
}
int c_broadcast(lua_State* L) {
  return collective(L, Collective::Broadcast);
}
int c_allgather(lua_State* L) {
  return collective(L, Collective::AllGather);
}
int c_reducescatter(lua_State* L) {
  return collective(L, Collective::ReduceScatter);
}
int c_send(lua_State* L) {
  return collective(L, Collective::Send);
}
int c_recv(lua_State* L) {
  return collective(L, Collective::Recv);
}

// comm:group(fn): the collectives fn queues form one NCCL group.
int c_group(lua_State* L) {
  Communicator& comm = check_comm(L, 1);
  if (lua_type(L, 2) != LUA_TFUNCTION) type_error(L, 2, "function");
  lua_settop(L, 2);
  const std::shared_ptr<Communicator> keep = check_box_comm(L, 1)->comm;
  comm.group([L] {
    lua_pushvalue(L, 2);
    call_lua(L, 0, 0);
  });
  return 0;
}

int c_sync(lua_State* L) {
  check_comm(L, 1).sync();
  return 0;
}

int c_free(lua_State* L) {
  CommBox* box = check_box_comm(L, 1);
  if (box->comm) box->comm->free();
  box->comm.reset();
  return 0;
}

// Never throws nor waits: a communicator with queued work is left to the process's end.
int c_gc(lua_State* L) {
  CommBox* box = check_box_comm(L, 1);
  if (box->comm) box->comm->release();
  box->comm.reset();
  return 0;
}

std::string device_list(const std::vector<int>& devices) {
  std::string s;
  for (int d : devices) s += (s.empty() ? "" : ", ") + std::to_string(d);
  return s;
}

int c_tostring(lua_State* L) {
  CommBox* box = check_box_comm(L, 1);
  if (!box->comm || box->comm->freed()) {
    lua_pushliteral(L, "cu.NcclComm(<freed>)");
    return 1;
  }
  const Communicator& c = *box->comm;
  const std::string s = c.size() == static_cast<int>(c.devices().size())
                            ? fmt::format("cu.NcclComm({} rank{} on devices {})", c.size(),
                                          c.size() == 1 ? "" : "s", device_list(c.devices()))
                            : fmt::format("cu.NcclComm(rank {} of {} on device {})", c.first_rank(),
                                          c.size(), device_list(c.devices()));
  lua_pushlstring(L, s.data(), s.size());
  return 1;
}

int c_index(lua_State* L) {
  CommBox* box = check_box_comm(L, 1);
  if (push_upvalue_method(L)) return 1;
  const char* key = lua_tostring(L, 2);
  const std::string_view k = key ? key : "";
  if (k == "freed") {
    lua_pushboolean(L, !box->comm || box->comm->freed());
    return 1;
  }
  const Communicator& c = check_comm(L, 1);
  if (k == "size") {
    lua_pushinteger(L, c.size());
  } else if (k == "rank") {
    lua_pushinteger(L, c.first_rank());
  } else if (k == "devices") {
    const auto& d = c.devices();
    lua_createtable(L, static_cast<int>(d.size()), 0);
    for (size_t i = 0; i < d.size(); ++i) {
      lua_pushinteger(L, d[i]);
      lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
    }
  } else {
    fail(ErrorKind::Index, "cu.NcclComm has no field or method '{}'",
         luaL_tolstring(L, 2, nullptr));
  }
  return 1;
}

// timeout= of the options at `opts` (checked by the caller).
dist::CommOptions read_comm_options(lua_State* L, int opts) {
  dist::CommOptions options;
  if (get_option(L, opts, "timeout")) {
    if (lua_type(L, -1) != LUA_TNUMBER) {
      option_error(opts, "timeout", ErrorKind::Type,
                   fmt::format("number of seconds expected, got {}", luaL_typename(L, -1)));
    }
    options.timeout = lua_tonumber(L, -1);
    lua_pop(L, 1);
    if (!(options.timeout > 0) || options.timeout > 1e9) {
      option_error(opts, "timeout", ErrorKind::Value,
                   fmt::format("a positive number of seconds expected, got {}", options.timeout));
    }
  }
  return options;
}

// cu.nccl.comm_world([{device=, timeout=}]): one rank per MPI process, on device `device` (default:
// the rank on this node modulo the devices), which becomes the current device. Rank 0 makes
// NCCL's id and MPI broadcasts it; every rank then joins. Collective over the MPI job.
int l_comm_world(lua_State* L) {
  check_options(L, 1, {"device", "timeout"});
  const dist::CommOptions options = read_comm_options(L, 1);
  Runtime& rt = runtime(L);
#if defined(CULUA_HAVE_MPI)
  if (const std::string why = dist::nccl_unavailable(rt); !why.empty()) {
    fail(ErrorKind::Unsupported, "{}", why);
  }
  const int ndev = rt.backend().device_count();
  int device = -1;
  if (get_option(L, 1, "device")) {
    if (!lua_isinteger(L, -1)) {
      option_error(1, "device", ErrorKind::Type,
                   fmt::format("device index expected, got {}", luaL_typename(L, -1)));
    }
    const lua_Integer d = lua_tointeger(L, -1);
    lua_pop(L, 1);
    if (d < 0 || d >= ndev) {
      option_error(
          1, "device", ErrorKind::Index,
          fmt::format("device {} does not exist (devices are numbered 0..{})", d, ndev - 1));
    }
    device = static_cast<int>(d);
  }
  const int rank = dist::mpi::rank();
  const int size = dist::mpi::size();
  if (device < 0) device = dist::mpi::local_rank() % ndev;
  // Rank 0 makes the id; an empty id tells the others that it could not (they raise too, so no
  // rank waits for a communicator that will never be made).
  std::string id;
  std::string failure;
  if (rank == 0) {
    try {
      id = Communicator::unique_id(rt);
    } catch (const Error& e) {
      failure = e.what();
    }
  }
  dist::mpi::broadcast_bytes(id, 0);
  if (id.empty()) {
    if (rank == 0) fail(ErrorKind::Unsupported, "{}", failure);
    fail(ErrorKind::Unsupported, "rank 0 could not make NCCL's id (its error ends the job)");
  }
  rt.set_device(device);
  refuse_when_closing(L, "communicators");
  auto* box = static_cast<CommBox*>(lua_newuserdatauv(L, sizeof(CommBox), 0));
  new (box) CommBox{};
  set_metatable(L, kCommType);
  box->comm = Communicator::rank_of(rt, id, size, rank, device, options);
  return 1;
#else
  (void)options;
  (void)rt;
  fail(ErrorKind::Unsupported,
       "culua was built without MPI: one GPU per process needs cu.mpi (Open MPI's libopenmpi-dev "
       "when culua is built); cu.nccl.comm(devices) drives several GPUs from one process");
  return 0;
#endif
}

// cu.nccl.comm([devices] [, {timeout=}]).
int l_comm(lua_State* L) {
  Runtime& rt = runtime(L);
  std::vector<int> devices;
  if (lua_isnoneornil(L, 1)) {
    if (const std::string why = dist::nccl_unavailable(rt); !why.empty()) {
      fail(ErrorKind::Unsupported, "{}", why);
    }
    const int n = rt.backend().device_count();
    for (int i = 0; i < n; ++i) devices.push_back(i);
  } else if (lua_isinteger(L, 1)) {
    devices.push_back(static_cast<int>(lua_tointeger(L, 1)));
  } else {
    if (!lua_istable(L, 1)) type_error(L, 1, "list of device indices");
    const auto n = static_cast<lua_Integer>(lua_rawlen(L, 1));
    if (n == 0) arg_error(1, "at least one device index expected, got an empty list");
    for (lua_Integer i = 1; i <= n; ++i) {
      lua_rawgeti(L, 1, i);
      if (!lua_isinteger(L, -1)) {
        arg_error(1, fmt::format("item {}: device index expected, got {}", i, luaL_typename(L, -1)),
                  ErrorKind::Type);
      }
      const lua_Integer d = lua_tointeger(L, -1);
      if (d < -1 || d > 1 << 20) arg_error(1, fmt::format("item {}: device {} out of range", i, d));
      devices.push_back(static_cast<int>(d));
      lua_pop(L, 1);
    }
  }
  check_options(L, 2, {"timeout"});
  const dist::CommOptions options = read_comm_options(L, 2);
  // The handle gets its metatable before the communicator exists (STYLE.md, rule 4).
  refuse_when_closing(L, "communicators");
  auto* box = static_cast<CommBox*>(lua_newuserdatauv(L, sizeof(CommBox), 0));
  new (box) CommBox{};
  set_metatable(L, kCommType);
  box->comm = Communicator::local(rt, devices, options);
  return 1;
}

int l_available(lua_State* L) {
  const std::string why = dist::nccl_unavailable(runtime(L));
  lua_pushboolean(L, why.empty());
  if (why.empty()) return 1;
  lua_pushlstring(L, why.data(), why.size());
  return 2;
}

int l_version(lua_State* L) {
  const std::string v = dist::nccl_version(runtime(L));
  lua_pushlstring(L, v.data(), v.size());
  return 1;
}

const luaL_Reg kMethods[] = {
    {"allreduce", entry<c_allreduce>},
    {"reduce", entry<c_reduce>},
    {"broadcast", entry<c_broadcast>},
    {"allgather", entry<c_allgather>},
    {"reducescatter", entry<c_reducescatter>},
    {"send", entry<c_send>},
    {"recv", entry<c_recv>},
    {"group", entry<c_group>},
    {"sync", entry<c_sync>},
    {"free", entry<c_free>},
    {nullptr, nullptr},
};

}  // namespace

void push_nccl_comm(lua_State* L, std::shared_ptr<dist::Communicator> comm) {
  refuse_when_closing(L, "communicators");
  auto* box = static_cast<CommBox*>(lua_newuserdatauv(L, sizeof(CommBox), 0));
  new (box) CommBox{};
  set_metatable(L, kCommType);
  box->comm = std::move(comm);
}

void register_nccl(lua_State* L) {
  new_metatable(L, kCommType);
  const luaL_Reg meta[] = {{"__gc", entry<c_gc>},
                           {"__close", entry<c_free>},
                           {"__tostring", entry<c_tostring>},
                           {nullptr, nullptr}};
  luaL_setfuncs(L, meta, 0);
  luaL_newlib(L, kMethods);
  lua_pushcclosure(L, entry<c_index>, 1);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
  const luaL_Reg functions[] = {{"comm", entry<l_comm>},
                                {"comm_world", entry<l_comm_world>},
                                {"available", entry<l_available>},
                                {"version", entry<l_version>},
                                {nullptr, nullptr}};
  luaL_newlib(L, functions);
  lua_setfield(L, -2, "nccl");
}

}  // namespace culua::detail::lua
