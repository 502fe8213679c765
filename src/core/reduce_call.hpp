// Placeholder: the reductions helper defines ReduceCall here.
#pragma once

namespace culua {

struct ReduceCall {
  const char* name() const { return "reduce"; }
};

}  // namespace culua
