// A library loaded at run time (dlopen): the first of several candidate files that loads, and its
// symbols by name, with one error text naming the library and the symbol. The library stays
// loaded for the life of the process (its functions may be called from any thread until exit).
#pragma once

#include <string>
#include <vector>

namespace culua::detail {

class SharedLibrary {
 public:
  SharedLibrary() = default;
  // Opens the first of `candidates` (file names or paths, tried in order) that loads. `what`
  // names the library for people ("CUPTI (libcupti.so)"), `purpose` says who needs it ("cu.profile
  // needs"), `hint` how to point culua at it ("set CULUA_CUPTI_LIBRARY to its file"). Throws
  // Error(Unsupported): "<purpose> <what>: not found (tried a, b; ...) (<hint>)".
  static SharedLibrary open(const std::string& what, const std::vector<std::string>& candidates,
                            const std::string& purpose, const std::string& hint);

  bool loaded() const { return handle_ != nullptr; }
  const std::string& path() const { return path_; }

  // The symbol's address, or null when the library lacks it.
  void* find(const char* symbol) const;
  // The symbol as a function pointer of type F; throws Error(Unsupported) "<what> (<path>) has
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
  void* require(const char* symbol) const;
  void* handle_ = nullptr;
  std::string what_, path_;
};

// Candidate files for a library of the CUDA toolkit: `file` by the loader's search, then in
// $CUDA_HOME and $CUDA_PATH (lib64, lib), the toolkit culua was built with, /usr/local/cuda, and
// the folders of NVIDIA's Python wheels (site-packages/nvidia/<wheel>/lib) when `wheel` is given.
// An environment variable `env`, when set and not empty, replaces the list with its value.
std::vector<std::string> toolkit_library_candidates(const std::string& file, const char* env,
                                                    const char* wheel = nullptr);

}  // namespace culua::detail
