// Run-time compiled kernels behind the Backend interface: a compile request, the binary it gives,
// and the loaded module and functions with their launch entry point. The CUDA backend implements
// them through NVRTC and the driver API; the host backend refuses with a clear error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace culua::detail {

class Stream;

struct RtcRequest {
  std::string source;
  std::string name = "kernel.cu";  // the program's name in compiler messages
  std::vector<std::string> options;
  std::vector<std::string> include_paths;
  // Expressions whose symbols are wanted ("saxpy", "scale<float>",
  // "culua_signature_probe<decltype(&saxpy)>"); see RtcBinary::lowered_names.
  std::vector<std::string> name_expressions;
  bool use_cache = true;
  // When set, stands for `source` in the kernel cache's key: a shorter text that changes whenever
  // the source does (cu.fuse: the prelude's hash and the kernel), so that a disk-cache hit reads
  // and compares a few kilobytes of key, not the whole source.
  std::string key_source;
};

enum class CacheOutcome : uint8_t { Hit, Miss, Off };

struct RtcBinary {
  std::vector<char> image;  // cubin, or PTX for the driver to compile when `ptx`
  bool ptx = false;
  std::vector<std::pair<std::string, std::string>> lowered_names;  // expression -> symbol
  std::string log;                                                 // compiler warnings
  std::string arch;                                                // "sm_90"
  CacheOutcome cache = CacheOutcome::Off;
  double compile_ms = 0;   // this compile, or the original one for a cache hit
  double elapsed_ms = 0;   // what this call took (a cache lookup for a hit)
  std::string cache_path;  // the cache file, when the cache is on
  std::string key;         // everything the binary depends on (also keys loaded modules)

  // The symbol of `expression`, or nullptr.
  const std::string* symbol(const std::string& expression) const {
    for (const auto& [e, s] : lowered_names) {
      if (e == expression) return &s;
    }
    return nullptr;
  }
};

struct KernelAttributes {
  int registers = 0;
  int max_threads_per_block = 0;  // for this kernel (registers and __launch_bounds__ limit it)
  size_t static_shared = 0;       // bytes
  size_t local = 0;               // bytes per thread
  size_t constant = 0;            // bytes
  size_t max_dynamic_shared = 0;  // bytes allowed now (raised on demand up to the device's limit)
  int ptx_version = 0;            // 90 for 9.0
  int binary_version = 0;
};

struct LaunchDims {
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint32_t shared = 0;  // dynamic shared memory, bytes
};

// What was launched where ("kernel 'saxpy' launched at x.lua:12"), for the message of an
// asynchronous fault. `version` changes whenever the text does (unique across all sites), so the
// text is copied only when it changed.
struct LaunchSite {
  const char* text = "";
  uint64_t version = 0;
};

// Offset and size of a kernel parameter in the launch buffer, as the driver reports them.
struct ParamLayout {
  size_t offset = 0;
  size_t size = 0;
};

class RtcFunction {
 public:
  virtual ~RtcFunction() = default;
  virtual int device() const = 0;
  virtual KernelAttributes attributes() = 0;
  // The driver's view of the first `count` parameters (the declaration's count: the driver is
  // never asked past it, which compute-sanitizer reports as an API error); false when the driver
  // cannot say. Fewer entries than `count`: the kernel takes fewer parameters.
  virtual bool parameter_layout(size_t count, std::vector<ParamLayout>& out) = 0;
  // Allows `bytes` of dynamic shared memory (past 48 KiB this must be asked for explicitly).
  virtual void reserve_dynamic_shared(size_t bytes) = 0;
  // Blocks of `block_threads` threads that fit on one SM at once.
  virtual int max_active_blocks(int block_threads, size_t dynamic_shared) = 0;
  // Queues the kernel; `params[i]` points at the value of parameter i. `site` describes the
  // launch for the message of an asynchronous fault. Never allocates.
  virtual void launch(const LaunchDims& dims, Stream& s, void** params, const LaunchSite& site) = 0;
};

class RtcModule {
 public:
  virtual ~RtcModule() = default;
  virtual int device() const = 0;
  // The kernel with this symbol; throws Error(Value) when the module has none.
  virtual std::shared_ptr<RtcFunction> function(const std::string& symbol) = 0;
};

}  // namespace culua::detail
