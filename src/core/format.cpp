#include "core/format.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/ops.hpp"

namespace culua {

namespace {

// Up to 8 significant digits (the shortest text that reads back for 32-bit and narrower floats);
// floats always show a point ("1.") as numpy does.
std::string format_real(double v, bool narrow) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::string s = narrow ? fmt::format("{}", static_cast<float>(v)) : fmt::format("{:.8g}", v);
  if (s.find_first_of(".e") == std::string::npos) s += ".";
  return s;
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
    for (int64_t i = 0; i < c.size(); ++i) {
      text_.push_back(element(decode_scalar(dtype, base + static_cast<size_t>(i) * size),
                              dtype != DType::F64 && dtype != DType::C128));
    }
    // Align on the decimal point when every element is in fixed notation, as numpy does.
    size_t int_width = 0, frac_width = 0;
    bool fixed = dtype != DType::C64 && dtype != DType::C128;
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
  static std::string element(const Scalar& v, bool narrow) {
    switch (v.kind) {
      case Scalar::Kind::Bool:
        return v.b ? "true" : "false";
      case Scalar::Kind::Int:
        return std::to_string(v.i);
      case Scalar::Kind::Float:
        return format_real(v.re, narrow);
      case Scalar::Kind::Complex: {
        std::string im = format_real(v.im, narrow);
        if (im[0] != '-') im = "+" + im;
        return format_real(v.re, narrow) + im + "j";
      }
    }
    return "?";
  }

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

}  // namespace culua
