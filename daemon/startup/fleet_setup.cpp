#include <daemon/startup/fleet_setup.hpp>

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include <spdlog/spdlog.h>

#include <daemon/remote/backend_factory.hpp>
#include <daemon/remote/record/trusted_keys.hpp>

namespace jitcache::daemon::startup {

using common::ErrorCode;
using common::make_error;
using common::Result;

Fleet::~Fleet() {
  healer.reset();
  sampler.reset();
  gate.reset();
  asks.reset();
  store.reset();
  tier.reset();
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> pieces;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::size_t end = comma == std::string::npos ? text.size() : comma;
    std::string piece = text.substr(start, end - start);
    while (!piece.empty() && piece.front() == ' ') piece.erase(piece.begin());
    while (!piece.empty() && piece.back() == ' ') piece.pop_back();
    if (!piece.empty()) pieces.push_back(std::move(piece));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return pieces;
}

std::string host_name() {
  char name[HOST_NAME_MAX + 1] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "unknown-host";
  std::string host(name);
  for (char& c : host) {
    if (c < 0x21 || c > 0x7e) c = '_';
  }
  return host.substr(0, 64);
}

// The first line of the password file. Rationale: a password readable by every user of the host
// is no secret; the daemon refuses it rather than log a warning nobody reads.
Result<std::string> read_remote_password(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    // The reason and who asked: a file made by root with mode 0600, as one would for a secret,
    // is refused to the daemon's own user (jitcache under the shipped unit), which must own it.
    const int error = errno;
    std::string text = "remote_password_file " + path + ": cannot open it: " + std::strerror(error) +
                       " (jitcached runs as uid " + std::to_string(::geteuid());
    if (const passwd* user = ::getpwuid(::geteuid()); user != nullptr) text += " (" + std::string(user->pw_name) + ")";
    text += ")";
    if (error == EACCES) text += "; the file must belong to the daemon's user: chown that user, chmod 0600";
    return make_error(ErrorCode::io, text);
  }
  struct stat st {};
  std::string text(4096, '\0');
  ssize_t got = -1;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & S_IROTH) == 0) {
    got = ::read(fd, text.data(), text.size());
  }
  ::close(fd);
  if ((st.st_mode & S_IROTH) != 0) {
    return make_error(ErrorCode::forbidden,
                      "remote_password_file " + path + " is readable by every user: chmod o-r it");
  }
  if (got < 0) return make_error(ErrorCode::io, "remote_password_file " + path + ": cannot read it");
  text.resize(static_cast<std::size_t>(got));
  if (const auto newline = text.find_first_of("\r\n"); newline != std::string::npos) text.resize(newline);
  return text;
}

Result<std::vector<std::string>> split_remote_urls(const std::string& text) {
  std::vector<std::string> urls;
  for (std::string& piece : split_commas(text)) {
    if (piece.find("://") == std::string::npos) {
      if (urls.empty() || urls.back().rfind("redis+cluster://", 0) != 0) {
        return make_error(ErrorCode::invalid_argument, "remote: \"" + piece + "\" is not a URL");
      }
      urls.back() += "," + piece;
    } else {
      urls.push_back(std::move(piece));
    }
  }
  return urls;
}

Result<std::unique_ptr<Fleet>> make_fleet(const config::Config& config, store::Store& local,
                                          store::EntryTransfer& removals) {
  auto urls = split_remote_urls(config.remote);
  JITCACHE_TRY(urls);
  if (urls->empty()) return std::unique_ptr<Fleet>();
  remote::BackendCredentials credentials;
  credentials.ca_file = config.remote_ca_file;
  if (!config.remote_password_file.empty()) {
    auto password = read_remote_password(config.remote_password_file);
    JITCACHE_TRY(password);
    credentials.password = std::move(*password);
  }
  std::vector<std::unique_ptr<remote::RemoteBackend>> backends;
  for (const std::string& url : *urls) {
    auto backend = remote::make_backend(url, credentials);
    if (!backend) return make_error(backend.error().code, "remote " + url + ": " + backend.error().message);
    backends.push_back(std::move(*backend));
  }
  auto trusted = remote::TrustedKeys::load(split_commas(config.remote_trusted_keys));
  if (!trusted) return make_error(trusted.error().code, "remote_trusted_keys: " + trusted.error().message);
  std::optional<proto::SigningKey> signing;
  if (!config.remote_signing_key.empty()) {
    auto key = proto::SigningKey::load(config.remote_signing_key);
    if (!key) return make_error(key.error().code, "remote_signing_key: " + key.error().message);
    signing.emplace(std::move(*key));
  }
  if (trusted->empty() && !signing) {
    return make_error(ErrorCode::invalid_argument,
                      "remote is set but remote_trusted_keys is empty and there is no remote_signing_key: nothing "
                      "read from a remote could ever be served");
  }

  remote::TierSettings settings;
  settings.timeout = config.remote_timeout;
  settings.max_image = config.remote_max_image;
  settings.max_source = config.compile_max_ptx;
  settings.verify_sample = config.remote_verify_sample;
  settings.upload_source = config.remote_upload_source;
  settings.builder_wait = config.remote_builder_wait;
  settings.announce_builder = true;
  settings.host = host_name();
  settings.upload_queue_entries = config.remote_upload_queue;
  settings.lease_ttl = config.remote_lease_ttl;
  // The longest a holder's compile may run, and its upload's time to release the lease.
  settings.lease_wait = config.compile_wall_time + config.remote_lease_ttl;

  auto fleet = std::make_unique<Fleet>();
  const std::size_t trusted_count = trusted->keys().size();
  fleet->tier =
      std::make_unique<remote::RemoteTier>(settings, std::move(backends), std::move(*trusted), std::move(signing));
  fleet->store = std::make_unique<remote::TieredStore>(local, *fleet->tier);
  fleet->asks = std::make_unique<remote::AskDesk>(*fleet->tier, local);
  fleet->gate = std::make_unique<remote::FleetGate>(*fleet->tier, *fleet->store, fleet->asks.get());
  fleet->healer = std::make_unique<remote::Healer>(*fleet->tier, local, config.remote_heal_rate);
  fleet->store->set_healer(fleet->healer.get());
  fleet->store->set_removals(&removals);
  remote::RemoteTier& tier = *fleet->tier;
  for (std::size_t i = 0; i < tier.remote_count(); ++i) {
    const auto deadline = remote::Clock::now() + std::chrono::milliseconds(1000);
    auto answered = tier.remote(i).backend->ping(deadline);
    if (answered) {
      spdlog::info("remote {}: {} answers", i, tier.remote(i).backend->name());
    } else {
      spdlog::warn("remote {}: {} does not answer now ({}); serving without it until it does", i,
                   tier.remote(i).backend->name(), answered.error().message);
    }
  }
  spdlog::info("fleet tier: {} remote(s), timeout {} ms, {} trusted key(s), {}", tier.remote_count(),
               settings.timeout.count(), trusted_count,
               tier.uploads() ? "uploading as signer " + proto::signer_hex(tier.signing_key()->public_key().id())
                              : std::string("read only (no remote_signing_key)"));
  return fleet;
}

void attach_compile_path(Fleet& fleet, const config::Config& config, CompilePath& compile, store::Tenancy& tenancy) {
  compile.service->set_gate(fleet.gate.get());
  compile_store::CompileStoreSink& sink = *compile.sink;
  fleet.asks->serve(*compile.service,
                    remote::AskSinkRegistry{[&sink](const proto::Digest256& key_id, const proto::KeyFields& key,
                                                    const proto::Checksum128& fast) { sink.expect(key_id, key, fast); },
                                            [&sink](const proto::Digest256& key_id) { sink.release(key_id); }});
  compile.detach_fleet = [&fleet] { fleet.asks->stop_serving(); };
  if (config.remote_verify_sample > 0) {
    fleet.sampler = std::make_unique<remote::VerifySampler>(config.remote_verify_sample, *fleet.tier, tenancy,
                                                            compile.runner, compile.toolkit);
    fleet.store->set_sampler(fleet.sampler.get());
    spdlog::info("re-verifying {}% of remote hits by compiling them here", config.remote_verify_sample * 100);
  }
}

}  // namespace jitcache::daemon::startup
