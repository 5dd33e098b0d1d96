/* server_proc.c: spawning and stopping the real server for tests (see server_proc.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "server_proc.h"

/* Servers still running when the test program exits (a failed assertion
 * skips the test's stop) are killed, so no test leaves a process behind. */
#define MAX_SERVERS 64
static pid_t running[MAX_SERVERS];

static void kill_leftovers(void) {
  for (int i = 0; i < MAX_SERVERS; i++)
    if (running[i] > 0) kill(running[i], SIGKILL), waitpid(running[i], NULL, 0);
}

static void track(pid_t pid, int add) {
  static int registered;
  if (!registered) registered = atexit(kill_leftovers) == 0;
  for (int i = 0; i < MAX_SERVERS; i++)
    if (add ? running[i] == 0 : running[i] == pid) {
      running[i] = add ? pid : 0;
      return;
    }
}

static const char *build_dir(void) {
  const char *dir = getenv("ANIM_BUILD_DIR");
  return dir && *dir ? dir : "build";
}

/* Spawns the server and reads its "listening on" line, and with
 * out_metrics_port its "metrics on" line too. */
static int spawn(anim_test_server_t *server, const char *log_name, const char *const *extra, int *out_metrics_port) {
  char binary[1024], log_path[1024];
  snprintf(binary, sizeof binary, "%s/animserver", build_dir());
  snprintf(log_path, sizeof log_path, "%s/tests/%s.server.log", build_dir(), log_name);
  const char *argv[64] = {binary, "--host", "127.0.0.1", "--port", "0"};
  int argc = 5;
  for (int i = 0; extra && extra[i] && argc < 62; i++) argv[argc++] = extra[i];
  argv[argc] = NULL;

  int out[2];
  if (pipe(out) < 0) return -1;
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    int log = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (log >= 0) dup2(log, STDERR_FILENO);
    close(out[0]);
    execv(binary, (char *const *)argv);
    fprintf(stderr, "exec %s: %s\n", binary, strerror(errno));
    _exit(127);
  }
  close(out[1]);
  FILE *stream = fdopen(out[0], "r");
  char line[256] = "";
  int ok = stream && fgets(line, sizeof line, stream) &&
           sscanf(line, "listening on %63[^:]:%d", server->host, &server->port) == 2;
  char metrics_host[64];
  if (ok && out_metrics_port)
    ok = fgets(line, sizeof line, stream) && sscanf(line, "metrics on %63[^:]:%d", metrics_host, out_metrics_port) == 2;
  if (stream) fclose(stream);
  server->pid = pid;
  track(pid, 1);
  if (!ok) {
    fprintf(stderr, "server did not start (see %s): %s\n", log_path, line);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return -1;
  }
  return 0;
}

int anim_test_server_start(anim_test_server_t *server, const char *log_name, const char *const *extra) {
  return spawn(server, log_name, extra, NULL);
}

int anim_test_server_start_metrics(anim_test_server_t *server, const char *log_name, const char *const *extra,
                                   int *out_metrics_port) {
  return spawn(server, log_name, extra, out_metrics_port);
}

int anim_test_server_stop(anim_test_server_t *server) {
  track(server->pid, 0);
  kill(server->pid, SIGTERM);
  for (int i = 0; i < 1000; i++) {
    int status;
    pid_t r = waitpid(server->pid, &status, WNOHANG);
    if (r == server->pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    struct timespec pause = {0, 10 * 1000 * 1000};
    nanosleep(&pause, NULL);
  }
  kill(server->pid, SIGKILL);
  waitpid(server->pid, NULL, 0);
  return -1;
}

int anim_test_server_wait(anim_test_server_t *server, int timeout_ms) {
  for (int waited = 0; waited <= timeout_ms; waited += 10) {
    int status;
    if (waitpid(server->pid, &status, WNOHANG) == server->pid) {
      track(server->pid, 0);
      if (WIFSIGNALED(status)) fprintf(stderr, "server killed by signal %d\n", WTERMSIG(status));
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    if (waited < timeout_ms) {
      struct timespec pause = {0, 10 * 1000 * 1000};
      nanosleep(&pause, NULL);
    }
  }
  return -2;
}

int anim_test_server_memory(const anim_test_server_t *server, uint64_t *out_rss_bytes, uint64_t *out_peak_bytes) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/status", (int)server->pid);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  unsigned long long kb;
  *out_rss_bytes = *out_peak_bytes = 0;
  while (fgets(line, sizeof line, f)) {
    if (sscanf(line, "VmRSS: %llu kB", &kb) == 1) *out_rss_bytes = kb * 1024u;
    if (sscanf(line, "VmHWM: %llu kB", &kb) == 1) *out_peak_bytes = kb * 1024u;
  }
  fclose(f);
  return *out_rss_bytes ? 0 : -1;
}

int anim_test_server_cpu(const anim_test_server_t *server, double *out_seconds) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)server->pid);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  /* Fields after the command (which may hold spaces), from its ')': state
   * is field 3, utime 14 and stime 15. */
  const char *p = strrchr(buf, ')');
  unsigned long long utime, stime;
  if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime) != 2) return -1;
  *out_seconds = (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
  return 0;
}

int anim_test_server_kill(anim_test_server_t *server) {
  track(server->pid, 0);
  if (kill(server->pid, SIGKILL) < 0) return -1;
  return waitpid(server->pid, NULL, 0) == server->pid ? 0 : -1;
}

int anim_test_free_port(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  struct sockaddr_in addr = {0};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = 0;
  if (bind(fd, (struct sockaddr *)&addr, sizeof addr) == 0 && getsockname(fd, (struct sockaddr *)&addr, &len) == 0)
    port = ntohs(addr.sin_port);
  close(fd);
  return port;
}

int anim_test_server_raw_connect(const anim_test_server_t *server) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in addr = {0};
  addr.sin_family = AF_INET;
  addr.sin_port = htons((uint16_t)server->port);
  inet_pton(AF_INET, server->host, &addr.sin_addr);
  if (connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0) {
    close(fd);
    return -1;
  }
  return fd;
}
