// A CachePort (client/src/loader/cache_port.hpp) for unit tests of the load flow: a daemon in
// memory that answers from the entries a test puts in it, records every request it was sent, and
// can be told to be absent, to lack capabilities or to fail a call. No socket, no thread.
// Header-only (test code). Thread safety: one test thread at a time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <client/src/loader/cache_port.hpp>
#include <proto/key.hpp>
#include <proto/wire.hpp>

namespace jitcache::testing {

class FakeCachePort final : public client::loader::CachePort {
 public:
  using FetchedImage = client::transport::FetchedImage;

  struct Entry {
    proto::KeyFields key;
    std::optional<proto::Checksum128> content_fast;  // its fast key's content, when it has one
    std::vector<std::uint8_t> image;
  };

  // The script.
  std::vector<Entry> entries;                  // what LOOKUP finds
  std::vector<Entry> published;                // what read_published finds
  std::optional<common::Error> connect_error;  // the daemon cannot be reached
  std::uint64_t capability_bits =
      proto::k_capability_store | proto::k_capability_report_failure | proto::k_capability_fast_key;
  bool capabilities_known = false;                  // as on a pooled connection that sent HELLO already
  std::optional<proto::Status> lookup_fast_status;  // answer selector 2 with this error status
  bool lookup_fast_fails = false;                   // selector 2 meets a dead daemon (reply_status 0)
  std::optional<proto::Status> hello_status;        // answer HELLO with this error status
  // COMPILE's answer: `compiled` when there is an image for it, else `compile_kind` with a message.
  std::optional<Entry> compiled;
  client::transport::CompileAnswer::Kind compile_kind = client::transport::CompileAnswer::Kind::cannot_compile;

  // What the flow asked.
  int connects = 0;
  int hellos = 0;
  int published_reads = 0;
  std::vector<proto::FastKey> fast_lookups;
  std::vector<proto::KeyFields> key_lookups;
  std::vector<proto::CompileRequest> compiles;
  std::vector<proto::PutRequest> puts;                // their images are views into the caller's buffer:
  std::vector<std::vector<std::uint8_t>> put_images;  // copies, one per PUT
  std::vector<proto::ReportFailureRequest> reports;
  std::vector<proto::NvrtcUncachedReason> nvrtc_notes;
  std::vector<proto::FastKey> hit_notes;

  static FetchedImage fetched(const Entry& entry) {
    FetchedImage out;
    out.info.key = entry.key;
    out.info.key_id = proto::key_id(entry.key);
    out.info.producer = "fake cache port";
    out.info.raw_size = entry.image.size();
    out.info.stored_size = entry.image.size();
    out.info.checksum = proto::xxh3_128(proto::Bytes(entry.image));
    out.image.assign(entry.image.begin(), entry.image.end());
    return out;
  }

  common::Result<std::optional<FetchedImage>> read_published(const proto::FastKey& fast_key) override {
    ++published_reads;
    for (const Entry& entry : published) {
      if (entry.content_fast && proto::fast_key_of(entry.key, *entry.content_fast) == fast_key) return {fetched(entry)};
    }
    return {std::nullopt};
  }
  void note_published_hit(const proto::FastKey& fast_key) override { hit_notes.push_back(fast_key); }

  common::Result<void> connect() override {
    ++connects;
    if (connect_error) return *connect_error;
    return {};
  }
  std::optional<std::uint64_t> known_capabilities() const override {
    if (capabilities_known) return capability_bits;
    return std::nullopt;
  }
  common::Result<std::uint64_t> capabilities() override {
    if (connect_error) return *connect_error;
    if (!capabilities_known) ++hellos;
    if (hello_status) return status_error(*hello_status, "HELLO refused");
    capabilities_known = true;
    return capability_bits;
  }
  common::Result<std::optional<FetchedImage>> lookup_fast(const proto::FastKey& fast_key,
                                                          client::transport::ImageDelivery) override {
    fast_lookups.push_back(fast_key);
    if (lookup_fast_fails) return common::make_error(common::ErrorCode::unavailable, "the daemon hung up");
    if (lookup_fast_status) return status_error(*lookup_fast_status, "LOOKUP selector 2 refused");
    for (const Entry& entry : entries) {
      if (entry.content_fast && proto::fast_key_of(entry.key, *entry.content_fast) == fast_key) return {fetched(entry)};
    }
    return {std::nullopt};
  }
  common::Result<std::optional<FetchedImage>> lookup(const proto::KeyFields& key,
                                                     client::transport::ImageDelivery) override {
    key_lookups.push_back(key);
    for (const Entry& entry : entries) {
      if (entry.key == key) return {fetched(entry)};
    }
    return {std::nullopt};
  }
  common::Result<client::transport::CompileAnswer> compile(const proto::CompileRequest& request,
                                                           std::chrono::milliseconds) override {
    compiles.push_back(request);
    client::transport::CompileAnswer answer;
    if (compiled) {
      answer.kind = client::transport::CompileAnswer::Kind::compiled;
      answer.image = fetched(*compiled);
    } else {
      answer.kind = compile_kind;
      answer.message = "the fake port did not compile it";
    }
    return answer;
  }
  common::Result<void> put(const proto::PutRequest& request) override {
    puts.push_back(request);
    put_images.emplace_back(request.image.begin(), request.image.end());
    return {};
  }
  common::Result<void> report_failure(const proto::ReportFailureRequest& request) override {
    reports.push_back(request);
    return {};
  }
  common::Result<void> note_nvrtc_uncached(proto::NvrtcUncachedReason reason) override {
    nvrtc_notes.push_back(reason);
    return {};
  }
  // The load flow's tests compile no NVRTC program: a daemon that does not offer NVRTC_COMPILE.
  common::Result<proto::NvrtcCompileReply> nvrtc_compile(const proto::NvrtcCompileRequest&,
                                                         std::chrono::milliseconds) override {
    return common::make_error(common::ErrorCode::unsupported, "no NVRTC_COMPILE in this fake");
  }

 private:
  static common::Error status_error(proto::Status status, std::string message) {
    common::Error error = common::make_error(common::ErrorCode::invalid_argument, std::move(message));
    error.reply_status = static_cast<std::uint16_t>(status);
    return error;
  }
};

}  // namespace jitcache::testing
