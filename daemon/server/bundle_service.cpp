#include <daemon/server/bundle_service.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <chrono>
#include <utility>

#include <common/unique_fd.hpp>
#include <daemon/bundle/bundle_reader.hpp>
#include <daemon/bundle/bundle_writer.hpp>
#include <daemon/bundle/byte_source.hpp>
#include <daemon/server/image_check.hpp>
#include <proto/key.hpp>

namespace jitcache::daemon::server {

using common::ErrorCode;
using common::make_error;
using proto::Status;
using stats::Counters;

namespace {

// A bundle that fails a check is the caller's bad input, whatever the check: bad_request, except
// for a limit (too_large), a refusal (forbidden) and the daemon's own failures.
Status status_for_bundle(const common::Error& error) {
  switch (error.code) {
    case ErrorCode::too_large: return Status::too_large;
    case ErrorCode::forbidden: return Status::forbidden;
    case ErrorCode::no_space: return Status::no_space;
    case ErrorCode::io:
    case ErrorCode::internal: return Status::internal;
    default: return Status::bad_request;
  }
}

// An entry checked as a PUT's would be (request_handler.cpp put): its key, its fast key, its image.
common::Result<void> check_as_put(const bundle::ReadEntry& read) {
  const bundle::BundleEntry& e = read.entry;
  JITCACHE_TRY(proto::validate_key(e.key));
  JITCACHE_TRY(proto::validate_fast_key(proto::fast_key_of(e.key, e.content_fast)));
  JITCACHE_TRY(check_entry_image(read.raw_image(), e.key));
  return {};
}

common::Error at_entry(const common::Error& error, std::uint64_t index, std::uint64_t count) {
  return common::Error{error.code,
                       "entry " + std::to_string(index) + " of " + std::to_string(count) + ": " + error.message};
}

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

BundleService::BundleService(store::EntryTransfer& transfer, Counters& counters, policy::TrustPolicy trust,
                             std::optional<proto::SigningKey> signing_key, remote::TrustedKeys trusted,
                             BundleSettings settings)
    : m_transfer(transfer),
      m_counters(counters),
      m_trust(std::move(trust)),
      m_signing_key(std::move(signing_key)),
      m_trusted(std::move(trusted)),
      m_settings(std::move(settings)) {}

bool BundleService::try_begin(uid_t uid) {
  std::lock_guard lock(m_mutex);
  return m_busy.insert(uid).second;
}

void BundleService::end(uid_t uid) {
  std::lock_guard lock(m_mutex);
  m_busy.erase(uid);
}

bool BundleService::signer_trusted(const bundle::BundleHeader& header) const {
  if (!header.is_signed()) return false;
  proto::PublicKey key;
  key.raw = header.signer_key;
  // The key itself must match, not only its 8-byte id.
  const proto::PublicKey* found = m_trusted.find(key.id());
  if (found != nullptr && found->raw == key.raw) return true;
  return m_signing_key && m_signing_key->public_key().raw == key.raw;
}

Reply BundleService::export_bundle(proto::Bytes payload, const policy::PeerCredentials& peer, int fd) {
  auto request = proto::decode_export_bundle_request(payload);
  if (!request) return error_reply(status_for(request.error()), request.error().message);
  struct stat st {};
  const int flags = ::fcntl(fd, F_GETFL);
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || flags < 0 || (flags & O_ACCMODE) == O_RDONLY) {
    return error_reply(Status::bad_request, "EXPORT_BUNDLE: the descriptor must be a regular file open for writing");
  }
  if (st.st_size != 0) return error_reply(Status::bad_request, "EXPORT_BUNDLE: the file must be empty");

  store::ExportFilter filter;
  filter.arch = std::move(request->arch);
  filter.driver_api = request->driver_api;
  filter.driver_build = std::move(request->driver_build);
  filter.since_ms = request->since_ms;
  filter.key_ids = std::move(request->key_ids);
  const bool trusted = m_trust.trusts(peer);
  filter.who = store::Visibility{trusted ? store::k_shared_namespace : static_cast<std::uint32_t>(peer.uid), trusted};

  std::optional<bundle::BundleWriter> writer;
  const std::uint64_t max_bytes = m_settings.limits.max_bundle_bytes;
  std::uint64_t written = 0;
  bundle::ByteSink file = bundle::fd_sink(fd);
  // Rationale: an export over bundle_max_size stops rather than write a file no daemon would import.
  bundle::ByteSink sink = [&](proto::Bytes bytes) -> common::Result<void> {
    written += bytes.size();
    if (written > max_bytes) {
      return make_error(ErrorCode::too_large, "the bundle would pass bundle_max_size (" + std::to_string(max_bytes) +
                                                  " bytes): export fewer entries (--arch, --driver, --since, --keys)");
    }
    return file(bytes);
  };
  const proto::SigningKey* signer = m_signing_key ? &*m_signing_key : nullptr;
  auto exported = m_transfer.export_entries(
      filter,
      [&](std::uint64_t count) -> common::Result<void> {
        bundle::BundleHeader header;
        header.host = m_settings.host;
        header.created_at_ms = now_ms();
        header.entry_count = count;
        header.producer = "jitcached " JITCACHE_VERSION;
        auto started = bundle::BundleWriter::start(sink, std::move(header), signer);
        JITCACHE_TRY(started);
        writer.emplace(std::move(*started));
        return {};
      },
      [&](const bundle::BundleEntry& entry) { return writer->add(entry); });
  common::Result<bundle::BundleSummary> summary =
      exported ? writer->finish() : common::Result<bundle::BundleSummary>(exported.error());
  if (!summary) {
    spdlog::warn("EXPORT_BUNDLE failed: {} peer {}", summary.error().message, peer.describe());
    return error_reply(status_for_bundle(summary.error()), "export failed: " + summary.error().message);
  }
  Counters::add(m_counters.bundles_exported);
  Counters::add(m_counters.bundle_entries_exported, summary->entries);
  proto::ExportBundleReply reply;
  reply.entries = summary->entries;
  reply.bytes = summary->bytes;
  reply.signer = signer != nullptr ? proto::signer_hex(signer->public_key().id()) : "";
  reply.digest = summary->digest;
  spdlog::info("EXPORT_BUNDLE entries={} bytes={} signer={} digest={} peer {}", reply.entries, reply.bytes,
               reply.signer.empty() ? "none" : reply.signer, proto::to_hex(reply.digest), peer.describe());
  return Reply{Status::ok, proto::encode(reply), nullptr, false};
}

Reply BundleService::import_bundle(proto::Bytes payload, const policy::PeerCredentials& peer, int fd) {
  auto request = proto::decode_import_bundle_request(payload);
  if (!request) return error_reply(status_for(request.error()), request.error().message);
  auto imported = import_file(fd, request->target, m_trust.trusts(peer), static_cast<std::uint32_t>(peer.uid));
  if (!imported) {
    spdlog::warn("IMPORT_BUNDLE refused ({}): {} peer {}", proto::import_target_name(request->target),
                 imported.error().message, peer.describe());
    return error_reply(status_for_bundle(imported.error()),
                       "bundle refused, nothing imported: " + imported.error().message);
  }
  spdlog::info("IMPORT_BUNDLE namespace={} entries={} imported={} skipped={} signer={}{} host={} peer {}",
               imported->namespace_id, imported->entries, imported->imported, imported->skipped,
               imported->signer.empty() ? "none" : imported->signer, imported->signer_trusted ? " (trusted)" : "",
               imported->host, peer.describe());
  return Reply{Status::ok, proto::encode(*imported), nullptr, false};
}

common::Result<proto::ImportBundleReply> BundleService::import_file(int fd, proto::ImportTarget target,
                                                                    bool caller_trusted, std::uint32_t own_namespace) {
  auto refuse = [&](common::Error error) -> common::Result<proto::ImportBundleReply> {
    Counters::add(m_counters.bundles_refused);
    return error;
  };
  // Pass 1: every check, the store untouched; the bytes copied to the spool file as they are read.
  auto source = bundle::FdSource::open(fd);
  if (!source) return refuse(source.error());
  common::UniqueFd spool;
  if (!m_settings.spool_dir.empty()) {
    spool.reset(::open(m_settings.spool_dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
    if (!spool)
      spdlog::debug("bundle import: no spool file in {}: the second pass reads the caller's file",
                    m_settings.spool_dir);
  }
  bundle::ByteSink spool_sink = spool ? bundle::fd_sink(spool.get()) : bundle::ByteSink{};
  bundle::CopyingSource copying(*source, [&](std::span<const std::uint8_t> bytes) -> common::Result<void> {
    if (!spool_sink) return {};
    return spool_sink(proto::Bytes(bytes.data(), bytes.size()));
  });
  auto reader = bundle::BundleReader::open(copying, m_settings.limits);
  if (!reader) return refuse(reader.error());
  const bundle::BundleHeader header = reader->header();
  const bool trusted_signer = signer_trusted(header);
  std::string signer;
  if (header.is_signed()) {
    proto::PublicKey key;
    key.raw = header.signer_key;
    signer = proto::signer_hex(key.id());
  }
  if (target == proto::ImportTarget::shared && !caller_trusted && !trusted_signer) {
    return refuse(make_error(ErrorCode::forbidden,
                             header.is_signed()
                                 ? "the bundle is signed by " + signer +
                                       ", which is not a trusted key (remote_trusted_keys): only a trusted caller may "
                                       "import it into the shared namespace; `jitcache import --own` imports it into "
                                       "yours"
                                 : "the bundle is unsigned: only a trusted caller may import it into the shared "
                                   "namespace; `jitcache import --own` imports it into yours"));
  }
  const std::uint32_t namespace_id = target == proto::ImportTarget::shared
                                         ? store::k_shared_namespace
                                         : (caller_trusted ? store::k_shared_namespace : own_namespace);
  std::uint64_t stored_bytes = 0;
  for (;;) {
    auto next = reader->next();
    if (!next) return refuse(next.error());
    if (!*next) break;
    if (auto valid = check_as_put(**next); !valid) {
      return refuse(at_entry(valid.error(), reader->entries_read(), header.entry_count));
    }
    stored_bytes += (*next)->entry.image.size();
  }
  const proto::Digest256 digest = reader->digest();

  // Pass 2: the same checks again, on the private copy, inside the store's one transaction.
  auto again = bundle::FdSource::open(spool ? spool.get() : fd);
  if (!again) return refuse(again.error());
  auto second = bundle::BundleReader::open(*again, m_settings.limits);
  if (!second) return refuse(second.error());
  if (second->header().signer_key != header.signer_key || second->header().entry_count != header.entry_count) {
    return refuse(make_error(ErrorCode::corrupt, "the bundle changed while it was imported"));
  }
  auto counts =
      m_transfer.import_entries(namespace_id, stored_bytes,
                                [&]() -> common::Result<std::optional<bundle::BundleEntry>> {
                                  auto next = second->next();
                                  JITCACHE_TRY(next);
                                  if (!*next) {
                                    if (second->digest() != digest) {
                                      return make_error(ErrorCode::corrupt, "the bundle changed while it was imported");
                                    }
                                    return std::optional<bundle::BundleEntry>{};
                                  }
                                  if (auto valid = check_as_put(**next); !valid) {
                                    return at_entry(valid.error(), second->entries_read(), header.entry_count);
                                  }
                                  return std::optional<bundle::BundleEntry>(std::move((*next)->entry));
                                });
  if (!counts) return refuse(counts.error());

  Counters::add(m_counters.bundles_imported);
  Counters::add(m_counters.bundle_entries_imported, counts->imported);
  Counters::add(m_counters.bundle_entries_skipped, counts->skipped);
  proto::ImportBundleReply reply;
  reply.namespace_id = namespace_id;
  reply.entries = header.entry_count;
  reply.imported = counts->imported;
  reply.skipped = counts->skipped;
  reply.signer = signer;
  reply.signer_trusted = trusted_signer;
  reply.host = header.host;
  reply.digest = digest;
  return reply;
}

}  // namespace jitcache::daemon::server
