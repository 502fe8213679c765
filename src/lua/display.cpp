// cu.display and figures shown inline: what a Jupyter kernel (culua --jupyter) shows under a cell.
// Without a kernel cu.display prints its values as the REPL does.
#include "lua/binding.hpp"
#include "measure/plot.hpp"

namespace culua::detail::lua {

namespace {

// The bundle of the value at idx: text/plain as print shows it, and richer forms of culua's
// values from the embedded module cu.jupyter.
DisplayBundle bundle_of(lua_State* L, int idx) {
  idx = lua_absindex(L, idx);
  DisplayBundle b;
  size_t len = 0;
  const char* text = luaL_tolstring(L, idx, &len);
  b.emplace_back("text/plain", std::string(text, len));
  lua_pop(L, 1);
  if (luaL_getmetafield(L, idx, "__name") != LUA_TSTRING) return b;
  const std::string kind = lua_tostring(L, -1);
  lua_pop(L, 1);
  const int top = lua_gettop(L);
  lua_getglobal(L, "require");
  lua_pushliteral(L, "cu.jupyter");
  call_lua(L, 1, 1);
  if (lua_getfield(L, -1, "mimebundle") == LUA_TFUNCTION) {
    lua_pushstring(L, kind.c_str());
    lua_pushvalue(L, idx);
    call_lua(L, 2, 1);
    if (lua_type(L, -1) == LUA_TTABLE) {
      lua_pushnil(L);
      while (lua_next(L, -2)) {
        if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TSTRING)
          b.emplace_back(lua_tostring(L, -2), lua_tostring(L, -1));
        lua_pop(L, 1);
      }
    }
  }
  lua_settop(L, top);
  return b;
}

// cu.display(...): each value shown as the cell's output (in a kernel) or printed.
int l_display(lua_State* L) {
  Context& ctx = context(L);
  const int n = lua_gettop(L);
  if (!ctx.display) {
    lua_getglobal(L, "print");
    lua_insert(L, 1);
    call_lua(L, n, 0);
    return 0;
  }
  for (int i = 1; i <= n; ++i) ctx.display(bundle_of(L, i));
  return 0;
}

}  // namespace

bool show_plot_inline(lua_State* L, const std::function<void(const std::string& file)>& plot_to) {
  Context& ctx = context(L);
  if (!ctx.display) return false;
  ctx.display(measure::render_inline(plot_to));
  return true;
}

void register_display(lua_State* L) {
  lua_pushcfunction(L, entry<l_display>);
  lua_setfield(L, -2, "display");
}

void set_display_hook(lua_State* L, DisplayHook hook) {
  context(L).display = std::move(hook);
}

}  // namespace culua::detail::lua
