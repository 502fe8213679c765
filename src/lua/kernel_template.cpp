// cu.elementwise and cu.reduction: the Lua types of kernel templates. The planning of a call (the
// specialization, its source, launch configuration and parameter values) is rtc/template_plan.hpp;
// this file reads the Lua arguments, allocates outputs, compiles each specialization once and
// launches it.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/base/error.hpp"
#include "core/ops/elementwise.hpp"
#include "core/ops/ops.hpp"
#include "lua/binding.hpp"
#include "lua/kernel.hpp"
#include "rtc/template_plan.hpp"

namespace culua::detail::lua {

namespace {

inline constexpr char kElementwiseType[] = "cu.ElementwiseKernel";
inline constexpr char kReductionType[] = "cu.ReductionKernel";

// A script line that launched a specialization, for the message of an asynchronous fault.
struct Site {
  char text[256] = {};
  const char* source = nullptr;
  int line = -1;  // -2: no script line (called from C)
  LaunchSite launch{text, 0};
};

struct Specialization {
  std::shared_ptr<rtc::RtcKernel> main;    // culua_elementwise, or culua_reduce_block
  std::shared_ptr<rtc::RtcKernel> thread;  // culua_reduce_thread
  std::shared_ptr<rtc::RtcKernel> finish;  // culua_reduce_finish
  // The last few lines that launched it: lines that take turns (the stages of a loop's step)
  // format their text once.
  std::array<Site, 4> sites;
  size_t next_site = 0;
};

struct TemplateState : rtc::KernelTemplate {
  std::map<std::string, SourceOrigin> origins;  // "body", "map", ... -> where in the script
  std::map<std::string, std::shared_ptr<Specialization>> specializations;
  int cache_hits = 0, cache_misses = 0;  // of the specializations' compiles
  double compile_ms = 0;                 // spent compiling them (cache lookups for hits)
  // Elementwise: the last call's plan and specialization, reused by a call of the same
  // fingerprint (rtc::elementwise_fingerprint), as the calls of a loop are; `fingerprint` is the
  // current call's, kept for its capacity.
  std::vector<int64_t> fingerprint, last_fingerprint;
  rtc::ElementwisePlan last_plan;
  std::shared_ptr<Specialization> last;
};

struct TemplateBox {
  std::shared_ptr<TemplateState> t;
};

TemplateState& check_template(lua_State* L, int idx, const char* type) {
  auto* box = check_box<TemplateBox>(L, idx, type);
  check_alive(box->t, "kernel template");
  return *box->t;
}

std::string opt_string(lua_State* L, int opts, const char* key, bool required,
                       const std::string& fallback = {}) {
  if (!get_option(L, opts, key)) {
    if (required) option_error(opts, key, ErrorKind::Value, "required");
    return fallback;
  }
  std::string v;
  if (lua_type(L, -1) == LUA_TSTRING) {
    v = lua_tostring(L, -1);
  } else if (lua_type(L, -1) == LUA_TNUMBER) {
    // Numbers as C++ literals (identity = 0, identity = -math.huge).
    if (lua_isinteger(L, -1)) {
      v = fmt::format("{}LL", lua_tointeger(L, -1));
    } else {
      const double d = lua_tonumber(L, -1);
      if (std::isinf(d)) {
        v = d > 0 ? "__longlong_as_double(0x7ff0000000000000LL)"
                  : "(-__longlong_as_double(0x7ff0000000000000LL))";
      } else if (std::isnan(d)) {
        v = "__longlong_as_double(0x7ff8000000000000LL)";
      } else {
        v = fmt::format("{:.17g}", d);
        if (v.find_first_of(".e") == std::string::npos) v += ".0";
      }
    }
  } else {
    option_error(opts, key, ErrorKind::Type,
                 fmt::format("string of CUDA C++ expected, got {}", luaL_typename(L, -1)));
  }
  lua_pop(L, 1);
  return v;
}

std::string check_text(lua_State* L, int idx, const char* what) {
  if (lua_type(L, idx) != LUA_TSTRING) {
    arg_error(idx, fmt::format("string expected for {}, got {}", what, luaL_typename(L, idx)),
              ErrorKind::Type);
  }
  return lua_tostring(L, idx);
}

std::vector<std::string> opt_strings(lua_State* L, int opts, const char* key) {
  std::vector<std::string> out;
  if (!get_option(L, opts, key)) return out;
  if (lua_type(L, -1) != LUA_TTABLE) {
    option_error(opts, key, ErrorKind::Type,
                 fmt::format("table of strings expected, got {}", luaL_typename(L, -1)));
  }
  out = option_string_list(L, opts, key);
  lua_pop(L, 1);
  return out;
}

void push_template(lua_State* L, std::shared_ptr<TemplateState> t, const char* type) {
  refuse_when_closing(L, "templates");
  auto* box = static_cast<TemplateBox*>(lua_newuserdatauv(L, sizeof(TemplateBox), 0));
  new (box) TemplateBox{};
  set_metatable(L, type);
  box->t = std::move(t);
}

// cu.elementwise("f32 x, f32 y -> f32 z", "z = 2*x + y" [, {name=, preamble=, options=}])
int l_elementwise(lua_State* L) {
  std::string signature = check_text(L, 1, "the signature");
  std::string body = check_text(L, 2, "the body");
  check_options(L, 3, {"name", "preamble", "options"});
  auto t = std::make_shared<TemplateState>();
  static_cast<rtc::KernelTemplate&>(*t) = rtc::elementwise_template(signature, std::move(body));
  t->name = opt_string(L, 3, "name", false, "elementwise");
  t->bodies.preamble = opt_string(L, 3, "preamble", false);
  t->options = opt_strings(L, 3, "options");
  t->origins["body"] = find_origin(L, t->body);
  t->origins["preamble"] = find_origin(L, t->bodies.preamble);
  runtime(L).backend().warm_compiler();  // its first call compiles, or loads from the disk
  push_template(L, std::move(t), kElementwiseType);
  return 1;
}

// cu.reduction("f32 x -> f32 y", {map=, reduce=, identity=, post=, acc=, preamble=, name=,
// options=})
int l_reduction(lua_State* L) {
  auto t = std::make_shared<TemplateState>();
  t->reduction = true;
  t->signature_text = check_text(L, 1, "the signature");
  arg_type(L, 2, LUA_TTABLE);
  check_options(L, 2, {"map", "reduce", "identity", "post", "acc", "preamble", "name", "options"});
  t->sig = rtc::parse_template_signature(t->signature_text, true);
  const std::optional<std::string> map = rtc::default_reduction_map(t->sig);
  const std::optional<std::string> post = rtc::default_reduction_post(t->sig);
  t->bodies.map = opt_string(L, 2, "map", !map, map.value_or(""));
  t->bodies.reduce = opt_string(L, 2, "reduce", true);
  t->bodies.identity = opt_string(L, 2, "identity", true);
  t->bodies.post = opt_string(L, 2, "post", !post, post.value_or(""));
  t->bodies.preamble = opt_string(L, 2, "preamble", false);
  t->acc = opt_string(L, 2, "acc", false);
  t->name = opt_string(L, 2, "name", false, "reduction");
  t->options = opt_strings(L, 2, "options");
  for (const char* part : {"map", "reduce", "identity", "post", "preamble"}) {
    const std::string& text = part == std::string_view("map")        ? t->bodies.map
                              : part == std::string_view("reduce")   ? t->bodies.reduce
                              : part == std::string_view("identity") ? t->bodies.identity
                              : part == std::string_view("post")     ? t->bodies.post
                                                                     : t->bodies.preamble;
    t->origins[part] = find_origin(L, text);
  }
  runtime(L).backend().warm_compiler();
  push_template(L, std::move(t), kReductionType);
  return 1;
}

// ---------------------------------------------------------------------------------------------
// A call: operands, dtypes, shapes.

struct Operand {
  int idx = 0;  // Lua stack index (0 for allocated outputs)
  bool scalar = false;
  Scalar value;
  Array array;
};

struct Call {
  std::vector<Operand> inputs, outputs;
  rtc::TypeBindings types;
  Stream* stream = nullptr;
  int opts = 0;
  Shape shape;  // broadcast shape of the array inputs
};

// Reads the inputs at 2.. and the options table after them; binds placeholders; checks devices.
Call read_call(lua_State* L, const TemplateState& t, std::initializer_list<const char*> options) {
  Call c;
  const int nin = static_cast<int>(t.sig.inputs.size());
  const int top = lua_gettop(L);
  if (top == nin + 2 && lua_type(L, top) == LUA_TTABLE) {
    c.opts = top;
  } else if (top != nin + 1) {
    fail(ErrorKind::Value, "{} '{}' takes {} input{}{}, got {} arguments", t.name, t.signature_text,
         nin, nin == 1 ? "" : "s", " and an optional options table", top - 1);
  }
  if (c.opts) check_options(L, c.opts, options);
  rtc::require_run_time_kernels(runtime(L).backend());
  c.stream = c.opts ? opt_stream(L, c.opts) : nullptr;
  c.inputs.reserve(t.sig.inputs.size());
  c.outputs.reserve(t.sig.outputs.size());
  int device = -1;
  for (int k = 0; k < nin; ++k) {
    const rtc::TemplateParam& p = t.sig.inputs[static_cast<size_t>(k)];
    Operand o;
    o.idx = 2 + k;
    if (ArrayBox* box = test_array(L, o.idx)) {
      o.array = box->array;
      o.array.check_alive(p.role);
      if (o.array.location() != Location::Device) {
        fail(ErrorKind::Value, "input '{}' is a host array: call to_device() first", p.name);
      }
      if (device >= 0 && o.array.device() != device) {
        fail(ErrorKind::Value, "input '{}' is on device {}, other inputs on device {}", p.name,
             o.array.device(), device);
      }
      device = o.array.device();
      if (p.raw && !o.array.is_contiguous()) {
        fail(ErrorKind::Value, "raw input '{}' must be contiguous: pass x:contiguous()", p.name);
      }
      c.types.bind(p, o.array.dtype(), "input");
    } else if (is_scalar(L, o.idx)) {
      if (p.raw) fail(ErrorKind::Type, "raw input '{}' must be an array", p.name);
      o.scalar = true;
      o.value = check_scalar(L, o.idx);
    } else {
      fail(ErrorKind::Type, "input '{}' must be an array or a number, got {}", p.name,
           luaL_typename(L, o.idx));
    }
    c.inputs.push_back(std::move(o));
  }
  // out=: one array, or a table of them (one per output).
  if (c.opts && get_option(L, c.opts, "out")) {
    const int out = lua_gettop(L);
    const size_t nout = t.sig.outputs.size();
    std::vector<int> idx;
    idx.reserve(nout);
    if (test_array(L, out)) {
      idx.push_back(out);
    } else if (lua_type(L, out) == LUA_TTABLE) {
      // One more than wanted is enough to tell a wrong count.
      const lua_Integer len = std::min(luaL_len(L, out), static_cast<lua_Integer>(nout) + 1);
      luaL_checkstack(L, static_cast<int>(len), "out=");
      for (lua_Integer i = 1; i <= len; ++i) {
        lua_rawgeti(L, out, i);
        idx.push_back(lua_gettop(L));
      }
    }
    if (idx.size() != nout) {
      fail(ErrorKind::Value, "out= must be {} (one per output of '{}')",
           nout == 1 ? "an array" : fmt::format("a table of {} arrays", nout), t.signature_text);
    }
    for (size_t k = 0; k < nout; ++k) {
      ArrayBox* box = test_array(L, idx[k]);
      const rtc::TemplateParam& p = t.sig.outputs[k];
      if (!box) fail(ErrorKind::Type, "out '{}' must be an array", p.name);
      Operand o;
      o.idx = idx[k];
      o.array = box->array;
      o.array.check_alive(p.role);
      if (o.array.location() != Location::Device) {
        fail(ErrorKind::Value, "out '{}' is a host array: outputs must be device arrays", p.name);
      }
      if (device >= 0 && o.array.device() != device) {
        fail(ErrorKind::Value, "out '{}' is on device {}, the inputs on device {}", p.name,
             o.array.device(), device);
      }
      device = o.array.device();
      c.types.bind(p, o.array.dtype(), "out");
      c.outputs.push_back(std::move(o));
    }
    // The values stay on the stack (they are returned).
  }
  bool any = false;
  for (size_t k = 0; k < c.inputs.size(); ++k) {
    const Operand& o = c.inputs[k];
    if (o.scalar || t.sig.inputs[k].raw) continue;
    c.shape = any ? broadcast_shapes(c.shape, o.array.shape()) : o.array.shape();
    any = true;
  }
  if (!any && c.outputs.empty()) {
    fail(ErrorKind::Value, "{} needs at least one array input (or out=) to know the shape", t.name);
  }
  if (!any) c.shape = c.outputs[0].array.shape();
  return c;
}

Stream& call_stream(Runtime& rt, Call& c) {
  for (const auto* list : {&c.inputs, &c.outputs}) {
    for (const Operand& o : *list) {
      if (!o.scalar) return stream_for(rt, o.array, c.stream);
    }
  }
  return c.stream ? *c.stream : rt.current_stream();
}

// The operands as the planning sees them: inputs, then outputs.
std::vector<rtc::CallOperand> call_operands(const Call& c) {
  std::vector<rtc::CallOperand> out;
  out.reserve(c.inputs.size() + c.outputs.size());
  for (const auto* list : {&c.inputs, &c.outputs}) {
    for (const Operand& o : *list) {
      rtc::CallOperand r;
      r.scalar = o.scalar;
      if (o.scalar) {
        r.value = o.value;
      } else {
        r.view = o.array.view();
      }
      out.push_back(r);
    }
  }
  return out;
}

void record_uses(const Call& c, Stream& s) {
  for (const auto* list : {&c.inputs, &c.outputs}) {
    for (const Operand& o : *list) {
      if (!o.scalar) o.array.buffer()->record_use(s);
    }
  }
}

// Compiles the kernels of one specialization (cached on disk); a compile error's log is mapped
// to the script lines of the template's parts.
std::vector<std::shared_ptr<rtc::RtcKernel>> compile_template(
    lua_State* L, TemplateState& t, const std::string& source,
    const std::vector<std::string>& kernels) {
  const RtcRequest r = rtc::template_request(t, source, kernels);
  Runtime& rt = runtime(L);
  std::shared_ptr<const RtcBinary> binary;
  try {
    binary = std::make_shared<const RtcBinary>(rt.backend().compile(r, rt.device()));
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Value) throw;
    std::string msg = e.what();
    for (const auto& [part, origin] : t.origins) msg = map_compiler_log(msg, part, origin);
    throw Error(ErrorKind::Value, fmt::format("{} '{}': {}", t.name, t.signature_text, msg));
  }
  t.cache_hits += binary->cache == CacheOutcome::Hit;
  t.cache_misses += binary->cache != CacheOutcome::Hit;
  t.compile_ms += binary->elapsed_ms;
  std::vector<std::shared_ptr<rtc::RtcKernel>> out;
  for (const auto& k : kernels) out.push_back(make_kernel(binary, k, nullptr));
  return out;
}

const LaunchSite& note_site(lua_State* L, Specialization& s, const TemplateState& t) {
  lua_Debug ar;
  const bool known = lua_getstack(L, 1, &ar) && lua_getinfo(L, "Sl", &ar);
  const char* source = known ? ar.source : nullptr;
  const int line = known ? ar.currentline : -2;
  for (Site& site : s.sites) {
    if (site.line == line && site.source == source) return site.launch;
  }
  Site& site = s.sites[s.next_site++ % s.sites.size()];
  if (known) {
    std::snprintf(site.text, sizeof site.text, "%s '%s' launched at %s:%d", t.name.c_str(),
                  t.signature_text.c_str(), ar.short_src, ar.currentline);
  } else {
    std::snprintf(site.text, sizeof site.text, "%s '%s'", t.name.c_str(), t.signature_text.c_str());
  }
  site.source = source;
  site.line = line;
  site.launch.version = ++context(L).launch_site_version;
  return site.launch;
}

void launch(Runtime& rt, rtc::RtcKernel& k, const LaunchDims& d, Stream& s,
            const LaunchSite& site) {
  rtc::RtcKernel::OnDevice& dev = k.on_device(rt.backend(), s.device());
  k.prepare(dev, d);
  dev.function->launch(d, s, k.argv(), site);
}

// Pushes the outputs (allocated ones as new arrays, out= ones as the caller's values).
int push_outputs(lua_State* L, const Call& c) {
  for (const Operand& o : c.outputs) {
    if (o.idx) {
      lua_pushvalue(L, o.idx);
    } else {
      push_array(L, o.array);
    }
  }
  return static_cast<int>(c.outputs.size());
}

// ---------------------------------------------------------------------------------------------
// Elementwise calls.

int elementwise_call(lua_State* L) {
  TemplateState& t = check_template(L, 1, kElementwiseType);
  Runtime& rt = runtime(L);
  Call c = read_call(L, t, {"out", "stream"});
  const size_t nout = t.sig.outputs.size();
  if (c.outputs.empty()) {
    Stream& s = call_stream(rt, c);
    for (size_t k = 0; k < nout; ++k) {
      Operand o;
      o.array =
          empty(rt, c.shape, c.types.resolve(t.sig.outputs[k], "output"), Location::Device, &s);
      c.outputs.push_back(std::move(o));
    }
  } else {
    for (size_t k = 0; k < nout; ++k) {
      if (c.outputs[k].array.shape() != c.shape) {
        fail(ErrorKind::Value, "out '{}' has shape {}; the inputs broadcast to {}",
             t.sig.outputs[k].name, c.outputs[k].array.shape().str(), c.shape.str());
      }
    }
  }
  Stream& s = call_stream(rt, c);
  const std::vector<rtc::CallOperand> operands = call_operands(c);
  rtc::elementwise_fingerprint(operands, c.shape, t.fingerprint);
  if (!t.last || t.fingerprint != t.last_fingerprint) {
    rtc::ElementwisePlan plan = rtc::plan_elementwise(t, operands, c.shape, c.types);
    if (plan.n == 0) return push_outputs(L, c);
    std::shared_ptr<Specialization>& sp = t.specializations[plan.key];
    if (!sp) {
      auto fresh = std::make_shared<Specialization>();
      fresh->main =
          compile_template(L, t, rtc::elementwise_source(t, plan), {rtc::kElementwiseKernel})[0];
      sp = std::move(fresh);
    }
    t.last_plan = std::move(plan);
    t.last = sp;
    t.last_fingerprint.swap(t.fingerprint);
  }
  const rtc::ElementwisePlan& plan = t.last_plan;
  Specialization& sp = *t.last;
  rtc::RtcKernel& k = *sp.main;
  rtc::ArgumentWriter w{k};
  rtc::write_elementwise_arguments(w, t, plan, operands);
  record_uses(c, s);
  const DeviceInfo& info = k.on_device(rt.backend(), s.device()).info;
  launch(rt, k, rtc::elementwise_dims(plan, info), s, note_site(L, sp, t));
  return push_outputs(L, c);
}

// ---------------------------------------------------------------------------------------------
// Reduction calls.

std::vector<bool> read_axes(lua_State* L, int opts, int ndim) {
  std::vector<bool> reduced(static_cast<size_t>(ndim), true);
  if (!opts || !get_option(L, opts, "axis")) return reduced;
  std::fill(reduced.begin(), reduced.end(), false);
  auto one = [&](int idx) {
    const int64_t a = check_integer(L, idx, "axis");
    const int64_t k = a < 0 ? ndim + a : a - 1;
    if (a == 0 || k < 0 || k >= ndim) {
      fail(ErrorKind::Index, "axis {} is out of range for {} dimensions (axes 1..{}, or -{}..-1)",
           a, ndim, ndim, ndim);
    }
    if (reduced[static_cast<size_t>(k)]) fail(ErrorKind::Value, "axis {} is given twice", a);
    reduced[static_cast<size_t>(k)] = true;
  };
  if (lua_type(L, -1) == LUA_TTABLE) {
    const int t = lua_gettop(L);
    for (lua_Integer i = 1; i <= luaL_len(L, t); ++i) {
      lua_rawgeti(L, t, i);
      one(lua_gettop(L));
      lua_pop(L, 1);
    }
  } else {
    one(lua_gettop(L));
  }
  lua_pop(L, 1);
  return reduced;
}

int reduction_call(lua_State* L) {
  TemplateState& t = check_template(L, 1, kReductionType);
  Runtime& rt = runtime(L);
  Call c = read_call(L, t, {"axis", "keepdims", "out", "stream"});
  const size_t nout = t.sig.outputs.size();
  const std::vector<bool> reduced = read_axes(L, c.opts, c.shape.ndim);
  const bool keepdims = c.opts && opt_boolean(L, c.opts, "keepdims", false);
  const Shape out_shape = rtc::reduction_shape(c.shape, reduced, keepdims);
  if (c.outputs.empty()) {
    Stream& s = call_stream(rt, c);
    for (size_t k = 0; k < nout; ++k) {
      Operand o;
      o.array =
          empty(rt, out_shape, c.types.resolve(t.sig.outputs[k], "output"), Location::Device, &s);
      c.outputs.push_back(std::move(o));
    }
  } else {
    for (size_t k = 0; k < nout; ++k) {
      if (c.outputs[k].array.shape() != out_shape) {
        fail(ErrorKind::Value, "out '{}' has shape {}; the reduction gives {}",
             t.sig.outputs[k].name, c.outputs[k].array.shape().str(), out_shape.str());
      }
    }
  }
  Stream& s = call_stream(rt, c);
  const std::vector<rtc::CallOperand> operands = call_operands(c);
  const rtc::ReductionPlan plan =
      rtc::plan_reduction(t, operands, c.shape, reduced, keepdims, c.types);
  if (checked_numel(out_shape, 1) == 0) return push_outputs(L, c);

  std::shared_ptr<Specialization>& sp = t.specializations[plan.key];
  if (!sp) {
    auto fresh = std::make_shared<Specialization>();
    const auto ks = compile_template(
        L, t, rtc::reduction_source(t, plan),
        {rtc::kReductionKernels[0], rtc::kReductionKernels[1], rtc::kReductionKernels[2]});
    fresh->main = ks[0];
    fresh->thread = ks[1];
    fresh->finish = ks[2];
    sp = std::move(fresh);
  }
  const DeviceInfo& info = sp->main->on_device(rt.backend(), s.device()).info;
  const rtc::ReductionLaunch rl = rtc::reduction_launch(plan, info);
  Array partial;
  if (rl.splits > 1) {
    partial =
        empty(rt, Shape{static_cast<int64_t>(rl.partial_bytes)}, DType::U8, Location::Device, &s);
  }
  void* partial_data = rl.splits > 1 ? partial.data() : nullptr;

  rtc::RtcKernel& k = rl.block_mode ? *sp->main : *sp->thread;
  rtc::ArgumentWriter w{k};
  rtc::write_reduction_arguments(w, t, plan, rl, operands, partial_data);
  record_uses(c, s);
  if (rl.splits > 1) partial.buffer()->record_use(s);
  const LaunchSite& site = note_site(L, *sp, t);
  launch(rt, k, rl.main, s, site);
  if (rl.splits > 1) {
    rtc::RtcKernel& fk = *sp->finish;
    rtc::ArgumentWriter fw{fk};
    rtc::write_reduction_finish_arguments(fw, t, plan, rl, operands, partial_data);
    launch(rt, fk, rl.finish, s, site);
  }
  return push_outputs(L, c);
}

// Type: kElementwiseType or kReductionType, the metatable's own (an elementwise template's
// metamethods refuse a reduction template).
template <const char* Type>
int template_gc(lua_State* L) {
  auto* box = check_box<TemplateBox>(L, 1, Type);
  box->t.reset();
  return 0;
}

template <const char* Type>
int template_tostring(lua_State* L) {
  auto* box = check_box<TemplateBox>(L, 1, Type);
  if (!box->t) {
    lua_pushliteral(L, "cu kernel template (released)");
    return 1;
  }
  lua_pushfstring(L, "%s %s '%s' (%d specialization%s compiled)",
                  box->t->reduction ? kReductionType : kElementwiseType, box->t->name.c_str(),
                  box->t->signature_text.c_str(), static_cast<int>(box->t->specializations.size()),
                  box->t->specializations.size() == 1 ? "" : "s");
  return 1;
}

template <const char* Type>
int template_index(lua_State* L) {
  const TemplateState& t = check_template(L, 1, Type);
  const std::string_view key = arg_string(L, 2);
  if (key == "name") {
    lua_pushstring(L, t.name.c_str());
  } else if (key == "signature") {
    lua_pushstring(L, t.signature_text.c_str());
  } else if (key == "specializations") {
    lua_pushinteger(L, static_cast<lua_Integer>(t.specializations.size()));
  } else if (key == "info") {
    lua_createtable(L, 0, 4);
    lua_pushinteger(L, static_cast<lua_Integer>(t.specializations.size()));
    lua_setfield(L, -2, "specializations");
    lua_pushinteger(L, t.cache_hits);
    lua_setfield(L, -2, "cache_hits");
    lua_pushinteger(L, t.cache_misses);
    lua_setfield(L, -2, "cache_misses");
    lua_pushnumber(L, t.compile_ms);
    lua_setfield(L, -2, "compile_ms");
  } else {
    fail(ErrorKind::Index, "{} has no field '{}' (it has name, signature, specializations, info)",
         Type, key);
  }
  return 1;
}

}  // namespace

void register_kernel_templates(lua_State* L) {
  const luaL_Reg elementwise[] = {{"__call", entry<elementwise_call>},
                                  {"__index", entry<template_index<kElementwiseType>>},
                                  {"__gc", entry<template_gc<kElementwiseType>>},
                                  {"__tostring", entry<template_tostring<kElementwiseType>>},
                                  {nullptr, nullptr}};
  const luaL_Reg reduction[] = {{"__call", entry<reduction_call>},
                                {"__index", entry<template_index<kReductionType>>},
                                {"__gc", entry<template_gc<kReductionType>>},
                                {"__tostring", entry<template_tostring<kReductionType>>},
                                {nullptr, nullptr}};
  for (auto [type, methods] :
       {std::pair{kElementwiseType, elementwise}, std::pair{kReductionType, reduction}}) {
    new_metatable(L, type);
    luaL_setfuncs(L, methods, 0);
    lua_pop(L, 1);
  }
  lua_pushcfunction(L, entry<l_elementwise>);
  lua_setfield(L, -2, "elementwise");
  lua_pushcfunction(L, entry<l_reduction>);
  lua_setfield(L, -2, "reduction");
}

}  // namespace culua::detail::lua
