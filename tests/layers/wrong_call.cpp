// Deliberately wrong: core code calling into the backends layer (declared by hand, so no include
// stops it). Linked with the core's objects and dependencies only, by the test layers.wrong_call
// (tests/check_layers.cmake), which expects the link to fail on this symbol.
namespace culua::detail::backends {
bool have_cuda();
}

int culua_layer_wrong_call() {
  return culua::detail::backends::have_cuda() ? 1 : 0;
}
