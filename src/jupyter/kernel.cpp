// The Jupyter kernel: its sockets and threads (heartbeat, control, the shell loop), the shell and
// control requests (execute, kernel_info, complete, inspect, is_complete, history, comm_info,
// shutdown, interrupt), input requests for io.read, display_data for cu.display, and the
// kernelspec that makes Jupyter start it.
#include "jupyter/kernel.hpp"

#include <openssl/evp.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "cli/interpreter.hpp"
#include "core/base/error.hpp"
#include "core/version.hpp"
#include "jupyter/cells.hpp"
#include "jupyter/output_capture.hpp"
#include "jupyter/wire.hpp"
#include "lua/cu_module.hpp"

namespace culua::detail::jupyter {

namespace {

class Kernel;
Kernel* the_kernel = nullptr;

class Kernel {
 public:
  Kernel(lua_State* L, Connection c)
      : L_(L),
        conn_(std::move(c)),
        wire_(conn_.key, uuid()),
        shell_(ctx_, zmq::socket_type::router),
        control_(ctx_, zmq::socket_type::router),
        stdin_(ctx_, zmq::socket_type::router),
        iopub_(ctx_, zmq::socket_type::pub),
        hb_(ctx_, zmq::socket_type::rep) {
    for (auto* s : {&shell_, &control_, &stdin_, &iopub_, &hb_}) s->set(zmq::sockopt::linger, 1000);
    shell_.bind(conn_.endpoint(conn_.shell));
    control_.bind(conn_.endpoint(conn_.control));
    stdin_.bind(conn_.endpoint(conn_.stdin_port));
    iopub_.bind(conn_.endpoint(conn_.iopub));
    hb_.bind(conn_.endpoint(conn_.hb));
  }

  int run();
  std::string read_input(const std::string& prompt);
  void display(const lua::DisplayBundle& bundle);

 private:
  bool receive(zmq::socket_t& s, Message& m);
  void send(zmq::socket_t& s, const std::vector<std::string>& ids, const std::string& type,
            const json& content, const json& parent) {
    wire_.send(s, ids, type, content, parent);
  }
  void publish(const std::string& type, const json& content, const json& parent);
  void publish_stream(const char* name, const std::string& text);
  void log(const std::string& s) const;

  void handle_shell(Message& m);
  void handle_control(Message& m);
  json kernel_info() const;
  void execute(Message& m);

  lua_State* L_;
  Connection conn_;
  Wire wire_;
  zmq::context_t ctx_{1};
  zmq::socket_t shell_, control_, stdin_, iopub_, hb_;
  std::mutex iopub_mutex_;
  std::mutex parent_mutex_;
  json current_parent_ = json::object();
  std::vector<std::string> current_ids_;
  bool allow_stdin_ = false;
  std::atomic<bool> stop_{false};
  bool restart_ = false;
  int execution_count_ = 0;
  std::vector<json> history_;
  std::string banner_;
  int log_fd_ = -1;
  OutputCapture output_{
      [this](const char* name, const std::string& text) { publish_stream(name, text); }, stop_};
};

void Kernel::log(const std::string& s) const {
  const std::string line = "culua kernel: " + s + "\n";
  if (log_fd_ >= 0) {
    [[maybe_unused]] const ssize_t n = ::write(log_fd_, line.data(), line.size());
  }
}

bool Kernel::receive(zmq::socket_t& s, Message& m) {
  std::string dropped;
  if (wire_.receive(s, m, dropped)) return true;
  if (!dropped.empty()) log(dropped);
  return false;
}

void Kernel::publish(const std::string& type, const json& content, const json& parent) {
  std::lock_guard lock(iopub_mutex_);
  send(iopub_, {type}, type, content, parent);
}

// The parent of a stream message: the request being served.
void Kernel::publish_stream(const char* name, const std::string& text) {
  json parent;
  {
    std::lock_guard lock(parent_mutex_);
    parent = current_parent_;
  }
  publish("stream", {{"name", name}, {"text", text}}, parent);
}

// ---- requests ----

json Kernel::kernel_info() const {
  return {{"status", "ok"},
          {"protocol_version", kProtocolVersion},
          {"implementation", "culua"},
          {"implementation_version", CULUA_VERSION},
          {"language_info",
           {{"name", "lua"},
            {"version", LUA_VERSION_MAJOR "." LUA_VERSION_MINOR},
            {"mimetype", "text/x-lua"},
            {"file_extension", ".lua"},
            {"pygments_lexer", "lua"},
            {"codemirror_mode", "lua"}}},
          {"banner", banner_},
          {"help_links", json::array({{{"text", "culua"}, {"url", "https://github.com/"}}})}};
}

void Kernel::execute(Message& m) {
  const std::string code = text_of(m.content, "code");
  const bool silent = m.content.value("silent", false);
  const bool store = m.content.value("store_history", true) && !silent;
  if (store) ++execution_count_;
  {
    std::lock_guard lock(parent_mutex_);
    current_parent_ = m.header;
    current_ids_ = m.ids;
    allow_stdin_ = m.content.value("allow_stdin", true);
  }
  if (!silent)
    publish("execute_input", {{"code", code}, {"execution_count", execution_count_}}, m.header);
  if (store) history_.push_back(json::array({0, execution_count_, code}));
  bool ok = false;
  json r = run_cell(L_, code, silent, &ok);
  output_.drain();
  json reply;
  if (ok) {
    if (r.contains("data")) {
      publish("execute_result",
              {{"execution_count", execution_count_},
               {"data", r["data"]},
               {"metadata", json::object()}},
              m.header);
    }
    json exprs = json::object();
    const auto ue = m.content.find("user_expressions");
    if (ue != m.content.end() && ue->is_object()) {
      for (auto it = ue->begin(); it != ue->end(); ++it) {
        if (it->is_string()) exprs[it.key()] = user_expression(L_, it->get<std::string>());
      }
      output_.drain();
    }
    reply = {{"status", "ok"},
             {"execution_count", execution_count_},
             {"payload", json::array()},
             {"user_expressions", exprs}};
  } else {
    publish("error", r, m.header);
    reply = r;
    reply["status"] = "error";
    reply["execution_count"] = execution_count_;
  }
  send(shell_, m.ids, "execute_reply", reply, m.header);
}

void Kernel::handle_shell(Message& m) {
  const std::string type = m.type();
  publish("status", {{"execution_state", "busy"}}, m.header);
  if (type == "execute_request") {
    execute(m);
  } else if (type == "kernel_info_request") {
    send(shell_, m.ids, "kernel_info_reply", kernel_info(), m.header);
  } else if (type == "complete_request") {
    send(shell_, m.ids, "complete_reply", complete(L_, m.content), m.header);
  } else if (type == "inspect_request") {
    send(shell_, m.ids, "inspect_reply", inspect(L_, m.content), m.header);
  } else if (type == "is_complete_request") {
    send(shell_, m.ids, "is_complete_reply", is_complete(L_, m.content), m.header);
  } else if (type == "history_request") {
    json h = json::array();
    const int n = m.content.value("n", 0);
    const size_t from = n > 0 && static_cast<size_t>(n) < history_.size()
                            ? history_.size() - static_cast<size_t>(n)
                            : 0;
    for (size_t i = from; i < history_.size(); ++i) h.push_back(history_[i]);
    send(shell_, m.ids, "history_reply", {{"status", "ok"}, {"history", h}}, m.header);
  } else if (type == "comm_info_request") {
    send(shell_, m.ids, "comm_info_reply", {{"status", "ok"}, {"comms", json::object()}}, m.header);
  } else if (type == "shutdown_request") {
    restart_ = m.content.value("restart", false);
    send(shell_, m.ids, "shutdown_reply", {{"status", "ok"}, {"restart", restart_}}, m.header);
    stop_ = true;
  } else {
    // The protocol's other shell messages (comms, a kernel's own extensions): not implemented,
    // ignored (no reply), as a kernel without them does.
    log("ignored a " + type + " message");
  }
  output_.drain();
  publish("status", {{"execution_state", "idle"}}, m.header);
}

void Kernel::handle_control(Message& m) {
  const std::string type = m.type();
  if (type == "shutdown_request") {
    restart_ = m.content.value("restart", false);
    send(control_, m.ids, "shutdown_reply", {{"status", "ok"}, {"restart", restart_}}, m.header);
    stop_ = true;
    ::kill(::getpid(), SIGINT);  // a cell still running stops
  } else if (type == "interrupt_request") {
    ::kill(::getpid(), SIGINT);
    send(control_, m.ids, "interrupt_reply", {{"status", "ok"}}, m.header);
  } else if (type == "kernel_info_request") {
    send(control_, m.ids, "kernel_info_reply", kernel_info(), m.header);
  } else {
    log("ignored a control " + type + " message");
  }
}

std::string Kernel::read_input(const std::string& prompt) {
  std::vector<std::string> ids;
  json parent;
  {
    std::lock_guard lock(parent_mutex_);
    if (!allow_stdin_) fail(ErrorKind::Value, "io.read: this frontend does not accept input");
    ids = current_ids_;
    parent = current_parent_;
  }
  output_.drain();
  send(stdin_, ids, "input_request", {{"prompt", prompt}, {"password", false}}, parent);
  for (;;) {
    zmq::pollitem_t item{static_cast<void*>(stdin_), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, std::chrono::milliseconds(100));
    if (cli::interrupted() || stop_) fail(ErrorKind::Interrupted, "io.read: interrupted");
    if (!(item.revents & ZMQ_POLLIN)) continue;
    Message reply;
    if (!receive(stdin_, reply)) continue;
    if (reply.type() != "input_reply") continue;
    return text_of(reply.content, "value");
  }
}

void Kernel::display(const lua::DisplayBundle& bundle) {
  json data = json::object();
  for (const auto& [mime, value] : bundle) {
    if (mime == "image/png") {
      std::string b64(4 * ((value.size() + 2) / 3) + 1, '\0');
      const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(b64.data()),
                                    reinterpret_cast<const unsigned char*>(value.data()),
                                    static_cast<int>(value.size()));
      b64.resize(static_cast<size_t>(n));
      data[mime] = b64;
    } else {
      data[mime] = value;
    }
  }
  json parent;
  {
    std::lock_guard lock(parent_mutex_);
    parent = current_parent_;
  }
  output_.drain();  // what the cell printed before comes first
  publish("display_data",
          {{"data", data}, {"metadata", json::object()}, {"transient", json::object()}}, parent);
}

int Kernel::run() {
  lua::set_display_hook(L_, [this](const lua::DisplayBundle& b) { display(b); });
  banner_ =
      fmt::format("culua {} ({}){}", CULUA_VERSION, LUA_RELEASE, cli::backend_description(L_));
  log_fd_ = ::dup(2);
  output_.start();
  std::thread heartbeat([this] {
    while (!stop_) {
      zmq::pollitem_t item{static_cast<void*>(hb_), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, std::chrono::milliseconds(100));
      if (!(item.revents & ZMQ_POLLIN)) continue;
      zmq::message_t ping;
      if (hb_.recv(ping, zmq::recv_flags::dontwait)) hb_.send(ping, zmq::send_flags::none);
    }
  });
  std::thread control([this] {
    while (!stop_) {
      zmq::pollitem_t item{static_cast<void*>(control_), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, std::chrono::milliseconds(100));
      if (!(item.revents & ZMQ_POLLIN)) continue;
      Message m;
      if (receive(control_, m)) handle_control(m);
    }
  });
  publish("status", {{"execution_state", "starting"}}, json::object());
  while (!stop_) {
    zmq::pollitem_t item{static_cast<void*>(shell_), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, std::chrono::milliseconds(100));
    if (!(item.revents & ZMQ_POLLIN)) continue;
    Message m;
    if (!receive(shell_, m)) continue;
    try {
      handle_shell(m);
    } catch (const std::exception& e) {
      log(std::string("a request failed: ") + e.what());
    }
  }
  heartbeat.join();
  control.join();
  output_.stop();
  lua::set_display_hook(L_, nullptr);
  return 0;
}

// io.read in a kernel: an input_request to the frontend.
int l_kernel_read(lua_State* L) {
  const char* fmt = luaL_optstring(L, 1, "l");
  std::string value;
  try {
    value = the_kernel->read_input("");
  } catch (const Error& e) {
    return luaL_error(L, "%s", e.what());
  }
  if (std::strcmp(fmt, "n") == 0 || std::strcmp(fmt, "*n") == 0) {
    lua_pushstring(L, value.c_str());
    if (!lua_stringtonumber(L, value.c_str())) lua_pushnil(L);
    return 1;
  }
  if (std::strcmp(fmt, "L") == 0 || std::strcmp(fmt, "*L") == 0) value += "\n";
  lua_pushlstring(L, value.data(), value.size());
  return 1;
}

// The kernel's logo (64 x 64 PNG: four rising bars), written beside kernel.json.
constexpr unsigned char kLogo64[] = {
    137, 80,  78,  71,  13,  10,  26,  10,  0,   0,   0,   13,  73,  72,  68,  82,  0,   0,   0,
    64,  0,   0,   0,   64,  8,   6,   0,   0,   0,   170, 105, 113, 222, 0,   0,   0,   161, 73,
    68,  65,  84,  120, 218, 237, 219, 177, 9,   128, 48,  20,  4,   208, 76,  98,  109, 227, 26,
    142, 228, 0,   206, 100, 227, 116, 10,  22,  130, 160, 17,  11,  209, 228, 191, 226, 250, 220,
    107, 127, 46,  53,  109, 151, 46,  178, 84,  150, 211, 158, 181, 151, 190, 197, 136, 88,  254,
    128, 16,  181, 252, 142, 0,   0,   64,  220, 242, 91,  0,   0,   0,   80,  222, 163, 135, 57,
    101, 3,   0,   0,   0,   0,   0,   0,   0,   0,   0,   160, 36,  128, 126, 156, 178, 1,   0,
    0,   0,   0,   0,   0,   0,   0,   0,   80,  18,  192, 147, 82,  0,   0,   0,   0,   0,   0,
    0,   0,   0,   0,   254, 14,  240, 86,  41,  0,   0,   0,   0,   0,   0,   0,   0,   0,   0,
    0,   0,   0,   0,   16,  241, 48,  226, 179, 52,  0,   0,   159, 1,   88,  141, 1,   0,   96,
    58,  107, 60,  29,  117, 62,  191, 2,   252, 126, 64,  127, 118, 215, 177, 102, 0,   0,   0,
    0,   73,  69,  78,  68,  174, 66,  96,  130,
};

}  // namespace

int run_kernel(lua_State* L, const std::string& connection_file) {
  Connection c;
  try {
    c = read_connection(connection_file);
  } catch (const Error& e) {
    std::fprintf(stderr, "culua: --jupyter: %s\n", e.what());
    return 1;
  }
  // Between cells a SIGINT (the frontend's interrupt) does nothing; during one it interrupts it.
  struct sigaction ignore = {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGINT, &ignore, nullptr);
  try {
    Kernel k(L, c);
    the_kernel = &k;
    if (lua_getglobal(L, "io") == LUA_TTABLE) {
      lua_pushcfunction(L, l_kernel_read);
      lua_setfield(L, -2, "read");
    }
    lua_pop(L, 1);
    const int status = k.run();
    the_kernel = nullptr;
    return status;
  } catch (const zmq::error_t& e) {
    std::fprintf(stderr, "culua: --jupyter: %s\n", e.what());
    return 1;
  }
}

std::string install_kernelspec(const std::string& culua_path, bool user,
                               const std::string& prefix) {
  std::string base;
  if (user) {
    if (const char* d = std::getenv("JUPYTER_DATA_DIR"); d && *d) {
      base = d;
    } else {
      const char* home = std::getenv("HOME");
      if (!home || !*home) fail(ErrorKind::Value, "--install-kernel --user: HOME is not set");
      base = std::string(home) + "/.local/share/jupyter";
    }
  } else {
    base = (prefix.empty() ? std::string("/usr/local") : prefix) + "/share/jupyter";
  }
  const std::string dir = base + "/kernels/culua";
  std::string path;
  for (size_t i = 0; i <= dir.size(); ++i) {
    if (i == dir.size() || (dir[i] == '/' && i > 0)) {
      path = dir.substr(0, i);
      if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
        fail(ErrorKind::Value, "cannot make the folder '{}': {}", path, std::strerror(errno));
      }
    }
  }
  const json spec = {{"argv", {culua_path, "--jupyter", "{connection_file}"}},
                     {"display_name", "culua (Lua 5.4, CUDA)"},
                     {"language", "lua"},
                     {"interrupt_mode", "signal"},
                     {"metadata", {{"debugger", false}}}};
  std::ofstream f(dir + "/kernel.json", std::ios::trunc);
  if (!f) fail(ErrorKind::Value, "cannot write '{}/kernel.json'", dir);
  f << spec.dump(1) << "\n";
  if (!f) fail(ErrorKind::Value, "cannot write '{}/kernel.json'", dir);
  std::ofstream logo(dir + "/logo-64x64.png", std::ios::binary | std::ios::trunc);
  logo.write(reinterpret_cast<const char*>(kLogo64), sizeof kLogo64);
  if (!logo) fail(ErrorKind::Value, "cannot write '{}/logo-64x64.png'", dir);
  return dir;
}

}  // namespace culua::detail::jupyter
