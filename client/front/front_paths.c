#include <client/front/front_paths.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char* front_concat(const char* left, char separator, const char* right) {
  const size_t a = strlen(left);
  const size_t b = strlen(right);
  const size_t gap = separator != '\0' ? 1 : 0;
  char* joined = malloc(a + gap + b + 1);
  if (joined == NULL) return NULL;
  memcpy(joined, left, a);
  if (gap != 0) joined[a] = separator;
  memcpy(joined + a + gap, right, b + 1);
  return joined;
}

char* front_join(const char* directory, const char* name) { return front_concat(directory, '/', name); }

char* front_absolute(const char* path) {
  if (path[0] == '\0' || path[0] == '/') return strdup(path);
  char* cwd = getcwd(NULL, 0);
  if (cwd == NULL) return strdup(path);
  /* path's operator/ adds a separator unless the left side ends in one (only "/" does). */
  const size_t n = strlen(cwd);
  char* joined = front_concat(cwd, n > 0 && cwd[n - 1] == '/' ? '\0' : '/', path);
  free(cwd);
  return joined;
}

/* lexically_normal of an absolute path (one that starts with '/'). */
static char* normal(const char* path) {
  const size_t n = strlen(path);
  /* libstdc++ keeps a path of separators alone as it is ("//" stays "//"). */
  if (strspn(path, "/") == n) return strdup(path);
  char* out = malloc(n + 2);
  size_t* marks = malloc((n + 1) * sizeof *marks); /* where each kept name's separator starts */
  if (out == NULL || marks == NULL) {
    free(out);
    free(marks);
    return NULL;
  }
  size_t length = 1;
  size_t depth = 0;
  int ends_in_directory = 0; /* the last element was empty, "." or ".." */
  out[0] = '/';
  const char* at = path;
  while (*at != '\0') {
    while (*at == '/') ++at;
    const char* end = at;
    while (*end != '\0' && *end != '/') ++end;
    const size_t size = (size_t)(end - at);
    if (size == 0) {
      ends_in_directory = 1;
    } else if (size == 1 && at[0] == '.') {
      ends_in_directory = 1;
    } else if (size == 2 && at[0] == '.' && at[1] == '.') {
      ends_in_directory = 1;
      if (depth > 0) length = marks[--depth]; /* "/.." is "/" */
    } else {
      ends_in_directory = 0;
      marks[depth++] = length;
      if (length > 1) out[length++] = '/';
      memcpy(out + length, at, size);
      length += size;
    }
    at = end;
  }
  if (ends_in_directory && depth > 0) out[length++] = '/';
  out[length] = '\0';
  free(marks);
  return out;
}

char* front_absolute_normal(const char* path) {
  char* full = front_absolute(path);
  if (full == NULL || full[0] != '/') return full; /* absolute() failed: the path as given */
  char* result = normal(full);
  free(full);
  return result;
}

char* front_own_directory(void) {
  size_t size = 256;
  for (;;) {
    char* buffer = malloc(size);
    if (buffer == NULL) return NULL;
    const ssize_t n = readlink("/proc/self/exe", buffer, size);
    if (n < 0) {
      free(buffer);
      return NULL;
    }
    if ((size_t)n < size) {
      buffer[n] = '\0';
      char* slash = strrchr(buffer, '/');
      if (slash == NULL) {
        free(buffer);
        return NULL;
      }
      slash[slash == buffer ? 1 : 0] = '\0'; /* parent_path of "/x" is "/" */
      return buffer;
    }
    free(buffer);
    size *= 2;
  }
}
