/*
 * server_proc.h: runs the real animserver binary for end-to-end tests, on an
 * ephemeral loopback port (or a fixed one: "--port N" in the extra arguments
 * overrides the default), and stops it with SIGTERM or kills it.
 *
 * The binary is $ANIM_BUILD_DIR/animserver (the test runner sets it; default
 * build/). Its stderr log goes to $ANIM_BUILD_DIR/tests/<name>.server.log.
 */
#ifndef ANIM_TEST_SERVER_PROC_H
#define ANIM_TEST_SERVER_PROC_H

#include <stdint.h>
#include <sys/types.h>

typedef struct {
  pid_t pid;
  int port;
  char host[64];
} anim_test_server_t;

/* Starts the server with extra arguments (NULL-terminated list, may be NULL)
 * and waits for its "listening on" line. 0, or -1 (the test should fail). */
int anim_test_server_start(anim_test_server_t *server, const char *log_name, const char *const *extra_args);

/* As anim_test_server_start, and then reads the second stdout line,
 * "metrics on HOST:PORT", into *out_metrics_port: extra_args must turn the
 * endpoint on ("--metrics-port", "0"). 0, or -1. */
int anim_test_server_start_metrics(anim_test_server_t *server, const char *log_name, const char *const *extra_args,
                                   int *out_metrics_port);

/* SIGTERM, then waits; returns the exit status (0 for a clean drain), or -1
 * if it died from a signal or did not stop within 10 s (then killed). */
int anim_test_server_stop(anim_test_server_t *server);

/* Waits up to timeout_ms (0: just looks) for a server that exits by itself
 * (a shutdown request), sending no signal: its exit status, -1 when a signal
 * killed it, -2 when it is still running. */
int anim_test_server_wait(anim_test_server_t *server, int timeout_ms);

/* The server process's resident memory now and its peak so far (VmRSS,
 * VmHWM). 0, or -1. */
int anim_test_server_memory(const anim_test_server_t *server, uint64_t *out_rss_bytes, uint64_t *out_peak_bytes);

/* The server process's CPU time so far, user + system, in seconds (the
 * kernel counts it in clock ticks, 10 ms here). 0, or -1. */
int anim_test_server_cpu(const anim_test_server_t *server, double *out_seconds);

/* SIGKILL, then waits: a crash, for tests of what clients do then. 0, or -1
 * if it was not running. */
int anim_test_server_kill(anim_test_server_t *server);

/* A loopback port free right now (bound to port 0, then closed), for a
 * server restarted on the same port; 0 on failure. */
int anim_test_free_port(void);

/* A raw loopback TCP socket to the server, blocking, for byte-level tests. */
int anim_test_server_raw_connect(const anim_test_server_t *server);

#endif
