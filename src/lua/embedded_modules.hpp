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

// The text of the annotation file lua/meta/cu.lua, which cu.help reads (cmake/EmbedText.cmake).
extern const char kAnnotations[];

}  // namespace culua::detail::lua
