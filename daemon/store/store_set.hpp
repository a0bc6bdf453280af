// StoreSet: the store's interfaces as one consumer that uses all of them (the request handler)
// takes them. Each may be a different object: a tiered store serves (store.hpp) while the local
// store it fronts does the maintenance, the tenancy and the publishing (docs/architecture.md "The
// store"). A type that implements all five converts to a StoreSet of itself.
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
  template <class AllFive>
  requires std::derived_from<AllFive, Store> && std::derived_from<AllFive, Maintenance> &&
      std::derived_from<AllFive, Tenancy> && std::derived_from<AllFive, PublishSource> &&
      std::derived_from<AllFive, Diagnosis>
      StoreSet(AllFive& all)  // NOLINT(google-explicit-constructor): one object serving every role
      : StoreSet(all, all, all, all, all) {}
};

}  // namespace jitcache::daemon::store
