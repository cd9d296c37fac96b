#include "evaluator/compile/screen_rules.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace sparseditto {
namespace {

constexpr std::string_view kProcess = "process creation";
constexpr std::string_view kLoading = "dynamic loading and symbol lookup";
constexpr std::string_view kCodeMemory = "executable or re-protected memory";
constexpr std::string_view kNetwork = "network access";
constexpr std::string_view kSyscall = "raw system calls and process control";
constexpr std::string_view kSignals = "signals and signal handlers";
constexpr std::string_view kLimits = "resource limits";
constexpr std::string_view kEnvironment = "environment access";
constexpr std::string_view kFiles = "file-system writes and raw fd I/O";
constexpr std::string_view kPersistence = "threads and exit handlers that outlive the call";

constexpr BannedName kBannedNames[] = {
    {"fork", kProcess}, {"vfork", kProcess}, {"clone", kProcess}, {"clone3", kProcess},
    {"execl", kProcess}, {"execle", kProcess}, {"execlp", kProcess}, {"execv", kProcess},
    {"execve", kProcess}, {"execvp", kProcess}, {"execvpe", kProcess}, {"execveat", kProcess},
    {"fexecve", kProcess}, {"system", kProcess}, {"popen", kProcess}, {"posix_spawn", kProcess},
    {"posix_spawnp", kProcess}, {"daemon", kProcess, true},
    // Process creation by libc functions and entry points that are not the familiar names.
    {"wordexp", kProcess}, {"_Fork", kProcess}, {"__fork", kProcess}, {"__vfork", kProcess},
    {"__clone", kProcess}, {"__clone2", kProcess}, {"__clone3", kProcess}, {"__execvpe", kProcess},
    {"__posix_spawn", kProcess}, {"pidfd_spawn", kProcess}, {"pidfd_spawnp", kProcess},
    {"forkpty", kProcess}, {"rcmd", kProcess}, {"rcmd_af", kProcess}, {"rexec", kProcess},
    {"rexec_af", kProcess},
    {"dlopen", kLoading}, {"dlmopen", kLoading}, {"dlsym", kLoading}, {"dlvsym", kLoading},
    {"dladdr", kLoading}, {"dladdr1", kLoading}, {"dlinfo", kLoading}, {"dl_iterate_phdr", kLoading},
    {"mprotect", kCodeMemory}, {"pkey_mprotect", kCodeMemory}, {"PROT_EXEC", kCodeMemory},
    {"memfd_create", kCodeMemory}, {"mmap", kCodeMemory}, {"mmap64", kCodeMemory}, {"mremap", kCodeMemory},
    {"remap_file_pages", kCodeMemory}, {"shmat", kCodeMemory}, {"personality", kCodeMemory},
    {"socket", kNetwork}, {"socketpair", kNetwork}, {"connect", kNetwork, true}, {"bind", kNetwork},
    {"listen", kNetwork, true}, {"accept", kNetwork, true}, {"accept4", kNetwork},
    {"getaddrinfo", kNetwork}, {"gethostbyname", kNetwork}, {"sendto", kNetwork}, {"recvfrom", kNetwork},
    {"sendmsg", kNetwork}, {"recvmsg", kNetwork},
    {"syscall", kSyscall}, {"ptrace", kSyscall}, {"prctl", kSyscall}, {"ioctl", kSyscall},
    {"process_vm_readv", kSyscall}, {"process_vm_writev", kSyscall}, {"seccomp", kSyscall},
    {"unshare", kSyscall}, {"setns", kSyscall}, {"chroot", kSyscall}, {"pivot_root", kSyscall},
    {"mount", kSyscall, true}, {"umount", kSyscall}, {"umount2", kSyscall},
    {"kill", kSignals}, {"killpg", kSignals}, {"tgkill", kSignals}, {"tkill", kSignals},
    {"sigqueue", kSignals}, {"signal", kSignals}, {"sigaction", kSignals}, {"sigset", kSignals, true},
    {"bsd_signal", kSignals}, {"sysv_signal", kSignals}, {"sigaltstack", kSignals},
    {"setrlimit", kLimits}, {"setrlimit64", kLimits}, {"prlimit", kLimits}, {"prlimit64", kLimits},
    {"getenv", kEnvironment}, {"secure_getenv", kEnvironment}, {"setenv", kEnvironment},
    {"putenv", kEnvironment}, {"unsetenv", kEnvironment}, {"clearenv", kEnvironment},
    {"environ", kEnvironment}, {"__environ", kEnvironment},
    {"creat", kFiles}, {"fdopen", kFiles}, {"ofstream", kFiles}, {"fstream", kFiles},
    {"basic_ofstream", kFiles}, {"basic_fstream", kFiles}, {"filebuf", kFiles}, {"basic_filebuf", kFiles},
    {"O_WRONLY", kFiles}, {"O_RDWR", kFiles}, {"O_CREAT", kFiles}, {"O_TRUNC", kFiles},
    {"O_APPEND", kFiles}, {"O_TMPFILE", kFiles},
    {"rename", kFiles, true}, {"renameat", kFiles}, {"unlink", kFiles}, {"unlinkat", kFiles},
    {"rmdir", kFiles}, {"mkdir", kFiles}, {"truncate", kFiles}, {"ftruncate", kFiles}, {"chmod", kFiles},
    {"fchmod", kFiles}, {"chown", kFiles}, {"symlink", kFiles}, {"link", kFiles, true}, {"mkstemp", kFiles},
    {"tmpfile", kFiles}, {"tmpnam", kFiles}, {"remove", kFiles, true, 1},
    {"read", kFiles}, {"write", kFiles}, {"pread", kFiles}, {"pwrite", kFiles}, {"readv", kFiles},
    {"writev", kFiles}, {"pwritev", kFiles}, {"dup", kFiles, true}, {"dup2", kFiles}, {"dup3", kFiles},
    {"filesystem", kFiles},
    {"pthread_create", kPersistence}, {"thread", kPersistence}, {"jthread", kPersistence},
    {"async", kPersistence, true}, {"atexit", kPersistence}, {"at_quick_exit", kPersistence},
    {"on_exit", kPersistence}, {"__cxa_atexit", kPersistence}, {"__cxa_thread_atexit", kPersistence},
    {"pthread_atfork", kPersistence},
};

// glibc's internal entry points (__libc_system, __libc_dlopen_mode, _dl_open, __GI_execve, ...): a
// candidate has no use for any of them.
constexpr std::string_view kInternalPrefixes[] = {"__libc_", "_dl_", "__dl_", "__GI_", "__GI___"};
constexpr BannedName kGlibcInternal = {"", "glibc's internal entry points (process creation, loading)"};

struct RefusedHeader {
  std::string_view header;
  const char* reason;
};
constexpr RefusedHeader kRefusedHeaders[] = {
    {"dlfcn.h", "dynamic loading and symbol lookup"},
    {"link.h", "dynamic loading and symbol lookup"},
    {"unistd.h", "process, fd and environment control"},
    {"spawn.h", "process creation"},
    {"sys/wait.h", "process creation"},
    {"signal.h", "signals and signal handlers"},
    {"csignal", "signals and signal handlers"},
    {"sys/mman.h", "executable or re-protected memory"},
    {"sys/ptrace.h", "raw system calls and process control"},
    {"sys/syscall.h", "raw system calls and process control"},
    {"syscall.h", "raw system calls and process control"},
    {"sys/prctl.h", "raw system calls and process control"},
    {"sys/resource.h", "resource limits"},
    {"sys/socket.h", "network access"},
    {"sys/un.h", "network access"},
    {"netinet/in.h", "network access"},
    {"arpa/inet.h", "network access"},
    {"netdb.h", "network access"},
    {"wordexp.h", "process creation"},
    {"pty.h", "process creation"},
    {"filesystem", "file-system writes and raw fd I/O"},
    {"thread", "threads and exit handlers that outlive the call"},
    {"pthread.h", "threads and exit handlers that outlive the call"},
};

constexpr std::array<std::string_view, 14> kCudaPrefixes = {
    "cuda", "__cuda", "cu", "__cu", "cublas", "cusparse", "cusolver", "cufft", "curand", "cudnn", "cutensor", "nvrtc",
    "nvJitLink", "nccl"};

}  // namespace

const BannedName* FindBannedName(std::string_view name) {
  for (const BannedName& banned : kBannedNames) {
    if (banned.name == name) return &banned;
  }
  for (std::string_view prefix : kInternalPrefixes) {
    if (name.size() > prefix.size() && name.starts_with(prefix)) return &kGlibcInternal;
  }
  return nullptr;
}

bool IsAsmKeyword(std::string_view name) { return name == "asm" || name == "__asm" || name == "__asm__"; }

bool IsCudaName(std::string_view name) {
  // A prefix then an upper-case letter: cudaMalloc, cuLaunchKernel (driver), __cudaRegisterFunction,
  // cublasSgemm. A helper named cuda_check or cudaify is not a CUDA name.
  return std::any_of(kCudaPrefixes.begin(), kCudaPrefixes.end(), [&](std::string_view prefix) {
    return name.size() > prefix.size() && name.starts_with(prefix) &&
           std::isupper(static_cast<unsigned char>(name[prefix.size()]));
  });
}

bool IsFopenName(std::string_view name) {
  return name == "fopen" || name == "fopen64" || name == "freopen" || name == "freopen64";
}

bool IsOpenName(std::string_view name) {
  return name == "open" || name == "open64" || name == "openat" || name == "openat64";
}

bool IsReadOnlyOpenFlag(std::string_view name) {
  for (std::string_view flag : {"O_RDONLY", "O_CLOEXEC", "O_NONBLOCK", "O_DIRECTORY", "O_NOFOLLOW",
                                "O_LARGEFILE", "O_NOCTTY", "O_NOATIME"}) {
    if (flag == name) return true;
  }
  return false;
}

bool IsExpressionKeyword(std::string_view name) {
  for (std::string_view word : {"return", "throw", "co_return", "co_yield", "sizeof", "alignof", "decltype",
                                "case", "delete", "new", "typeid", "else", "do", "goto", "extern",
                                "using", "typedef", "friend", "operator", "struct", "class", "union", "enum"}) {
    if (word == name) return true;
  }
  return false;
}

bool IsRefusedAttribute(std::string_view name) {
  for (std::string_view refused :
       {"constructor", "destructor", "section", "init_priority", "ifunc", "alias", "weakref", "symver"}) {
    if (refused == name) return true;
  }
  return false;
}

const char* RefusedHeaderReason(std::string_view header) {
  for (const RefusedHeader& refused : kRefusedHeaders) {
    if (refused.header == header) return refused.reason;
  }
  return nullptr;
}

}  // namespace sparseditto
