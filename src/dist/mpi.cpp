#include "dist/mpi.hpp"

// The C API only (Open MPI and MPICH otherwise pull in their deprecated C++ bindings).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <mutex>
#include <string>

#include "core/base/error.hpp"

namespace culua::detail::dist::mpi {

namespace {

// culua's communicator (a duplicate of MPI_COMM_WORLD: its messages never match the
// application's), and whether culua initialized MPI (then culua finalizes it).
MPI_Comm comm = MPI_COMM_NULL;
bool culua_initialized = false;
int cached_rank = -1, cached_size = -1, cached_local_rank = -1;
std::mutex init_mutex;
// The session-directory base a singleton made for itself (see private_session_dir), removed after
// MPI_Finalize.
std::string own_tmpdir;

std::string error_string(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) return fmt::format("error {}", code);
  return std::string(text, static_cast<size_t>(length));
}

void check(int code, const char* call) {
  if (code != MPI_SUCCESS) fail(ErrorKind::Value, "{} failed: {}", call, error_string(code));
}

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

int env_int(const char* name, int fallback) {
  const char* v = env(name);
  if (!v) return fallback;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  return end && *end == '\0' && n >= 0 && n <= INT_MAX ? static_cast<int>(n) : fallback;
}

// The size of the job as the launcher's environment tells it (1 without one).
int launched_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "SLURM_NTASKS"}) {
    if (const int n = env_int(name, -1); n > 0 && launched()) return n;
  }
  return 1;
}

int launched_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}) {
    if (const int n = env_int(name, -1); n >= 0) return n;
  }
  return 0;
}

// At exit, for programs other than the CLI (which calls finish() itself): the embedding library
// and cu.so. A handler registered when MPI starts runs before the static destructors of objects
// made earlier and never after MPI's own teardown.
void finalize_at_exit() {
  finish();
}

// Open MPI 4 gives every singleton started without a daemon the same session directory
// (<tmp>/ompi.<host>.<uid>/jf.0/1/0), and the first of them to finish removes the whole tree from
// under the others; one starting meanwhile can fail to make it and abort in MPI_Init ("Local abort
// before MPI_INIT completed", seen in CI with concurrent culua processes). A singleton gets a base
// folder of its own, unless the user chose one (OMPI_MCA_orte_tmpdir_base). Returns whether the
// variable was set here (it is unset after MPI_Init: child processes make their own).
bool private_session_dir() {
#if defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION < 5
  if (launched() || env("OMPI_MCA_orte_tmpdir_base")) return false;
  const char* base = env("TMPDIR");
  std::string folder = fmt::format("{}/culua-mpi-XXXXXX", base ? base : "/tmp");
  if (!mkdtemp(folder.data())) return false;  // Open MPI's default then
  own_tmpdir = folder;
  setenv("OMPI_MCA_orte_tmpdir_base", folder.c_str(), 1);
  return true;
#else
  return false;
#endif
}

void remove_private_session_dir() {
  if (own_tmpdir.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(own_tmpdir, ignored);
  own_tmpdir.clear();
}

MPI_Comm world() {
  ensure_initialized();
  return comm;
}

MPI_Datatype datatype(Type t) {
  switch (t) {
    case Type::I8:
      return MPI_INT8_T;
    case Type::I16:
      return MPI_INT16_T;
    case Type::I32:
      return MPI_INT32_T;
    case Type::I64:
      return MPI_INT64_T;
    case Type::U8:
      return MPI_UINT8_T;
    case Type::U16:
      return MPI_UINT16_T;
    case Type::U32:
      return MPI_UINT32_T;
    case Type::U64:
      return MPI_UINT64_T;
    case Type::F32:
      return MPI_FLOAT;
    case Type::F64:
      return MPI_DOUBLE;
    case Type::C64:
      return MPI_C_FLOAT_COMPLEX;
    case Type::C128:
      return MPI_C_DOUBLE_COMPLEX;
    case Type::Bool:
      return MPI_C_BOOL;
  }
  return MPI_BYTE;
}

MPI_Op mpi_op(Op op) {
  switch (op) {
    case Op::Sum:
      return MPI_SUM;
    case Op::Prod:
      return MPI_PROD;
    case Op::Max:
      return MPI_MAX;
    case Op::Min:
      return MPI_MIN;
  }
  return MPI_SUM;
}

// MPI counts are ints: large messages go in pieces.
constexpr size_t kChunk = size_t{1} << 30;

int count_of(size_t n, const char* what) {
  if (n > static_cast<size_t>(INT_MAX)) fail(ErrorKind::Value, "{} is too large for MPI", what);
  return static_cast<int>(n);
}

}  // namespace

bool launched() {
  return env("OMPI_COMM_WORLD_SIZE") || env("PMIX_RANK") || env("PMI_RANK");
}

bool initialized() {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  return init && !fin;
}

void ensure_initialized() {
  if (comm != MPI_COMM_NULL) return;
  std::lock_guard<std::mutex> lock(init_mutex);
  if (comm != MPI_COMM_NULL) return;
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (fin) fail(ErrorKind::Unsupported, "MPI was finalized; it cannot start again in this process");
  if (!init) {
    // A singleton (no mpirun) spawns nothing: Open MPI need not start its daemon (a third of
    // the start-up time), unless the user said otherwise.
    if (!launched()) setenv("OMPI_MCA_ess_singleton_isolated", "1", 0);
    const bool own_dir = private_session_dir();
    int provided = 0;
    const int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
    if (own_dir) unsetenv("OMPI_MCA_orte_tmpdir_base");
    if (rc != MPI_SUCCESS) {
      remove_private_session_dir();
      fail(ErrorKind::Unsupported, "MPI failed to start ({})", rc);
    }
    culua_initialized = true;
    std::atexit(finalize_at_exit);
    if (provided < MPI_THREAD_FUNNELED) {
      fail(ErrorKind::Unsupported,
           "MPI offers no thread support (MPI_THREAD_SINGLE); culua needs MPI_THREAD_FUNNELED");
    }
  }
  MPI_Comm dup = MPI_COMM_NULL;
  check(MPI_Comm_dup(MPI_COMM_WORLD, &dup), "MPI_Comm_dup");
  MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
  MPI_Comm_rank(dup, &cached_rank);
  MPI_Comm_size(dup, &cached_size);
  // The rank on this node, from the launcher, else from a split of the job by shared memory: here,
  // where every rank takes part (a split later, on one rank only, would wait forever).
  int local = env_int("OMPI_COMM_WORLD_LOCAL_RANK", -1);
  if (local < 0) local = env_int("MPI_LOCALRANKID", -1);
  if (local < 0) local = env_int("SLURM_LOCALID", -1);
  if (local < 0) {
    MPI_Comm node = MPI_COMM_NULL;
    check(MPI_Comm_split_type(dup, MPI_COMM_TYPE_SHARED, cached_rank, MPI_INFO_NULL, &node),
          "MPI_Comm_split_type");
    MPI_Comm_rank(node, &local);
    MPI_Comm_free(&node);
  }
  cached_local_rank = local;
  comm = dup;
}

int rank() {
  world();
  return cached_rank;
}

int size() {
  world();
  return cached_size;
}

int local_rank() {
  world();
  return cached_local_rank;
}

bool cuda_aware() {
#if defined(MPIX_CUDA_AWARE_SUPPORT)
  world();
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

std::string_view op_name(Op op) {
  switch (op) {
    case Op::Sum:
      return "sum";
    case Op::Prod:
      return "prod";
    case Op::Max:
      return "max";
    case Op::Min:
      return "min";
  }
  return "sum";
}

void barrier() {
  check(MPI_Barrier(world()), "MPI_Barrier");
}

void broadcast(void* data, size_t count, int root) {
  MPI_Comm c = world();
  auto* p = static_cast<unsigned char*>(data);
  for (size_t at = 0; at < count; at += kChunk) {
    const size_t n = std::min(kChunk, count - at);
    check(MPI_Bcast(p + at, static_cast<int>(n), MPI_BYTE, root, c), "MPI_Bcast");
  }
}

void broadcast_bytes(std::string& bytes, int root) {
  uint64_t n = bytes.size();
  broadcast(&n, sizeof n, root);
  if (rank() != root) bytes.resize(n);
  if (n) broadcast(bytes.data(), n, root);
}

void allreduce(void* data, size_t count, Type type, Op op) {
  if (count == 0) return;
  MPI_Comm c = world();
  MPI_Datatype t = datatype(type);
  int extent = 0;
  MPI_Type_size(t, &extent);
  auto* p = static_cast<unsigned char*>(data);
  const size_t per = kChunk / static_cast<size_t>(extent);
  for (size_t at = 0; at < count; at += per) {
    const size_t n = std::min(per, count - at);
    check(MPI_Allreduce(MPI_IN_PLACE, p + at * static_cast<size_t>(extent), static_cast<int>(n), t,
                        mpi_op(op), c),
          "MPI_Allreduce");
  }
}

std::vector<unsigned char> allgather(const void* mine, size_t bytes) {
  MPI_Comm c = world();
  std::vector<unsigned char> all(bytes * static_cast<size_t>(cached_size));
  check(MPI_Allgather(mine, count_of(bytes, "an allgather"), MPI_BYTE, all.data(),
                      count_of(bytes, "an allgather"), MPI_BYTE, c),
        "MPI_Allgather");
  return all;
}

std::vector<std::string> gather_bytes(std::string_view mine, int root) {
  MPI_Comm c = world();
  const int n = cached_size;
  const int length = count_of(mine.size(), "a gathered value");
  std::vector<int> lengths(cached_rank == root ? static_cast<size_t>(n) : 0);
  check(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, root, c), "MPI_Gather");
  std::vector<int> offsets;
  std::string all;
  if (cached_rank == root) {
    offsets.resize(static_cast<size_t>(n));
    size_t total = 0;
    for (int i = 0; i < n; ++i) {
      offsets[static_cast<size_t>(i)] = count_of(total, "the gathered values together");
      total += static_cast<size_t>(lengths[static_cast<size_t>(i)]);
    }
    count_of(total, "the gathered values together");
    all.resize(total);
  }
  check(MPI_Gatherv(mine.data(), length, MPI_BYTE, all.data(), lengths.data(), offsets.data(),
                    MPI_BYTE, root, c),
        "MPI_Gatherv");
  std::vector<std::string> out;
  if (cached_rank == root) {
    out.reserve(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      out.push_back(all.substr(static_cast<size_t>(offsets[static_cast<size_t>(i)]),
                               static_cast<size_t>(lengths[static_cast<size_t>(i)])));
    }
  }
  return out;
}

void send(const void* data, size_t bytes, int dest, int tag) {
  check(MPI_Send(data, count_of(bytes, "a message"), MPI_BYTE, dest, tag, world()), "MPI_Send");
}

Message probe(int source, int tag) {
  MPI_Status status;
  check(MPI_Probe(source == kAny ? MPI_ANY_SOURCE : source, tag == kAny ? MPI_ANY_TAG : tag,
                  world(), &status),
        "MPI_Probe");
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  return {status.MPI_SOURCE, status.MPI_TAG, static_cast<size_t>(count)};
}

void recv(void* data, size_t bytes, int source, int tag) {
  check(MPI_Recv(data, count_of(bytes, "a message"), MPI_BYTE, source, tag, world(),
                 MPI_STATUS_IGNORE),
        "MPI_Recv");
}

int max_tag() {
  MPI_Comm c = world();
  void* value = nullptr;
  int found = 0;
  MPI_Comm_get_attr(c, MPI_TAG_UB, &value, &found);
  return found && value ? *static_cast<int*>(value) : 32767;
}

void abort(std::string_view message, int code) {
  if (!message.empty()) {
    std::fprintf(stderr, "%.*s\n", static_cast<int>(message.size()), message.data());
    std::fflush(stderr);
  }
  if (!initialized() && launched()) {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
  }
  if (initialized()) MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

std::string rank_prefix() {
  int r = 0, n = 1;
  if (comm != MPI_COMM_NULL) {
    r = cached_rank;
    n = cached_size;
  } else if (launched()) {
    r = launched_rank();
    n = launched_size();
  }
  return n > 1 ? fmt::format("[rank {}] ", r) : std::string();
}

void abort_on_error(int code) {
  const bool several = comm != MPI_COMM_NULL ? cached_size > 1 : launched_size() > 1;
  if (several) abort({}, code);
}

void finish() {
  if (comm == MPI_COMM_NULL || !initialized()) return;
  MPI_Comm_free(&comm);
  comm = MPI_COMM_NULL;
  if (culua_initialized) {
    MPI_Finalize();
    remove_private_session_dir();
  }
}

}  // namespace culua::detail::dist::mpi
