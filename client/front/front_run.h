/* `jitcache run` in the front: the plain forms
 *   jitcache [--socket S] run [--socket S] [--quiet] [--] PROGRAM [ARGS...]
 * (also --socket=S), those client/cli/run_fast_path.hpp recognises, run with the environment
 * client/cli/command_run.cpp gives the program: LD_PRELOAD with the preload library first,
 * JITCACHE_SOCKET made absolute when a socket is named, JITCACHE_QUIET=1 with --quiet.
 *
 * Rationale: every way this can fail (no library, no memory, a program that cannot be started)
 * is answered by the full CLI, which runs the same steps again with the caller's environment and
 * reports what failed with its own words and exit code (docs/cli.md "run"); the front repeats none
 * of that text, so it can never say it differently. Thread safety: single-threaded, like main. */
#ifndef JITCACHE_CLIENT_FRONT_FRONT_RUN_H
#define JITCACHE_CLIENT_FRONT_FRONT_RUN_H

/* Replaces this process with the program, or returns (environment untouched) when the command line
 * is no plain `run` or anything failed: then the full CLI must answer. */
void front_run(int argc, char** argv, const char* own_directory);

#endif
