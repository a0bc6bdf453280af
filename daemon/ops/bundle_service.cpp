#include <daemon/ops/bundle_service.hpp>

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <set>
#include <utility>

#include <common/memory_backed_file.hpp>
#include <common/unique_fd.hpp>
#include <daemon/bundle/bundle_reader.hpp>
#include <daemon/bundle/bundle_writer.hpp>
#include <daemon/bundle/byte_source.hpp>
#include <daemon/ops/image_check.hpp>
#include <daemon/ops/private_spool.hpp>
#include <proto/key.hpp>

namespace jitcache::daemon::ops {

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

// An entry's key checked as a PUT's would be (request_handler.cpp put): its key and its fast key.
// Its image is checked (check_entry_image) once decoded, and only if it is to be imported.
common::Result<void> check_key(const bundle::ReadEntry& read) {
  const bundle::BundleEntry& e = read.entry;
  JITCACHE_TRY(proto::validate_key(e.key));
  JITCACHE_TRY(proto::validate_fast_key(proto::fast_key_of(e.key, e.content_fast)));
  return {};
}

common::Error at_entry(const common::Error& error, std::uint64_t index, std::uint64_t count) {
  return common::Error{error.code,
                       "entry " + std::to_string(index) + " of " + std::to_string(count) + ": " + error.message};
}

// Rationale: an export's spool is granted this much at a time, so a small export holds little of
// the disk's room for spools, and a large one stops (no_space) where the disk has no more.
constexpr std::uint64_t k_export_spool_step = 64ull << 20;

// Rationale: a pipe's reader that takes nothing for this long has gone away in all but name; the
// export gives up rather than hold its thread and its uid's slot for good. A regular file's write
// cannot be timed out (a frozen file system blocks it in the kernel): it holds only its own thread.
constexpr int k_pipe_stall_timeout_ms = 60'000;

// The spool's bytes into the caller's file or pipe. A pipe is written a page at a time once poll
// says there is room, so a reader that stops reading times out instead of blocking for good.
common::Result<void> copy_out(const PrivateSpool& spool, int fd, bool pipe) {
  std::vector<std::uint8_t> buffer(pipe ? 4096 : 1 << 16);
  for (std::uint64_t offset = 0; offset < spool.size();) {
    auto got = spool.read_at(offset, buffer);
    JITCACHE_TRY(got);
    if (*got == 0) return make_error(ErrorCode::internal, "the export's spool ended early");
    std::size_t done = 0;
    while (done < *got) {
      if (pipe) {
        pollfd p{fd, POLLOUT, 0};
        const int ready = ::poll(&p, 1, k_pipe_stall_timeout_ms);
        if (ready < 0 && errno == EINTR) continue;
        if (ready == 0) {
          return make_error(ErrorCode::timeout, "the pipe's reader took nothing for " +
                                                    std::to_string(k_pipe_stall_timeout_ms / 1000) +
                                                    " s: the export was abandoned");
        }
      }
      const ssize_t put = ::write(fd, buffer.data() + done, *got - done);
      if (put < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (put < 0) {
        return make_error(errno == ENOSPC || errno == EDQUOT ? ErrorCode::no_space : ErrorCode::io,
                          std::string("writing the bundle: ") + std::strerror(errno));
      }
      done += static_cast<std::size_t>(put);
    }
    offset += *got;
  }
  return {};
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
      m_settings(std::move(settings)),
      m_spool_budget(m_settings.spool_dir, m_settings.spool_reserve),
      m_decode_budget(m_settings.decoded_per_uid) {}

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
  const bool writable = flags >= 0 && (flags & O_ACCMODE) != O_RDONLY;
  if (::fstat(fd, &st) != 0 || !writable || !(S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode))) {
    return error_reply(Status::bad_request,
                       "EXPORT_BUNDLE: the descriptor must be a regular file on disk, or a pipe, open for writing");
  }
  const bool pipe = S_ISFIFO(st.st_mode);
  if (!pipe) {
    if (auto memory = common::memory_backed_file_system(fd)) {
      return error_reply(Status::bad_request,
                         "EXPORT_BUNDLE: the file is on " + *memory +
                             ", whose pages are memory the daemon would be charged for: pass a file on a disk file "
                             "system, or a pipe (jitcache export does so for such an -o by itself)");
    }
    if (st.st_size != 0) return error_reply(Status::bad_request, "EXPORT_BUNDLE: the file must be empty");
  }

  store::ExportFilter filter;
  filter.arch = std::move(request->arch);
  filter.driver_api = request->driver_api;
  filter.driver_build = std::move(request->driver_build);
  filter.since_ms = request->since_ms;
  filter.key_ids = std::move(request->key_ids);
  const bool trusted = m_trust.trusts(peer);
  filter.who = store::Visibility{trusted ? store::k_shared_namespace : static_cast<std::uint32_t>(peer.uid), trusted};

  // Rationale: the bundle is written into a private spool first, and copied to the caller's file
  // only after the store's read snapshot has ended, so a file whose writes stall (a pipe nobody
  // reads, a frozen or FUSE file system) holds neither the snapshot (which would pin the WAL) nor
  // anything another uid's bundle operation waits for.
  const std::uint64_t max_bytes = m_settings.limits.max_bundle_bytes;
  auto grant = m_spool_budget.reserve(std::min(k_export_spool_step, max_bytes), "this export");
  if (!grant) return error_reply(status_for_bundle(grant.error()), "export failed: " + grant.error().message);
  auto spool = PrivateSpool::create(m_settings.spool_dir, grant->bytes());
  if (!spool) return error_reply(status_for_bundle(spool.error()), "export failed: " + spool.error().message);
  std::optional<bundle::BundleWriter> writer;
  std::uint64_t written = 0;
  // Rationale: an export over bundle_max_size stops rather than write a file no daemon would import.
  bundle::ByteSink sink = [&](proto::Bytes bytes) -> common::Result<void> {
    written += bytes.size();
    if (written > max_bytes) {
      return make_error(ErrorCode::too_large, "the bundle would pass bundle_max_size (" + std::to_string(max_bytes) +
                                                  " bytes): export fewer entries (--arch, --driver, --since, --keys)");
    }
    if (written > grant->bytes()) {
      const std::uint64_t more =
          std::min(std::max(k_export_spool_step, written - grant->bytes()), max_bytes - grant->bytes());
      JITCACHE_TRY(grant->grow(more, "this export"));
      spool->raise_limit(grant->bytes());
    }
    return spool->append(bytes);
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
  if (summary) {
    if (auto copied = copy_out(*spool, fd, pipe); !copied) summary = copied.error();
  }
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
  const bool trusted = m_trust.trusts(peer);
  auto imported =
      import_file(fd, request->target, ImportCaller{trusted, static_cast<std::uint32_t>(peer.uid), !trusted});
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
                                                                    const ImportCaller& caller) {
  auto refuse = [&](common::Error error) -> common::Result<proto::ImportBundleReply> {
    Counters::add(m_counters.bundles_refused);
    return error;
  };
  const bool into_shared = target != proto::ImportTarget::own;
  if (target == proto::ImportTarget::shared_restoring_removed && !caller.trusted) {
    return refuse(make_error(ErrorCode::forbidden,
                             "only a trusted caller may bring back entries an operator removed (--restore-removed)"));
  }
  auto source = bundle::FdSource::open(fd);
  if (!source) return refuse(source.error());

  // Pass 1, the store untouched and no lock held: every check, the caller's file read once. An
  // entry the import will take is decoded, checked as a PUT's and its record appended to the
  // spool; one already in the target namespace, removed from it, or met before in this bundle is
  // skipped without decoding (its bytes still count towards the digest and the signature).
  auto reader = bundle::BundleReader::open(*source, m_settings.limits);
  if (!reader) return refuse(reader.error());
  const bundle::BundleHeader header = reader->header();
  const bool trusted_signer = signer_trusted(header);
  std::string signer;
  if (header.is_signed()) {
    proto::PublicKey key;
    key.raw = header.signer_key;
    signer = proto::signer_hex(key.id());
  }
  if (into_shared && !caller.trusted && !trusted_signer) {
    return refuse(make_error(ErrorCode::forbidden,
                             header.is_signed()
                                 ? "the bundle is signed by " + signer +
                                       ", which is not a trusted key (remote_trusted_keys): only a trusted caller may "
                                       "import it into the shared namespace; `jitcache import --own` imports it into "
                                       "yours"
                                 : "the bundle is unsigned: only a trusted caller may import it into the shared "
                                   "namespace; `jitcache import --own` imports it into yours"));
  }
  // The spool, granted before a byte of it is written: an untrusted caller's bundle is at most its
  // namespace_quota (its spool is its cost), and no spool takes the disk below bundle_spool_reserve.
  // The spool holds the checked records to import, never more than the file.
  if (caller.limited && m_settings.namespace_quota != 0 && source->size() > m_settings.namespace_quota) {
    return refuse(make_error(ErrorCode::too_large,
                             "the bundle's " + std::to_string(source->size()) + " bytes are more than uid " +
                                 std::to_string(caller.uid) + " may have spooled: its namespace_quota of " +
                                 std::to_string(m_settings.namespace_quota) + " bytes (nothing was written)"));
  }
  auto grant = m_spool_budget.reserve(source->size(), "this bundle");
  if (!grant) return refuse(grant.error());
  auto spool = PrivateSpool::create(m_settings.spool_dir, grant->bytes());
  if (!spool) return refuse(spool.error());

  const std::uint32_t namespace_id =
      into_shared ? store::k_shared_namespace : (caller.trusted ? store::k_shared_namespace : caller.uid);
  // Rationale: a signature vouches for an entry only where the signing host's own rules made it
  // shared (docs/security.md "Bundles"): an entry of the exporting caller's namespace stays that
  // caller's word, which the shared namespace takes from trusted callers alone.
  const bool by_signature = namespace_id == store::k_shared_namespace && !caller.trusted;
  const bool restoring = target == proto::ImportTarget::shared_restoring_removed;
  std::uint64_t stored_bytes = 0;
  std::uint64_t entry_count = 0;
  std::uint64_t decoded_bytes = 0;
  std::uint64_t removed = 0;
  std::set<proto::Digest256> seen;
  for (;;) {
    auto next = reader->next(bundle::ImageCheck::deferred);
    if (!next) return refuse(next.error());
    if (!*next) break;
    bundle::ReadEntry& read = **next;
    const std::uint64_t index = reader->entries_read();
    if (by_signature && read.entry.origin != bundle::EntryOrigin::shared) {
      return refuse(at_entry(make_error(ErrorCode::forbidden,
                                        "it came from a uid's own namespace on " + header.host +
                                            ", not from its shared one: the signature by " + signer +
                                            " does not make it shared here; only a trusted caller may import it "
                                            "into the shared namespace, `jitcache import --own` imports the bundle "
                                            "into yours"),
                             index, header.entry_count));
    }
    if (auto valid = check_key(read); !valid) return refuse(at_entry(valid.error(), index, header.entry_count));
    const proto::Digest256 key_id = proto::key_id(read.entry.key);
    if (!seen.insert(key_id).second) continue;
    auto presence = m_transfer.presence(namespace_id, key_id);
    if (!presence) return refuse(presence.error());
    if (*presence == store::KeyPresence::present) continue;
    if (*presence == store::KeyPresence::removed && !restoring) {
      ++removed;
      continue;
    }
    decoded_bytes += read.entry.raw_size;
    if (decoded_bytes > m_settings.max_decoded_bytes) {
      return refuse(at_entry(make_error(ErrorCode::too_large,
                                        "the bundle's images to import decode to more than bundle_max_decoded (" +
                                            std::to_string(m_settings.max_decoded_bytes) +
                                            " bytes): import it in parts (jitcache export --keys)"),
                             index, header.entry_count));
    }
    if (caller.limited) {
      if (auto charged = m_decode_budget.charge(caller.uid, read.entry.raw_size); !charged) {
        return refuse(at_entry(charged.error(), index, header.entry_count));
      }
    }
    if (auto checked = bundle::check_image(read, m_settings.limits); !checked) {
      return refuse(at_entry(checked.error(), index, header.entry_count));
    }
    if (auto valid = check_entry_image(read.raw_image(), read.entry.key); !valid) {
      return refuse(at_entry(valid.error(), index, header.entry_count));
    }
    if (auto kept = spool->append_record(proto::Bytes(read.record)); !kept) return refuse(kept.error());
    stored_bytes += read.entry.image.size();
    ++entry_count;
  }
  const proto::Digest256 digest = reader->digest();

  // Pass 2, inside the store's one transaction: the checked records, read back from the private
  // spool, which nobody else can write; parsed again, never decoded, hashed or checked.
  bundle::ReaderLimits limits = m_settings.limits;
  store::ImportOptions options;
  options.namespace_id = namespace_id;
  options.stored_bytes = stored_bytes;
  options.entry_count = entry_count;
  options.restore_removed = restoring;
  auto counts = m_transfer.import_entries(options, [&]() -> common::Result<std::optional<bundle::BundleEntry>> {
    auto record = spool->next_record();
    JITCACHE_TRY(record);
    if (!*record) return std::optional<bundle::BundleEntry>{};
    auto entry = bundle::parse_entry_record(proto::Bytes(**record), limits);
    JITCACHE_TRY(entry);
    return std::optional<bundle::BundleEntry>(std::move(*entry));
  });
  if (!counts) return refuse(counts.error());

  const std::uint64_t skipped = header.entry_count - counts->imported;
  Counters::add(m_counters.bundles_imported);
  Counters::add(m_counters.bundle_entries_imported, counts->imported);
  Counters::add(m_counters.bundle_entries_skipped, skipped);
  Counters::add(m_counters.bundle_entries_removed, removed + counts->removed);
  proto::ImportBundleReply reply;
  reply.namespace_id = namespace_id;
  reply.entries = header.entry_count;
  reply.imported = counts->imported;
  reply.skipped = skipped;
  reply.signer = signer;
  reply.signer_trusted = trusted_signer;
  reply.host = header.host;
  reply.digest = digest;
  return reply;
}

}  // namespace jitcache::daemon::ops
