// The owning handle of cuda/scoped.hpp on a fake handle type: no GPU needed.
#include <catch2/catch.hpp>

#include <type_traits>
#include <utility>
#include <vector>

#include "core/base/unique_handle.hpp"

using culua::detail::UniqueHandle;

namespace {

struct FakeApi {
  std::vector<int> released;  // in order
};

// Carries state, as the CUDA release functors carry their device.
struct FakeRelease {
  FakeApi* api = nullptr;
  void operator()(int h) const noexcept { api->released.push_back(h); }
};
using Fake = UniqueHandle<int, FakeRelease>;

}  // namespace

TEST_CASE("an owning handle releases what it holds exactly once") {
  FakeApi api;
  {
    Fake a(7, FakeRelease{&api});
    CHECK(a);
    CHECK(a.get() == 7);
  }
  CHECK(api.released == std::vector<int>{7});

  {
    const Fake empty;
    CHECK(!empty);
    CHECK(empty.get() == 0);
  }
  CHECK(api.released == std::vector<int>{7});  // the null handle is never released
}

TEST_CASE("moving an owning handle transfers it: the source releases nothing") {
  FakeApi api;
  {
    Fake a(3, FakeRelease{&api});
    Fake b(std::move(a));
    CHECK(!a);  // NOLINT(bugprone-use-after-move): a moved-from handle is empty
    CHECK(b.get() == 3);
    Fake c;
    c = std::move(b);
    CHECK(!b);  // NOLINT(bugprone-use-after-move)
    CHECK(c.get() == 3);
    CHECK(api.released.empty());
  }
  CHECK(api.released == std::vector<int>{3});
}

TEST_CASE("move assignment releases the handle it replaces, with that handle's releaser") {
  FakeApi first, second;
  Fake a(1, FakeRelease{&first});
  Fake b(2, FakeRelease{&second});
  a = std::move(b);
  CHECK(first.released == std::vector<int>{1});
  CHECK(second.released.empty());
  CHECK(a.get() == 2);
  a.reset();
  CHECK(second.released == std::vector<int>{2});
  CHECK(!a);

  // Self-move keeps the handle and releases nothing.
  Fake c(5, FakeRelease{&first});
  Fake& alias = c;
  c = std::move(alias);
  CHECK(c.get() == 5);
  CHECK(first.released == std::vector<int>{1});
}

TEST_CASE("release gives the handle up, reset releases the old one and takes the new") {
  FakeApi api;
  {
    Fake a(4, FakeRelease{&api});
    const int h = a.release();
    CHECK(h == 4);
    CHECK(!a);
    a.reset(9);
    CHECK(a.get() == 9);
    a.reset(10);
    CHECK(api.released == std::vector<int>{9});
  }
  CHECK(api.released == std::vector<int>{9, 10});
}

TEST_CASE("owning handles are move-only and never throw") {
  STATIC_REQUIRE(!std::is_copy_constructible_v<Fake>);
  STATIC_REQUIRE(!std::is_copy_assignable_v<Fake>);
  STATIC_REQUIRE(std::is_nothrow_move_constructible_v<Fake>);
  STATIC_REQUIRE(std::is_nothrow_move_assignable_v<Fake>);
  STATIC_REQUIRE(std::is_nothrow_destructible_v<Fake>);
  STATIC_REQUIRE(noexcept(std::declval<Fake&>().reset()));
  // A stateless releaser takes no room.
  struct Stateless {
    void operator()(void*) const noexcept {}
  };
  STATIC_REQUIRE(sizeof(UniqueHandle<void*, Stateless>) == sizeof(void*));
}
