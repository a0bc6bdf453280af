#include <daemon/compile_worker/no_file_access.hpp>

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <string>
#include <vector>

namespace jitcache::daemon::compile_worker {

namespace {

#if defined(__x86_64__)
constexpr std::uint32_t k_audit_arch = AUDIT_ARCH_X86_64;
// x32 calls are x86-64 numbers with this bit set.
constexpr std::uint32_t k_x32_bit = 0x40000000;
#elif defined(__aarch64__)
constexpr std::uint32_t k_audit_arch = AUDIT_ARCH_AARCH64;
constexpr std::uint32_t k_x32_bit = 0;
#else
#error "no_file_access.cpp knows the system call ABI of x86-64 and aarch64 only"
#endif

std::vector<long> forbidden_calls() {
  std::vector<long> calls = {SYS_openat, SYS_newfstatat, SYS_faccessat,         SYS_readlinkat,
                             SYS_execve, SYS_execveat,   SYS_name_to_handle_at, SYS_open_by_handle_at};
#ifdef SYS_open
  calls.insert(calls.end(), {SYS_open, SYS_creat, SYS_stat, SYS_lstat, SYS_access, SYS_readlink, SYS_uselib});
#endif
#ifdef SYS_statx
  calls.push_back(SYS_statx);
#endif
#ifdef SYS_openat2
  calls.push_back(SYS_openat2);
#endif
#ifdef SYS_faccessat2
  calls.push_back(SYS_faccessat2);
#endif
#ifdef SYS_io_uring_setup
  calls.push_back(SYS_io_uring_setup);
#endif
  return calls;
}

sock_filter statement(std::uint16_t code, std::uint32_t k) { return BPF_STMT(code, k); }
sock_filter jump(std::uint16_t code, std::uint32_t k, std::uint8_t if_true, std::uint8_t if_false) {
  return BPF_JUMP(code, k, if_true, if_false);
}

}  // namespace

common::Result<void> forbid_file_access() {
  std::vector<sock_filter> filter;
  filter.push_back(statement(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)));
  filter.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, k_audit_arch, 1, 0));
  filter.push_back(statement(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
  filter.push_back(statement(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)));
  if (k_x32_bit != 0) {
    filter.push_back(jump(BPF_JMP | BPF_JGE | BPF_K, k_x32_bit, 0, 1));
    filter.push_back(statement(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
  }
  for (const long call : forbidden_calls()) {
    filter.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(call), 0, 1));
    filter.push_back(statement(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOENT & SECCOMP_RET_DATA)));
  }
  filter.push_back(statement(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  const sock_fprog program{static_cast<unsigned short>(filter.size()), filter.data()};
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) {
    return common::make_error(common::ErrorCode::unsupported,
                              "the compile worker cannot install its seccomp filter (errno " + std::to_string(errno) +
                                  "), so it compiles no NVRTC program");
  }
  return {};
}

}  // namespace jitcache::daemon::compile_worker
