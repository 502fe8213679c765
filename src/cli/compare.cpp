#include "cli/compare.hpp"

#include <cstdio>

namespace culua::cli {

int compare_main(int, char**) {
  std::fprintf(stderr, "culua compare: not built yet\n");
  return 2;
}

}  // namespace culua::cli
