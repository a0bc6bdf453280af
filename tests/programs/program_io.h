/* What the unmodified test programs share (tests/programs/README.md): reading an image file and
 * printing a driver call's result the same way on every run. They print only what does not change
 * between a cold and a cached run (results, kernel names), so two runs' outputs can be compared. */
#ifndef JITCACHE_TESTS_PROGRAMS_PROGRAM_IO_H
#define JITCACHE_TESTS_PROGRAMS_PROGRAM_IO_H

#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>

/* The whole file with a NUL after it (PTX must be a C string), or NULL. */
static inline char* read_image(const char* path, size_t* size) {
  FILE* file = fopen(path, "rb");
  if (file == NULL) return NULL;
  if (fseek(file, 0, SEEK_END) != 0) {
    fclose(file);
    return NULL;
  }
  long length = ftell(file);
  rewind(file);
  char* data = length >= 0 ? malloc((size_t)length + 1) : NULL;
  if (data == NULL || fread(data, 1, (size_t)length, file) != (size_t)length) {
    free(data);
    fclose(file);
    return NULL;
  }
  data[length] = '\0';
  fclose(file);
  if (size != NULL) *size = (size_t)length;
  return data;
}

static inline void print_result(const char* what, CUresult result) { printf("%s: %d\n", what, (int)result); }

#endif
