#include <client/front/front_run.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <client/front/front_paths.h>
#include <client/front/front_preload.h>

extern char** environ;

/* Takes `--socket S` or `--socket=S` at argv[*i] into *socket, advancing *i; 0 when argv[*i] is not
 * one (or lacks its value). */
static int take_socket(int argc, char** argv, int* i, const char** socket) {
  const char* word = argv[*i];
  if (strcmp(word, "--socket") == 0) {
    if (*i + 1 >= argc) return 0;
    *socket = argv[*i + 1];
    *i += 2;
    return 1;
  }
  if (strncmp(word, "--socket=", 9) == 0) {
    *socket = word + 9;
    *i += 1;
    return 1;
  }
  return 0;
}

/* "name=value", or NULL. */
static char* assignment(const char* name, const char* value) { return front_concat(name, '=', value); }

/* Puts `entry` ("NAME=...") into `env` (of *count entries, room for one more) as glibc's setenv
 * would: over the first entry of that name, else at the end. */
static void put(char** env, size_t* count, char* entry) {
  const size_t name_length = (size_t)(strchr(entry, '=') - entry) + 1;
  for (size_t k = 0; k < *count; ++k) {
    if (strncmp(env[k], entry, name_length) == 0) {
      env[k] = entry;
      return;
    }
  }
  env[(*count)++] = entry;
  env[*count] = NULL;
}

void front_run(int argc, char** argv, const char* own_directory) {
  const char* global_socket = "";
  int i = 1;
  while (i < argc && take_socket(argc, argv, &i, &global_socket)) {
  }
  if (i >= argc || strcmp(argv[i], "run") != 0) return;
  ++i;
  const char* run_socket = "";
  int quiet = 0;
  while (i < argc) {
    const char* word = argv[i];
    if (strcmp(word, "--") == 0) {
      ++i;
      break;
    }
    if (strcmp(word, "--quiet") == 0) {
      quiet = 1;
      ++i;
      continue;
    }
    if (take_socket(argc, argv, &i, &run_socket)) continue;
    if (word[0] == '-') return;
    break; /* the program: it and everything after it are the program's */
  }
  if (i >= argc) return;

  char* library = front_find_preload_library(own_directory);
  if (library == NULL) return;
  const char* current = getenv("LD_PRELOAD");
  char* preload = front_with_preload(current != NULL ? current : "", library);
  const char* socket = run_socket[0] != '\0' ? run_socket : global_socket;
  char* socket_path = socket[0] != '\0' ? front_absolute(socket) : NULL;

  size_t count = 0;
  while (environ[count] != NULL) ++count;
  char** env = malloc((count + 4) * sizeof *env);
  char* entries[3] = {NULL, NULL, NULL};
  int ready = env != NULL && preload != NULL && (socket[0] == '\0' || socket_path != NULL);
  if (ready) {
    memcpy(env, environ, (count + 1) * sizeof *env);
    entries[0] = assignment("LD_PRELOAD", preload);
    if (socket_path != NULL) entries[1] = assignment("JITCACHE_SOCKET", socket_path);
    if (quiet) entries[2] = assignment("JITCACHE_QUIET", "1");
    ready = entries[0] != NULL && (socket_path == NULL || entries[1] != NULL) && (!quiet || entries[2] != NULL);
  }
  if (ready) {
    for (int k = 0; k < 3; ++k) {
      if (entries[k] != NULL) put(env, &count, entries[k]);
    }
    execvpe(argv[i], argv + i, env);
  }
  /* Not started: the full CLI, with the caller's environment, says why. */
  for (int k = 0; k < 3; ++k) free(entries[k]);
  free(env);
  free(socket_path);
  free(preload);
  free(library);
}
