// `jitcache get`: fetch an image by key id (prefix) or by the key fields of a PTX source, and write
// it to a file atomically, or into standard output, a device or a FIFO (file_io.hpp). DaemonClient
// has already checked the image against its size and checksum, so what is written is what was
// stored.
#include <iostream>
#include <memory>

#include <client/cli/commands.hpp>
#include <client/cli/failure.hpp>
#include <client/cli/file_io.hpp>
#include <client/cli/format.hpp>
#include <client/cli/json_output.hpp>
#include <client/cli/key_input.hpp>
#include <client/cli/terminal_text.hpp>

namespace jitcache::client::cli {

namespace {

struct GetOptions {
  std::string key_id;
  KeyInput key;
  std::string output_path;
};

bool names_by_fields(const GetOptions& options) {
  return !options.key.source_path.empty() || !options.key.arch.empty() || !options.key.driver.empty() ||
         !options.key.options.empty();
}

ExitCode run_get(const GetOptions& options, const GlobalOptions& global) {
  const bool by_fields = names_by_fields(options);
  if (by_fields == !options.key_id.empty()) {
    return fail(ExitCode::usage, "get needs either KEYID or --source, --arch and --driver (not both)");
  }
  if (by_fields && (options.key.source_path.empty() || options.key.arch.empty() || options.key.driver.empty())) {
    return fail(ExitCode::usage, "get by key fields needs all of --source, --arch and --driver");
  }
  const bool to_stdout = options.output_path == k_standard_output;
  if (to_stdout && global.json) {
    return fail(ExitCode::usage, "-o - and --json both want standard output: give -o a file");
  }

  std::string prefix;
  proto::KeyFields key;
  if (by_fields) {
    auto built = build_key(options.key);
    if (!built) return fail_local(built.error());
    key = std::move(*built);
  } else {
    auto parsed = parse_key_id_prefix(options.key_id);
    if (!parsed) return fail_local(parsed.error());
    prefix = std::move(*parsed);
  }

  auto client = connect_to_daemon(global);
  if (!client) return fail(ExitCode::unreachable, client.error().message);
  // HELLO sizes the reply limit to the daemon's max_frame_bytes, which may exceed the default.
  if (auto hello = client->hello("jitcache get"); !hello) return fail_daemon(hello.error());
  auto fetched = by_fields ? client->lookup(key) : client->lookup_by_id(prefix);
  if (!fetched) return fail_daemon(fetched.error());
  if (!fetched->has_value()) {
    if (by_fields) {
      return fail(ExitCode::not_found, "no entry for " + options.key.source_path + " on " + key.arch + " with driver " +
                                           std::to_string(key.driver_api) + "/" + key.driver_build);
    }
    return fail(ExitCode::not_found, "no entry with key id " + prefix);
  }
  const transport::FetchedImage& image = **fetched;

  if (auto written = write_output(options.output_path, proto::Bytes(image.image)); !written) {
    return fail_local(written.error());
  }
  if (global.json) {
    Json json = entry_to_json(image.info);
    json["output"] = options.output_path;
    print_json(std::cout, json);
  } else {
    // With -o -, standard output carries the image: the summary goes to stderr.
    std::ostream& out = to_stdout ? std::cerr : std::cout;
    out << "wrote " << human_bytes(image.image.size()) << " to "
        << (to_stdout ? std::string("standard output") : terminal_text(options.output_path)) << " (key id "
        << proto::to_hex(image.info.key_id) << ")\n";
  }
  return ExitCode::ok;
}

}  // namespace

Command add_get_command(CLI::App& app) {
  auto options = std::make_shared<GetOptions>();
  Command command;
  command.parser = app.add_subcommand("get", "Fetch an image by key id or by its PTX source's key, into a file");
  command.parser->add_option("KEYID", options->key_id, "Key id or a prefix of at least 8 hex digits");
  command.parser->add_option("--source", options->key.source_path, "The PTX file whose key to look up");
  command.parser->add_option("--arch", options->key.arch, "Target arch, e.g. sm_90");
  command.parser->add_option("--driver", options->key.driver, "Driver API version and build, e.g. 13000/580.159.04");
  command.parser->add_option("--options", options->key.options, "JIT options (default: all defaults)");
  command.parser->add_option("-o,--output", options->output_path, "Where to write the image; - for standard output")
      ->required();
  command.run = [options](const GlobalOptions& global) { return run_get(*options, global); };
  return command;
}

}  // namespace jitcache::client::cli
