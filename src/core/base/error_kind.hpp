// The names of culua's error kinds, as scripts (err.kind) and the embedding API see them.
#pragma once

#include "core/base/error.hpp"

namespace culua::detail {

// The kind's name as scripts see it (err.kind) and the embedding API reports it.
constexpr const char* kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::Value:
      return "value";
    case ErrorKind::Type:
      return "type";
    case ErrorKind::Index:
      return "index";
    case ErrorKind::OutOfMemory:
      return "out_of_memory";
    case ErrorKind::Released:
      return "released";
    case ErrorKind::Unsupported:
      return "unsupported";
    case ErrorKind::Device:
      return "device";
    case ErrorKind::Fatal:
      return "fatal";
    case ErrorKind::Strict:
      return "strict";
    case ErrorKind::Interrupted:
      return "interrupted";
    case ErrorKind::Capture:
      return "capture";
    case ErrorKind::Limit:
      return "limit";
  }
  return "value";
}

}  // namespace culua::detail
