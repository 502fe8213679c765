// The process's stdout and stderr redirected into pipes, with one reader thread per pipe that
// hands what it reads to the kernel, which publishes it as stream messages (every byte: Lua's
// print, io.write, C++'s warnings, the profiler's tables).
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <utility>

namespace culua::detail::jupyter {

class OutputCapture {
 public:
  // Called on a reader thread with "stdout" or "stderr" and the bytes read.
  using Publish = std::function<void(const char* name, const std::string& text)>;

  // The readers end once `stop` is set and their pipe is empty.
  OutputCapture(Publish publish, std::atomic<bool>& stop)
      : publish_(std::move(publish)), stop_(stop) {}

  // Redirects descriptors 1 and 2 into the pipes and starts the readers; throws Error(Value)
  // when a pipe cannot be made.
  void start();
  // Waits until everything written to stdout and stderr so far was published.
  void drain();
  // Drains, sets the stop flag, joins the readers and gives 1 and 2 back their descriptors.
  void stop();

 private:
  struct Stream {
    int fd = -1;  // 1 or 2
    int read_end = -1;
    int saved = -1;  // the descriptor it replaced, restored at the end
    const char* name = "";
    std::atomic<bool> busy{false};
    std::thread reader;
  };

  void read_stream(Stream& st);

  Publish publish_;
  std::atomic<bool>& stop_;
  Stream out_, err_;
};

}  // namespace culua::detail::jupyter
