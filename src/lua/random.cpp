// Random numbers: cu.seed, cu.rand, cu.randn and their host variants cu.host.rand / cu.host.randn.
#include <optional>
#include <utility>

#include "core/base/error.hpp"
#include "core/ops/random.hpp"
#include "lua/binding.hpp"
#include "lua/dtypes.hpp"

namespace culua::detail::lua {

namespace {

struct RandomArgs : DTypeAndOptions {
  Shape shape;
};

// shape [, dtype] [, options]; a nil dtype means the default.
RandomArgs random_args(lua_State* L, std::initializer_list<const char*> allowed) {
  Shape shape = check_shape(L, 1);
  return {check_dtype_and_options(L, 2, allowed), std::move(shape)};
}

std::optional<uint64_t> opt_seed(lua_State* L, int opts) {
  if (!get_option(L, opts, "seed")) return std::nullopt;
  const int64_t s = as_option(opts, "seed", [&] { return check_integer(L, -1, "seed"); });
  lua_pop(L, 1);
  return static_cast<uint64_t>(s);
}

// cu.rand / cu.randn (Host = false: device arrays, stream=) and cu.host.* (pinned=).
template <RandomDistribution Dist, bool Host>
int l_random(lua_State* L) {
  const RandomArgs a = Host ? random_args(L, {"dtype", "seed", "out", "pinned"})
                            : random_args(L, {"dtype", "seed", "out", "stream"});
  const std::optional<uint64_t> s = opt_seed(L, a.opts);
  Stream* stream = Host ? nullptr : opt_stream(L, a.opts);
  const bool pinned = Host && opt_boolean(L, a.opts, "pinned", false);
  Runtime& rt = runtime(L);
  if (Array* out = opt_array(L, a.opts, "out")) {
    if (!(out->shape() == a.shape)) {
      option_error(a.opts, "out", ErrorKind::Value,
                   fmt::format("an array of shape {} expected, got shape {}", a.shape.str(),
                               out->shape().str()));
    }
    if (a.has_dtype && a.dtype != out->dtype()) {
      option_error(a.opts, "out", ErrorKind::Value,
                   fmt::format("an array of dtype {} expected, got dtype {}", name(a.dtype),
                               name(out->dtype())));
    }
    if (pinned) option_error(a.opts, "pinned", ErrorKind::Value, "cannot be used with out=");
    random_fill(rt, Dist, *out, stream, s);
    get_option(L, a.opts, "out");
    return 1;
  }
  check_random_dtype(a.dtype, Dist);
  const Location loc = !Host ? Location::Device : pinned ? Location::Pinned : Location::Pageable;
  ArrayBox* box = new_array(L);
  box->array = random(rt, Dist, a.shape, a.dtype, loc, stream, s);
  return 1;
}

int l_seed(lua_State* L) {
  const int64_t s = as_argument(1, [&] { return check_integer(L, 1, "seed"); });
  if (lua_gettop(L) > 1)
    arg_error(2, fmt::format("no value expected, got {}", luaL_typename(L, 2)));
  seed(runtime(L), static_cast<uint64_t>(s));
  return 0;
}

const luaL_Reg kFunctions[] = {
    {"seed", entry<l_seed>},
    {"rand", entry<l_random<RandomDistribution::Uniform, false>>},
    {"randn", entry<l_random<RandomDistribution::Normal, false>>},
    {nullptr, nullptr},
};

const luaL_Reg kHostFunctions[] = {
    {"rand", entry<l_random<RandomDistribution::Uniform, true>>},
    {"randn", entry<l_random<RandomDistribution::Normal, true>>},
    {nullptr, nullptr},
};

}  // namespace

void register_random(lua_State* L) {
  luaL_setfuncs(L, kFunctions, 0);
  lua_getfield(L, -1, "host");
  if (!lua_istable(L, -1)) fail(ErrorKind::Value, "register_random: cu.host is missing");
  luaL_setfuncs(L, kHostFunctions, 0);
  lua_pop(L, 1);
}

}  // namespace culua::detail::lua
