/* Calls that misuse the driver API; jitcache must answer each as the driver does (docs/transparent.md
 * "Misuse"):
 *   jit_target PTX KERNEL    cuModuleLoadDataEx with CU_JIT_TARGET 12345 (no such CUjit_target), then 90
 *   unterminated PTX         PTX text with no NUL, ending where the mapping ends
 *   short_log PTX KERNEL     an info log whose declared size (4096) is larger than the buffer's (16):
 *                            prints what the buffer holds and the size the call reported */
#include <sys/mman.h>
#include <unistd.h>

#include <tests/programs/hostile_common.h>

static CUresult load_with_target(const char* ptx, unsigned target) {
  CUjit_option options[] = {CU_JIT_TARGET};
  void* values[] = {(void*)(size_t)target};
  CUmodule module = NULL;
  CUresult result = cuModuleLoadDataEx(&module, ptx, 1, options, values);
  if (module != NULL) cuModuleUnload(module);
  return result;
}

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  char* base = read_image(argv[2], NULL);
  if (base == NULL || !start_driver()) return 3;
  setvbuf(stdout, NULL, _IONBF, 0);
  if (strcmp(argv[1], "jit_target") == 0) {
    print_result("CU_JIT_TARGET 12345", load_with_target(base, 12345));
    print_result("CU_JIT_TARGET 90", load_with_target(base, 90));
    return 0;
  }
  if (strcmp(argv[1], "unterminated") == 0) {
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    char* pages = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (pages == MAP_FAILED || munmap(pages + page, page) != 0) return 4;
    size_t length = strlen(base);
    for (size_t i = 0; i < page; ++i) pages[i] = i < length ? base[i] : ' ';
    CUmodule module = NULL;
    print_result("cuModuleLoadData of PTX with no NUL", cuModuleLoadData(&module, pages));
    return 0;
  }
  if (strcmp(argv[1], "short_log") == 0 && argc == 4) {
    /* The declared size is a lie the driver survives: it writes only what it has to say. The
     * bytes after the 16 are a canary the program checks. */
    struct {
      char log[16];
      char canary[4080];
    } memory;
    memset(&memory, 'c', sizeof memory);
    memory.log[0] = 'x';
    CUjit_option options[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
    void* values[] = {memory.log, (void*)(size_t)4096};
    CUmodule module = NULL;
    print_result("cuModuleLoadDataEx", cuModuleLoadDataEx(&module, base, 2, options, values));
    int canary_intact = 1;
    for (size_t i = 0; i < sizeof memory.canary; ++i) canary_intact &= memory.canary[i] == 'c';
    printf("log holds %zu bytes, size slot %zu, canary %s\n", strnlen(memory.log, sizeof memory.log), (size_t)values[1],
           canary_intact ? "intact" : "overwritten");
    if (module != NULL) cuModuleUnload(module);
    return 0;
  }
  return 2;
}
