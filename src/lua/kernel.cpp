// cu.compile, cu.Module and cu.Kernel: run-time compiled CUDA kernels with checked launches.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "core/base/error.hpp"
#include "core/runtime/sandbox.hpp"
#include "lua/binding.hpp"
#include "lua/kernel.hpp"
#include "rtc/arguments.hpp"
#include "rtc/kernel_signature.hpp"
#include "rtc/rtc_kernel.hpp"

namespace culua::detail::lua {

// ---------------------------------------------------------------------------------------------
// Where the source came from, to map compiler line numbers to the script.

SourceOrigin find_origin(lua_State* L, const std::string& source) {
  SourceOrigin o;
  // The innermost Lua function calling (pcall(cu.compile, src) has pcall in between).
  lua_Debug ar;
  for (int level = 1;; ++level) {
    if (!lua_getstack(L, level, &ar) || !lua_getinfo(L, "Sl", &ar)) return o;
    if (ar.currentline > 0) break;
  }
  o.chunk = ar.short_src;
  o.call_line = ar.currentline;
  if (!ar.source || ar.source[0] != '@' || source.empty()) return o;
  if (sandboxed()) return o;  // reads no file for a sandboxed script
  std::ifstream in(ar.source + 1, std::ios::binary);
  if (!in) return o;
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string text = buf.str();
  // The last occurrence that starts before the call (a source string defined above its use),
  // else the first.
  int best_line = 0;
  for (size_t pos = text.find(source); pos != std::string::npos; pos = text.find(source, pos + 1)) {
    const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + pos, '\n'));
    if (best_line == 0 || line <= o.call_line) best_line = line;
    if (line > o.call_line) break;
  }
  o.first_line = best_line;
  return o;
}

std::string map_compiler_log(const std::string& log, const std::string& program,
                             const SourceOrigin& o) {
  if (o.first_line <= 0) return log;
  std::string out;
  out.reserve(log.size());
  const std::string open = program + "(";
  size_t i = 0;
  while (i < log.size()) {
    const size_t at = log.find(open, i);
    if (at == std::string::npos) {
      out.append(log, i, std::string::npos);
      break;
    }
    size_t j = at + open.size();
    long line = 0;
    const size_t digits = j;
    while (j < log.size() && log[j] >= '0' && log[j] <= '9') line = line * 10 + (log[j++] - '0');
    if (j == digits || j >= log.size() || log[j] != ')') {
      out.append(log, i, j - i);
      i = j;
      continue;
    }
    out.append(log, i, at - i);
    out += fmt::format("{}:{}", o.chunk, o.first_line + line - 1);
    i = j + 1;
  }
  return out;
}

std::shared_ptr<const RtcBinary> compile_checked(Runtime& rt, const RtcRequest& request,
                                                 const SourceOrigin& origin) {
  try {
    return std::make_shared<const RtcBinary>(rt.backend().compile(request, rt.device()));
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Value) throw;
    std::string msg = map_compiler_log(e.what(), request.name, origin);
    if (origin.first_line <= 0 && !origin.chunk.empty()) {
      msg +=
          fmt::format("\n(line numbers count from the start of the source string passed at {}:{})",
                      origin.chunk, origin.call_line);
    }
    throw Error(ErrorKind::Value, msg);
  }
}

namespace {

// ---------------------------------------------------------------------------------------------
// Modules.

struct ModuleState {
  std::string source;  // as the script gave it
  RtcRequest request;  // the source with the signature probe, and the expressions so far
  std::vector<rtc::KernelDecl> decls;
  std::shared_ptr<const RtcBinary> binary;  // the latest compile
  RtcBinary first;                          // what cu.compile itself did, for m.info (no image)
  SourceOrigin origin;
};

struct ModuleBox {
  std::shared_ptr<ModuleState> m;
};

ModuleState& check_module(lua_State* L, int idx) {
  auto* box = check_box<ModuleBox>(L, idx, kModuleType);
  if (!box->m) fail(ErrorKind::Released, "cannot use a module after it has been released");
  return *box->m;
}

std::string kernel_list(const ModuleState& m) {
  std::string names;
  for (const auto& d : m.decls) {
    std::string n = d.is_template ? d.name + "<" + d.template_params + ">" : d.name;
    if (names.find(n) != std::string::npos) continue;
    names += (names.empty() ? "" : ", ") + n;
  }
  return names.empty() ? "none found" : names;
}

const rtc::KernelDecl* find_decl(const ModuleState& m, const std::string& expression, int* count) {
  const std::string base = expression.substr(0, expression.find('<'));
  const rtc::KernelDecl* found = nullptr;
  *count = 0;
  for (const auto& d : m.decls) {
    if (d.name == base) {
      found = &d;
      ++*count;
    }
  }
  return found;
}

// ---------------------------------------------------------------------------------------------
// Kernels.

struct LuaKernel {
  std::shared_ptr<rtc::RtcKernel> kernel;
  std::vector<std::string> what;  // "saxpy: argument 2 (x: float const*)", per parameter
  std::vector<uint32_t> accepts;  // pointer parameters: the dtypes taken, as a bit mask
  std::vector<Buffer*> buffers;   // the arrays of one launch (reused)
  std::vector<ArrayBox*> boxes;   // per parameter: the array passed, when it is one (reused)
  // The script line of the latest launch, formatted once per call site.
  const char* site_source = nullptr;
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
  if (!k) fail(ErrorKind::Released, "cannot use a kernel after it has been released");
  return *k;
}

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

int kernel_gc(lua_State* L) {
  check_kernel_box(L, 1)->k.reset();
  return 0;
}

}  // namespace

std::shared_ptr<rtc::RtcKernel> make_kernel(std::shared_ptr<const RtcBinary> binary,
                                            const std::string& expression,
                                            const rtc::KernelDecl* decl) {
  const std::string* symbol = binary->symbol(expression);
  if (!symbol) fail(ErrorKind::Value, "the module has no kernel '{}'", expression);
  std::vector<rtc::KernelParam> params = rtc::resolve_params(*binary, expression, decl);
  std::string s = *symbol;
  return std::make_shared<rtc::RtcKernel>(std::move(binary), expression, std::move(s),
                                          std::move(params));
}

namespace {

// The kernel `expression` of module at idx, from the module's table of kernels or made now
// (compiling the instantiation when the module does not have it yet). Pushes it. `field`: asked for
// as m.name, where a name that is no kernel is no field either.
void push_module_kernel(lua_State* L, int idx, const std::string& expression, bool field) {
  idx = lua_absindex(L, idx);
  ModuleState& m = check_module(L, idx);
  lua_getiuservalue(L, idx, 1);
  lua_getfield(L, -1, expression.c_str());
  if (!lua_isnil(L, -1)) {
    lua_remove(L, -2);
    return;
  }
  lua_pop(L, 1);
  int count = 0;
  const rtc::KernelDecl* decl = find_decl(m, expression, &count);
  if (count > 1) {
    fail(ErrorKind::Value,
         "kernel '{}' is overloaded ({} declarations); culua cannot tell which one to launch: give "
         "the overloads different names",
         expression, count);
  }
  if (!m.binary->symbol(expression)) {
    if (!decl && field) {
      fail(ErrorKind::Index,
           "module '{}' has no kernel or field '{}' (its kernels: {}; its fields: kernel, info, "
           "kernels, name, source)",
           m.request.name, expression, kernel_list(m));
    }
    if (!decl) {
      fail(ErrorKind::Value, "module '{}' has no kernel '{}' (its kernels: {})", m.request.name,
           expression, kernel_list(m));
    }
    if (decl->is_template && expression.find('<') == std::string::npos) {
      fail(ErrorKind::Value,
           "kernel '{}' is a template: ask for an instantiation, such as m:kernel(\"{}<float>\") "
           "(its parameters: template <{}>)",
           expression, expression, decl->template_params);
    }
    RtcRequest r = m.request;
    r.name_expressions.push_back(expression);
    r.name_expressions.push_back(rtc::signature_probe(expression));
    try {
      m.binary = compile_checked(runtime(L), r, m.origin);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::Value) throw;
      fail(ErrorKind::Value, "module '{}' has no kernel '{}' that the compiler can instantiate: {}",
           m.request.name, expression, e.what());
    }
    m.request = std::move(r);
  }
  push_kernel(L, make_kernel(m.binary, expression, decl));
  lua_pushvalue(L, -1);
  lua_setfield(L, -3, expression.c_str());
  lua_remove(L, -2);
}

std::vector<std::string> string_list(lua_State* L, int opts, const char* key) {
  std::vector<std::string> out;
  if (!get_option(L, opts, key)) return out;
  if (lua_type(L, -1) == LUA_TSTRING) {
    out.emplace_back(lua_tostring(L, -1));
  } else if (lua_type(L, -1) == LUA_TTABLE) {
    const lua_Integer n = luaL_len(L, -1);
    for (lua_Integer i = 1; i <= n; ++i) {
      lua_rawgeti(L, -1, i);
      if (lua_type(L, -1) != LUA_TSTRING) {
        option_error(opts, key, ErrorKind::Type,
                     fmt::format("[{}] must be a string, got {}", i, luaL_typename(L, -1)));
      }
      out.emplace_back(lua_tostring(L, -1));
      lua_pop(L, 1);
    }
  } else {
    option_error(opts, key, ErrorKind::Type,
                 fmt::format("string or table of strings expected, got {}", luaL_typename(L, -1)));
  }
  lua_pop(L, 1);
  return out;
}

int l_compile(lua_State* L) {
  size_t len = 0;
  const char* src = lua_type(L, 1) == LUA_TSTRING ? lua_tolstring(L, 1, &len) : nullptr;
  if (!src) {
    arg_error(1, fmt::format("string of CUDA C++ expected, got {}", luaL_typename(L, 1)),
              ErrorKind::Type);
  }
  check_options(L, 2, {"name", "options", "include_paths", "name_expressions", "cache"});
  auto m = std::make_shared<ModuleState>();
  m->source.assign(src, len);
  m->request.name = "kernel.cu";
  if (get_option(L, 2, "name")) {
    if (lua_type(L, -1) != LUA_TSTRING) {
      option_error(2, "name", ErrorKind::Type,
                   fmt::format("string expected, got {}", luaL_typename(L, -1)));
    }
    m->request.name = lua_tostring(L, -1);
    lua_pop(L, 1);
  }
  m->request.options = string_list(L, 2, "options");
  m->request.include_paths = string_list(L, 2, "include_paths");
  const std::vector<std::string> wanted = string_list(L, 2, "name_expressions");
  m->request.use_cache = opt_boolean(L, 2, "cache", true);
  m->origin = find_origin(L, m->source);
  m->decls = rtc::scan_kernels(m->source);
  m->request.source = m->source + rtc::kSignatureProbeSource;

  // Every kernel that is neither a template nor overloaded is compiled with its probe at once;
  // templates are instantiated when asked for (m:kernel("scale<float>")).
  auto add = [&](const std::string& e) {
    for (const auto& x : m->request.name_expressions) {
      if (x == e) return;
    }
    m->request.name_expressions.push_back(e);
    m->request.name_expressions.push_back(rtc::signature_probe(e));
  };
  for (const auto& d : m->decls) {
    int count = 0;
    find_decl(*m, d.name, &count);
    if (!d.is_template && count == 1) add(d.name);
  }
  for (const auto& e : wanted) add(e);

  Runtime& rt = runtime(L);
  m->binary = compile_checked(rt, m->request, m->origin);
  m->first = *m->binary;
  m->first.image.clear();

  refuse_when_closing(L, "modules");

  auto* box = static_cast<ModuleBox*>(lua_newuserdatauv(L, sizeof(ModuleBox), 1));
  new (box) ModuleBox{};
  set_metatable(L, kModuleType);
  box->m = std::move(m);
  lua_newtable(L);  // kernels by expression
  lua_setiuservalue(L, -2, 1);
  return 1;
}

int module_gc(lua_State* L) {
  check_box<ModuleBox>(L, 1, kModuleType)->m.reset();
  return 0;
}

int module_kernel(lua_State* L) {
  check_module(L, 1);
  const char* name = arg_string(L, 2);
  push_module_kernel(L, 1, name, false);
  return 1;
}

const char* cache_name(CacheOutcome c) {
  switch (c) {
    case CacheOutcome::Hit:
      return "hit";
    case CacheOutcome::Miss:
      return "miss";
    case CacheOutcome::Off:
      break;
  }
  return "off";
}

void push_info(lua_State* L, const ModuleState& m) {
  const RtcBinary& b = m.first;
  lua_createtable(L, 0, 8);
  lua_pushstring(L, m.request.name.c_str());
  lua_setfield(L, -2, "name");
  lua_pushstring(L, cache_name(b.cache));
  lua_setfield(L, -2, "cache");
  lua_pushnumber(L, b.compile_ms);
  lua_setfield(L, -2, "compile_ms");
  lua_pushnumber(L, b.elapsed_ms);
  lua_setfield(L, -2, "elapsed_ms");
  lua_pushstring(L, b.arch.c_str());
  lua_setfield(L, -2, "arch");
  lua_pushstring(L, b.log.c_str());
  lua_setfield(L, -2, "log");
  lua_pushboolean(L, b.ptx);
  lua_setfield(L, -2, "ptx");
  if (!b.cache_path.empty()) {
    lua_pushstring(L, b.cache_path.c_str());
    lua_setfield(L, -2, "cache_file");
  }
}

void push_kernel_names(lua_State* L, const ModuleState& m) {
  lua_createtable(L, static_cast<int>(m.decls.size()), 0);
  lua_Integer i = 0;
  for (const auto& d : m.decls) {
    const std::string n = d.is_template ? d.name + "<" + d.template_params + ">" : d.name;
    lua_pushstring(L, n.c_str());
    lua_rawseti(L, -2, ++i);
  }
}

int module_index(lua_State* L) {
  ModuleState& m = check_module(L, 1);
  const char* key = arg_string(L, 2);
  const std::string_view k(key);
  if (k == "kernel") {
    lua_pushcfunction(L, entry<module_kernel>);
  } else if (k == "info") {
    push_info(L, m);
  } else if (k == "kernels") {
    push_kernel_names(L, m);
  } else if (k == "name") {
    lua_pushstring(L, m.request.name.c_str());
  } else if (k == "source") {
    lua_pushlstring(L, m.source.data(), m.source.size());
  } else {
    push_module_kernel(L, 1, key, true);
  }
  return 1;
}

int module_tostring(lua_State* L) {
  const ModuleState& m = check_module(L, 1);
  lua_pushfstring(L, "cu.Module %s (%s; kernels: %s)", m.request.name.c_str(), m.first.arch.c_str(),
                  kernel_list(m).c_str());
  return 1;
}

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

  // The script line of this launch, for the message of an asynchronous fault.
  lua_Debug ar;
  if (lua_getstack(L, 1, &ar) && lua_getinfo(L, "Sl", &ar)) {
    if (ar.source != lk.site_source || ar.currentline != lk.site_line) {
      std::snprintf(lk.site, sizeof lk.site, "kernel '%s' launched at %s:%d", k.name().c_str(),
                    ar.short_src, ar.currentline);
      lk.site_source = ar.source;
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
  if (!box->k) fail(ErrorKind::Released, "cannot use a kernel after it has been released");
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
  new_metatable(L, kModuleType);
  const luaL_Reg module_methods[] = {{"__index", entry<module_index>},
                                     {"__gc", entry<module_gc>},
                                     {"__tostring", entry<module_tostring>},
                                     {nullptr, nullptr}};
  luaL_setfuncs(L, module_methods, 0);
  lua_pop(L, 1);

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

  lua_pushcfunction(L, entry<l_compile>);
  lua_setfield(L, -2, "compile");
}

}  // namespace culua::detail::lua
