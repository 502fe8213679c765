// The kernel's side of the Jupyter wire protocol: the connection file, message ids and dates,
// HMAC-SHA256 signatures, and the framing of a message into ZeroMQ frames and back.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>
#include <zmq.hpp>

namespace culua::detail::jupyter {

using json = nlohmann::json;

inline constexpr const char* kProtocolVersion = "5.3";

// The sockets and key that a connection file describes.
struct Connection {
  std::string transport = "tcp", ip = "127.0.0.1", key, scheme = "hmac-sha256";
  int shell = 0, iopub = 0, stdin_port = 0, control = 0, hb = 0;
  std::string endpoint(int port) const;
};

// Reads a connection file; throws Error(Value) when it is unreadable, not JSON, lacks a port or
// asks for a signature scheme other than hmac-sha256.
Connection read_connection(const std::string& path);

// A message as the wire protocol carries it.
struct Message {
  std::vector<std::string> ids;
  json header, parent, metadata, content;
  std::string type() const { return header.value("msg_type", ""); }
};

// A random id in the form of a UUID.
std::string uuid();

// The string `key` of `j`, or "" when it is missing or not a string.
std::string text_of(const json& j, const char* key);

// Signs, frames and parses the messages of one session. Every member is const: the kernel's
// threads share one.
class Wire {
 public:
  Wire(std::string key, std::string session) : key_(std::move(key)), session_(std::move(session)) {}

  // The hex HMAC-SHA256 of the four parts with the connection's key ("" without a key).
  std::string sign(const std::string& h, const std::string& p, const std::string& m,
                   const std::string& c) const;
  // Takes a message off `s` without waiting. False when none waits, and when the message is
  // dropped (malformed, badly signed, not JSON): then `dropped` says why.
  bool receive(zmq::socket_t& s, Message& m, std::string& dropped) const;
  // Sends a message of this session, in reply to `parent`.
  void send(zmq::socket_t& s, const std::vector<std::string>& ids, const std::string& type,
            const json& content, const json& parent) const;

 private:
  std::string key_;
  std::string session_;
};

}  // namespace culua::detail::jupyter
