#include <catch2/catch.hpp>

#include "core/error.hpp"
#include "core/layout.hpp"

using namespace culua;

TEST_CASE("contiguous layouts have row-major strides") {
  const Layout l = Layout::contiguous(Shape{2, 3, 4});
  CHECK(l.strides[0] == 12);
  CHECK(l.strides[1] == 4);
  CHECK(l.strides[2] == 1);
  CHECK(l.is_contiguous());
  CHECK_FALSE(l.transpose(0, 2).is_contiguous());
}
