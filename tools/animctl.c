/*
 * animctl: command-line client of animserver, built on the client library.
 *
 *   animctl [--host H] [--port P] [--timeout MS] [--json] COMMAND [ARGS]
 *
 * One subcommand per request type; human-readable output by default, one
 * JSON object per result with --json. Exit status: 0 ok, 1 request failed,
 * 2 usage error.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "anim_client.h"

typedef struct {
  const char *host;
  int port;
  int timeout_ms;
  int json;
} options_t;

typedef int (*command_fn)(anim_client_t *client, const options_t *options, int argc, char **argv);

static void usage(FILE *out) {
  fprintf(out, "usage: animctl [--host H] [--port P] [--timeout MS] [--json] COMMAND [ARGS]\n\n"
               "commands:\n"
               "  hello                 handshake: protocol and server version, capabilities, limits\n"
               "  ping [--count N]      round trips, with their times\n\n"
               "options:\n"
               "  --host H       server address (default 127.0.0.1)\n"
               "  --port P       server port (default 7878)\n"
               "  --timeout MS   per-request timeout (default 5000)\n"
               "  --json         machine-readable output\n");
}

static int report_error(const char *what, int rc, anim_client_t *client) {
  const char *detail = client ? anim_client_last_error(client) : "";
  fprintf(stderr, "animctl: %s: %s (%s)%s%s\n", what, anim_strerror(rc), anim_err_name(rc), *detail ? ": " : "",
          detail);
  return 1;
}

static void print_json_string(const char *s) {
  putchar('"');
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') printf("\\%c", *s);
    else if ((unsigned char)*s < 0x20) printf("\\u%04x", *s);
    else putchar(*s);
  }
  putchar('"');
}

static int cmd_hello(anim_client_t *client, const options_t *o, int argc, char **argv) {
  anim_hello_info_t info;
  int rc = anim_client_hello(client, "animctl", &info, o->timeout_ms);
  if (rc) return report_error("hello", rc, client);
  if (o->json) {
    printf("{\"protocol_version\":%u,\"server_version\":", info.protocol_version);
    print_json_string(info.server_version);
    printf(",\"capabilities\":[");
    for (int i = 0; i < info.ncapabilities; i++) {
      if (i) putchar(',');
      print_json_string(info.capabilities[i]);
    }
    printf("],\"limits\":{\"max_frame_bytes\":%u,\"max_in_flight\":%u,\"max_batch\":%u,\"max_k\":%u,"
           "\"output_soft_limit_bytes\":%llu,\"output_hard_limit_bytes\":%llu},\"connection_id\":%llu}\n",
           info.max_frame_bytes, info.max_in_flight, info.max_batch, info.max_k,
           (unsigned long long)info.output_soft_limit, (unsigned long long)info.output_hard_limit,
           (unsigned long long)info.connection_id);
  } else {
    printf("server        animserver %s (protocol %u)\n", info.server_version, info.protocol_version);
    printf("connection    %llu\n", (unsigned long long)info.connection_id);
    printf("capabilities ");
    for (int i = 0; i < info.ncapabilities; i++) printf(" %s", info.capabilities[i]);
    printf("\nlimits        frame %u B, in flight %u, batch %u, k %u, output soft/hard %llu/%llu B\n",
           info.max_frame_bytes, info.max_in_flight, info.max_batch, info.max_k,
           (unsigned long long)info.output_soft_limit, (unsigned long long)info.output_hard_limit);
  }
  return 0;
}

static int cmd_ping(anim_client_t *client, const options_t *o, int argc, char **argv) {
  int count = 1;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--count") == 0 && i + 1 < argc) {
      count = atoi(argv[++i]);
      if (count < 1 || count > 1000000) {
        fprintf(stderr, "animctl: ping --count: 1..1000000\n");
        return 2;
      }
    } else {
      fprintf(stderr, "animctl: ping: unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  for (int i = 0; i < count; i++) {
    uint64_t rtt;
    int rc = anim_client_ping(client, "animctl", 7, &rtt, o->timeout_ms);
    if (rc) return report_error("ping", rc, client);
    if (o->json) printf("{\"seq\":%d,\"rtt_us\":%llu}\n", i, (unsigned long long)rtt);
    else printf("pong from %s:%d seq=%d time=%.3f ms\n", o->host, o->port, i, (double)rtt / 1000.0);
  }
  return 0;
}

static const struct {
  const char *name;
  command_fn run;
} commands[] = {{"hello", cmd_hello}, {"ping", cmd_ping}};

int main(int argc, char **argv) {
  options_t o = {"127.0.0.1", 7878, 5000, 0};
  static const struct option long_options[] = {{"host", required_argument, 0, 'h'},
                                               {"port", required_argument, 0, 'p'},
                                               {"timeout", required_argument, 0, 't'},
                                               {"json", no_argument, 0, 'j'},
                                               {"help", no_argument, 0, '?' + 256},
                                               {0, 0, 0, 0}};
  int opt;
  while ((opt = getopt_long(argc, argv, "+", long_options, NULL)) != -1) {
    switch (opt) {
    case 'h': o.host = optarg; break;
    case 'p': o.port = atoi(optarg); break;
    case 't': o.timeout_ms = atoi(optarg); break;
    case 'j': o.json = 1; break;
    case '?' + 256: usage(stdout); return 0;
    default: usage(stderr); return 2;
    }
  }
  if (optind >= argc || o.port <= 0 || o.port > 65535 || o.timeout_ms <= 0) {
    usage(stderr);
    return 2;
  }
  const char *name = argv[optind];
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
    if (strcmp(commands[i].name, name) != 0) continue;
    int err;
    anim_client_options_t copts = {o.timeout_ms, 0};
    anim_client_t *client = anim_client_connect(o.host, o.port, &copts, &err);
    if (!client) {
      fprintf(stderr, "animctl: cannot reach %s:%d: %s\n", o.host, o.port, anim_strerror(err));
      return 1;
    }
    int rc = commands[i].run(client, &o, argc - optind, argv + optind);
    anim_client_close(client);
    return rc;
  }
  fprintf(stderr, "animctl: unknown command %s\n", name);
  usage(stderr);
  return 2;
}
