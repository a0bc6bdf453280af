// `jitcache warm` on ELF executables, shared libraries and directories of them (docs/cli.md "warm"),
// against the real daemon: host binaries built by nvcc at test-build time (tests/CMakeLists.txt,
// warm fixtures) have every fat binary in their .nv_fatbin and __nv_relfatbin sections walked as a
// load on the target arch walks it; what a program there would JIT is compiled, and a load of that
// fat binary through libjitcache (the fake driver standing in for a GPU of that arch) is then a hit.
// A cubin the arch runs needs nothing; a directory is searched through links and junk, each binary
// once. Without nvcc the cases that need the fixtures skip and say so.
#include <catch2/catch.hpp>

#include <jitcache/jitcache.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <client/src/fatbin/host_elf.hpp>
#include <tests/support/child_process.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/fake_driver.hpp>
#include <tests/support/sample_cubin.hpp>
#include <tests/support/temp_dir.hpp>
#include <tests/support/test_skip.hpp>

namespace fb = jitcache::client::fatbin;
using jitcache::testing::ChildResult;
using jitcache::testing::DaemonProcess;
using jitcache::testing::FakeDriver;
using jitcache::testing::TempDir;
using Json = nlohmann::json;

namespace {

namespace fs = std::filesystem;

const std::string k_fixtures = JITCACHE_WARM_FIXTURE_DIR;
// The fake driver's identity (tests/fakes/README.md): what a client there puts in its keys.
const std::string k_fake_driver = "13000/999.0.1";

bool have_fixtures() {
  if (k_fixtures.empty()) {
    JITCACHE_MARK_SKIPPED(
        "nvcc was not found when the tests were built, so there are no host binaries with device code");
    return false;
  }
  return true;
}

ChildResult warm(const std::vector<std::string>& args, const std::string& socket) {
  std::vector<std::string> argv{jitcache::testing::cli_executable(), "warm"};
  argv.insert(argv.end(), args.begin(), args.end());
  ChildResult result =
      jitcache::testing::run_child_captured(argv, {{"JITCACHE_SOCKET", socket}}, std::chrono::seconds(120));
  INFO("stdout: " << result.output << "\nstderr: " << result.errors);
  REQUIRE(result.wait_status != -1);
  return result;
}

// The fat binary containers of a host binary, as warm finds them: {section, bytes}.
std::vector<std::pair<std::string, std::vector<std::byte>>> containers_of(const std::string& path) {
  const std::string file = jitcache::testing::read_file(path);
  const fb::ReadAt read = [&](std::uint64_t offset, std::span<std::byte> into) -> jitcache::common::Result<void> {
    REQUIRE(offset + into.size() <= file.size());
    std::memcpy(into.data(), file.data() + offset, into.size());
    return {};
  };
  auto elf = fb::read_host_elf(file.size(), read);
  REQUIRE(elf);
  std::vector<std::pair<std::string, std::vector<std::byte>>> found;
  for (const auto& section : elf->fatbin_sections) {
    auto ranges = fb::section_containers(section, read);
    REQUIRE(ranges);
    for (const auto& range : *ranges) {
      if (range.size <= 16) continue;
      std::vector<std::byte> bytes(range.size);
      REQUIRE(read(range.offset, bytes));
      found.emplace_back(section.name, std::move(bytes));
    }
  }
  return found;
}

// Loads `image` through libjitcache on the fake sm_90 GPU, against `socket`.
jitcache_load_info load(const void* image, const std::string& socket) {
  jitcache_config config{};
  config.struct_size = sizeof config;
  config.socket_path = socket.c_str();
  config.quiet = 1;
  REQUIRE(jitcache_configure(&config) == 0);
  CUmodule module = nullptr;
  const CUresult result = jitcache_module_load_data(&module, image);
  jitcache_load_info info{};
  info.struct_size = sizeof info;
  REQUIRE(jitcache_last_load_info(&info) == 0);
  INFO("outcome " << jitcache_outcome_name(info.outcome) << ": " << info.reason);
  CHECK(result == CUDA_SUCCESS);
  if (module != nullptr) jitcache_module_unload(module);
  return info;
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE(
    "cli warm binaries: a PTX-only executable's fat binaries are compiled ahead of time, and a load of one is then a hit") {
  if (!have_fixtures()) return;
  const FakeDriver fake;
  REQUIRE(fake.set_device(90, 13000) == 0);
  TempDir dir;
  DaemonProcess daemon(dir);
  daemon.start();
  const std::string program = k_fixtures + "/ptx80_program";

  const ChildResult first = warm({program, "--arch", "sm_90", "--driver", k_fake_driver}, daemon.socket_path());
  CHECK(first.status == 0);
  // One container per translation unit, each holding compute_80 PTX only: both would be JIT-compiled
  // (the runtime's own container before them is empty). Containers are numbered by their place.
  CHECK(count_of(first.output, "compiled  " + program + " [.nv_fatbin #") == 2);
  CHECK(count_of(first.output, ": compute_80 PTX 9.0") == 2);
  CHECK_THAT(first.output, Catch::Contains("examined 1 files: 1 ELF binaries, 2 fat binaries (0 with a cubin sm_90 "
                                           "runs, 0 with nothing it can use)\n"));
  CHECK_THAT(first.output, Catch::EndsWith("compiled 2, already present 0, refused 0, failed 0, skipped 0 (of 2)\n"));

  const ChildResult again =
      warm({"--json", program, "--arch", "sm_90", "--driver", k_fake_driver}, daemon.socket_path());
  CHECK(again.status == 0);
  const Json json = Json::parse(again.output);
  CHECK(json["already_present"] == 2);
  CHECK(json["compiled"] == 0);
  CHECK(json["host_binaries"] == 1);
  CHECK(json["fat_binaries"] == 2);
  CHECK(json["files_examined"] == 1);

  // A program on that GPU loading these fat binaries finds what warm compiled: hits, same keys.
  const auto containers = containers_of(program);
  REQUIRE(containers.size() == 2);
  for (std::size_t i = 0; i < containers.size(); ++i) {
    const jitcache_load_info info = load(containers[i].second.data(), daemon.socket_path());
    CHECK(info.outcome == JITCACHE_OUTCOME_HIT);
    CHECK(std::string(info.arch) == "sm_90a");
    CHECK(json["items"][i]["key_id"] == std::string(info.key_id));
  }
}

TEST_CASE("cli warm binaries: relocatable device code in __nv_relfatbin is walked, and its PTX counted, not warmed") {
  if (!have_fixtures()) return;
  TempDir dir;
  DaemonProcess daemon(dir);
  daemon.start();
  // -rdc=true with PTX only: the program's own PTX (two containers) and the device runtime's
  // (cubins for many GPUs, sm_90 among them) wait in __nv_relfatbin for the link at start-up.
  const std::string program = k_fixtures + "/ptx80_rdc_program";
  std::size_t in_relfatbin = 0;
  for (const auto& [section, bytes] : containers_of(program)) in_relfatbin += section == "__nv_relfatbin" ? 1 : 0;
  REQUIRE(in_relfatbin == 3);

  const ChildResult run = warm({"--json", program, "--arch", "sm_90", "--driver", k_fake_driver}, daemon.socket_path());
  INFO(run.output << run.errors);
  CHECK(run.status == 0);  // nothing failed: there is nothing a module load would look up
  const Json json = Json::parse(run.output);
  CHECK(json["fat_binaries"] == 3);
  CHECK(json["relocatable_ptx"] == 2);
  CHECK(json["cubin_for_device"] == 1);
  CHECK(json["items"].empty());

  const ChildResult text = warm({program, "--arch", "sm_90", "--driver", k_fake_driver}, daemon.socket_path());
  CHECK_THAT(text.output, Catch::Contains(", 2 with relocatable PTX the program links when it starts: not warmed)\n"));
}

TEST_CASE("cli warm binaries: a library whose fat binary holds a cubin for the arch warms nothing") {
  if (!have_fixtures()) return;
  TempDir dir;
  DaemonProcess daemon(dir);
  daemon.start();
  const std::string library = k_fixtures + "/libsm90.so";

  const ChildResult sm90 = warm({library, "--arch", "sm_90", "--driver", k_fake_driver}, daemon.socket_path());
  CHECK(sm90.status == 0);
  // Its two translation units and the runtime's own container, each an sm_90 cubin.
  CHECK(sm90.output ==
        "examined 1 files: 1 ELF binaries, 3 fat binaries (3 with a cubin sm_90 runs, 0 with nothing it can use)\n"
        "compiled 0, already present 0, refused 0, failed 0, skipped 0 (of 0)\n");

  // On an older GPU the sm_90 cubins do not run and there is no PTX: nothing to warm either.
  const ChildResult sm80 =
      warm({"--json", library, "--arch", "sm_80", "--driver", k_fake_driver}, daemon.socket_path());
  CHECK(sm80.status == 0);
  const Json json = Json::parse(sm80.output);
  CHECK(json["no_image_for_device"] == 3);
  CHECK(json["cubin_for_device"] == 0);
  CHECK(json["items"].empty());
}

TEST_CASE(
    "cli warm binaries: a named program without device code is skipped, a damaged ELF fails, each with the reason") {
  TempDir dir;
  DaemonProcess daemon(dir);
  daemon.start();
  const ChildResult plain = warm({"/bin/sh", "--arch", "sm_90", "--driver", k_fake_driver}, daemon.socket_path());
  CHECK(plain.status == 0);
  CHECK_THAT(plain.output, Catch::StartsWith("skipped   /bin/sh: no CUDA fat binary (.nv_fatbin, __nv_relfatbin)"));

  std::string broken(64, '\0');
  broken.replace(0, 4,
                 "\x7f"
                 "ELF");
  broken[4] = 2;
  broken[5] = 1;
  broken[18] = 62;
  broken[45] = 1;  // e_shoff far past the end
  broken[58] = 64;
  broken[60] = 3;
  const std::string path = dir.file("broken.so");
  jitcache::testing::write_file(path, broken);
  const ChildResult damaged = warm({path, "--arch", "sm_90", "--driver", k_fake_driver}, daemon.socket_path());
  CHECK(damaged.status == 4);
  CHECK_THAT(damaged.output, Catch::Contains("failed    " + path + ": ELF file not understood: ELF section table"));
}

TEST_CASE(
    "cli warm binaries: a directory is searched through links and junk, each binary once, without reading the rest") {
  if (!have_fixtures()) return;
  TempDir dir;
  DaemonProcess daemon(dir);
  daemon.start();
  TempDir tree;
  fs::create_directories(tree.file("env/bin"));
  fs::create_directories(tree.file("env/lib/python3/site-packages/pkg"));
  fs::copy_file(k_fixtures + "/ptx80_program", tree.file("env/bin/app"));
  const std::string package = tree.file("env/lib/python3/site-packages/pkg");
  fs::copy_file(k_fixtures + "/libsm90.so", package + "/_ext.cpython-311-x86_64-linux-gnu.so");
  fs::create_symlink("_ext.cpython-311-x86_64-linux-gnu.so", package + "/_ext.so");  // the same file again
  fs::create_directory_symlink(tree.file("env"), package + "/loop");                 // a link back up the tree
  fs::create_directory_symlink(tree.file("env/lib"), tree.file("env/lib64"));        // a second way in
  fs::copy_file(JITCACHE_TEST_DATA_DIR "/small_kernel.ptx", package + "/kernel.ptx");
  jitcache::testing::write_file(package + "/__init__.py", "import os\n");
  jitcache::testing::write_file(package + "/empty", "");
  jitcache::testing::write_file(package + "/notes.txt",
                                "\x7f"
                                "EL not quite");
  std::string broken(64, '\0');
  broken.replace(0, 4,
                 "\x7f"
                 "ELF");
  broken[4] = 2;
  broken[5] = 1;
  broken[18] = 62;
  broken[45] = 1;
  jitcache::testing::write_file(package + "/broken.so", broken);  // a directory's damaged ELF: not ours to warm
  const auto cubin = jitcache::testing::make_cubin(jitcache::testing::CubinSpec{}, 3, 2048);
  jitcache::testing::write_file(package + "/kernel.bin", std::string(cubin.begin(), cubin.end()));  // GPU code
  REQUIRE(::mkfifo((package + "/pipe").c_str(), 0600) == 0);  // never opened: nothing writes to it

  const auto started = std::chrono::steady_clock::now();
  const ChildResult run =
      warm({"--json", tree.file("env"), "--arch", "sm_90", "--driver", k_fake_driver}, daemon.socket_path());
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(60));
  CHECK(run.status == 0);
  const Json json = Json::parse(run.output);
  CHECK(json["compiled"] == 3);  // the program's two fat binaries and the PTX file
  CHECK(json["failed"] == 0);
  CHECK(json["host_binaries"] == 2);
  CHECK(json["fat_binaries"] == 5);  // the program's two, the library's three
  CHECK(json["cubin_for_device"] == 3);
  // Every regular file met: app, the library (by two names), kernel.ptx, __init__.py, empty,
  // notes.txt, broken.so, kernel.bin; the lib64 link leads to the same directory, never walked twice.
  CHECK(json["files_examined"] == 9);
  std::vector<std::string> sources;
  for (const Json& item : json["items"]) sources.push_back(item["source"]);
  REQUIRE(sources.size() == 3);
  CHECK_THAT(sources[0], Catch::StartsWith(tree.file("env/bin/app") + " [.nv_fatbin #2: compute_80 PTX"));
  CHECK_THAT(sources[1], Catch::StartsWith(tree.file("env/bin/app") + " [.nv_fatbin #3: compute_80 PTX"));
  CHECK(sources[2] == package + "/kernel.ptx");
  CHECK(run.output.find("broken.so") == std::string::npos);
  CHECK(run.output.find("/loop/") == std::string::npos);
  CHECK(run.output.find("lib64") == std::string::npos);
}
