/* (g) A program that compiles CUDA C++ with NVRTC, opened as CuPy, PyTorch and DeepGEMM open it:
 * dlopen("libnvrtc.so.<major>") (or NVRTC_LIBRARY) + dlsym. It creates the program from SOURCE
 * (read from a file; the program's name is the file's base name, or $NVRTC_PROGRAM_NAME) with one
 * in-memory header "memory_header.cuh" ("#define MEMORY_VALUE 7"), adds NAME_EXPRESSION unless it
 * is "-", compiles with the remaining arguments as options, and prints every answer NVRTC gives afterwards: each
 * result code, the log, each output's size and a fingerprint of its bytes, and the lowered name.
 * Two runs print the same only if NVRTC (or the cache) answered the same.
 * Usage: nvrtc_compile SOURCE NAME_EXPRESSION [OPTION...] */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tests/programs/program_hash.h>

typedef int (*create_t)(void**, const char*, const char*, int, const char* const*, const char* const*);
typedef int (*add_name_t)(void*, const char*);
typedef int (*compile_t)(void*, int, const char* const*);
typedef int (*size_query_t)(void*, size_t*);
typedef int (*bytes_t)(void*, char*);
typedef int (*lowered_t)(void*, const char*, const char**);
typedef int (*destroy_t)(void**);

static char* read_file(const char* path) {
  FILE* file = fopen(path, "rb");
  if (file == NULL) return NULL;
  fseek(file, 0, SEEK_END);
  const long size = ftell(file);
  fseek(file, 0, SEEK_SET);
  char* text = calloc((size_t)size + 1, 1);
  if (text != NULL && fread(text, 1, (size_t)size, file) != (size_t)size) text[0] = '\0';
  fclose(file);
  return text;
}

/* One output kind: "<what> size=<rc>,<size> bytes=<rc>,<fingerprint>". */
static void print_output(void* library, void* program, const char* what, const char* size_name,
                         const char* bytes_name) {
  size_query_t size_of = (size_query_t)dlsym(library, size_name);
  bytes_t bytes_of = (bytes_t)dlsym(library, bytes_name);
  if (size_of == NULL || bytes_of == NULL) {
    printf("%s absent\n", what);
    return;
  }
  size_t size = 0;
  const int size_rc = size_of(program, &size);
  char* bytes = calloc(size + 1, 1);
  const int bytes_rc = size_rc == 0 && bytes != NULL ? bytes_of(program, bytes) : -1;
  printf("%s size=%d,%zu bytes=%d,%016llx\n", what, size_rc, size, bytes_rc,
         (unsigned long long)(bytes_rc == 0 ? image_fingerprint(bytes, size) : 0));
  free(bytes);
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: nvrtc_compile SOURCE NAME_EXPRESSION [OPTION...]\n");
    return 2;
  }
  const char* file = getenv("NVRTC_LIBRARY") != NULL ? getenv("NVRTC_LIBRARY") : "libnvrtc.so.13";
  void* library = dlopen(file, RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) {
    fprintf(stderr, "cannot open %s: %s\n", file, dlerror());
    return 3;
  }
  create_t create = (create_t)dlsym(library, "nvrtcCreateProgram");
  add_name_t add_name = (add_name_t)dlsym(library, "nvrtcAddNameExpression");
  compile_t compile = (compile_t)dlsym(library, "nvrtcCompileProgram");
  size_query_t log_size = (size_query_t)dlsym(library, "nvrtcGetProgramLogSize");
  bytes_t log_of = (bytes_t)dlsym(library, "nvrtcGetProgramLog");
  lowered_t lowered = (lowered_t)dlsym(library, "nvrtcGetLoweredName");
  destroy_t destroy = (destroy_t)dlsym(library, "nvrtcDestroyProgram");
  if (!create || !add_name || !compile || !log_size || !log_of || !lowered || !destroy) return 4;

  char* source = read_file(argv[1]);
  if (source == NULL) return 5;
  const char* slash = strrchr(argv[1], '/');
  const char* header_texts[] = {"#define MEMORY_VALUE 7\n"};
  const char* header_names[] = {"memory_header.cuh"};
  void* program = NULL;
  /* NVRTC_PROGRAM_NAME names the program as CuPy does, by a path of its own choosing. */
  const char* program_name = getenv("NVRTC_PROGRAM_NAME") != NULL ? getenv("NVRTC_PROGRAM_NAME")
                             : slash != NULL                      ? slash + 1
                                                                  : argv[1];
  printf("create=%d\n", create(&program, source, program_name, 1, header_texts, header_names));
  const int named = strcmp(argv[2], "-") != 0;
  if (named) printf("add_name=%d\n", add_name(program, argv[2]));
  printf("compile=%d\n", compile(program, argc - 3, (const char* const*)(argv + 3)));

  size_t size = 0;
  const int size_rc = log_size(program, &size);
  char* log = calloc(size + 1, 1);
  const int log_rc = log != NULL ? log_of(program, log) : -1;
  printf("log size=%d,%zu rc=%d\n--- log\n%s\n--- end\n", size_rc, size, log_rc, log != NULL ? log : "");
  free(log);
  print_output(library, program, "ptx", "nvrtcGetPTXSize", "nvrtcGetPTX");
  print_output(library, program, "cubin", "nvrtcGetCUBINSize", "nvrtcGetCUBIN");
  print_output(library, program, "ltoir", "nvrtcGetLTOIRSize", "nvrtcGetLTOIR");
  print_output(library, program, "optixir", "nvrtcGetOptiXIRSize", "nvrtcGetOptiXIR");
  if (named) {
    const char* name = NULL;
    const int rc = lowered(program, argv[2], &name);
    printf("lowered=%d,%s\n", rc, rc == 0 && name != NULL ? name : "");
  }
  const char* unknown = NULL;
  printf("lowered_unknown=%d\n", lowered(program, "not_added<int>", &unknown));
  printf("destroy=%d\n", destroy(&program));
  free(source);
  return 0;
}
