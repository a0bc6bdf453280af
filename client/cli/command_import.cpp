// `jitcache import FILE`: a bundle (docs/bundle-format.md) into the daemon's store, in one
// transaction: all of it or, when any check fails, nothing, with the check and the entry that
// failed. Into the shared namespace when the caller is trusted or the bundle is signed by a key the
// daemon trusts and holds only entries its host had shared (docs/security.md "Bundles"); with --own,
// into the caller's own namespace.
#include <fcntl.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>

#include <client/cli/commands.hpp>
#include <client/cli/failure.hpp>
#include <client/cli/json_output.hpp>
#include <client/cli/number_option.hpp>
#include <client/cli/terminal_text.hpp>
#include <common/unique_fd.hpp>

namespace jitcache::client::cli {

namespace {

constexpr int k_default_timeout_s = 3600;
constexpr int k_max_timeout_s = 7 * 24 * 3600;

struct ImportOptions {
  std::string file;
  bool own = false;
  bool restore_removed = false;
  int timeout_s = k_default_timeout_s;
};

ExitCode run_import(const GlobalOptions& global, const ImportOptions& options) {
  common::UniqueFd file(::open(options.file.c_str(), O_RDONLY | O_CLOEXEC));
  if (!file) return fail(ExitCode::local_io, options.file + ": cannot open it: " + std::strerror(errno));
  auto client = connect_to_daemon(global);
  if (!client) return fail(ExitCode::unreachable, client.error().message);
  auto hello = client->hello("jitcache import");
  if (!hello) return fail_daemon(hello.error());
  if ((hello->capabilities & proto::k_capability_bundles) == 0) {
    return fail(ExitCode::daemon_failed, "this jitcached (" + hello->daemon_version + ") does not import bundles");
  }
  proto::ImportBundleRequest request;
  request.target = options.own               ? proto::ImportTarget::own
                   : options.restore_removed ? proto::ImportTarget::shared_restoring_removed
                                             : proto::ImportTarget::shared;
  auto imported = client->import_bundle(request, file.get(), std::chrono::seconds(options.timeout_s));
  if (!imported) return fail_daemon(imported.error());
  if (global.json) {
    Json json;
    json["file"] = options.file;
    json["namespace"] = imported->namespace_id;
    json["entries"] = imported->entries;
    json["imported"] = imported->imported;
    json["skipped"] = imported->skipped;
    json["signed"] = !imported->signer.empty();
    json["signer"] = imported->signer;
    json["signer_trusted"] = imported->signer_trusted;
    json["host"] = imported->host;
    json["digest"] = proto::to_hex(imported->digest);
    print_json(std::cout, json);
  } else {
    std::cout << "imported " << imported->imported << " of " << imported->entries
              << (imported->entries == 1 ? " entry" : " entries") << " into "
              << (imported->namespace_id == 0 ? std::string("the shared namespace")
                                              : "namespace " + std::to_string(imported->namespace_id))
              << "; " << imported->skipped << " skipped (already present, repeated, or removed by an operator)\n"
              << "bundle from " << terminal_text(imported->host) << ", "
              << (imported->signer.empty() ? std::string("unsigned")
                                           : "signed by " + imported->signer +
                                                 (imported->signer_trusted ? " (trusted)" : " (not a trusted key)"))
              << "\n";
  }
  return ExitCode::ok;
}

}  // namespace

Command add_import_command(CLI::App& app) {
  Command command;
  command.parser =
      app.add_subcommand("import",
                         "Import a bundle (jitcache export) into the store: all of it in one transaction, or nothing");
  auto options = std::make_shared<ImportOptions>();
  command.parser->add_option("file", options->file, "The bundle file")->required();
  command.parser->add_flag("--own", options->own,
                           "Into your own namespace (within namespace_quota), not the shared one: for a bundle that "
                           "is unsigned or not signed by a key the daemon trusts");
  auto* restore =
      command.parser->add_flag("--restore-removed", options->restore_removed,
                               "Trusted callers: also bring back the bundle's entries an operator removed from the "
                               "shared namespace (jitcache rm), which an import otherwise skips, and forget "
                               "their removal");
  restore->excludes(command.parser->get_option("--own"));
  command.parser->add_option("--timeout", options->timeout_s, "Seconds to wait for the daemon's answer")
      ->check(whole_number(1, k_max_timeout_s))
      ->capture_default_str();
  command.run = [options](const GlobalOptions& global) { return run_import(global, *options); };
  return command;
}

}  // namespace jitcache::client::cli
