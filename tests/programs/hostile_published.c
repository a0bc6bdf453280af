/* Many loads of one module: against a warm cache each is a published hit (docs/transparent.md
 * "A daemon that hangs", "Published copies changed in place").
 *   hostile_published PTX KERNEL COUNT */
#include <tests/programs/hostile_common.h>

int main(int argc, char** argv) {
  if (argc != 4) return 2;
  char* base = read_image(argv[1], NULL);
  if (base == NULL || !start_driver()) return 3;
  const int count = atoi(argv[3]);
  int failures = 0;
  for (int i = 0; i < count; ++i) failures += load_and_unload(base, argv[2]) != CUDA_SUCCESS;
  printf("%d loads, %d failed\n", count, failures);
  return 0;
}
