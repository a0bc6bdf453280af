/* Loads while the program exits (docs/transparent.md "Exit"):
 *   threads PTX KERNEL       16 threads load in a loop while main returns
 *   slow_exit PTX KERNEL     the same, and an atexit handler registered before the first load
 *                            (so it runs after everything registered later) takes 50 ms: the
 *                            threads keep loading all through the rest of the exit
 *   atexit PTX KERNEL        an atexit handler registered before the first load loads 100 times
 *                            the module main loaded and once a new one
 *   destructor PTX KERNEL    a destructor of the program does the same
 *   constructor PTX KERNEL   a thread started by a constructor loads before main; main joins it */
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <tests/programs/hostile_common.h>

static char* g_base;
static const char* g_kernel;
static int g_destructor_load;
static pthread_t g_constructor_thread;
static int g_constructor_started;
static CUresult g_constructor_result = CUDA_ERROR_UNKNOWN;

static void* load_forever(void* unused) {
  (void)unused;
  for (;;) load_and_unload(g_base, g_kernel);
  return NULL;
}

/* Many loads of the module main loaded (published hits once the cache is warm: each adds a hit
 * note), then one of a new module (a miss). */
static void load_late(const char* who, int variant) {
  int failed = 0;
  for (int i = 0; i < 100; ++i) failed += load_and_unload(g_base, g_kernel) != CUDA_SUCCESS;
  char* ptx = ptx_variant(g_base, variant);
  printf("%s: %d of 100 loads failed, new module %d\n", who, failed, (int)load_and_unload(ptx, g_kernel));
  free(ptx);
}

static void load_at_exit(void) { load_late("atexit loads", 11); }

static void slow_cleanup(void) {
  const struct timespec cleaning_up = {0, 50 * 1000 * 1000};
  nanosleep(&cleaning_up, NULL);
}

__attribute__((destructor)) static void load_in_destructor(void) {
  if (g_destructor_load) load_late("destructor loads", 12);
}

static void* load_before_main(void* unused) {
  (void)unused;
  if (cuInit(0) == CUDA_SUCCESS) {
    char* ptx = ptx_variant(g_base, 13);
    g_constructor_result = load_and_unload(ptx, g_kernel);
    free(ptx);
  }
  return NULL;
}

/* Reads the image named on the command line before main (the kernel arguments of every mode). */
__attribute__((constructor)) static void start_loading_before_main(int argc, char** argv) {
  if (argc != 4 || strcmp(argv[1], "constructor") != 0) return;
  g_base = read_image(argv[2], NULL);
  g_kernel = argv[3];
  if (g_base != NULL) g_constructor_started = pthread_create(&g_constructor_thread, NULL, load_before_main, NULL) == 0;
}

int main(int argc, char** argv) {
  if (argc != 4) return 2;
  setvbuf(stdout, NULL, _IONBF, 0);
  if (strcmp(argv[1], "constructor") == 0) {
    if (!g_constructor_started) return 3;
    pthread_join(g_constructor_thread, NULL);
    print_result("constructor thread load", g_constructor_result);
    return 0;
  }
  g_base = read_image(argv[2], NULL);
  g_kernel = argv[3];
  if (g_base == NULL || !start_driver()) return 3;
  if (strcmp(argv[1], "atexit") == 0) {
    atexit(load_at_exit);
    print_result("main load", load_and_unload(g_base, g_kernel));
    return 0;
  }
  if (strcmp(argv[1], "destructor") == 0) {
    g_destructor_load = 1;
    print_result("main load", load_and_unload(g_base, g_kernel));
    return 0;
  }
  if (strcmp(argv[1], "slow_exit") == 0) atexit(slow_cleanup);
  if (strcmp(argv[1], "threads") == 0 || strcmp(argv[1], "slow_exit") == 0) {
    print_result("main load", load_and_unload(g_base, g_kernel));
    for (int i = 0; i < 16; ++i) {
      pthread_t thread;
      if (pthread_create(&thread, NULL, load_forever, NULL) != 0) return 4;
    }
    const struct timespec while_they_load = {0, 20 * 1000 * 1000};
    nanosleep(&while_they_load, NULL);
    puts("main returns while 16 threads load");
    return 0;
  }
  return 2;
}
