#include <daemon/startup/bundle_setup.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <vector>

#include <common/unique_fd.hpp>
#include <daemon/bundle/bundle_entry.hpp>
#include <daemon/remote/record/trusted_keys.hpp>
#include <daemon/startup/fleet_setup.hpp>
#include <proto/digest.hpp>

namespace jitcache::daemon::startup {

using common::ErrorCode;
using common::make_error;

common::Result<std::unique_ptr<ops::BundleService>> make_bundle_service(const config::Config& config,
                                                                        store::EntryTransfer& transfer,
                                                                        stats::Counters& counters,
                                                                        policy::TrustPolicy trust) {
  auto trusted = remote::TrustedKeys::load(split_commas(config.remote_trusted_keys));
  if (!trusted) return make_error(trusted.error().code, "remote_trusted_keys: " + trusted.error().message);
  std::optional<proto::SigningKey> signing;
  if (!config.remote_signing_key.empty()) {
    auto key = proto::SigningKey::load(config.remote_signing_key);
    if (!key) return make_error(key.error().code, "remote_signing_key: " + key.error().message);
    signing.emplace(std::move(*key));
  }
  ops::BundleSettings settings;
  settings.limits.max_bundle_bytes = config.bundle_max_size;
  settings.limits.max_entry_bytes = config.max_frame_bytes;
  settings.host = host_name();
  settings.spool_dir = config.state_dir;
  settings.spool_reserve = config.bundle_spool_reserve;
  settings.max_decoded_bytes = config.bundle_max_decoded;
  settings.decoded_per_uid = config.bundle_decoded_per_uid;
  settings.namespace_quota = config.namespace_quota;
  return std::make_unique<ops::BundleService>(transfer, counters, std::move(trust), std::move(signing),
                                              std::move(*trusted), std::move(settings));
}

namespace {

// Rationale: a line per bundle ever imported; a container imports a handful. The bound keeps a
// damaged or planted file from being read whole.
constexpr std::uintmax_t k_max_remembered_bytes = 1 << 20;

std::set<std::string> remembered(const std::string& path) {
  std::set<std::string> digests;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec) || std::filesystem::file_size(path, ec) > k_max_remembered_bytes) {
    return digests;
  }
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() >= 64) digests.insert(line.substr(0, 64));
  }
  return digests;
}

// The digest a bundle's trailer names (docs/bundle-format.md): what it is remembered by. The import
// checks it against the bytes; here it only says whether this bundle was imported before.
std::optional<std::string> trailer_digest(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
      st.st_size < static_cast<off_t>(bundle::k_head_size + bundle::k_trailer_size)) {
    return std::nullopt;
  }
  std::array<std::uint8_t, 32> digest{};
  const off_t at = st.st_size - 64 - 32;
  if (::pread(fd, digest.data(), digest.size(), at) != static_cast<ssize_t>(digest.size())) return std::nullopt;
  return proto::to_hex(proto::Bytes(digest));
}

}  // namespace

void import_bundles_at_start(const config::Config& config, ops::BundleService& bundles) {
  if (config.import_dir.empty()) return;
  std::error_code ec;
  std::vector<std::filesystem::path> files;
  for (const auto& item : std::filesystem::directory_iterator(config.import_dir, ec)) {
    if (item.path().extension() == ".jcb" && item.is_regular_file(ec)) files.push_back(item.path());
  }
  if (ec) {
    spdlog::warn("import_dir {}: cannot read it: {}", config.import_dir, ec.message());
    return;
  }
  std::sort(files.begin(), files.end());
  const std::string memory = config.state_dir + "/" + k_imported_bundles_file;
  std::set<std::string> done = remembered(memory);
  for (const auto& path : files) {
    common::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    if (!fd) {
      spdlog::warn("import_dir: bundle {} skipped: cannot open it", path.string());
      continue;
    }
    const auto digest = trailer_digest(fd.get());
    if (digest && done.count(*digest) != 0) {
      spdlog::debug("import_dir: bundle {} was imported before", path.string());
      continue;
    }
    // The operator's directory: no uid to charge, and only entries its signer's host had shared.
    auto imported = bundles.import_file(fd.get(), proto::ImportTarget::shared,
                                        ops::ImportCaller{false, store::k_shared_namespace, false});
    if (!imported) {
      spdlog::warn("import_dir: bundle {} skipped, nothing of it imported: {}", path.string(),
                   imported.error().message);
      continue;
    }
    spdlog::info("import_dir: bundle {} imported: {} entries, {} new, {} already present (signer {}, host {})",
                 path.string(), imported->entries, imported->imported, imported->skipped, imported->signer,
                 imported->host);
    const std::string hex = proto::to_hex(imported->digest);
    done.insert(hex);
    std::ofstream out(memory, std::ios::app);
    out << hex << ' ' << path.filename().string() << '\n';
    if (!out) spdlog::warn("import_dir: cannot write {}: bundle {} will be imported again", memory, path.string());
  }
}

}  // namespace jitcache::daemon::startup
