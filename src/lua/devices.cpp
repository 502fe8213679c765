// Several devices: the checks that keep one operation on one device, with errors naming the
// argument and both devices.
#include <string>

#include "core/base/error.hpp"
#include "lua/binding.hpp"

namespace culua::detail::lua {

namespace {

const Array* device_array(lua_State* L, int idx) {
  ArrayBox* box = test_array(L, idx);
  if (!box || !box->array.alive() || box->array.location() != Location::Device) return nullptr;
  return &box->array;
}

// The checks of check_one_device after the arguments' device (-1: none).
int check_options_device(int device, int opts, const Array* out, const Stream* stream) {
  if (device < 0) return device;
  if (out && out->alive() && out->location() == Location::Device && out->device() != device) {
    option_error(opts, "out", ErrorKind::Value,
                 fmt::format("array on device {}, expected device {} (the operands' device)",
                             out->device(), device));
  }
  if (stream && stream->device() != device) {
    option_error(opts, "stream", ErrorKind::Value,
                 fmt::format("stream of device {}, expected device {} (the arrays' device)",
                             stream->device(), device));
  }
  return device;
}

// One argument's device array (null: none) against the device of the earlier ones.
void note_device(int idx, const Array* a, int* device) {
  if (!a) return;
  if (*device < 0) {
    *device = a->device();
    return;
  }
  if (a->device() != *device) {
    arg_error(idx,
              fmt::format("array on device {}, expected device {} (the first array's device); "
                          "copy it with cu.copy",
                          a->device(), *device),
              ErrorKind::Value);
  }
}

}  // namespace

int check_one_device(lua_State* L, std::initializer_list<int> args, int opts, const Array* out,
                     const Stream* stream) {
  int device = -1;
  for (const int idx : args) note_device(idx, device_array(L, idx), &device);
  return check_options_device(device, opts, out, stream);
}

int check_one_device(std::initializer_list<ArrayArgument> args, int opts, const Array* out,
                     const Stream* stream) {
  int device = -1;
  for (const ArrayArgument& a : args) {
    const bool on_device = a.array && a.array->alive() && a.array->location() == Location::Device;
    note_device(a.index, on_device ? a.array : nullptr, &device);
  }
  return check_options_device(device, opts, out, stream);
}

int check_device_index(lua_State* L, int arg) {
  Runtime& rt = runtime(L);
  const int64_t d = as_argument(arg, [&] { return check_integer(L, arg, "device"); });
  const int n = rt.backend().device_count();
  if (d < 0 || d >= n) {
    arg_error(
        arg,
        fmt::format("device {} does not exist (devices are numbered 0..{})", lua_Integer(d), n - 1),
        ErrorKind::Index);
  }
  return static_cast<int>(d);
}

}  // namespace culua::detail::lua
