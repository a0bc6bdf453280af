/* A digest of a linked image for the link programs (tests/programs/README.md): they print it so
 * that two runs' outputs are equal only if the two images are byte for byte the same. */
#ifndef JITCACHE_TESTS_PROGRAMS_PROGRAM_HASH_H
#define JITCACHE_TESTS_PROGRAMS_PROGRAM_HASH_H

#include <stddef.h>
#include <stdint.h>

/* 64-bit FNV-1a: no adversary here, only a fingerprint to compare. */
static inline uint64_t image_fingerprint(const void* data, size_t size) {
  const unsigned char* bytes = (const unsigned char*)data;
  uint64_t hash = 14695981039346656037ull;
  for (size_t i = 0; i < size; ++i) {
    hash ^= bytes[i];
    hash *= 1099511628211ull;
  }
  return hash;
}

#endif
