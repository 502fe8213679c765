// The persistent kernel cache: round trips, every kind of bad file as a miss, failed writes as a
// reason, concurrent writers, and the include-directory fingerprint.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "rtc/kernel_cache.hpp"

using namespace culua::detail::rtc;
namespace fs = std::filesystem;

namespace {

// A fresh directory under the system's temporary directory, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = fs::temp_directory_path() /
            ("culua-cache-test-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }
  std::string str() const { return path_.string(); }

 private:
  fs::path path_;
};

CacheEntry sample_entry(size_t image_bytes = 3000) {
  CacheEntry e;
  e.image.resize(image_bytes);
  for (size_t k = 0; k < image_bytes; ++k) e.image[k] = static_cast<char>((k * 7 + 3) & 0xFF);
  if (image_bytes > 1) {
    e.image[0] = '\n';  // image bytes may hold newlines and zeros
    e.image[1] = '\0';
  }
  e.ptx = false;
  e.lowered_names = {{"scale<float, 3>", "_Z5scaleIfLi3EEvPT_S0_i"}, {"saxpy", "saxpy"}};
  e.log = "warning: variable \"x\" was declared but never referenced\n\ttab \"quoted\"";
  e.compile_ms = 123.25;
  return e;
}

void check_same(const CacheEntry& a, const CacheEntry& b) {
  CHECK(a.image == b.image);
  CHECK(a.ptx == b.ptx);
  CHECK(a.lowered_names == b.lowered_names);
  CHECK(a.log == b.log);
  CHECK(a.compile_ms == b.compile_ms);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

TEST_CASE("kernel cache: hash_hex is 64-bit FNV-1a in 16 hex digits", "[kernel_cache]") {
  CHECK(hash_hex("") == "cbf29ce484222325");
  CHECK(hash_hex("a") == "af63dc4c8601ec8c");
  CHECK(hash_hex("foobar") == "85944171f73967e8");
  CHECK(hash_hex("key one") != hash_hex("key two"));
}

TEST_CASE("kernel cache: store then load gives the same entry", "[kernel_cache]") {
  TempDir dir;
  const KernelCache cache((dir.path() / "nested" / "deeper").string());
  REQUIRE(cache.enabled());
  const std::string key = "source text\nwith lines\n-arch=sm_90 nvrtc 13.0 driver 13000";
  CHECK_FALSE(cache.load(key).has_value());

  const CacheEntry e = sample_entry();
  std::string why = "untouched";
  REQUIRE(cache.store(key, e, &why));
  CHECK(why == "untouched");
  CHECK(fs::is_regular_file(cache.path_for(key)));
  CHECK(fs::path(cache.path_for(key)).parent_path() == dir.path() / "nested" / "deeper");
  CHECK(fs::path(cache.path_for(key)).filename().string().find(hash_hex(key)) == 0);

  const auto back = cache.load(key);
  REQUIRE(back.has_value());
  check_same(*back, e);
  CHECK_FALSE(cache.load(key + " ").has_value());

  // No temporary files are left behind.
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir.path() / "nested" / "deeper")) {
    (void)entry;
    ++files;
  }
  CHECK(files == 1);

  // A second store replaces the entry.
  CacheEntry ptx = sample_entry(10);
  ptx.ptx = true;
  ptx.lowered_names.clear();
  ptx.log.clear();
  ptx.compile_ms = 0;
  REQUIRE(cache.store(key, ptx));
  const auto again = cache.load(key);
  REQUIRE(again.has_value());
  check_same(*again, ptx);
}

TEST_CASE("kernel cache: empty images, big images and bytes that are not UTF-8", "[kernel_cache]") {
  TempDir dir;
  const KernelCache cache(dir.str());

  CacheEntry empty = sample_entry(0);
  REQUIRE(cache.store("empty image", empty));
  const auto e = cache.load("empty image");
  REQUIRE(e.has_value());
  CHECK(e->image.empty());

  const CacheEntry big = sample_entry(5'000'000);
  REQUIRE(cache.store("big image", big));
  const auto b = cache.load("big image");
  REQUIRE(b.has_value());
  CHECK(b->image == big.image);

  // A key (the kernel's source) and a log with Latin-1 bytes and a lone continuation byte.
  const std::string key = "// caf\xe9\n__global__ void k() {}\x80\xff";
  CacheEntry latin = sample_entry(16);
  latin.log = "note: \xe9t\xe9";
  latin.lowered_names = {{"k\xe9", "_Z1kv"}};
  std::string why;
  REQUIRE(cache.store(key, latin, &why));
  INFO(why);
  const auto l = cache.load(key);
  REQUIRE(l.has_value());
  check_same(*l, latin);
  // The same text but valid UTF-8 is another key.
  CHECK_FALSE(cache.load("// caf\xc3\xa9\n__global__ void k() {}").has_value());
  // Real UTF-8 passes unchanged too.
  CacheEntry utf8 = sample_entry(4);
  utf8.log = "\xe2\x9c\x93 done \xf0\x9f\x9a\x80";
  REQUIRE(cache.store("\xe2\x9c\x93 key", utf8));
  const auto u = cache.load("\xe2\x9c\x93 key");
  REQUIRE(u.has_value());
  check_same(*u, utf8);
}

TEST_CASE("kernel cache: a file written for another key is a miss", "[kernel_cache]") {
  TempDir dir;
  const KernelCache cache(dir.str());
  REQUIRE(cache.store("key A", sample_entry()));
  // As if "key B" hashed to the same file name.
  fs::copy_file(cache.path_for("key A"), cache.path_for("key B"));
  CHECK_FALSE(cache.load("key B").has_value());
  CHECK(cache.load("key A").has_value());
}

TEST_CASE("kernel cache: truncated, extended and garbage files are misses", "[kernel_cache]") {
  TempDir dir;
  const KernelCache cache(dir.str());
  const std::string key = "the key";
  REQUIRE(cache.store(key, sample_entry()));
  const std::string path = cache.path_for(key);
  const std::string good = read_file(path);
  REQUIRE(cache.load(key).has_value());
  const size_t newline = good.find('\n');
  REQUIRE(newline != std::string::npos);

  SECTION("truncated anywhere") {
    for (size_t n : {size_t{0}, size_t{1}, newline / 2, newline, newline + 1, newline + 100,
                     good.size() - 1}) {
      INFO(n);
      write_file(path, good.substr(0, n));
      CHECK_FALSE(cache.load(key).has_value());
    }
  }
  SECTION("extra bytes") {
    write_file(path, good + "x");
    CHECK_FALSE(cache.load(key).has_value());
  }
  SECTION("garbage") {
    std::mt19937 rng(42);
    for (int round = 0; round < 50; ++round) {
      std::string junk(static_cast<size_t>(rng() % 5000), '\0');
      for (char& c : junk) c = static_cast<char>(rng() & 0xFF);
      write_file(path, junk);
      CHECK_FALSE(cache.load(key).has_value());
    }
    write_file(path, std::string(100000, 'x'));  // no newline at all
    CHECK_FALSE(cache.load(key).has_value());
  }
  SECTION("valid JSON of the wrong shape") {
    const std::string image = good.substr(newline + 1);
    const std::string size = std::to_string(image.size());
    const std::string rest = "\"ptx\":false,\"lowered_names\":[],\"log\":\"\",\"compile_ms\":1,";
    const std::string bad_heads[] = {
        "[]",
        "null",
        "42",
        "\"the key\"",
        "{}",
        "{\"version\":1,\"key\":\"the key\"," + rest + "\"image_size\":-1}",
        "{\"version\":1,\"key\":\"the key\"," + rest + "\"image_size\":\"" + size + "\"}",
        "{\"version\":2,\"key\":\"the key\"," + rest + "\"image_size\":" + size + "}",
        "{\"version\":1,\"key\":42," + rest + "\"image_size\":" + size + "}",
        "{\"version\":1,\"key\":{\"hex\":\"zz\"}," + rest + "\"image_size\":" + size + "}",
        "{\"version\":1,\"key\":\"the key\",\"ptx\":0,\"lowered_names\":[],\"log\":\"\","
        "\"compile_ms\":1,\"image_size\":" +
            size + "}",
        "{\"version\":1,\"key\":\"the key\",\"ptx\":false,\"lowered_names\":[[\"a\"]],"
        "\"log\":\"\",\"compile_ms\":1,\"image_size\":" +
            size + "}",
        "{\"version\":1,\"key\":\"the key\",\"ptx\":false,\"lowered_names\":[],\"log\":\"\","
        "\"compile_ms\":1,\"image_size\":18446744073709551615}",
        "{\"version\":1,\"key\":\"the key\"," + rest + "\"image_size\":" + size,
    };
    for (const std::string& head : bad_heads) {
      INFO(head);
      write_file(path, head + "\n" + image);
      CHECK_FALSE(cache.load(key).has_value());
    }
    // The same layout with everything right loads: the cases above fail for their one reason.
    write_file(path, "{\"version\":1,\"key\":\"the key\"," + rest + "\"image_size\":" + size +
                         "}\n" + image);
    CHECK(cache.load(key).has_value());
  }
  SECTION("a directory where the file should be") {
    fs::remove(path);
    fs::create_directory(path);
    CHECK_FALSE(cache.load(key).has_value());
  }
}

TEST_CASE("kernel cache: failed writes return false with a reason", "[kernel_cache]") {
  TempDir dir;
  const std::string file = (dir.path() / "a-file").string();
  write_file(file, "not a directory");

  // The cache directory is a regular file.
  const KernelCache on_file(file);
  std::string why;
  CHECK_FALSE(on_file.store("k", sample_entry(), &why));
  CHECK_THAT(why, Catch::Contains(file));
  CHECK_FALSE(on_file.load("k").has_value());
  CHECK_FALSE(on_file.store("k", sample_entry()));  // without `why`

  // A parent of it is a regular file.
  const KernelCache below_file((fs::path(file) / "sub").string());
  why.clear();
  CHECK_FALSE(below_file.store("k", sample_entry(), &why));
  CHECK_FALSE(why.empty());
}

TEST_CASE("kernel cache: disabled by an empty directory", "[kernel_cache]") {
  const KernelCache cache("");
  CHECK_FALSE(cache.enabled());
  CHECK(cache.directory().empty());
  CHECK(cache.path_for("k").empty());
  CHECK_FALSE(cache.load("k").has_value());
  std::string why;
  CHECK_FALSE(cache.store("k", sample_entry(), &why));
  CHECK_THAT(why, Catch::Contains("disabled"));
}

TEST_CASE("kernel cache: concurrent stores of one key leave a loadable entry", "[kernel_cache]") {
  TempDir dir;
  const KernelCache cache(dir.str());
  const std::string key = "shared key";
  constexpr int kThreads = 8;
  constexpr int kRounds = 20;
  std::vector<CacheEntry> entries;
  for (int t = 0; t < kThreads; ++t) {
    CacheEntry e = sample_entry(static_cast<size_t>(20000 + 1000 * t));
    e.log = "thread " + std::to_string(t);
    entries.push_back(std::move(e));
  }
  std::vector<int> failures(kThreads, 0);
  std::vector<int> bad_loads(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) {
        if (!cache.store(key, entries[static_cast<size_t>(t)])) ++failures[static_cast<size_t>(t)];
        // Whatever a reader sees is one writer's whole entry.
        const auto seen = cache.load(key);
        if (!seen) {
          ++bad_loads[static_cast<size_t>(t)];
          continue;
        }
        const int writer = std::stoi(seen->log.substr(7));
        if (seen->image != entries[static_cast<size_t>(writer)].image) {
          ++bad_loads[static_cast<size_t>(t)];
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    CHECK(failures[static_cast<size_t>(t)] == 0);
    CHECK(bad_loads[static_cast<size_t>(t)] == 0);
  }
  const auto final_entry = cache.load(key);
  REQUIRE(final_entry.has_value());
  const int writer = std::stoi(final_entry->log.substr(7));
  REQUIRE(writer >= 0);
  REQUIRE(writer < kThreads);
  check_same(*final_entry, entries[static_cast<size_t>(writer)]);
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    (void)entry;
    ++files;
  }
  CHECK(files == 1);  // no temporary file left
}

TEST_CASE("kernel cache: default_directory follows the environment", "[kernel_cache]") {
  auto saved = [](const char* name) -> std::optional<std::string> {
    const char* v = std::getenv(name);
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
  const auto cache_dir = saved("CULUA_CACHE_DIR");
  const auto xdg = saved("XDG_CACHE_HOME");
  const auto home = saved("HOME");

  ::setenv("CULUA_CACHE_DIR", "/tmp/explicit", 1);
  ::setenv("XDG_CACHE_HOME", "/tmp/xdg", 1);
  ::setenv("HOME", "/tmp/home", 1);
  CHECK(KernelCache::default_directory() == "/tmp/explicit");
  ::unsetenv("CULUA_CACHE_DIR");
  CHECK(KernelCache::default_directory() == "/tmp/xdg/culua");
  ::setenv("XDG_CACHE_HOME", "", 1);
  CHECK(KernelCache::default_directory() == "/tmp/home/.cache/culua");
  ::unsetenv("XDG_CACHE_HOME");
  CHECK(KernelCache::default_directory() == "/tmp/home/.cache/culua");
  ::unsetenv("HOME");
  CHECK(KernelCache::default_directory().empty());

  auto restore = [](const char* name, const std::optional<std::string>& v) {
    if (v) {
      ::setenv(name, v->c_str(), 1);
    } else {
      ::unsetenv(name);
    }
  };
  restore("CULUA_CACHE_DIR", cache_dir);
  restore("XDG_CACHE_HOME", xdg);
  restore("HOME", home);
}

TEST_CASE("kernel cache: fingerprint_directories", "[kernel_cache]") {
  TempDir dir;
  const fs::path inc = dir.path() / "include";
  fs::create_directories(inc / "sub" / "deeper");
  write_file((inc / "a.h").string(), "int a;");
  write_file((inc / "sub" / "b.cuh").string(), "int bb;");
  write_file((inc / "sub" / "deeper" / "c.h").string(), "");
  const std::string missing = (dir.path() / "no-such-dir").string();

  const std::string fp = fingerprint_directories({inc.string(), missing});
  // One sorted line per file (path, size, mtime), and one for the missing directory.
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t nl = fp.find('\n'); nl != std::string::npos; nl = fp.find('\n', start)) {
    lines.push_back(fp.substr(start, nl - start));
    start = nl + 1;
  }
  REQUIRE(lines.size() == 4);
  CHECK(std::is_sorted(lines.begin(), lines.end()));
  CHECK(lines[0].find((inc / "a.h").string() + " 6 ") == 0);
  CHECK(lines[1].find((inc / "sub" / "b.cuh").string() + " 7 ") == 0);
  CHECK(lines[2].find((inc / "sub" / "deeper" / "c.h").string() + " 0 ") == 0);
  CHECK(fp.find(missing + " (missing)") != std::string::npos);

  // Stable while nothing changes; a changed size or time changes it.
  CHECK(fingerprint_directories({inc.string(), missing}) == fp);
  write_file((inc / "sub" / "b.cuh").string(), "int bbb;");
  CHECK(fingerprint_directories({inc.string(), missing}) != fp);
  const std::string fp2 = fingerprint_directories({inc.string()});
  fs::last_write_time(inc / "a.h", fs::last_write_time(inc / "a.h") + std::chrono::seconds(5));
  CHECK(fingerprint_directories({inc.string()}) != fp2);

  CHECK(fingerprint_directories({}).empty());
  // A file given as a directory is not a directory.
  CHECK(fingerprint_directories({(inc / "a.h").string()}) ==
        (inc / "a.h").string() + " (missing)\n");
}

TEST_CASE("kernel cache: fingerprint_directories stops at 10000 files", "[kernel_cache]") {
  TempDir dir;
  for (int d = 0; d < 11; ++d) {
    const fs::path sub = dir.path() / fmt::format("d{}", d);
    fs::create_directories(sub);
    for (int f = 0; f < 1000; ++f) std::ofstream(sub / fmt::format("f{}.h", f)).put('x');
  }
  const std::string fp = fingerprint_directories({dir.str()});
  const auto lines = std::count(fp.begin(), fp.end(), '\n');
  CHECK(lines == 10001);
  CHECK(fp.find("(more than 10000 files)") != std::string::npos);
}
