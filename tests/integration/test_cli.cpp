// The real `jitcache` binary against the real jitcached: each command run as a user would run it (a
// subprocess with JITCACHE_SOCKET set), checked by its exit code, its stdout (text and --json) and
// the files it writes. Usage errors and a missing daemon are checked for their distinct exit codes
// and their one-line messages (docs/cli.md "Exit codes").
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <proto/jit_options.hpp>
#include <proto/key.hpp>

#include <tests/support/daemon_process.hpp>
#include <tests/support/sample_cubin.hpp>
#include <tests/support/sample_entries.hpp>
#include <tests/support/temp_dir.hpp>
#include <tests/support/test_skip.hpp>

using namespace jitcache;
using testing::DaemonProcess;
using testing::TempDir;
using Json = nlohmann::json;

namespace {

const std::string k_corpus_ptx = JITCACHE_TEST_DATA_DIR "/small_kernel.ptx";
const std::string k_driver = "13000/580.159.04";

struct CliRun {
  int status = -1;  // exit code, or 128+signal
  std::string out;
  std::string err;
};

// Runs the CLI with `args`, JITCACHE_SOCKET set to `socket`, and collects both output streams
// (polled together, so a chatty stderr cannot block the child while we wait on stdout). With
// `stdout_path`, the CLI's stdout is that file instead (opened for writing), and `out` stays empty.
CliRun run_cli(const std::vector<std::string>& args, const std::string& socket, const std::string& stdout_path = "") {
  int out_pipe[2];
  int err_pipe[2];
  REQUIRE(::pipe2(out_pipe, O_CLOEXEC) == 0);
  REQUIRE(::pipe2(err_pipe, O_CLOEXEC) == 0);
  std::vector<std::string> argv_strings{JITCACHE_CLI_PATH};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_strings) argv.push_back(a.data());
  argv.push_back(nullptr);

  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::dup2(out_pipe[1], 1);
    if (!stdout_path.empty()) {
      const int file = ::open(stdout_path.c_str(), O_WRONLY | O_CLOEXEC);
      if (file < 0 || ::dup2(file, 1) < 0) ::_exit(126);
    }
    ::dup2(err_pipe[1], 2);
    ::setenv("JITCACHE_SOCKET", socket.c_str(), 1);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);

  CliRun run;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&run.out, &run.err};
  int open_count = 2;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (open_count > 0 && std::chrono::steady_clock::now() < deadline) {
    if (::poll(fds, 2, 1000) < 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buffer[4096];
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof(buffer));
      if (n > 0) {
        sinks[i]->append(buffer, static_cast<std::size_t>(n));
      } else {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_count;
      }
    }
  }
  for (auto& fd : fds) {
    if (fd.fd >= 0) {
      ::close(fd.fd);
      ::kill(pid, SIGKILL);
    }
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  INFO("jitcache output: " << run.out << run.err);
  REQUIRE(open_count == 0);  // it finished within the deadline
  return run;
}

// The error contract: nothing on stdout, exactly one line on stderr, starting "jitcache: ".
void check_one_line_error(const CliRun& run) {
  INFO("stderr: " << run.err);
  CHECK(run.out.empty());
  CHECK(run.err.rfind("jitcache: ", 0) == 0);
  CHECK(run.err.size() > 10);
  CHECK(run.err.find('\n') == run.err.size() - 1);
}

Json parse_json(const CliRun& run) {
  INFO("stdout: " << run.out << "\nstderr: " << run.err);
  REQUIRE(run.status == 0);
  Json json;
  REQUIRE_NOTHROW(json = Json::parse(run.out));
  return json;
}

// An sm_90 cubin (a PUT stores nothing else) of `size` bytes, or the smallest one there is.
std::vector<std::uint8_t> image_bytes(std::size_t size) {
  // Every byte value, NUL and 0xFF included, in its code: the image must come back bit for bit.
  const std::size_t headers = testing::min_cubin_size(testing::CubinSpec{});
  std::vector<std::uint8_t> code(size > headers ? size - headers : 0);
  for (std::size_t i = 0; i < code.size(); ++i) code[i] = static_cast<std::uint8_t>((i * 131 + 7) % 256);
  return testing::make_cubin(testing::CubinSpec{}, code);
}

std::string as_string(const std::vector<std::uint8_t>& bytes) { return std::string(bytes.begin(), bytes.end()); }

std::vector<std::string> put_args(const std::string& image_path) {
  return {"put", "--source", k_corpus_ptx, "--image", image_path, "--arch", "sm_90", "--driver", k_driver};
}

// The key id the daemon must assign to the corpus PTX under sm_90, k_driver and default options.
std::string expected_key_id() {
  const std::string source = testing::read_file(k_corpus_ptx);
  proto::KeyFields key;
  key.content = proto::content_digest(proto::as_bytes(source));
  key.arch = "sm_90";
  key.driver_api = 13000;
  key.driver_build = "580.159.04";
  key.options = proto::default_option_text();
  return proto::to_hex(proto::key_id(key));
}

bool is_char_device(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}

bool is_fifo(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
}

// A character device node in `directory` with the numbers of /dev/null (1,3) or /dev/full (1,7), so
// that a CLI that replaced its output would replace this node, never the system's. nullopt where
// nodes cannot be made or used (not root, a nodev mount).
std::optional<std::string> make_device(const TempDir& directory, const std::string& name, unsigned minor) {
  const std::string path = directory.file(name);
  if (::mknod(path.c_str(), S_IFCHR | 0666, ::makedev(1, minor)) != 0) return std::nullopt;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  ::close(fd);
  return path;
}

// Reads a FIFO on a thread of its own, as a program reading the image would: open (for reading)
// once constructed, then until a writer has come and gone, or 30 s.
class FifoReader {
 public:
  explicit FifoReader(const std::string& path) : m_fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)) {
    REQUIRE(m_fd >= 0);
    m_thread = std::thread([this] {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      char buffer[4096];
      while (std::chrono::steady_clock::now() < deadline) {
        // Readable only once a writer has written or closed: before that, poll waits.
        pollfd ready{m_fd, POLLIN, 0};
        if (::poll(&ready, 1, 200) <= 0) continue;
        const ssize_t n = ::read(m_fd, buffer, sizeof buffer);
        if (n == 0) break;
        if (n > 0) m_bytes.append(buffer, static_cast<std::size_t>(n));
      }
    });
  }
  ~FifoReader() {
    if (m_thread.joinable()) m_thread.join();
    ::close(m_fd);
  }
  std::string take() {
    m_thread.join();
    return m_bytes;
  }

 private:
  int m_fd;
  std::string m_bytes;
  std::thread m_thread;
};

// The real daemon on a temp socket, with an sm_90 image of `image_size` bytes written to
// kernel.cubin in its temp dir; put() stores it through the CLI under the corpus PTX's key.
struct DaemonWithImage {
  explicit DaemonWithImage(std::size_t image_size) : image(image_bytes(image_size)) {
    daemon.start();
    socket = daemon.socket_path();
    testing::write_file(image_path, as_string(image));
  }

  // Returns the key id's first 16 digits, as a user would type it.
  std::string put() const {
    REQUIRE(run_cli(put_args(image_path), socket).status == 0);
    return expected_key_id().substr(0, 16);
  }

  TempDir dir;
  DaemonProcess daemon{dir};
  std::string socket;
  std::vector<std::uint8_t> image;
  std::string image_path = dir.file("kernel.cubin");
};

bool only_file_in(const std::string& directory, const std::string& name) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    names.push_back(entry.path().filename().string());
  }
  return names.size() == 1 && names.front() == name;
}

}  // namespace

TEST_CASE("cli: an image put from a corpus PTX is listed, fetched byte-identical, counted and removed") {
  TempDir dir;
  TempDir out_dir("jitcache-cli-out");
  DaemonProcess daemon(dir);
  daemon.start();
  const std::string socket = daemon.socket_path();
  const auto image = image_bytes(70000);
  const std::string image_path = dir.file("kernel.cubin");
  testing::write_file(image_path, as_string(image));

  auto put_command = put_args(image_path);
  put_command.insert(put_command.begin(), "--json");
  const Json put = parse_json(run_cli(put_command, socket));
  const std::string key_id = put.at("key_id").get<std::string>();
  CHECK(key_id == expected_key_id());
  // The key builder's known answer for this PTX under sm_90 (tests/unit/test_client_key_key_builder.cpp).
  CHECK(key_id == "f56c861d86abd00a27b736e0661d27919027a465e14c8722baadb8fe6e6414e9");
  CHECK(put.at("replaced") == false);
  CHECK(put.at("namespace").is_number());

  const CliRun ls = run_cli({"ls"}, socket);
  REQUIRE(ls.status == 0);
  CHECK(ls.out.find(key_id.substr(0, 16)) != std::string::npos);
  CHECK(ls.out.find(key_id.substr(0, 17)) == std::string::npos);
  CHECK(ls.out.find("sm_90") != std::string::npos);
  CHECK(ls.out.find(k_driver) != std::string::npos);
  CHECK(ls.out.find("68.4 KiB") != std::string::npos);

  const Json listed = parse_json(run_cli({"ls", "--json"}, socket));
  REQUIRE(listed.is_array());
  REQUIRE(listed.size() == 1);
  CHECK(listed[0].at("key_id") == key_id);
  CHECK(listed[0].at("content_digest") ==
        proto::to_hex(proto::content_digest(proto::as_bytes(testing::read_file(k_corpus_ptx)))));
  CHECK(listed[0].at("arch") == "sm_90");
  CHECK(listed[0].at("driver_api") == 13000);
  CHECK(listed[0].at("driver_build") == "580.159.04");
  CHECK(listed[0].at("options") == proto::default_option_text());
  CHECK(listed[0].at("raw_size") == image.size());
  CHECK(listed[0].at("checksum") == proto::to_hex(proto::xxh3_128(proto::Bytes(image))));
  CHECK(listed[0].at("created_at").get<std::string>().back() == 'Z');

  SECTION("filters narrow the listing") {
    CHECK(parse_json(run_cli({"--json", "ls", "--arch", "sm_80"}, socket)).empty());
    CHECK(parse_json(run_cli({"--json", "ls", "--arch", "sm_90"}, socket)).size() == 1);
    CHECK(parse_json(run_cli({"--json", "ls", "--driver", "13000"}, socket)).size() == 1);
    CHECK(parse_json(run_cli({"--json", "ls", "--driver", "12080"}, socket)).empty());
    CHECK(parse_json(run_cli({"--json", "ls", "--driver", "580.159.04"}, socket)).size() == 1);
    CHECK(parse_json(run_cli({"--json", "ls", "--driver", "580.0.1"}, socket)).empty());
    CHECK(parse_json(run_cli({"--json", "ls", "--prefix", key_id.substr(0, 8)}, socket)).size() == 1);
    const std::string other_prefix = key_id[0] == '0' ? "10000000" : "00000000";
    CHECK(parse_json(run_cli({"--json", "ls", "--prefix", other_prefix}, socket)).empty());
  }

  SECTION("get, stats and rm") {
    const std::string by_id = out_dir.file("by_id.cubin");
    const CliRun get_by_id = run_cli({"get", key_id.substr(0, 12), "-o", by_id}, socket);
    INFO(get_by_id.err);
    REQUIRE(get_by_id.status == 0);
    CHECK(testing::read_file(by_id) == as_string(image));

    const std::string by_source = out_dir.file("by_source.cubin");
    const CliRun get_by_source =
        run_cli({"get", "--source", k_corpus_ptx, "--arch", "sm_90", "--driver", k_driver, "-o", by_source}, socket);
    INFO(get_by_source.err);
    REQUIRE(get_by_source.status == 0);
    CHECK(testing::read_file(by_source) == as_string(image));

    const Json stats = parse_json(run_cli({"stats", "--json"}, socket));
    CHECK(stats.at("entries") == 1);
    CHECK(stats.at("puts") == 1);
    CHECK(stats.at("hits").get<std::uint64_t>() >= 1);
    CHECK(stats.at("bytes_raw") == image.size());
    for (const char* name : {"bytes_stored", "misses", "connections"}) CHECK(stats.contains(name));
    REQUIRE(stats.at("errors_by_status").is_object());
    for (const auto& item : stats.items()) CHECK(item.key().rfind("errors.", 0) != 0);

    const CliRun stats_text = run_cli({"stats"}, socket);
    REQUIRE(stats_text.status == 0);
    CHECK(stats_text.out.find("entries") != std::string::npos);
    CHECK(stats_text.out.find("(68.4 KiB)") != std::string::npos);

    const CliRun removed = run_cli({"rm", key_id.substr(0, 10)}, socket);
    REQUIRE(removed.status == 0);
    CHECK(removed.out == "removed 1 entry\n");

    const std::string after = out_dir.file("after.cubin");
    const CliRun miss = run_cli({"get", key_id.substr(0, 12), "-o", after}, socket);
    CHECK(miss.status == 1);
    check_one_line_error(miss);
    CHECK_FALSE(std::filesystem::exists(after));
    CHECK(run_cli({"rm", key_id}, socket).status == 1);
    CHECK(parse_json(run_cli({"ls", "--json"}, socket)).empty());
  }
}

TEST_CASE("cli: putting the same key twice says the second put replaced the entry") {
  TempDir dir;
  DaemonProcess daemon(dir);
  daemon.start();
  const std::string image_path = dir.file("kernel.cubin");
  testing::write_file(image_path, as_string(image_bytes(300)));

  const CliRun first = run_cli(put_args(image_path), daemon.socket_path());
  REQUIRE(first.status == 0);
  CHECK(first.out.find(expected_key_id()) != std::string::npos);
  CHECK(first.out.find("replaced   no") != std::string::npos);

  testing::write_file(image_path, as_string(image_bytes(400)));
  const CliRun second = run_cli(put_args(image_path), daemon.socket_path());
  REQUIRE(second.status == 0);
  CHECK(second.out.find("replaced   yes") != std::string::npos);
}

TEST_CASE("cli: ls pages through the daemon's cursor until every entry is listed") {
  TempDir dir;
  DaemonProcess daemon(dir);
  daemon.start();
  constexpr std::uint64_t k_entries = 1010;  // more than one LIST page (1000)
  {
    auto client = daemon.client();
    const auto image = testing::sample_image(7, 64);
    for (std::uint64_t seed = 1; seed <= k_entries; ++seed) REQUIRE(client.put(testing::sample_put(seed, image)));
  }

  const Json all = parse_json(run_cli({"ls", "--json"}, daemon.socket_path()));
  REQUIRE(all.size() == k_entries);
  std::vector<std::string> ids;
  for (const auto& entry : all) ids.push_back(entry.at("key_id").get<std::string>());
  CHECK(std::is_sorted(ids.begin(), ids.end()));
  CHECK(std::adjacent_find(ids.begin(), ids.end()) == ids.end());

  CHECK(parse_json(run_cli({"ls", "--json", "--limit", "1003"}, daemon.socket_path())).size() == 1003);
  CHECK(parse_json(run_cli({"ls", "--json", "--limit", "5"}, daemon.socket_path())).size() == 5);
}

TEST_CASE("cli: ls marks an entry a client reported as failing to load as quarantined, in text and JSON") {
  TempDir dir;
  DaemonProcess daemon(dir);
  daemon.start();
  const auto image = testing::sample_image(1, 64);
  const std::string live_id = proto::to_hex(proto::key_id(testing::sample_key(1)));
  const std::string bad_id = proto::to_hex(proto::key_id(testing::sample_key(2)));
  {
    auto client = daemon.client();
    REQUIRE(client.put(testing::sample_put(1, image)));
    REQUIRE(client.put(testing::sample_put(2, image)));
    proto::ReportFailureRequest report;
    report.key = testing::sample_key(2);
    report.cu_result = 200;
    report.stage = proto::FailureStage::load;
    auto reported = client.report_failure(report);
    REQUIRE(reported);
    REQUIRE(reported->has_value());
  }

  const CliRun ls = run_cli({"ls"}, daemon.socket_path());
  REQUIRE(ls.status == 0);
  INFO(ls.out);
  CHECK(ls.out.find("STATE") != std::string::npos);
  auto line_of = [&](const std::string& key_id) {
    const auto start = ls.out.find(key_id.substr(0, 16));
    REQUIRE(start != std::string::npos);
    return ls.out.substr(start, ls.out.find('\n', start) - start);
  };
  CHECK(line_of(bad_id).find("quarantined") != std::string::npos);
  CHECK(line_of(live_id).find("quarantined") == std::string::npos);
  CHECK(line_of(live_id).find("live") != std::string::npos);

  const Json listed = parse_json(run_cli({"ls", "--json"}, daemon.socket_path()));
  REQUIRE(listed.size() == 2);
  for (const auto& entry : listed) {
    const bool bad = entry.at("key_id") == bad_id;
    CAPTURE(entry.dump());
    CHECK(entry.at("quarantined") == bad);
    CHECK((entry.at("quarantined_at_ms").get<std::int64_t>() > 0) == bad);
  }
}

TEST_CASE("cli: ping reports the daemon's version, and --socket overrides JITCACHE_SOCKET") {
  TempDir dir;
  DaemonProcess daemon(dir);
  daemon.start();
  const std::string nowhere = dir.file("nowhere.sock");

  const Json ping = parse_json(run_cli({"--socket", daemon.socket_path(), "ping", "--json"}, nowhere));
  CHECK_FALSE(ping.at("daemon_version").get<std::string>().empty());
  CHECK(ping.at("protocol_version") == 1);
  CHECK(ping.at("round_trip_us").is_number_unsigned());
  CHECK(ping.at("socket") == daemon.socket_path());

  const CliRun text = run_cli({"ping"}, daemon.socket_path());
  REQUIRE(text.status == 0);
  CHECK(text.out.find("round trip") != std::string::npos);
}

TEST_CASE("cli: with no daemon on the socket every command exits 3 with one line naming the socket") {
  TempDir dir;
  const std::string nowhere = dir.file("nowhere.sock");
  const std::string image_path = dir.file("kernel.cubin");
  testing::write_file(image_path, "image");
  for (const auto& args : std::vector<std::vector<std::string>>{{"ping"},
                                                                {"stats", "--json"},
                                                                {"ls"},
                                                                put_args(image_path),
                                                                {"get", "0123456789abcdef", "-o", dir.file("x")},
                                                                {"rm", "0123456789abcdef"}}) {
    INFO("command: " << args.front());
    const CliRun run = run_cli(args, nowhere);
    CHECK(run.status == 3);
    check_one_line_error(run);
    CHECK(run.err.find(nowhere) != std::string::npos);
  }
}

TEST_CASE("cli: usage errors exit 2 before anything is sent to the daemon") {
  // No daemon runs: a command that got as far as connecting would exit 3, not 2.
  TempDir dir;
  const std::string nowhere = dir.file("nowhere.sock");
  const std::string image_path = dir.file("kernel.cubin");
  testing::write_file(image_path, "image");
  auto put_with = [&](const std::string& option, const std::string& value) {
    auto args = put_args(image_path);
    auto it = std::find(args.begin(), args.end(), option);
    if (it == args.end()) {
      args.push_back(option);
      args.push_back(value);
    } else {
      *(it + 1) = value;
    }
    return args;
  };

  const std::vector<std::vector<std::string>> cases{
      {"frobnicate"},
      {},
      {"ls", "--no-such-option"},
      put_with("--arch", "sm_9x"),
      put_with("--arch", "compute_90"),
      put_with("--driver", "13000"),
      put_with("--driver", "/580.159.04"),
      put_with("--options", "no_such_option=1"),
      {"ls", "--arch", "sm_9x"},
      {"ls", "--driver", "13000/"},
      {"ls", "--limit", "0"},
      {"ls", "--prefix", "xyz"},
      {"ls", "--prefix", "abcd"},
      {"get", "0123abc", "-o", dir.file("x")},
      {"get", "0123456789abcdef"},
      {"get", "-o", dir.file("x")},
      {"get", "--source", k_corpus_ptx, "-o", dir.file("x")},
      {"rm", "not-hex!"},
      {"rm"},
      // Numbers: decimal digits within the option's range only (CLI11 alone read "-5" as 2^64 - 5).
      put_with("--compile-time-us", "-5"),
      put_with("--compile-time-us", "9223372036854775808"),
      put_with("--compile-time-us", "0x10"),
      {"ls", "--limit", "-1"},
      {"ls", "--limit", "99999999999999999999"},
      {"ls", "--limit", "1e3"},
      {"verify", "--timeout", "99999999999"},
      // Text the daemon would refuse (PROTOCOL.md §4 "Field rules").
      put_with("--producer", "red \x1b[31m"),
      // Standard output cannot carry both the image and the JSON document.
      {"--json", "get", "0123456789abcdef", "-o", "-"},
  };
  for (const auto& args : cases) {
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    INFO("jitcache " << joined);
    const CliRun run = run_cli(args, nowhere);
    CHECK(run.status == 2);
    check_one_line_error(run);
  }

  const CliRun unknown = run_cli({"frobnicate"}, nowhere);
  CHECK(unknown.err.find("frobnicate") != std::string::npos);
  const CliRun bad_arch = run_cli(put_with("--arch", "sm_9x"), nowhere);
  CHECK(bad_arch.err.find("sm_9x") != std::string::npos);
}

TEST_CASE("cli: unreadable inputs and unwritable outputs exit 5 and leave no partial file") {
  TempDir dir;
  DaemonProcess daemon(dir);
  daemon.start();
  const std::string socket = daemon.socket_path();
  const std::string image_path = dir.file("kernel.cubin");
  testing::write_file(image_path, as_string(image_bytes(1000)));

  auto missing_image = put_args(dir.file("missing.cubin"));
  const CliRun no_image = run_cli(missing_image, socket);
  CHECK(no_image.status == 5);
  check_one_line_error(no_image);

  auto missing_source = put_args(image_path);
  missing_source[2] = dir.file("missing.ptx");
  CHECK(run_cli(missing_source, socket).status == 5);

  REQUIRE(run_cli(put_args(image_path), socket).status == 0);
  const std::string key_id = expected_key_id();
  const CliRun no_dir = run_cli({"get", key_id, "-o", dir.file("no/such/dir/out.cubin")}, socket);
  CHECK(no_dir.status == 5);
  check_one_line_error(no_dir);

  // A miss must leave an existing output file as it was.
  TempDir out_dir("jitcache-cli-out");
  const std::string existing = out_dir.file("existing.cubin");
  testing::write_file(existing, "previous contents");
  const CliRun miss =
      run_cli({"get", "--source", k_corpus_ptx, "--arch", "sm_80", "--driver", k_driver, "-o", existing}, socket);
  CHECK(miss.status == 1);
  CHECK(testing::read_file(existing) == "previous contents");

  // A hit replaces it whole, and no temporary file is left beside it.
  REQUIRE(run_cli({"get", key_id.substr(0, 8), "-o", existing}, socket).status == 0);
  CHECK(testing::read_file(existing) == as_string(image_bytes(1000)));
  CHECK(only_file_in(out_dir.path(), "existing.cubin"));
}

TEST_CASE("cli: get fetches an image larger than the client's default limit when the daemon allows it") {
  TempDir dir;
  DaemonProcess daemon(dir, {{"--max-frame-bytes", "128MiB"}, {}, "warn"});
  daemon.start();
  const auto image = testing::sample_image(7, 80u << 20);  // above the default 64 MiB frame
  auto client = daemon.client();
  auto put = client.put(testing::sample_put(7, image));
  REQUIRE(put);

  const std::string output = dir.file("big.cubin");
  const CliRun get = run_cli({"get", proto::to_hex(put->key_id), "-o", output}, daemon.socket_path());
  INFO(get.err);
  REQUIRE(get.status == 0);
  const std::string written = testing::read_file(output);
  CHECK(written.size() == image.size());
  CHECK(std::equal(written.begin(), written.end(), image.begin(),
                   [](char a, std::uint8_t b) { return static_cast<std::uint8_t>(a) == b; }));
}

// ---- warm

namespace {

// A tree as `jitcache warm` meets it: PTX at two depths (the second a copy: one key), PTX that does
// not compile, a fat binary whose PTX the load walk picks for sm_90 and one with an sm_90 cubin
// (nothing to warm), and a file warm does not look at.
void make_warm_tree(const TempDir& dir) {
  const std::string ptx = testing::read_file(k_corpus_ptx);
  std::filesystem::create_directories(dir.file("tree/sub"));
  testing::write_file(dir.file("tree/small.ptx"), ptx);
  testing::write_file(dir.file("tree/sub/copy.ptx"), ptx);
  testing::write_file(dir.file("tree/sub/bad.ptx"), ".version 9.0\n.target sm_90\n.address_size 64\nnot ptx;\n");
  testing::write_file(dir.file("tree/notes.txt"), "not looked at");
  const std::string fixtures = JITCACHE_FATBIN_FIXTURE_DIR;
  if (!fixtures.empty()) {
    std::filesystem::copy_file(fixtures + "/compute90.fatbin", dir.file("tree/sub/kernel.fatbin"));
    std::filesystem::copy_file(fixtures + "/sm90.fatbin", dir.file("tree/cubin_only.fatbin"));
  }
}

}  // namespace

TEST_CASE("cli: warm compiles a directory of PTX and fat binaries, and a second run finds them present") {
  TempDir dir;
  DaemonProcess daemon(dir);
  daemon.start();
  make_warm_tree(dir);
  const bool fatbins = !std::string(JITCACHE_FATBIN_FIXTURE_DIR).empty();

  const CliRun first =
      run_cli({"warm", dir.file("tree"), "--arch", "sm_90", "--driver", k_driver}, daemon.socket_path());
  INFO(first.out << first.err);
  CHECK(first.status == 4);  // bad.ptx failed
  CHECK_THAT(first.out, Catch::Contains("failed    " + dir.file("tree/sub/bad.ptx") + "  sm_90a: compile_error: "));
  CHECK_THAT(first.out, Catch::Contains("compiled  " + dir.file("tree/small.ptx") + "  sm_90a"));
  CHECK_THAT(first.out, Catch::Contains("present   " + dir.file("tree/sub/copy.ptx")));
  CHECK(first.out.find("notes.txt") == std::string::npos);
  if (fatbins) {
    CHECK_THAT(first.out, Catch::Contains("compiled  " + dir.file("tree/sub/kernel.fatbin") + " [compute_90 PTX"));
    CHECK_THAT(first.out, Catch::Contains("skipped   " + dir.file("tree/cubin_only.fatbin")));
    CHECK_THAT(first.out, Catch::EndsWith("compiled 2, already present 1, refused 0, failed 1, skipped 1 (of 5)\n"));
  } else {
    JITCACHE_MARK_SKIPPED("the fat binary part: no nvcc, so no fixtures; warm is checked on PTX only");
    CHECK_THAT(first.out, Catch::EndsWith("compiled 1, already present 1, refused 0, failed 1, skipped 0 (of 3)\n"));
  }

  // What warm compiled is what a program on that GPU looks up: sm_90a, key of the PTX's bytes.
  auto client = daemon.client();
  proto::KeyFields key;
  key.content = proto::content_digest(proto::as_bytes(testing::read_file(k_corpus_ptx)));
  key.arch = "sm_90a";
  key.driver_api = 13000;
  key.driver_build = "580.159.04";
  key.options = proto::default_option_text();
  auto found = client.lookup(key);
  REQUIRE(found);
  CHECK(found->has_value());

  const CliRun second =
      run_cli({"--json", "warm", dir.file("tree"), "--arch", "sm_90", "--driver", k_driver}, daemon.socket_path());
  CHECK(second.status == 4);
  const Json json = Json::parse(second.out);
  CHECK(json["compiled"] == 0);
  CHECK(json["already_present"] == (fatbins ? 3 : 2));
  CHECK(json["failed"] == 1);
  CHECK(json["items"].size() == (fatbins ? 5u : 3u));
  // The key builder's known answer for this PTX on an sm_90 GPU: the key a program there looks up
  // (tests/unit/test_client_key_key_builder.cpp).
  int small_items = 0;
  for (const auto& item : json["items"]) {
    if (item["source"] != dir.file("tree/small.ptx")) continue;
    ++small_items;
    CHECK(item["key_id"] == "25ef36cce2295eb7859a3662b2f3bfeaa446e73a95be3fb9c721bee9c7dad2b4");
  }
  CHECK(small_items == 1);
}

TEST_CASE("cli: warm reports refusals with their reason, and needs --driver where no driver can be opened") {
  TempDir dir;
  DaemonProcess daemon(dir);
  daemon.start();
  const CliRun refused =
      run_cli({"warm", k_corpus_ptx, "--arch", "sm_90", "--driver", k_driver, "--options", "tpb=128"},
              daemon.socket_path());
  INFO(refused.out << refused.err);
  CHECK(refused.status == 4);
  CHECK_THAT(refused.out, Catch::Contains("refused   " + k_corpus_ptx + "  sm_90a: cannot_compile: option: "));
  CHECK_THAT(refused.out, Catch::EndsWith("compiled 0, already present 0, refused 1, failed 0, skipped 0 (of 1)\n"));

  const CliRun all_ok = run_cli({"warm", k_corpus_ptx, "--arch", "sm_90", "--driver", k_driver}, daemon.socket_path());
  CHECK(all_ok.status == 0);

  ::setenv("JITCACHE_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
  const CliRun no_driver = run_cli({"warm", k_corpus_ptx, "--arch", "sm_90"}, daemon.socket_path());
  ::unsetenv("JITCACHE_CUDA_DRIVER");
  CHECK(no_driver.status == 2);
  check_one_line_error(no_driver);
  CHECK_THAT(no_driver.err, Catch::Contains("--driver API/BUILD is required"));

  TempDir off_dir;
  DaemonProcess off(off_dir, {{}, {{"JITCACHE_COMPILE", "false"}}});
  off.start();
  const CliRun not_compiling =
      run_cli({"warm", k_corpus_ptx, "--arch", "sm_90", "--driver", k_driver}, off.socket_path());
  CHECK(not_compiling.status == 4);
  check_one_line_error(not_compiling);
  CHECK_THAT(not_compiling.err, Catch::Contains("does not compile"));
}

TEST_CASE("cli: ls --stale lists the entries of drivers no client asks for, and gc removes them") {
  TempDir dir;
  // Rationale: 2 s, and a LOOKUP of the new driver just before every command that must not find
  // it stale: a CLI start on a loaded CI machine can take most of a second.
  DaemonProcess daemon(dir, testing::DaemonOptions{{"--stale-driver-after", "2s"}, {}, "warn"});
  daemon.start();
  const std::string socket = daemon.socket_path();
  auto client = daemon.client();
  const auto image = testing::sample_image(1, 4096);
  proto::KeyFields old_key = testing::sample_key(1);  // driver 13000/580.159.04
  proto::KeyFields new_key = testing::sample_key(2);
  new_key.driver_build = "590.10";
  for (const auto& key : {old_key, new_key}) {
    proto::PutRequest put;
    put.key = key;
    put.producer = "test";
    put.image = image;
    put.content_fast = testing::sample_content_fast(1);
    REQUIRE(client.put(put));
  }
  CHECK(run_cli({"ls", "--stale"}, socket).out == "no entries\n");
  for (int i = 0; i < 10; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    REQUIRE(client.lookup(new_key));  // the host's clients now ask for 590.10 only
  }

  const Json stale = parse_json(run_cli({"--json", "ls", "--stale"}, socket));
  REQUIRE(stale.size() == 1);
  CHECK(stale[0].at("key_id") == proto::to_hex(proto::key_id(old_key)));
  CHECK(parse_json(run_cli({"--json", "ls"}, socket)).size() == 2);

  REQUIRE(client.lookup(new_key));
  const CliRun gc = run_cli({"gc"}, socket);
  INFO(gc.err);
  REQUIRE(gc.status == 0);
  CHECK(gc.out.find("evicted 1 entry (") == 0);
  CHECK(gc.out.find("1 of them for stale drivers") != std::string::npos);
  CHECK(gc.out.find("the store holds 1 entry (") != std::string::npos);

  REQUIRE(client.lookup(new_key));
  const Json again = parse_json(run_cli({"--json", "gc"}, socket));
  CHECK(again.at("evicted_entries") == 0);
  CHECK(again.at("evicted_bytes") == 0);
  CHECK(again.at("stale_entries") == 0);
  CHECK(again.at("entries") == 1);
  REQUIRE(client.lookup(new_key));
  CHECK(parse_json(run_cli({"--json", "ls", "--stale"}, socket)).empty());
  const Json left = parse_json(run_cli({"--json", "ls"}, socket));
  REQUIRE(left.size() == 1);
  CHECK(left[0].at("driver_build") == "590.10");
  CHECK(again.at("bytes_stored") == left[0].at("stored_size"));
}

TEST_CASE("cli: verify reports a clean store with exit 0, and removes and names a damaged entry with exit 6") {
  TempDir dir;
  DaemonProcess daemon(dir);
  daemon.start();
  const std::string socket = daemon.socket_path();
  auto client = daemon.client();
  std::vector<std::uint8_t> code(200'000);
  for (std::size_t i = 0; i < code.size(); ++i) code[i] = static_cast<std::uint8_t>(i % 64 < 8 ? i : 0);
  const std::vector<std::uint8_t> compressible = testing::make_cubin(testing::CubinSpec{}, code);
  REQUIRE(client.put(testing::sample_put(1, testing::sample_image(1, 50'000))));
  REQUIRE(client.put(testing::sample_put(2, compressible)));
  REQUIRE(client.put(testing::sample_put(3, compressible)));

  const CliRun clean = run_cli({"verify"}, socket);
  INFO(clean.out << clean.err);
  REQUIRE(clean.status == 0);
  CHECK(clean.out.find("integrity_check: ok\n") == 0);
  CHECK(clean.out.find("checked 3 entries") != std::string::npos);
  CHECK(clean.out.find("removed 0 damaged") != std::string::npos);

  // Damage one compressed image from outside, as a failing disk would.
  const std::string damaged = proto::to_hex(proto::key_id(testing::sample_key(2)));
  {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open((daemon.state_dir() + "/jitcache.db").c_str(), &db) == SQLITE_OK);
    sqlite3_busy_timeout(db, 5000);
    const std::string sql =
        "UPDATE blobs SET data = CAST(substr(data, 1, 30) || x'0102030405060708' || substr(data, 39) AS BLOB)"
        " WHERE entry_id = (SELECT id FROM entries WHERE hex(key_id) = upper('" +
        damaged + "'))";
    CHECK(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK);
    CHECK(sqlite3_changes(db) == 1);
    sqlite3_close(db);
  }

  const CliRun found = run_cli({"--json", "verify"}, socket);
  INFO(found.out << found.err);
  CHECK(found.status == 6);
  const Json report = Json::parse(found.out);
  CHECK(report.at("integrity_check") == "ok");
  CHECK(report.at("entries_checked") == 3);
  CHECK(report.at("entries_removed") == 1);
  REQUIRE(report.at("removed").size() == 1);
  CHECK(report.at("removed")[0].at("key_id") == damaged);
  CHECK(report.at("damage_found") == true);

  const CliRun after = run_cli({"verify"}, socket);
  CHECK(after.status == 0);
  CHECK(after.out.find("checked 2 entries") != std::string::npos);
  auto gone = client.lookup(testing::sample_key(2));
  REQUIRE(gone);
  CHECK_FALSE(gone->has_value());
}

TEST_CASE("cli: put, get and warm refuse a FIFO or a device as input at once instead of waiting on it") {
  const DaemonWithImage setup(1000);
  const std::string& socket = setup.socket;
  const std::string fifo = setup.dir.file("input.fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);

  // No process ever writes to the FIFO: a CLI that opened or read it would wait until run_cli's
  // deadline.
  const auto started = std::chrono::steady_clock::now();
  const CliRun fifo_image = run_cli(put_args(fifo), socket);
  CHECK(fifo_image.status == 5);
  check_one_line_error(fifo_image);
  CHECK_THAT(fifo_image.err, Catch::Contains(fifo) && Catch::Contains("a FIFO, not a regular file"));

  auto fifo_source = put_args(setup.image_path);
  fifo_source[2] = fifo;
  CHECK(run_cli(fifo_source, socket).status == 5);
  const CliRun zero_image = run_cli(put_args("/dev/zero"), socket);
  CHECK(zero_image.status == 5);
  CHECK_THAT(zero_image.err, Catch::Contains("a character device, not a regular file"));
  const CliRun get_source =
      run_cli({"get", "--source", fifo, "--arch", "sm_90", "--driver", k_driver, "-o", setup.dir.file("out.cubin")},
              socket);
  CHECK(get_source.status == 5);
  // warm reads its sources before it talks to the daemon; the FIFO is one that failed (exit 4).
  const CliRun warm = run_cli({"warm", fifo, "--arch", "sm_90", "--driver", k_driver}, socket);
  CHECK(warm.status == 4);
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(20));
  CHECK(is_fifo(fifo));
}

TEST_CASE("cli: get -o writes into a device or a FIFO without replacing it, and a write error on /dev/full exits 5") {
  const DaemonWithImage setup(5000);
  const std::string& socket = setup.socket;
  const std::string key_id = setup.put();

  SECTION("character devices: /dev/null takes the image, /dev/full is a write error; both stay devices") {
    // Nodes of our own with the numbers of /dev/null and /dev/full: the old CLI replaced its
    // output with a regular file, and it must never get the chance to do that to /dev.
    TempDir devices("jitcache-cli-dev");
    const auto null_device = make_device(devices, "null", 3);
    const auto full_device = make_device(devices, "full", 7);
    if (!null_device || !full_device) {
      JITCACHE_SKIP("cannot make and open device nodes here (needs root and a mount without nodev)");
    }
    const CliRun to_null = run_cli({"get", key_id, "-o", *null_device}, socket);
    CHECK(to_null.status == 0);
    CHECK(is_char_device(*null_device));

    const CliRun to_full = run_cli({"get", key_id, "-o", *full_device}, socket);
    CHECK(to_full.status == 5);
    check_one_line_error(to_full);
    CHECK_THAT(to_full.err,
               Catch::Contains("cannot write " + *full_device) && Catch::Contains("No space left on device"));
    CHECK(is_char_device(*full_device));
    std::size_t names = 0;  // no temporary file left beside them
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(devices.path())) ++names;
    CHECK(names == 2);
  }

  SECTION("a FIFO with a reader gets the image written into it; one without a reader is refused at once") {
    const std::string fifo = setup.dir.file("out.fifo");
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    {
      FifoReader reader(fifo);
      const CliRun to_fifo = run_cli({"get", key_id, "-o", fifo}, socket);
      CHECK(to_fifo.status == 0);
      CHECK(reader.take() == as_string(setup.image));
    }
    CHECK(is_fifo(fifo));

    const CliRun no_reader = run_cli({"get", key_id, "-o", fifo}, socket);
    CHECK(no_reader.status == 5);
    check_one_line_error(no_reader);
    CHECK_THAT(no_reader.err, Catch::Contains("no process has it open for reading"));
    CHECK(is_fifo(fifo));
  }
}

TEST_CASE("cli: get -o - writes the image to stdout, and a command whose stdout cannot be written exits 5") {
  const DaemonWithImage setup(70000);
  const std::string& socket = setup.socket;
  const std::string key_id = setup.put();

  const CliRun to_stdout = run_cli({"get", key_id, "-o", "-"}, socket);
  REQUIRE(to_stdout.status == 0);
  CHECK(to_stdout.out == as_string(setup.image));  // the image alone: the summary went to stderr
  CHECK_THAT(to_stdout.err, Catch::Contains("wrote 68.4 KiB to standard output"));

  // /dev/full as stdout: every write fails with ENOSPC.
  const CliRun image_full = run_cli({"get", key_id, "-o", "-"}, socket, "/dev/full");
  CHECK(image_full.status == 5);
  CHECK_THAT(image_full.err, Catch::Contains("standard output") && Catch::Contains("No space left on device"));
  for (const std::vector<std::string>& args : {std::vector<std::string>{"ls"},
                                               {"--json", "ls"},
                                               {"stats"},
                                               {"ping"},
                                               {"get", key_id, "-o", setup.dir.file("x")}}) {
    INFO(args.front() << " " << args.back());
    const CliRun full = run_cli(args, socket, "/dev/full");
    CHECK(full.status == 5);
    check_one_line_error(full);
    CHECK_THAT(full.err, Catch::Contains("cannot write to standard output: No space left on device"));
  }
}

TEST_CASE("cli: text and JSON output show control characters, bidi controls and bad UTF-8 from the daemon escaped") {
  const DaemonWithImage setup(1000);
  const std::string& socket = setup.socket;
  setup.put();

  // The daemon refuses such a producer now; an entry stored before that (or by a daemon that did
  // not check) still holds one: put it there from outside.
  const std::string odd =
      "red \x1b[31mX\x1b[0m c1 \xc2\x9b"
      "2J rlo \xe2\x80\xae bad \xff back\\slash Jos\xc3\xa9";
  {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open((setup.daemon.state_dir() + "/jitcache.db").c_str(), &db) == SQLITE_OK);
    sqlite3_busy_timeout(db, 5000);
    sqlite3_stmt* stmt = nullptr;
    REQUIRE(sqlite3_prepare_v2(db, "UPDATE entries SET producer = ?", -1, &stmt, nullptr) == SQLITE_OK);
    sqlite3_bind_text(stmt, 1, odd.data(), static_cast<int>(odd.size()), SQLITE_TRANSIENT);
    CHECK(sqlite3_step(stmt) == SQLITE_DONE);
    sqlite3_finalize(stmt);
    CHECK(sqlite3_changes(db) == 1);
    sqlite3_close(db);
  }

  const CliRun ls = run_cli({"ls"}, socket);
  REQUIRE(ls.status == 0);
  INFO(ls.out);
  CHECK(ls.out.find('\x1b') == std::string::npos);
  CHECK(ls.out.find("\xc2\x9b") == std::string::npos);
  CHECK(ls.out.find("\xe2\x80\xae") == std::string::npos);
  CHECK(ls.out.find('\xff') == std::string::npos);
  CHECK_THAT(ls.out, Catch::Contains(
                         "red \\x1b[31mX\\x1b[0m c1 \\u{009b}2J rlo \\u{202e} bad \\xff back\\\\slash Jos\xc3\xa9"));

  const CliRun json = run_cli({"--json", "ls"}, socket);
  REQUIRE(json.status == 0);
  CHECK(std::none_of(json.out.begin(), json.out.end(), [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return byte >= 0x80 || (byte < 0x20 && c != '\n');
  }));
  const Json listed = Json::parse(json.out);
  REQUIRE(listed.size() == 1);
  // JSON escapes read back as the stored text; the invalid byte became U+FFFD.
  CHECK(listed[0].at("producer") ==
        "red \x1b[31mX\x1b[0m c1 \xc2\x9b"
        "2J rlo \xe2\x80\xae bad \xef\xbf\xbd back\\slash Jos\xc3\xa9");
}

TEST_CASE("cli: put refuses PTX text or a cubin of another arch as the image, and says why") {
  TempDir dir;
  DaemonProcess daemon(dir);
  daemon.start();

  // The PTX source given as the image too, as in `jitcache put --image kernel.ptx`.
  std::vector<std::string> args = put_args(k_corpus_ptx);
  const CliRun text = run_cli(args, daemon.socket_path());
  CHECK(text.status == 4);
  check_one_line_error(text);
  CHECK_THAT(text.err, Catch::Contains("not a cubin") && Catch::Contains("PTX"));

  testing::CubinSpec sm_80;
  sm_80.sm = 80;
  const std::string wrong_path = dir.file("sm_80.cubin");
  testing::write_file(wrong_path, as_string(testing::make_cubin(sm_80, 1, 2000)));
  const CliRun wrong = run_cli(put_args(wrong_path), daemon.socket_path());
  CHECK(wrong.status == 4);
  check_one_line_error(wrong);
  CHECK_THAT(wrong.err, Catch::Contains("sm_80 cubin") && Catch::Contains("cannot serve the key's arch sm_90"));
  CHECK(parse_json(run_cli({"ls", "--json"}, daemon.socket_path())).empty());

  const std::string right_path = dir.file("sm_90.cubin");
  testing::write_file(right_path, as_string(image_bytes(2000)));
  const CliRun right = run_cli(put_args(right_path), daemon.socket_path());
  CHECK(right.status == 0);
  CHECK(parse_json(run_cli({"ls", "--json"}, daemon.socket_path())).size() == 1);
}
