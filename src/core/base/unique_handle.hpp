// One owning type for the opaque handles of C APIs (CUDA streams, events, modules, graphs, pools,
// cuBLAS handles): move-only, released exactly once by a release functor that cannot throw. It
// knows nothing of CUDA, so that it is tested without a GPU (tests/unit/test_unique_handle.cpp);
// the CUDA instances are in cuda/scoped.hpp. (In core: any layer may own a C handle with it.)
#pragma once

#include <type_traits>
#include <utility>

namespace culua::detail {

// `Release` is called as `release(handle)` for a held handle other than Handle{} (the null
// handle); it must be noexcept and must ignore (or only log) a failed release. A release functor
// may carry state (the device the handle belongs to).
template <class Handle, class Release>
class UniqueHandle {
  static_assert(std::is_trivially_copyable_v<Handle>, "handles are plain values");
  static_assert(std::is_nothrow_invocable_v<const Release&, Handle>,
                "releasing a handle must not throw");
  static_assert(std::is_nothrow_move_constructible_v<Release>);

 public:
  UniqueHandle() noexcept = default;
  explicit UniqueHandle(Handle h, Release release = Release{}) noexcept
      : handle_(h), release_(std::move(release)) {}
  ~UniqueHandle() { reset(); }

  UniqueHandle(UniqueHandle&& other) noexcept
      : handle_(other.release()), release_(std::move(other.release_)) {}
  UniqueHandle& operator=(UniqueHandle&& other) noexcept {
    if (this != &other) {
      reset(other.release());
      release_ = std::move(other.release_);
    }
    return *this;
  }
  UniqueHandle(const UniqueHandle&) = delete;
  UniqueHandle& operator=(const UniqueHandle&) = delete;

  Handle get() const noexcept { return handle_; }
  explicit operator bool() const noexcept { return handle_ != Handle{}; }
  const Release& releaser() const noexcept { return release_; }

  // Gives the handle up without releasing it (a handle that must outlive its owner, or one that
  // can no longer be released because its context is gone).
  [[nodiscard]] Handle release() noexcept { return std::exchange(handle_, Handle{}); }

  // Releases the held handle, then holds `h`.
  void reset(Handle h = Handle{}) noexcept {
    const Handle old = std::exchange(handle_, h);
    if (old != Handle{}) release_(old);
  }

 private:
  Handle handle_{};
  [[no_unique_address]] Release release_{};
};

}  // namespace culua::detail
