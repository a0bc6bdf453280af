// The descriptor plan (daemon/server/descriptor_plan.hpp): connections and cached memfds each get a
// share of what the daemon's own files leave, with a quarter kept free, whatever the limit; each
// connection counts its socket and the descriptor it may hold for a request still to come.
#include <catch2/catch.hpp>

#include <daemon/server/descriptor_plan.hpp>

using jitcache::daemon::server::plan_descriptors;

TEST_CASE("descriptor plan: a generous limit keeps max_connections and leaves a quarter free") {
  const auto plan = plan_descriptors(65536, 100, 1024);
  CHECK(plan.max_connections == 1024);
  CHECK(plan.cached_image_descriptors == (65536 - 100) / 4);
  CHECK(plan.reserved + 2 * plan.max_connections + plan.cached_image_descriptors < plan.limit);
}

TEST_CASE("descriptor plan: every connection counts two descriptors, its socket and the one it may park") {
  // A client may send a descriptor ahead of the request that takes it; the connection keeps it.
  const auto plan = plan_descriptors(10'100, 100, 1'000'000);
  CHECK(plan.max_connections == 2'500);
  CHECK(plan.reserved + jitcache::daemon::server::k_descriptors_per_connection * plan.max_connections +
            plan.cached_image_descriptors <=
        plan.limit - (plan.limit - plan.reserved) / 4);
}

TEST_CASE("descriptor plan: a low limit lowers max_connections and the memfds kept, never to nothing for connections") {
  const auto plan = plan_descriptors(256, 120, 1024);
  CHECK(plan.max_connections == 34);
  CHECK(plan.cached_image_descriptors == 34);
  CHECK(plan.reserved + 2 * plan.max_connections + plan.cached_image_descriptors <= plan.limit - 34);

  const auto starved = plan_descriptors(100, 120, 1024);
  CHECK(starved.max_connections == 1);
  CHECK(starved.cached_image_descriptors == 0);
}
