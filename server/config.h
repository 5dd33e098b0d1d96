/*
 * config.h: the server's settings, their defaults and the command line.
 *
 * Validity rules (srv_config_validate):
 *  1. every number within its row's bounds in options.h (port 0..65535,
 *     max-frame-bytes 64..256 MiB, tick-rate 1..1000 Hz, metrics-port -1
 *     (none) or 0..65535, ...);
 *  2. output_soft_limit <= output_hard_limit;
 *  3. decode_budget_bytes >= max_frame_bytes (a frame must be decodable);
 *  4. stream_soft_limit <= output_hard_limit;
 *  5. protected mode: a host other than a loopback address (127.0.0.0/8,
 *     ::1, localhost) needs an auth token (as Redis refuses to serve the
 *     network without a password);
 *  6. tokens: at most 127 printable bytes, no spaces (checked on parsing).
 *
 * Every option's name, default, bounds, help, reload rule and example line
 * come from one table, options.h; the rules above that join two options
 * stay here.
 *
 * A config file (--config FILE) holds the same settings, one per line as
 * "name value" or "name = value" with the long flag's name ("port 7878",
 * "no-default-db"); '#' starts a comment. The file is read first, so flags on
 * the command line override it.
 *
 * What it does not: apply settings to a running server (reload.h does, for those that can change).
 */
#ifndef SRV_CONFIG_H
#define SRV_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "log.h"

#define SRV_MAX_PRELOAD 16

typedef struct {
  char host[256];
  int port;
  uint32_t max_frame_bytes;     /* largest request frame accepted */
  size_t decode_budget_bytes;   /* memory one request's decode may allocate */
  uint32_t max_connections;
  uint32_t max_in_flight;       /* requests per connection in flight at once */
  uint32_t max_batch;           /* queries per batch request */
  uint32_t max_pose_frames;     /* frames per pose request */
  uint32_t max_ids_per_request; /* characters, placements or inputs in one request */
  size_t max_output_memory;     /* output queued or held for all connections; 0: no limit */
  size_t output_soft_limit;     /* queued output at which reading pauses */
  size_t output_hard_limit;     /* queued output at which the connection is closed */
  double tick_rate;             /* character ticks per second */
  int fixed_step;               /* 1: every deadline served in turn, dt one period (scheduler.h) */
  uint32_t max_characters;      /* characters on the server */
  uint32_t max_characters_per_connection;
  double max_history_seconds;   /* longest character history (set_history) */
  size_t max_history_memory;    /* bytes of all characters' histories; 0: no limit */
  size_t max_history_memory_per_connection; /* bytes of one connection's characters' histories; 0: no limit */
  size_t stream_soft_limit;     /* queued output above which pose frames are replaced (latest wins) */
  double stream_soft_seconds;   /* above the stream soft limit this long: the subscriber is closed */
  uint32_t lod_search_scale;    /* periodic searches this many times rarer for characters not streamed at full rate */
  srv_log_level_t log_level;
  char auth_token[128];         /* "" : no authentication (loopback only) */
  char admin_token[128];        /* "" : admin requests need the auth token only */
  char metrics_host[64];
  int metrics_port;             /* -1: no metrics endpoint; 0: ephemeral */
  int reuseport;                /* SO_REUSEPORT: several instances on one port */
  int pool_nice;                /* the thread pool's threads run this much nicer than the loop thread (0..19) */
  double idle_timeout;          /* s without a request before a connection is closed; 0: never */
  char config_path[1024];       /* --config, for reloads on SIGHUP; "" when none */
  int max_databases;            /* loaded at once, 1..SRV_REGISTRY_MAX (64) */
  size_t max_database_memory;   /* bytes of all databases (poses, features, indexes); 0: no limit */
  size_t max_graph_memory;      /* bytes of motion graphs kept and a build's estimated peak; 0: no limit */
  char data_dir[1024];          /* databases are loaded by name from here only */
  int default_database;         /* build and serve the procedural "default" database */
  char lmm_dir[1024];           /* --lmm DIR: learned-motion-matching networks; "" none */
  char lmm_default_dir[1024];   /* --lmm-default DIR: networks trained on the default database; "" none */
  int npreload;                 /* --db NAME: loaded from data_dir at startup */
  char preload[SRV_MAX_PRELOAD][64];
} srv_config_t;

void srv_config_default(srv_config_t *config);
int srv_config_validate(const srv_config_t *config, char *err, int errlen);

/* Parses argv into config (starting from its current values), the config
 * file named by --config first. Returns 0, 1 when --help, --version or
 * --example-config was printed (exit 0), or ANIM_EINVAL with a message in
 * err naming the flag (exit 2; a file's errors name file and line). */
int srv_config_parse_args(srv_config_t *config, int argc, char **argv, char *err, int errlen);
void srv_config_print_help(const char *program);
/* deploy/animserver.conf as options.h describes it: every option with its
 * help, defaults on active lines. 0, or ANIM_EIO when out fails. */
int srv_config_write_example(FILE *out);

/* 1 when host is a loopback address or name. */
int srv_config_host_is_loopback(const char *host);

#endif
