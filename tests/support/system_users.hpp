// Two unprivileged system users and a group they share, created for one test and removed after it
// (useradd/groupadd; needs root, as in CI), so that multi-tenant tests run clients under real uids
// the kernel reports through SO_PEERCRED. Plus running a function as one of them in a forked child.
// Where users cannot be created, available() is false and why() says why: the test skips visibly.
// Thread safety: one owner; as_user() forks, so call it from a single-threaded test body.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

namespace jitcache::testing {

struct SystemUser {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;  // its own group (useradd --user-group)
};

class SystemUsers {
 public:
  // Users "<prefix>a<pid>" and "<prefix>b<pid>", both also in group "<prefix>g<pid>".
  explicit SystemUsers(const std::string& prefix = "jct");
  ~SystemUsers();
  SystemUsers(const SystemUsers&) = delete;
  SystemUsers& operator=(const SystemUsers&) = delete;

  bool available() const { return m_why.empty(); }
  const std::string& why() const { return m_why; }
  const SystemUser& a() const { return m_users.at(0); }
  const SystemUser& b() const { return m_users.at(1); }
  const std::string& group_name() const { return m_group; }
  gid_t group() const { return m_group_id; }

 private:
  std::vector<SystemUser> m_users;
  std::string m_group;
  gid_t m_group_id = 0;
  std::string m_why;
};

// Empty where `users` were created and setpriv(1) (util-linux) is on PATH, as a test that runs the
// jitcache CLI as one of them needs; else why not, for the test's visible skip.
std::string why_cannot_setpriv_as(const SystemUsers& users);

// Runs `body` in a forked child as `user` (its own group, plus `extra_groups` as supplementary
// groups) and returns its result: 0 for success, anything else a failure the child described on
// stderr; 128 + signal when it died of one. The child never returns into the test framework.
int as_user(const SystemUser& user, const std::vector<gid_t>& extra_groups, const std::function<int()>& body);

// Starts `body` as as_user() would, without waiting: returns the child's pid for wait_child().
pid_t start_as_user(const SystemUser& user, const std::vector<gid_t>& extra_groups, const std::function<int()>& body);
int wait_child(pid_t pid);

}  // namespace jitcache::testing
