// SharedLibrary (dlopen, dlsym and the one error text) and the candidate files of the CUDA
// toolkit's libraries.
#include "core/base/shared_library.hpp"

#include <dlfcn.h>
#include <glob.h>
#include <link.h>

#include <climits>
#include <cstdlib>

#include "core/base/error.hpp"

#ifndef CULUA_CUDA_LIBRARY_DIR
#define CULUA_CUDA_LIBRARY_DIR "/usr/local/cuda/lib64"
#endif

namespace culua::detail {

SharedLibrary SharedLibrary::first_loaded(const std::string& what,
                                          const std::vector<std::string>& candidates,
                                          Binding binding, std::string& tried) {
  const int mode = (binding == Binding::Lazy ? RTLD_LAZY : RTLD_NOW) | RTLD_LOCAL |
                   (binding == Binding::AlreadyLoaded ? RTLD_NOLOAD : 0);
  SharedLibrary lib;
  lib.what_ = what;
  for (const std::string& name : candidates) {
    if (void* h = dlopen(name.c_str(), mode)) {
      lib.handle_ = h;
      lib.path_ = name;
      return lib;
    }
    // dlerror names the file it could not open, which is another one when a dependency is the
    // missing piece: the candidate goes first then.
    const char* e = dlerror();
    std::string why = e ? e : "cannot be opened";
    if (why.compare(0, name.size(), name) != 0) why = name + ": " + why;
    tried += (tried.empty() ? "" : "; ") + why;
  }
  return lib;
}

SharedLibrary SharedLibrary::open(const std::string& what,
                                  const std::vector<std::string>& candidates,
                                  const std::string& purpose, const std::string& hint) {
  std::string tried;
  SharedLibrary lib = first_loaded(what, candidates, Binding::Now, tried);
  if (lib.loaded()) return lib;
  fail(ErrorKind::Unsupported, "{} {}: not found (tried {}){}", purpose, what,
       tried.empty() ? std::string("no file") : tried, hint.empty() ? "" : " (" + hint + ")");
}

SharedLibrary SharedLibrary::open_optional(const std::string& what,
                                           const std::vector<std::string>& candidates,
                                           Binding binding) {
  std::string tried;
  return first_loaded(what, candidates, binding, tried);
}

std::string SharedLibrary::file() const {
  link_map* map = nullptr;
  if (!handle_ || dlinfo(handle_, RTLD_DI_LINKMAP, &map) != 0 || !map || !map->l_name) {
    return path_;
  }
  char resolved[PATH_MAX];
  return realpath(map->l_name, resolved) ? resolved : map->l_name;
}

void* SharedLibrary::find(const char* symbol) const {
  return handle_ ? dlsym(handle_, symbol) : nullptr;
}

void* SharedLibrary::require(const char* symbol) const {
  if (void* p = find(symbol)) return p;
  fail(ErrorKind::Unsupported, "{} ({}) has no symbol {}", what_.empty() ? "the library" : what_,
       loaded() ? file() : "not loaded", symbol);
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
  // CUPTI keeps its files apart in a toolkit (extras/CUPTI/lib64); no other library is there.
  const bool cupti = file.compare(0, 8, "libcupti") == 0;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const char* home = std::getenv(var); home && *home) {
      add(std::string(home) + "/lib64");
      add(std::string(home) + "/lib");
      if (cupti) add(std::string(home) + "/extras/CUPTI/lib64");
    }
  }
  for (const char* folder : {CULUA_CUDA_LIBRARY_DIR, CULUA_CUDA_LIBRARY_DIR "/../lib",
                             "/usr/local/cuda/lib64", "/usr/local/cuda/lib"}) {
    add(folder);
  }
  if (cupti) add("/usr/local/cuda/extras/CUPTI/lib64");
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
