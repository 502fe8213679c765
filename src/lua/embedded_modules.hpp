// Lua modules from lua/ compiled into the binary (see cmake/EmbedLua.cmake).
#pragma once

namespace culua::detail::lua {

struct EmbeddedModule {
  const char* name;       // "cu.testing"
  const char* chunkname;  // "@lua/cu/testing.lua"
  const char* source;
};

// Ends with an entry whose name is null.
extern const EmbeddedModule kEmbeddedModules[];

}  // namespace culua::detail::lua
