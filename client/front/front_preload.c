#include <client/front/front_preload.h>

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <client/front/front_paths.h>

/* The refusal() of preload_library.cpp, as a yes or no: a readable regular file whose path
 * LD_PRELOAD can hold as one entry. */
static int preloadable(const char* path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, R_OK) == 0 && strpbrk(path, ": ") == NULL;
}

static int same_file(const char* a, const char* b) {
  struct stat sa;
  struct stat sb;
  return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

char* front_find_preload_library(const char* own_directory) {
  const char* named = getenv("JITCACHE_PRELOAD_LIBRARY");
  if (named != NULL && *named != '\0') {
    char* path = front_absolute_normal(named);
    if (path != NULL && preloadable(path)) return path;
    free(path);
    return NULL;
  }
#ifdef JITCACHE_PRELOAD_FROM_EXEDIR
  if (own_directory != NULL && *own_directory != '\0') {
    char* relative = front_join(own_directory, JITCACHE_PRELOAD_FROM_EXEDIR);
    char* path = relative != NULL ? front_absolute_normal(relative) : NULL;
    free(relative);
    if (path != NULL && preloadable(path)) return path;
    free(path);
  }
#endif
#if defined(JITCACHE_PRELOAD_BUILD_PATH) && defined(JITCACHE_CLI_BUILD_DIR)
  /* The build tree's library, for the front of that same build tree alone. */
  if (own_directory != NULL && *own_directory != '\0' && same_file(own_directory, JITCACHE_CLI_BUILD_DIR) &&
      preloadable(JITCACHE_PRELOAD_BUILD_PATH)) {
    return strdup(JITCACHE_PRELOAD_BUILD_PATH);
  }
#endif
  return NULL;
}

char* front_with_preload(const char* current, const char* library) {
  const size_t library_length = strlen(library);
  char* result = malloc(library_length + strlen(current) + 2);
  if (result == NULL) return NULL;
  memcpy(result, library, library_length + 1);
  size_t length = library_length;
  const char* start = current;
  for (;;) {
    const size_t size = strcspn(start, ": ");
    if (size > 0) {
      char* entry = strndup(start, size);
      if (entry == NULL) {
        free(result);
        return NULL;
      }
      if (strcmp(entry, library) != 0 && !same_file(entry, library)) {
        result[length++] = ':';
        memcpy(result + length, entry, size + 1);
        length += size;
      }
      free(entry);
    }
    if (start[size] == '\0') break;
    start += size + 1;
  }
  return result;
}
