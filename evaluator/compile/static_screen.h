// Stage 1 of the cascade (DESIGN.md §3.3): refuse candidate sources that could tamper with the harness
// before anything is compiled. A candidate's host code runs inside the runner process, so the screen
// refuses what could reach the harness or the machine. It runs twice (Evaluator::Screen): on the
// candidate's spelling (FindScreenViolations), then on its preprocessed host translation unit
// (FindPreprocessedViolations: `nvcc -E` with the compile's own flags and __CUDA_ARCH__ undefined,
// NvccCompiler::Preprocess), where macros, token pasting, stringizing and every #if are already
// resolved the way the host compile resolves them; only the candidate's own lines are screened there
// (preprocessed_source.h), so the headers' own syscalls do not count. Refused:
//   * process creation: fork, vfork, clone, exec*, system, popen, posix_spawn, daemon, wordexp,
//     _Fork, pidfd_spawn, forkpty, rcmd/rexec, and glibc's internal entry points (__libc_*, _dl_*)
//   * dynamic loading and symbol lookup: dlopen, dlsym, dlvsym, dladdr, dl_iterate_phdr
//   * code memory: mprotect, PROT_EXEC, mmap/mremap (a numeric PROT_EXEC), memfd_create, shmat
//   * threads and exit handlers that would outlive a call: std::thread, pthread_create, std::async,
//     atexit, on_exit, ...
//   * network: socket, connect, bind, listen, accept, getaddrinfo, ...
//   * raw system calls and process control: syscall, ptrace, prctl, ioctl, kill, signal, sigaction,
//     setrlimit, prlimit, process_vm_readv/writev
//   * environment access: getenv, secure_getenv, setenv, putenv, environ
//   * file-system writes and raw fd I/O: fopen/freopen with a write mode (or a mode that is not a
//     string literal), open/openat with flags other than O_RDONLY-like constants, O_WRONLY/O_RDWR/
//     O_CREAT/O_TRUNC/O_APPEND anywhere, creat, fdopen, ofstream/fstream, std::filesystem, rename,
//     unlink, mkdir, read, write, dup*, remove(path), ...  (printf/fprintf to stdout/stderr stay fine)
//   * reads of /proc and of the environment: any string literal (adjacent literals joined) containing
//     "/proc/", ending in "/proc", or containing "/environ" ("/proc/" "self" spelled apart, a
//     stringized path and "/proc/thread-self/environ" included)
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
//   * #line directives and GNU line markers (# 12 "file"), which could make the candidate's own lines
//     look like a header's in the preprocessed unit
//   * sources over max_source_bytes, or containing NUL bytes
// Matching works on tokens (source_lexer.h): comments and literals never match an identifier rule, a
// variable named `forked` is not `fork`, and member access (x.kill(), p->signal) is not the libc call.
// Names qualified by a namespace other than std (thrust::system) are not the libc call either, nor
// is a new variable that shadows one (int kill = 0; void f(int signal)); `extern` declarations are.
// A namespace that stands for std is std: an alias (namespace s = std;) or one that holds a
// using-directive or using-declaration of std (namespace n { using namespace std; }).
// `#pragma` lines are not screened. In the preprocessed unit __device__ reads __attribute__((device)),
// and no #if is left: asm in a __host__ __device__ function that survives into the host unit is host
// asm whatever condition guarded it.
//
// This is a filter, not a sandbox: a name assembled at run time (a string built byte by byte, a
// function pointer found by address) and global constructors of ordinary objects are not caught. The
// OS sandbox around the runner (evaluator/sandbox/), the trusted verdict and the compiler's check of
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

// The same rules over the candidate's own lines of its preprocessed translation unit (`preprocessed`,
// the output of nvcc -E on a file named `main_file`); lines are the candidate's source lines.
std::vector<ScreenFinding> FindPreprocessedViolations(std::string_view preprocessed,
                                                      std::string_view main_file = "candidate.cu");

// OK, or PermissionDenied as ScreenCandidateSource, each finding marked "(after preprocessing)".
absl::Status ScreenPreprocessedSource(std::string_view preprocessed, std::string_view main_file = "candidate.cu",
                                      const ScreenOptions& options = {});

}  // namespace sparseditto
