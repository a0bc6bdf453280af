// What a link session asks of the cache when it completes: the entry of its key (the daemon's
// published copy, else one LOOKUP), the daemon's compile of an nvJitLink link, and the PUT of an image
// linked here. The same rules as a module load's (client/src/loader/load_flow.hpp): an entry found
// by fast key is used only if its content digest is the key's, and every image is checked (size,
// XXH3-128, ELF bounds: loader/cached_image_check.hpp) before a session hands it out.
//
// Errors: as the cache port's (loader/cache_port.hpp): reply_status 0 means the daemon cannot be
// used, and the session goes to the real linker.
// Thread safety: one LinkCache per Complete, on that call's thread.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include <client/src/link/link_input.hpp>
#include <client/src/link/link_key.hpp>
#include <client/src/loader/cache_port.hpp>
#include <client/src/loader/client_counters.hpp>
#include <client/src/loader/client_settings.hpp>
#include <client/src/loader/load_record.hpp>

namespace jitcache::client::link {

class LinkCache {
 public:
  LinkCache(loader::CachePort& port, const loader::ClientSettings& settings, loader::ClientCounters& counters,
            loader::LoadRecord& record)
      : m_port(port), m_settings(settings), m_counters(counters), m_record(record) {}

  // The checked entry of `key`, or nullopt for a miss (also for an entry that failed the client's
  // check: it is counted as corrupt_replies and rebuilt). `published` says where a hit came from.
  common::Result<std::optional<transport::FetchedImage>> find(const LinkKey& key, bool& published);
  // COMPILE of the inputs of an nvJitLink link, when the daemon announces capability bit 9
  // (compile_link); nullopt when it does not. A compiled answer's image is checked like a hit.
  common::Result<std::optional<transport::CompileAnswer>> compile(const LinkKey& key,
                                                                  std::span<const LinkInput> inputs);
  // Stores an image linked in this process (the daemon decides the namespace by the caller's uid);
  // a failure is counted (put_failures) and noted in the record, never returned.
  void put(const LinkKey& key, proto::Bytes image, const std::string& producer, std::uint64_t compile_time_us);

 private:
  common::Result<std::optional<transport::FetchedImage>> look_up(const LinkKey& key);
  std::optional<transport::FetchedImage> checked(std::optional<transport::FetchedImage> fetched,
                                                 const proto::KeyFields& key);

  loader::CachePort& m_port;
  const loader::ClientSettings& m_settings;
  loader::ClientCounters& m_counters;
  loader::LoadRecord& m_record;
};

}  // namespace jitcache::client::link
