#include <client/cli/run_fast_path.hpp>

#include <string_view>

#include <client/cli/run_command.hpp>

namespace jitcache::client::cli {

namespace {

// Takes `--socket S` or `--socket=S` at argv[i] into `socket`, advancing i; false when argv[i] is
// not one (or lacks its value).
bool take_socket(int argc, char** argv, int& i, std::string& socket) {
  const std::string_view word = argv[i];
  if (word == "--socket") {
    if (i + 1 >= argc) return false;
    socket = argv[i + 1];
    i += 2;
    return true;
  }
  if (word.substr(0, 9) == "--socket=") {
    socket = std::string(word.substr(9));
    i += 1;
    return true;
  }
  return false;
}

}  // namespace

std::optional<ExitCode> run_without_parser(int argc, char** argv) {
  GlobalOptions global;
  int i = 1;
  while (i < argc && take_socket(argc, argv, i, global.socket_path)) {
  }
  if (i >= argc || std::string_view(argv[i]) != "run") return std::nullopt;
  ++i;
  RunOptions options;
  while (i < argc) {
    const std::string_view word = argv[i];
    if (word == "--") {
      ++i;
      break;
    }
    if (word == "--quiet") {
      options.quiet = true;
      ++i;
      continue;
    }
    if (take_socket(argc, argv, i, options.socket_path)) continue;
    if (!word.empty() && word[0] == '-') return std::nullopt;
    break;  // the program: it and everything after it are the program's
  }
  if (i >= argc) return std::nullopt;
  options.command.assign(argv + i, argv + argc);
  return run_program(options, global);
}

}  // namespace jitcache::client::cli
