// Isolated sweep points (cu.sweep{isolate = true}): each point runs in a child process that runs
// the whole script again (CUDA cannot be used in a fork of a process that initialized it). The
// parent starts the child with the command line of the run and names, in the environment, the
// sweep (its name and which sweep of that name it is), the point, a journal of the sweeps that
// completed before it and the file for the point's result. In the child, the journaled sweeps
// return their results at once, the named sweep runs the one point, writes its result and the
// process ends. The parent reads the result, or reports how the child ended: a crash (signal),
// an exit without a result, a timeout (the child's process group is killed).
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "measure/results.hpp"

namespace culua::detail::measure {

// The environment of a child: the target sweep's name, which sweep of that name it is (1 for the
// first cu.sweep call with that name in the process), the point (1-based, as results[i]), the
// journal file and the result file.
inline constexpr char kIsolateSweepVar[] = "CULUA_ISOLATE_SWEEP";
inline constexpr char kIsolateOccurrenceVar[] = "CULUA_ISOLATE_OCCURRENCE";
inline constexpr char kIsolatePointVar[] = "CULUA_ISOLATE_POINT";
inline constexpr char kIsolateJournalVar[] = "CULUA_ISOLATE_JOURNAL";
inline constexpr char kIsolateResultVar[] = "CULUA_ISOLATE_RESULT";

// What a child process is asked to do. Empty (occurrence 0) in every other process.
struct PointChild {
  std::string sweep;
  int occurrence = 0;
  size_t point = 0;  // 1-based
  std::string journal, result;
  bool active() const { return occurrence > 0; }
};

// Reads the child's variables and removes them from the environment (processes the script starts
// are not children). Raises culua::detail::Error when some are set but not all, or a number is
// not one. Without any of them: an inactive PointChild.
PointChild take_point_child_environment();

// A completed sweep as the journal keeps it: its name, which sweep of that name it was, the
// number of sweeps of each name started when it completed, and its points.
struct JournalEntry {
  std::string name;
  int occurrence = 0;
  std::map<std::string, int> counts;
  Sweep sweep;
};

// The journal file's text (a culua result file whose run member "journal" lists the entries'
// keys in the order of its sweeps) and back; parse raises naming `what`.
std::string journal_json(const std::vector<JournalEntry>& entries);
std::vector<JournalEntry> parse_journal(std::string_view text, std::string_view what);

// A folder made for one isolated sweep (mkdtemp under $TMPDIR or /tmp), removed with its files
// when the object goes.
class TempFolder {
 public:
  explicit TempFolder(const char* prefix);
  ~TempFolder();
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Writes `content` to `path` through a temporary file renamed into place (a reader never sees
// half a file). Raises naming the path.
void write_file_atomically(const std::string& path, std::string_view content);

struct ChildRun {
  std::vector<std::string> argv;  // argv[0] is what the child sees as its name
  std::string executable;         // the file run (/proc/self/exe: this very program)
  std::vector<std::pair<std::string, std::string>> environment;  // set beside this process's
  double timeout_s = 0;                                          // 0: no limit
  std::string result_path;  // read when the child exits (absent: no result)
};

struct ChildOutcome {
  enum class End { Exited, Signaled, TimedOut, Interrupted };
  End end = End::Exited;
  int code = 0;             // the exit status (Exited) or the signal (Signaled)
  bool has_result = false;  // the result file was written
  std::string result;       // its bytes
  std::string output;       // the last lines (up to 5) it wrote on stderr, before a traceback
  double seconds = 0;       // wall time from start to end
};

// Starts the child in a process group of its own (stdin and stdout on /dev/null, stderr to a pipe
// that the parent reads), waits for it, the timeout or an interruption (the interrupt flag in
// scope: Ctrl-C), killing the group in the last two cases and once the child has ended (what it
// left running). Raises culua::detail::Error when the child cannot be started.
ChildOutcome run_child(const ChildRun& run);

// Why a child that gave no result failed: "crashed: signal 11 (Segmentation fault)", "exited with
// status 3 without a result", "timed out after 2 s (killed)", then its last output lines after a
// newline.
std::string describe_child_failure(const ChildOutcome& outcome, double timeout_s);

// The last `lines` non-empty lines of `text` (each cut at 300 bytes), joined by newlines.
std::string last_lines(std::string_view text, size_t lines);

}  // namespace culua::detail::measure
