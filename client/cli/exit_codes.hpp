// The exit statuses of the jitcache CLI, one per kind of outcome a script may want to branch on
// (docs/cli.md "Exit codes"). Scripts depend on these numbers: never renumber or reuse one.
#pragma once

namespace jitcache::client::cli {

enum class ExitCode : int {
  ok = 0,
  not_found = 1,      // no entry for that key or key id (a miss, not a failure)
  usage = 2,          // bad command line: unknown command or option, bad arch, driver, options, key id
  unreachable = 3,    // no daemon answered: connect failed, timed out, or the connection closed
  daemon_failed = 4,  // the daemon answered with a refusal or failure, or sent something unusable
  local_io = 5,       // a local file could not be read or written
  damage_found = 6,   // `jitcache verify`: the database or some entries were damaged (entries removed)
  // `jitcache remote check`: a remote is not reachable, or not writable where this host signs, the
  // signing self-test failed, or there is no remote to check; `remote status`: a circuit breaker is
  // not closed, or the signing self-test failed.
  remote_failed = 7,
  // `jitcache doctor`: the worst finding was a warning (something works less well than it could),
  // or an error (something does not work: no daemon, a socket the client refuses, no disk space).
  doctor_warning = 8,
  doctor_error = 9,
  // `jitcache run` before the program starts, as env(1), nice(1) and timeout(1) number them; once
  // the program runs, the status is the program's own.
  run_failed = 125,         // run itself failed (no libjitcache-preload.so, the environment)
  cannot_execute = 126,     // the program was found but could not be executed
  program_not_found = 127,  // no such program
};

inline int to_int(ExitCode code) { return static_cast<int>(code); }

}  // namespace jitcache::client::cli
