#include "jupyter/kernel.hpp"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "cli/interpreter.hpp"
#include "core/base/error.hpp"
#include "core/version.hpp"
#include "lua/cu_module.hpp"

namespace culua::detail::jupyter {

namespace {

using json = nlohmann::json;

constexpr const char* kDelimiter = "<IDS|MSG>";
constexpr const char* kProtocolVersion = "5.3";

std::string random_hex(size_t bytes) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string s;
  static const char* digits = "0123456789abcdef";
  for (size_t i = 0; i < bytes; ++i) {
    const auto b = static_cast<unsigned>(rng() & 0xff);
    s += digits[b >> 4];
    s += digits[b & 15];
  }
  return s;
}

std::string uuid() {
  const std::string h = random_hex(16);
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) +
         "-" + h.substr(20);
}

std::string now_iso() {
  const auto now = std::chrono::system_clock::now();
  const auto us =
      std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() %
      1000000;
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[96];
  std::snprintf(out, sizeof out, "%s.%06ldZ", buf, static_cast<long>(us));
  return out;
}

struct Connection {
  std::string transport = "tcp", ip = "127.0.0.1", key, scheme = "hmac-sha256";
  int shell = 0, iopub = 0, stdin_port = 0, control = 0, hb = 0;
  std::string endpoint(int port) const {
    return transport == "ipc" ? fmt::format("ipc://{}-{}", ip, port)
                              : fmt::format("{}://{}:{}", transport, ip, port);
  }
};

Connection read_connection(const std::string& path) {
  std::ifstream f(path);
  if (!f) fail(ErrorKind::Value, "cannot read the connection file '{}'", path);
  json j;
  try {
    f >> j;
  } catch (const json::exception& e) {
    fail(ErrorKind::Value, "the connection file '{}' is not JSON: {}", path, e.what());
  }
  Connection c;
  try {
    c.transport = j.value("transport", "tcp");
    c.ip = j.value("ip", "127.0.0.1");
    c.key = j.value("key", "");
    c.scheme = j.value("signature_scheme", "hmac-sha256");
    c.shell = j.at("shell_port").get<int>();
    c.iopub = j.at("iopub_port").get<int>();
    c.stdin_port = j.at("stdin_port").get<int>();
    c.control = j.at("control_port").get<int>();
    c.hb = j.at("hb_port").get<int>();
  } catch (const json::exception& e) {
    fail(ErrorKind::Value, "the connection file '{}' lacks a field: {}", path, e.what());
  }
  if (!c.key.empty() && c.scheme != "hmac-sha256") {
    fail(ErrorKind::Value,
         "the connection file '{}' asks for signature scheme '{}'; culua signs "
         "with hmac-sha256",
         path, c.scheme);
  }
  return c;
}

// A message as the wire protocol carries it.
struct Message {
  std::vector<std::string> ids;
  json header, parent, metadata, content;
  std::string type() const { return header.value("msg_type", ""); }
};

// The stdout and stderr of the process, redirected into pipes whose readers publish them as
// stream messages (every byte: Lua's print, io.write, C++'s warnings, the profiler's tables).
struct Stream {
  int fd = -1;  // 1 or 2
  int read_end = -1;
  int saved = -1;  // the descriptor it replaced, restored at the end
  const char* name = "";
  std::atomic<bool> busy{false};
  std::thread reader;
};

std::string text_of(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The error handler of a cell: {ename, evalue, traceback} from the error value.
int cell_error_handler(lua_State* L) {
  std::string kind = "LuaError";
  if (lua_getglobal(L, "cu") == LUA_TTABLE && lua_getfield(L, -1, "error_kind") == LUA_TFUNCTION) {
    lua_pushvalue(L, 1);
    if (lua_pcall(L, 1, 1, 0) == LUA_OK && lua_type(L, -1) == LUA_TSTRING)
      kind = lua_tostring(L, -1);
  }
  lua_settop(L, 1);
  const char* msg = luaL_tolstring(L, 1, nullptr);
  const std::string text = msg ? msg : "(error object is not a string)";
  luaL_traceback(L, L, nullptr, 1);
  lua_createtable(L, 0, 3);
  lua_pushstring(L, kind.c_str());
  lua_setfield(L, -2, "ename");
  lua_pushlstring(L, text.data(), text.size());
  lua_setfield(L, -2, "evalue");
  lua_pushvalue(L, -2);
  lua_setfield(L, -2, "traceback");
  return 1;
}

// Runs the function below it with cell_error_handler; rethrows the handler's table.
int cell_runner(lua_State* L) {
  lua_pushcfunction(L, cell_error_handler);
  lua_insert(L, 1);
  if (lua_pcall(L, lua_gettop(L) - 2, LUA_MULTRET, 1) != LUA_OK) return lua_error(L);
  lua_remove(L, 1);
  return lua_gettop(L);
}

// The values 1..top as print shows them, tab-separated.
int values_text(lua_State* L) {
  const int n = lua_gettop(L);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (int i = 1; i <= n; ++i) {
    if (i > 1) luaL_addchar(&b, '\t');
    luaL_tolstring(L, i, nullptr);
    luaL_addvalue(&b);
  }
  luaL_pushresult(&b);
  return 1;
}

class Kernel;
Kernel* the_kernel = nullptr;

class Kernel {
 public:
  Kernel(lua_State* L, Connection c)
      : L_(L),
        conn_(std::move(c)),
        session_(uuid()),
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
            const json& content, const json& parent);
  void publish(const std::string& type, const json& content, const json& parent);
  std::string sign(const std::string& h, const std::string& p, const std::string& m,
                   const std::string& c) const;
  void log(const std::string& s) const;

  void start_streams();
  void stop_streams();
  void read_stream(Stream& st);
  void drain();

  void handle_shell(Message& m);
  void handle_control(Message& m);
  json kernel_info() const;
  void execute(Message& m);
  json run_cell(const std::string& code, bool silent, bool* ok);
  int load_code(const std::string& code, bool* incomplete);
  json complete(const json& c);
  json inspect(const json& c);
  json is_complete(const json& c);
  json user_expression(const std::string& expr);

  lua_State* L_;
  Connection conn_;
  std::string session_;
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
  Stream out_, err_;
};

void Kernel::log(const std::string& s) const {
  const std::string line = "culua kernel: " + s + "\n";
  if (log_fd_ >= 0) {
    [[maybe_unused]] const ssize_t n = ::write(log_fd_, line.data(), line.size());
  }
}

std::string Kernel::sign(const std::string& h, const std::string& p, const std::string& m,
                         const std::string& c) const {
  if (conn_.key.empty()) return {};
  const std::string data = h + p + m + c;
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), conn_.key.data(), static_cast<int>(conn_.key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &len);
  static const char* digits = "0123456789abcdef";
  std::string hex;
  for (unsigned i = 0; i < len; ++i) {
    hex += digits[out[i] >> 4];
    hex += digits[out[i] & 15];
  }
  return hex;
}

bool Kernel::receive(zmq::socket_t& s, Message& m) {
  std::vector<zmq::message_t> frames;
  if (!zmq::recv_multipart(s, std::back_inserter(frames), zmq::recv_flags::dontwait)) return false;
  size_t d = 0;
  while (d < frames.size() && frames[d].to_string_view() != kDelimiter) ++d;
  if (d + 5 > frames.size()) {
    log("dropped a message without the protocol's frames");
    return false;
  }
  m.ids.clear();
  for (size_t i = 0; i < d; ++i) m.ids.push_back(frames[i].to_string());
  const std::string sig = frames[d + 1].to_string();
  const std::string h = frames[d + 2].to_string(), p = frames[d + 3].to_string(),
                    md = frames[d + 4].to_string(),
                    c = d + 5 < frames.size() ? frames[d + 5].to_string() : "{}";
  if (!conn_.key.empty()) {
    const std::string want = sign(h, p, md, c);
    if (sig.size() != want.size() || CRYPTO_memcmp(sig.data(), want.data(), want.size()) != 0) {
      log("dropped a message with a bad signature");
      return false;
    }
  }
  try {
    m.header = json::parse(h);
    m.parent = json::parse(p);
    m.metadata = json::parse(md);
    m.content = json::parse(c);
  } catch (const json::exception& e) {
    log(std::string("dropped a message that is not JSON: ") + e.what());
    return false;
  }
  if (!m.header.is_object() || !m.content.is_object()) {
    log("dropped a message whose header or content is not an object");
    return false;
  }
  return true;
}

void Kernel::send(zmq::socket_t& s, const std::vector<std::string>& ids, const std::string& type,
                  const json& content, const json& parent) {
  const json header = {{"msg_id", uuid()},  {"session", session_}, {"username", "culua"},
                       {"date", now_iso()}, {"msg_type", type},    {"version", kProtocolVersion}};
  const std::string h = header.dump(), p = parent.is_object() ? parent.dump() : "{}", md = "{}",
                    c = content.dump(-1, ' ', false, json::error_handler_t::replace);
  std::vector<zmq::const_buffer> frames;
  for (const std::string& id : ids) frames.emplace_back(zmq::buffer(id));
  const std::string sig = sign(h, p, md, c);
  frames.emplace_back(zmq::buffer(std::string_view(kDelimiter)));
  frames.emplace_back(zmq::buffer(sig));
  frames.emplace_back(zmq::buffer(h));
  frames.emplace_back(zmq::buffer(p));
  frames.emplace_back(zmq::buffer(md));
  frames.emplace_back(zmq::buffer(c));
  zmq::send_multipart(s, frames);
}

void Kernel::publish(const std::string& type, const json& content, const json& parent) {
  std::lock_guard lock(iopub_mutex_);
  send(iopub_, {type}, type, content, parent);
}

// ---- output ----

void Kernel::start_streams() {
  std::fflush(stdout);
  std::fflush(stderr);
  log_fd_ = ::dup(2);
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

void Kernel::read_stream(Stream& st) {
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
    json parent;
    {
      std::lock_guard lock(parent_mutex_);
      parent = current_parent_;
    }
    publish("stream", {{"name", st.name}, {"text", std::string(buf, static_cast<size_t>(n))}},
            parent);
    st.busy = false;
  }
}

// Waits until everything written to stdout and stderr so far was published.
void Kernel::drain() {
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

void Kernel::stop_streams() {
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

// Compiles a cell: as the REPL does (the whole cell as an expression, else as statements), and
// besides, as a notebook shows it, a cell of statements whose last line is an expression shows
// that expression's values.
int Kernel::load_code(const std::string& code, bool* incomplete) {
  if (!code.empty() && code[0] != '=') {
    const std::string whole = "return " + code + ";";
    if (luaL_loadbuffer(L_, whole.data(), whole.size(), "=cell") == LUA_OK) return LUA_OK;
    lua_pop(L_, 1);
    // The last expression may span several lines: try "return" before each of the last lines.
    size_t end = code.find_last_not_of(" \t\r\n");
    size_t at = end == std::string::npos ? std::string::npos : code.rfind('\n', end);
    for (int tries = 0; at != std::string::npos && tries < 20; ++tries) {
      const std::string split =
          code.substr(0, at) + "\nreturn " + code.substr(at + 1, end - at) + ";";
      if (luaL_loadbuffer(L_, split.data(), split.size(), "=cell") == LUA_OK) return LUA_OK;
      lua_pop(L_, 1);
      at = at == 0 ? std::string::npos : code.rfind('\n', at - 1);
    }
  }
  return cli::load_cell(L_, code, incomplete);
}

json Kernel::run_cell(const std::string& code, bool silent, bool* ok) {
  const int top = lua_gettop(L_);
  bool incomplete = false;
  json result = json::object();
  *ok = false;
  if (load_code(code, &incomplete) != LUA_OK) {
    const char* msg = lua_tostring(L_, -1);
    result = {{"ename", "SyntaxError"},
              {"evalue", msg ? msg : "syntax error"},
              {"traceback", json::array({msg ? msg : "syntax error"})}};
    lua_settop(L_, top);
    return result;
  }
  lua_pushcfunction(L_, cell_runner);
  lua_insert(L_, -2);
  const int status = cli::docall(L_, 1, LUA_MULTRET, false);
  if (status != LUA_OK) {
    if (lua_type(L_, -1) == LUA_TTABLE) {
      lua_getfield(L_, -1, "ename");
      lua_getfield(L_, -2, "evalue");
      lua_getfield(L_, -3, "traceback");
      const std::string ename = lua_tostring(L_, -3) ? lua_tostring(L_, -3) : "LuaError";
      const std::string evalue = lua_tostring(L_, -2) ? lua_tostring(L_, -2) : "";
      const std::string tb = lua_tostring(L_, -1) ? lua_tostring(L_, -1) : "";
      json lines = json::array({ename + ": " + evalue});
      std::istringstream in(tb);
      for (std::string line; std::getline(in, line);) lines.push_back(line);
      result = {{"ename", ename}, {"evalue", evalue}, {"traceback", lines}};
    } else {
      const char* msg = lua_tostring(L_, -1);
      result = {{"ename", cli::interrupted() ? "interrupted" : "LuaError"},
                {"evalue", msg ? msg : "error"},
                {"traceback", json::array({msg ? msg : "error"})}};
    }
    lua_settop(L_, top);
    return result;
  }
  *ok = true;
  const int n = lua_gettop(L_) - top;
  if (n > 0 && !silent) {
    json data = json::object();
    // text/plain: the values as print shows them.
    lua_pushcfunction(L_, values_text);
    for (int i = 0; i < n; ++i) lua_pushvalue(L_, top + 1 + i);
    if (lua_pcall(L_, n, 1, 0) == LUA_OK) data["text/plain"] = lua_tostring(L_, -1);
    lua_pop(L_, 1);
    // Richer forms of a culua value (cu.jupyter.mimebundle).
    if (n == 1 && luaL_getmetafield(L_, top + 1, "__name") == LUA_TSTRING) {
      const std::string kind = lua_tostring(L_, -1);
      lua_pop(L_, 1);
      lua_getglobal(L_, "require");
      lua_pushliteral(L_, "cu.jupyter");
      if (lua_pcall(L_, 1, 1, 0) == LUA_OK && lua_getfield(L_, -1, "mimebundle") == LUA_TFUNCTION) {
        lua_pushstring(L_, kind.c_str());
        lua_pushvalue(L_, top + 1);
        if (lua_pcall(L_, 2, 1, 0) == LUA_OK && lua_type(L_, -1) == LUA_TTABLE) {
          lua_pushnil(L_);
          while (lua_next(L_, -2)) {
            if (lua_type(L_, -2) == LUA_TSTRING && lua_type(L_, -1) == LUA_TSTRING)
              data[lua_tostring(L_, -2)] = lua_tostring(L_, -1);
            lua_pop(L_, 1);
          }
        }
      }
    }
    result = {{"data", data}};
  }
  lua_settop(L_, top);
  return result;
}

json Kernel::user_expression(const std::string& expr) {
  bool ok = false;
  json r = run_cell("return " + expr, false, &ok);
  if (!ok) {
    r["status"] = "error";
    return r;
  }
  return {{"status", "ok"},
          {"data", r.contains("data") ? r["data"] : json::object({{"text/plain", "nil"}})},
          {"metadata", json::object()}};
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
  json r = run_cell(code, silent, &ok);
  drain();
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
        if (it->is_string()) exprs[it.key()] = user_expression(it->get<std::string>());
      }
      drain();
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

json Kernel::complete(const json& c) {
  const std::string code = text_of(c, "code");
  const size_t cursor = c.value("cursor_pos", code.size());
  size_t start = cursor;
  const std::vector<std::string> matches = cli::completions(L_, code, cursor, &start);
  return {{"status", "ok"},
          {"matches", matches},
          {"cursor_start", start},
          {"cursor_end", std::min(cursor, code.size())},
          {"metadata", json::object()}};
}

json Kernel::inspect(const json& c) {
  const std::string code = text_of(c, "code");
  size_t cursor = std::min<size_t>(c.value("cursor_pos", code.size()), code.size());
  // The dotted name around the cursor: "cu.zeros", "a:sum" (as a.sum).
  auto is_name = [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '.' || ch == ':';
  };
  size_t b = cursor, e = cursor;
  while (b > 0 && is_name(code[b - 1])) --b;
  while (e < code.size() && is_name(code[e])) ++e;
  std::string name = code.substr(b, e - b);
  for (char& ch : name) {
    if (ch == ':') ch = '.';
  }
  while (!name.empty() && name.back() == '.') name.pop_back();
  json reply = {
      {"status", "ok"}, {"found", false}, {"data", json::object()}, {"metadata", json::object()}};
  if (name.empty()) return reply;
  const int top = lua_gettop(L_);
  const std::string chunk =
      "local v = " + name + "; if v == nil then return nil end; return cu.help(v, {text = true})";
  if (luaL_loadbuffer(L_, chunk.data(), chunk.size(), "=inspect") == LUA_OK &&
      lua_pcall(L_, 0, 1, 0) == LUA_OK && lua_type(L_, -1) == LUA_TSTRING) {
    reply["found"] = true;
    reply["data"] = {{"text/plain", lua_tostring(L_, -1)}};
  }
  lua_settop(L_, top);
  return reply;
}

json Kernel::is_complete(const json& c) {
  const std::string code = text_of(c, "code");
  const int top = lua_gettop(L_);
  bool incomplete = false;
  const int status = cli::load_cell(L_, code, &incomplete);
  lua_settop(L_, top);
  if (status == LUA_OK) return {{"status", "complete"}};
  if (incomplete) return {{"status", "incomplete"}, {"indent", ""}};
  return {{"status", "invalid"}};
}

void Kernel::handle_shell(Message& m) {
  const std::string type = m.type();
  publish("status", {{"execution_state", "busy"}}, m.header);
  if (type == "execute_request") {
    execute(m);
  } else if (type == "kernel_info_request") {
    send(shell_, m.ids, "kernel_info_reply", kernel_info(), m.header);
  } else if (type == "complete_request") {
    send(shell_, m.ids, "complete_reply", complete(m.content), m.header);
  } else if (type == "inspect_request") {
    send(shell_, m.ids, "inspect_reply", inspect(m.content), m.header);
  } else if (type == "is_complete_request") {
    send(shell_, m.ids, "is_complete_reply", is_complete(m.content), m.header);
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
  drain();
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
  drain();
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
  drain();  // what the cell printed before comes first
  publish("display_data",
          {{"data", data}, {"metadata", json::object()}, {"transient", json::object()}}, parent);
}

int Kernel::run() {
  lua::set_display_hook(L_, [this](const lua::DisplayBundle& b) { display(b); });
  banner_ =
      fmt::format("culua {} ({}){}", CULUA_VERSION, LUA_RELEASE, cli::backend_description(L_));
  start_streams();
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
  stop_streams();
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
