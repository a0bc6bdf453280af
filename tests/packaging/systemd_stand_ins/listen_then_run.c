/* What systemd does with a socket unit while its service fails at every start: listens on a Unix
 * socket and never accepts, so connections sit in the backlog. Run as PID 1 of a new PID namespace
 * (unshare --pid --fork), it is what a client there sees as "pid 1 holds the socket".
 * Usage: listen_then_run SOCKET_PATH COMMAND [ARG...]   (exits with COMMAND's status) */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s SOCKET_PATH COMMAND [ARG...]\n", argv[0]);
    return 2;
  }
  struct sockaddr_un addr;
  memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  strncpy(addr.sun_path, argv[1], sizeof addr.sun_path - 1);
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0 || bind(fd, (struct sockaddr*)&addr, sizeof addr) != 0 || listen(fd, 16) != 0) {
    perror("listen_then_run: socket");
    return 2;
  }
  const pid_t child = fork();
  if (child == 0) {
    close(fd);
    execvp(argv[2], argv + 2);
    perror("listen_then_run: exec");
    _exit(127);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
