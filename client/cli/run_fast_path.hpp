// `jitcache run` before the command-line parser is built.
//
// Rationale: `jitcache run` stands in front of every process of a job, so what it does before the
// exec is paid by each (docs/benchmarks.md "Start-up cost"); building the parser of every command
// costs more than the run itself. The plain forms
//   jitcache [--socket S] run [--socket S] [--quiet] [--] PROGRAM [ARGS...]
// (also --socket=S) are recognised here and run at once; anything else (--help, --json, an option
// this does not know, no program) returns nullopt and goes to the full parser, which answers it as
// it always has. The front, `jitcache` (client/front/front_run.h), recognises the same forms and
// runs them without this process at all; it hands this one a plain `run` only when it could not
// start the program, so that the words and exit codes of every failure are these
// (tests/integration/test_cli_run.cpp compares the two). Thread safety: single-threaded, like the CLI.
#pragma once

#include <optional>

#include <client/cli/exit_codes.hpp>

namespace jitcache::client::cli {

std::optional<ExitCode> run_without_parser(int argc, char** argv);

}  // namespace jitcache::client::cli
