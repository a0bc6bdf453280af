/* jitcache: the command users run (docs/cli.md), a small front that depends on libc alone.
 *
 * Rationale: `jitcache run` stands in front of every process of a job, and a program linking
 * libstdc++, libcrypto, zstd, lz4 and xxHash pays about 2 ms of CPU in the dynamic loader before
 * main (docs/benchmarks.md "Start-up cost"). So the front handles the plain `run` itself
 * (client/front/front_run.h) and hands every other command line, unchanged, to the full CLI
 * (client/cli/), which answers it exactly as it always has: installed at
 * <libexecdir>/jitcache/jitcache-cli (the relative path from the bin directory is fixed at build
 * time, JITCACHE_CLI_FROM_EXEDIR), or beside the front as jitcache-cli (a build tree, a bundle). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <client/front/front_paths.h>
#include <client/front/front_run.h>

/* Exit status when the full CLI cannot be started: run_failed of client/cli/exit_codes.hpp, as
 * env(1) and nice(1) say that they themselves failed. */
enum { cannot_start_cli = 125 };

/* `text` with backslashes doubled and every byte that is not printable ASCII as \xHH: a path is
 * printed, never interpreted by the terminal. */
static void print_escaped(const char* text) {
  for (const unsigned char* at = (const unsigned char*)text; *at != '\0'; ++at) {
    if (*at == '\\') {
      fputs("\\\\", stderr);
    } else if (*at < 0x20 || *at >= 0x7f) {
      fprintf(stderr, "\\x%02x", *at);
    } else {
      fputc(*at, stderr);
    }
  }
}

int main(int argc, char** argv) {
  char* directory = front_own_directory();
  front_run(argc, argv, directory);

  const char* names[] = {
#ifdef JITCACHE_CLI_FROM_EXEDIR
      JITCACHE_CLI_FROM_EXEDIR,
#endif
      "jitcache-cli"};
  const size_t name_count = sizeof names / sizeof names[0];
  char* tried[sizeof names / sizeof names[0]] = {NULL};
  int errors[sizeof names / sizeof names[0]] = {0};
  for (size_t k = 0; directory != NULL && k < name_count; ++k) {
    tried[k] = front_join(directory, names[k]);
    if (tried[k] == NULL) {
      errors[k] = ENOMEM;
      continue;
    }
    execv(tried[k], argv);
    errors[k] = errno;
  }

  fputs("jitcache: cannot start the jitcache command-line tool (jitcache-cli): ", stderr);
  if (directory == NULL) {
    fputs("the directory of this executable is unknown (/proc/self/exe cannot be read)", stderr);
  } else {
    fputs("tried ", stderr);
    for (size_t k = 0; k < name_count; ++k) {
      if (k > 0) fputs(", ", stderr);
      print_escaped(tried[k] != NULL ? tried[k] : names[k]);
      fprintf(stderr, " (%s)", strerror(errors[k]));
    }
  }
  fputs("; the installation is incomplete\n", stderr);
  return cannot_start_cli;
}
