#include "measure/isolate.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "core/base/error.hpp"
#include "core/base/interrupt.hpp"

extern char** environ;

namespace culua::detail::measure {

namespace {

std::string environment_value(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

template <class T>
T parse_count(const std::string& text, const char* name) {
  T value{};
  const char* end = text.data() + text.size();
  const auto [at, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || at != end || value < 1) {
    fail(ErrorKind::Value, "{} must be a number from 1 up, got '{}'", name, text);
  }
  return value;
}

// The output kept of a child: its last bytes.
constexpr size_t kKeptOutput = 16384;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Ends the child's process group and reaps the child.
int kill_and_reap(pid_t pid) {
  ::kill(-pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

}  // namespace

PointChild take_point_child_environment() {
  const char* names[] = {kIsolateSweepVar, kIsolateOccurrenceVar, kIsolatePointVar,
                         kIsolateJournalVar, kIsolateResultVar};
  std::string values[5];
  int set = 0;
  for (int i = 0; i < 5; ++i) {
    if (std::getenv(names[i])) ++set;
    values[i] = environment_value(names[i]);
    ::unsetenv(names[i]);
  }
  PointChild child;
  if (set == 0) return child;
  if (set != 5) {
    fail(ErrorKind::Value,
         "{}, {}, {}, {} and {} are set by cu.sweep{{isolate = true}} for its child processes: "
         "all of them or none",
         names[0], names[1], names[2], names[3], names[4]);
  }
  child.sweep = values[0];
  child.occurrence = parse_count<int>(values[1], names[1]);
  child.point = parse_count<size_t>(values[2], names[2]);
  child.journal = values[3];
  child.result = values[4];
  return child;
}

std::string journal_json(const std::vector<JournalEntry>& entries) {
  ResultFile file;
  Value::List keys;
  for (const JournalEntry& e : entries) {
    Value::Object counts;
    for (const auto& [name, n] : e.counts) counts.emplace_back(name, n);
    keys.emplace_back(Value::Object{
        {"name", e.name}, {"occurrence", e.occurrence}, {"counts", std::move(counts)}});
    file.sweeps.push_back(e.sweep);
  }
  file.run.emplace_back("journal", std::move(keys));
  return results_json(file);
}

std::vector<JournalEntry> parse_journal(std::string_view text, std::string_view what) {
  ResultFile file = parse_results(text, what);
  const Value* keys = find(file.run, "journal");
  if (!keys || !keys->is_list() || keys->as_list().size() != file.sweeps.size()) {
    fail(ErrorKind::Value, "{}: not a sweep journal (its \"journal\" does not list its sweeps)",
         what);
  }
  std::vector<JournalEntry> entries;
  for (size_t i = 0; i < file.sweeps.size(); ++i) {
    const Value& key = keys->as_list()[i];
    const Value* name = key.get("name");
    const Value* occurrence = key.get("occurrence");
    const Value* counts = key.get("counts");
    if (!name || !name->is_string() || !occurrence || !occurrence->is_integer() || !counts ||
        !(counts->is_object() || (counts->is_list() && counts->as_list().empty()))) {
      fail(ErrorKind::Value, "{}: journal entry {} is not {{name, occurrence, counts}}", what,
           i + 1);
    }
    JournalEntry e;
    e.name = name->as_string();
    e.occurrence = static_cast<int>(occurrence->as_integer());
    if (counts->is_object()) {
      for (const auto& [k, v] : counts->as_object()) {
        if (v.is_integer()) e.counts[k] = static_cast<int>(v.as_integer());
      }
    }
    e.sweep = std::move(file.sweeps[i]);
    entries.push_back(std::move(e));
  }
  return entries;
}

TempFolder::TempFolder(const char* prefix) {
  std::string base = environment_value("TMPDIR");
  if (base.empty()) base = "/tmp";
  std::string templ = base + "/" + prefix + "XXXXXX";
  if (!::mkdtemp(templ.data())) {
    fail(ErrorKind::Value, "cannot make a temporary folder in {}: {}", base, std::strerror(errno));
  }
  path_ = std::move(templ);
}

TempFolder::~TempFolder() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);  // nothing to do about a failure here
}

void write_file_atomically(const std::string& path, std::string_view content) {
  const std::string temp = path + ".part";
  write_text_file(temp, content);
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    fail(ErrorKind::Value, "cannot write {}: {}", path, std::strerror(errno));
  }
}

ChildOutcome run_child(const ChildRun& run) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    fail(ErrorKind::Value, "cannot start a child process: pipe: {}", std::strerror(errno));
  }
  // The environment: this process's, less the child variables of an earlier run, plus ours.
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string_view entry = *e;
    bool replaced = entry.substr(0, 14) == "CULUA_ISOLATE_";
    for (const auto& [name, value] : run.environment) {
      if (entry.size() > name.size() && entry.substr(0, name.size()) == name &&
          entry[name.size()] == '=')
        replaced = true;
    }
    if (!replaced) env.emplace_back(entry);
  }
  for (const auto& [name, value] : run.environment) env.push_back(name + "=" + value);
  std::vector<char*> envp, argv;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = run.argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int sig : {SIGINT, SIGTERM, SIGPIPE, SIGSEGV, SIGQUIT}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setpgroup(&attr, 0);  // a group of its own: a timeout kills all of it
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = 0;
  const auto t0 = std::chrono::steady_clock::now();
  const int spawned =
      ::posix_spawn(&pid, run.executable.c_str(), &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(pipe_fds[1]);
  if (spawned != 0) {
    ::close(pipe_fds[0]);
    fail(ErrorKind::Value, "cannot start a child process ({}): {}", run.executable,
         std::strerror(spawned));
  }
  const int out = pipe_fds[0];
  ::fcntl(out, F_SETFL, O_NONBLOCK);

  ChildOutcome outcome;
  std::string captured;
  bool open = true;
  const auto drain = [&] {
    char buffer[4096];
    while (open) {
      const ssize_t n = ::read(out, buffer, sizeof buffer);
      if (n > 0) {
        captured.append(buffer, static_cast<size_t>(n));
        if (captured.size() > 2 * kKeptOutput) captured.erase(0, captured.size() - kKeptOutput);
      } else if (n == 0) {
        open = false;
      } else if (errno != EINTR) {
        break;  // EAGAIN: nothing more now
      }
    }
  };
  int status = 0;
  const InterruptFlag* flag = current_interrupt_flag();
  // The child's end wakes the poll below through a pidfd (Linux 5.3); without one the loop looks
  // every 2 ms once the pipe is closed.
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  while (true) {
    if (flag && flag->requested()) {
      kill_and_reap(pid);
      outcome.end = ChildOutcome::End::Interrupted;
      break;
    }
    int wait_ms = open || pidfd >= 0 ? 100 : 2;  // the interrupt flag is looked at this often
    if (run.timeout_s > 0) {
      const double left = run.timeout_s - seconds_since(t0);
      if (left <= 0) {
        kill_and_reap(pid);
        outcome.end = ChildOutcome::End::TimedOut;
        break;
      }
      wait_ms = std::min(wait_ms, static_cast<int>(left * 1000) + 1);
    }
    pollfd fds[2];
    nfds_t count = 0;
    if (open) fds[count++] = {out, POLLIN, 0};
    if (pidfd >= 0) fds[count++] = {pidfd, POLLIN, 0};
    ::poll(count ? fds : nullptr, count, wait_ms);
    if (open) drain();
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) {
      ::kill(-pid, SIGKILL);  // what the child left running in its group
      drain();
      outcome.end = WIFSIGNALED(status) ? ChildOutcome::End::Signaled : ChildOutcome::End::Exited;
      outcome.code = WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status);
      break;
    }
  }
  if (pidfd >= 0) ::close(pidfd);
  drain();
  ::close(out);
  outcome.seconds = seconds_since(t0);
  // A Lua error's message matters more than its traceback: the lines end before the traceback.
  std::string_view shown = captured;
  if (const size_t tb = shown.rfind("\nstack traceback:\n"); tb != std::string_view::npos) {
    shown = shown.substr(0, tb);
  }
  outcome.output = last_lines(shown, 5);
  if (!run.result_path.empty() &&
      (outcome.end == ChildOutcome::End::Exited || outcome.end == ChildOutcome::End::Signaled)) {
    struct stat st {};
    if (::stat(run.result_path.c_str(), &st) == 0) {
      outcome.result = read_text_file(run.result_path);
      outcome.has_result = true;
    }
  }
  return outcome;
}

std::string describe_child_failure(const ChildOutcome& outcome, double timeout_s) {
  std::string why;
  switch (outcome.end) {
    case ChildOutcome::End::Signaled: {
      const char* name = ::strsignal(outcome.code);
      why = fmt::format("crashed: signal {} ({})", outcome.code, name ? name : "unknown");
      if (outcome.code == SIGKILL) why += " (killed from outside: out of memory?)";
      break;
    }
    case ChildOutcome::End::Exited:
      why = fmt::format("exited with status {} without a result", outcome.code);
      break;
    case ChildOutcome::End::TimedOut:
      why = fmt::format("timed out after {:g} s (killed)", timeout_s);
      break;
    case ChildOutcome::End::Interrupted:
      why = "interrupted";
      break;
  }
  if (!outcome.output.empty()) why += "\n" + outcome.output;
  return why;
}

std::string last_lines(std::string_view text, size_t lines) {
  std::vector<std::string_view> kept;
  size_t end = text.size();
  while (end > 0 && kept.size() < lines) {
    size_t start = text.rfind('\n', end - 1);
    start = start == std::string_view::npos ? 0 : start + 1;
    std::string_view line = text.substr(start, end - start);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (!line.empty()) kept.push_back(line.substr(0, 300));
    if (start == 0) break;
    end = start - 1;
  }
  std::string out;
  for (size_t i = kept.size(); i-- > 0;) {
    out.append(kept[i]);
    if (i) out += '\n';
  }
  return out;
}

}  // namespace culua::detail::measure
