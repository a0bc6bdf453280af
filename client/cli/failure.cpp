#include <client/cli/failure.hpp>

#include <iostream>
#include <string>

#include <client/cli/terminal_text.hpp>

namespace jitcache::client::cli {

ExitCode fail(ExitCode code, std::string_view message) {
  std::string line(message);
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  std::cerr << "jitcache: " << terminal_text(line) << '\n';
  return code;
}

ExitCode fail_local(const common::Error& error) {
  return fail(error.code == common::ErrorCode::io ? ExitCode::local_io : ExitCode::usage, error.message);
}

}  // namespace jitcache::client::cli
