/*
 * test_animdb.c: the animdb tool's messages (issue 11 point 9: "skeleton
 * differs from the first clip'sanimdb: ..."). Every failing command, run as
 * a user would (the real binary, $ANIM_BUILD_DIR/animdb), must print
 * "animdb: ..." lines only, each ended by a newline, and exit 1 or 2; the
 * same with stderr on a terminal, where a progress bar is drawn first.
 */
#include <fcntl.h>
#include <pty.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "shared_data.h"

static char dir[64] = "/tmp/animdb-cli-XXXXXX";
static char animdb[512];

static int setup(void **state) {
  const char *build = getenv("ANIM_BUILD_DIR") ? getenv("ANIM_BUILD_DIR") : "build";
  snprintf(animdb, sizeof animdb, "%s/animdb", build);
  if (!mkdtemp(dir)) return -1;
  char path[160];
  snprintf(path, sizeof path, "%s/broken.animdb", dir);
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  fputs("ANIMDB\r\n but not really", f);
  fclose(f);
  /* A BVH whose bones say nothing: no feet for the default schema. */
  snprintf(path, sizeof path, "%s/blob.bvh", dir);
  f = fopen(path, "w");
  if (!f) return -1;
  fputs("HIERARCHY\nROOT a\n{\n OFFSET 0 0 0\n CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"
        " JOINT b\n {\n  OFFSET 0 1 0\n  CHANNELS 3 Zrotation Xrotation Yrotation\n"
        "  End Site\n  {\n   OFFSET 0 1 0\n  }\n }\n}\n"
        "MOTION\nFrames: 3\nFrame Time: 0.1\n0 90 0 0 0 0 0 0 0\n1 90 0 0 0 0 0 0 0\n2 90 0 0 0 0 0 0 0\n",
        f);
  fclose(f);
  return 0;
}

static int teardown(void **state) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  return system(cmd) == 0 ? 0 : -1;
}

/* What a command wrote is whole lines, each a message ("animdb: ...") or a
 * progress bar ("\r..." redrawn in place), and no message begins inside
 * another line (".animdb: " is a file name's end, not a message). */
static void check_lines(const char *out, const char *what) {
  size_t len = strlen(out);
  if (len == 0) fail_msg("%s: printed nothing", what);
  if (out[len - 1] != '\n') fail_msg("%s: output does not end with a newline: \"%s\"", what, out);
  for (const char *line = out; *line; line = strchr(line, '\n') + 1) {
    const char *end = strchr(line, '\n');
    if (strncmp(line, "animdb: ", 8) != 0 && line[0] != '\r')
      fail_msg("%s: a line is neither a message nor a progress bar: \"%s\"", what, out);
    for (const char *p = line + 1; p < end; p++)
      if (!strncmp(p, "animdb: ", 8) && p[-1] != '.')
        fail_msg("%s: a message does not start its own line: \"%s\"", what, out);
  }
}

/* Runs args (a shell command line after the binary) with stderr and stdout
 * captured; on a pseudo-terminal when tty. Returns the exit status. */
static int run(const char *args, int tty, char *out, size_t size) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "exec %s %s", animdb, args);
  int fd;
  pid_t pid;
  int pipefd[2] = {-1, -1};
  if (tty) {
    pid = forkpty(&fd, NULL, NULL, NULL);
  } else {
    assert_int_equal(pipe(pipefd), 0);
    pid = fork();
    fd = pipefd[0];
  }
  assert_true(pid >= 0);
  if (pid == 0) {
    if (!tty) dup2(pipefd[1], 1), dup2(pipefd[1], 2), close(pipefd[0]), close(pipefd[1]);
    execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
    _exit(127);
  }
  if (!tty) close(pipefd[1]);
  size_t at = 0;
  for (;;) {
    ssize_t n = read(fd, out + at, size - 1 - at);
    if (n <= 0) break; /* EOF, or EIO on the pty once the child has gone */
    at += (size_t)n;
  }
  out[at] = '\0';
  close(fd);
  int status;
  waitpid(pid, &status, 0);
  /* A terminal turns "\n" into "\r\n": compare the text as the user reads it. */
  size_t w = 0;
  for (size_t r = 0; r < at; r++)
    if (!(out[r] == '\r' && out[r + 1] == '\n')) out[w++] = out[r];
  out[w] = '\0';
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void test_every_error_ends_its_line(void **state) {
  char mocap[1024], args[2048], out[65536];
  int have = anim_test_shared_path(mocap, sizeof mocap, "data/mocap");
  struct {
    const char *args;
    int status;
  } cases[] = {
      {"", 2},
      {"frobnicate", 2},
      {"build", 2},
      {"build -o /tmp/x.animdb --scale nope x.bvh", 2},
      {"build -o /tmp/x.animdb --bone knee=x x.bvh", 2},
      {"build -o /tmp/x.animdb /nonexistent/walk.bvh", 1},
      {"build -o /tmp/x.animdb DIR/broken.animdb", 1},
      {"build -o /tmp/x.animdb DIR/blob.bvh", 1},
      {"build -o /tmp/x.animdb --bone foot-left=nope DIR/blob.bvh", 1},
      {"info DIR/broken.animdb", 1},
      {"info /nonexistent.animdb", 1},
      {"search DIR/broken.animdb --frame 1", 1},
      /* Two skeletons: the message. */
      {"build -o /tmp/x.animdb MOCAP/games105/idle.bvh MOCAP/bandai-namco/dataset-1_walk_normal_002.bvh", 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    if (strstr(cases[i].args, "MOCAP") && !have) return;
    /* Substitute DIR and MOCAP. */
    const char *p = cases[i].args;
    size_t at = 0;
    while (*p && at < sizeof args - 1100) {
      if (!strncmp(p, "DIR", 3)) at += (size_t)snprintf(args + at, sizeof args - at, "%s", dir), p += 3;
      else if (!strncmp(p, "MOCAP", 5)) at += (size_t)snprintf(args + at, sizeof args - at, "%s", mocap), p += 5;
      else args[at++] = *p++;
    }
    args[at] = '\0';
    for (int tty = 0; tty < 2; tty++) {
      int status = run(args, tty, out, sizeof out);
      char what[2200];
      snprintf(what, sizeof what, "animdb %s%s", args, tty ? " (on a terminal)" : "");
      if (status != cases[i].status) fail_msg("%s: exit %d, expected %d: %s", what, status, cases[i].status, out);
      if (cases[i].status == 1) check_lines(out, what);
      else if (!strstr(out, "usage:")) fail_msg("%s: no usage: %s", what, out);
    }
    if (strstr(args, "idle.bvh")) assert_non_null(strstr(out, "skeleton differs from the first clip's (idle)"));
  }
}

/* A build that works but warns (one straight walk) also prints whole lines. */
static void test_warnings_end_their_lines(void **state) {
  char mocap[1024], args[1400], out[65536];
  if (!anim_test_shared_path(mocap, sizeof mocap, "data/mocap/cmu-motionbuilder")) return;
  snprintf(args, sizeof args, "build -o %s/w.animdb --scale 0.056444 %s 2>&1 >/dev/null", dir, mocap);
  for (int tty = 0; tty < 2; tty++) {
    assert_int_equal(run(args, tty, out, sizeof out), 0);
    check_lines(out, args);
    assert_non_null(strstr(out, "animdb: warning: feature term 5 (trajectory position) hardly varies"));
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_error_ends_its_line),
      cmocka_unit_test(test_warnings_end_their_lines),
  };
  return cmocka_run_group_tests_name("animdb", tests, setup, teardown);
}
