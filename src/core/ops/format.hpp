// numpy-like text of an array: uniform element width, rows on lines, large arrays summarized to
// their edges ("..."), then shape, dtype and location. Reading device data synchronizes.
#pragma once

#include <string>

#include "core/model/array.hpp"
#include "core/runtime/runtime.hpp"

namespace culua::detail {

struct FormatOptions {
  int64_t threshold = 1000;  // more elements than this are summarized
  int64_t edge = 3;          // elements kept at each end of a summarized dimension
  int line_width = 75;
};

std::string format_array(Runtime& rt, const Array& a, const FormatOptions& opt = {});

}  // namespace culua::detail
