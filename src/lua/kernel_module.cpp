// cu.compile and cu.Module: CUDA C++ compiled at run time. Compiler messages are mapped to the
// script's lines; a module's kernels are made on first use (a template's instantiation compiled
// when it is asked for). The kernel objects and their launches are kernel.cpp.
#include <algorithm>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "core/base/error.hpp"
#include "core/runtime/sandbox.hpp"
#include "lua/binding.hpp"
#include "lua/kernel.hpp"
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

std::vector<std::string> option_string_list(lua_State* L, int opts, const char* key) {
  std::vector<std::string> out;
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
  return out;
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
  check_alive(box->m, "module");
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

// Option `key` of the options table at `opts`: a string or a list of strings (none when absent).
std::vector<std::string> string_list(lua_State* L, int opts, const char* key) {
  std::vector<std::string> out;
  if (!get_option(L, opts, key)) return out;
  if (lua_type(L, -1) == LUA_TSTRING) {
    out.emplace_back(lua_tostring(L, -1));
  } else if (lua_type(L, -1) == LUA_TTABLE) {
    out = option_string_list(L, opts, key);
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

}  // namespace

void register_module(lua_State* L) {
  new_metatable(L, kModuleType);
  const luaL_Reg module_methods[] = {{"__index", entry<module_index>},
                                     {"__gc", entry<module_gc>},
                                     {"__tostring", entry<module_tostring>},
                                     {nullptr, nullptr}};
  luaL_setfuncs(L, module_methods, 0);
  lua_pop(L, 1);

  lua_pushcfunction(L, entry<l_compile>);
  lua_setfield(L, -2, "compile");
}

}  // namespace culua::detail::lua
