// The parts of the sandbox (docs/sandbox.md) that live below Lua: which files culua's functions
// may write or read for a sandboxed script, and what a sandboxed run-time kernel may ask of the
// compiler. The policy is per thread: the front ends (src/lua/sandbox.cpp) put it in place
// around every entry into a sandboxed Lua state.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/backend/rtc_types.hpp"

namespace culua::detail {

struct FilePolicy {
  // The only files a sandboxed script may have culua write (the --json/--csv/--plot/--trace
  // paths of the command line, Options::sandbox.output_files); culua reads none for it.
  std::vector<std::string> writable;
  bool allows_write(const std::string& path) const;
};

// Makes `policy` the calling thread's (null: no sandbox). The policy must outlive its use.
void set_file_policy(const FilePolicy* policy) noexcept;
const FilePolicy* current_file_policy() noexcept;
inline bool sandboxed() noexcept {
  return current_file_policy() != nullptr;
}

// Lifts the calling thread's policy for a scope: culua's own temporary files (the plot's data
// and gnuplot script), after the file the script asked for was checked.
class FilePolicySuspended {
 public:
  FilePolicySuspended() noexcept : saved_(current_file_policy()) { set_file_policy(nullptr); }
  ~FilePolicySuspended() { set_file_policy(saved_); }
  FilePolicySuspended(const FilePolicySuspended&) = delete;
  FilePolicySuspended& operator=(const FilePolicySuspended&) = delete;

 private:
  const FilePolicy* saved_;
};

// Throw Error(ErrorKind::Limit) naming the path when the sandbox in place refuses it.
void check_file_write(const std::string& path);
void check_file_read(const std::string& path);

// A limit in bytes as given: "32 MiB", "1 GiB", "1500 bytes".
std::string format_limit_bytes(uint64_t bytes);

// A sandboxed compile: no #include of any file (so no file is read through the preprocessor), no
// include paths, only compiler options from an allow-list (macros, optimization, architecture,
// math modes, debug info), and no on-disk kernel cache. Throws Error(ErrorKind::Limit).
void check_sandboxed_compile(RtcRequest& request);

}  // namespace culua::detail
