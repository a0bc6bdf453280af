// StoreSet: the store's interfaces as one consumer that uses all of them (the request handler)
// takes them. Each may be a different object: a tiered store serves (store.hpp) while the local
// store it fronts does the maintenance, the tenancy and the publishing (docs/architecture.md "The
// store"). A local store that implements the first four and hands out its Diagnosis (SqliteStore:
// diagnosis()) converts to a StoreSet of itself.
// Thread safety: references only; as the interfaces.
#pragma once

#include <concepts>

#include <daemon/store/diagnosis.hpp>
#include <daemon/store/maintenance.hpp>
#include <daemon/store/publish_source.hpp>
#include <daemon/store/store.hpp>
#include <daemon/store/tenancy.hpp>

namespace jitcache::daemon::store {

struct StoreSet {
  Store& serving;
  Maintenance& maintenance;
  Tenancy& tenancy;
  PublishSource& publish_source;
  Diagnosis& diagnosis;  // EXPLAIN and MISSES (diagnosis.hpp)

  StoreSet(Store& s, Maintenance& m, Tenancy& t, PublishSource& p, Diagnosis& d)
      : serving(s), maintenance(m), tenancy(t), publish_source(p), diagnosis(d) {}
  template <class Local>
  requires std::derived_from<Local, Store> && std::derived_from<Local, Maintenance> &&
      std::derived_from<Local, Tenancy> && std::derived_from<Local, PublishSource> && requires(Local& local) {
    { local.diagnosis() } -> std::convertible_to<Diagnosis&>;
  }
  StoreSet(Local& local)  // NOLINT(google-explicit-constructor): one store serving every role
      : StoreSet(local, local, local, local, local.diagnosis()) {}
};

}  // namespace jitcache::daemon::store
