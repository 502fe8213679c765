#include <catch2/catch.hpp>

#include "core/ops.hpp"

using namespace culua;

TEST_CASE("the CUDA backend is selected when a GPU is present") {
  Runtime rt;
  REQUIRE(rt.kind() == BackendKind::Cuda);
}
