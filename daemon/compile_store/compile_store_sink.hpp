// Files what the compile service compiled: the service's store sink (compile_service.hpp) for the
// COMPILE op. The service hands the sink a key id and the compiled image; the store needs the whole
// key and the fast key's content, which only the COMPILE request had. So each request registers its
// key here before it submits (expect) and releases it once answered (release); the sink looks the
// key up by key id. Every request for one key id registers the same key (the key id is its hash).
//
// A compiled image goes to the shared namespace (docs/security.md "The threat model": the daemon
// compiled source it received and hashed itself) with its producer ("nvJitLink X.Y") and compile
// time, and with content_fast, so LOOKUP selector 2 finds it. The write runs on the compile thread,
// before any waiter is answered, so a LOOKUP that follows a COMPILE reply finds the entry.
// Thread safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>

#include <daemon/compile/compile_job.hpp>
#include <daemon/compile/compile_outcome.hpp>
#include <daemon/stats/counters.hpp>
#include <daemon/store/store.hpp>
#include <proto/digest.hpp>
#include <proto/key.hpp>

namespace jitcache::daemon::publish {
class Publisher;
}

namespace jitcache::daemon::compile_store {

class CompileStoreSink {
 public:
  // `publisher`: offered every stored image (null when publishing is off).
  CompileStoreSink(store::Store& store, stats::Counters& counters, publish::Publisher* publisher = nullptr)
      : m_store(store), m_counters(counters), m_publisher(publisher) {}

  void expect(const proto::Digest256& key_id, const proto::KeyFields& key, const proto::Checksum128& content_fast);
  void release(const proto::Digest256& key_id);
  // The StoreSink: writes the compiled image under the registered key, with the job's PTX as its
  // source (a fleet tier keeps it: store.hpp PutInput). A store failure is logged and counted; the
  // waiters still get the image.
  void operator()(const proto::Digest256& key_id, const compile::CompileOutcomePtr& outcome,
                  const compile::CompileJob& job);

 private:
  struct Expected {
    proto::KeyFields key;
    proto::Checksum128 content_fast;
    unsigned requests = 0;
  };
  store::Store& m_store;
  stats::Counters& m_counters;
  publish::Publisher* m_publisher;
  std::mutex m_mutex;
  std::map<proto::Digest256, Expected> m_expected;
};

}  // namespace jitcache::daemon::compile_store
