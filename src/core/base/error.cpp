#include "core/base/error.hpp"

namespace culua::detail {

void fail_released(std::string_view what) {
  throw Error(ErrorKind::Released, fmt::format("attempt to use a released {}", what));
}

std::string format_bytes(double bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 6) {
    bytes /= 1024.0;
    ++u;
  }
  if (u == 0) return fmt::format("{:.0f} B", bytes);
  return fmt::format("{:.1f} {}", bytes, kUnits[u]);
}

}  // namespace culua::detail
