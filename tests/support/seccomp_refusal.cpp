#include <tests/support/seccomp_refusal.hpp>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <cerrno>
#include <cstddef>

namespace jitcache::testing {

namespace {

#if defined(__x86_64__)
constexpr unsigned k_arch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr unsigned k_arch = AUDIT_ARCH_AARCH64;
#else
constexpr unsigned k_arch = 0;
#endif

// systemd's @chown group, as far as this architecture has the calls (aarch64 has no chown/lchown).
constexpr long k_chown_calls[] = {
#ifdef __NR_chown
    __NR_chown,
#endif
#ifdef __NR_lchown
    __NR_lchown,
#endif
    __NR_fchown,
    __NR_fchownat,
};
constexpr std::size_t k_call_count = sizeof(k_chown_calls) / sizeof(k_chown_calls[0]);

}  // namespace

bool can_refuse_chown() { return k_arch != 0; }

bool refuse_chown() {
  if (k_arch == 0) return false;
  sock_filter program[4 + 2 * k_call_count + 1];
  std::size_t n = 0;
  // Another architecture's calls have other numbers: let them through rather than misjudge them.
  program[n++] = BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch));
  program[n++] = BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, k_arch, 1, 0);
  program[n++] = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  program[n++] = BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr));
  for (long call : k_chown_calls) {
    program[n++] = BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<unsigned>(call), 0, 1);
    program[n++] = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA));
  }
  program[n++] = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  sock_fprog filter{static_cast<unsigned short>(n), program};
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return false;
  return ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &filter) == 0;
}

}  // namespace jitcache::testing
