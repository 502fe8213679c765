// An application that lets its users script a GPU pipeline with culua: it shares its own memory
// with the script (no copy), gives the script a C++ function, runs the script, calls back into it
// and reads its results.
//   embed_example [host|cuda]
#include <culua/culua.hpp>

#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  culua::Options options;
  if (argc > 1)
    options.backend = std::string(argv[1]) == "host" ? culua::Backend::Host : culua::Backend::Cuda;
  try {
    culua::Runtime rt(options);
    std::printf("culua %s, backend %s\n", std::string(culua::version()).c_str(),
                rt.backend().c_str());

    // A function of the application, callable from the script.
    rt.set_function("report", [](const std::string& what, double value) {
      std::printf("  %-18s %g\n", what.c_str(), value);
    });

    // The script: the application's "user code".
    rt.run_string(R"(
      function normalize(x)          -- scales x in place so that it sums to 1
        local total = x:sum()
        report("sum before", total:item())   -- a call into C++
        cu.div(x, total, {out = x})
      end
      function energy(x) return (x * x):sum():item() end
    )",
                  "=user_script");

    // Data of the application: host memory here. With the CUDA backend, wrap device memory
    // (cudaMalloc) the same way; on the host backend arrays live in host memory.
    const int64_t n = 1000;
    std::vector<float> data(n, 2.0f);
    culua::Array x;
    if (rt.backend() == "host") {
      x = culua::Array::wrap(data.data(), {n}, culua::DType::F32);  // no copy
    } else {
      x = rt.eval<culua::Array>("cu.empty(" + std::to_string(n) + ")");
      x.copy_from_host(data.data(), data.size() * sizeof(float));
    }
    rt.set("x", x);
    rt.call("normalize", x);
    const double e = rt.call<double>("energy", x);
    std::printf("  energy             %g (expected %g)\n", e, 1.0 / n);
    const std::vector<float> back = x.to_vector<float>();
    std::printf("  x[0]               %g (expected %g)\n", back[0], 1.0 / n);
    if (rt.backend() == "host") std::printf("  shared memory      data[0] = %g\n", data[0]);

    // Errors in the script surface as culua::Error with the Lua traceback.
    try {
      rt.call("energy", "not an array");
    } catch (const culua::Error& err) {
      std::printf("  script error       %s\n", err.message().c_str());
    }
    const bool ok = back[0] > 0.00099f && back[0] < 0.00101f;
    return ok ? 0 : 1;
  } catch (const culua::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
