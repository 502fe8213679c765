// The sandbox's parts below Lua (core/runtime/sandbox.hpp): the file policy and the checks of a
// sandboxed compile. The whole sandbox is tested through the embedding API
// (tests/embed/test_sandbox.cpp) and the CLI (tests/cli/test_sandbox.lua).
#include "helpers.hpp"

#include "core/runtime/sandbox.hpp"

using namespace culua::detail;
using namespace culua::detail::test;

TEST_CASE("sandbox: the file policy", "[sandbox]") {
  check_file_write("/tmp/anything.json");  // no policy: no sandbox
  check_file_read("/tmp/anything.json");
  FilePolicy policy;
  policy.writable = {"out.json"};
  set_file_policy(&policy);
  CHECK(sandboxed());
  check_file_write("out.json");
  check_file_write("./out.json");  // the same file
  CHECK(error_message_of([] { check_file_write("other.json"); }) ==
        "the sandbox does not allow writing 'other.json' (only 'out.json' is allowed)");
  CHECK(error_kind_of([] { check_file_write("../out.json"); }) == ErrorKind::Limit);
  CHECK(error_message_of([] { check_file_read("out.json"); }) ==
        "the sandbox does not allow reading 'out.json'");
  set_file_policy(nullptr);
  CHECK_FALSE(sandboxed());
}

TEST_CASE("sandbox: a sandboxed compile", "[sandbox]") {
  RtcRequest r;
  r.source = "#include </etc/passwd>\n";
  check_sandboxed_compile(r);  // no sandbox: anything
  CHECK(r.use_cache);
  FilePolicy policy;
  set_file_policy(&policy);
  const auto message = [](RtcRequest q) {
    return error_message_of([&] { check_sandboxed_compile(q); });
  };
  CHECK(message(r) ==
        "the sandbox does not allow 'include' in kernel source (no file of the machine may be "
        "read by the compiler)");
  r.source = "  #  include <cuda_fp16.h>\n#include <cuda_bf16.h>\n__global__ void k() {}\n";
  r.options = {"-DN=4", "--use_fast_math", "-arch=sm_90", "-O3", "--fmad=false"};
  check_sandboxed_compile(r);
  CHECK_FALSE(r.use_cache);
  r.source = "#include <cuda_fp16.h> // and\n";
  CHECK_FALSE(message(r).empty());
  r.source = "#define X __has_include(<stdio.h>)\n";
  CHECK_FALSE(message(r).empty());
  // As the preprocessor reads it: line splices, trigraphs and universal character names undone.
  for (const char* src : {"#inc\\\nlude \"/etc/passwd\"\n", "#inc\\ \t\r\nlude </etc/passwd>\n",
                          "#\\u0069nclude </etc/passwd>\n", "#\\U00000069nclude <x>\n",
                          "#inc?\?/\nlude <x>\n", "__has_inc\\\nlude(<x>)"}) {
    r.source = src;
    INFO(src);
    CHECK(message(r).find("the sandbox does not allow 'include' in kernel source") == 0);
  }
  for (const char* src : {"#embed \"/etc/passwd\"\n", "  %: /* x */ embed <x>\n",
                          "#/*\n*/import <x>\n", "#emb\\\ned <x>\n"}) {
    r.source = src;
    INFO(src);
    CHECK(message(r).find("the sandbox does not allow '#") == 0);
  }
  r.source = "#if __has_embed(\"/etc/passwd\")\n#endif\n";
  CHECK(message(r).find("the sandbox does not allow '__has_embed'") == 0);
  // Neither directives nor names: allowed.
  r.source = "// #embed after a line comment: no directive\nint embed = 1;\n";
  check_sandboxed_compile(r);
  r.source = "__global__ void k() {}";
  r.include_paths = {"/etc"};
  CHECK(message(r) == "the sandbox does not allow include paths (option 'include_paths')");
  r.include_paths.clear();
  for (const char* o : {"-I/etc", "--include-path=/etc", "--pre-include=/etc/passwd", "-o",
                        "--dump-ptx", "-Dinclude=1", "-G0", "--time=x.csv"}) {
    r.options = {o};
    INFO(o);
    CHECK(message(r).find("the sandbox does not allow the compiler option '" + std::string(o) +
                          "'") == 0);
  }
  set_file_policy(nullptr);
}

TEST_CASE("sandbox: limits in messages", "[sandbox]") {
  CHECK(format_limit_bytes(uint64_t{1} << 30) == "1 GiB");
  CHECK(format_limit_bytes(uint64_t{256} << 20) == "256 MiB");
  CHECK(format_limit_bytes(3072) == "3 KiB");
  CHECK(format_limit_bytes(1000) == "1000 bytes");
}
