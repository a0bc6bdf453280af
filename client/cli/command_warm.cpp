// `jitcache warm PATH... --arch ARCH [--options STR] [--driver API/BUILD]`: has the daemon compile,
// ahead of time, every PTX a program on an ARCH GPU would JIT from these files — PTX, fat binaries,
// and the fat binaries inside ELF executables and shared libraries (warm_files.hpp,
// warm_sources.hpp) — with COMPILE of priority warm, which yields to programs that are waiting. The keys are the ones
// libjitcache builds on such a GPU, by the same key builder (client/src/key/key_builder.hpp; on CC 9.0 and later the
// driver's JIT, and so the key, is arch-specific: --arch sm_90 warms sm_90a keys), so a program started afterwards
// finds them.
#include <unistd.h>

#include <chrono>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>

#include <client/cli/commands.hpp>
#include <client/cli/failure.hpp>
#include <client/cli/json_output.hpp>
#include <client/cli/key_input.hpp>
#include <client/cli/terminal_text.hpp>
#include <client/cli/warm_files.hpp>
#include <client/cli/warm_sources.hpp>
#include <client/src/driver/driver_api.hpp>
#include <client/src/driver/driver_identity.hpp>
#include <client/src/key/key_builder.hpp>
#include <client/src/key/ptx_header.hpp>
#include <common/result.hpp>
#include <proto/compile_messages.hpp>

namespace jitcache::client::cli {

namespace {

// Rationale: a warm compile queues behind the compiles programs wait for, and one compile may take
// up to the daemon's compile_wall_time (2 minutes by default); a quarter of an hour still ends a run
// against a daemon that stopped answering.
constexpr std::chrono::milliseconds k_compile_wait{15 * 60 * 1000};

struct WarmOptions {
  std::vector<std::string> paths;
  std::string arch;
  std::string options;
  std::string driver;
};

enum class Result { compiled, present, refused, failed, skipped };

std::string_view result_name(Result result) {
  switch (result) {
    case Result::compiled: return "compiled";
    case Result::present: return "present";
    case Result::refused: return "refused";
    case Result::failed: return "failed";
    case Result::skipped: return "skipped";
  }
  return "failed";
}

struct Item {
  std::string label;
  Result result = Result::failed;
  std::string arch;
  std::string key_id;
  std::string reason;
};

// The key of one source as libjitcache would build it on the target device (its arch and options
// go into the COMPILE; the daemon digests the PTX itself).
common::Result<key::BuiltKey> source_key(const WarmSource& source, const WarmOptions& options,
                                         const key::KeyBuilder& builder) {
  auto canonical = key::KeyBuilder::options_from_text(options.options, source.embedded);
  JITCACHE_TRY(canonical);
  return builder.build(source.ptx, *canonical);
}

// The bar counts files; the label is the source being compiled (a file, or an entry of one).
void show_progress(std::size_t done, std::size_t total, const std::string& label) {
  constexpr std::size_t k_width = 30;
  const std::size_t filled = total == 0 ? k_width : done * k_width / total;
  const std::string printable = terminal_text(label);
  std::string shown = printable.size() > 40 ? "…" + printable.substr(printable.size() - 39) : printable;
  std::cerr << "\r\033[K[" << std::string(filled, '#') << std::string(k_width - filled, '.') << "] " << done << '/'
            << total << " files " << shown << std::flush;
}

// Asks the daemon to compile one source; nullopt when the daemon went away (nothing more can be
// warmed: the error has been reported and `exit` says how to end).
std::optional<Item> warm_one(const WarmSource& source, const WarmOptions& options, const key::KeyBuilder& builder,
                             transport::DaemonClient& client, ExitCode& exit) {
  Item item;
  item.label = source.label;
  if (!source.error.empty()) {
    item.result = source.nothing_to_do ? Result::skipped : Result::failed;
    item.reason = source.error;
    return item;
  }
  auto key = source_key(source, options, builder);
  if (!key) {
    item.result = Result::failed;
    item.reason = "uncacheable: " + key.error().message;
    return item;
  }
  const proto::KeyFields& fields = key->fields();
  item.arch = fields.arch;
  proto::CompileRequest request;
  request.key_schema = fields.key_schema;
  request.arch = fields.arch;
  request.driver_api = fields.driver_api;
  request.driver_build = fields.driver_build;
  request.options = fields.options;
  request.priority = proto::CompilePriority::warm;
  request.ptx = proto::as_bytes(source.ptx);
  auto answer = client.compile(request, k_compile_wait);
  if (!answer && answer.error().reply_status == 0) {
    exit = fail_daemon(answer.error());
    return std::nullopt;
  }
  using Kind = transport::CompileAnswer::Kind;
  if (!answer) {
    item.result = Result::failed;
    item.reason = answer.error().message;
  } else if (answer->kind == Kind::compiled) {
    item.result = answer->from_store ? Result::present : Result::compiled;
    item.key_id = proto::to_hex(answer->image->info.key_id);
  } else {
    item.result = answer->kind == Kind::cannot_compile ? Result::refused : Result::failed;
    item.reason = std::string(transport::compile_answer_name(answer->kind)) + ": " + answer->message;
  }
  return item;
}

void print_item(const Item& item) {
  std::cout << std::left << std::setw(9) << result_name(item.result) << ' ' << terminal_text(item.label);
  if (!item.arch.empty()) std::cout << "  " << item.arch;
  if (!item.key_id.empty()) std::cout << "  " << item.key_id.substr(0, 16);
  if (!item.reason.empty()) {
    std::string reason = item.reason;
    for (char& c : reason) c = (c == '\n' || c == '\r') ? ' ' : c;
    std::cout << ": " << terminal_text(reason);
  }
  std::cout << '\n' << std::flush;
}

ExitCode run_warm(const WarmOptions& options, const GlobalOptions& global) {
  if (auto valid = check_arch(options.arch); !valid) return fail(ExitCode::usage, valid.error().message);
  if (auto valid = key::KeyBuilder::options_from_text(options.options, {}); !valid) {
    return fail(ExitCode::usage, "--options: " + valid.error().message);
  }
  const auto sm = key::parse_sm_arch(options.arch);
  if (!sm) return fail(ExitCode::usage, "--arch " + options.arch + " is not sm_<digits>[a|f]");
  proto::DriverId driver_id;
  if (!options.driver.empty()) {
    auto parsed = proto::parse_driver_id(options.driver);
    if (!parsed) return fail(ExitCode::usage, "--driver: " + parsed.error().message);
    driver_id = *parsed;
  } else {
    auto host = driver::open_driver(driver::default_driver_path());
    if (!host) {
      return fail(ExitCode::usage,
                  "--driver API/BUILD is required: no CUDA driver could be opened here (" + host.error().message + ")");
    }
    driver_id.api = static_cast<std::uint32_t>((*host)->api_version);
    driver_id.build = (*host)->build;
  }
  const driver::ComputeCapability device{sm->major(), sm->minor()};
  const auto isa = driver::max_ptx_isa(static_cast<int>(driver_id.api));
  const WarmTarget target{device, {isa.major, isa.minor}};
  const WarmFileList files = list_warm_files(options.paths);
  const auto builder = key::KeyBuilder::for_device(device, driver_id);

  auto client = connect_to_daemon(global);
  if (!client) return fail(ExitCode::unreachable, client.error().message);
  auto hello = client->hello("jitcache warm");
  if (!hello) return fail_daemon(hello.error());
  if ((hello->capabilities & proto::k_capability_compile) == 0) {
    return fail(ExitCode::daemon_failed, "jitcached at " + resolve_socket_path(global) +
                                             " does not compile (compile = false, or its compile worker is missing)");
  }

  const bool bar = !global.json && ::isatty(STDERR_FILENO) == 1;
  std::vector<Item> items;
  WarmTally tally;
  std::optional<ExitCode> daemon_gone;
  for (std::size_t i = 0; i < files.files.size() && !daemon_gone; ++i) {
    if (bar) show_progress(i, files.files.size(), files.files[i].path);
    visit_warm_sources(files.files[i], target, tally, [&](WarmSource&& source) {
      if (daemon_gone) return;
      if (bar) show_progress(i, files.files.size(), source.label);
      ExitCode exit = ExitCode::ok;
      std::optional<Item> item = warm_one(source, options, builder, *client, exit);
      if (!item) {
        if (bar) std::cerr << "\r\033[K";
        daemon_gone = exit;
        return;
      }
      const bool noteworthy = item->result == Result::refused || item->result == Result::failed;
      if (!global.json && (!bar || noteworthy)) {
        if (bar) std::cerr << "\r\033[K";
        print_item(*item);
      }
      items.push_back(std::move(*item));
    });
  }
  if (daemon_gone) return *daemon_gone;  // the daemon went away: nothing more can be warmed
  if (bar) {
    show_progress(files.files.size(), files.files.size(), "");
    std::cerr << '\n';
  }

  std::size_t counts[5] = {};
  for (const Item& item : items) ++counts[static_cast<int>(item.result)];
  const auto count = [&](Result r) { return counts[static_cast<int>(r)]; };
  if (global.json) {
    Json json;
    json["compiled"] = count(Result::compiled);
    json["already_present"] = count(Result::present);
    json["refused"] = count(Result::refused);
    json["failed"] = count(Result::failed);
    json["skipped"] = count(Result::skipped);
    json["files_examined"] = files.examined;
    json["host_binaries"] = tally.host_binaries;
    json["fat_binaries"] = tally.fat_binaries;
    json["cubin_for_device"] = tally.cubin_for_device;
    json["no_image_for_device"] = tally.no_image_for_device;
    json["relocatable_ptx"] = tally.relocatable_ptx;
    json["items"] = Json::array();
    for (const Item& item : items) {
      Json entry;
      entry["source"] = item.label;
      entry["result"] = result_name(item.result);
      if (!item.arch.empty()) entry["arch"] = item.arch;
      if (!item.key_id.empty()) entry["key_id"] = item.key_id;
      if (!item.reason.empty()) entry["reason"] = item.reason;
      json["items"].push_back(std::move(entry));
    }
    print_json(std::cout, json);
  } else {
    std::cout << "examined " << files.examined << " files: " << tally.host_binaries << " ELF binaries, "
              << tally.fat_binaries << " fat binaries (" << tally.cubin_for_device << " with a cubin " << options.arch
              << " runs, " << tally.no_image_for_device << " with nothing it can use";
    if (tally.relocatable_ptx > 0) {
      std::cout << ", " << tally.relocatable_ptx
                << " with relocatable PTX the program links when it starts: not warmed";
    }
    std::cout << ")\n";
    std::cout << "compiled " << count(Result::compiled) << ", already present " << count(Result::present)
              << ", refused " << count(Result::refused) << ", failed " << count(Result::failed) << ", skipped "
              << count(Result::skipped) << " (of " << items.size() << ")\n";
  }
  if (count(Result::refused) + count(Result::failed) > 0) return ExitCode::daemon_failed;
  return ExitCode::ok;
}

}  // namespace

Command add_warm_command(CLI::App& app) {
  auto options = std::make_shared<WarmOptions>();
  Command command;
  command.parser = app.add_subcommand(
      "warm",
      "Have the daemon compile, ahead of time, the PTX in these files (PTX, fat binaries, executables and shared "
      "libraries, directories)");
  command.parser
      ->add_option("paths", options->paths,
                   "PTX files, fat binaries, ELF executables or shared libraries, or directories of them")
      ->required();
  command.parser
      ->add_option("--arch", options->arch, "The GPU to warm for, e.g. sm_90 (keys as a program there builds)")
      ->required();
  command.parser->add_option("--options", options->options,
                             "JIT options as key=value pairs separated by ';' (default: all defaults)");
  command.parser->add_option("--driver", options->driver,
                             "Driver API version and build, e.g. 13000/580.159.04 (default: this host's driver)");
  command.run = [options](const GlobalOptions& global) { return run_warm(*options, global); };
  return command;
}

}  // namespace jitcache::client::cli
