// The embedding API (include/culua/culua.hpp) on the host backend, through the shared library as
// an application uses it.
#include <catch2/catch.hpp>
#include <culua/culua.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

culua::Options host() {
  culua::Options o;
  o.backend = culua::Backend::Host;
  return o;
}

std::string temp_script(const std::string& name, const std::string& text) {
  const std::string path = "/tmp/culua_embed_test_" + name + ".lua";
  std::ofstream(path) << text;
  return path;
}

}  // namespace

TEST_CASE("run_string, set and get of numbers, strings and booleans") {
  culua::Runtime rt(host());
  CHECK(rt.backend() == "host");
  rt.set("n", 21);
  rt.set("name", "culua");
  rt.set("flag", true);
  rt.set("x", 1.5);
  rt.run_string("m = n * 2; s = name .. '!'; f = not flag; y = x * 2");
  CHECK(rt.get<int>("m") == 42);
  CHECK(rt.get<std::string>("s") == "culua!");
  CHECK(rt.get<bool>("f") == false);
  CHECK(rt.get<double>("y") == 3.0);
  CHECK(rt.get("missing").is_nil());
  CHECK_FALSE(rt.has("missing"));
  CHECK(rt.eval<int>("m + 1") == 43);
  CHECK(rt.eval<std::string>("cu.backend") == "host");

  SECTION("dotted names reach fields of tables") {
    rt.run_string("config = {alpha = 0.5, inner = {k = 3}}");
    CHECK(rt.get<double>("config.alpha") == 0.5);
    CHECK(rt.get<int>("config.inner.k") == 3);
    rt.set("config.inner.k", 4);
    CHECK(rt.eval<int>("config.inner.k") == 4);
    CHECK(rt.get("config.nothing.here").is_nil());
    CHECK_THROWS_WITH(rt.set("nothing.here", 1), Catch::Contains("no table at \"nothing\""));
  }
}

TEST_CASE("get<T> of the wrong type throws and names both types") {
  culua::Runtime rt(host());
  rt.run_string("s = 'text'; t = {}; f = 2.5");
  CHECK_THROWS_WITH(rt.get<double>("s"), Catch::Contains("get(\"s\")") &&
                                             Catch::Contains("number expected, got string"));
  CHECK_THROWS_WITH(rt.get<std::string>("t"), Catch::Contains("got table"));
  CHECK_THROWS_WITH(rt.get<int>("f"), Catch::Contains("no integer representation"));
  CHECK_THROWS_WITH(rt.get<culua::Array>("missing"), Catch::Contains("cu.Array expected, got nil"));
  CHECK(rt.get("t").type() == culua::Value::Type::Other);
  CHECK(rt.get("t").type_name() == "table");
}

TEST_CASE("call<T> calls Lua functions with C++ arguments") {
  culua::Runtime rt(host());
  rt.run_string(R"(
    function score(k) return k * 1.5 end
    function pair(a, b) return a + b, a .. '/' .. b end
    function nothing() end
    lib = {twice = function(x) return 2 * x end}
    callable = setmetatable({}, {__call = function(_, x) return x + 1 end})
  )");
  CHECK(rt.call<double>("score", 3) == 4.5);
  CHECK(rt.call<int>("lib.twice", 21) == 42);
  CHECK(rt.call<int>("callable", 41) == 42);
  const auto [sum, text] = rt.call<std::tuple<int, std::string>>("pair", 1, 2);
  CHECK(sum == 3);
  CHECK(text == "1/2");
  CHECK(rt.call<std::vector<culua::Value>>("pair", 3, 4).size() == 2);
  rt.call("nothing");
  CHECK(rt.call<culua::Value>("nothing").is_nil());

  SECTION("a missing function") {
    CHECK_THROWS_WITH(rt.call<double>("nope", 1),
                      Catch::Contains("call(\"nope\"): not a function (nil)"));
  }
  SECTION("a result of the wrong type") {
    rt.run_string("function text() return 'seven' end");
    CHECK_THROWS_WITH(rt.call<double>("text"), Catch::Contains("result 1") &&
                                                   Catch::Contains("number expected, got string"));
    CHECK_THROWS_WITH(rt.call<double>("nothing"), Catch::Contains("number expected, got nil"));
  }
  SECTION("the runtime stays usable after errors") {
    CHECK_THROWS(rt.call<double>("nope"));
    CHECK(rt.call<double>("score", 2) == 3.0);
  }
}

TEST_CASE("Lua errors become culua::Error with the traceback") {
  culua::Runtime rt(host());
  const std::string path = temp_script("errors", R"(
local function inner() error("deliberate failure") end
function outer() inner() end
outer()
)");
  try {
    rt.run_file(path);
    FAIL("no exception");
  } catch (const culua::Error& e) {
    CHECK_THAT(e.message(), Catch::Contains("deliberate failure"));
    CHECK_THAT(e.message(), Catch::Contains("culua_embed_test_errors.lua:2"));
    CHECK_THAT(e.traceback(), Catch::StartsWith("stack traceback:"));
    CHECK_THAT(e.traceback(), Catch::Contains("'inner'"));
    CHECK_THAT(e.traceback(), Catch::Contains("outer"));
    CHECK_THAT(std::string(e.what()),
               Catch::Contains("deliberate failure") && Catch::Contains("stack traceback"));
  }
  SECTION("syntax errors, errors of cu, and a missing file") {
    CHECK_THROWS_WITH(rt.run_string("x = = 1", "=snippet"), Catch::Contains("snippet:1:"));
    CHECK_THROWS_WITH(rt.run_string("cu.zeros(-1)"), Catch::Contains("zeros"));
    CHECK_THROWS_WITH(rt.run_file("/nonexistent/script.lua"), Catch::Contains("cannot open"));
  }
  SECTION("the kind of a culua error") {
    try {
      rt.run_string("cu.zeros(-1)", "=kinds");
      FAIL("no exception");
    } catch (const culua::Error& e) {
      CHECK(e.kind() == "value");
      CHECK_THAT(e.message(), Catch::StartsWith("kinds:1: bad argument #1 to 'zeros' (size -1"));
    }
    try {
      rt.run_string("local a = cu.zeros(2); a:free(); return a:sum()");
      FAIL("no exception");
    } catch (const culua::Error& e) {
      CHECK(e.kind() == "released");
    }
    try {
      rt.run_string("error('plain')");
      FAIL("no exception");
    } catch (const culua::Error& e) {
      CHECK(e.kind().empty());
    }
  }
  SECTION("non-string error values") {
    CHECK_THROWS_WITH(rt.run_string("error({})"), Catch::Contains("error object is a table value"));
  }
  rt.run_string("ok = 1");
  CHECK(rt.get<int>("ok") == 1);
}

TEST_CASE("run_file passes arguments as arg and ...") {
  culua::Runtime rt(host());
  const std::string path =
      temp_script("args", "local a, b = ...\nresult = a .. b .. #arg .. arg[0]:sub(-8)");
  rt.run_file(path, {"x", "y"});
  CHECK(rt.get<std::string>("result") == "xy2args.lua");
}

TEST_CASE("C++ functions registered with set_function") {
  culua::Runtime rt(host());
  int calls = 0;
  rt.set_function("add", [&calls](double a, double b) {
    ++calls;
    return a + b;
  });
  rt.set_function("greet", [](const std::string& who) { return "hello " + who; });
  rt.set_function("divmod", [](int64_t a, int64_t b) { return std::make_tuple(a / b, a % b); });
  rt.set_function("fail", [](int) -> int { throw std::runtime_error("it broke"); });
  rt.set_function("count", [](const std::vector<culua::Value>& args) {
    return std::vector<culua::Value>{static_cast<int64_t>(args.size())};
  });
  rt.run_string("lib = {}");
  rt.set_function("lib.neg", [](double x) { return -x; });

  rt.run_string(R"(
    r1 = add(1, 2)
    r2 = greet('lua')
    q, m = divmod(17, 5)
    n = count(1, 'a', nil, {})
    r3 = lib.neg(4)
  )");
  CHECK(calls == 1);
  CHECK(rt.get<double>("r1") == 3);
  CHECK(rt.get<std::string>("r2") == "hello lua");
  CHECK(rt.get<int>("q") == 3);
  CHECK(rt.get<int>("m") == 2);
  CHECK(rt.get<int>("n") == 4);
  CHECK(rt.get<double>("r3") == -4);

  SECTION("argument errors read like Lua's") {
    rt.run_string("ok, err = pcall(add, 1, 'two')");
    CHECK(rt.get<std::string>("err").find(
              "bad argument #2 to 'add' (number expected, got string)") != std::string::npos);
    rt.run_string("ok, err = pcall(add, 1)");
    CHECK(rt.get<std::string>("err").find("bad argument #2 to 'add' (number expected, got nil)") !=
          std::string::npos);
  }
  SECTION("a C++ exception becomes a Lua error the script can catch") {
    rt.run_string("ok, err = pcall(fail, 1)");
    CHECK(rt.get<bool>("ok") == false);
    CHECK_THAT(rt.get<std::string>("err"), Catch::Contains("fail: it broke"));
    CHECK_THROWS_WITH(rt.run_string("fail(1)"), Catch::Contains("fail: it broke"));
  }
  SECTION("C++ calling Lua calling C++") {
    rt.run_string("function via(x) return add(x, 10) end");
    CHECK(rt.call<double>("via", 5) == 15);
  }
}

TEST_CASE("Array::wrap shares the application's memory without a copy") {
  std::vector<float> data(1000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i);
  {
    culua::Runtime rt(host());
    const culua::Array x = culua::Array::wrap(data.data(), {10, 100}, culua::DType::F32);
    CHECK(x.is_wrapped());
    CHECK(x.size() == 1000);
    CHECK(x.nbytes() == 4000);
    rt.set("x", x);
    CHECK(rt.eval<double>("x:sum():item()") == Approx(499500.0));
    CHECK(rt.eval<std::string>("x.dtype") == "f32");
    // The script writes into the application's memory ...
    rt.run_string("x:fill(2); x[1][1] = 7; cu.sync()");
    CHECK(data[0] == 7.0f);
    CHECK(data[999] == 2.0f);
    // ... and sees the application's writes.
    data[5] = 100.0f;
    CHECK(rt.eval<double>("x[1][6]") == 100.0);
    // The handle read back is the same memory.
    const culua::Array back = rt.get<culua::Array>("x");
    CHECK(back.data() == data.data());
    CHECK(back.shape() == std::vector<int64_t>{10, 100});
    CHECK(back.dtype() == culua::DType::F32);
    CHECK(back.to_vector<float>()[5] == 100.0f);
    rt.run_string("x = nil; collectgarbage(); collectgarbage()");
  }
  // The runtime is gone and never freed the memory: still ours, still intact.
  CHECK(data[0] == 7.0f);
  data.assign(1000, 1.0f);
  CHECK(data[999] == 1.0f);
}

TEST_CASE("arrays made by a script are read from C++ and outlive the runtime") {
  culua::Array a;
  {
    culua::Runtime rt(host());
    a = rt.eval<culua::Array>("cu.arange(0, 6, 1, 'i32'):reshape(2, 3) * 2");
    CHECK_FALSE(a.is_wrapped());
    CHECK(a.on_device());
    CHECK(a.shape() == std::vector<int64_t>{2, 3});
    CHECK(a.dtype() == culua::DType::I32);
  }
  CHECK(a.to_vector<int32_t>() == std::vector<int32_t>{0, 2, 4, 6, 8, 10});
  std::vector<int32_t> in{1, 2, 3, 4, 5, 6};
  a.copy_from_host(in.data(), in.size() * sizeof(int32_t));
  CHECK(a.to_vector<int32_t>() == in);
  CHECK_THROWS_WITH(a.copy_to_host(in.data(), 3),
                    Catch::Contains("3 bytes given, the array has 24"));
}

TEST_CASE("Array::wrap bad input") {
  float x = 0;
  CHECK_THROWS_WITH(culua::Array::wrap(nullptr, {4}, culua::DType::F32),
                    Catch::Contains("null pointer"));
  CHECK_THROWS_WITH(culua::Array::wrap(&x, {}, culua::DType::F32), Catch::Contains("empty shape"));
  CHECK_THROWS_WITH(culua::Array::wrap(&x, {4, 0}, culua::DType::F32),
                    Catch::Contains("must be positive"));
  const culua::Array w = culua::Array::wrap(&x, {1}, culua::DType::F32);
  CHECK_THROWS_WITH(w.to_vector<float>(), Catch::Contains("not been set into a Runtime"));
  CHECK_THROWS_WITH(culua::Value(culua::Array()).as_array(), Catch::Contains("empty culua::Array"));
}

TEST_CASE("several runtimes are independent") {
  culua::Runtime a(host());
  culua::Runtime b(host());
  a.run_string("v = cu.full(4, 1.0); name = 'a'");
  b.run_string("v = cu.full(4, 2.0); name = 'b'");
  CHECK(a.eval<double>("v:sum():item()") == 4.0);
  CHECK(b.eval<double>("v:sum():item()") == 8.0);
  CHECK(a.get<std::string>("name") == "a");
  CHECK_THROWS(b.run_string("error('only b fails')"));
  CHECK(a.eval<double>("v:sum():item()") == 4.0);
  CHECK(b.eval<double>("v:sum():item()") == 8.0);
  // An array of one runtime cannot be set into another; wrapped memory can, in both.
  const culua::Array va = a.get<culua::Array>("v");
  CHECK_THROWS_WITH(b.set("w", va), Catch::Contains("belongs to another culua::Runtime"));
  std::vector<double> shared(3, 1.0);
  const culua::Array s = culua::Array::wrap(shared.data(), {3}, culua::DType::F64);
  a.set("s", s);
  b.set("s", s);
  a.run_string("s:fill(5); cu.sync()");
  CHECK(b.eval<double>("s:sum():item()") == 15.0);
  // Moving a runtime keeps its state.
  culua::Runtime c = std::move(a);
  CHECK(c.get<std::string>("name") == "a");
  CHECK_THROWS_WITH(a.get<int>("name"), Catch::Contains("moved-from"));
}

TEST_CASE("use_stream needs the CUDA backend") {
  culua::Runtime rt(host());
  CHECK_THROWS_WITH(rt.use_stream(reinterpret_cast<CUstream_st*>(0x1)),
                    Catch::Contains("host backend has no CUDA streams"));
  rt.use_stream(nullptr);  // back to culua's own stream: fine everywhere
  rt.run_string("x = cu.ones(3):sum():item()");
  CHECK(rt.get<double>("x") == 3);
}

TEST_CASE("interrupt() stops running Lua code from another thread") {
  culua::Runtime rt(host());
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    rt.interrupt();
  });
  const auto t0 = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(rt.run_string("while true do end"), Catch::Contains("interrupted"));
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  t.join();
  CHECK(s < 5.0);
  // A long wait for the device (the host backend's sleep keeps its stream busy) stops too, with
  // the wait's own message; the queued work goes on and the runtime stays usable.
  std::thread t2([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    rt.interrupt();
  });
  const auto t1 = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(rt.run_string("a = cu.ones(100); cu.sleep(3000); cu.sync()"),
                    Catch::Contains("interrupted (queued device work continues)"));
  const double s2 = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  t2.join();
  CHECK(s2 < 5.0);
  std::printf("interrupt of a device wait after %.1f ms (0.2 s of it before the interrupt)\n",
              s2 * 1e3);
  // An interrupt with nothing running does not hit the next call.
  rt.interrupt();
  rt.run_string("y = 1");
  CHECK(rt.get<int>("y") == 1);
}

TEST_CASE("a restricted runtime without io and os") {
  culua::Options o = host();
  o.open_libs = false;
  culua::Runtime rt(o);
  CHECK(rt.eval<std::string>("type(io)") == "nil");
  CHECK(rt.eval<std::string>("type(os)") == "nil");
  CHECK(rt.eval<std::string>("type(string.format)") == "function");
  CHECK(rt.eval<double>("cu.ones(2):sum():item()") == 2);
}
