// The parts of core/ops/launcher.hpp off the elementwise path: the out= destination of the
// reductions, scans and products, and the out= checks of the reductions and scans.
#include "core/ops/launcher.hpp"

#include "core/base/error.hpp"

namespace culua::detail {

Destination::Destination(const Array* out, DType result, std::optional<DType> convert_to,
                         std::initializer_list<const Array*> reads)
    : out_(out), result_(result), convert_to_(convert_to) {
  direct_ = out && out->dtype() == result && !convert_to;
  for (const Array* r : reads) {
    if (!direct_) break;
    direct_ = out->size() == 0 || r->size() == 0 || !overlaps(*out, *r);
  }
}

Array Destination::finish(Runtime& rt, Array result, Stream* stream) const {
  if (convert_to_) result = astype(rt, result, *convert_to_, stream);
  if (out_ && !direct_) {
    copy(rt, *out_, result, stream);
    return *out_;
  }
  return result;
}

void check_out_place(const Array& out, const Shape& shape, const Array& input, const char* op) {
  const bool host = is_host(input.location());
  if (!(out.shape() == shape)) {
    fail(ErrorKind::Value, "out has shape {} but the result of {} has shape {}", out.shape().str(),
         op, shape.str());
  }
  if (is_host(out.location()) != host) {
    fail(ErrorKind::Value,
         "out is a {} array but the input is a {} array: both must be on the device or both on "
         "the host",
         location_name(out.location()), location_name(input.location()));
  }
  if (!host && out.device() != input.device()) {
    fail(ErrorKind::Value, "out is on device {} but the input is on device {}", out.device(),
         input.device());
  }
}

}  // namespace culua::detail
