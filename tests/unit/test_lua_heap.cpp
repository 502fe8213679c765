// The program's Lua allocator (lua/lua_heap): small blocks kept and reused, sizes and contents
// kept across resizes, blocks from before it was installed handled, a state's whole life on it.
#include <malloc.h>
#include <lua.hpp>

#include <cstring>

#include "helpers.hpp"
#include "lua/lua_heap.hpp"

using culua::detail::lua::LuaHeap;

namespace {

void* alloc(LuaHeap& h, void* p, size_t osize, size_t nsize) {
  return LuaHeap::allocate(&h, p, osize, nsize);
}

}  // namespace

TEST_CASE("lua heap: a freed small block serves the next request of its class", "[lua]") {
  LuaHeap h;
  void* a = alloc(h, nullptr, LUA_TUSERDATA, 200);
  REQUIRE(a != nullptr);
  CHECK(malloc_usable_size(a) >= 208);  // the class's size
  alloc(h, a, 200, 0);
  CHECK(h.cached_bytes() == 208);
  void* b = alloc(h, nullptr, LUA_TTABLE, 193);  // same class (193..208)
  CHECK(b == a);
  CHECK(h.cached_bytes() == 0);
  void* c = alloc(h, nullptr, LUA_TTABLE, 209);  // the next class: a new block
  CHECK(c != b);
  alloc(h, b, 193, 0);
  alloc(h, c, 209, 0);
}

TEST_CASE("lua heap: resizes keep the contents across classes and past the small sizes", "[lua]") {
  LuaHeap h;
  auto* p = static_cast<unsigned char*>(alloc(h, nullptr, 0, 24));
  for (int i = 0; i < 24; ++i) p[i] = static_cast<unsigned char>(i + 1);
  p = static_cast<unsigned char*>(alloc(h, p, 24, 30));  // same class: the block stays
  for (int i = 24; i < 30; ++i) p[i] = static_cast<unsigned char>(i + 1);
  p = static_cast<unsigned char*>(alloc(h, p, 30, 400));  // small to small
  for (int i = 30; i < 400; ++i) p[i] = static_cast<unsigned char>(i + 1);
  p = static_cast<unsigned char*>(alloc(h, p, 400, 5000));  // small to large
  for (int i = 400; i < 5000; ++i) p[i] = static_cast<unsigned char>(i + 1);
  p = static_cast<unsigned char*>(alloc(h, p, 5000, 9000));  // large to large
  p = static_cast<unsigned char*>(alloc(h, p, 9000, 100));   // large to small
  for (int i = 0; i < 100; ++i) REQUIRE(p[i] == static_cast<unsigned char>(i + 1));
  alloc(h, p, 100, 0);
}

TEST_CASE("lua heap: a block malloc made for a smaller size is not kept for its class", "[lua]") {
  LuaHeap h;
  // As a block Lua's own allocator made before install(): malloc's size for exactly 17 bytes.
  void* p = std::malloc(17);
  REQUIRE(p != nullptr);
  const size_t usable = malloc_usable_size(p);
  alloc(h, p, 17, 0);
  // Kept only when it holds the class's largest request (32 bytes).
  CHECK(h.cached_bytes() == (usable >= 32 ? 32u : 0u));
}

TEST_CASE("lua heap: a state runs and closes on it", "[lua]") {
  LuaHeap h;
  lua_State* L = luaL_newstate();
  REQUIRE(L != nullptr);
  h.install(L);
  luaL_openlibs(L);
  const char* code =
      "local t = {} for i = 1, 20000 do t[i] = {i, tostring(i)} end "
      "local s = 0 for i = 1, #t do s = s + t[i][1] + #t[i][2] end "
      "t = nil collectgarbage() return s";
  REQUIRE(luaL_dostring(L, code) == LUA_OK);
  CHECK(lua_tointeger(L, -1) == 200010000 + 88894);
  lua_close(L);
  CHECK(h.cached_bytes() <= LuaHeap::kMaxCached);
}
