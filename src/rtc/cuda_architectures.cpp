#include "rtc/cuda_architectures.hpp"

#include <charconv>
#include <string>
#include <vector>

#include "build/cuda_architectures.hpp"

namespace culua::detail::rtc {

namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

CudaArchitecture parse_one(std::string_view entry) {
  CudaArchitecture a;
  a.text = std::string(entry);
  bool sass = true;
  bool ptx = true;
  if (ends_with(entry, "-real")) {
    entry.remove_suffix(5);
    ptx = false;
  } else if (ends_with(entry, "-virtual")) {
    entry.remove_suffix(8);
    sass = false;
  }
  char variant = 0;
  if (!entry.empty() && (entry.back() == 'a' || entry.back() == 'f')) {
    variant = entry.back();
    entry.remove_suffix(1);
  }
  int number = 0;
  const auto [end, ec] = std::from_chars(entry.data(), entry.data() + entry.size(), number);
  if (entry.empty() || ec != std::errc() || end != entry.data() + entry.size() || number < 10) {
    return a;  // not a number: all, all-major, native
  }
  a.number = number;
  a.variant = variant;
  a.sass = sass;
  a.ptx = ptx;
  return a;
}

}  // namespace

std::vector<CudaArchitecture> parse_cuda_architectures(std::string_view list) {
  std::vector<CudaArchitecture> archs;
  while (!list.empty()) {
    const size_t cut = list.find_first_of(",;");
    std::string_view entry = list.substr(0, cut);
    while (!entry.empty() && entry.front() == ' ') entry.remove_prefix(1);
    while (!entry.empty() && entry.back() == ' ') entry.remove_suffix(1);
    if (!entry.empty()) archs.push_back(parse_one(entry));
    if (cut == std::string_view::npos) break;
    list.remove_prefix(cut + 1);
  }
  return archs;
}

const std::vector<CudaArchitecture>& built_cuda_architectures() {
  static const std::vector<CudaArchitecture> archs =
      parse_cuda_architectures(CULUA_CUDA_ARCHITECTURES);
  return archs;
}

std::string describe_cuda_architectures(const std::vector<CudaArchitecture>& archs) {
  std::string out;
  auto add = [&out](std::string_view name) {
    if (!out.empty()) out += ", ";
    out += name;
  };
  for (const CudaArchitecture& a : archs) {
    if (a.number == 0) {
      add(a.text);
      continue;
    }
    const std::string suffix =
        std::to_string(a.number) + (a.variant ? std::string(1, a.variant) : "");
    if (a.sass) add("sm_" + suffix);
    if (a.ptx) add("compute_" + suffix);
  }
  return out.empty() ? "none" : out;
}

bool cuda_architectures_cover(const std::vector<CudaArchitecture>& archs, int major, int minor) {
  const int device = major * 10 + minor;
  for (const CudaArchitecture& a : archs) {
    if (a.number == 0) return true;
    const int a_major = a.number / 10;
    const int a_minor = a.number % 10;
    if (a.variant == 'a') {
      if ((a.sass || a.ptx) && a.number == device) return true;
      continue;
    }
    // Machine code, and a family's PTX: the same major version, a minor not above the GPU's.
    const bool same_family = a_major == major && a_minor <= minor;
    if (a.sass && same_family) return true;
    if (a.ptx && (a.variant == 'f' ? same_family : a.number <= device)) return true;
  }
  return false;
}

}  // namespace culua::detail::rtc
