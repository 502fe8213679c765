// Placeholder: the linear-algebra helper defines MatmulCall and DotCall here.
#pragma once

namespace culua {

struct MatmulCall {};
struct DotCall {};

}  // namespace culua
