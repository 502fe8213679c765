// Placeholder: the random-numbers helper defines RandomCall here.
#pragma once

namespace culua {

struct RandomCall {
  const char* name() const { return "random"; }
};

}  // namespace culua
