/* Processes and threads around loads (docs/transparent.md "Processes"):
 *   fork_loading PTX KERNEL     a thread loads new modules while main forks 16 children without exec;
 *                               each child writes to a pipe and leaves with _exit() (a child of fork()
 *                               may not use CUDA, nor run the driver's exit handlers, whose locks the
 *                               loading thread may have held), and the parent loads afterwards
 *   spawn PTX KERNEL DATA       load; vfork + exec, posix_spawn, and a child that calls daemon(),
 *                               loads, writes its load's result into DATA and exits with exit()
 *   signals PTX KERNEL          SIGALRM every millisecond (no SA_RESTART) during 24 loads
 *   threads64 PTX KERNEL        64 threads, 4 loads each over 8 modules */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <tests/programs/hostile_common.h>

extern char** environ;

static char* g_base;
static const char* g_kernel;
static volatile int g_stop;
static int g_failures;
static pthread_mutex_t g_failures_lock = PTHREAD_MUTEX_INITIALIZER;

static void count(CUresult result) {
  if (result == CUDA_SUCCESS) return;
  pthread_mutex_lock(&g_failures_lock);
  ++g_failures;
  pthread_mutex_unlock(&g_failures_lock);
}

static void* load_until_stopped(void* unused) {
  (void)unused;
  for (int n = 100; !g_stop; ++n) {
    char* ptx = ptx_variant(g_base, n % 6);
    count(load_and_unload(ptx, g_kernel));
    free(ptx);
  }
  return NULL;
}

static void* load_four(void* index) {
  for (int i = 0; i < 4; ++i) {
    char* ptx = ptx_variant(g_base, 200 + ((int)(size_t)index + i) % 8);
    count(load_and_unload(ptx, g_kernel));
    free(ptx);
  }
  return NULL;
}

static void on_alarm(int signal) { (void)signal; }

static int wait_status(pid_t child) {
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char** argv) {
  if (argc < 4) return 2;
  g_base = read_image(argv[2], NULL);
  g_kernel = argv[3];
  if (g_base == NULL || !start_driver()) return 3;
  setvbuf(stdout, NULL, _IONBF, 0);
  if (strcmp(argv[1], "fork_loading") == 0) {
    pthread_t loader;
    if (pthread_create(&loader, NULL, load_until_stopped, NULL) != 0) return 4;
    int children_ok = 0;
    for (int i = 0; i < 16; ++i) {
      int ends[2];
      if (pipe(ends) != 0) return 5;
      pid_t child = fork();
      if (child == 0) {
        close(ends[0]);
        _exit(write(ends[1], "x", 1) == 1 ? 0 : 1);
      }
      close(ends[1]);
      char byte = 0;
      children_ok += child > 0 && read(ends[0], &byte, 1) == 1 && wait_status(child) == 0;
      close(ends[0]);
    }
    g_stop = 1;
    pthread_join(loader, NULL);
    char* ptx = ptx_variant(g_base, 301);
    print_result("load after the forks", load_and_unload(ptx, g_kernel));
    free(ptx);
    printf("children that exited: %d of 16, failed loads in the parent: %d\n", children_ok, g_failures);
    return 0;
  }
  if (strcmp(argv[1], "spawn") == 0 && argc == 5) {
    print_result("load", load_and_unload(g_base, g_kernel));
    pid_t child = vfork();
    if (child == 0) {
      execl("/bin/true", "true", (char*)NULL);
      _exit(127);
    }
    printf("vfork + exec: %d\n", wait_status(child));
    char* true_argv[] = {"true", NULL};
    pid_t spawned = 0;
    if (posix_spawn(&spawned, "/bin/true", NULL, NULL, true_argv, environ) != 0) return 5;
    printf("posix_spawn: %d\n", wait_status(spawned));
    pid_t middle = fork();
    if (middle == 0) {
      if (daemon(1, 1) != 0) _exit(1);
      char* ptx = ptx_variant(g_base, 400);
      CUresult result = load_and_unload(ptx, g_kernel);
      char temporary[4200];
      snprintf(temporary, sizeof temporary, "%s.tmp", argv[4]);
      FILE* out = fopen(temporary, "w");
      if (out != NULL) {
        fprintf(out, "daemon() child load %d\n", (int)result);
        fclose(out);
        rename(temporary, argv[4]);
      }
      exit(0);
    }
    printf("daemon() parent: %d\n", wait_status(middle));
    struct stat st;
    for (int i = 0; i < 1000 && stat(argv[4], &st) != 0; ++i) usleep(10000);
    size_t size = 0;
    char* text = read_image(argv[4], &size);
    printf("%s", text != NULL ? text : "no result from the daemon() child\n");
    return 0;
  }
  if (strcmp(argv[1], "signals") == 0) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_alarm;
    sigaction(SIGALRM, &action, NULL);
    struct itimerval every_ms = {{0, 1000}, {0, 1000}};
    setitimer(ITIMER_REAL, &every_ms, NULL);
    for (int i = 0; i < 24; ++i) {
      char* ptx = ptx_variant(g_base, 500 + i % 4);
      count(load_and_unload(ptx, g_kernel));
      free(ptx);
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    printf("failed loads under SIGALRM every millisecond: %d\n", g_failures);
    return 0;
  }
  if (strcmp(argv[1], "threads64") == 0) {
    pthread_t threads[64];
    for (int i = 0; i < 64; ++i) {
      if (pthread_create(&threads[i], NULL, load_four, (void*)(size_t)i) != 0) return 4;
    }
    for (int i = 0; i < 64; ++i) pthread_join(threads[i], NULL);
    printf("failed loads in 64 threads: %d\n", g_failures);
    return 0;
  }
  return 2;
}
