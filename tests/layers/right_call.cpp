// The control of layers.wrong_call: the same link with a call that goes the right way (into the
// core itself) succeeds.
#include <string>

#include "core/base/error.hpp"

int culua_layer_right_call() {
  return static_cast<int>(culua::detail::format_bytes(1.0).size());
}
