// `jitcache keygen --out PREFIX`: a new ed25519 key pair for the fleet tier's signed index
// (docs/remote-layout.md "Signing keys"): PREFIX.key, the private key builders sign with, and
// PREFIX.pub, the public key every host trusts. It talks to no daemon; it never overwrites a file.
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <system_error>

#include <client/cli/commands.hpp>
#include <client/cli/failure.hpp>
#include <client/cli/json_output.hpp>
#include <client/cli/terminal_text.hpp>
#include <proto/signing.hpp>

namespace jitcache::client::cli {

namespace {

struct KeygenOptions {
  std::string prefix;
};

// The path as the daemon's configuration should name it: jitcached runs in "/", so a relative
// path would name another file there.
std::string absolute_path(const std::string& path) {
  std::error_code error;
  const auto absolute = std::filesystem::absolute(path, error);
  return error ? path : absolute.lexically_normal().string();
}

// A TOML basic string: the path between quotes, with the two characters that need it escaped.
std::string toml_string(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out + "\"";
}

ExitCode run_keygen(const KeygenOptions& options, const GlobalOptions& global) {
  if (options.prefix.empty() || options.prefix.back() == '/') {
    return fail(ExitCode::usage, "--out needs a file name prefix, e.g. --out /etc/jitcache/fleet");
  }
  const proto::SigningKey key = proto::SigningKey::generate();
  if (auto written = key.write_pair(options.prefix); !written) return fail_local(written.error());

  const std::string private_path = absolute_path(options.prefix + ".key");
  const std::string public_path = absolute_path(options.prefix + ".pub");
  const std::string signer = proto::signer_hex(key.public_key().id());
  if (global.json) {
    Json json;
    json["signer_id"] = signer;
    json["private_key"] = private_path;
    json["public_key"] = public_path;
    print_json(std::cout, json);
    return ExitCode::ok;
  }
  std::cout << "wrote " << terminal_text(private_path) << " (the private key, mode 0600) and "
            << terminal_text(public_path) << '\n'
            << "signer id " << signer << '\n'
            << "\n"
            << "in jitcached.toml on the builders, the hosts whose compiles the fleet may load:\n"
            << "  remote_signing_key = " << terminal_text(toml_string(private_path)) << '\n'
            << "in jitcached.toml on every host (with the keys it already trusts, while rotating):\n"
            << "  remote_trusted_keys = [" << terminal_text(toml_string(public_path)) << "]\n"
            << "\n"
            << "The private key must belong to the user jitcached runs as, with mode 0600 (chown it there).\n";
  return ExitCode::ok;
}

}  // namespace

Command add_keygen_command(CLI::App& app) {
  auto options = std::make_shared<KeygenOptions>();
  Command command;
  command.parser = app.add_subcommand(
      "keygen", "Make an ed25519 key pair for signing remote index records: PREFIX.key (private) and PREFIX.pub");
  command.parser->add_option("--out", options->prefix, "Path prefix of the two files (refused if either exists)")
      ->required();
  command.run = [options](const GlobalOptions& global) { return run_keygen(*options, global); };
  return command;
}

}  // namespace jitcache::client::cli
