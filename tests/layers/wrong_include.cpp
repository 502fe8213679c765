// Deliberately wrong: a core source including a backend's header. Built only by the test
// layers.wrong_include (tests/check_layers.cmake), which expects the compiler to not find it.
#include "host/host_backend.hpp"

int culua_layer_wrong_include() {
  return 0;
}
