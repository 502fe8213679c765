#include "lua/lua_heap.hpp"

#include <malloc.h>
#include <lua.hpp>

#include <cstdlib>
#include <cstring>

namespace culua::detail::lua {

LuaHeap::~LuaHeap() {
  trim();
}

void LuaHeap::install(lua_State* L) {
  lua_setallocf(L, allocate, this);
}

void LuaHeap::trim() noexcept {
  for (FreeBlock*& head : lists_) {
    while (head) {
      FreeBlock* next = head->next;
      std::free(head);
      head = next;
    }
  }
  cached_ = 0;
}

void* LuaHeap::take(size_t n) noexcept {
  const size_t c = class_of(n);
  if (FreeBlock* b = lists_[c]) {
    lists_[c] = b->next;
    cached_ -= class_size(c);
    return b;
  }
  // The class's full size, so that the block can serve any request of its class when it is back.
  void* p = std::malloc(class_size(c));
  if (!p && cached_ > 0) {
    trim();
    p = std::malloc(class_size(c));
  }
  return p;
}

void LuaHeap::give(void* p, size_t n) noexcept {
  const size_t c = class_of(n);
  // A block that malloc made for another size (before install, or by a realloc of a larger one)
  // is kept only when it can hold the class's largest request.
  if (cached_ + class_size(c) <= kMaxCached && malloc_usable_size(p) >= class_size(c)) {
    auto* b = static_cast<FreeBlock*>(p);
    b->next = lists_[c];
    lists_[c] = b;
    cached_ += class_size(c);
    return;
  }
  std::free(p);
}

void* LuaHeap::allocate(void* ud, void* ptr, size_t osize, size_t nsize) noexcept {
  auto* heap = static_cast<LuaHeap*>(ud);
  // With ptr null, osize is the kind of object Lua makes, not a size.
  const size_t old = ptr ? osize : 0;
  if (nsize == 0) {
    if (ptr) {
      if (old > 0 && old <= kMaxSmall) {
        heap->give(ptr, old);
      } else {
        std::free(ptr);
      }
    }
    return nullptr;
  }
  if (!ptr) {
    if (nsize <= kMaxSmall) return heap->take(nsize);
    void* p = std::malloc(nsize);
    if (!p && heap->cached_ > 0) {
      heap->trim();
      p = std::malloc(nsize);
    }
    return p;
  }
  // A resize: within a class, the block stays; small to anything, through a copy; large to
  // large, realloc.
  if (old <= kMaxSmall && nsize <= kMaxSmall && class_of(old) == class_of(nsize) &&
      malloc_usable_size(ptr) >= nsize) {
    return ptr;
  }
  if (old > kMaxSmall && nsize > kMaxSmall) {
    void* p = std::realloc(ptr, nsize);
    if (!p && heap->cached_ > 0) {
      heap->trim();
      p = std::realloc(ptr, nsize);
    }
    return p;
  }
  void* p = nsize <= kMaxSmall ? heap->take(nsize) : std::malloc(nsize);
  if (!p) return nullptr;  // Lua keeps the old block
  std::memcpy(p, ptr, old < nsize ? old : nsize);
  if (old <= kMaxSmall) {
    heap->give(ptr, old);
  } else {
    std::free(ptr);
  }
  return p;
}

}  // namespace culua::detail::lua
