// `jitcache export`: the entries this caller can see (the shared namespace and its own), or those
// --arch, --driver, --since and --keys select, into one signed bundle file (docs/bundle-format.md).
// The daemon writes the file through a descriptor this command opens: it signs with its host's key,
// which the caller never holds. A file on a memory-backed file system (tmpfs, often /tmp) the
// daemon refuses to write: for one, this command passes a pipe and copies what comes out of it.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <client/cli/commands.hpp>
#include <client/cli/failure.hpp>
#include <client/cli/json_output.hpp>
#include <client/cli/key_input.hpp>
#include <client/cli/number_option.hpp>
#include <client/cli/terminal_text.hpp>
#include <common/memory_backed_file.hpp>
#include <common/unique_fd.hpp>
#include <proto/key.hpp>

namespace jitcache::client::cli {

namespace {

// Rationale: as VERIFY's, an hour: an export reads every selected image once and writes it.
constexpr int k_default_timeout_s = 3600;
constexpr int k_max_timeout_s = 7 * 24 * 3600;
// A --keys file: 64 hex digits a line; a bound so that a wrong path (a log) is not read whole.
constexpr std::uintmax_t k_max_keys_file_bytes = 4 << 20;

struct ExportOptions {
  std::string arch;
  std::string driver;
  std::string since;
  std::string keys_file;
  std::string output;
  int timeout_s = k_default_timeout_s;
};

// --since: a date (2026-12-01), a UTC time (2026-12-01T08:30:00Z), or an age (30m, 12h, 7d).
common::Result<std::int64_t> parse_since(const std::string& text, std::int64_t now_ms) {
  std::smatch m;
  if (std::regex_match(text, m, std::regex(R"((\d{1,6})([smhd]))"))) {
    const std::int64_t n = std::stoll(m[1]);
    const std::int64_t unit = m[2] == "s" ? 1 : m[2] == "m" ? 60 : m[2] == "h" ? 3600 : 86400;
    return std::max<std::int64_t>(0, now_ms - n * unit * 1000);
  }
  if (std::regex_match(text, m, std::regex(R"((\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?Z?)?)"))) {
    std::tm tm{};
    tm.tm_year = std::stoi(m[1]) - 1900;
    tm.tm_mon = std::stoi(m[2]) - 1;
    tm.tm_mday = std::stoi(m[3]);
    if (m[4].matched) tm.tm_hour = std::stoi(m[4]);
    if (m[5].matched) tm.tm_min = std::stoi(m[5]);
    if (m[6].matched) tm.tm_sec = std::stoi(m[6]);
    if (tm.tm_mon > 11 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60) {
      return common::make_error(common::ErrorCode::invalid_argument, "--since " + text + " is not a valid date");
    }
    const std::time_t t = ::timegm(&tm);
    return static_cast<std::int64_t>(t) * 1000;
  }
  return common::make_error(common::ErrorCode::invalid_argument,
                            "--since " + text +
                                ": expected a date (2026-12-01), a UTC time (2026-12-01T08:30:00Z) "
                                "or an age (30m, 12h, 7d)");
}

// --keys FILE: one key id (64 hex digits) a line; blank lines and lines from '#' on are ignored.
common::Result<std::vector<proto::Digest256>> read_key_ids(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return common::make_error(common::ErrorCode::io, "--keys " + path + ": " + ec.message());
  if (size > k_max_keys_file_bytes) {
    return common::make_error(common::ErrorCode::invalid_argument, "--keys " + path + " is larger than 4 MiB");
  }
  std::ifstream in(path);
  if (!in) return common::make_error(common::ErrorCode::io, "--keys " + path + ": cannot read it");
  std::vector<proto::Digest256> ids;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) line.pop_back();
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.erase(line.begin());
    if (line.empty()) continue;
    auto id = proto::digest_from_hex(line);
    if (!id) {
      return common::make_error(common::ErrorCode::invalid_argument, "--keys " + path + " line " +
                                                                         std::to_string(number) +
                                                                         ": not a key id (64 hex digits)");
    }
    ids.push_back(*id);
  }
  if (ids.size() > proto::k_max_export_key_ids) {
    return common::make_error(common::ErrorCode::invalid_argument, "--keys " + path + ": at most " +
                                                                       std::to_string(proto::k_max_export_key_ids) +
                                                                       " key ids");
  }
  return ids;
}

// A pipe whose bytes a thread of this process copies into a file, until the last write end closes.
class PipeToFile {
 public:
  static common::Result<PipeToFile> start(int file) {
    int ends[2];
    if (::pipe2(ends, O_CLOEXEC) != 0) {
      return common::make_error(common::ErrorCode::io, std::string("cannot make a pipe: ") + std::strerror(errno));
    }
    PipeToFile out;
    out.m_state = std::make_unique<State>();
    out.m_state->read_end.reset(ends[0]);
    out.m_state->write_end.reset(ends[1]);
    State* state = out.m_state.get();
    out.m_state->copier = std::thread([state, file] {
      std::vector<char> buffer(1 << 16);
      for (;;) {
        const ssize_t got = ::read(state->read_end.get(), buffer.data(), buffer.size());
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) {
          if (got < 0) state->error = std::string("reading the daemon's pipe: ") + std::strerror(errno);
          return;
        }
        for (ssize_t done = 0; done < got;) {
          const ssize_t put = ::write(file, buffer.data() + done, static_cast<std::size_t>(got - done));
          if (put < 0 && errno == EINTR) continue;
          if (put < 0) {
            state->error = std::string("writing it: ") + std::strerror(errno);
            return;
          }
          done += put;
        }
      }
    });
    return out;
  }
  int write_end() const { return m_state->write_end.get(); }
  // Closes this process's write end and waits for the copy: the bytes the daemon wrote are in the
  // file, or the error says why not.
  common::Result<void> finish() {
    m_state->write_end.reset();
    m_state->copier.join();
    if (!m_state->error.empty()) return common::make_error(common::ErrorCode::io, m_state->error);
    return {};
  }

 private:
  struct State {
    common::UniqueFd read_end;
    common::UniqueFd write_end;
    std::thread copier;
    std::string error;
    ~State() {
      write_end.reset();
      if (copier.joinable()) copier.join();
    }
  };
  std::unique_ptr<State> m_state;
};

ExitCode run_export(const GlobalOptions& global, const ExportOptions& options) {
  proto::ExportBundleRequest request;
  if (!options.arch.empty()) {
    if (auto arch = check_arch(options.arch); !arch) return fail_local(arch.error());
    request.arch = options.arch;
  }
  if (!options.driver.empty()) {
    auto driver = parse_driver_filter(options.driver);
    if (!driver) return fail_local(driver.error());
    request.driver_api = driver->api;
    request.driver_build = driver->build;
  }
  if (!options.since.empty()) {
    const auto now =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
    auto since = parse_since(options.since, now);
    if (!since) return fail_local(since.error());
    request.since_ms = *since;
  }
  if (!options.keys_file.empty()) {
    auto ids = read_key_ids(options.keys_file);
    if (!ids) return fail_local(ids.error());
    request.key_ids = std::move(*ids);
  }

  auto client = connect_to_daemon(global);
  if (!client) return fail(ExitCode::unreachable, client.error().message);
  auto hello = client->hello("jitcache export");
  if (!hello) return fail_daemon(hello.error());
  if ((hello->capabilities & proto::k_capability_bundles) == 0) {
    return fail(ExitCode::daemon_failed, "this jitcached (" + hello->daemon_version + ") does not export bundles");
  }
  common::UniqueFd file(::open(options.output.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!file) return fail(ExitCode::local_io, "-o " + options.output + ": cannot create it: " + std::strerror(errno));
  // The daemon never writes into a memory-backed file (docs/security.md "Bundles"): for one, it
  // writes into a pipe and this process copies the bytes into the file, at its own cost.
  std::optional<PipeToFile> through_pipe;
  if (common::memory_backed_file_system(file.get())) {
    auto started = PipeToFile::start(file.get());
    if (!started) return fail(ExitCode::local_io, "-o " + options.output + ": " + started.error().message);
    through_pipe.emplace(std::move(*started));
  }
  auto exported = client->export_bundle(request, through_pipe ? through_pipe->write_end() : file.get(),
                                        std::chrono::seconds(options.timeout_s));
  if (through_pipe) {
    auto copied = through_pipe->finish();
    if (exported && !copied) exported = copied.error();
  }
  if (!exported) {
    // A half-written bundle is no use to anyone: it would be refused on import.
    ::unlink(options.output.c_str());
    return fail_daemon(exported.error());
  }
  if (::fsync(file.get()) != 0) {
    return fail(ExitCode::local_io, "-o " + options.output + ": cannot sync it: " + std::strerror(errno));
  }
  if (global.json) {
    Json json;
    json["file"] = options.output;
    json["entries"] = exported->entries;
    json["bytes"] = exported->bytes;
    json["signed"] = !exported->signer.empty();
    json["signer"] = exported->signer;
    json["digest"] = proto::to_hex(exported->digest);
    print_json(std::cout, json);
  } else {
    std::cout << "exported " << exported->entries << (exported->entries == 1 ? " entry" : " entries") << " ("
              << exported->bytes << " bytes) to " << terminal_text(options.output) << ", "
              << (exported->signer.empty() ? "unsigned (the daemon has no remote_signing_key)"
                                           : "signed by " + exported->signer)
              << "\n";
  }
  return ExitCode::ok;
}

}  // namespace

Command add_export_command(CLI::App& app) {
  Command command;
  command.parser = app.add_subcommand(
      "export",
      "Write the entries you can see (shared and your own) into a signed bundle file (docs/bundle-format.md)");
  auto options = std::make_shared<ExportOptions>();
  command.parser->add_option("--arch", options->arch, "Only entries for this arch (sm_90, sm_90a, ...)");
  command.parser->add_option("--driver", options->driver, "Only entries for this driver: API (13000) or API/build");
  command.parser->add_option("--since", options->since,
                             "Only entries stored since: a date (2026-12-01), a UTC time (2026-12-01T08:30:00Z) or an "
                             "age (30m, 12h, 7d)");
  command.parser->add_option("--keys", options->keys_file, "Only the key ids listed in FILE, one a line");
  command.parser->add_option("-o,--output", options->output, "The bundle file to write (replaced if it exists)")
      ->required();
  command.parser->add_option("--timeout", options->timeout_s, "Seconds to wait for the daemon's answer")
      ->check(whole_number(1, k_max_timeout_s))
      ->capture_default_str();
  command.run = [options](const GlobalOptions& global) { return run_export(global, *options); };
  return command;
}

}  // namespace jitcache::client::cli
