// Shared by the run-time kernel bindings: modules (kernel_module.cpp), kernels and their launches
// (kernel.cpp), kernel templates (kernel_template.cpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <lua.hpp>

#include "core/backend/rtc_types.hpp"
#include "core/runtime/runtime.hpp"
#include "rtc/kernel_signature.hpp"
#include "rtc/rtc_kernel.hpp"

namespace culua::detail::lua {

inline constexpr char kModuleType[] = "cu.Module";
inline constexpr char kKernelType[] = "cu.Kernel";
inline constexpr char kBoundKernelType[] = "cu.ConfiguredKernel";

// Where a source string came from: the script, and the script line of the source's first line
// (0 when the string does not appear literally in the script).
struct SourceOrigin {
  std::string chunk;
  int first_line = 0;
  int call_line = 0;
};

// The script calling the current C function, and where `source` appears in it.
SourceOrigin find_origin(lua_State* L, const std::string& source);

// Rewrites "program(12)" in a compiler log to "script.lua:LINE".
std::string map_compiler_log(const std::string& log, const std::string& program,
                             const SourceOrigin& origin);

// Compiles through the backend; a compile error's log is mapped to the script's lines.
std::shared_ptr<const RtcBinary> compile_checked(Runtime& rt, const RtcRequest& request,
                                                 const SourceOrigin& origin);

// The kernel `expression` of `binary` with its parameters resolved.
std::shared_ptr<rtc::RtcKernel> make_kernel(std::shared_ptr<const RtcBinary> binary,
                                            const std::string& expression,
                                            const rtc::KernelDecl* decl);

// Pushes a cu.Kernel for `kernel` (kernel.cpp).
void push_kernel(lua_State* L, std::shared_ptr<rtc::RtcKernel> kernel);

// The strings of the list at the top of the stack, the value of option `key` of the options table
// at `opts`; an element that is not a string raises, naming the option and the element. Leaves the
// stack as it was.
std::vector<std::string> option_string_list(lua_State* L, int opts, const char* key);

// cu.Module's metatable and cu.compile in the module table at -1 (kernel_module.cpp); called by
// register_kernel.
void register_module(lua_State* L);

}  // namespace culua::detail::lua
