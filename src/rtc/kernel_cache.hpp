// The persistent cache of compiled run-time kernels: one file per compile, keyed by everything
// the binary depends on (source, options, include files, architecture, compiler and driver
// versions), so a second run of a script compiles nothing. The directory's size is capped: after a
// store the least recently used files go (see KernelCache::trim).
#pragma once

#include <cstdint>
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

// The cap on the cache directory's .kernel files when $CULUA_CACHE_MAX_BYTES is unset: 1 GiB.
inline constexpr uint64_t kDefaultCacheMaxBytes = uint64_t{1} << 30;

// $CULUA_CACHE_MAX_BYTES as a byte size ("512M", "2G", "1048576"; 0: no cap), or
// kDefaultCacheMaxBytes when it is unset or empty. A bad value throws Error(Value) naming the
// variable.
uint64_t cache_max_bytes_from_environment();

class KernelCache {
 public:
  // $CULUA_CACHE_DIR, else $XDG_CACHE_HOME/culua, else $HOME/.cache/culua; "" when none is known.
  static std::string default_directory();

  // "" disables the cache. `max_bytes` caps the directory's .kernel files (0: no cap).
  explicit KernelCache(std::string directory, uint64_t max_bytes = 0);
  bool enabled() const { return !directory_.empty(); }
  const std::string& directory() const { return directory_; }
  uint64_t max_bytes() const { return max_bytes_; }

  // The entry for `key`, or nullopt. Never throws: a missing, truncated, corrupt or unreadable
  // file, or one written for another key with the same hash, is a miss. A hit sets the file's
  // modification time to now, so that it records the last use (trim removes the oldest first).
  // `path`: path_for(key) when the caller has it already.
  std::optional<CacheEntry> load(std::string_view key, const std::string& path = {}) const;
  // Writes the entry (creating the directory), atomically: a temporary file in the directory,
  // then rename, so concurrent runs never see half a file; then trims the directory, keeping the
  // file just written. Never throws: returns false and sets `why` when it could not write.
  bool store(std::string_view key, const CacheEntry& entry, std::string* why = nullptr) const;
  // Removes the file of `key` (an entry whose image the driver refused). Never throws; false when
  // there was no file or it could not be removed.
  bool remove(std::string_view key) const;
  // Removes the least recently used (oldest modification time) .kernel files until those left
  // hold at most max_bytes() bytes, never the file `keep`; with no cap, none. Also removes the
  // temporary files of writers that died, once they are an hour old. Other files (tune.json) are
  // neither counted nor removed. Never throws; safe while other processes use the directory (a
  // file that vanishes meanwhile is simply gone). Returns how many .kernel files it removed.
  size_t trim(const std::string& keep = {}) const;
  // The path the entry for `key` is stored at.
  std::string path_for(std::string_view key) const;

 private:
  std::string directory_;
  uint64_t max_bytes_ = 0;
};

// 64-bit FNV-1a of `text` as 16 lower-case hex digits (names cache files; the file also holds the
// whole key, compared on load, so a collision is only a miss).
std::string hash_hex(std::string_view text);

// A fingerprint of the files under the given include directories (recursively, at most 10000
// files): one "path size mtime_ns" line per regular file, sorted. Part of the cache key, so editing
// a header the kernel includes recompiles it. Missing directories contribute "path (missing)".
std::string fingerprint_directories(const std::vector<std::string>& dirs);

}  // namespace culua::detail::rtc
