// Transparent mode for NVRTC compiles (docs/transparent.md "NVRTC compiles"): the unmodified
// program (g) (tests/programs/nvrtc_compile.c) opens the toolkit's real libnvrtc with dlopen and
// compiles a template kernel with a name expression, an in-memory header and a header under an -I
// directory, under libjitcache-preload.so against the real daemon. NVRTC needs no GPU.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <proto/messages.hpp>
#include <proto/nvrtc_key.hpp>
#include <proto/nvrtc_result.hpp>
#include <proto/signing.hpp>
#include <proto/wire.hpp>
#include <tests/support/child_process.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/daemon_stats.hpp>
#include <tests/support/nvrtc_program_run.hpp>
#include <tests/support/system_users.hpp>
#include <tests/support/temp_dir.hpp>
#include <tests/support/test_skip.hpp>
#include <tests/support/transparent_check.hpp>

using jitcache::testing::ChildResult;
using jitcache::testing::DaemonOptions;
using jitcache::testing::DaemonProcess;
using jitcache::testing::EnvChange;
using jitcache::testing::run_child;
using jitcache::testing::stat_value;
using jitcache::testing::SystemUser;
using jitcache::testing::SystemUsers;
using jitcache::testing::TempDir;
using jitcache::testing::write_file;
using jitcache::testing::nvrtc::compile_args;
using jitcache::testing::nvrtc::k_broken_kernel;
using jitcache::testing::nvrtc::run_program;
using jitcache::testing::nvrtc::Sources;
using jitcache::testing::transparent::check_twice;
using jitcache::testing::transparent::run_env;

TEST_CASE("transparent nvrtc: (g) a compile through dlopen + dlsym is a hit the second time, answering the same") {
  Sources sources;
  check_twice([&](const std::vector<EnvChange>& env) { return run_program(compile_args(sources), env); },
              "lowered=0,_Z5scaleIfEvPT_", "nvrtcCompileProgram");
}

TEST_CASE("transparent nvrtc: (g) PTX for a virtual arch is a hit the second time") {
  Sources sources;
  check_twice(
      [&](const std::vector<EnvChange>& env) {
        return run_program({sources.kernel, "scale<double>", "-I" + sources.include_dir, "-arch=compute_90"}, env);
      },
      "compile=0", "nvrtcCompileProgram");
}

TEST_CASE("transparent nvrtc: (g) a compile error answers NVRTC's result and log every time") {
  Sources sources(k_broken_kernel);
  check_twice([&](const std::vector<EnvChange>& env) { return run_program(compile_args(sources), env); }, "compile=6",
              "nvrtcCompileProgram");
}

TEST_CASE(
    "transparent nvrtc: (g) a header under -I changed between runs is a miss with the new output, restored a hit") {
  Sources sources;
  TempDir state;
  DaemonProcess daemon(state);
  daemon.start();
  auto client = daemon.client();
  const auto cached = [&] { return run_program(compile_args(sources), run_env(daemon.socket_path(), true)); };
  const auto plain = [&] { return run_program(compile_args(sources), run_env(state.file("none.sock"), false)); };

  const ChildResult first_plain = plain();
  REQUIRE(first_plain.status == 0);
  const ChildResult first = cached();
  CHECK(first.output == first_plain.output);
  CHECK(stat_value(client, "entries") == 1);

  sources.set_header(4);
  const ChildResult changed_plain = plain();
  REQUIRE(changed_plain.output != first_plain.output);  // the header reaches the code
  const auto hits = stat_value(client, "hits");
  const ChildResult changed = cached();
  CHECK(changed.output == changed_plain.output);
  CHECK(stat_value(client, "hits") == hits);
  CHECK(stat_value(client, "entries") == 2);

  sources.set_header(3);
  const ChildResult restored = cached();
  CHECK(restored.output == first_plain.output);
  CHECK(stat_value(client, "hits") == hits + 1);
  CHECK(stat_value(client, "entries") == 2);
}

TEST_CASE("transparent nvrtc: (g) a header that appears earlier in the search is a miss, not the old answer") {
  Sources sources;
  TempDir state;
  DaemonProcess daemon(state);
  daemon.start();
  auto client = daemon.client();
  // A second -I directory before the first: empty at first, then it gains a header of the same name.
  const std::string early = sources.dir.file("early");
  std::filesystem::create_directories(early);
  const auto args = [&] {
    return std::vector<std::string>{sources.kernel, "scale<float>", "-I" + early, "-I" + sources.include_dir,
                                    "-arch=sm_90"};
  };
  const ChildResult first = run_program(args(), run_env(daemon.socket_path(), true));
  REQUIRE(first.status == 0);
  write_file(early + "/scale_value.cuh", "#define HEADER_VALUE 9\n");
  const ChildResult plain = run_program(args(), run_env(state.file("none.sock"), false));
  REQUIRE(plain.output != first.output);
  const auto hits = stat_value(client, "hits");
  const ChildResult shadowed = run_program(args(), run_env(daemon.socket_path(), true));
  CHECK(shadowed.output == plain.output);
  CHECK(stat_value(client, "hits") == hits);
}

TEST_CASE(
    "transparent nvrtc: (g) an option with side effects (--time) passes through: nothing stored, its file written") {
  Sources sources;
  TempDir state;
  DaemonProcess daemon(state);
  daemon.start();
  auto client = daemon.client();
  const std::string timing = state.file("time.csv");
  for (int run = 0; run < 2; ++run) {
    std::filesystem::remove(timing);
    const ChildResult result =
        run_program(compile_args(sources, {"--time=" + timing}), run_env(daemon.socket_path(), true));
    CHECK(result.status == 0);
    CHECK_THAT(result.output, Catch::Contains("compile=0"));
    CHECK(std::filesystem::exists(timing));
  }
  CHECK(stat_value(client, "entries") == 0);
  CHECK(stat_value(client, "hits") == 0);
}

TEST_CASE("transparent nvrtc: (g) two uids do not see each other's results") {
  SystemUsers users("jcn");
  if (!users.available()) {
    JITCACHE_SKIP(users.why());
  }
  TempDir state("jitcache-nvrtc-tenants");
  ::chmod(state.path().c_str(), 0755);
  DaemonProcess daemon(state, DaemonOptions{{"--socket-group", users.group_name()}, {}, "warn"});
  daemon.start();
  auto client = daemon.client();
  Sources sources;
  ::chmod(sources.dir.path().c_str(), 0755);
  const auto run_as = [&](const SystemUser& user) {
    std::vector<std::string> args = {"--reuid=" + std::to_string(user.uid), "--regid=" + std::to_string(user.gid),
                                     "--groups=" + std::to_string(users.group()), JITCACHE_NVRTC_PROGRAM};
    for (const std::string& arg : compile_args(sources)) args.push_back(arg);
    std::vector<EnvChange> env = run_env(daemon.socket_path(), true);
    env.push_back({"NVRTC_LIBRARY", std::string(JITCACHE_NVRTC_LIBRARY)});
    args.insert(args.begin(), "/usr/bin/setpriv");
    return run_child(args, env, std::chrono::seconds(120));
  };
  const ChildResult a_cold = run_as(users.a());
  REQUIRE(a_cold.status == 0);
  CHECK(stat_value(client, "entries") == 1);
  const ChildResult a_warm = run_as(users.a());
  CHECK(a_warm.output == a_cold.output);
  CHECK(stat_value(client, "hits") == 1);
  const ChildResult b = run_as(users.b());
  CHECK(b.output == a_cold.output);
  CHECK(stat_value(client, "hits") == 1);  // B's lookup found nothing of A's
  CHECK(stat_value(client, "entries") == 2);
}

TEST_CASE("transparent nvrtc: the daemon stores under an NVRTC key only an image that decodes as NVRTC's answers") {
  TempDir state;
  DaemonProcess daemon(state);
  daemon.start();
  auto client = daemon.client();
  jitcache::proto::NvrtcCompileInput input;
  input.identity = {13, 0, jitcache::proto::xxh3_128(jitcache::proto::as_bytes("lib")), {}};
  input.source = "__global__ void k() {}";
  input.options.arch = "sm_90";
  auto key = jitcache::proto::nvrtc_key(input);
  REQUIRE(key);
  const auto put = [&](const std::vector<std::uint8_t>& image) {
    jitcache::proto::PutRequest request;
    request.key = key->fields;
    request.producer = "test";
    request.image = jitcache::proto::Bytes(image);
    request.content_fast = key->content_fast;
    return client.put(request);
  };
  const std::string text = "not an NVRTC result";
  auto refused = put(std::vector<std::uint8_t>(text.begin(), text.end()));
  REQUIRE_FALSE(refused);
  CHECK(refused.error().reply_status == static_cast<std::uint16_t>(jitcache::proto::Status::bad_request));
  jitcache::proto::NvrtcResult result;
  result.output(jitcache::proto::NvrtcOutput::ptx) = {true, 0, 0, {'.', '\0'}};
  std::vector<std::uint8_t> blob = jitcache::proto::encode_nvrtc_result(result);
  blob.push_back(0);  // one byte too many
  CHECK_FALSE(put(blob));
  blob.pop_back();
  CHECK(put(blob));
  CHECK(stat_value(client, "entries") == 1);
}

TEST_CASE("transparent nvrtc: (g) 8 processes compiling the same source at once compile it once") {
  Sources sources;
  TempDir state;
  DaemonProcess daemon(state);
  daemon.start();
  auto client = daemon.client();
  constexpr int k_processes = 8;
  std::vector<ChildResult> results(k_processes);
  std::vector<std::thread> threads;
  for (int i = 0; i < k_processes; ++i) {
    threads.emplace_back([&, i] {
      results[i] = run_program(compile_args(sources), run_env(daemon.socket_path(), true,
                                                              {{"JITCACHE_REPORT", state.file("report-%p.json")}}));
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const ChildResult& result : results) {
    CHECK(result.status == 0);
    CHECK(result.output == results.front().output);
  }
  std::string reports;
  for (const auto& file : std::filesystem::directory_iterator(state.path())) {
    if (file.path().filename().string().rfind("report-", 0) == 0) {
      reports += jitcache::testing::transparent::read_file(file.path().string());
    }
  }
  const auto count = [&](const std::string& outcome) {
    const std::string needle = "\"entry_point\": \"nvrtcCompileProgram\", \"outcome\": \"" + outcome + "\"";
    int n = 0;
    for (auto at = reports.find(needle); at != std::string::npos; at = reports.find(needle, at + 1)) ++n;
    return n;
  };
  CHECK(count("compiled_locally") == 1);
  CHECK(count("hit") == k_processes - 1);
  CHECK(stat_value(client, "entries") == 1);
}

TEST_CASE("transparent nvrtc: (g) an NVRTC entry travels in a signed bundle and hits on the importing host") {
  TempDir keys("jitcache-nvrtc-bundle-keys");
  const std::string builder = keys.file("builder");
  REQUIRE(jitcache::proto::SigningKey::generate().write_pair(builder));
  TempDir exporter_dir("jitcache-nvrtc-bundle-a");
  TempDir importer_dir("jitcache-nvrtc-bundle-b");
  DaemonProcess exporter(exporter_dir, DaemonOptions{{"--remote-signing-key", builder + ".key"}, {}, "warn"});
  DaemonProcess importer(importer_dir, DaemonOptions{{"--remote-trusted-keys", builder + ".pub"}, {}, "warn"});
  exporter.start();
  importer.start();
  Sources sources;
  const ChildResult built = run_program(compile_args(sources), run_env(exporter.socket_path(), true));
  REQUIRE(built.status == 0);
  const std::string bundle = keys.file("nvrtc.jcb");
  const auto cli = [](const DaemonProcess& daemon, const std::vector<std::string>& args) {
    std::vector<std::string> argv{JITCACHE_CLI_PATH};
    argv.insert(argv.end(), args.begin(), args.end());
    return jitcache::testing::run_child_captured(argv, {{"JITCACHE_SOCKET", daemon.socket_path()}},
                                                 std::chrono::seconds(60));
  };
  const ChildResult exported = cli(exporter, {"--json", "export", "-o", bundle});
  INFO(exported.output << exported.errors);
  REQUIRE(exported.status == 0);
  CHECK_THAT(exported.output, Catch::Contains("\"entries\": 1"));
  const ChildResult imported = cli(importer, {"--json", "import", bundle});
  INFO(imported.output << imported.errors);
  REQUIRE(imported.status == 0);
  CHECK_THAT(imported.output, Catch::Contains("\"imported\": 1"));
  auto client = importer.client();
  const ChildResult served = run_program(compile_args(sources), run_env(importer.socket_path(), true));
  CHECK(served.output == built.output);
  CHECK(stat_value(client, "hits") == 1);
  CHECK(stat_value(client, "entries") == 1);
}
