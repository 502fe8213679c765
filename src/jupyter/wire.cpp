// The Jupyter wire protocol: reading the connection file, ids and dates for headers, HMAC-SHA256
// signatures, and the frames of a message (ids, delimiter, signature, header, parent, metadata,
// content).
#include "jupyter/wire.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iterator>
#include <random>
#include <string_view>
#include <zmq_addon.hpp>

#include "core/base/error.hpp"

namespace culua::detail::jupyter {

namespace {

constexpr const char* kDelimiter = "<IDS|MSG>";

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

}  // namespace

std::string uuid() {
  const std::string h = random_hex(16);
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) +
         "-" + h.substr(20);
}

std::string text_of(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string Connection::endpoint(int port) const {
  return transport == "ipc" ? fmt::format("ipc://{}-{}", ip, port)
                            : fmt::format("{}://{}:{}", transport, ip, port);
}

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

std::string Wire::sign(const std::string& h, const std::string& p, const std::string& m,
                       const std::string& c) const {
  if (key_.empty()) return {};
  const std::string data = h + p + m + c;
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key_.data(), static_cast<int>(key_.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &len);
  static const char* digits = "0123456789abcdef";
  std::string hex;
  for (unsigned i = 0; i < len; ++i) {
    hex += digits[out[i] >> 4];
    hex += digits[out[i] & 15];
  }
  return hex;
}

bool Wire::receive(zmq::socket_t& s, Message& m, std::string& dropped) const {
  std::vector<zmq::message_t> frames;
  if (!zmq::recv_multipart(s, std::back_inserter(frames), zmq::recv_flags::dontwait)) return false;
  size_t d = 0;
  while (d < frames.size() && frames[d].to_string_view() != kDelimiter) ++d;
  if (d + 5 > frames.size()) {
    dropped = "dropped a message without the protocol's frames";
    return false;
  }
  m.ids.clear();
  for (size_t i = 0; i < d; ++i) m.ids.push_back(frames[i].to_string());
  const std::string sig = frames[d + 1].to_string();
  const std::string h = frames[d + 2].to_string(), p = frames[d + 3].to_string(),
                    md = frames[d + 4].to_string(),
                    c = d + 5 < frames.size() ? frames[d + 5].to_string() : "{}";
  if (!key_.empty()) {
    const std::string want = sign(h, p, md, c);
    if (sig.size() != want.size() || CRYPTO_memcmp(sig.data(), want.data(), want.size()) != 0) {
      dropped = "dropped a message with a bad signature";
      return false;
    }
  }
  try {
    m.header = json::parse(h);
    m.parent = json::parse(p);
    m.metadata = json::parse(md);
    m.content = json::parse(c);
  } catch (const json::exception& e) {
    dropped = std::string("dropped a message that is not JSON: ") + e.what();
    return false;
  }
  if (!m.header.is_object() || !m.content.is_object()) {
    dropped = "dropped a message whose header or content is not an object";
    return false;
  }
  return true;
}

void Wire::send(zmq::socket_t& s, const std::vector<std::string>& ids, const std::string& type,
                const json& content, const json& parent) const {
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

}  // namespace culua::detail::jupyter
