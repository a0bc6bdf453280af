// `jitcache explain`: why a load misses, as the daemon sees it now (EXPLAIN, PROTOCOL.md §5). The
// key is named as `get --source` names it (its PTX, arch, driver and options: key_input.hpp; a fat
// binary is keyed as a load on a device of that arch keys it: fat_binary_keys.hpp), by
// its key id, or by a process report (JITCACHE_REPORT, docs/process-report.md): each load of the
// report that was not a hit is explained by its key id.
//
// Exit status: 0 when the key hits (with --report: when every load explained hits now), 1 when it
// misses; the usual 2-5 otherwise (exit_codes.hpp).
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <client/cli/commands.hpp>
#include <client/cli/explain_output.hpp>
#include <client/cli/failure.hpp>
#include <client/cli/fat_binary_keys.hpp>
#include <client/cli/file_io.hpp>
#include <client/cli/json_output.hpp>
#include <client/cli/key_input.hpp>

namespace jitcache::client::cli {

namespace {

constexpr std::size_t k_key_id_hex_length = 64;

struct ExplainOptions {
  std::string key_id;
  KeyInput key;
  std::string report_path;
};

bool names_by_fields(const ExplainOptions& options) {
  return !options.key.source_path.empty() || !options.key.arch.empty() || !options.key.driver.empty() ||
         !options.key.options.empty();
}

// A load of a report to explain: its key id and how the report names it.
struct ReportLoad {
  std::string title;
  proto::Digest256 key_id;
};

common::Result<proto::Digest256> parse_key_id(const std::string& text, const std::string& what) {
  auto hex = parse_key_id_prefix(text);
  if (!hex || hex->size() != k_key_id_hex_length) {
    return common::make_error(common::ErrorCode::invalid_argument,
                              what + " \"" + text + "\" is not a whole key id (64 hex digits)");
  }
  proto::Digest256 id;
  for (std::size_t i = 0; i < id.bytes.size(); ++i) {
    id.bytes[i] = static_cast<std::uint8_t>(std::stoul(hex->substr(2 * i, 2), nullptr, 16));
  }
  return id;
}

// A member's text, or empty when it is absent or not a string (a report is the program's, not ours).
std::string text_member(const nlohmann::json& object, const char* name) {
  const auto it = object.find(name);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The loads of a JITCACHE_REPORT file that were not hits and have a key (pass-through loads have none).
common::Result<std::vector<ReportLoad>> report_loads(const std::string& path) {
  auto bytes = read_whole_file(path);
  JITCACHE_TRY(bytes);
  const auto document = nlohmann::json::parse(bytes->begin(), bytes->end(), nullptr, false);
  auto refuse = [&](const std::string& why) {
    return common::make_error(common::ErrorCode::invalid_argument,
                              path + " is not a process report (docs/process-report.md): " + why);
  };
  if (document.is_discarded() || !document.is_object()) return refuse("not a JSON object");
  if (text_member(document, "format") != "jitcache-process-report") return refuse("no \"format\" of one");
  const auto loads = document.find("loads");
  if (loads == document.end() || !loads->is_array()) return refuse("no \"loads\" array");
  std::vector<ReportLoad> out;
  std::size_t index = 0;
  for (const auto& load : *loads) {
    ++index;
    if (!load.is_object()) return refuse("load " + std::to_string(index) + " is not an object");
    const std::string outcome = text_member(load, "outcome");
    const std::string key_id = text_member(load, "key_id");
    if (outcome == "hit" || key_id.empty()) continue;
    auto id = parse_key_id(key_id, "load " + std::to_string(index) + "'s key_id");
    if (!id) return refuse(id.error().message);
    out.push_back(ReportLoad{"load " + std::to_string(index) + " (" + text_member(load, "entry_point") + ", " +
                                 outcome + ", " + text_member(load, "arch") + ")",
                             *id});
  }
  return out;
}

ExitCode run_explain(const ExplainOptions& options, const GlobalOptions& global) {
  const bool by_fields = names_by_fields(options);
  const int ways = (by_fields ? 1 : 0) + (options.key_id.empty() ? 0 : 1) + (options.report_path.empty() ? 0 : 1);
  if (ways != 1) {
    return fail(ExitCode::usage, "explain needs one of: KEYID, --source with --arch and --driver, or --report FILE");
  }
  if (by_fields && (options.key.source_path.empty() || options.key.arch.empty() || options.key.driver.empty())) {
    return fail(ExitCode::usage, "explain by key fields needs all of --source, --arch and --driver");
  }

  std::vector<std::pair<std::string, proto::ExplainRequest>> requests;
  if (by_fields && is_fat_binary_file(options.key.source_path)) {
    auto keys = fat_binary_keys(options.key);
    if (!keys) return fail_local(keys.error());
    for (FatBinaryKey& found : *keys) {
      proto::ExplainRequest request;
      request.key = std::move(found.key);
      requests.emplace_back(std::move(found.label), std::move(request));
    }
  } else if (by_fields) {
    auto key = build_key(options.key);
    if (!key) return fail_local(key.error());
    proto::ExplainRequest request;
    request.key = std::move(*key);
    requests.emplace_back(options.key.source_path, std::move(request));
  } else if (!options.key_id.empty()) {
    auto id = parse_key_id(options.key_id, "KEYID");
    if (!id) return fail_local(id.error());
    proto::ExplainRequest request;
    request.selector = proto::ExplainSelector::key_id;
    request.key_id = *id;
    requests.emplace_back("key " + options.key_id, std::move(request));
  } else {
    auto loads = report_loads(options.report_path);
    if (!loads) return fail_local(loads.error());
    for (const ReportLoad& load : *loads) {
      proto::ExplainRequest request;
      request.selector = proto::ExplainSelector::key_id;
      request.key_id = load.key_id;
      requests.emplace_back(load.title, std::move(request));
    }
  }

  auto client = connect_to_daemon(global);
  if (!client) return fail(ExitCode::unreachable, client.error().message);
  auto hello = client->hello("jitcache explain");
  if (!hello) return fail_daemon(hello.error());
  if ((hello->capabilities & proto::k_capability_explain) == 0) {
    return fail(ExitCode::daemon_failed, "this jitcached (" + hello->daemon_version + ") cannot explain misses");
  }

  bool all_hit = true;
  Json array = Json::array();
  for (const auto& [title, request] : requests) {
    auto reply = client->explain(request);
    if (!reply) return fail_daemon(reply.error());
    all_hit = all_hit && reply->verdict == proto::ExplainVerdict::hit;
    if (global.json) {
      Json json = explanation_to_json(*reply);
      json["explained"] = title;
      array.push_back(std::move(json));
    } else {
      print_explanation(std::cout, title, *reply);
    }
  }
  if (global.json) {
    print_json(std::cout, options.report_path.empty() ? array.at(0) : array);
  } else if (requests.empty()) {
    std::cout << "every load of " << options.report_path << " was a hit or had no key: nothing to explain\n";
  }
  return all_hit ? ExitCode::ok : ExitCode::not_found;
}

}  // namespace

Command add_explain_command(CLI::App& app) {
  auto options = std::make_shared<ExplainOptions>();
  Command command;
  command.parser = app.add_subcommand("explain", "Say why a key misses: the nearest entries and what differs");
  command.parser->add_option("KEYID", options->key_id, "A whole key id (64 hex digits)");
  command.parser->add_option(
      "--source", options->key.source_path,
      "The PTX whose key to explain (keyed as get --source keys it), or a fat binary (keyed as a load on a device of --arch keys the PTX entry it selects)");
  command.parser->add_option("--arch", options->key.arch, "Target arch, e.g. sm_90");
  command.parser->add_option("--driver", options->key.driver, "Driver API version and build, e.g. 13000/580.159.04");
  command.parser->add_option("--options", options->key.options, "JIT options (default: all defaults)");
  command.parser->add_option("--report", options->report_path,
                             "A JITCACHE_REPORT file: explain each of its loads that was not a hit");
  command.run = [options](const GlobalOptions& global) { return run_explain(*options, global); };
  return command;
}

}  // namespace jitcache::client::cli
