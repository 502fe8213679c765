// The persistent kernel cache: round trips, every kind of bad file as a miss, failed writes as a
// reason, concurrent writers, the include-directory fingerprint, and the size cap (least recently
// used files go first, never the one just written; CULUA_CACHE_MAX_BYTES), and with NVRTC the
// recompile of a cached image the driver refuses.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
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
#ifdef CULUA_HAVE_CUDA
#include "core/base/error.hpp"
#include "cuda/rtc.hpp"
#endif

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

// Sets an environment variable for the scope, then restores it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* v = std::getenv(name)) saved_ = v;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (saved_) {
      ::setenv(name_, saved_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> saved_;
};

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
    // After the metadata line: the key's bytes, then the image's.
    const std::string image = good.substr(newline + 1 + key.size());
    const std::string size = std::to_string(image.size());
    const std::string rest = "\"ptx\":false,\"lowered_names\":[],\"log\":\"\",\"compile_ms\":1,";
    const std::string v2 = "{\"version\":2,\"key_bytes\":7,";
    const std::string bad_heads[] = {
        "[]",
        "null",
        "42",
        "\"the key\"",
        "{}",
        v2 + rest + "\"image_size\":-1}",
        v2 + rest + "\"image_size\":\"" + size + "\"}",
        "{\"version\":1,\"key_bytes\":7," + rest + "\"image_size\":" + size + "}",
        "{\"version\":3,\"key_bytes\":7," + rest + "\"image_size\":" + size + "}",
        "{\"version\":2,\"key_bytes\":8," + rest + "\"image_size\":" + size + "}",
        "{\"version\":2,\"key_bytes\":\"7\"," + rest + "\"image_size\":" + size + "}",
        "{\"version\":2," + rest + "\"image_size\":" + size + "}",
        v2 + "\"ptx\":0,\"lowered_names\":[],\"log\":\"\",\"compile_ms\":1,\"image_size\":" + size +
            "}",
        v2 +
            "\"ptx\":false,\"lowered_names\":[[\"a\"]],\"log\":\"\",\"compile_ms\":1,\"image_"
            "size\":" +
            size + "}",
        v2 + rest + "\"image_size\":18446744073709551615}",
        v2 + rest + "\"image_size\":" + size,
    };
    for (const std::string& head : bad_heads) {
      INFO(head);
      write_file(path, head + "\n" + key + image);
      CHECK_FALSE(cache.load(key).has_value());
    }
    // Another key of the same length after the metadata; a file of the first format.
    write_file(path, v2 + rest + "\"image_size\":" + size + "}\nthe kez" + image);
    CHECK_FALSE(cache.load(key).has_value());
    write_file(path, "{\"version\":1,\"key\":\"the key\"," + rest + "\"image_size\":" + size +
                         "}\n" + image);
    CHECK_FALSE(cache.load(key).has_value());
    // The same layout with everything right loads: the cases above fail for their one reason.
    write_file(path, v2 + rest + "\"image_size\":" + size + "}\n" + key + image);
    CHECK(cache.load(key).has_value());
    CHECK(cache.load(key, path).has_value());
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

namespace {

// Sets the file's modification time to `age` before now (the cache's record of its last use).
void set_age(const std::string& path, std::chrono::seconds age) {
  fs::last_write_time(path, fs::file_time_type::clock::now() - age);
}

std::vector<std::string> kernel_files(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > 7 && name.compare(name.size() - 7, 7, ".kernel") == 0) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Stores an entry of `image_bytes` for each key, then dates its last use `age` ago.
void store_aged(const KernelCache& cache,
                const std::vector<std::pair<std::string, std::chrono::seconds>>& entries,
                size_t image_bytes) {
  for (const auto& [key, age] : entries) {
    REQUIRE(cache.store(key, sample_entry(image_bytes)));
    set_age(cache.path_for(key), age);
  }
}

std::string file_name(const KernelCache& cache, const std::string& key) {
  return fs::path(cache.path_for(key)).filename().string();
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

TEST_CASE("kernel cache: trim removes the least recently used files until under the cap",
          "[kernel_cache]") {
  TempDir dir;
  const KernelCache writer(dir.str());  // no cap: the stores keep everything
  // The last uses, oldest first: B, D, A, E, C.
  using std::chrono::minutes;
  store_aged(writer,
             {{"key A", minutes(30)},
              {"key B", minutes(50)},
              {"key C", minutes(10)},
              {"key D", minutes(40)},
              {"key E", minutes(20)}},
             1000);
  // Other files in the folder are neither counted nor removed.
  write_file((dir.path() / "tune.json").string(), std::string(100000, 'x'));
  auto size = [&](const std::string& k) { return fs::file_size(writer.path_for(k)); };

  SECTION("no cap removes nothing") {
    CHECK(KernelCache(dir.str(), 0).trim() == 0);
    CHECK(kernel_files(dir.path()).size() == 5);
  }
  SECTION("under the cap removes nothing") {
    const uint64_t all =
        size("key A") + size("key B") + size("key C") + size("key D") + size("key E");
    CHECK(KernelCache(dir.str(), all).trim() == 0);
    CHECK(kernel_files(dir.path()).size() == 5);
  }
  SECTION("the oldest go first, until the rest fit") {
    // Room for the three most recently used (A, E, C), one byte short of room for D too.
    const uint64_t cap = size("key A") + size("key E") + size("key C") + size("key D") - 1;
    const KernelCache capped(dir.str(), cap);
    CHECK(capped.trim() == 2);
    CHECK(kernel_files(dir.path()) ==
          sorted({file_name(capped, "key A"), file_name(capped, "key E"),
                  file_name(capped, "key C")}));
    CHECK(fs::is_regular_file(dir.path() / "tune.json"));
    CHECK(capped.load("key C").has_value());
    CHECK_FALSE(capped.load("key B").has_value());
  }
  SECTION("the file to keep stays even when it is the oldest") {
    const KernelCache capped(dir.str(), size("key B") + size("key C"));
    CHECK(capped.trim(capped.path_for("key B")) == 3);
    CHECK(kernel_files(dir.path()) ==
          sorted({file_name(capped, "key B"), file_name(capped, "key C")}));
  }
}

TEST_CASE("kernel cache: a store trims the folder but keeps the file just written",
          "[kernel_cache]") {
  TempDir dir;
  const KernelCache writer(dir.str());
  store_aged(writer, {{"old 1", std::chrono::minutes(20)}, {"old 2", std::chrono::minutes(10)}},
             4000);
  const uint64_t one = fs::file_size(writer.path_for("old 1"));

  SECTION("a cap that holds two files: the oldest goes") {
    const KernelCache capped(dir.str(), 2 * one + 100);
    REQUIRE(capped.store("new", sample_entry(4000)));
    CHECK(kernel_files(dir.path()) ==
          sorted({file_name(capped, "old 2"), file_name(capped, "new")}));
  }
  SECTION("a cap smaller than the new file: everything else goes, the new file stays") {
    const KernelCache capped(dir.str(), 10);
    std::string why;
    REQUIRE(capped.store("new", sample_entry(4000), &why));
    CHECK(why.empty());
    CHECK(kernel_files(dir.path()) == std::vector<std::string>{file_name(capped, "new")});
    const auto back = capped.load("new");
    REQUIRE(back.has_value());
    check_same(*back, sample_entry(4000));
  }
}

TEST_CASE("kernel cache: a hit records the use, so trim keeps what was used last",
          "[kernel_cache]") {
  TempDir dir;
  const KernelCache writer(dir.str());
  // "used" written long ago ...
  store_aged(writer, {{"used", std::chrono::hours(2)}, {"unused", std::chrono::hours(1)}}, 2000);
  REQUIRE(writer.load("used").has_value());  // ... and used now
  const auto since =
      fs::file_time_type::clock::now() - fs::last_write_time(writer.path_for("used"));
  CHECK(since < std::chrono::minutes(1));
  // A miss (another key) does not touch anything.
  CHECK_FALSE(writer.load("absent").has_value());

  const KernelCache capped(dir.str(), fs::file_size(writer.path_for("used")));
  CHECK(capped.trim() == 1);
  CHECK(kernel_files(dir.path()) == std::vector<std::string>{file_name(capped, "used")});
}

TEST_CASE("kernel cache: trim removes writers' temporary files once an hour old",
          "[kernel_cache]") {
  TempDir dir;
  const KernelCache cache(dir.str());
  const fs::path stale = dir.path() / ".0123456789abcdef.kernel.tmp.4242.0.00000000deadbeef";
  const fs::path fresh = dir.path() / ".0123456789abcdef.kernel.tmp.4242.1.00000000deadbeef";
  const fs::path other = dir.path() / ".hidden";
  for (const fs::path& p : {stale, fresh, other}) write_file(p.string(), "partial");
  set_age(stale.string(), std::chrono::minutes(61));
  set_age(fresh.string(), std::chrono::minutes(59));
  set_age(other.string(), std::chrono::hours(5));
  CHECK(cache.trim() == 0);  // counts .kernel files only
  CHECK_FALSE(fs::exists(stale));
  CHECK(fs::exists(fresh));
  CHECK(fs::exists(other));
}

TEST_CASE("kernel cache: remove drops one entry", "[kernel_cache]") {
  TempDir dir;
  const KernelCache cache(dir.str());
  REQUIRE(cache.store("gone", sample_entry()));
  REQUIRE(cache.store("stays", sample_entry()));
  CHECK(cache.remove("gone"));
  CHECK_FALSE(cache.load("gone").has_value());
  CHECK(cache.load("stays").has_value());
  CHECK_FALSE(cache.remove("gone"));  // nothing left to remove
  CHECK_FALSE(KernelCache("").remove("stays"));
}

TEST_CASE("kernel cache: concurrent stores under a cap", "[kernel_cache]") {
  TempDir dir;
  constexpr int kThreads = 6;
  constexpr int kRounds = 15;
  const uint64_t one = [&] {
    const KernelCache probe(dir.str());
    REQUIRE(probe.store("probe", sample_entry(5000)));
    const uint64_t n = fs::file_size(probe.path_for("probe"));
    fs::remove(probe.path_for("probe"));
    return n;
  }();
  const uint64_t cap = 4 * one + one / 2;  // four entries fit
  const KernelCache cache(dir.str(), cap);
  const CacheEntry entry = sample_entry(5000);
  std::atomic<int> failed_stores{0};
  std::atomic<int> partial_loads{0};
  auto writer = [&](int t) {
    for (int r = 0; r < kRounds; ++r) {
      const std::string key = fmt::format("thread {} round {}", t, r);
      if (!cache.store(key, entry)) ++failed_stores;
      // Another thread's trim may have removed it already; what loads is whole.
      const auto seen = cache.load(key);
      if (seen && seen->image != entry.image) ++partial_loads;
    }
  };
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; ++t) writers.emplace_back(writer, t);
  for (std::thread& w : writers) w.join();
  CHECK(failed_stores.load() == 0);
  CHECK(partial_loads.load() == 0);
  // The last trim to start listed every file: what is left fits, and nothing else is there.
  uint64_t total = 0;
  size_t files = 0;
  for (const auto& file : fs::directory_iterator(dir.path())) {
    CHECK(file.path().extension() == ".kernel");
    total += file.file_size();
    ++files;
  }
  CHECK(total <= cap);
  CHECK(files >= 1);
}

TEST_CASE("kernel cache: CULUA_CACHE_MAX_BYTES sets the cap", "[kernel_cache]") {
  const ScopedEnv restored_after("CULUA_CACHE_MAX_BYTES", "");
  ::unsetenv("CULUA_CACHE_MAX_BYTES");
  CHECK(cache_max_bytes_from_environment() == kDefaultCacheMaxBytes);
  CHECK(kDefaultCacheMaxBytes == uint64_t{1} << 30);
  ::setenv("CULUA_CACHE_MAX_BYTES", "", 1);
  CHECK(cache_max_bytes_from_environment() == kDefaultCacheMaxBytes);
  ::setenv("CULUA_CACHE_MAX_BYTES", "0", 1);
  CHECK(cache_max_bytes_from_environment() == 0);
  ::setenv("CULUA_CACHE_MAX_BYTES", "1048576", 1);
  CHECK(cache_max_bytes_from_environment() == 1048576);
  ::setenv("CULUA_CACHE_MAX_BYTES", "512M", 1);
  CHECK(cache_max_bytes_from_environment() == uint64_t{512} << 20);
  ::setenv("CULUA_CACHE_MAX_BYTES", "2G", 1);
  CHECK(cache_max_bytes_from_environment() == uint64_t{2} << 30);
  for (const char* bad : {"lots", "-1", "1.5G", "12 M", "5T", "99999999999G"}) {
    INFO(bad);
    ::setenv("CULUA_CACHE_MAX_BYTES", bad, 1);
    CHECK_THROWS_WITH(cache_max_bytes_from_environment(),
                      Catch::StartsWith("CULUA_CACHE_MAX_BYTES: ") && Catch::Contains(bad));
  }
}

#ifdef CULUA_HAVE_CUDA
// The cache as cuda::compile uses it (NVRTC for sm_90, no GPU needed; the driver's verdict on a
// cached image is a callback here, the CUDA backend's module load on a GPU): a cached image the
// driver refuses is dropped, compiled afresh and stored again; the cap of CULUA_CACHE_MAX_BYTES
// applies to what compile stores. The same on a real GPU, with a corrupt file:
// tests/gpu/test_kernel_cache_gpu.lua.
namespace {

using culua::detail::CacheOutcome;
using culua::detail::DeviceInfo;
using culua::detail::Error;
using culua::detail::ErrorKind;
using culua::detail::RtcBinary;
using culua::detail::RtcRequest;
namespace cuda = culua::detail::cuda;

DeviceInfo h200() {
  DeviceInfo d;
  d.name = "test";
  d.cc_major = 9;
  d.cc_minor = 0;
  return d;
}

RtcRequest saxpy(const std::string& tag = "") {
  RtcRequest r;
  r.source =
      "extern \"C\" __global__ void saxpy(float a, const float* x, float* y, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) y[i] = a * x[i] + y[i];\n"
      "}\n// " +
      tag + "\n";
  r.name_expressions = {"saxpy"};
  return r;
}

// Compiles, or nullopt when this machine has no NVRTC.
std::optional<RtcBinary> compile(const RtcRequest& r, const cuda::CachedImageCheck& usable) {
  try {
    return cuda::compile(r, h200(), usable);
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::Unsupported) return std::nullopt;
    throw;
  }
}

}  // namespace

TEST_CASE("kernel cache: a cached image the driver refuses is compiled afresh", "[kernel_cache]") {
  TempDir dir;
  const ScopedEnv cache_dir("CULUA_CACHE_DIR", dir.str());
  const ScopedEnv cap("CULUA_CACHE_MAX_BYTES", "");
  int checks = 0;
  std::vector<char> checked_image;
  bool accept = true;
  const cuda::CachedImageCheck usable = [&](const RtcBinary& b) {
    ++checks;
    checked_image = b.image;
    CHECK(b.cache == CacheOutcome::Hit);
    return accept;
  };

  const auto first = compile(saxpy(), usable);
  if (!first) {
    WARN("NVRTC is not available: not compiled");
    return;
  }
  CHECK(first->cache == CacheOutcome::Miss);
  CHECK(checks == 0);  // a fresh image is not checked here: loading it is the launch's business
  REQUIRE(fs::is_regular_file(first->cache_path));
  const std::string good_file = read_file(first->cache_path);
  REQUIRE(first->image.size() > 4);
  CHECK(std::string(first->image.data(), 4) ==
        "\x7f"
        "ELF");  // a cubin for sm_90

  // A hit the driver takes is returned as it is.
  const auto hit = compile(saxpy(), usable);
  REQUIRE(hit);
  CHECK(hit->cache == CacheOutcome::Hit);
  CHECK(checks == 1);
  CHECK(hit->image == first->image);

  // The file's image bytes replaced by junk of the same length: still a hit for the cache (its
  // metadata and key are intact), refused by the driver.
  const size_t newline = good_file.find('\n');
  REQUIRE(newline != std::string::npos);
  const size_t image_at = newline + 1 + first->key.size();
  REQUIRE(good_file.compare(newline + 1, first->key.size(), first->key) == 0);
  std::string corrupt = good_file.substr(0, image_at);
  while (corrupt.size() < good_file.size()) corrupt += "corrupt!";
  corrupt.resize(good_file.size());
  write_file(first->cache_path, corrupt);
  const std::string junk = corrupt.substr(image_at);

  accept = false;
  const auto again = compile(saxpy(), usable);
  REQUIRE(again);
  CHECK(checks == 2);
  CHECK(std::string(checked_image.begin(), checked_image.end()) == junk);  // it was the cached one
  CHECK(again->cache == CacheOutcome::Miss);  // compiled, and stored again
  CHECK(again->cache_path == first->cache_path);
  CHECK(std::string(again->image.data(), 4) ==
        "\x7f"
        "ELF");
  CHECK(again->lowered_names == first->lowered_names);
  // (The metadata line's length may differ: it holds the new compile time.)
  const std::string replaced = read_file(again->cache_path);
  const size_t replaced_newline = replaced.find('\n');
  REQUIRE(replaced_newline != std::string::npos);
  CHECK(replaced.substr(replaced_newline + 1 + first->key.size()) ==
        std::string(again->image.begin(), again->image.end()));

  // The fresh file is a hit again.
  accept = true;
  const auto after = compile(saxpy(), usable);
  REQUIRE(after);
  CHECK(after->cache == CacheOutcome::Hit);
  CHECK(after->image == again->image);
  CHECK(checks == 3);

  // Without a check (as before), a hit is taken as it is.
  const auto unchecked = compile(saxpy(), {});
  REQUIRE(unchecked);
  CHECK(unchecked->cache == CacheOutcome::Hit);
}

TEST_CASE("kernel cache: compile stores under the cap of CULUA_CACHE_MAX_BYTES", "[kernel_cache]") {
  TempDir dir;
  const ScopedEnv cache_dir("CULUA_CACHE_DIR", dir.str());
  std::optional<RtcBinary> a, b;
  {
    const ScopedEnv cap("CULUA_CACHE_MAX_BYTES", "0");  // no cap
    a = compile(saxpy("a"), {});
    if (!a) {
      WARN("NVRTC is not available: not compiled");
      return;
    }
    b = compile(saxpy("b"), {});
    REQUIRE(b);
    CHECK(fs::is_regular_file(a->cache_path));
    CHECK(fs::is_regular_file(b->cache_path));
  }
  {
    // One byte: every store leaves only the file it wrote.
    const ScopedEnv cap("CULUA_CACHE_MAX_BYTES", "1");
    const auto c = compile(saxpy("c"), {});
    REQUIRE(c);
    CHECK(c->cache == CacheOutcome::Miss);
    CHECK(fs::is_regular_file(c->cache_path));
    CHECK_FALSE(fs::exists(a->cache_path));
    CHECK_FALSE(fs::exists(b->cache_path));
  }
  {
    const ScopedEnv cap("CULUA_CACHE_MAX_BYTES", "a lot");
    CHECK_THROWS_WITH(
        compile(saxpy("d"), {}),
        Catch::StartsWith("CULUA_CACHE_MAX_BYTES: cannot read 'a lot' as a byte size"));
    // Without the cache the variable is not read.
    RtcRequest uncached = saxpy("d");
    uncached.use_cache = false;
    const auto d = compile(uncached, {});
    REQUIRE(d);
    CHECK(d->cache == CacheOutcome::Off);
  }
}

#endif  // CULUA_HAVE_CUDA
