// cu.nccl without a GPU: the loader's error when libnccl.so.2 is absent (CUDA builds), the
// reduction operators, how each dtype travels through NCCL, and the checks of a collective made
// before anything is queued (arrays of the host backend stand in for device arrays).
#include "helpers.hpp"

#include <cstdlib>
#include <functional>
#include <string>

#include "dist/collectives.hpp"
#if CULUA_HAVE_CUDA
#include "dist/nccl_api.hpp"
#endif

using namespace culua::detail;
using namespace culua::detail::test;
using namespace culua::detail::dist;

namespace {

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("nccl: reduction operators by name") {
  CHECK(parse_reduce_op("sum") == ReduceOp::Sum);
  CHECK(parse_reduce_op("prod") == ReduceOp::Prod);
  CHECK(parse_reduce_op("max") == ReduceOp::Max);
  CHECK(parse_reduce_op("min") == ReduceOp::Min);
  CHECK(parse_reduce_op("avg") == ReduceOp::Avg);
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Max, ReduceOp::Min, ReduceOp::Avg})
    CHECK(parse_reduce_op(reduce_op_name(op)) == op);
  CHECK(error_kind_of([] { parse_reduce_op("mean"); }) == ErrorKind::Value);
  CHECK(contains(message_of([] { parse_reduce_op("Sum"); }),
                 "expected one of sum, prod, max, min, avg, got 'Sum'"));
}

TEST_CASE("nccl: collective names as traces show them") {
  CHECK(std::string(collective_name(Collective::AllReduce)) == "nccl.allreduce");
  CHECK(std::string(collective_name(Collective::ReduceScatter)) == "nccl.reducescatter");
  CHECK(std::string(collective_name(Collective::Recv)) == "nccl.recv");
  CHECK(reduces(Collective::Reduce));
  CHECK_FALSE(reduces(Collective::AllGather));
}

TEST_CASE("nccl: dtypes as NCCL reduces them") {
  const auto reduce = [](DType t, ReduceOp op = ReduceOp::Sum) {
    return wire_type(t, Collective::AllReduce, op);
  };
  CHECK(reduce(DType::F32).nccl_type == nccl_type::Float32);
  CHECK(reduce(DType::F64).nccl_type == nccl_type::Float64);
  CHECK(reduce(DType::F16).nccl_type == nccl_type::Float16);
  CHECK(reduce(DType::BF16).nccl_type == nccl_type::Bfloat16);
  CHECK(reduce(DType::I8).nccl_type == nccl_type::Int8);
  CHECK(reduce(DType::I32).nccl_type == nccl_type::Int32);
  CHECK(reduce(DType::I64).nccl_type == nccl_type::Int64);
  CHECK(reduce(DType::U8).nccl_type == nccl_type::Uint8);
  CHECK(reduce(DType::U32).nccl_type == nccl_type::Uint32);
  CHECK(reduce(DType::U64).nccl_type == nccl_type::Uint64);
  CHECK(reduce(DType::F32).per_item == 1);
  // Complex numbers are pairs of reals: sum and avg only.
  CHECK(reduce(DType::C64).nccl_type == nccl_type::Float32);
  CHECK(reduce(DType::C64).per_item == 2);
  CHECK(reduce(DType::C128, ReduceOp::Avg).nccl_type == nccl_type::Float64);
  CHECK(error_kind_of([&] { reduce(DType::C64, ReduceOp::Max); }) == ErrorKind::Type);
  CHECK(contains(message_of([&] { reduce(DType::C128, ReduceOp::Prod); }),
                 "nccl.allreduce reduces c128 arrays with sum or avg only, not prod"));
  // No NCCL type: refused for reductions, moved as bytes otherwise.
  CHECK(contains(message_of([&] { reduce(DType::Bool); }), "cannot reduce bool arrays"));
  CHECK(error_kind_of([&] { wire_type(DType::I16, Collective::ReduceScatter, ReduceOp::Max); }) ==
        ErrorKind::Type);
  const WireType moved = wire_type(DType::Bool, Collective::Broadcast, ReduceOp::Sum);
  CHECK(moved.nccl_type == nccl_type::Uint8);
  CHECK(moved.per_item == 1);
  CHECK(wire_type(DType::C128, Collective::AllGather, ReduceOp::Max).per_item == 16);
  CHECK(wire_type(DType::I16, Collective::Send, ReduceOp::Sum).per_item == 2);
  // u16: no NCCL type either (moved as 2 bytes, never reduced)
  CHECK(contains(message_of([&] { reduce(DType::U16); }), "cannot reduce u16 arrays"));
  CHECK(wire_type(DType::U16, Collective::AllGather, ReduceOp::Sum).per_item == 2);
}

TEST_CASE("nccl: output sizes") {
  CHECK(output_size(Collective::AllGather, 10, 4) == 40);
  CHECK(output_size(Collective::ReduceScatter, 12, 4) == 3);
  CHECK(output_size(Collective::AllReduce, 12, 4) == 12);
  CHECK(contains(message_of([] { output_size(Collective::ReduceScatter, 10, 4); }),
                 "needs a size divisible by the 4 ranks, got 10 elements"));
}

TEST_CASE("nccl: checks of a collective before anything is queued") {
  Runtime rt(host_options());
  const std::vector<int> one{0};
  Array a = empty(rt, Shape{8}, DType::F32);
  Array b = empty(rt, Shape{8}, DType::F32);
  CollectiveCall call;
  call.inputs = {a};
  CHECK_NOTHROW(check_call(call, one, 1));

  SECTION("one array per local rank") {
    call.inputs = {a, b};
    CHECK(contains(message_of([&] { check_call(call, one, 1); }),
                   "expected 1 array (one per device of the communicator), got 2"));
  }
  SECTION("each on its rank's device") {
    call.inputs = {a, b};
    CHECK(contains(message_of([&] {
                     check_call(call, {0, 1}, 2);
                   }),
                   "the input of rank 1 (device 1) is on device 0"));
  }
  SECTION("device arrays only") {
    call.inputs = {empty(rt, Shape{8}, DType::F32, Location::Pinned)};
    CHECK(contains(message_of([&] { check_call(call, one, 1); }), "is a host array"));
  }
  SECTION("contiguous") {
    Array m = empty(rt, Shape{4, 4}, DType::F32);
    Layout t = m.layout();
    std::swap(t.shape[0], t.shape[1]);
    std::swap(t.strides[0], t.strides[1]);
    call.inputs = {m.with_layout(t)};
    CHECK(contains(message_of([&] { check_call(call, one, 1); }), "is not contiguous"));
  }
  SECTION("freed arrays") {
    Array c = empty(rt, Shape{8}, DType::F32);
    call.inputs = {c};
    c.buffer()->release();
    CHECK(error_kind_of([&] { check_call(call, one, 1); }) == ErrorKind::Released);
  }
  SECTION("equal dtypes and sizes across ranks") {
    // Two ranks on one device are not a valid communicator, but the checks see only the arrays.
    call.inputs = {a, empty(rt, Shape{8}, DType::F64)};
    CHECK(contains(message_of([&] {
                     check_call(call, {0, 0}, 2);
                   }),
                   "the input of rank 1 (device 0) is f64, the input of rank 0 f32"));
    call.inputs = {a, empty(rt, Shape{9}, DType::F32)};
    CHECK(contains(message_of([&] {
                     check_call(call, {0, 0}, 2);
                   }),
                   "the input of rank 1 (device 0) has 9 elements, the input of rank 0 8"));
  }
  SECTION("outputs: n times for allgather, 1/n for reducescatter") {
    call.kind = Collective::AllGather;
    call.inputs = {a};
    CHECK(contains(message_of([&] { check_call(call, one, 2); }), "nccl.allgather needs output"));
    call.outputs = {empty(rt, Shape{8}, DType::F32)};
    CHECK(contains(message_of([&] { check_call(call, one, 2); }),
                   "the output of rank 0 (device 0) has 8 elements, nccl.allgather needs 16"));
    call.outputs = {empty(rt, Shape{16}, DType::F32)};
    CHECK_NOTHROW(check_call(call, one, 2));
    call.kind = Collective::ReduceScatter;
    call.outputs = {empty(rt, Shape{4}, DType::F32)};
    CHECK_NOTHROW(check_call(call, one, 2));
    call.outputs = {empty(rt, Shape{4}, DType::I32)};
    CHECK(error_kind_of([&] { check_call(call, one, 2); }) == ErrorKind::Type);
  }
  SECTION("outputs that overlap their input") {
    Array big = empty(rt, Shape{16}, DType::F32);
    Layout upper = Layout::contiguous(Shape{8});
    upper.offset = 4;
    call.inputs = {big.with_layout(Layout::contiguous(Shape{8}))};
    call.outputs = {big.with_layout(upper)};
    CHECK(contains(message_of([&] { check_call(call, one, 1); }), "overlaps its input"));
    call.outputs = {call.inputs[0]};  // in place: allowed for allreduce
    CHECK_NOTHROW(check_call(call, one, 1));
  }
  SECTION("root and peer in range") {
    call.kind = Collective::Broadcast;
    call.root = 2;
    CHECK(contains(message_of([&] { check_call(call, one, 2); }),
                   "root must be a rank from 0 to 1, got 2"));
    call.kind = Collective::Send;
    CHECK(contains(message_of([&] { check_call(call, one, 2); }), "expected 1 peer"));
    call.peers = {-1};
    CHECK(contains(message_of([&] { check_call(call, one, 2); }), "peer must be a rank"));
    call.peers = {1};
    CHECK_NOTHROW(check_call(call, one, 2));
    call.outputs = {b};
    CHECK(contains(message_of([&] { check_call(call, one, 2); }), "takes no output arrays"));
  }
  SECTION("reductions of dtypes NCCL lacks") {
    call.inputs = {empty(rt, Shape{8}, DType::Bool)};
    CHECK(error_kind_of([&] { check_call(call, one, 1); }) == ErrorKind::Type);
    call.kind = Collective::Broadcast;
    CHECK_NOTHROW(check_call(call, one, 1));
  }
}

TEST_CASE("nccl: a communicator needs the CUDA backend") {
  Runtime rt(host_options());
  const std::string why = nccl_unavailable(rt);
  CHECK(contains(why, "cu.nccl needs the CUDA backend"));
  CHECK(error_kind_of([&] { Communicator::local(rt, {0}); }) == ErrorKind::Unsupported);
  CHECK(error_kind_of([&] { Communicator::unique_id(rt); }) == ErrorKind::Unsupported);
}

#if CULUA_HAVE_CUDA
TEST_CASE("nccl: the loader names what it tried when libnccl.so.2 is absent") {
  const std::string m = message_of([] {
    load_nccl({"/nonexistent/libnccl.so.2", "libnccl-absent.so.2"});
  });
  CHECK(
      contains(m, "cu.nccl needs NCCL (libnccl.so.2): not found (tried /nonexistent/libnccl.so.2"));
  CHECK(contains(m, "; libnccl-absent.so.2"));
  CHECK(contains(m, "(set CULUA_NCCL_LIBRARY to its file)"));
  CHECK(error_kind_of([] { load_nccl({"/nonexistent/libnccl.so.2"}); }) == ErrorKind::Unsupported);
}

TEST_CASE("nccl: CULUA_NCCL_LIBRARY names the file") {
  const char* saved = std::getenv("CULUA_NCCL_LIBRARY");
  const std::string keep = saved ? saved : "";
  setenv("CULUA_NCCL_LIBRARY", "/nonexistent/libnccl.so.2", 1);
  const std::vector<std::string> c = nccl_candidates();
  REQUIRE(c.size() == 1);
  CHECK(c[0] == "/nonexistent/libnccl.so.2");
  unsetenv("CULUA_NCCL_LIBRARY");
  const std::vector<std::string> d = nccl_candidates();
  CHECK(d.front() == "libnccl.so.2");
  CHECK(d.size() > 2);
  if (saved) setenv("CULUA_NCCL_LIBRARY", keep.c_str(), 1);
}
#endif

#if CULUA_HAVE_CUDA
TEST_CASE("nccl: the toolkit's library loads and every entry point resolves (no GPU needed)") {
  const std::vector<std::string> candidates = nccl_candidates();
  NcclApi api{};
  try {
    api = load_nccl(candidates);
  } catch (const Error& e) {
    WARN("libnccl.so.2 is not installed here: " << e.what());
    return;
  }
  int version = 0;
  REQUIRE(api.get_version(&version) == ncclSuccess);
  CHECK(version >= 20900);  // 2.9: NCCL_VERSION(X, Y, Z) = X*10000 + Y*100 + Z
  CHECK_FALSE(api.path.empty());
  CHECK(std::string(api.get_error_string(ncclInvalidArgument)).size() > 0);
}
#endif

#if CULUA_HAVE_CUDA
// ctest runs each test case in a process of its own: here nccl_api() loads for the first time.
TEST_CASE("nccl: NVLink multicast stays off unless the environment sets it") {
  unsetenv("NCCL_NVLS_ENABLE");
  try {
    nccl_api();
  } catch (const Error& e) {
    WARN("libnccl.so.2 is not installed here: " << e.what());
    return;
  }
  const char* v = std::getenv("NCCL_NVLS_ENABLE");
  REQUIRE(v != nullptr);
  CHECK(std::string(v) == "0");
}

TEST_CASE("nccl: NCCL_NVLS_ENABLE set by the user is kept") {
  setenv("NCCL_NVLS_ENABLE", "1", 1);
  try {
    nccl_api();
  } catch (const Error& e) {
    WARN("libnccl.so.2 is not installed here: " << e.what());
    return;
  }
  CHECK(std::string(std::getenv("NCCL_NVLS_ENABLE")) == "1");
}
#endif
