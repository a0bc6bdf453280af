// Who is trusted (daemon/policy/trust_policy.hpp) and how configured names resolve
// (daemon/policy/account_names.hpp).
#include <catch2/catch.hpp>

#include <daemon/policy/account_names.hpp>
#include <daemon/policy/trust_policy.hpp>

using namespace jitcache::daemon;
using policy::PeerCredentials;
using policy::TrustPolicy;

namespace {

PeerCredentials peer(uid_t uid, gid_t gid, std::vector<gid_t> groups = {}) {
  return PeerCredentials{uid, gid, 4242, std::move(groups)};
}

}  // namespace

TEST_CASE("trust policy: root and the daemon's own uid are always trusted, others only when listed") {
  const TrustPolicy policy(998);
  CHECK(policy.trusts(peer(0, 0)));
  CHECK(policy.trusts(peer(998, 998)));
  CHECK_FALSE(policy.trusts(peer(1000, 1000)));
}

TEST_CASE("trust policy: a trusted user, and a member of a trusted group by primary or supplementary group") {
  const TrustPolicy policy(998, {1001}, {2000});
  CHECK(policy.trusts(peer(1001, 1001)));
  CHECK(policy.trusts(peer(1002, 2000)));
  CHECK(policy.trusts(peer(1003, 1003, {27, 2000})));
  CHECK_FALSE(policy.trusts(peer(1004, 1004, {27, 2001})));
}

TEST_CASE("account names: numbers resolve without a database entry, names through it, unknown names fail") {
  CHECK(policy::resolve_user("0").value() == 0);
  CHECK(policy::resolve_user("root").value() == 0);
  CHECK(policy::resolve_group("root").value() == 0);
  CHECK(policy::resolve_group("54321").value() == 54321);
  auto unknown = policy::resolve_user("no-such-user-jitcache");
  REQUIRE_FALSE(unknown.ok());
  CHECK_THAT(unknown.error().message, Catch::Contains("unknown user \"no-such-user-jitcache\""));
  CHECK_FALSE(policy::resolve_group("no-such-group-jitcache").ok());
  CHECK_FALSE(policy::resolve_user("-1").ok());
}

TEST_CASE("account names: a list is split at commas and trimmed, and one bad name fails the whole list") {
  CHECK(policy::split_list(" alice, bob ,,1002 ") == std::vector<std::string>{"alice", "bob", "1002"});
  CHECK(policy::split_list("").empty());
  CHECK(policy::resolve_users("root, 1234").value() == std::vector<uid_t>{0, 1234});
  CHECK(policy::resolve_groups("").value().empty());
  CHECK_FALSE(policy::resolve_users("root,no-such-user-jitcache").ok());
}
