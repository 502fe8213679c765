#include "rtc/kernel_cache.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <system_error>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/base/error.hpp"
#include "core/base/json.hpp"
#include "core/runtime/runtime.hpp"

namespace culua::detail::rtc {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// Bumped whenever the file layout or the meaning of a field changes: older files become misses.
// A file: one line of JSON metadata, then the key's `key_bytes` bytes (compared byte for byte: a
// fused kernel's key holds its source, several kilobytes, which JSON would parse a character at a
// time), then the image's `image_size` bytes.
constexpr int kFormatVersion = 2;
// Metadata lines longer than this are garbage, not a key.
constexpr size_t kMaxMetadataBytes = size_t{256} << 20;

// Text as JSON without loss: a string when it is UTF-8, else {"hex": "..."} (a key holds the
// kernel's source, which may carry any bytes in its comments).
detail::json::Value text_to_json(std::string_view s) {
  if (detail::json::valid_utf8_prefix(s) == s.size()) return detail::json::Value(s);
  std::string hex;
  hex.reserve(2 * s.size());
  for (char c : s) hex += fmt::format("{:02x}", static_cast<unsigned char>(c));
  return detail::json::Value::Object{{"hex", std::move(hex)}};
}

std::optional<std::string> text_from_json(const json& j) {
  if (j.is_string()) return j.get<std::string>();
  if (!j.is_object() || !j.contains("hex") || !j["hex"].is_string()) return std::nullopt;
  const std::string& hex = j["hex"].get_ref<const std::string&>();
  if (hex.size() % 2 != 0) return std::nullopt;
  std::string out;
  out.reserve(hex.size() / 2);
  for (size_t k = 0; k < hex.size(); k += 2) {
    int byte = 0;
    for (size_t d = k; d < k + 2; ++d) {
      const char c = hex[d];
      const int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
      if (v < 0) return std::nullopt;
      byte = byte * 16 + v;
    }
    out += static_cast<char>(byte);
  }
  return out;
}

// The entry described by `meta`, whose image is still to be read; nullopt unless every field is
// present with its type and the key is `key`.
std::optional<CacheEntry> entry_from_metadata(const json& meta, std::string_view key,
                                              uint64_t* image_size) {
  if (!meta.is_object()) return std::nullopt;
  const auto version = meta.find("version");
  if (version == meta.end() || !version->is_number_integer() ||
      version->get<int64_t>() != kFormatVersion) {
    return std::nullopt;
  }
  const auto key_bytes = meta.find("key_bytes");
  if (key_bytes == meta.end() || !key_bytes->is_number_unsigned() ||
      key_bytes->get<uint64_t>() != key.size()) {
    return std::nullopt;
  }

  const auto ptx = meta.find("ptx");
  const auto size = meta.find("image_size");
  const auto names = meta.find("lowered_names");
  const auto log = meta.find("log");
  const auto ms = meta.find("compile_ms");
  if (ptx == meta.end() || !ptx->is_boolean() || size == meta.end() ||
      !size->is_number_unsigned() || names == meta.end() || !names->is_array() ||
      log == meta.end() || ms == meta.end() || !ms->is_number()) {
    return std::nullopt;
  }
  CacheEntry e;
  e.ptx = ptx->get<bool>();
  e.compile_ms = ms->get<double>();
  const std::optional<std::string> log_text = text_from_json(*log);
  if (!log_text) return std::nullopt;
  e.log = *log_text;
  for (const json& pair : *names) {
    if (!pair.is_array() || pair.size() != 2) return std::nullopt;
    std::optional<std::string> expr = text_from_json(pair[0]);
    std::optional<std::string> lowered = text_from_json(pair[1]);
    if (!expr || !lowered) return std::nullopt;
    e.lowered_names.emplace_back(std::move(*expr), std::move(*lowered));
  }
  *image_size = size->get<uint64_t>();
  return e;
}

std::string errno_text(int err) {
  return std::error_code(err, std::generic_category()).message();
}

// Writes all of `data` to `fd`, across partial writes and interruptions.
bool write_all(int fd, const char* data, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// A name no other writer (another thread, another process) picks at the same time.
std::string temporary_name(const std::string& final_name) {
  static std::atomic<uint64_t> counter{0};
  const uint64_t n = counter.fetch_add(1);
  const auto now =
      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  const uint64_t noise =
      now ^ (std::hash<std::thread::id>{}(std::this_thread::get_id()) * 0x9E3779B97F4A7C15ull);
  return fmt::format(".{}.tmp.{}.{}.{:016x}", final_name, static_cast<long>(::getpid()), n, noise);
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A writer's temporary file (see temporary_name).
bool is_temporary(std::string_view name) {
  return !name.empty() && name[0] == '.' && name.find(".kernel.tmp.") != std::string_view::npos;
}

// A writer that has not renamed its temporary file within this time has died.
constexpr auto kStaleTemporary = std::chrono::hours(1);

}  // namespace

uint64_t cache_max_bytes_from_environment() {
  const char* env = std::getenv("CULUA_CACHE_MAX_BYTES");
  if (!env || !*env) return kDefaultCacheMaxBytes;
  try {
    return parse_byte_size(env);
  } catch (const Error& e) {
    fail(ErrorKind::Value, "CULUA_CACHE_MAX_BYTES: {}", e.what());
  }
}

std::string KernelCache::default_directory() {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v != nullptr ? std::string(v) : std::string();
  };
  if (std::string dir = env("CULUA_CACHE_DIR"); !dir.empty()) return dir;
  if (std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty()) return xdg + "/culua";
  if (std::string home = env("HOME"); !home.empty()) return home + "/.cache/culua";
  return {};
}

KernelCache::KernelCache(std::string directory, uint64_t max_bytes)
    : directory_(std::move(directory)), max_bytes_(max_bytes) {}

std::string KernelCache::path_for(std::string_view key) const {
  if (!enabled()) return {};
  return (fs::path(directory_) / (hash_hex(key) + ".kernel")).string();
}

std::optional<CacheEntry> KernelCache::load(std::string_view key, const std::string& path) const {
  if (!enabled()) return std::nullopt;
  try {
    const std::string file = path.empty() ? path_for(key) : path;
    std::ifstream in(file, std::ios::binary);
    if (!in) return std::nullopt;
    in.seekg(0, std::ios::end);
    const std::streamoff file_size = in.tellg();
    if (file_size <= 0) return std::nullopt;
    in.seekg(0, std::ios::beg);

    // The metadata line, read in chunks so that a file without a newline costs a bounded read.
    std::string line;
    char chunk[4096];
    size_t newline = std::string::npos;
    while (newline == std::string::npos) {
      in.read(chunk, sizeof chunk);
      const std::streamsize got = in.gcount();
      if (got <= 0) return std::nullopt;
      const size_t before = line.size();
      line.append(chunk, static_cast<size_t>(got));
      const size_t at = line.find('\n', before);
      if (at != std::string::npos) newline = at;
      if (newline == std::string::npos && line.size() > kMaxMetadataBytes) return std::nullopt;
    }
    const json meta = json::parse(line.begin(), line.begin() + static_cast<std::ptrdiff_t>(newline),
                                  nullptr, /*allow_exceptions=*/false);
    if (meta.is_discarded()) return std::nullopt;
    uint64_t image_size = 0;
    std::optional<CacheEntry> entry = entry_from_metadata(meta, key, &image_size);
    if (!entry) return std::nullopt;
    const uint64_t body = static_cast<uint64_t>(file_size) - (newline + 1);
    if (image_size > body || body - image_size != key.size()) return std::nullopt;

    // The key and the image, after the metadata line (part of them already read with it).
    std::vector<char> rest(static_cast<size_t>(body));
    const size_t buffered = std::min(line.size() - (newline + 1), rest.size());
    if (buffered > 0) std::memcpy(rest.data(), line.data() + newline + 1, buffered);
    if (rest.size() > buffered) {
      in.read(rest.data() + buffered, static_cast<std::streamsize>(rest.size() - buffered));
      if (static_cast<size_t>(in.gcount()) != rest.size() - buffered) return std::nullopt;
    }
    if (!key.empty() && std::memcmp(rest.data(), key.data(), key.size()) != 0) return std::nullopt;
    entry->image.assign(rest.begin() + static_cast<std::ptrdiff_t>(key.size()), rest.end());
    // The last use, for trim; a read-only cache simply keeps the old time.
    std::error_code ec;
    fs::last_write_time(file, fs::file_time_type::clock::now(), ec);
    return entry;
  } catch (const std::exception&) {
    return std::nullopt;  // out of memory on a huge claimed size, or a stream error
  }
}

bool KernelCache::store(std::string_view key, const CacheEntry& entry, std::string* why) const {
  auto failed = [&](std::string reason) {
    if (why != nullptr) *why = std::move(reason);
    return false;
  };
  if (!enabled()) return failed("the kernel cache is disabled");
  try {
    std::error_code ec;
    fs::create_directories(directory_, ec);
    if (ec) return failed(fmt::format("cannot create {}: {}", directory_, ec.message()));
    if (!fs::is_directory(directory_, ec)) {
      return failed(fmt::format("cannot create {}: not a directory", directory_));
    }

    detail::json::Value::List names;
    for (const auto& [expr, lowered] : entry.lowered_names) {
      names.emplace_back(detail::json::Value::List{text_to_json(expr), text_to_json(lowered)});
    }
    const detail::json::Value meta(
        detail::json::Value::Object{{"version", kFormatVersion},
                                    {"key_bytes", static_cast<uint64_t>(key.size())},
                                    {"ptx", entry.ptx},
                                    {"lowered_names", std::move(names)},
                                    {"log", text_to_json(entry.log)},
                                    {"compile_ms", entry.compile_ms},
                                    {"image_size", static_cast<uint64_t>(entry.image.size())}});
    std::string head = detail::json::write(meta);
    head += '\n';

    const fs::path final_path = path_for(key);
    const fs::path temp_path =
        fs::path(directory_) / temporary_name(final_path.filename().string());
    const int fd = ::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
      return failed(fmt::format("cannot write {}: {}", temp_path.string(), errno_text(errno)));
    }
    const bool written = write_all(fd, head.data(), head.size()) &&
                         write_all(fd, key.data(), key.size()) &&
                         write_all(fd, entry.image.data(), entry.image.size());
    const int write_errno = errno;
    const bool closed = ::close(fd) == 0;
    if (!written || !closed) {
      const int err = written ? errno : write_errno;
      fs::remove(temp_path, ec);
      return failed(fmt::format("cannot write {}: {}", temp_path.string(), errno_text(err)));
    }
    fs::rename(temp_path, final_path, ec);
    if (ec) {
      std::error_code ignored;
      fs::remove(temp_path, ignored);
      return failed(fmt::format("cannot rename {} to {}: {}", temp_path.string(),
                                final_path.string(), ec.message()));
    }
    trim(final_path.string());
    return true;
  } catch (const std::exception& e) {
    return failed(fmt::format("cannot store the kernel in {}: {}", directory_, e.what()));
  }
}

bool KernelCache::remove(std::string_view key) const {
  if (!enabled()) return false;
  std::error_code ec;
  return fs::remove(path_for(key), ec) && !ec;
}

size_t KernelCache::trim(const std::string& keep) const {
  if (!enabled()) return 0;
  struct File {
    fs::file_time_type mtime;
    uintmax_t size;
    fs::path path;
  };
  size_t removed = 0;
  try {
    const auto now = fs::file_time_type::clock::now();
    std::vector<File> files;
    uintmax_t total = 0;
    std::error_code ec;
    fs::directory_iterator it(directory_, ec);
    for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
      // Any of these may fail because another process removed the file meanwhile: skip it.
      std::error_code file_ec;
      if (!it->is_regular_file(file_ec) || file_ec) continue;
      const std::string name = it->path().filename().string();
      const bool temporary = is_temporary(name);
      if (!temporary && (name[0] == '.' || !ends_with(name, ".kernel"))) continue;
      const fs::file_time_type mtime = it->last_write_time(file_ec);
      if (file_ec) continue;
      if (temporary) {
        if (now - mtime > kStaleTemporary) fs::remove(it->path(), file_ec);
        continue;
      }
      const uintmax_t size = it->file_size(file_ec);
      if (file_ec) continue;
      files.push_back(File{mtime, size, it->path()});
      total += size;
    }
    if (max_bytes_ == 0 || total <= max_bytes_) return 0;

    std::sort(files.begin(), files.end(), [](const File& a, const File& b) {
      return a.mtime != b.mtime ? a.mtime < b.mtime : a.path < b.path;
    });
    const fs::path kept = fs::path(keep).filename();  // every file listed is in directory_
    for (const File& f : files) {
      if (total <= max_bytes_) break;
      if (!kept.empty() && f.path.filename() == kept) continue;
      std::error_code remove_ec;
      const bool gone = fs::remove(f.path, remove_ec);
      // Removed here, or already by another process: either way its bytes are no longer there.
      if (gone || !remove_ec) total -= f.size;
      if (gone) ++removed;
    }
  } catch (const std::exception&) {
    // Out of memory listing a huge directory: the cap is best effort, the entry is stored.
  }
  return removed;
}

std::string hash_hex(std::string_view text) {
  uint64_t h = 14695981039346656037ull;
  for (char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return fmt::format("{:016x}", h);
}

std::string fingerprint_directories(const std::vector<std::string>& dirs) {
  constexpr size_t kMaxFiles = 10000;
  std::vector<std::string> lines;
  size_t files = 0;
  bool truncated = false;
  for (const std::string& dir : dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
      lines.push_back(dir + " (missing)");
      continue;
    }
    fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
    for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      std::error_code file_ec;
      if (!it->is_regular_file(file_ec) || file_ec) continue;
      const uintmax_t size = it->file_size(file_ec);
      if (file_ec) continue;
      const fs::file_time_type mtime = it->last_write_time(file_ec);
      if (file_ec) continue;
      if (files == kMaxFiles) {
        truncated = true;
        break;
      }
      ++files;
      const auto ns =
          std::chrono::duration_cast<std::chrono::nanoseconds>(mtime.time_since_epoch()).count();
      lines.push_back(fmt::format("{} {} {}", it->path().string(), size, ns));
    }
    if (truncated) break;
  }
  std::sort(lines.begin(), lines.end());
  if (truncated) lines.push_back(fmt::format("(more than {} files)", kMaxFiles));
  std::string out;
  for (const std::string& line : lines) {
    out += line;
    out += '\n';
  }
  return out;
}

}  // namespace culua::detail::rtc
