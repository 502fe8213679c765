// MPI for culua (Open MPI, optional like CUDA: src/dist/mpi.cpp is built only when CMake finds
// MPI, which then defines CULUA_HAVE_MPI=1). MPI is initialized lazily, on the first call that
// needs it (cu.mpi, a distributed sweep, the NCCL id of cu.nccl.comm_world), with
// MPI_Init_thread(MPI_THREAD_SERIALIZED: one thread at a time calls MPI, not necessarily the main
// one), and finalized at exit only when culua initialized it. Without mpirun (a singleton) the
// job has one rank. Every call goes through culua's own communicator (a duplicate of
// MPI_COMM_WORLD) with MPI_ERRORS_RETURN: a failed call throws culua::detail::Error with MPI's
// message instead of aborting the process.
//
// The job-level functions at the end (rank_prefix, abort_on_error, finish) exist in every build;
// the CLI calls them without knowing whether MPI was built.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace culua::detail::dist::mpi {

#if defined(CULUA_HAVE_MPI)

// Started by mpirun/srun (an MPI launcher's environment: OMPI_COMM_WORLD_SIZE, PMIX_RANK,
// PMI_RANK).
bool launched();
// MPI is initialized and not finalized (by culua or by the application).
bool initialized();
// Initializes MPI unless it is (idempotent). Throws when MPI was finalized or fails to start.
void ensure_initialized();

// These initialize MPI on first use.
int rank();
int size();
// The rank among the processes of this node (OMPI_COMM_WORLD_LOCAL_RANK, else a shared-memory
// split of the job): which GPU a rank takes.
int local_rank();
// Whether MPI can read and write device memory itself (Open MPI's MPIX_Query_cuda_support, asked
// at run time; false where the MPI library has no CUDA support).
bool cuda_aware();

// The element types of reductions.
enum class Type : uint8_t { I8, I16, I32, I64, U8, U32, F32, F64, C64, C128, Bool, U16, U64 };
enum class Op : uint8_t { Sum, Prod, Max, Min };
std::string_view op_name(Op op);

void barrier();
// Broadcasts `bytes` from `root`; on the other ranks `bytes` is resized to the root's length.
void broadcast_bytes(std::string& bytes, int root);
// Broadcasts `count` bytes at `data` (the same count on every rank) from `root`.
void broadcast(void* data, size_t count, int root);
// In place: `data` holds `count` elements of `type` on every rank.
void allreduce(void* data, size_t count, Type type, Op op);
// Every rank's `mine` (all of one size), concatenated in rank order, on every rank.
std::vector<unsigned char> allgather(const void* mine, size_t bytes);
// Every rank's bytes at `root` (rank order); an empty list elsewhere.
std::vector<std::string> gather_bytes(std::string_view mine, int root);
void send(const void* data, size_t bytes, int dest, int tag);

constexpr int kAny = -1;  // recv's source or tag: any
struct Message {
  int source = 0;
  int tag = 0;
  size_t bytes = 0;
};
// Waits for the next message from `source` with `tag` (kAny for either) without receiving it.
Message probe(int source, int tag);
// Receives a message of `bytes` (probe's size) from exactly `source` and `tag` into `data`.
void recv(void* data, size_t bytes, int source, int tag);
// The largest tag MPI allows (at least 32767).
int max_tag();

// Ends the whole job: prints `message` (when not empty) on stderr and calls MPI_Abort with `code`
// (initializing MPI first when launched by mpirun and not yet initialized). Never returns.
[[noreturn]] void abort(std::string_view message, int code);

// "[rank 1] " when this process is one of several ranks of an MPI job (launched by mpirun, or MPI
// initialized with size > 1); "" otherwise.
std::string rank_prefix();
// A script ended with an error: in a job of several ranks, MPI_Abort(code) ends every rank
// instead of leaving the others waiting for this one (never returns then); otherwise nothing.
void abort_on_error(int code);
// The normal end of the program: MPI_Finalize when culua initialized MPI.
void finish();

#else

inline std::string rank_prefix() {
  return {};
}
inline void abort_on_error(int) {}
inline void finish() {}

#endif

}  // namespace culua::detail::dist::mpi
