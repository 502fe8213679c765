#include "core/ops/format.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "core/base/error.hpp"
#include "core/ops/ops.hpp"

namespace culua::detail {

namespace {

// Shortest decimal that reads back as the same element of `t`: its significant digits and
// decimal exponent (the text is d.ddd * 10^exp).
struct Decimal {
  int digits;
  int exp;
};

bool reads_back(double parsed, double v, DType t) {
  switch (t) {
    case DType::F64:
    case DType::C128:
      return parsed == v;
    case DType::F16:
      return half::from_double(parsed).bits == half::from_double(v).bits;
    case DType::BF16:
      return bfloat16::from_double(parsed).bits == bfloat16::from_double(v).bits;
    default:
      return narrow_to_float(parsed) == narrow_to_float(v);
  }
}

Decimal shortest(double v, DType t) {
  for (int p = 1; p <= 17; ++p) {
    const std::string s = fmt::format("{:.{}e}", v, p - 1);
    if (reads_back(std::strtod(s.c_str(), nullptr), v, t) || p == 17) {
      return Decimal{p, std::atoi(s.c_str() + s.find('e') + 1)};
    }
  }
  return Decimal{17, 0};
}

// numpy's choice: scientific notation when the magnitudes are far apart or extreme; at most 8
// digits after the point; every float shows a point ("1.").
std::vector<std::string> format_reals(const std::vector<double>& values, DType t) {
  double max_abs = 0, min_abs = HUGE_VAL;
  for (double v : values) {
    if (std::isfinite(v) && v != 0) {
      max_abs = std::max(max_abs, std::fabs(v));
      min_abs = std::min(min_abs, std::fabs(v));
    }
  }
  const bool sci = max_abs >= 1e8 || (max_abs > 0 && (min_abs < 1e-4 || max_abs / min_abs > 1e3));
  constexpr int kPrecision = 8;
  int mantissa = 0;
  if (sci) {
    for (double v : values) {
      if (std::isfinite(v)) mantissa = std::max(mantissa, shortest(v, t).digits - 1);
    }
    mantissa = std::min(mantissa, kPrecision);
  }
  std::vector<std::string> out;
  out.reserve(values.size());
  for (double v : values) {
    if (std::isnan(v)) {
      out.emplace_back("nan");
    } else if (std::isinf(v)) {
      out.emplace_back(v > 0 ? "inf" : "-inf");
    } else if (sci) {
      std::string s = fmt::format("{:.{}e}", v, mantissa);
      if (mantissa == 0) s.insert(s.find('e'), ".");
      out.push_back(std::move(s));
    } else {
      const Decimal d = shortest(v, t);
      const int frac = std::clamp(d.digits - 1 - d.exp, 0, kPrecision);
      std::string s = fmt::format("{:.{}f}", v, frac);
      if (frac == 0) s += ".";
      out.push_back(std::move(s));
    }
  }
  return out;
}

struct Summary {
  Array compact;  // host copy of the elements shown
  // Per dimension: whether it was cut to its edges, and its full length.
  bool cut[kMaxDims] = {};
  int64_t full[kMaxDims] = {};
};

// Copies the elements shown into a contiguous host array (only the 2^k corner blocks of a large
// array travel).
Summary gather(Runtime& rt, const Array& a, const FormatOptions& opt) {
  Summary s;
  const bool summarize = a.size() > opt.threshold;
  Shape compact_shape;
  int cut_dims[kMaxDims];
  int ncut = 0;
  for (int d = 0; d < a.ndim(); ++d) {
    const int64_t n = a.shape()[d];
    s.full[d] = n;
    s.cut[d] = summarize && n > 2 * opt.edge;
    if (s.cut[d]) cut_dims[ncut++] = d;
    compact_shape.push(s.cut[d] ? 2 * opt.edge : n);
  }
  s.compact = empty(rt, compact_shape, a.dtype(), Location::Pageable);
  for (int corner = 0; corner < (1 << ncut); ++corner) {
    Array src = a, dst = s.compact;
    for (int k = 0; k < ncut; ++k) {
      const int d = cut_dims[k];
      const bool high = (corner >> k) & 1;
      src = src.with_layout(src.layout().narrow(d, high ? s.full[d] - opt.edge : 0, opt.edge));
      dst = dst.with_layout(dst.layout().narrow(d, high ? opt.edge : 0, opt.edge));
    }
    copy(rt, dst, src);
  }
  return s;
}

class Writer {
 public:
  Writer(const Summary& s, DType dtype, const FormatOptions& opt, size_t indent)
      : s_(s), opt_(opt), indent_(indent) {
    const Array& c = s.compact;
    const auto* base = static_cast<const unsigned char*>(c.data());
    const size_t size = itemsize(dtype);
    const auto n = static_cast<size_t>(c.size());
    std::vector<Scalar> values(n);
    for (size_t i = 0; i < n; ++i) values[i] = decode_scalar(dtype, base + i * size);
    if (is_floating(dtype) || is_complex(dtype)) {
      std::vector<double> re(n), im(n);
      for (size_t i = 0; i < n; ++i) {
        re[i] = values[i].re;
        im[i] = values[i].im;
      }
      text_ = format_reals(re, dtype);
      if (is_complex(dtype)) {
        const std::vector<std::string> imag = format_reals(im, dtype);
        for (size_t i = 0; i < n; ++i) {
          text_[i] += (imag[i][0] == '-' ? "" : "+") + imag[i] + "j";
        }
      }
    } else {
      for (const Scalar& v : values) {
        text_.push_back(v.str());  // exact, u64 values from 2^63 up included
      }
    }
    // Align on the decimal point when every element is in fixed notation, as numpy does.
    size_t int_width = 0, frac_width = 0;
    bool fixed = is_floating(dtype);
    for (const std::string& t : text_) {
      const auto dot = t.find('.');
      fixed = fixed && dot != std::string::npos && t.find('e') == std::string::npos;
      if (dot == std::string::npos) continue;
      int_width = std::max(int_width, dot);
      frac_width = std::max(frac_width, t.size() - dot - 1);
    }
    for (std::string& t : text_) {
      if (fixed) {
        const auto dot = t.find('.');
        t = std::string(int_width - dot, ' ') + t +
            std::string(frac_width - (t.size() - dot - 1), ' ');
      }
      width_ = std::max(width_, t.size());
    }
  }

  std::string write() {
    std::string out;
    if (s_.compact.ndim() == 0) return text_.empty() ? "" : text_[0];
    int64_t offset = 0;
    rec(out, 0, offset, indent_);
    return out;
  }

 private:
  void rec(std::string& out, int dim, int64_t& offset, size_t column) {
    const Array& c = s_.compact;
    const int ndim = c.ndim();
    const int64_t n = c.shape()[dim];
    out += "[";
    if (dim == ndim - 1) {
      size_t line = column + 1;
      for (int64_t i = 0; i < n; ++i) {
        std::string item = text_[static_cast<size_t>(offset++)];
        item.insert(0, width_ - item.size(), ' ');
        if (i > 0) {
          out += ",";
          ++line;
          if (line + 1 + item.size() + 1 > static_cast<size_t>(opt_.line_width)) {
            out += "\n" + std::string(column + 1, ' ');
            line = column + 1;
          } else {
            out += " ";
            ++line;
          }
        }
        if (s_.cut[dim] && i == opt_.edge) {
          out += "...,";
          line += 4;
          if (line + 1 + item.size() > static_cast<size_t>(opt_.line_width)) {
            out += "\n" + std::string(column + 1, ' ');
            line = column + 1;
          } else {
            out += " ";
            ++line;
          }
        }
        out += item;
        line += item.size();
      }
    } else {
      const std::string gap = std::string(static_cast<size_t>(ndim - dim - 1), '\n');
      for (int64_t i = 0; i < n; ++i) {
        if (i > 0) out += "," + gap + std::string(column + 1, ' ');
        if (s_.cut[dim] && i == opt_.edge) out += "...," + gap + std::string(column + 1, ' ');
        rec(out, dim + 1, offset, column + 1);
      }
    }
    out += "]";
  }

  const Summary& s_;
  const FormatOptions& opt_;
  size_t indent_;
  std::vector<std::string> text_;
  size_t width_ = 0;
};

std::string location_text(const Array& a) {
  if (a.location() != Location::Device) return std::string(location_name(a.location()));
  return a.device() == 0 ? "device" : fmt::format("device:{}", a.device());
}

}  // namespace

std::string format_array(Runtime& rt, const Array& a, const FormatOptions& opt) {
  if (!a.alive()) return "cu.array(<freed>)";
  const std::string prefix = "cu.array(";
  std::string body;
  if (a.size() == 0) {
    body = a.ndim() == 0 ? "" : "[]";
  } else {
    Summary s = gather(rt, a, opt);
    body = Writer(s, a.dtype(), opt, prefix.size()).write();
  }
  return fmt::format("{}{}, shape={}, dtype={}, {})", prefix, body, a.shape().str(),
                     name(a.dtype()), location_text(a));
}

}  // namespace culua::detail
