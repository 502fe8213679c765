// The allocator of the Lua states culua creates (the program, the embedding API): Lua's own
// (realloc and free) with the small blocks Lua frees kept for its next allocations of their size.
// An array is a userdata of about 200 bytes, and a loop making and dropping arrays has the
// collector free them in bursts of thousands: too many for glibc's per-thread cache (7 blocks a
// size), so each went through malloc's bins (about 480 instructions an array for the pair).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

struct lua_State;

namespace culua::detail::lua {

class LuaHeap {
 public:
  // Blocks up to kMaxSmall bytes, in classes of kGranule bytes; at most kMaxCached bytes kept in
  // all (a freed block past that goes back to malloc).
  static constexpr size_t kGranule = 16;
  static constexpr size_t kMaxSmall = 512;
  static constexpr size_t kClasses = kMaxSmall / kGranule;
  static constexpr size_t kMaxCached = size_t{16} << 20;

  LuaHeap() = default;
  ~LuaHeap();  // after lua_close of every state it served
  LuaHeap(const LuaHeap&) = delete;
  LuaHeap& operator=(const LuaHeap&) = delete;

  // Serves the state from now on (blocks malloc gave the state before are freed or kept alike).
  void install(lua_State* L);
  // The lua_Alloc function (ud: the LuaHeap).
  static void* allocate(void* ud, void* ptr, size_t osize, size_t nsize) noexcept;

  size_t cached_bytes() const { return cached_; }

 private:
  struct FreeBlock {
    FreeBlock* next;
  };
  static size_t class_of(size_t n) { return (n + kGranule - 1) / kGranule - 1; }
  static size_t class_size(size_t c) { return (c + 1) * kGranule; }
  void* take(size_t n) noexcept;
  void give(void* p, size_t n) noexcept;
  void trim() noexcept;

  std::array<FreeBlock*, kClasses> lists_{};
  size_t cached_ = 0;
};

}  // namespace culua::detail::lua
