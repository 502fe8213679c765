#include "rtc/type_parser.hpp"

#include <fmt/format.h>

#include <optional>
#include <vector>

#include "rtc/lexer.hpp"

namespace culua::detail::rtc {

namespace {

struct TypeToken {
  bool word;  // identifier (qualified names are one word: "std::size_t") or number
  std::string text;
};

std::vector<TypeToken> type_tokens(std::string_view s) {
  std::vector<TypeToken> out;
  size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (is_space(c)) {
      ++i;
    } else if (is_ident_char(c) || (c == ':' && i + 1 < s.size() && s[i + 1] == ':')) {
      // A qualified name is one word, also when spaced: "std :: size_t" -> "std::size_t".
      std::string word;
      while (true) {
        while (i < s.size() && is_ident_char(s[i])) word += s[i++];
        size_t j = i;
        while (j < s.size() && is_space(s[j])) ++j;
        if (j + 1 >= s.size() || s[j] != ':' || s[j + 1] != ':') break;
        word += "::";
        i = j + 2;
        while (i < s.size() && is_space(s[i])) ++i;
      }
      out.push_back({true, std::move(word)});
    } else if (s.substr(i, 3) == "...") {
      out.push_back({false, "..."});
      i += 3;
    } else if (s.substr(i, 2) == "&&") {
      out.push_back({false, "&&"});
      i += 2;
    } else {
      out.push_back({false, std::string(1, c)});
      ++i;
    }
  }
  return out;
}

// The demangler's layout: "float const*", "void (*)(float, int)", "unsigned long".
std::string join_type(const std::vector<TypeToken>& toks) {
  std::string out;
  for (size_t k = 0; k < toks.size(); ++k) {
    const TypeToken& t = toks[k];
    if (k > 0) {
      const TypeToken& p = toks[k - 1];
      const bool tight_after = !p.word && (p.text == "(" || p.text == "[" || p.text == "<");
      const bool tight_before =
          !t.word && (t.text == "*" || t.text == "&" || t.text == "&&" || t.text == "," ||
                      t.text == ")" || t.text == "]" || t.text == "[" || t.text == "<" ||
                      t.text == ">" || (t.text == "(" && !p.word));
      if (!tight_after && !tight_before) out += ' ';
    }
    out += t.text;
  }
  return out;
}

bool is_cv_or_restrict(std::string_view w) {
  return w == "const" || w == "volatile" || w == "restrict" || w == "__restrict__" ||
         w == "__restrict" || w == "__grid_constant__";
}

// What a type name denotes, before any pointer.
struct Base {
  enum class Cat : uint8_t { Int, Float, Bool, Void, Complex, Vector, Unknown, Invalid };
  Cat cat = Cat::Unknown;
  bool is_signed = true;
  uint8_t size = 0;
  uint8_t align = 0;
  FloatFormat format = FloatFormat::Single;
  std::optional<DType> element;  // the dtype of one element, when culua has one
  int vector = 1;
  uint8_t vector_align = 1;
  std::string reason;  // Invalid: why, when more is known than "not a valid type"
};

Base integer_base(bool is_signed, uint8_t size, std::optional<DType> element) {
  Base b;
  b.cat = Base::Cat::Int;
  b.is_signed = is_signed;
  b.size = b.align = b.vector_align = size;
  b.element = element;
  return b;
}
Base float_base(FloatFormat f, uint8_t size, DType element) {
  Base b;
  b.cat = Base::Cat::Float;
  b.format = f;
  b.size = b.align = b.vector_align = size;
  b.element = element;
  return b;
}

// The builtin spellings: any order of signed, unsigned, char, short, int, long, float, double,
// bool, void.
Base builtin_base(const std::vector<std::string>& words) {
  int n_signed = 0, n_unsigned = 0, n_char = 0, n_short = 0, n_int = 0, n_long = 0, n_float = 0,
      n_double = 0, n_bool = 0, n_void = 0;
  for (const std::string& w : words) {
    n_signed += w == "signed";
    n_unsigned += w == "unsigned";
    n_char += w == "char";
    n_short += w == "short";
    n_int += w == "int";
    n_long += w == "long";
    n_float += w == "float";
    n_double += w == "double";
    n_bool += w == "bool";
    n_void += w == "void";
  }
  Base invalid;
  invalid.cat = Base::Cat::Invalid;
  const int total = static_cast<int>(words.size());
  if (n_signed + n_unsigned + n_char + n_short + n_int + n_long + n_float + n_double + n_bool +
          n_void !=
      total) {
    return invalid;  // a builtin word beside a name: "unsigned size_t"
  }
  if (n_double == 1 && n_long == 1 && total == 2) {
    Base b = invalid;
    b.reason = "long double is not supported";
    return b;
  }
  if (total == 1 && n_float == 1) return float_base(FloatFormat::Single, 4, DType::F32);
  if (total == 1 && n_double == 1) return float_base(FloatFormat::Double, 8, DType::F64);
  if (total == 1 && n_bool == 1) {
    Base b;
    b.cat = Base::Cat::Bool;
    b.size = b.align = b.vector_align = 1;
    b.element = DType::Bool;
    return b;
  }
  if (total == 1 && n_void == 1) {
    Base b;
    b.cat = Base::Cat::Void;
    return b;
  }
  const bool sign_ok = n_signed + n_unsigned <= 1;
  if (n_char == 1 && sign_ok && total == 1 + n_signed + n_unsigned) {
    return n_unsigned ? integer_base(false, 1, DType::U8) : integer_base(true, 1, DType::I8);
  }
  const bool int_words_only = n_char + n_float + n_double + n_bool + n_void == 0;
  if (int_words_only && sign_ok && n_int <= 1 && n_short <= 1 && n_long <= 2 &&
      !(n_short && n_long) && total > 0) {
    const uint8_t size = n_short ? 2 : n_long ? 8 : 4;
    return n_unsigned ? integer_base(false, size, int_dtype(false, size))
                      : integer_base(true, size, int_dtype(true, size));
  }
  return invalid;
}

// Alignment of a CUDA vector type of `n` elements of `size` bytes (vector_types.h). The
// 32-byte 4-vectors of 8-byte elements (double4, long4, ...) take their strictest alignment.
uint8_t vector_alignment(uint8_t size, int n) {
  if (n == 3 || n == 1) return size;
  return static_cast<uint8_t>(size * n);
}

// Named types: fixed-width typedefs, CUDA's half types, vector and complex types.
Base named_base(std::string name) {
  for (std::string_view prefix : {"::", "cuda::std::", "std::"}) {
    if (name.compare(0, prefix.size(), prefix) == 0) {
      name.erase(0, prefix.size());
      break;
    }
  }
  struct Named {
    std::string_view name;
    bool is_signed;
    uint8_t size;
  };
  static constexpr Named kInts[] = {
      {"int8_t", true, 1},    {"uint8_t", false, 1},  {"int16_t", true, 2}, {"uint16_t", false, 2},
      {"int32_t", true, 4},   {"uint32_t", false, 4}, {"int64_t", true, 8}, {"uint64_t", false, 8},
      {"size_t", false, 8},   {"ptrdiff_t", true, 8}, {"ssize_t", true, 8}, {"intptr_t", true, 8},
      {"uintptr_t", false, 8}};
  for (const Named& n : kInts) {
    if (name == n.name) {
      return n.is_signed ? integer_base(true, n.size, int_dtype(true, n.size))
                         : integer_base(false, n.size, int_dtype(false, n.size));
    }
  }
  if (name == "__half" || name == "half") return float_base(FloatFormat::Half, 2, DType::F16);
  if (name == "__nv_bfloat16" || name == "nv_bfloat16") {
    return float_base(FloatFormat::BFloat16, 2, DType::BF16);
  }
  if (name == "float2" || name == "cuFloatComplex" || name == "cuComplex" || name == "double2" ||
      name == "cuDoubleComplex") {
    const bool dbl = name == "double2" || name == "cuDoubleComplex";
    Base b;
    b.cat = Base::Cat::Complex;
    b.format = dbl ? FloatFormat::Double : FloatFormat::Single;
    b.size = b.align = b.vector_align = dbl ? 16 : 8;
    b.element = dbl ? DType::F64 : DType::F32;
    b.vector = 2;
    return b;
  }
  struct Vec {
    std::string_view prefix;
    bool is_signed;
    uint8_t size;
    std::optional<DType> element;
  };
  static const Vec kVecs[] = {
      {"char", true, 1, DType::I8},      {"uchar", false, 1, DType::U8},
      {"short", true, 2, DType::I16},    {"ushort", false, 2, DType::U16},
      {"int", true, 4, DType::I32},      {"uint", false, 4, DType::U32},
      {"longlong", true, 8, DType::I64}, {"ulonglong", false, 8, DType::U64},
      {"long", true, 8, DType::I64},     {"ulong", false, 8, DType::U64},
      {"float", true, 4, DType::F32},    {"double", true, 8, DType::F64}};
  for (const Vec& v : kVecs) {
    if (name.size() < v.prefix.size() + 1 || name.compare(0, v.prefix.size(), v.prefix) != 0) {
      continue;
    }
    const std::string_view rest = std::string_view(name).substr(v.prefix.size());
    if (rest[0] < '1' || rest[0] > '4') continue;
    const int n = rest[0] - '0';
    uint8_t align = vector_alignment(v.size, n);
    if (rest.size() > 1) {
      // CUDA 13's explicitly aligned 4-vectors of 8-byte elements: double4_16a, long4_32a.
      if (n != 4 || v.size != 8 || (rest.substr(1) != "_16a" && rest.substr(1) != "_32a")) {
        continue;
      }
      align = rest.substr(1) == "_16a" ? 16 : 32;
    }
    Base b;
    b.cat = Base::Cat::Vector;
    b.is_signed = v.is_signed;
    b.size = static_cast<uint8_t>(v.size * n);
    b.align = align;
    b.element = v.element;
    b.vector = n;
    b.vector_align = align;
    return b;
  }
  Base unknown;
  unknown.cat = Base::Cat::Unknown;
  return unknown;
}

constexpr std::string_view kStructReason =
    "struct parameters are not supported: pass the fields as separate parameters";

ParamType unsupported(ParamType p, std::string reason) {
  p.kind = ParamKind::Unsupported;
  p.size = p.align = 0;
  p.unsupported = std::move(reason);
  return p;
}

}  // namespace

ParamType parse_type(std::string_view spelling) {
  const std::vector<TypeToken> toks = type_tokens(spelling);
  ParamType p;
  p.spelling = join_type(toks);
  if (toks.empty()) return unsupported(std::move(p), "an empty type is not a parameter type");

  int angle = 0;
  for (size_t k = 0; k < toks.size(); ++k) {
    const TypeToken& t = toks[k];
    if (t.word) continue;
    if (t.text == "<") ++angle;
    if (t.text == ">" && angle > 0) --angle;
    if (angle > 0) continue;
    if (t.text == "...") return unsupported(std::move(p), "variadic kernels are not supported");
    if (t.text == "(") {
      const bool pointer = k + 1 < toks.size() && toks[k + 1].text == "*";
      return unsupported(std::move(p), pointer && toks.back().text == "]"
                                           ? "pointers to arrays are not supported"
                                           : "function pointer parameters are not supported");
    }
    if (t.text == "&" || t.text == "&&") {
      return unsupported(std::move(p),
                         "reference parameters are not supported: pass a pointer or the value");
    }
  }

  // Base words before the first declarator; then pointers and array suffixes.
  std::vector<std::string> words;
  bool base_const = false;
  bool elaborated = false;  // struct Foo, enum E
  int pointers = 0;
  int arrays = 0;
  for (size_t k = 0; k < toks.size(); ++k) {
    const TypeToken& t = toks[k];
    if (t.word && pointers == 0 && arrays == 0) {
      if (t.text == "const") {
        base_const = true;
      } else if (t.text == "struct" || t.text == "class" || t.text == "union" || t.text == "enum") {
        elaborated = true;
      } else if (!is_cv_or_restrict(t.text) && t.text != "typename") {
        words.push_back(t.text);
      }
    } else if (t.text == "<" && !words.empty() && pointers == 0 && arrays == 0) {
      // A template (std::complex<float>): one name culua does not know.
      int depth = 0;
      for (; k < toks.size(); ++k) {
        depth += toks[k].text == "<" ? 1 : toks[k].text == ">" ? -1 : 0;
        words.back() += toks[k].text;
        if (depth == 0) break;
      }
    } else if (t.word) {
      if (!is_cv_or_restrict(t.text)) {
        return unsupported(std::move(p), fmt::format("'{}' is not a valid type", p.spelling));
      }
    } else if (t.text == "*") {
      ++pointers;
    } else if (t.text == "[") {
      ++arrays;
      while (k < toks.size() && toks[k].text != "]") ++k;
    } else {
      return unsupported(std::move(p), fmt::format("'{}' is not a valid type", p.spelling));
    }
  }
  if (arrays > 1) {
    return unsupported(std::move(p), "multi-dimensional array parameters are not supported");
  }
  pointers += arrays;  // an array parameter is a pointer
  if (pointers > 1) return unsupported(std::move(p), "pointers to pointers are not supported");
  if (words.empty()) {
    return unsupported(std::move(p), fmt::format("'{}' is not a valid type", p.spelling));
  }

  bool builtin = false;
  for (const std::string& w : words) {
    if (w == "signed" || w == "unsigned" || w == "char" || w == "short" || w == "int" ||
        w == "long" || w == "float" || w == "double" || w == "bool" || w == "void") {
      builtin = true;
    }
  }
  Base base;
  if (builtin) {
    base = builtin_base(words);
  } else if (words.size() == 1 && !elaborated) {
    base = named_base(words[0]);
  } else if (words.size() > 1) {
    base.cat = Base::Cat::Invalid;
  }
  std::string pointee;  // the base type's words: "unsigned short"
  for (const std::string& w : words) pointee += (pointee.empty() ? "" : " ") + w;

  if (base.cat == Base::Cat::Invalid) {
    return unsupported(std::move(p), base.reason.empty()
                                         ? fmt::format("'{}' is not a valid type", p.spelling)
                                         : base.reason);
  }

  if (pointers == 1) {
    p.kind = ParamKind::Pointer;
    p.size = p.align = 8;
    p.pointee_const = base_const;
    switch (base.cat) {
      case Base::Cat::Void:
        p.pointee_void = true;
        return p;
      case Base::Cat::Unknown:
        if (elaborated) {
          return unsupported(std::move(p),
                             "pointers to structs are not supported: declare the parameter as "
                             "void* to pass any array");
        }
        return unsupported(std::move(p),
                           fmt::format("'{}' is not a type culua knows: declare the parameter as "
                                       "void* to pass any array",
                                       pointee));
      default:
        break;
    }
    if (!base.element) {
      return unsupported(std::move(p),
                         fmt::format("no culua dtype matches '{}': declare the parameter as "
                                     "void* to pass any array",
                                     pointee));
    }
    p.element = *base.element;
    p.vector = base.vector;
    p.pointee_align = base.vector_align;
    return p;
  }

  switch (base.cat) {
    case Base::Cat::Int:
      p.kind = base.is_signed ? ParamKind::Signed : ParamKind::Unsigned;
      break;
    case Base::Cat::Float:
      p.kind = ParamKind::Float;
      break;
    case Base::Cat::Bool:
      p.kind = ParamKind::Bool;
      break;
    case Base::Cat::Complex:
      p.kind = ParamKind::Complex;
      break;
    case Base::Cat::Void:
      return unsupported(std::move(p), "void is not a parameter type");
    case Base::Cat::Vector:
      return unsupported(std::move(p),
                         fmt::format("vector types by value are not supported: pass the "
                                     "components of {} as separate parameters",
                                     pointee));
    default:
      if (elaborated) return unsupported(std::move(p), std::string(kStructReason));
      return unsupported(std::move(p),
                         fmt::format("'{}' is not a type culua knows; {}", pointee, kStructReason));
  }
  p.size = base.size;
  p.align = base.align;
  p.format = base.format;
  return p;
}

}  // namespace culua::detail::rtc
