// `jitcache put`: store a compiled image under the key of its PTX source. The key is built and
// validated here first (key_input.hpp) so a typo gets a precise message and exit 2, not a daemon
// refusal.
#include <iostream>
#include <memory>

#include <client/cli/commands.hpp>
#include <client/cli/failure.hpp>
#include <client/cli/file_io.hpp>
#include <client/cli/format.hpp>
#include <client/cli/json_output.hpp>
#include <client/cli/key_input.hpp>
#include <client/cli/number_option.hpp>
#include <proto/request_fields.hpp>

namespace jitcache::client::cli {

namespace {

// What the entry says produced it when the user does not say (PROTOCOL.md: "the compiler and its
// version"): here, an image someone imported by hand.
constexpr const char* k_default_producer = "jitcache put";

struct PutOptions {
  KeyInput key;
  std::string image_path;
  std::string producer = k_default_producer;
  std::uint64_t compile_time_us = 0;
};

ExitCode run_put(const PutOptions& options, const GlobalOptions& global) {
  if (options.producer.size() > proto::k_max_producer_length) {
    return fail(ExitCode::usage,
                "--producer is longer than " + std::to_string(proto::k_max_producer_length) + " bytes");
  }
  // The daemon refuses the same (PROTOCOL.md §4 "Field rules"); said here, it is a usage error.
  if (auto text = proto::check_printable_field("--producer", options.producer); !text) {
    return fail(ExitCode::usage, text.error().message);
  }
  proto::Checksum128 content_fast;
  auto key = build_key(options.key, &content_fast);
  if (!key) return fail_local(key.error());
  auto image = read_whole_file(options.image_path);
  if (!image) return fail_local(image.error());

  auto client = connect_to_daemon(global);
  if (!client) return fail(ExitCode::unreachable, client.error().message);
  proto::PutRequest request;
  request.key = *key;
  request.producer = options.producer;
  request.compile_time_us = options.compile_time_us;
  request.image = proto::Bytes(*image);
  // Lets libjitcache find the entry by its fast key; only a daemon that knows the field accepts it.
  auto hello = client->hello("jitcache put");
  if (!hello) return fail_daemon(hello.error());
  if (hello->capabilities & proto::k_capability_fast_key) request.content_fast = content_fast;
  auto stored = client->put(request);
  if (!stored) return fail_daemon(stored.error());

  if (global.json) {
    Json json;
    json["key_id"] = proto::to_hex(stored->key_id);
    json["namespace"] = stored->namespace_id;
    json["replaced"] = stored->replaced;
    json["raw_size"] = image->size();
    print_json(std::cout, json);
  } else {
    std::cout << "key id     " << proto::to_hex(stored->key_id) << '\n'
              << "namespace  " << namespace_name(stored->namespace_id) << '\n'
              << "size       " << human_bytes(image->size()) << '\n'
              << "replaced   " << (stored->replaced ? "yes (an existing entry was overwritten)" : "no (new entry)")
              << '\n';
  }
  return ExitCode::ok;
}

}  // namespace

Command add_put_command(CLI::App& app) {
  auto options = std::make_shared<PutOptions>();
  Command command;
  command.parser = app.add_subcommand("put", "Store a compiled image under the key of its PTX source");
  command.parser->add_option("--source", options->key.source_path, "The PTX file (its bytes are the key's content)")
      ->required();
  command.parser->add_option("--image", options->image_path, "The compiled image (cubin) to store")->required();
  command.parser->add_option("--arch", options->key.arch, "Target arch, e.g. sm_90 or sm_90a")->required();
  command.parser->add_option("--driver", options->key.driver, "Driver API version and build, e.g. 13000/580.159.04")
      ->required();
  command.parser->add_option("--options", options->key.options,
                             "JIT options as key=value pairs separated by ';' (default: all defaults)");
  command.parser->add_option("--producer", options->producer, "What produced the image")->capture_default_str();
  command.parser
      ->add_option("--compile-time-us", options->compile_time_us,
                   "What producing the image cost, in microseconds (default 0: unknown)")
      ->check(whole_number(0, proto::k_max_compile_time_us));
  command.run = [options](const GlobalOptions& global) { return run_put(*options, global); };
  return command;
}

}  // namespace jitcache::client::cli
