// cu.Kernel and cu.ConfiguredKernel: the kernels of a module (kernel_module.cpp) and their checked
// launches, k(cfg, args...), with the occupancy queries and attributes.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/base/error.hpp"
#include "lua/binding.hpp"
#include "lua/kernel.hpp"
#include "rtc/arguments.hpp"
#include "rtc/kernel_signature.hpp"
#include "rtc/rtc_kernel.hpp"

namespace culua::detail::lua {

namespace {

// ---------------------------------------------------------------------------------------------
// Kernels.

struct LuaKernel {
  std::shared_ptr<rtc::RtcKernel> kernel;
  std::vector<std::string> what;  // "saxpy: argument 2 (x: float const*)", per parameter
  std::vector<uint32_t> accepts;  // pointer parameters: the dtypes taken, as a bit mask
  std::vector<Buffer*> buffers;   // the arrays of one launch (reused)
  std::vector<ArrayBox*> boxes;   // per parameter: the array passed, when it is one (reused)
  // The script line of the latest launch, formatted once per call site: the calling function (a
  // collected function's address may come back for another one; at the same line the text could
  // then name the old one's file) and the line.
  const void* site_source = nullptr;
  int site_line = -1;
  char site[256] = {};
  LaunchSite launch_site{site, 0};
};

struct KernelBox {
  std::shared_ptr<LuaKernel> k;  // shared with its configured kernels; null once collected
};

KernelBox* check_kernel_box(lua_State* L, int idx) {
  if (!has_metatable(L, idx, context(L).kernel_mt)) type_error(L, idx, kKernelType);
  return static_cast<KernelBox*>(lua_touserdata(L, idx));
}

LuaKernel& check_kernel(lua_State* L, int idx) {
  LuaKernel* k = check_kernel_box(L, idx)->k.get();
  check_alive(k, "kernel");
  return *k;
}

int kernel_gc(lua_State* L) {
  check_kernel_box(L, 1)->k.reset();
  return 0;
}

}  // namespace

void push_kernel(lua_State* L, std::shared_ptr<rtc::RtcKernel> kernel) {
  refuse_when_closing(L, "kernels");
  auto* box = static_cast<KernelBox*>(lua_newuserdatauv(L, sizeof(KernelBox), 0));
  new (box) KernelBox{};
  set_metatable(L, kKernelType);
  auto lk = std::make_shared<LuaKernel>();
  for (size_t i = 0; i < kernel->params().size(); ++i) {
    lk->what.push_back(kernel->name() + ": " + rtc::describe_argument(i, kernel->params()[i]));
  }
  size_t pointers = 0;
  for (const auto& p : kernel->params()) {
    pointers += p.type.kind == rtc::ParamKind::Pointer;
    lk->accepts.push_back(rtc::accepted_mask(p.type));
  }
  lk->buffers.resize(pointers);
  lk->boxes.resize(kernel->params().size());
  lk->kernel = std::move(kernel);
  box->k = std::move(lk);
}

namespace {

// ---------------------------------------------------------------------------------------------
// Launching.

uint32_t dim_value(lua_State* L, int idx, const char* key, const LuaKernel& k) {
  if (lua_isinteger(L, idx)) {
    const lua_Integer v = lua_tointeger(L, idx);
    if (v < 1 || v > 0xffffffffLL) {
      fail(ErrorKind::Value, "{}: {} sizes must be at least 1, got {}", k.kernel->name(), key, v);
    }
    return static_cast<uint32_t>(v);
  }
  return static_cast<uint32_t>(check_integer(L, idx, key));  // raises for 2.5 and non-numbers
}

// The launch configuration's fields, in the order of Context::launch_config_keys.
enum ConfigKey { kGrid, kBlock, kShared, kStream };
constexpr const char* kConfigKeyNames[] = {"grid", "block", "shared", "stream"};

// lua_getfield(L, cfg, name of `key`) (metamethods included) with the interned name.
int get_config_field(lua_State* L, const Context& ctx, int cfg, ConfigKey key) {
  lua_rawgeti(L, LUA_REGISTRYINDEX, ctx.launch_config_keys[key]);
  return lua_gettable(L, cfg);
}

void read_dims(lua_State* L, const Context& ctx, int cfg, ConfigKey field, uint32_t out[3],
               const LuaKernel& k) {
  const char* key = kConfigKeyNames[field];
  const int t = get_config_field(L, ctx, cfg, field);
  if (t == LUA_TNUMBER) {
    out[0] = dim_value(L, -1, key, k);
  } else if (t == LUA_TTABLE) {
    const lua_Integer n = luaL_len(L, -1);
    if (n < 1 || n > 3) {
      fail(ErrorKind::Value, "{}: {} must have 1 to 3 sizes, got {}", k.kernel->name(), key, n);
    }
    for (int i = 0; i < n; ++i) {
      lua_rawgeti(L, -1, i + 1);
      out[i] = dim_value(L, -1, key, k);
      lua_pop(L, 1);
    }
  } else if (t == LUA_TNIL) {
    fail(ErrorKind::Value, "{}: the launch configuration needs {}= (a number or {{x, y, z}})",
         k.kernel->name(), key);
  } else {
    fail(ErrorKind::Type, "{}: {} must be a number or a table of 1 to 3 numbers, got {}",
         k.kernel->name(), key, luaL_typename(L, -1));
  }
  lua_pop(L, 1);
}

// A launch configuration table at `cfg`: dimensions, and the stream (null: the current one).
// With `stream_ref`, the stream's shared pointer is returned too (configure keeps it).
LaunchDims read_config(lua_State* L, int cfg, const LuaKernel& k, Stream** stream,
                       std::shared_ptr<Stream>* stream_ref = nullptr) {
  Context& ctx = context(L);
  if (lua_type(L, cfg) != LUA_TTABLE) {
    fail(ErrorKind::Type,
         "{}: the first argument must be the launch configuration {{grid=, block=, shared=, "
         "stream=}}, got {}",
         k.kernel->name(), luaL_typename(L, cfg));
  }
  // Typos in the configuration are errors; a table used for many launches is checked once.
  if (lua_topointer(L, cfg) != ctx.checked_launch_config) {
    check_fields(L, cfg, {"grid", "block", "shared", "stream"});
    ctx.checked_launch_config = lua_topointer(L, cfg);
  }
  cfg = lua_absindex(L, cfg);
  LaunchDims d;
  read_dims(L, ctx, cfg, kGrid, d.grid, k);
  read_dims(L, ctx, cfg, kBlock, d.block, k);
  if (get_config_field(L, ctx, cfg, kShared) != LUA_TNIL) {
    const int64_t bytes = check_integer(L, -1, "shared");
    if (bytes < 0 || bytes > 0x7fffffff) {
      fail(ErrorKind::Value, "{}: shared must be a number of bytes, got {}", k.kernel->name(),
           bytes);
    }
    d.shared = static_cast<uint32_t>(bytes);
  }
  lua_pop(L, 1);
  *stream = nullptr;
  if (get_config_field(L, ctx, cfg, kStream) != LUA_TNIL) {
    *stream = &check_stream(L, -1);
    if (stream_ref) *stream_ref = (*stream)->shared_from_this();
  }
  lua_pop(L, 1);
  return d;
}

// Launches `lk` with its arguments at first.. (exactly as many as it has parameters).
void launch_with(lua_State* L, LuaKernel& lk, const LaunchDims& d, Stream* stream, int first) {
  rtc::RtcKernel& k = *lk.kernel;
  Context& ctx = context(L);
  Runtime& rt = *ctx.rt;
  const auto& params = k.params();
  const int nargs = lua_gettop(L) - first + 1;
  if (nargs != static_cast<int>(params.size())) {
    fail(ErrorKind::Value, "{} takes {} argument{}{}, got {}", k.signature(), params.size(),
         params.size() == 1 ? "" : "s", first > 2 ? " after the launch configuration" : "", nargs);
  }
  // The launch goes to the device of its arrays (all on one), on the stream given or that
  // device's current stream.
  // Each array argument is checked for its type once (kept in lk.boxes for the loop below).
  int device = -1;
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i].type.kind != rtc::ParamKind::Pointer) continue;
    const int idx = first + static_cast<int>(i);
    ArrayBox* box = test_array(L, idx);
    lk.boxes[i] = box;
    if (!box || !box->array.alive() || box->array.location() != Location::Device) continue;
    const int on = box->array.device();
    if (device < 0) {
      device = on;
    } else if (on != device) {
      arg_error(idx, fmt::format("array on device {}, expected device {} (the first array's "
                                 "device); copy it with cu.copy",
                                 on, device));
    }
  }
  if (stream && device >= 0 && stream->device() != device) {
    fail(ErrorKind::Value, "the stream belongs to device {} but the arrays to device {}",
         stream->device(), device);
  }
  Stream& s = stream ? *stream : device >= 0 ? rt.stream_for_device(device) : rt.current_stream();
  rtc::RtcKernel::OnDevice& dev = k.on_device(rt.backend(), s.device());
  k.prepare(dev, d);

  size_t nbuf = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    const int idx = first + static_cast<int>(i);
    const rtc::ParamType& p = params[i].type;
    switch (p.kind) {
      case rtc::ParamKind::Pointer: {
        ArrayBox* box = lk.boxes[i];
        if (!box) {
          fail(ErrorKind::Type, "{} must be a device array, got {}", lk.what[i],
               luaL_typename(L, idx));
        }
        const Array& a = box->array;
        void* ptr = a.alive() ? a.data() : nullptr;
        // Alignments are powers of two: a mask instead of a division (the modulo otherwise).
        const uintptr_t address = reinterpret_cast<uintptr_t>(ptr);
        const uintptr_t align = p.pointee_align;
        const bool aligned =
            (align & (align - 1)) == 0 ? (address & (align - 1)) == 0 : address % align == 0;
        const bool ok = ptr && a.location() == Location::Device && a.device() == s.device() &&
                        ((lk.accepts[i] >> static_cast<unsigned>(a.dtype())) & 1u) &&
                        a.is_contiguous() && aligned;
        if (!ok) rtc::check_pointer_argument(p, a, s.device(), lk.what[i]);  // raises, saying why
        std::memcpy(k.slot(i), &ptr, sizeof ptr);
        lk.buffers[nbuf++] = a.buffer().get();
        break;
      }
      case rtc::ParamKind::Unsupported:
        fail(ErrorKind::Type, "{}: culua cannot pass this parameter: {}", lk.what[i],
             p.unsupported);
      default: {
        // The common cases without the general conversion: a Lua integer into an int, a Lua
        // float into a float or double.
        if (lua_type(L, idx) == LUA_TNUMBER) {
          if (lua_isinteger(L, idx)) {
            const lua_Integer v = lua_tointeger(L, idx);
            if (p.kind == rtc::ParamKind::Signed && p.size == 4 && v >= INT32_MIN &&
                v <= INT32_MAX) {
              const int32_t x = static_cast<int32_t>(v);
              std::memcpy(k.slot(i), &x, sizeof x);
              break;
            }
          } else if (p.kind == rtc::ParamKind::Float) {
            const double v = lua_tonumber(L, idx);
            if (p.format == rtc::FloatFormat::Double) {
              std::memcpy(k.slot(i), &v, sizeof v);
              break;
            }
            if (p.format == rtc::FloatFormat::Single && std::fabs(v) <= 3.4028234663852886e38) {
              const float x = static_cast<float>(v);
              std::memcpy(k.slot(i), &x, sizeof x);
              break;
            }
          }
        }
        Scalar v;
        switch (lua_type(L, idx)) {
          case LUA_TNUMBER:
            v = lua_isinteger(L, idx) ? Scalar::integer(lua_tointeger(L, idx))
                                      : Scalar::real(lua_tonumber(L, idx));
            break;
          case LUA_TBOOLEAN:
            v = Scalar::boolean(lua_toboolean(L, idx));
            break;
          default:
            if (!is_scalar(L, idx)) {
              fail(ErrorKind::Type, "{} must be a {}, got {}", lk.what[i],
                   p.kind == rtc::ParamKind::Bool ? "boolean" : "number", luaL_typename(L, idx));
            }
            v = check_scalar(L, idx);
        }
        rtc::encode_param(p, v, k.slot(i), lk.what[i]);
      }
    }
  }
  for (size_t i = 0; i < nbuf; ++i) lk.buffers[i]->record_use(s);

  // The script line of this launch, for the message of an asynchronous fault. The calling
  // function and its line identify it ("fl": the source's name, "S", costs as much again and is
  // asked for only when they change).
  lua_Debug ar;
  if (lua_getstack(L, 1, &ar) && lua_getinfo(L, "fl", &ar)) {
    const void* fn = lua_topointer(L, -1);
    lua_pop(L, 1);
    if (fn != lk.site_source || ar.currentline != lk.site_line) {
      lua_getinfo(L, "S", &ar);
      std::snprintf(lk.site, sizeof lk.site, "kernel '%s' launched at %s:%d", k.name().c_str(),
                    ar.short_src, ar.currentline);
      lk.site_source = fn;
      lk.site_line = ar.currentline;
      lk.launch_site.version = ++ctx.launch_site_version;
    }
  } else if (lk.site_line != -2) {
    std::snprintf(lk.site, sizeof lk.site, "kernel '%s'", k.name().c_str());
    lk.site_source = nullptr;
    lk.site_line = -2;
    lk.launch_site.version = ++ctx.launch_site_version;
  }
  dev.function->launch(d, s, k.argv(), lk.launch_site);
}

// k(cfg, ...) and k:launch(cfg, ...)
int kernel_call(lua_State* L) {
  LuaKernel& lk = check_kernel(L, 1);
  Stream* stream = nullptr;
  const LaunchDims d = read_config(L, 2, lk, &stream);
  launch_with(L, lk, d, stream, 3);
  return 0;
}

// A kernel with its launch configuration bound (k:configure(cfg)): calls take only the kernel's
// arguments, and the configuration is read and checked once.
struct BoundBox {
  std::shared_ptr<LuaKernel> k;
  LaunchDims dims;
  std::shared_ptr<Stream> stream;  // null: the current stream at each launch
};

BoundBox* check_bound(lua_State* L, int idx) {
  if (!has_metatable(L, idx, context(L).bound_mt)) type_error(L, idx, kBoundKernelType);
  return static_cast<BoundBox*>(lua_touserdata(L, idx));
}

int bound_call(lua_State* L) {
  auto* box = check_bound(L, 1);
  check_alive(box->k, "kernel");
  launch_with(L, *box->k, box->dims, box->stream.get(), 2);
  return 0;
}

int bound_gc(lua_State* L) {
  auto* box = check_bound(L, 1);
  box->~BoundBox();
  new (box) BoundBox{};
  return 0;
}

int bound_index(lua_State* L) {
  check_bound(L, 1);
  fail(ErrorKind::Index,
       "{} has no field '{}': it is only called, k(args...); the kernel's fields are on the kernel "
       "that k:configure made it from",
       kBoundKernelType, luaL_tolstring(L, 2, nullptr));
}

int bound_tostring(lua_State* L) {
  auto* box = check_bound(L, 1);
  if (!box->k) {
    lua_pushliteral(L, "cu.Kernel (released)");
    return 1;
  }
  const LaunchDims& d = box->dims;
  lua_pushfstring(L,
                  "cu.Kernel %s configured with grid {%d, %d, %d}, block {%d, %d, %d}, shared %d",
                  box->k->kernel->signature().c_str(), int(d.grid[0]), int(d.grid[1]),
                  int(d.grid[2]), int(d.block[0]), int(d.block[1]), int(d.block[2]), int(d.shared));
  return 1;
}

int kernel_configure(lua_State* L) {
  LuaKernel& lk = check_kernel(L, 1);
  Stream* stream = nullptr;
  std::shared_ptr<Stream> ref;
  const LaunchDims d = read_config(L, 2, lk, &stream, &ref);
  // Checked now against the device it will run on (the stream's, else the current one).
  Runtime& rt = runtime(L);
  const int device = stream ? stream->device() : rt.device();
  lk.kernel->prepare(lk.kernel->on_device(rt.backend(), device), d);
  refuse_when_closing(L, "kernels");
  auto* box = static_cast<BoundBox*>(lua_newuserdatauv(L, sizeof(BoundBox), 1));
  new (box) BoundBox{};
  set_metatable(L, kBoundKernelType);
  box->k = check_kernel_box(L, 1)->k;
  box->dims = d;
  box->stream = std::move(ref);
  lua_pushvalue(L, 1);
  lua_setiuservalue(L, -2, 1);
  return 1;
}

int kernel_occupancy(lua_State* L) {
  LuaKernel& lk = check_kernel(L, 1);
  const int64_t block = check_integer(L, 2, "block");
  const int64_t shared = lua_isnoneornil(L, 3) ? 0 : check_integer(L, 3, "shared");
  Runtime& rt = runtime(L);
  rtc::RtcKernel::OnDevice& dev = lk.kernel->on_device(rt.backend(), rt.device());
  LaunchDims d;
  d.block[0] = static_cast<uint32_t>(std::max<int64_t>(0, std::min<int64_t>(block, 1 << 30)));
  d.shared = static_cast<uint32_t>(std::max<int64_t>(0, std::min<int64_t>(shared, 1 << 30)));
  lk.kernel->prepare(dev, d);
  const int blocks = dev.function->max_active_blocks(static_cast<int>(block), d.shared);
  const int warps_per_block =
      static_cast<int>((block + dev.info.warp_size - 1) / dev.info.warp_size);
  const int max_warps = dev.info.max_threads_per_sm / dev.info.warp_size;
  lua_createtable(L, 0, 4);
  lua_pushinteger(L, blocks);
  lua_setfield(L, -2, "blocks_per_sm");
  lua_pushinteger(L, blocks * warps_per_block);
  lua_setfield(L, -2, "active_warps");
  lua_pushinteger(L, max_warps);
  lua_setfield(L, -2, "max_warps");
  lua_pushnumber(L, max_warps ? double(blocks * warps_per_block) / max_warps : 0.0);
  lua_setfield(L, -2, "occupancy");
  return 1;
}

// The block size (a multiple of the warp size) with the highest occupancy; the largest of equals.
int kernel_best_block(lua_State* L) {
  LuaKernel& lk = check_kernel(L, 1);
  const int64_t shared = lua_isnoneornil(L, 2) ? 0 : check_integer(L, 2, "shared");
  Runtime& rt = runtime(L);
  rtc::RtcKernel::OnDevice& dev = lk.kernel->on_device(rt.backend(), rt.device());
  const int limit = std::min(dev.attributes.max_threads_per_block, dev.info.max_block[0]);
  int best = 0, best_warps = -1;
  for (int b = dev.info.warp_size; b <= limit; b += dev.info.warp_size) {
    LaunchDims d;
    d.block[0] = static_cast<uint32_t>(b);
    d.shared = static_cast<uint32_t>(std::max<int64_t>(0, shared));
    lk.kernel->prepare(dev, d);
    const int warps = dev.function->max_active_blocks(b, d.shared) * (b / dev.info.warp_size);
    if (warps >= best_warps) {
      best = b;
      best_warps = warps;
    }
  }
  lua_pushinteger(L, best);
  return 1;
}

void push_attributes(lua_State* L, const KernelAttributes& a) {
  lua_createtable(L, 0, 8);
  const std::pair<const char*, lua_Integer> fields[] = {
      {"registers", a.registers},
      {"max_threads_per_block", a.max_threads_per_block},
      {"static_shared", static_cast<lua_Integer>(a.static_shared)},
      {"local", static_cast<lua_Integer>(a.local)},
      {"constant", static_cast<lua_Integer>(a.constant)},
      {"max_dynamic_shared", static_cast<lua_Integer>(a.max_dynamic_shared)},
      {"ptx_version", a.ptx_version},
      {"binary_version", a.binary_version}};
  for (const auto& [k, v] : fields) {
    lua_pushinteger(L, v);
    lua_setfield(L, -2, k);
  }
}

int kernel_index(lua_State* L) {
  LuaKernel& lk = check_kernel(L, 1);
  const std::string_view key = arg_string(L, 2);
  rtc::RtcKernel& k = *lk.kernel;
  if (key == "launch") {
    lua_pushcfunction(L, entry<kernel_call>);
  } else if (key == "configure") {
    lua_pushcfunction(L, entry<kernel_configure>);
  } else if (key == "occupancy") {
    lua_pushcfunction(L, entry<kernel_occupancy>);
  } else if (key == "best_block") {
    lua_pushcfunction(L, entry<kernel_best_block>);
  } else if (key == "name") {
    lua_pushstring(L, k.name().c_str());
  } else if (key == "symbol") {
    lua_pushstring(L, k.symbol().c_str());
  } else if (key == "signature") {
    lua_pushstring(L, k.signature().c_str());
  } else if (key == "params") {
    lua_createtable(L, static_cast<int>(k.params().size()), 0);
    lua_Integer i = 0;
    for (const auto& p : k.params()) {
      lua_createtable(L, 0, 2);
      lua_pushstring(L, p.name.c_str());
      lua_setfield(L, -2, "name");
      lua_pushstring(L, p.type.spelling.c_str());
      lua_setfield(L, -2, "type");
      lua_rawseti(L, -2, ++i);
    }
  } else if (key == "attributes") {
    Runtime& rt = runtime(L);
    rtc::RtcKernel::OnDevice& dev = k.on_device(rt.backend(), rt.device());
    KernelAttributes a = dev.function->attributes();
    push_attributes(L, a);
  } else {
    fail(ErrorKind::Index,
         "cu.Kernel has no field or method '{}' (it has launch, configure, occupancy, best_block, "
         "name, symbol, signature, params, attributes)",
         key);
  }
  return 1;
}

int kernel_tostring(lua_State* L) {
  LuaKernel& lk = check_kernel(L, 1);
  lua_pushfstring(L, "cu.Kernel %s", lk.kernel->signature().c_str());
  return 1;
}

}  // namespace

void register_kernel(lua_State* L) {
  register_module(L);  // cu.Module and cu.compile (kernel_module.cpp)

  new_metatable(L, kKernelType);
  const luaL_Reg kernel_methods[] = {{"__index", entry<kernel_index>},
                                     {"__call", entry<kernel_call>},
                                     {"__gc", entry<kernel_gc>},
                                     {"__tostring", entry<kernel_tostring>},
                                     {nullptr, nullptr}};
  luaL_setfuncs(L, kernel_methods, 0);
  context(L).kernel_mt = lua_topointer(L, -1);
  lua_pop(L, 1);

  new_metatable(L, kBoundKernelType);
  const luaL_Reg bound_methods[] = {{"__call", entry<bound_call>},
                                    {"__index", entry<bound_index>},
                                    {"__gc", entry<bound_gc>},
                                    {"__tostring", entry<bound_tostring>},
                                    {nullptr, nullptr}};
  luaL_setfuncs(L, bound_methods, 0);
  context(L).bound_mt = lua_topointer(L, -1);
  lua_pop(L, 1);

  Context& ctx = context(L);
  for (int i = 0; i < 4; ++i) {
    lua_pushstring(L, kConfigKeyNames[i]);
    ctx.launch_config_keys[i] = luaL_ref(L, LUA_REGISTRYINDEX);
  }
}

}  // namespace culua::detail::lua
