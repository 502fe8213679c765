#include "rtc/templates.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "core/base/error.hpp"

namespace culua::detail::rtc {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool is_identifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

bool is_ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      out.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  return out;
}

void parse_list(std::string_view text, std::vector<TemplateParam>& out, bool outputs,
                std::string_view whole) {
  if (trim(text).empty()) return;
  for (std::string_view piece : split(text, ',')) {
    std::vector<std::string_view> words;
    size_t i = 0;
    while (i < piece.size()) {
      while (i < piece.size() && std::isspace(static_cast<unsigned char>(piece[i]))) ++i;
      const size_t start = i;
      while (i < piece.size() && !std::isspace(static_cast<unsigned char>(piece[i]))) ++i;
      if (i > start) words.push_back(piece.substr(start, i - start));
    }
    TemplateParam p;
    if (!words.empty() && words[0] == "raw") {
      p.raw = true;
      words.erase(words.begin());
    }
    if (words.size() != 2) {
      fail(ErrorKind::Value,
           "signature '{}': each parameter is 'TYPE NAME' (such as 'f32 x' or 'T x'), got '{}'",
           whole, piece);
    }
    p.type = words[0];
    p.name = words[1];
    if (!is_identifier(p.type)) {
      fail(ErrorKind::Value, "signature '{}': '{}' is not a dtype or a type placeholder", whole,
           p.type);
    }
    if (p.raw && outputs) {
      fail(ErrorKind::Value, "signature '{}': outputs cannot be raw ('{}')", whole, p.name);
    }
    out.push_back(std::move(p));
  }
}

}  // namespace

bool TemplateParam::placeholder() const {
  return !parse_dtype(type).has_value();
}

TemplateSignature parse_template_signature(std::string_view text, bool reduction) {
  const size_t arrow = text.find("->");
  if (arrow == std::string_view::npos || text.find("->", arrow + 2) != std::string_view::npos) {
    fail(ErrorKind::Value,
         "signature '{}' needs one '->' between inputs and outputs, as in "
         "\"f32 x, f32 y -> f32 z\"",
         text);
  }
  TemplateSignature sig;
  parse_list(text.substr(0, arrow), sig.inputs, false, text);
  parse_list(text.substr(arrow + 2), sig.outputs, true, text);
  if (sig.outputs.empty()) fail(ErrorKind::Value, "signature '{}' has no outputs", text);
  std::vector<std::string> names;
  for (const auto* list : {&sig.inputs, &sig.outputs}) {
    for (const TemplateParam& p : *list) {
      if (!is_identifier(p.name)) {
        fail(ErrorKind::Value, "signature '{}': '{}' is not a valid name", text, p.name);
      }
      const bool reserved = p.name == "i" || p.name == "n" || p.name.rfind("culua_", 0) == 0 ||
                            p.name[0] == '_' || (reduction && (p.name == "a" || p.name == "b"));
      if (reserved) {
        fail(ErrorKind::Value,
             "signature '{}': the name '{}' is reserved (i, n{}, and names starting with _ or "
             "culua_)",
             text, p.name, reduction ? ", a, b" : "");
      }
      if (std::find(names.begin(), names.end(), p.name) != names.end()) {
        fail(ErrorKind::Value, "signature '{}': the name '{}' is used twice", text, p.name);
      }
      names.push_back(p.name);
    }
  }
  return sig;
}

std::string storage_type(DType t) {
  switch (t) {
    case DType::F32:
      return "float";
    case DType::F64:
      return "double";
    case DType::F16:
      return "__half";
    case DType::BF16:
      return "__nv_bfloat16";
    case DType::I8:
      return "signed char";
    case DType::I16:
      return "short";
    case DType::I32:
      return "int";
    case DType::I64:
      return "long long";
    case DType::U8:
      return "unsigned char";
    case DType::U16:
      return "unsigned short";
    case DType::U32:
      return "unsigned int";
    case DType::U64:
      return "unsigned long long";
    case DType::Bool:
      return "bool";
    case DType::C64:
      return "cuda::std::complex<float>";
    case DType::C128:
      return "cuda::std::complex<double>";
  }
  return "float";
}

std::string value_type(DType t) {
  return t == DType::F16 || t == DType::BF16 ? "float" : storage_type(t);
}

bool reads_variable(std::string_view body, std::string_view name) {
  for (size_t at = body.find(name); at != std::string_view::npos; at = body.find(name, at + 1)) {
    const bool starts = at == 0 || (!is_ident_char(body[at - 1]) && body[at - 1] != '.' &&
                                    !(at >= 2 && body[at - 2] == '-' && body[at - 1] == '>'));
    const size_t end = at + name.size();
    if (!starts || (end < body.size() && is_ident_char(body[end]))) continue;
    size_t j = end;
    while (j < body.size() && std::isspace(static_cast<unsigned char>(body[j]))) ++j;
    const bool assignment =
        j < body.size() && body[j] == '=' && (j + 1 >= body.size() || body[j + 1] != '=');
    if (!assignment) return true;
  }
  return false;
}

namespace {

struct Features {
  bool half = false, bfloat = false, complex = false;
};

Features features(const std::vector<OperandSpec>& ops, DType extra) {
  Features f;
  auto add = [&](DType t) {
    f.half = f.half || t == DType::F16;
    f.bfloat = f.bfloat || t == DType::BF16;
    f.complex = f.complex || is_complex(t);
  };
  for (const auto& o : ops) add(o.dtype);
  add(extra);
  return f;
}

// Headers and the load/store helpers every template kernel uses.
std::string prelude(const Features& f) {
  std::string s;
  if (f.half) s += "#include <cuda_fp16.h>\n";
  if (f.bfloat) s += "#include <cuda_bf16.h>\n";
  if (f.complex) s += "#include <cuda/std/complex>\n";
  s += R"(typedef long long culua_index;
template <class T, int N> struct alignas(sizeof(T) * N) culua_vec { T v[N]; };
template <class T> __device__ __forceinline__ T culua_value(const T& v) { return v; }
template <class T, class V> __device__ __forceinline__ void culua_store(T& d, const V& v) { d = static_cast<T>(v); }
)";
  if (f.half) {
    s +=
        R"(__device__ __forceinline__ float culua_value(const __half& v) { return __half2float(v); }
template <class V> __device__ __forceinline__ void culua_store(__half& d, const V& v) { d = __float2half_rn(static_cast<float>(v)); }
)";
  }
  if (f.bfloat) {
    s +=
        R"(__device__ __forceinline__ float culua_value(const __nv_bfloat16& v) { return __bfloat162float(v); }
template <class V> __device__ __forceinline__ void culua_store(__nv_bfloat16& d, const V& v) { d = __float2bfloat16_rn(static_cast<float>(v)); }
)";
  }
  return s;
}

std::string user_code(std::string_view label, std::string_view code) {
  return fmt::format("#line 1 \"{}\"\n{}\n", label, code);
}

std::string resume_line(const std::string& source, std::string_view file) {
  const int line = 2 + static_cast<int>(std::count(source.begin(), source.end(), '\n'));
  return fmt::format("#line {} \"{}\"\n", line, file);
}

// Scalar parameters of a kernel: the value, or real and imaginary parts.
std::string scalar_params(const TemplateSignature& sig, const std::vector<OperandSpec>& ops) {
  std::string s;
  for (size_t k = 0; k < sig.inputs.size(); ++k) {
    if (!ops[k].scalar) continue;
    const std::string& n = sig.inputs[k].name;
    if (is_complex(ops[k].dtype)) {
      const char* part = ops[k].dtype == DType::C64 ? "float" : "double";
      s += fmt::format(", {0} culua_{1}_re, {0} culua_{1}_im", part, n);
    } else {
      s += fmt::format(", {} culua_{}_s", value_type(ops[k].dtype), n);
    }
  }
  return s;
}

std::string scalar_value(const TemplateParam& p, const OperandSpec& o) {
  if (is_complex(o.dtype)) {
    return fmt::format("{}(culua_{}_re, culua_{}_im)", value_type(o.dtype), p.name, p.name);
  }
  return fmt::format("culua_{}_s", p.name);
}

std::string pointer_params(const TemplateSignature& sig, const std::vector<OperandSpec>& ops) {
  std::string s;
  const size_t nin = sig.inputs.size();
  for (size_t k = 0; k < ops.size(); ++k) {
    if (ops[k].scalar) continue;
    const std::string& n = k < nin ? sig.inputs[k].name : sig.outputs[k - nin].name;
    s += fmt::format("{}void* culua_{}_p", s.empty() ? "" : ", ", n);
  }
  return s;
}

std::string typed_pointer(const std::string& name, const OperandSpec& o, bool output) {
  return fmt::format("{0}{1}* const culua_{2} = static_cast<{0}{1}*>(culua_{2}_p);\n",
                     output ? "" : "const ", storage_type(o.dtype), name);
}

}  // namespace

std::string elementwise_source(const TemplateSignature& sig, const ElementwiseSpec& spec,
                               std::string_view body, std::string_view preamble) {
  const auto& ops = spec.operands;
  const size_t nin = sig.inputs.size();
  auto name_of = [&](size_t k) -> const std::string& {
    return k < nin ? sig.inputs[k].name : sig.outputs[k - nin].name;
  };
  std::string s = prelude(features(ops, DType::F32));
  if (!preamble.empty()) {
    s += user_code("preamble", preamble);
    s += resume_line(s, "culua_elementwise.cu");
  }
  // The body as a function: inputs by value (raw ones as pointers), outputs by reference.
  std::string params = "const culua_index i, const culua_index n";
  for (size_t k = 0; k < ops.size(); ++k) {
    const std::string& n = name_of(k);
    if (k < nin && ops[k].raw) {
      params += fmt::format(", const {}* __restrict__ {}", storage_type(ops[k].dtype), n);
    } else if (k < nin) {
      params += fmt::format(", const {} {}", value_type(ops[k].dtype), n);
    } else {
      params += fmt::format(", {}& {}", value_type(ops[k].dtype), n);
    }
  }
  s += fmt::format("__device__ __forceinline__ void culua_body({}) {{\n", params);
  s += user_code("body", body);
  s += ";\n}\n";
  s += resume_line(s, "culua_elementwise.cu");

  std::string kparams = pointer_params(sig, ops) + scalar_params(sig, ops) + ", culua_index n";
  if (spec.ndim > 0) {
    for (int d = 0; d < spec.ndim; ++d) kparams += fmt::format(", culua_index culua_d{}", d);
    for (size_t k = 0; k < ops.size(); ++k) {
      if (ops[k].scalar || ops[k].raw) continue;
      for (int d = 0; d < spec.ndim; ++d) {
        kparams += fmt::format(", culua_index culua_{}_s{}", name_of(k), d);
      }
    }
  }
  if (kparams.rfind(", ", 0) == 0) kparams.erase(0, 2);
  s += fmt::format("extern \"C\" __global__ void culua_elementwise({}) {{\n", kparams);
  for (size_t k = 0; k < ops.size(); ++k) {
    if (!ops[k].scalar) s += typed_pointer(name_of(k), ops[k], k >= nin);
  }
  s += "const culua_index culua_stride = (culua_index)gridDim.x * blockDim.x;\n";
  s += "const culua_index culua_first = (culua_index)blockIdx.x * blockDim.x + threadIdx.x;\n";

  // The call of the body for element `i` whose operand k lives at culua_<name>[off_k].
  auto call = [&](const std::vector<std::string>& offsets, const std::string& index) {
    std::string c;
    for (size_t k = nin; k < ops.size(); ++k) {
      const std::string& n = name_of(k);
      if (ops[k].load) {
        c += fmt::format("{} culua_{}_v = culua_value(culua_{}[{}]);\n", value_type(ops[k].dtype),
                         n, n, offsets[k]);
      } else {
        c += fmt::format("{} culua_{}_v{{}};\n", value_type(ops[k].dtype), n);
      }
    }
    c += fmt::format("culua_body({}, n", index);
    for (size_t k = 0; k < ops.size(); ++k) {
      const std::string& n = name_of(k);
      if (k < nin && ops[k].scalar) {
        c += ", " + scalar_value(sig.inputs[k], ops[k]);
      } else if (k < nin && ops[k].raw) {
        c += fmt::format(", culua_{}", n);
      } else if (k < nin) {
        c += fmt::format(", culua_value(culua_{}[{}])", n, offsets[k]);
      } else {
        c += fmt::format(", culua_{}_v", n);
      }
    }
    c += ");\n";
    for (size_t k = nin; k < ops.size(); ++k) {
      c += fmt::format("culua_store(culua_{0}[{1}], culua_{0}_v);\n", name_of(k), offsets[k]);
    }
    return c;
  };

  if (spec.ndim == 0) {
    std::vector<std::string> flat(ops.size(), "culua_i");
    const int v = spec.vector;
    if (v > 1) {
      s += fmt::format("const culua_index culua_chunks = n / {};\n", v);
      s += "for (culua_index culua_c = culua_first; culua_c < culua_chunks; culua_c += "
           "culua_stride) {\n";
      for (size_t k = 0; k < ops.size(); ++k) {
        if (ops[k].scalar || ops[k].raw) continue;
        const std::string& n = name_of(k);
        const std::string vt = fmt::format("culua_vec<{}, {}>", storage_type(ops[k].dtype), v);
        if (k < nin || ops[k].load) {
          s += fmt::format(
              "const {0} culua_{1}_in = reinterpret_cast<const {0}*>(culua_{1})[culua_c];\n", vt,
              n);
        }
        if (k >= nin) s += fmt::format("{} culua_{}_out;\n", vt, n);
      }
      s += fmt::format("#pragma unroll\nfor (int culua_j = 0; culua_j < {}; ++culua_j) {{\n", v);
      for (size_t k = nin; k < ops.size(); ++k) {
        const std::string& n = name_of(k);
        if (ops[k].load) {
          s += fmt::format("{} culua_{}_v = culua_value(culua_{}_in.v[culua_j]);\n",
                           value_type(ops[k].dtype), n, n);
        } else {
          s += fmt::format("{} culua_{}_v{{}};\n", value_type(ops[k].dtype), n);
        }
      }
      s += fmt::format("culua_body(culua_c * {} + culua_j, n", v);
      for (size_t k = 0; k < ops.size(); ++k) {
        const std::string& n = name_of(k);
        if (k < nin && ops[k].scalar) {
          s += ", " + scalar_value(sig.inputs[k], ops[k]);
        } else if (k < nin && ops[k].raw) {
          s += fmt::format(", culua_{}", n);
        } else if (k < nin) {
          s += fmt::format(", culua_value(culua_{}_in.v[culua_j])", n);
        } else {
          s += fmt::format(", culua_{}_v", n);
        }
      }
      s += ");\n";
      for (size_t k = nin; k < ops.size(); ++k) {
        s += fmt::format("culua_store(culua_{0}_out.v[culua_j], culua_{0}_v);\n", name_of(k));
      }
      s += "}\n";
      for (size_t k = nin; k < ops.size(); ++k) {
        const std::string& n = name_of(k);
        s +=
            fmt::format("reinterpret_cast<culua_vec<{}, {}>*>(culua_{})[culua_c] = culua_{}_out;\n",
                        storage_type(ops[k].dtype), v, n, n);
      }
      s += "}\n";
      s += fmt::format(
          "for (culua_index culua_i = culua_chunks * {} + culua_first; culua_i < n; "
          "culua_i += culua_stride) {{\n",
          v);
    } else {
      s += "for (culua_index culua_i = culua_first; culua_i < n; culua_i += culua_stride) {\n";
    }
    s += call(flat, "culua_i");
    s += "}\n}\n";
    return s;
  }

  // Strided: decompose the flat index, innermost dimension first.
  const char* ix = spec.index32 ? "unsigned int" : "culua_index";
  s += "for (culua_index culua_i = culua_first; culua_i < n; culua_i += culua_stride) {\n";
  s += fmt::format("{} culua_rem = ({})culua_i;\n", ix, ix);
  std::vector<std::string> offsets(ops.size());
  for (size_t k = 0; k < ops.size(); ++k) {
    if (ops[k].scalar || ops[k].raw) continue;
    offsets[k] = fmt::format("culua_{}_o", name_of(k));
    s += fmt::format("culua_index {} = 0;\n", offsets[k]);
  }
  for (int d = spec.ndim - 1; d >= 0; --d) {
    s += "{\n";
    if (d > 0) {
      s += fmt::format(
          "const {0} culua_c = culua_rem % ({0})culua_d{1}; culua_rem /= ({0})culua_d{1};\n", ix,
          d);
    } else {
      s += fmt::format("const {} culua_c = culua_rem;\n", ix);
    }
    for (size_t k = 0; k < ops.size(); ++k) {
      if (ops[k].scalar || ops[k].raw) continue;
      s += fmt::format("{} += (culua_index)culua_c * culua_{}_s{};\n", offsets[k], name_of(k), d);
    }
    s += "}\n";
  }
  s += call(offsets, "culua_i");
  s += "}\n}\n";
  return s;
}

std::string reduction_source(const TemplateSignature& sig, const ReductionSpec& spec,
                             const ReductionBodies& b) {
  const auto& ops = spec.operands;
  const size_t nin = sig.inputs.size();
  auto name_of = [&](size_t k) -> const std::string& {
    return k < nin ? sig.inputs[k].name : sig.outputs[k - nin].name;
  };
  std::string s = prelude(features(ops, spec.acc));
  if (!b.preamble.empty()) {
    s += user_code("preamble", b.preamble);
    s += resume_line(s, "culua_reduction.cu");
  }
  s += fmt::format("typedef {} culua_acc;\n", value_type(spec.acc));
  s += "__device__ __forceinline__ culua_acc culua_identity() {\nreturn static_cast<culua_acc>(\n";
  s += user_code("identity", b.identity);
  s += ");\n}\n";
  s += resume_line(s, "culua_reduction.cu");

  std::string map_params = "const culua_index n";
  for (size_t k = 0; k < nin; ++k) {
    if (ops[k].raw) {
      map_params +=
          fmt::format(", const {}* __restrict__ {}", storage_type(ops[k].dtype), name_of(k));
    } else {
      map_params += fmt::format(", const {} {}", value_type(ops[k].dtype), name_of(k));
    }
  }
  s += fmt::format(
      "__device__ __forceinline__ culua_acc culua_map({}) {{\nreturn static_cast<culua_acc>(\n",
      map_params);
  s += user_code("map", b.map);
  s += ");\n}\n";
  s += resume_line(s, "culua_reduction.cu");
  s += "__device__ __forceinline__ culua_acc culua_reduce(const culua_acc a, const culua_acc b) {\n"
       "return static_cast<culua_acc>(\n";
  s += user_code("reduce", b.reduce);
  s += ");\n}\n";
  s += resume_line(s, "culua_reduction.cu");
  std::string post_params = "const culua_acc a, const culua_index n";
  for (size_t k = 0; k < nin; ++k) {
    if (ops[k].scalar)
      post_params += fmt::format(", const {} {}", value_type(ops[k].dtype), name_of(k));
  }
  for (size_t k = nin; k < ops.size(); ++k) {
    post_params += fmt::format(", {}& {}", value_type(ops[k].dtype), name_of(k));
  }
  s += fmt::format("__device__ __forceinline__ void culua_post({}) {{\n", post_params);
  s += user_code("post", b.post);
  s += ";\n}\n";
  s += resume_line(s, "culua_reduction.cu");

  // Block-wide combination through shared memory (any accumulator type).
  s += fmt::format(R"(__device__ __forceinline__ culua_acc culua_block_reduce(culua_acc v) {{
  __shared__ alignas(16) unsigned char culua_raw[{0} * sizeof(culua_acc)];
  culua_acc* const sm = reinterpret_cast<culua_acc*>(culua_raw);
  __syncthreads();
  sm[threadIdx.x] = v;
  __syncthreads();
#pragma unroll
  for (int s = {0} / 2; s > 0; s >>= 1) {{
    if (threadIdx.x < s) sm[threadIdx.x] = culua_reduce(sm[threadIdx.x], sm[threadIdx.x + s]);
    __syncthreads();
  }}
  return sm[0];
}}
)",
                   kReductionBlock);

  const int K = spec.kept, R = spec.reduced;
  std::string scalars = scalar_params(sig, ops);
  std::string kept_params, red_params, in_strides, out_strides;
  for (int d = 0; d < K; ++d) kept_params += fmt::format(", culua_index culua_kd{}", d);
  for (int d = 0; d < R; ++d) red_params += fmt::format(", culua_index culua_rd{}", d);
  for (size_t k = 0; k < nin; ++k) {
    if (ops[k].scalar || ops[k].raw) continue;
    for (int d = 0; d < K; ++d)
      in_strides += fmt::format(", culua_index culua_{}_k{}", name_of(k), d);
    for (int d = 0; d < R; ++d)
      in_strides += fmt::format(", culua_index culua_{}_r{}", name_of(k), d);
  }
  for (size_t k = nin; k < ops.size(); ++k) {
    for (int d = 0; d < K; ++d)
      out_strides += fmt::format(", culua_index culua_{}_k{}", name_of(k), d);
  }

  // Offsets of every array operand (inputs, or outputs when `outputs`) for output index `o`.
  auto kept_offsets = [&](bool outputs) {
    std::string c = "culua_index culua_krem = culua_o;\n";
    const size_t from = outputs ? nin : 0, to = outputs ? ops.size() : nin;
    for (size_t k = from; k < to; ++k) {
      if (ops[k].scalar || ops[k].raw) continue;
      c += fmt::format("culua_index culua_{}_base = 0;\n", name_of(k));
    }
    for (int d = K - 1; d >= 0; --d) {
      c += d > 0 ? fmt::format(
                       "{{ const culua_index culua_c = culua_krem % culua_kd{0}; culua_krem /= "
                       "culua_kd{0};\n",
                       d)
                 : std::string("{ const culua_index culua_c = culua_krem;\n");
      for (size_t k = from; k < to; ++k) {
        if (ops[k].scalar || ops[k].raw) continue;
        c += fmt::format("culua_{0}_base += culua_c * culua_{0}_k{1};\n", name_of(k), d);
      }
      c += "}\n";
    }
    return c;
  };
  auto map_call = [&]() {
    std::string c = "culua_index culua_rrem = culua_r;\n";
    for (size_t k = 0; k < nin; ++k) {
      if (ops[k].scalar || ops[k].raw) continue;
      c += fmt::format("culua_index culua_{0}_off = culua_{0}_base;\n", name_of(k));
    }
    for (int d = R - 1; d >= 0; --d) {
      c += d > 0 ? fmt::format(
                       "{{ const culua_index culua_c = culua_rrem % culua_rd{0}; culua_rrem /= "
                       "culua_rd{0};\n",
                       d)
                 : std::string("{ const culua_index culua_c = culua_rrem;\n");
      for (size_t k = 0; k < nin; ++k) {
        if (ops[k].scalar || ops[k].raw) continue;
        c += fmt::format("culua_{0}_off += culua_c * culua_{0}_r{1};\n", name_of(k), d);
      }
      c += "}\n";
    }
    c += "culua_a = culua_reduce(culua_a, culua_map(N";
    for (size_t k = 0; k < nin; ++k) {
      if (ops[k].scalar) {
        c += ", " + scalar_value(sig.inputs[k], ops[k]);
      } else if (ops[k].raw) {
        c += fmt::format(", culua_{}", name_of(k));
      } else {
        c += fmt::format(", culua_value(culua_{0}[culua_{0}_off])", name_of(k));
      }
    }
    c += "));\n";
    return c;
  };
  auto finish = [&](const std::string& value) {
    std::string c = kept_offsets(true);
    for (size_t k = nin; k < ops.size(); ++k) {
      c += fmt::format("{} culua_{}_v{{}};\n", value_type(ops[k].dtype), name_of(k));
    }
    c += fmt::format("culua_post({}, N", value);
    for (size_t k = 0; k < nin; ++k) {
      if (ops[k].scalar) c += ", " + scalar_value(sig.inputs[k], ops[k]);
    }
    for (size_t k = nin; k < ops.size(); ++k) c += fmt::format(", culua_{}_v", name_of(k));
    c += ");\n";
    for (size_t k = nin; k < ops.size(); ++k) {
      c += fmt::format("culua_store(culua_{0}[culua_{0}_base], culua_{0}_v);\n", name_of(k));
    }
    return c;
  };
  std::string pointers;
  for (size_t k = 0; k < ops.size(); ++k) {
    if (!ops[k].scalar) pointers += typed_pointer(name_of(k), ops[k], k >= nin);
  }
  std::string ptr_params = pointer_params(sig, ops);
  std::string common = ptr_params + scalars +
                       ", culua_index O, culua_index N, culua_index G, void* culua_partial_p" +
                       kept_params + red_params + in_strides + out_strides;
  if (common.rfind(", ", 0) == 0) common.erase(0, 2);

  // A block per (output, split).
  s += fmt::format("extern \"C\" __global__ void culua_reduce_block({}) {{\n", common);
  s += pointers;
  s += "culua_acc* const culua_partial = static_cast<culua_acc*>(culua_partial_p);\n";
  s += "for (culua_index culua_b = blockIdx.x; culua_b < O * G; culua_b += gridDim.x) {\n";
  s += "const culua_index culua_o = culua_b / G, culua_g = culua_b % G;\n";
  s += kept_offsets(false);
  s += "const culua_index culua_begin = N * culua_g / G, culua_end = N * (culua_g + 1) / G;\n";
  s += "culua_acc culua_a = culua_identity();\n";
  s += "for (culua_index culua_r = culua_begin + threadIdx.x; culua_r < culua_end; culua_r += "
       "blockDim.x) {\n";
  s += map_call();
  s += "}\nculua_a = culua_block_reduce(culua_a);\n";
  s += "if (threadIdx.x == 0) {\nif (G == 1) {\n";
  s += finish("culua_a");
  s += "} else {\nculua_partial[culua_o * G + culua_g] = culua_a;\n}\n}\n}\n}\n";

  // A thread per (output, split); neighbouring threads take neighbouring outputs.
  s += fmt::format("extern \"C\" __global__ void culua_reduce_thread({}) {{\n", common);
  s += pointers;
  s += "culua_acc* const culua_partial = static_cast<culua_acc*>(culua_partial_p);\n";
  s += "const culua_index culua_stride = (culua_index)gridDim.x * blockDim.x;\n";
  s += "for (culua_index culua_t = (culua_index)blockIdx.x * blockDim.x + threadIdx.x; culua_t < O "
       "* G; "
       "culua_t += culua_stride) {\n";
  s += "const culua_index culua_o = culua_t % O, culua_g = culua_t / O;\n";
  s += kept_offsets(false);
  s += "const culua_index culua_begin = N * culua_g / G, culua_end = N * (culua_g + 1) / G;\n";
  s += "culua_acc culua_a = culua_identity();\n";
  s += "for (culua_index culua_r = culua_begin; culua_r < culua_end; ++culua_r) {\n";
  s += map_call();
  s += "}\nif (G == 1) {\n";
  s += finish("culua_a");
  s += "} else {\nculua_partial[culua_o * G + culua_g] = culua_a;\n}\n}\n}\n";

  // The splits of each output, combined by a block.
  std::string out_ptrs, out_pointers;
  for (size_t k = nin; k < ops.size(); ++k) {
    out_ptrs += fmt::format("{}void* culua_{}_p", out_ptrs.empty() ? "" : ", ", name_of(k));
    out_pointers += typed_pointer(name_of(k), ops[k], true);
  }
  s += fmt::format(
      "extern \"C\" __global__ void culua_reduce_finish({}{}, culua_index O, culua_index N, "
      "culua_index G, "
      "const void* culua_partial_p{}{}) {{\n",
      out_ptrs, scalars, kept_params, out_strides);
  s += out_pointers;
  s += "const culua_acc* const culua_partial = static_cast<const culua_acc*>(culua_partial_p);\n";
  s += "for (culua_index culua_o = blockIdx.x; culua_o < O; culua_o += gridDim.x) {\n";
  s += "culua_acc culua_a = culua_identity();\n";
  s += "for (culua_index culua_g = threadIdx.x; culua_g < G; culua_g += blockDim.x) {\n";
  s += "culua_a = culua_reduce(culua_a, culua_partial[culua_o * G + culua_g]);\n}\n";
  s += "culua_a = culua_block_reduce(culua_a);\n";
  s += "if (threadIdx.x == 0) {\n";
  s += finish("culua_a");
  s += "}\n}\n}\n";
  return s;
}

ReduceLayout merge_reduce_dims(const Shape& shape, const std::vector<bool>& reduced,
                               const std::vector<std::vector<int64_t>>& strides) {
  struct Dim {
    int64_t size;
    bool red;
    std::vector<int64_t> st;
  };
  std::vector<Dim> dims;
  for (int d = 0; d < shape.ndim; ++d) {
    if (shape[d] == 1) continue;
    Dim x{shape[d], reduced[static_cast<size_t>(d)], {}};
    for (const auto& s : strides) x.st.push_back(s[static_cast<size_t>(d)]);
    if (!dims.empty() && dims.back().red == x.red) {
      Dim& outer = dims.back();
      bool ok = true;
      for (size_t k = 0; k < x.st.size(); ++k) ok = ok && outer.st[k] == x.st[k] * x.size;
      if (ok) {
        outer.size *= x.size;
        outer.st = x.st;
        continue;
      }
    }
    dims.push_back(std::move(x));
  }
  ReduceLayout l;
  l.kept_strides.resize(strides.size());
  l.reduced_strides.resize(strides.size());
  for (const Dim& d : dims) {
    (d.red ? l.reduced_sizes : l.kept_sizes).push_back(d.size);
    for (size_t k = 0; k < strides.size(); ++k) {
      (d.red ? l.reduced_strides : l.kept_strides)[k].push_back(d.st[k]);
    }
  }
  return l;
}

}  // namespace culua::detail::rtc
