// Stage 1 of the cascade (DESIGN.md §3.3): refuse candidate sources that could tamper with the harness
// before anything is compiled. A candidate's host code runs inside the runner process, so the screen
// refuses what could reach the harness or the machine:
//   * process creation: fork, vfork, clone, exec*, system, popen, posix_spawn, daemon
//   * dynamic loading and symbol lookup: dlopen, dlsym, dlvsym, dladdr, dl_iterate_phdr
//   * code memory: mprotect, PROT_EXEC (mmap of code), memfd_create
//   * network: socket, connect, bind, listen, accept, getaddrinfo, ...
//   * raw system calls and process control: syscall, ptrace, prctl, ioctl, kill, signal, sigaction,
//     setrlimit, prlimit, process_vm_readv/writev
//   * environment access: getenv, secure_getenv, setenv, putenv, environ
//   * file-system writes and raw fd I/O: fopen/freopen with a write mode (or a mode that is not a
//     string literal), open/openat with flags other than O_RDONLY-like constants, O_WRONLY/O_RDWR/
//     O_CREAT/O_TRUNC/O_APPEND anywhere, creat, fdopen, ofstream/fstream, rename, unlink, mkdir, read,
//     write, dup*, remove(path), ...  (printf/fprintf to stdout/stderr stay fine)
//   * reads of /proc: any string literal (adjacent literals joined) containing "/proc/"
//   * load-time code and symbol games: __attribute__ / [[...]] constructor, destructor, section,
//     init_priority, ifunc, alias, weakref, symver
//   * definitions (not calls) of CUDA runtime/driver/library names (cuda*, cu[A-Z]*, __cuda*, cublas*,
//     cusparse*, ...): a definition could interpose on the harness's CUDA calls
//   * inline asm (asm, __asm__, or a macro whose body has them) outside functions marked __device__ or
//     __global__; in a __host__ __device__ function it must sit inside #ifdef __CUDA_ARCH__ (or
//     #if __CUDA_ARCH__ >= ...). Device intrinsics and PTX in device code are legitimate.
//   * #include of <dlfcn.h>, <unistd.h>, <signal.h>/<csignal>, <sys/socket.h>, <sys/mman.h>,
//     <sys/ptrace.h>, <link.h>, <spawn.h>, <sys/syscall.h>, <sys/prctl.h>, <sys/resource.h>, network
//     headers; absolute or ".." include paths; quoted includes other than "sparseditto_kernel.h";
//     computed includes (#include MACRO); #include_next
//   * token pasting (##) in macros, which could assemble a refused name
//   * sources over max_source_bytes, or containing NUL bytes
// Matching works on tokens (source_lexer.h): comments and literals never match an identifier rule, a
// variable named `forked` is not `fork`, and member access (x.kill(), p->signal) is not the libc call.
// Names qualified by a namespace other than std (thrust::system) are not the libc call either, nor
// is a new variable that shadows one (int kill = 0; void f(int signal)); `extern` declarations are.
// `#pragma` lines are not screened.
//
// This is a filter, not a sandbox: macros are not expanded (beyond the ## rule and one level of
// object-like macros carrying __device__ / asm), namespace aliases of std and global constructors of
// ordinary objects are not caught. The runner's process isolation and the compiler's check of
// exported symbols stay the real boundary.
//
// Pure functions of the source; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace sparseditto {

struct ScreenOptions {
  size_t max_source_bytes = 256 * 1024;  // a candidate is one file; 256 KiB is generous
  size_t max_reported_findings = 20;     // ScreenCandidateSource lists at most this many
};

// One refused construct. `message` reads "call to fork() is not allowed in a candidate (process
// creation)" or "#include <unistd.h> is not allowed in a candidate (process and fd control)".
struct ScreenFinding {
  int line = 0;  // 1-based, in the original source (0 for whole-source findings such as size)
  std::string message;
};

// Every refused construct, in source order (oversize and NUL-byte sources yield just that finding).
std::vector<ScreenFinding> FindScreenViolations(std::string_view source, const ScreenOptions& options = {});

// OK, or PermissionDenied whose message has one finding per line, "line 12: call to fork() is not
// allowed in a candidate (process creation)", at most max_reported_findings of them (then "... and N
// more"). A refusal is the candidate's failure (FAILURE_CATEGORY_REJECTED), never an internal error.
absl::Status ScreenCandidateSource(std::string_view source, const ScreenOptions& options = {});

}  // namespace sparseditto
