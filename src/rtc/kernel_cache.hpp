// The persistent cache of compiled run-time kernels: one file per compile, keyed by everything
// the binary depends on (source, options, include files, architecture, compiler and driver
// versions), so a second run of a script compiles nothing.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace culua::detail::rtc {

struct CacheEntry {
  std::vector<char> image;  // cubin, or PTX when `ptx`
  bool ptx = false;
  // name expression -> lowered (mangled) symbol, as NVRTC reported them
  std::vector<std::pair<std::string, std::string>> lowered_names;
  std::string log;        // the compiler's warnings (empty when none)
  double compile_ms = 0;  // how long the original compile took
};

class KernelCache {
 public:
  // $CULUA_CACHE_DIR, else $XDG_CACHE_HOME/culua, else $HOME/.cache/culua; "" when none is known.
  static std::string default_directory();

  explicit KernelCache(std::string directory);  // "" disables the cache
  bool enabled() const { return !directory_.empty(); }
  const std::string& directory() const { return directory_; }

  // The entry for `key`, or nullopt. Never throws: a missing, truncated, corrupt or unreadable
  // file, or one written for another key with the same hash, is a miss.
  std::optional<CacheEntry> load(std::string_view key) const;
  // Writes the entry (creating the directory), atomically: a temporary file in the directory,
  // then rename, so concurrent runs never see half a file. Never throws: returns false and sets
  // `why` when it could not write.
  bool store(std::string_view key, const CacheEntry& entry, std::string* why = nullptr) const;
  // The path the entry for `key` is stored at.
  std::string path_for(std::string_view key) const;

 private:
  std::string directory_;
};

// 64-bit FNV-1a of `text` as 16 lower-case hex digits (names cache files; the file also holds the
// whole key, compared on load, so a collision is only a miss).
std::string hash_hex(std::string_view text);

// A fingerprint of the files under the given include directories (recursively, at most 10000
// files): one "path size mtime_ns" line per regular file, sorted. Part of the cache key, so editing
// a header the kernel includes recompiles it. Missing directories contribute "path (missing)".
std::string fingerprint_directories(const std::vector<std::string>& dirs);

}  // namespace culua::detail::rtc
