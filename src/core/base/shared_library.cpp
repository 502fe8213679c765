#include "core/base/shared_library.hpp"

#include <dlfcn.h>
#include <glob.h>

#include <cstdlib>

#include "core/base/error.hpp"

#ifndef CULUA_CUDA_LIBRARY_DIR
#define CULUA_CUDA_LIBRARY_DIR "/usr/local/cuda/lib64"
#endif

namespace culua::detail {

SharedLibrary SharedLibrary::open(const std::string& what,
                                  const std::vector<std::string>& candidates,
                                  const std::string& purpose, const std::string& hint) {
  std::string tried;
  for (const std::string& name : candidates) {
    if (void* h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      SharedLibrary lib;
      lib.handle_ = h;
      lib.what_ = what;
      lib.path_ = name;
      return lib;
    }
    const char* e = dlerror();
    tried += (tried.empty() ? "" : "; ") + std::string(e ? e : name.c_str());
  }
  fail(ErrorKind::Unsupported, "{} {}: not found (tried {}){}", purpose, what,
       tried.empty() ? std::string("no file") : tried, hint.empty() ? "" : " (" + hint + ")");
}

void* SharedLibrary::find(const char* symbol) const {
  return handle_ ? dlsym(handle_, symbol) : nullptr;
}

void* SharedLibrary::require(const char* symbol) const {
  if (void* p = find(symbol)) return p;
  fail(ErrorKind::Unsupported, "{} ({}) has no symbol {}", what_.empty() ? "the library" : what_,
       path_.empty() ? "not loaded" : path_, symbol);
}

std::vector<std::string> toolkit_library_candidates(const std::string& file, const char* env,
                                                    const char* wheel) {
  if (env) {
    if (const char* v = std::getenv(env); v && *v) return {v};
  }
  std::vector<std::string> names{file};
  auto add = [&](const std::string& folder) {
    const std::string path = folder + "/" + file;
    for (const std::string& n : names) {
      if (n == path) return;
    }
    names.push_back(path);
  };
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const char* home = std::getenv(var); home && *home) {
      add(std::string(home) + "/lib64");
      add(std::string(home) + "/lib");
      add(std::string(home) + "/extras/CUPTI/lib64");
    }
  }
  for (const char* folder :
       {CULUA_CUDA_LIBRARY_DIR, CULUA_CUDA_LIBRARY_DIR "/../lib", "/usr/local/cuda/lib64",
        "/usr/local/cuda/lib", "/usr/local/cuda/extras/CUPTI/lib64"}) {
    add(folder);
  }
  if (wheel) {
    // NVIDIA's wheels (pip install nvidia-cuda-cupti-cu13 and the like): site-packages/nvidia/
    // <wheel>/lib, or nvidia/cu13/lib for CUDA 13's.
    std::vector<std::string> patterns;
    for (const char* root : {"/usr/lib", "/usr/local/lib"}) {
      for (const char* kind : {"site-packages", "dist-packages"}) {
        patterns.push_back(std::string(root) + "/python3*/" + kind);
      }
    }
    if (const char* venv = std::getenv("VIRTUAL_ENV"); venv && *venv) {
      patterns.push_back(std::string(venv) + "/lib/python3*/site-packages");
    }
    if (const char* home = std::getenv("HOME"); home && *home) {
      patterns.push_back(std::string(home) + "/.local/lib/python3*/site-packages");
    }
    for (const std::string& p : patterns) {
      glob_t g{};
      if (glob(p.c_str(), 0, nullptr, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; ++i) {
          add(std::string(g.gl_pathv[i]) + "/nvidia/" + wheel + "/lib");
          add(std::string(g.gl_pathv[i]) + "/nvidia/cu13/lib");
        }
      }
      globfree(&g);
    }
  }
  return names;
}

}  // namespace culua::detail
