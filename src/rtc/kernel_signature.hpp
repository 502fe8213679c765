// Kernel declarations in CUDA source text, and the parameter lists of kernels from their demangled
// symbols. Run-time compiled kernels (cu.compile) check every argument against these (types:
// rtc/type_parser.hpp, values: rtc/arguments.hpp); this file knows nothing of CUDA or Lua, so all
// of it is tested without a GPU.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace culua::detail::rtc {

// A __global__ function found in source text.
struct KernelDecl {
  std::string name;  // qualified by its namespaces: "ns::scale"
  bool extern_c = false;
  bool is_template = false;
  std::string template_params;           // the text between `template <` and `>`, trimmed
  std::vector<std::string> param_names;  // "" for an unnamed parameter
  std::vector<std::string>
      param_types;  // the type as written, trimmed ("const float* __restrict__")
  int line = 0;     // 1-based line of the kernel's name
};

// Every __global__ function declared or defined in `source`, in order, each name once (a
// declaration followed by its definition counts once; overloads are listed separately). Comments,
// string and character literals and preprocessor lines are skipped; `extern "C"` applies to one
// declaration or to an `extern "C" { ... }` block; `namespace a { namespace b {` and `namespace
// a::b {` qualify names; attributes such as __launch_bounds__(256) and default arguments are
// skipped.
std::vector<KernelDecl> scan_kernels(std::string_view source);

// Splits at top-level commas (not inside <>, (), [] or {}); trims each piece; "" gives {}.
std::vector<std::string> split_top_level(std::string_view list);

// The parameter types of a demangled function name ("void scale<float, 3>(float*, float, int)",
// "saxpy(float, float const*)") or of a function pointer type ("void (*)(float, int)"): the
// pieces of the last top-level parenthesized list. "(void)" and "()" give {}. nullopt when the
// text has no parameter list.
std::optional<std::vector<std::string>> demangled_parameters(std::string_view demangled);

// abi::__cxa_demangle of a symbol; "" when it is not a mangled C++ name (an extern "C" kernel).
std::string demangle(const std::string& symbol);

// The single template argument of a demangled name "probe<void (*)(float, int)>" ->
// "void (*)(float, int)"; nullopt when there is none.
std::optional<std::string> template_argument(std::string_view demangled);

}  // namespace culua::detail::rtc
