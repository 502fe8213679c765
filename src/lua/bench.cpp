// cu.bench: nvbench's methodology from one Lua call. The measurement itself is
// measure/bench.cpp; this file reads the options, keeps the L2 flush buffer and turns the result
// into a Lua table (with tostring and :json()).
#include <chrono>
#include <cmath>
#include <string>
#include <type_traits>

#include "core/base/error.hpp"
#include "core/ops/manip.hpp"
#include "core/ops/ops.hpp"
#include "core/ops/reduce.hpp"
#include "lua/binding.hpp"
#include "lua/json_value.hpp"
#include "measure/bench.hpp"
#include "measure/counters.hpp"
#include "measure/plot.hpp"

namespace culua::detail::lua {

namespace {

inline constexpr char kBenchResultType[] = "cu.BenchResult";
// Registry key of the table {[device + 1] = cu.Array} of L2 flush buffers: allocated once per
// device and Lua state, freed with the state.
inline constexpr char kFlushBuffersKey = 0;

// The flush buffer of the stream's device, allocated on first use.
const Array* flush_buffer(lua_State* L, Runtime& rt, Stream& s) {
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &kFlushBuffersKey) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &kFlushBuffersKey);
  }
  const lua_Integer slot = s.device() + 1;
  lua_rawgeti(L, -1, slot);
  ArrayBox* box = test_array(L, -1);
  if (!box || !box->array.alive()) {
    lua_pop(L, 1);
    const size_t bytes =
        measure::flush_buffer_bytes(rt.kind(), rt.backend().device_info(s.device()));
    const auto words = static_cast<int64_t>((bytes + 3) / 4);
    box = new_array(L);
    box->array = empty(rt, Shape{words}, DType::U32, Location::Device, &s);
    lua_pushvalue(L, -1);
    lua_rawseti(L, -3, slot);
  }
  lua_pop(L, 2);
  return &box->array;
}

double opt_number(lua_State* L, int opts, const char* key, double fallback) {
  if (!get_option(L, opts, key)) return fallback;
  if (lua_type(L, -1) != LUA_TNUMBER) {
    option_error(opts, key, ErrorKind::Type,
                 fmt::format("number expected, got {}", luaL_typename(L, -1)));
  }
  const double v = lua_tonumber(L, -1);
  lua_pop(L, 1);
  return v;
}

int64_t opt_count(lua_State* L, int opts, const char* key, int64_t fallback) {
  if (!get_option(L, opts, key)) return fallback;
  int exact = 0;
  const lua_Integer v = lua_type(L, -1) == LUA_TNUMBER ? lua_tointegerx(L, -1, &exact) : 0;
  if (!exact) {
    option_error(opts, key, ErrorKind::Type,
                 fmt::format("integer expected, got {}", luaL_tolstring(L, -1, nullptr)));
  }
  lua_pop(L, 1);
  return v;
}

void set_optional(lua_State* L, const char* key, const std::optional<double>& v) {
  if (v) set_number(L, key, *v);
}

template <class T>
void set_list(lua_State* L, const char* key, const std::vector<T>& values) {
  check_stack(L, 2);
  lua_createtable(L, static_cast<int>(values.size()), 0);
  for (size_t i = 0; i < values.size(); ++i) {
    if constexpr (std::is_same_v<T, std::string>) {
      lua_pushlstring(L, values[i].data(), values[i].size());
    } else if constexpr (std::is_integral_v<T>) {
      lua_pushinteger(L, static_cast<lua_Integer>(values[i]));
    } else {
      lua_pushnumber(L, values[i]);
    }
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  lua_setfield(L, -2, key);
}

void set_summary(lua_State* L, const char* key, const measure::Summary& s) {
  lua_createtable(L, 0, 8);
  set_number(L, "min", s.min);
  set_number(L, "median", s.median);
  set_number(L, "mean", s.mean);
  set_number(L, "stddev", s.stddev);
  set_number(L, "p10", s.p10);
  set_number(L, "p90", s.p90);
  set_number(L, "max", s.max);
  set_number(L, "noise", s.noise);
  lua_setfield(L, -2, key);
}

void push_result(lua_State* L, const measure::BenchResult& r) {
  check_stack(L, 4);
  lua_createtable(L, 0, 32);
  set_string(L, "name", r.name);
  set_string(L, "backend", r.backend);
  set_string(L, "device", r.device);
  set_integer(L, "device_index", r.device_index);
  set_string(L, "mode", r.mode);
  set_integer(L, "warmup", r.warmup);
  set_integer(L, "samples", r.samples);
  if (r.gpu) set_summary(L, "gpu", *r.gpu);
  if (r.cpu) set_summary(L, "cpu", *r.cpu);
  set_list(L, "times", r.gpu_times);
  set_list(L, "cpu_times", r.cpu_times);
  set_optional(L, "bytes", r.options.bytes);
  set_optional(L, "flops", r.options.flops);
  set_optional(L, "GBps", r.GBps);
  set_optional(L, "TFLOPs", r.TFLOPs);
  if (r.hot) {
    const measure::HotResult& h = *r.hot;
    lua_createtable(L, 0, 8);
    set_summary(L, "gpu", h.gpu);
    set_number(L, "cpu_enqueue", h.cpu_enqueue);
    set_optional(L, "gpu_queued", h.gpu_queued);
    set_integer(L, "batch_size", h.batch_size);
    set_integer(L, "batches", h.batches);
    set_list(L, "times", h.gpu_times);
    set_optional(L, "GBps", h.GBps);
    set_optional(L, "TFLOPs", h.TFLOPs);
    lua_setfield(L, -2, "hot");
  }
  set_boolean(L, "launch_bound", r.launch_bound);
  if (r.options.cold) set_boolean(L, "gated", r.gated);
  if (!r.stop.empty()) set_string(L, "stop", r.stop);
  if (r.clock_before || r.clock_after) {
    lua_createtable(L, 0, 2);
    if (r.clock_before) set_integer(L, "before", *r.clock_before);
    if (r.clock_after) set_integer(L, "after", *r.clock_after);
    lua_setfield(L, -2, "clock");
  }
  if (r.throttled) {
    set_integer(L, "throttled", *r.throttled);
    set_list(L, "throttled_samples", r.throttled_samples);
    set_list(L, "throttle_reasons", r.throttle_reasons);
  }
  set_number(L, "elapsed", r.elapsed);
  set_list(L, "notes", r.notes);
  const measure::BenchOptions& o = r.options;
  lua_createtable(L, 0, 8);
  set_integer(L, "warmup", o.warmup);
  set_integer(L, "min_samples", o.min_samples);
  set_number(L, "min_time", o.min_time);
  set_number(L, "max_time", o.max_time);
  set_number(L, "noise", o.noise);
  set_boolean(L, "cold", o.cold);
  set_boolean(L, "hot", o.hot);
  lua_setfield(L, -2, "options");
  set_metatable(L, kBenchResultType);
}

// What counters= asked for: nothing, the default metrics (true) or a list of names (strict: a
// name the chip cannot count is an error).
struct CounterRequest {
  bool on = false;
  bool strict = false;
  std::vector<std::string> metrics;
};

CounterRequest read_counters_option(lua_State* L, int opts, Runtime& rt) {
  CounterRequest req;
  if (!get_option(L, opts, "counters")) return req;
  if (lua_type(L, -1) == LUA_TBOOLEAN) {
    req.on = lua_toboolean(L, -1);
    req.metrics = measure::default_counter_metrics();
  } else if (lua_type(L, -1) == LUA_TTABLE) {
    const lua_Integer n = luaL_len(L, -1);
    if (n == 0) option_error(opts, "counters", ErrorKind::Value, "the list of metrics is empty");
    for (lua_Integer i = 1; i <= n; ++i) {
      if (lua_rawgeti(L, -1, i) != LUA_TSTRING) {
        option_error(
            opts, "counters", ErrorKind::Type,
            fmt::format("[{}] must be a metric name (a string), got {}", i, luaL_typename(L, -1)));
      }
      req.metrics.emplace_back(lua_tostring(L, -1));
      lua_pop(L, 1);
    }
    req.on = true;
    req.strict = true;
  } else {
    option_error(
        opts, "counters", ErrorKind::Type,
        fmt::format("true or a list of metric names expected, got {}", luaL_typename(L, -1)));
  }
  lua_pop(L, 1);
  if (req.on && rt.kind() == BackendKind::Host) {
    option_error(opts, "counters", ErrorKind::Unsupported,
                 "hardware counters are not available on the host backend (they are the GPU's: run "
                 "with --backend cuda)");
  }
  return req;
}

void set_share(lua_State* L, const char* key, double v) {
  if (!std::isnan(v)) set_number(L, key, v);
}

// The result's device time per call (res.gpu.median: cold samples, or hot batches without
// cold), the time base of the counters' rates; NaN when there is none.
double median_ms(lua_State* L) {
  double v = NAN;
  if (lua_getfield(L, -1, "gpu") == LUA_TTABLE) {
    if (lua_getfield(L, -1, "median") == LUA_TNUMBER) v = lua_tonumber(L, -1);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return v;
}

// Counts `pass` (one call of the benchmark, waited for) with CUPTI's range profiler and adds
// res.counters, res.verdict and res.bound to the result on top of the stack. Before each pass
// the L2 cache is flushed (as before a cold sample) outside the counted range.
void add_counters(lua_State* L, Runtime& rt, Stream& s, const Array* flush,
                  const CounterRequest& req, const std::function<void()>& fn, double bench_ms) {
  const int device = s.device();
  const measure::DevicePeaks& peaks = measure::device_peaks(rt, device);
  auto wait = [&] {
    Monitor::Wait w(rt.monitor(), "cu.bench (counters)", false);
    s.synchronize();
  };
  // The pass only queues fn's work: the range's end is queued right behind it. Before each pass the
  // flush buffer is written (the benchmark's data leaves the L2), then its first half is read: the
  // L2 then holds clean lines, so the range does not count the write-back of the flush's own.
  const Array* clean = nullptr;
  Array first_half;
  if (flush) {
    first_half = slice(*flush, 0, 0, flush->shape()[0] / 2, 1);
    clean = &first_half;
  }
  const measure::CounterResult r =
      measure::measure_counters(device, req.metrics, fn, req.strict, [&] {
        if (flush) {
          fill(rt, *flush, Scalar::integer(1), &s);
          reduce(rt, ReduceOp::Max, *clean, std::nullopt, false, nullptr, &s);
        }
        wait();
      });
  wait();
  rt.monitor().idle(s);
  const measure::CounterSummary c = measure::summarize_counters(r, peaks, bench_ms);
  lua_createtable(L, 0, 24);
  lua_createtable(L, 0, static_cast<int>(r.names.size()));
  for (size_t i = 0; i < r.names.size(); ++i) {
    if (i < r.values.size() && !std::isnan(r.values[i]))
      set_number(L, r.names[i].c_str(), r.values[i]);
  }
  lua_setfield(L, -2, "metrics");
  std::vector<std::string> missing;
  for (size_t i = 0; i < r.names.size(); ++i) {
    if (i < r.supported.size() && !r.supported[i]) missing.push_back(r.names[i]);
  }
  set_list(L, "unsupported", missing);
  set_integer(L, "passes", r.passes);
  set_string(L, "chip", r.chip);
  set_share(L, "time_ms", c.time_ms);
  set_share(L, "range_ms", c.range_ms);
  set_share(L, "dram_read_bytes", c.dram_read);
  set_share(L, "dram_write_bytes", c.dram_write);
  set_share(L, "dram_GBps", c.dram_GBps);
  set_share(L, "dram_share", c.dram_share);
  set_share(L, "dram_throughput", c.dram_throughput);
  set_share(L, "sm_throughput", c.sm_throughput);
  set_share(L, "memory_throughput", c.memory_throughput);
  set_share(L, "occupancy", c.occupancy);
  set_share(L, "l1_hit_rate", c.l1_hit);
  set_share(L, "l2_hit_rate", c.l2_hit);
  lua_createtable(L, 0, 3);
  set_share(L, "fp64", c.fp64_flops);
  set_share(L, "fp32", c.fp32_flops);
  set_share(L, "fp16", c.fp16_flops);
  lua_setfield(L, -2, "flops");
  set_share(L, "tensor_instructions", c.tensor_instructions);
  set_share(L, "TFLOPs", c.TFLOPs);
  set_share(L, "flops_share", c.flops_share);
  if (!c.precision.empty()) set_string(L, "precision", c.precision);
  set_share(L, "intensity", c.intensity);
  lua_createtable(L, 0, 6);
  set_share(L, "dram_GBps", peaks.dram_GBps);
  set_string(L, "dram_how", peaks.dram_how);
  set_share(L, "fp64_TFLOPs", peaks.fp64_TFLOPs);
  set_share(L, "fp32_TFLOPs", peaks.fp32_TFLOPs);
  set_share(L, "fp16_TFLOPs", peaks.fp16_TFLOPs);
  set_string(L, "flops_how", peaks.flops_how);
  lua_setfield(L, -2, "peaks");
  lua_setfield(L, -2, "counters");
  set_string(L, "verdict", c.verdict);
  if (!c.bound.empty()) set_string(L, "bound", c.bound);
}

// cu.bench(fn_or_graph [, opts]). A graph is timed by its launches; {graph=true} times fn
// eagerly, then captured as a graph, and reports both (res.graph, res.graph_speedup).
int l_bench(lua_State* L) {
  Graph* graph = lua_type(L, 1) == LUA_TUSERDATA ? test_graph(L, 1) : nullptr;
  if (!graph && lua_type(L, 1) != LUA_TFUNCTION) type_error(L, 1, "function or cu.Graph");
  check_options(L, 2,
                {"name", "warmup", "min_samples", "min_time", "max_time", "noise", "cold", "hot",
                 "bytes", "flops", "stream", "graph", "counters"});
  measure::BenchOptions o;
  if (get_option(L, 2, "name")) {
    if (lua_type(L, -1) != LUA_TSTRING) {
      option_error(2, "name", ErrorKind::Type,
                   fmt::format("string expected, got {}", luaL_typename(L, -1)));
    }
    o.name = lua_tostring(L, -1);
    lua_pop(L, 1);
  } else {
    o.name = graph ? graph->name() : defined_at(L, 1);
  }
  o.warmup = opt_count(L, 2, "warmup", o.warmup);
  o.min_samples = opt_count(L, 2, "min_samples", o.min_samples);
  o.min_time = opt_number(L, 2, "min_time", o.min_time);
  // Without an explicit max_time, a long min_time extends it.
  o.max_time = opt_number(L, 2, "max_time", std::max(o.max_time, 2 * o.min_time));
  o.noise = opt_number(L, 2, "noise", o.noise);
  o.cold = opt_boolean(L, 2, "cold", o.cold);
  o.hot = opt_boolean(L, 2, "hot", o.hot);
  if (get_option(L, 2, "bytes")) {
    lua_pop(L, 1);
    o.bytes = opt_number(L, 2, "bytes", 0);
  }
  if (get_option(L, 2, "flops")) {
    lua_pop(L, 1);
    o.flops = opt_number(L, 2, "flops", 0);
  }
  const bool as_graph = opt_boolean(L, 2, "graph", false);
  if (as_graph && graph) {
    option_error(2, "graph", ErrorKind::Value, "is for functions; a cu.Graph is timed as one");
  }
  as_argument(2, [&] { measure::check_options(o); });

  Runtime& rt = runtime(L);
  const CounterRequest counters = read_counters_option(L, 2, rt);
  Stream* given = opt_stream(L, 2);
  Stream& s = given ? *given : rt.current_stream();
  const std::shared_ptr<Stream> keep = s.shared_from_this();  // even if fn releases it
  const Array* flush = o.cold ? flush_buffer(L, rt, s) : nullptr;
  lua_settop(L, 2);
  CurrentStreamScope scope(rt, s);
  if (graph) {
    const std::shared_ptr<Graph> g = graph->shared_from_this();
    push_result(L, measure::run_bench(
                       rt, s, flush, [&] { g->launch(s, 1); }, o));
    if (counters.on) {
      add_counters(
          L, rt, s, flush, counters, [&] { g->launch(s, 1); }, median_ms(L));
    }
    return 1;
  }
  const std::function<void()> fn = [L] {
    lua_pushvalue(L, 1);
    call_lua(L, 0, 0);
  };
  // max_time bounds the whole call: the eager and the graph runs share one deadline.
  if (as_graph) {
    o.deadline = std::chrono::steady_clock::now() +
                 std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                     std::chrono::duration<double>(o.max_time));
  }
  const measure::BenchResult eager = measure::run_bench(rt, s, flush, fn, o);
  push_result(L, eager);
  if (counters.on) add_counters(L, rt, s, flush, counters, fn, median_ms(L));
  if (!as_graph) return 1;
  // The same function as a graph (captured after the eager runs warmed it up).
  std::shared_ptr<Graph> g;
  {
    const bool was_running = lua_gc(L, LUA_GCISRUNNING) != 0;
    lua_gc(L, LUA_GCSTOP);
    struct Restart {
      lua_State* L;
      bool on;
      ~Restart() {
        if (on) lua_gc(L, LUA_GCRESTART);
      }
    } restart{L, was_running};
    g = Graph::capture(rt, s, o.name, defined_at(L, 1), fn);
  }
  measure::BenchOptions go = o;
  go.name = o.name + " (graph)";
  const measure::BenchResult as = measure::run_bench(
      rt, s, flush, [&] { g->launch(s, 1); }, go);
  push_result(L, as);
  lua_setfield(L, -2, "graph");
  if (eager.gpu && as.gpu && as.gpu->median > 0) {
    lua_pushnumber(L, eager.gpu->median / as.gpu->median);
    lua_setfield(L, -2, "graph_speedup");
  }
  lua_pushinteger(L, static_cast<lua_Integer>(g->nodes()));
  lua_setfield(L, -2, "graph_nodes");
  return 1;
}

// Pushes t[key] (t at idx) without metamethods (a result's __index raises for unknown names, and
// tostring must print an edited or sparse result as it is); returns its type.
int raw_field(lua_State* L, int idx, const char* key) {
  idx = lua_absindex(L, idx);
  lua_pushstring(L, key);
  return lua_rawget(L, idx);
}

// The number at t[key] (t at idx), if any.
std::optional<double> number_field(lua_State* L, int idx, const char* key) {
  std::optional<double> v;
  if (raw_field(L, idx, key) == LUA_TNUMBER) v = lua_tonumber(L, -1);
  lua_pop(L, 1);
  return v;
}

// tostring(res): from the table's fields, so that a renamed or edited result prints as it is.
int r_tostring(lua_State* L) {
  check_type(L, 1, kBenchResultType);
  measure::BenchLine l;
  if (raw_field(L, 1, "name") == LUA_TSTRING) l.name = lua_tostring(L, -1);
  lua_pop(L, 1);
  if (raw_field(L, 1, "mode") == LUA_TSTRING) l.mode = lua_tostring(L, -1);
  lua_pop(L, 1);
  l.samples = static_cast<int64_t>(number_field(L, 1, "samples").value_or(0));
  if (raw_field(L, 1, "gpu") == LUA_TTABLE) {
    measure::Summary g;
    g.median = number_field(L, -1, "median").value_or(NAN);
    g.noise = number_field(L, -1, "noise").value_or(NAN);
    g.p10 = number_field(L, -1, "p10").value_or(NAN);
    g.p90 = number_field(L, -1, "p90").value_or(NAN);
    l.gpu = g;
  }
  lua_pop(L, 1);
  if (raw_field(L, 1, "cpu") == LUA_TTABLE) l.cpu_median = number_field(L, -1, "median");
  lua_pop(L, 1);
  l.GBps = number_field(L, 1, "GBps");
  l.TFLOPs = number_field(L, 1, "TFLOPs");
  if (raw_field(L, 1, "hot") == LUA_TTABLE) {
    if (auto n = number_field(L, -1, "batch_size")) l.hot_batch_size = static_cast<int64_t>(*n);
    if (auto n = number_field(L, -1, "batches"); n && l.gpu)
      l.gpu->count = static_cast<int64_t>(*n);
    if (raw_field(L, -1, "gpu") == LUA_TTABLE) l.hot_gpu_median = number_field(L, -1, "median");
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  if (auto n = number_field(L, 1, "throttled")) l.throttled = static_cast<int64_t>(*n);
  raw_field(L, 1, "launch_bound");
  l.launch_bound = lua_toboolean(L, -1);
  lua_pop(L, 1);
  std::string line = measure::format_line(l);
  // {graph=true}: the graph's line below, with the speed-up.
  if (raw_field(L, 1, "graph") == LUA_TTABLE) {
    lua_pushcfunction(L, entry<r_tostring>);
    lua_pushvalue(L, -2);
    call_lua(L, 1, 1);
    line += "\n";
    line += lua_tostring(L, -1);
    lua_pop(L, 1);
    if (auto speedup = number_field(L, 1, "graph_speedup")) {
      line += fmt::format("  [{:.2f}x eager]", *speedup);
    }
  }
  lua_pop(L, 1);
  if (raw_field(L, 1, "verdict") == LUA_TSTRING) {
    line += "\n  ";
    line += lua_tostring(L, -1);
  }
  lua_pop(L, 1);
  lua_pushlstring(L, line.data(), line.size());
  return 1;
}

// res:plot{kind = "roofline", file = ...} (or res:plot(file)): the result's point on the roofline
// of its device (a result with counters).
int r_plot(lua_State* L) {
  check_type(L, 1, kBenchResultType);
  std::string file, title;
  if (lua_type(L, 2) == LUA_TSTRING) {
    file = lua_tostring(L, 2);
  } else if (lua_type(L, 2) == LUA_TTABLE) {
    check_options(L, 2, {"kind", "file", "title"});
    if (get_option(L, 2, "kind")) {
      if (lua_type(L, -1) != LUA_TSTRING || std::string_view(lua_tostring(L, -1)) != "roofline") {
        option_error(2, "kind", ErrorKind::Value,
                     fmt::format("a bench result plots kind = \"roofline\", got {} (plot sweeps "
                                 "with results:plot or cu.plot)",
                                 luaL_tolstring(L, -1, nullptr)));
      }
      lua_pop(L, 1);
    }
    if (get_option(L, 2, "file")) {
      if (lua_type(L, -1) != LUA_TSTRING)
        option_error(2, "file", ErrorKind::Type, "string expected");
      file = lua_tostring(L, -1);
      lua_pop(L, 1);
    }
    if (get_option(L, 2, "title")) {
      if (lua_type(L, -1) != LUA_TSTRING)
        option_error(2, "title", ErrorKind::Type, "string expected");
      title = lua_tostring(L, -1);
      lua_pop(L, 1);
    }
  } else if (!lua_isnoneornil(L, 2)) {
    type_error(L, 2, "a file name or {kind = \"roofline\", file = ...}");
  }
  const std::vector<json::Value> rows{to_json_value(L, 1, {})};
  auto draw = [&](const std::string& to) {
    measure::plot_roofline_rows(rows, {}, to, title, "res:plot");
  };
  if (file.empty() && show_plot_inline(L, draw)) return 0;
  if (file.empty()) arg_error(2, "needs file= (a .png or .svg file)");
  draw(file);
  lua_pushstring(L, file.c_str());
  return 1;
}

// res:json([indent]): the whole result as a JSON string.
int r_json(lua_State* L) {
  check_type(L, 1, kBenchResultType);
  const int indent = static_cast<int>(opt_arg_integer(L, 2, -1));
  // Tables with keys 1..n and empty tables are lists, other tables objects (keys sorted);
  // functions, userdata and threads are left out.
  const std::string text = json::write(to_json_value(L, 1, {}), {indent, false});
  lua_pushlstring(L, text.data(), text.size());
  return 1;
}

// The fields a result may lack (push_result sets them only when they apply); reading one of them
// gives nil, reading any other missing name is an error (a typo such as res.gpu_median).
constexpr const char* kOptionalFields[] = {"gpu",
                                           "cpu",
                                           "bytes",
                                           "flops",
                                           "GBps",
                                           "TFLOPs",
                                           "hot",
                                           "gated",
                                           "stop",
                                           "clock",
                                           "throttled",
                                           "throttled_samples",
                                           "throttle_reasons",
                                           "graph",
                                           "graph_speedup",
                                           "graph_nodes",
                                           "counters",
                                           "verdict",
                                           "bound"};

// __index: the methods (upvalue 1), then nil for the optional fields, else an error.
int r_index(lua_State* L) {
  check_type(L, 1, kBenchResultType);
  lua_pushvalue(L, 2);
  if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL) return 1;
  if (lua_type(L, 2) == LUA_TSTRING) {
    const std::string_view key = lua_tostring(L, 2);
    for (const char* f : kOptionalFields) {
      if (key == f) return 1;  // the nil on top
    }
  }
  fail(
      ErrorKind::Index,
      "cu.BenchResult has no field or method '{}' (see cu.help(\"cu.BenchResult\") for its fields)",
      luaL_tolstring(L, 2, nullptr));
}

}  // namespace

void register_bench(lua_State* L) {
  new_metatable(L, kBenchResultType);
  lua_pushcfunction(L, entry<r_tostring>);
  lua_setfield(L, -2, "__tostring");
  const luaL_Reg methods[] = {{"json", entry<r_json>}, {"plot", entry<r_plot>}, {nullptr, nullptr}};
  luaL_newlib(L, methods);
  lua_pushcclosure(L, entry<r_index>, 1);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
  lua_pushcfunction(L, entry<l_bench>);
  lua_setfield(L, -2, "bench");
}

}  // namespace culua::detail::lua
