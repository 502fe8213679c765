// The capture of stdout and stderr: the pipes that replace descriptors 1 and 2, their reader
// threads, and the wait until what was written so far is published.
#include "jupyter/output_capture.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "core/base/error.hpp"

namespace culua::detail::jupyter {

void OutputCapture::start() {
  std::fflush(stdout);
  std::fflush(stderr);
  for (Stream* st : {&out_, &err_}) {
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) fail(ErrorKind::Value, "cannot make a pipe for the output");
    st->fd = st == &out_ ? 1 : 2;
    st->name = st == &out_ ? "stdout" : "stderr";
    st->saved = ::dup(st->fd);
    ::dup2(p[1], st->fd);
    ::close(p[1]);
    st->read_end = p[0];
    st->reader = std::thread([this, st] { read_stream(*st); });
  }
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
}

void OutputCapture::read_stream(Stream& st) {
  char buf[65536];
  for (;;) {
    pollfd pfd{st.read_end, POLLIN, 0};
    if (::poll(&pfd, 1, 200) <= 0) {
      if (stop_ && !(pfd.revents & POLLIN)) {
        int n = 0;
        if (::ioctl(st.read_end, FIONREAD, &n) != 0 || n == 0) return;
      }
      continue;
    }
    st.busy = true;
    const ssize_t n = ::read(st.read_end, buf, sizeof buf);
    if (n <= 0) {
      st.busy = false;
      return;
    }
    publish_(st.name, std::string(buf, static_cast<size_t>(n)));
    st.busy = false;
  }
}

void OutputCapture::drain() {
  std::fflush(stdout);
  std::fflush(stderr);
  for (Stream* st : {&out_, &err_}) {
    for (int i = 0; i < 20000; ++i) {
      int n = 0;
      if (::ioctl(st->read_end, FIONREAD, &n) != 0) break;
      if (n == 0 && !st->busy) break;
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }
}

void OutputCapture::stop() {
  drain();
  stop_ = true;
  for (Stream* st : {&out_, &err_}) {
    if (st->reader.joinable()) st->reader.join();
    // The process's own stdout and stderr again: what it writes after the kernel (at exit)
    // must not go into a pipe nobody reads.
    if (st->saved >= 0) {
      ::dup2(st->saved, st->fd);
      ::close(st->saved);
      st->saved = -1;
    }
    ::close(st->read_end);
  }
}

}  // namespace culua::detail::jupyter
