// SharedLibrary, the one loader of libraries opened at run time: the first candidate that loads,
// the error texts for a missing library and a missing symbol, optional libraries, the toolkit's
// candidate files, and NVML's loader (absent or present, it never throws). No GPU needed: the
// C library's libm stands in for a library that loads.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "core/base/error.hpp"
#include "core/base/nvml_library.hpp"
#include "core/base/shared_library.hpp"

using namespace culua::detail;

namespace {

std::string message_of(void (*f)()) {
  try {
    f();
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Unsupported);
    return e.what();
  }
  return "(no error)";
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// Sets an environment variable for the life of the object, then puts back what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) {
      had_ = true;
      old_ = old;
    }
    if (value) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (had_) {
      setenv(name_, old_.c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

}  // namespace

TEST_CASE("shared library: the first candidate that loads, and its symbols") {
  const SharedLibrary lib =
      SharedLibrary::open("libm", {"/nonexistent/libm.so.6", "libm.so.6"}, "this test needs", "");
  REQUIRE(lib.loaded());
  CHECK(lib.path() == "libm.so.6");
  const std::filesystem::path file = lib.file();
  CHECK(file.is_absolute());
  CHECK(std::filesystem::exists(file));

  const auto cosine = lib.resolve<double (*)(double)>("cos");
  CHECK(cosine(0.0) == 1.0);
  double (*sine)(double) = nullptr;
  lib.resolve("sin", sine);
  CHECK(sine(0.0) == 0.0);

  CHECK(lib.find("culua_no_such_symbol") == nullptr);
  double (*absent)(double) = sine;
  CHECK_FALSE(lib.find("culua_no_such_symbol", absent));
  CHECK(absent == nullptr);
  CHECK(lib.find("cos", absent));
  CHECK(absent == cosine);
}

TEST_CASE("shared library: a missing library names who needs it, each file tried and the hint") {
  const std::string m = message_of([] {
    SharedLibrary::open("NCCL (libnccl.so.2)",
                        {"/nonexistent/libnccl.so.2", "libculua-absent.so.2"}, "cu.nccl needs",
                        "set CULUA_NCCL_LIBRARY to its file");
  });
  CHECK(
      contains(m, "cu.nccl needs NCCL (libnccl.so.2): not found (tried /nonexistent/libnccl.so.2"));
  CHECK(contains(m, "; libculua-absent.so.2"));
  CHECK(contains(m, ") (set CULUA_NCCL_LIBRARY to its file)"));

  const std::string none =
      message_of([] { SharedLibrary::open("cuFFT (libcufft.so.12)", {}, "cu.fft needs", ""); });
  CHECK(contains(none, "cu.fft needs cuFFT (libcufft.so.12): not found (tried no file)"));
}

TEST_CASE("shared library: a file that is not a library is named with the loader's reason") {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "culua_test_shared_library";
  std::filesystem::create_directories(dir);
  const std::string bogus = (dir / "libbogus.so").string();
  {
    std::FILE* f = std::fopen(bogus.c_str(), "w");
    REQUIRE(f != nullptr);
    std::fputs("not a library\n", f);
    std::fclose(f);
  }
  std::string m;
  try {
    SharedLibrary::open("bogus", {bogus}, "this test needs", "");
  } catch (const Error& e) {
    m = e.what();
  }
  std::filesystem::remove_all(dir);
  CHECK(contains(m, "this test needs bogus: not found (tried " + bogus + ": "));
}

TEST_CASE("shared library: a missing symbol names the library and the file") {
  const std::string m = message_of([] {
    SharedLibrary::open("libm (the C math library)", {"libm.so.6"}, "this test needs", "")
        .resolve<void (*)()>("culua_no_such_symbol");
  });
  const std::string file = SharedLibrary::open("libm", {"libm.so.6"}, "this test needs", "").file();
  CHECK(contains(m, "libm (the C math library) (" + file + ") has no symbol culua_no_such_symbol"));
}

TEST_CASE("shared library: an optional library is empty when no candidate loads") {
  const SharedLibrary absent = SharedLibrary::open_optional("the NVIDIA driver (libcuda.so.1)",
                                                            {"/nonexistent/libcuda.so.1"});
  CHECK_FALSE(absent.loaded());
  CHECK(absent.path().empty());
  CHECK(absent.file().empty());
  CHECK(absent.find("cuInit") == nullptr);
  const std::string m = message_of([] {
    SharedLibrary::open_optional("the NVIDIA driver (libcuda.so.1)", {"/nonexistent/libcuda.so.1"})
        .resolve<void (*)()>("cuInit");
  });
  CHECK(contains(m, "the NVIDIA driver (libcuda.so.1) (not loaded) has no symbol cuInit"));

  const SharedLibrary lazy = SharedLibrary::open_optional(
      "libm", {"/nonexistent/libm.so.6", "libm.so.6"}, SharedLibrary::Binding::Lazy);
  CHECK(lazy.loaded());
  CHECK(lazy.find("cos") != nullptr);
}

TEST_CASE("shared library: the toolkit's candidates, in order") {
  ScopedEnv no_override("CULUA_TEST_LIBRARY", nullptr);
  ScopedEnv home("CUDA_HOME", "/opt/culua-test-cuda");
  ScopedEnv path("CUDA_PATH", nullptr);
  const std::vector<std::string> c =
      toolkit_library_candidates("libcublas.so.13", "CULUA_TEST_LIBRARY");
  REQUIRE(c.size() >= 4);
  CHECK(c[0] == "libcublas.so.13");  // the loader's own search first
  CHECK(c[1] == "/opt/culua-test-cuda/lib64/libcublas.so.13");
  CHECK(c[2] == "/opt/culua-test-cuda/lib/libcublas.so.13");
  bool usr_local = false;
  for (size_t i = 0; i < c.size(); ++i) {
    CHECK_FALSE(contains(c[i], "extras/CUPTI"));  // CUPTI's folder is for CUPTI's files only
    for (size_t j = 0; j < i; ++j) CHECK(c[i] != c[j]);
    usr_local = usr_local || c[i] == "/usr/local/cuda/lib64/libcublas.so.13";
  }
  CHECK(usr_local);

  const std::vector<std::string> cupti = toolkit_library_candidates("libcupti.so.13", nullptr);
  CHECK(cupti[3] == "/opt/culua-test-cuda/extras/CUPTI/lib64/libcupti.so.13");
  CHECK(cupti.back() == "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13");
}

TEST_CASE("shared library: an environment variable names the one file") {
  ScopedEnv file("CULUA_TEST_LIBRARY", "/somewhere/libnccl.so.2");
  const std::vector<std::string> c =
      toolkit_library_candidates("libnccl.so.2", "CULUA_TEST_LIBRARY");
  REQUIRE(c.size() == 1);
  CHECK(c[0] == "/somewhere/libnccl.so.2");
  ScopedEnv empty("CULUA_TEST_LIBRARY", "");
  CHECK(toolkit_library_candidates("libnccl.so.2", "CULUA_TEST_LIBRARY").front() == "libnccl.so.2");
}

TEST_CASE("nvml: loaded once, never required") {
  const SharedLibrary& lib = nvml::library();
  CHECK(&lib == &nvml::library());
  if (!lib.loaded()) {
    WARN("NVML (libnvidia-ml.so.1) is not available here");
    CHECK(lib.find("nvmlInit_v2") == nullptr);
  } else {
    CHECK(lib.find("nvmlInit_v2") != nullptr);
  }
  CHECK(nvml::device_by_pci_bus_id("") == nullptr);
  CHECK(nvml::device_by_pci_bus_id("ffff:ff:ff.7") == nullptr);
}
