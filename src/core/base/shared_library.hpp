// A library loaded at run time (dlopen): the first of several candidate files that loads, and its
// symbols by name, with one error text naming the library and the symbol. The library stays
// loaded for the life of the process (its functions may be called from any thread until exit).
#pragma once

#include <string>
#include <vector>

namespace culua::detail {

class SharedLibrary {
 public:
  // When the library's references to functions are bound: all at load (RTLD_NOW: a missing one
  // fails the load, not a later call), or at each one's first call (RTLD_LAZY: cheaper, for a probe
  // that only asks whether the file is there); or only a copy the process has loaded already
  // (RTLD_NOLOAD: the CUDA driver that the runtime loaded, never a second one).
  enum class Binding { Now, Lazy, AlreadyLoaded };

  SharedLibrary() = default;
  // Opens the first of `candidates` (file names or paths, tried in order) that loads. `what`
  // names the library for people ("CUPTI (libcupti.so.13)"), `purpose` says who needs it
  // ("cu.profile needs"), `hint` how to point culua at it ("set CULUA_CUPTI_LIBRARY to its file").
  // Throws Error(Unsupported): "<purpose> <what>: not found (tried a: why; b: why) (<hint>)".
  static SharedLibrary open(const std::string& what, const std::vector<std::string>& candidates,
                            const std::string& purpose, const std::string& hint);
  // The same for a library culua can do without: an empty library (loaded() false, find() null)
  // when no candidate loads.
  static SharedLibrary open_optional(const std::string& what,
                                     const std::vector<std::string>& candidates,
                                     Binding binding = Binding::Now);

  bool loaded() const { return handle_ != nullptr; }
  // The candidate that loaded, as it was given ("libnvrtc.so.13").
  const std::string& path() const { return path_; }
  // The file the loader found for it, links resolved: the folder a bare name such as
  // "libnvrtc.so.13" came from. Empty when not loaded.
  std::string file() const;

  // The symbol's address, or null when the library lacks it.
  void* find(const char* symbol) const;
  // The symbol as a function pointer in `out` (null when the library lacks it): for functions a
  // caller can do without. True when found.
  template <class F>
  bool find(const char* symbol, F& out) const {
    out = reinterpret_cast<F>(find(symbol));
    return out != nullptr;
  }
  // The symbol as a function pointer of type F; throws Error(Unsupported) "<what> (<file>) has
  // no symbol <name>" when it lacks it.
  template <class F>
  F resolve(const char* symbol) const {
    return reinterpret_cast<F>(require(symbol));
  }
  template <class F>
  void resolve(const char* symbol, F& out) const {
    out = resolve<F>(symbol);
  }

 private:
  // The first candidate that loads (empty when none does), each failure's reason in `tried`.
  static SharedLibrary first_loaded(const std::string& what,
                                    const std::vector<std::string>& candidates, Binding binding,
                                    std::string& tried);
  void* require(const char* symbol) const;
  void* handle_ = nullptr;
  std::string what_, path_;
};

// Candidate files for a library of the CUDA toolkit: `file` by the loader's search (the run path
// of culua's engine, LD_LIBRARY_PATH, the system's folders), then in $CUDA_HOME and $CUDA_PATH
// (lib64, lib), the toolkit culua was built with (its library folder and the sibling lib), and
// /usr/local/cuda (lib64, lib); CUPTI's files also in each toolkit's extras/CUPTI/lib64. Then the
// folders of NVIDIA's Python wheels (site-packages/nvidia/<wheel>/lib) when `wheel` is given. An
// environment variable `env`, when given, set and not empty, replaces the list with its value.
std::vector<std::string> toolkit_library_candidates(const std::string& file,
                                                    const char* env = nullptr,
                                                    const char* wheel = nullptr);

}  // namespace culua::detail
