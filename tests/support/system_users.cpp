#include <tests/support/system_users.hpp>

#include <grp.h>
#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>

namespace jitcache::testing {

namespace {

int run_quietly(const std::string& command) { return std::system((command + " >/dev/null 2>&1").c_str()); }

bool has_tool(const char* name) { return run_quietly(std::string("command -v ") + name) == 0; }

}  // namespace

SystemUsers::SystemUsers(const std::string& prefix) {
  if (::geteuid() != 0) {
    m_why = "creating test users needs root (CI runs as root)";
    return;
  }
  if (!has_tool("useradd") || !has_tool("groupadd") || !has_tool("userdel")) {
    m_why = "useradd, groupadd or userdel is missing (package passwd)";
    return;
  }
  const std::string pid = std::to_string(::getpid());
  m_group = prefix + "g" + pid;
  if (run_quietly("groupadd --system " + m_group) != 0) {
    m_why = "groupadd --system " + m_group + " failed";
    m_group.clear();
    return;
  }
  m_group_id = ::getgrnam(m_group.c_str())->gr_gid;
  for (const char* which : {"a", "b"}) {
    const std::string name = prefix + which + pid;
    if (run_quietly("useradd --system --user-group --no-create-home --shell /usr/sbin/nologin --groups " + m_group +
                    " " + name) != 0) {
      m_why = "useradd " + name + " failed";
      return;
    }
    const passwd* entry = ::getpwnam(name.c_str());
    if (entry == nullptr) {
      m_why = "user " + name + " was created but cannot be looked up";
      return;
    }
    m_users.push_back(SystemUser{name, entry->pw_uid, entry->pw_gid});
  }
}

SystemUsers::~SystemUsers() {
  for (const auto& user : m_users) run_quietly("userdel " + user.name);
  if (!m_group.empty()) run_quietly("groupdel " + m_group);
}

pid_t start_as_user(const SystemUser& user, const std::vector<gid_t>& extra_groups, const std::function<int()>& body) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  std::vector<gid_t> groups{user.gid};
  groups.insert(groups.end(), extra_groups.begin(), extra_groups.end());
  // Groups first, then the gid, then the uid: once the uid is dropped nothing else may change.
  if (::setgroups(groups.size(), groups.data()) != 0 || ::setresgid(user.gid, user.gid, user.gid) != 0 ||
      ::setresuid(user.uid, user.uid, user.uid) != 0) {
    std::perror("dropping to the test user");
    ::_exit(90);
  }
  int status = 91;
  try {
    status = body();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "as %s: %s\n", user.name.c_str(), e.what());
  }
  std::fflush(nullptr);
  ::_exit(status);
}

int wait_child(pid_t pid) {
  if (pid < 0) return -1;
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}

int as_user(const SystemUser& user, const std::vector<gid_t>& extra_groups, const std::function<int()>& body) {
  return wait_child(start_as_user(user, extra_groups, body));
}

std::string why_cannot_setpriv_as(const SystemUsers& users) {
  if (!users.available()) return users.why();
  if (std::system("command -v setpriv >/dev/null 2>&1") != 0) return "setpriv is missing (package util-linux)";
  return {};
}

}  // namespace jitcache::testing
