#include "core/runtime/sandbox.hpp"

#include <cctype>
#include <cstdint>
#include <filesystem>
#include <string_view>
#include <vector>

#include "core/base/error.hpp"

namespace culua::detail {

namespace {

thread_local const FilePolicy* t_policy = nullptr;

// The path made absolute and normal, so that "./out.json" and "out.json" are one file.
std::string normal(const std::string& path) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::absolute(path, ec);
  if (ec) return path;
  return p.lexically_normal().string();
}

std::string allowed_list(const FilePolicy& p) {
  if (p.writable.empty()) return "none is";
  std::string s;
  for (const auto& w : p.writable) s += (s.empty() ? "'" : ", '") + w + "'";
  return s + (p.writable.size() == 1 ? " is" : " are");
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// `source` as the preprocessor reads it, for the checks below: the trigraph ??/ (a backslash)
// and ??= (#) replaced, lines spliced (a backslash, optional blanks, a newline: "#inc\<newline>
// lude" is #include), universal character names of ASCII characters decoded (\u0069 is i). Each
// is done whether or not the compiler's mode would do it: the check may refuse more, never less.
std::string as_preprocessed(const std::string& source) {
  std::string t;
  t.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '?' && i + 2 < source.size() && source[i + 1] == '?' &&
        (source[i + 2] == '/' || source[i + 2] == '=')) {
      t += source[i + 2] == '/' ? '\\' : '#';
      i += 2;
    } else {
      t += source[i];
    }
  }
  std::string out;
  out.reserve(t.size());
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] == '\\') {
      size_t j = i + 1;
      while (j < t.size() && (t[j] == ' ' || t[j] == '\t' || t[j] == '\r')) ++j;
      if (j < t.size() && t[j] == '\n') {  // a splice: the line goes on
        i = j;
        continue;
      }
      const size_t digits = i + 1 < t.size() ? (t[i + 1] == 'u' ? 4 : t[i + 1] == 'U' ? 8 : 0) : 0;
      if (digits > 0 && i + 1 + digits < t.size()) {
        uint32_t code = 0;
        bool ok = true;
        for (size_t k = 0; ok && k < digits; ++k) {
          const int h = hex_value(t[i + 2 + k]);
          ok = h >= 0;
          code = code * 16 + static_cast<uint32_t>(ok ? h : 0);
        }
        if (ok && code > 0 && code < 0x80) {
          out += static_cast<char>(code);
          i += 1 + digits;
          continue;
        }
      }
    }
    out += t[i];
  }
  return out;
}

// The names of the directives of `source` (preprocessed, above): the word after a # or %: that
// starts a line, blanks and comments skipped.
std::vector<std::string> directives(const std::string& source) {
  std::vector<std::string> names;
  size_t i = 0;
  const auto skip_blanks = [&] {
    for (;;) {
      while (i < source.size() && (source[i] == ' ' || source[i] == '\t' || source[i] == '\r' ||
                                   source[i] == '\f' || source[i] == '\v')) {
        ++i;
      }
      if (source.compare(i, 2, "/*") == 0) {
        const size_t end = source.find("*/", i + 2);
        i = end == std::string::npos ? source.size() : end + 2;
        continue;
      }
      return;
    }
  };
  while (i < source.size()) {
    skip_blanks();
    if (i < source.size() && (source[i] == '#' || source.compare(i, 2, "%:") == 0)) {
      i += source[i] == '#' ? 1 : 2;
      skip_blanks();
      size_t j = i;
      while (j < source.size() &&
             (std::isalnum(static_cast<unsigned char>(source[j])) || source[j] == '_')) {
        ++j;
      }
      names.emplace_back(source, i, j - i);
      i = j;
    }
    const size_t end = source.find('\n', i);
    i = end == std::string::npos ? source.size() : end + 1;
  }
  return names;
}

// `source` without the lines that include one of the allowed CUDA headers.
std::string without_cuda_headers(const std::string& source) {
  static constexpr std::string_view kHeaders[] = {"<cuda_fp16.h>", "<cuda_bf16.h>",
                                                  "<cuda/std/complex>"};
  std::string out;
  size_t start = 0;
  while (start < source.size()) {
    size_t end = source.find('\n', start);
    if (end == std::string::npos) end = source.size();
    std::string_view line(source.data() + start, end - start);
    auto trim = [](std::string_view v) {
      while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
      while (!v.empty() && (v.back() == ' ' || v.back() == '\t' || v.back() == '\r')) {
        v.remove_suffix(1);
      }
      return v;
    };
    std::string_view t = trim(line);
    bool allowed = false;
    if (!t.empty() && t.front() == '#') {
      t = trim(t.substr(1));
      if (t.substr(0, 7) == "include") {
        t = trim(t.substr(7));
        for (std::string_view h : kHeaders) allowed = allowed || t == h;
      }
    }
    if (!allowed) out.append(line).append(1, '\n');
    start = end + 1;
  }
  return out;
}

}  // namespace

std::string format_limit_bytes(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"GiB", "MiB", "KiB"};
  for (int i = 0; i < 3; ++i) {
    const uint64_t unit = uint64_t{1} << (30 - 10 * i);
    if (bytes >= unit && bytes % unit == 0) return fmt::format("{} {}", bytes / unit, kUnits[i]);
  }
  return fmt::format("{} bytes", bytes);
}

bool FilePolicy::allows_write(const std::string& path) const {
  if (path.empty()) return false;
  const std::string n = normal(path);
  for (const auto& w : writable) {
    if (w == path || normal(w) == n) return true;
  }
  return false;
}

void set_file_policy(const FilePolicy* policy) noexcept {
  t_policy = policy;
}

const FilePolicy* current_file_policy() noexcept {
  return t_policy;
}

void check_file_write(const std::string& path) {
  if (!t_policy || t_policy->allows_write(path)) return;
  fail(ErrorKind::Limit, "the sandbox does not allow writing '{}' (only {} allowed)", path,
       allowed_list(*t_policy));
}

void check_file_read(const std::string& path) {
  if (!t_policy) return;
  fail(ErrorKind::Limit, "the sandbox does not allow reading '{}'", path);
}

void check_sandboxed_compile(RtcRequest& request) {
  if (!t_policy) return;
  // "include" anywhere (#include, %:include, __has_include, a macro that pastes it together needs
  // the word too): the preprocessor would read a file of the machine. The CUDA headers that
  // culua's own kernel templates include are allowed, each alone on its line.
  // Checked as the preprocessor reads the source (line splices, trigraphs, universal character
  // names undone): "#inc\<newline>lude" is an #include. #embed and #import read files too.
  const std::string source = as_preprocessed(request.source);
  if (without_cuda_headers(source).find("include") != std::string::npos) {
    fail(ErrorKind::Limit,
         "the sandbox does not allow 'include' in kernel source (no file of the machine may be "
         "read by the compiler)");
  }
  for (const std::string& d : directives(source)) {
    if (d == "embed" || d == "import") {
      fail(ErrorKind::Limit,
           "the sandbox does not allow '#{}' in kernel source (no file of the machine may be read "
           "by the compiler)",
           d);
    }
  }
  if (source.find("__has_embed") != std::string::npos) {
    fail(ErrorKind::Limit,
         "the sandbox does not allow '__has_embed' in kernel source (no file of the machine may "
         "be read by the compiler)");
  }
  if (!request.include_paths.empty()) {
    fail(ErrorKind::Limit, "the sandbox does not allow include paths (option 'include_paths')");
  }
  static constexpr std::string_view kAllowed[] = {"-D",
                                                  "--define-macro",
                                                  "-U",
                                                  "--undefine-macro",
                                                  "-O",
                                                  "-std=",
                                                  "--std=",
                                                  "-arch=",
                                                  "--gpu-architecture=",
                                                  "-use_fast_math",
                                                  "--use_fast_math",
                                                  "-ftz=",
                                                  "--ftz=",
                                                  "-prec-div=",
                                                  "--prec-div=",
                                                  "-prec-sqrt=",
                                                  "--prec-sqrt=",
                                                  "-fmad=",
                                                  "--fmad=",
                                                  "-lineinfo",
                                                  "--generate-line-info",
                                                  "-G",
                                                  "--device-debug",
                                                  "-maxrregcount=",
                                                  "--maxrregcount=",
                                                  "-restrict",
                                                  "--restrict",
                                                  "-w",
                                                  "--disable-warnings",
                                                  "-default-device",
                                                  "--device-as-default-execution-space",
                                                  "-extra-device-vectorization",
                                                  "--extra-device-vectorization"};
  for (const std::string& o : request.options) {
    bool ok = false;
    for (std::string_view a : kAllowed) {
      // A prefix that ends in '=' or is a one-letter flag takes a value; the others stand alone.
      const bool takes_value = a.back() == '=' || a == "-D" || a == "-U" || a == "-O";
      if (takes_value ? std::string_view(o).substr(0, a.size()) == a : o == a) ok = true;
    }
    if (!ok || o.find("include") != std::string::npos) {
      fail(ErrorKind::Limit,
           "the sandbox does not allow the compiler option '{}' (allowed: macros -D/-U, -O, -std=, "
           "-arch=, math modes, -lineinfo, -G, -maxrregcount=, -w)",
           o);
    }
  }
  request.use_cache = false;
}

}  // namespace culua::detail
