// The `jitcache` command line: parses the arguments, runs the chosen command and turns every
// outcome, including parse errors and unexpected exceptions, into an exit code (exit_codes.hpp).
// Thread safety: call once, from main.
#pragma once

namespace jitcache::client::cli {

int run_cli(int argc, char** argv);

}  // namespace jitcache::client::cli
