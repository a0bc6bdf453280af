#include <client/src/link/link_cache.hpp>

#include <vector>

#include <client/src/loader/cached_image_check.hpp>
#include <client/src/loader/lookup_policy.hpp>
#include <proto/compile_messages.hpp>

namespace jitcache::client::link {

std::optional<transport::FetchedImage> LinkCache::checked(std::optional<transport::FetchedImage> fetched,
                                                          const proto::KeyFields& key) {
  if (!fetched) return std::nullopt;
  if (auto ok = loader::check_cached_image(*fetched, key); !ok) {
    ++m_counters.corrupt_replies;
    m_record.reason("the cached image failed the client's check (" + ok.error().message + "); linked again");
    return std::nullopt;
  }
  return fetched;
}

common::Result<std::optional<transport::FetchedImage>> LinkCache::find(const LinkKey& key, bool& published) {
  published = false;
  // Rationale: as a module load does, before the daemon is asked and whether or not it answers: a
  // published copy is checked like any hit and needs no round trip.
  if (m_settings.published) {
    auto timer = m_record.step(&jitcache_load_info::ns_lookup);
    auto copy = m_port.read_published(key.fast());
    if (copy && copy->has_value()) {
      if (auto ok = loader::check_cached_image(**copy, key.fields); ok) {
        ++m_counters.published_hits;
        m_port.note_published_hit(key.fast());
        published = true;
        return copy;
      }
      ++m_counters.published_rejects;
    } else if (!copy) {
      ++m_counters.published_rejects;
    }
  }
  auto fetched = look_up(key);
  JITCACHE_TRY(fetched);
  return checked(std::move(*fetched), key.fields);
}

// One LOOKUP, as a module load makes it (loader/lookup_policy.hpp), timed as a whole with the
// connect before it.
common::Result<std::optional<transport::FetchedImage>> LinkCache::look_up(const LinkKey& key) {
  auto timer = m_record.step(&jitcache_load_info::ns_lookup);
  JITCACHE_TRY(m_port.connect());
  const loader::LookupAsk ask{key.fast(), [&key]() -> const proto::KeyFields& { return key.fields; },
                              transport::ImageDelivery::bytes, nullptr};
  return loader::look_up_entry(m_port, ask, m_counters);
}

common::Result<std::optional<transport::CompileAnswer>> LinkCache::compile(const LinkKey& key,
                                                                           std::span<const LinkInput> inputs) {
  auto capabilities = m_port.capabilities();
  JITCACHE_TRY(capabilities);
  if ((*capabilities & proto::k_capability_compile_link) == 0) return std::optional<transport::CompileAnswer>{};
  proto::CompileRequest request;
  request.key_schema = key.fields.key_schema;
  request.arch = key.fields.arch;
  request.driver_api = key.fields.driver_api;
  request.driver_build = key.fields.driver_build;
  request.options = key.fields.options;
  request.priority = proto::CompilePriority::interactive;
  for (const LinkInput& input : inputs) request.link_inputs.push_back({input.kind, input.data()});
  auto answer = [&] {
    auto timer = m_record.step(&jitcache_load_info::ns_compile);
    return m_port.compile(request, m_settings.compile_timeout);
  }();
  JITCACHE_TRY(answer);
  if (answer->kind == transport::CompileAnswer::Kind::compiled) {
    answer->image = checked(std::move(answer->image), key.fields);
    if (!answer->image) {
      // A compiled image that fails the check is as good as none: the session links it itself.
      answer->kind = transport::CompileAnswer::Kind::worker_failed;
      answer->message = "the image jitcached compiled failed the client's check";
    }
  }
  return std::optional<transport::CompileAnswer>{std::move(*answer)};
}

void LinkCache::put(const LinkKey& key, proto::Bytes image, const std::string& producer,
                    std::uint64_t compile_time_us) {
  auto timer = m_record.step(&jitcache_load_info::ns_put);
  proto::PutRequest request;
  request.key = key.fields;
  request.producer = producer;
  request.compile_time_us = compile_time_us;
  request.image = image;
  if (auto capabilities = m_port.capabilities(); capabilities && (*capabilities & proto::k_capability_fast_key)) {
    request.content_fast = key.content_fast;
  }
  auto stored = m_port.put(request);
  if (stored) {
    ++m_counters.puts;
    return;
  }
  ++m_counters.put_failures;
  m_record.append_reason("; storing it failed: " + stored.error().message);
}

}  // namespace jitcache::client::link
