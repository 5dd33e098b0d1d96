/* config.c: defaults, validation and command-line parsing of server settings. */
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "config.h"

void srv_config_default(srv_config_t *config) {
  memset(config, 0, sizeof *config);
  snprintf(config->host, sizeof config->host, "127.0.0.1");
  config->port = SRV_DEFAULT_PORT;
  config->max_frame_bytes = 4u << 20;
  config->decode_budget_bytes = 16u << 20;
  config->max_connections = 10000;
  config->max_in_flight = 256;
  config->max_batch = 4096;
  config->max_pose_frames = 10000;
  config->max_ids_per_request = 100000;
  config->max_output_memory = (size_t)1 << 30;
  config->pool_nice = 5;
  config->output_soft_limit = 8u << 20;
  config->output_hard_limit = 64u << 20;
  config->tick_rate = 60.0;
  config->max_characters = 100000;
  config->max_characters_per_connection = 20000;
  config->stream_soft_limit = 1u << 20;
  config->stream_soft_seconds = 10.0;
  config->log_level = SRV_LOG_INFO;
  snprintf(config->metrics_host, sizeof config->metrics_host, "127.0.0.1");
  config->metrics_port = -1;
  config->max_databases = 64;
  snprintf(config->data_dir, sizeof config->data_dir, "data");
  config->default_database = 1;
}

int srv_config_validate(const srv_config_t *c, char *err, int errlen) {
  if (c->port < 0 || c->port > 65535) {
    snprintf(err, errlen, "--port %d: must be 0..65535", c->port);
    return ANIM_EINVAL;
  }
  if (c->max_frame_bytes < 64 || c->max_frame_bytes > (256u << 20)) {
    snprintf(err, errlen, "--max-frame-bytes %u: must be 64..268435456", c->max_frame_bytes);
    return ANIM_EINVAL;
  }
  if (c->max_connections < 1 || c->max_in_flight < 1 || c->max_batch < 1) {
    snprintf(err, errlen, "--max-connections, --max-in-flight and --max-batch must be >= 1");
    return ANIM_EINVAL;
  }
  if (c->output_soft_limit == 0 || c->output_soft_limit > c->output_hard_limit) {
    snprintf(err, errlen, "output limits: need 0 < soft (%zu) <= hard (%zu)", c->output_soft_limit,
             c->output_hard_limit);
    return ANIM_EINVAL;
  }
  if (c->decode_budget_bytes < c->max_frame_bytes) {
    snprintf(err, errlen, "--decode-budget-bytes must be >= --max-frame-bytes");
    return ANIM_EINVAL;
  }
  if (!(c->tick_rate >= 1.0 && c->tick_rate <= 1000.0) || c->max_characters < 1 ||
      c->max_characters_per_connection < 1) {
    snprintf(err, errlen, "--tick-rate must be 1..1000 Hz, --max-characters and --max-characters-per-connection >= 1");
    return ANIM_EINVAL;
  }
  if (c->stream_soft_limit == 0 || c->stream_soft_limit > c->output_hard_limit || !(c->stream_soft_seconds > 0)) {
    snprintf(err, errlen, "stream limits: need 0 < --stream-soft-limit (%zu) <= --output-hard-limit (%zu) and "
             "--stream-soft-seconds > 0", c->stream_soft_limit, c->output_hard_limit);
    return ANIM_EINVAL;
  }
  if (!srv_config_host_is_loopback(c->host) && !c->auth_token[0]) {
    snprintf(err, errlen, "--host %s is not a loopback address: protected mode refuses to serve it without "
             "--auth-token (or --auth-token-file)", c->host);
    return ANIM_EINVAL;
  }
  if (c->metrics_port < -1 || c->metrics_port > 65535 || !(c->idle_timeout >= 0)) {
    snprintf(err, errlen, "--metrics-port must be 0..65535, --idle-timeout >= 0");
    return ANIM_EINVAL;
  }
  return 0;
}

int srv_config_host_is_loopback(const char *host) {
  return !strncmp(host, "127.", 4) || !strcmp(host, "::1") || !strcmp(host, "localhost");
}

void srv_config_print_help(const char *program) {
  srv_config_t d;
  srv_config_default(&d);
  printf("usage: %s [options]\n\n"
         "Serves motion databases, motion-matching search and pose streams over TCP.\n\n"
         "  --host ADDR              listen address (default %s)\n"
         "  --port N                 listen port, 0 for an ephemeral one (default %d)\n"
         "  --data-dir DIR           databases are loaded by name from DIR only (default %s)\n"
         "  --db NAME                load DIR/NAME.animdb at startup (repeatable, up to 16)\n"
         "  --no-default-db          do not build the embedded procedural \"default\" database\n"
         "  --lmm DIR                load DIR/{projector,stepper,decompressor}.bin: learned characters\n"
         "                           (MODE_LEARNED) on the database \"lmm\" of their skeleton\n"
         "  --max-frame-bytes N      largest request frame (default %u)\n"
         "  --decode-budget-bytes N  memory one request's decode may use (default %zu)\n"
         "  --max-connections N      simultaneous connections (default %u)\n"
         "  --max-in-flight N        requests in flight per connection (default %u)\n"
         "  --max-batch N            queries per batch request (default %u)\n"
         "  --max-pose-frames N      frames per pose request (default %u)\n"
         "  --output-soft-limit N    queued output bytes at which reading pauses (default %zu)\n"
         "  --output-hard-limit N    queued output bytes at which a connection is closed (default %zu)\n"
         "  --tick-rate HZ           character ticks per second (default %g)\n"
         "  --max-characters N       characters on the server (default %u)\n"
         "  --max-characters-per-connection N  (default %u)\n"
         "  --stream-soft-limit N    queued bytes above which pose frames are replaced, newest wins (default %zu)\n"
         "  --stream-soft-seconds S  a subscriber above the stream soft limit this long is closed (default %g)\n"
         "  --config FILE            settings from FILE (\"name value\" lines, flag names), flags override\n"
         "  --auth-token T           clients must present T in hello (required off loopback)\n"
         "  --auth-token-file F      the auth token from the first line of F (keeps it out of ps)\n"
         "  --admin-token T          load, reload and unload need T (default: the auth token)\n"
         "  --admin-token-file F\n"
         "  --metrics-port N         Prometheus metrics and readiness over HTTP on N (default off)\n"
         "  --metrics-host ADDR      metrics listen address (default 127.0.0.1)\n"
         "  --reuseport              SO_REUSEPORT: several instances share one port\n"
         "  --idle-timeout S         close connections idle for S seconds (default 0: never)\n"
         "  --max-databases N        databases loaded at once, 1..64 (default 64)\n"
         "  --max-database-memory N  bytes all databases may take (default 0: no limit)\n"
         "  --max-ids N              characters, placements or inputs in one request (default 100000)\n"
         "  --max-output-memory N    output bytes queued or held for all connections together; above it\n"
         "                           slow subscribers are closed (default 1073741824; 0: no limit)\n"
         "  --pool-nice N            the thread pool's nice value above the loop thread's, 0..19 (default 5),\n"
         "                           so the loop (requests, stream writes) does not wait behind the tick's jobs\n"
         "  --log-level LEVEL        debug, info, warn, error (default info)\n"
         "  --version                print the version and exit\n"
         "  --help                   this text\n",
         program, d.host, d.port, d.data_dir, d.max_frame_bytes, d.decode_budget_bytes, d.max_connections,
         d.max_in_flight, d.max_batch, d.max_pose_frames, d.output_soft_limit, d.output_hard_limit, d.tick_rate,
         d.max_characters, d.max_characters_per_connection, d.stream_soft_limit, d.stream_soft_seconds);
}

static int parse_u64(const char *flag, const char *text, uint64_t min, uint64_t max, uint64_t *out,
                     char *err, int errlen) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 10);
  if (errno || end == text || *end || text[0] == '-' || v < min || v > max) {
    snprintf(err, errlen, "%s %s: expected a whole number in %llu..%llu", flag, text,
             (unsigned long long)min, (unsigned long long)max);
    return ANIM_EINVAL;
  }
  *out = v;
  return 0;
}

enum { OPT_HOST = 256, OPT_PORT, OPT_DATA_DIR, OPT_MAX_FRAME, OPT_BUDGET, OPT_MAX_CONN, OPT_IN_FLIGHT,
       OPT_BATCH, OPT_SOFT, OPT_HARD, OPT_LOG, OPT_VERSION, OPT_HELP, OPT_DB, OPT_NO_DEFAULT, OPT_POSE,
       OPT_TICK_RATE, OPT_MAX_CHARS, OPT_MAX_CHARS_CONN, OPT_STREAM_SOFT, OPT_STREAM_SECONDS,
       OPT_CONFIG, OPT_AUTH, OPT_AUTH_FILE, OPT_ADMIN, OPT_ADMIN_FILE, OPT_METRICS_PORT, OPT_METRICS_HOST,
       OPT_REUSEPORT, OPT_IDLE, OPT_MAX_DBS, OPT_MAX_DB_MEMORY, OPT_MAX_IDS, OPT_MAX_OUTPUT, OPT_LMM, OPT_POOL_NICE };

/* A token: 1..127 printable bytes without spaces. */
static int set_token(char *out, size_t size, const char *flag, const char *value, char *err, int errlen) {
  size_t n = strlen(value);
  if (n == 0 || n >= size) {
    snprintf(err, errlen, "%s: 1..%zu bytes", flag, size - 1);
    return ANIM_EINVAL;
  }
  for (size_t i = 0; i < n; i++)
    if (value[i] <= ' ' || value[i] > '~') {
      snprintf(err, errlen, "%s: printable bytes without spaces only", flag);
      return ANIM_EINVAL;
    }
  memcpy(out, value, n + 1);
  return 0;
}

/* A token from the first line of a file. */
static int read_token(char *out, size_t size, const char *flag, const char *path, char *err, int errlen) {
  char line[256] = "";
  FILE *f = fopen(path, "r");
  if (!f || !fgets(line, sizeof line, f)) {
    snprintf(err, errlen, "%s %s: %s", flag, path, f ? "empty" : strerror(errno));
    if (f) fclose(f);
    return ANIM_EINVAL;
  }
  fclose(f);
  line[strcspn(line, "\r\n")] = '\0';
  return set_token(out, size, flag, line, err, errlen);
}

static int parse_double(const char *flag, const char *text, double min, double max, double *out, char *err,
                        int errlen) {
  char *end;
  errno = 0;
  double v = strtod(text, &end);
  if (errno || end == text || *end || !(v >= min && v <= max)) {
    snprintf(err, errlen, "%s %s: expected a number in %g..%g", flag, text, min, max);
    return ANIM_EINVAL;
  }
  *out = v;
  return 0;
}

/* The numeric options: flag (without its dashes), range, and the field they
 * set (an int or uint32_t, a size_t, or a double; whole numbers for all but
 * doubles). One table, so every one is parsed, range-checked and stored the
 * same way. */
typedef struct {
  int opt;
  const char *name;
  double min, max;
  size_t offset, size;
  int real; /* a double field: any number in range */
} number_option_t;

#define FIELD_SIZE(FIELD) sizeof(((srv_config_t *)0)->FIELD)
/* A field of 4 or 8 bytes, checked when compiling (an array of -1 bytes
 * otherwise): set_number stores those two sizes only. */
#define STORABLE_SIZE(FIELD) \
  (FIELD_SIZE(FIELD) + 0 * sizeof(char[FIELD_SIZE(FIELD) == 4 || FIELD_SIZE(FIELD) == 8 ? 1 : -1]))
#define NUMBER(OPT, NAME, MIN, MAX, FIELD)                                                               \
  {OPT, NAME, (double)(MIN), (double)(MAX), offsetof(srv_config_t, FIELD), STORABLE_SIZE(FIELD), \
   _Generic(((srv_config_t *)0)->FIELD, double: 1, default: 0)}
static const number_option_t number_options[] = {
    NUMBER(OPT_PORT, "port", 0, 65535, port),
    NUMBER(OPT_MAX_FRAME, "max-frame-bytes", 64, 256u << 20, max_frame_bytes),
    NUMBER(OPT_BUDGET, "decode-budget-bytes", 64, (uint64_t)1 << 34, decode_budget_bytes),
    NUMBER(OPT_MAX_CONN, "max-connections", 1, 1000000, max_connections),
    NUMBER(OPT_IN_FLIGHT, "max-in-flight", 1, 1000000, max_in_flight),
    NUMBER(OPT_BATCH, "max-batch", 1, 1000000, max_batch),
    NUMBER(OPT_SOFT, "output-soft-limit", 1, (uint64_t)1 << 40, output_soft_limit),
    NUMBER(OPT_HARD, "output-hard-limit", 1, (uint64_t)1 << 40, output_hard_limit),
    NUMBER(OPT_POSE, "max-pose-frames", 1, 1000000, max_pose_frames),
    NUMBER(OPT_TICK_RATE, "tick-rate", 1.0, 1000.0, tick_rate),
    NUMBER(OPT_MAX_CHARS, "max-characters", 1, 10000000, max_characters),
    NUMBER(OPT_MAX_CHARS_CONN, "max-characters-per-connection", 1, 10000000, max_characters_per_connection),
    NUMBER(OPT_STREAM_SOFT, "stream-soft-limit", 1, (uint64_t)1 << 40, stream_soft_limit),
    NUMBER(OPT_STREAM_SECONDS, "stream-soft-seconds", 0.001, 86400.0, stream_soft_seconds),
    NUMBER(OPT_METRICS_PORT, "metrics-port", 0, 65535, metrics_port),
    NUMBER(OPT_IDLE, "idle-timeout", 0.0, 86400.0 * 365, idle_timeout),
    NUMBER(OPT_MAX_DBS, "max-databases", 1, 64, max_databases),
    NUMBER(OPT_MAX_DB_MEMORY, "max-database-memory", 0, (uint64_t)1 << 46, max_database_memory),
    NUMBER(OPT_MAX_IDS, "max-ids", 1, 10000000, max_ids_per_request),
    NUMBER(OPT_POOL_NICE, "pool-nice", 0, 19, pool_nice),
    NUMBER(OPT_MAX_OUTPUT, "max-output-memory", 0, (uint64_t)1 << 46, max_output_memory),
};
#undef NUMBER
#undef STORABLE_SIZE
#undef FIELD_SIZE

static const number_option_t *number_option(int opt) {
  for (size_t i = 0; i < sizeof number_options / sizeof number_options[0]; i++)
    if (number_options[i].opt == opt) return &number_options[i];
  return NULL;
}

/* Parses text for o and stores it in c's field (the ranges are all
 * non-negative, so an int field takes a uint32_t's bits). */
static int set_number(srv_config_t *c, const number_option_t *o, const char *text, char *err, int errlen) {
  char flag[64];
  snprintf(flag, sizeof flag, "--%s", o->name);
  char *field = (char *)c + o->offset;
  if (o->real) return parse_double(flag, text, o->min, o->max, (double *)(void *)field, err, errlen);
  uint64_t v;
  int rc = parse_u64(flag, text, (uint64_t)o->min, (uint64_t)o->max, &v, err, errlen);
  if (rc) return rc;
  if (o->size == sizeof(uint64_t)) {
    memcpy(field, &v, sizeof v);
  } else {
    uint32_t narrow = (uint32_t)v;
    memcpy(field, &narrow, sizeof narrow);
  }
  return 0;
}

/* One pass of getopt over argv (the command line, or one line of a file). */
static int apply_options(srv_config_t *c, int argc, char **argv, int *stream_soft_given, char *err, int errlen) {
  static const struct option options[] = {
      {"host", required_argument, 0, OPT_HOST},
      {"port", required_argument, 0, OPT_PORT},
      {"data-dir", required_argument, 0, OPT_DATA_DIR},
      {"max-frame-bytes", required_argument, 0, OPT_MAX_FRAME},
      {"decode-budget-bytes", required_argument, 0, OPT_BUDGET},
      {"max-connections", required_argument, 0, OPT_MAX_CONN},
      {"max-in-flight", required_argument, 0, OPT_IN_FLIGHT},
      {"max-batch", required_argument, 0, OPT_BATCH},
      {"output-soft-limit", required_argument, 0, OPT_SOFT},
      {"output-hard-limit", required_argument, 0, OPT_HARD},
      {"log-level", required_argument, 0, OPT_LOG},
      {"db", required_argument, 0, OPT_DB},
      {"no-default-db", no_argument, 0, OPT_NO_DEFAULT},
      {"lmm", required_argument, 0, OPT_LMM},
      {"max-pose-frames", required_argument, 0, OPT_POSE},
      {"tick-rate", required_argument, 0, OPT_TICK_RATE},
      {"max-characters", required_argument, 0, OPT_MAX_CHARS},
      {"max-characters-per-connection", required_argument, 0, OPT_MAX_CHARS_CONN},
      {"stream-soft-limit", required_argument, 0, OPT_STREAM_SOFT},
      {"stream-soft-seconds", required_argument, 0, OPT_STREAM_SECONDS},
      {"config", required_argument, 0, OPT_CONFIG},
      {"auth-token", required_argument, 0, OPT_AUTH},
      {"auth-token-file", required_argument, 0, OPT_AUTH_FILE},
      {"admin-token", required_argument, 0, OPT_ADMIN},
      {"admin-token-file", required_argument, 0, OPT_ADMIN_FILE},
      {"metrics-port", required_argument, 0, OPT_METRICS_PORT},
      {"metrics-host", required_argument, 0, OPT_METRICS_HOST},
      {"reuseport", no_argument, 0, OPT_REUSEPORT},
      {"idle-timeout", required_argument, 0, OPT_IDLE},
      {"max-databases", required_argument, 0, OPT_MAX_DBS},
      {"max-database-memory", required_argument, 0, OPT_MAX_DB_MEMORY},
      {"max-ids", required_argument, 0, OPT_MAX_IDS},
      {"max-output-memory", required_argument, 0, OPT_MAX_OUTPUT},
      {"pool-nice", required_argument, 0, OPT_POOL_NICE},
      {"version", no_argument, 0, OPT_VERSION},
      {"help", no_argument, 0, OPT_HELP},
      {0, 0, 0, 0}};
  optind = 1;
  opterr = 0;
  int opt;
  while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
    int rc = 0;
    const char *flag = optind > 1 ? argv[optind - 1] : "";
    const number_option_t *number = number_option(opt);
    if (number) {
      if ((rc = set_number(c, number, optarg, err, errlen)) != 0) return rc;
      if (opt == OPT_STREAM_SOFT) *stream_soft_given = 1;
      continue;
    }
    switch (opt) {
    case OPT_HOST:
      if (strlen(optarg) >= sizeof c->host) { snprintf(err, errlen, "--host: too long"); return ANIM_EINVAL; }
      snprintf(c->host, sizeof c->host, "%s", optarg);
      break;
    case OPT_DATA_DIR:
      if (strlen(optarg) >= sizeof c->data_dir) { snprintf(err, errlen, "--data-dir: too long"); return ANIM_EINVAL; }
      snprintf(c->data_dir, sizeof c->data_dir, "%s", optarg);
      break;
    case OPT_LOG:
      if (srv_log_parse_level(optarg, &c->log_level) != 0) {
        snprintf(err, errlen, "--log-level %s: expected debug, info, warn or error", optarg);
        return ANIM_EINVAL;
      }
      break;
    case OPT_DB:
      if (c->npreload == SRV_MAX_PRELOAD || strlen(optarg) >= sizeof c->preload[0]) {
        snprintf(err, errlen, "--db %s: at most %d names of at most 63 bytes", optarg, SRV_MAX_PRELOAD);
        return ANIM_EINVAL;
      }
      snprintf(c->preload[c->npreload++], sizeof c->preload[0], "%s", optarg);
      break;
    case OPT_NO_DEFAULT: c->default_database = 0; break;
    case OPT_LMM:
      if (strlen(optarg) >= sizeof c->lmm_dir) { snprintf(err, errlen, "--lmm: too long"); return ANIM_EINVAL; }
      snprintf(c->lmm_dir, sizeof c->lmm_dir, "%s", optarg);
      break;
    case OPT_CONFIG: break; /* read before the command line */
    case OPT_AUTH: rc = set_token(c->auth_token, sizeof c->auth_token, "--auth-token", optarg, err, errlen); break;
    case OPT_AUTH_FILE:
      rc = read_token(c->auth_token, sizeof c->auth_token, "--auth-token-file", optarg, err, errlen);
      break;
    case OPT_ADMIN: rc = set_token(c->admin_token, sizeof c->admin_token, "--admin-token", optarg, err, errlen); break;
    case OPT_ADMIN_FILE:
      rc = read_token(c->admin_token, sizeof c->admin_token, "--admin-token-file", optarg, err, errlen);
      break;
    case OPT_METRICS_HOST:
      if (strlen(optarg) >= sizeof c->metrics_host) {
        snprintf(err, errlen, "--metrics-host: too long");
        return ANIM_EINVAL;
      }
      snprintf(c->metrics_host, sizeof c->metrics_host, "%s", optarg);
      break;
    case OPT_REUSEPORT: c->reuseport = 1; break;
    case OPT_VERSION: printf("animserver %s (protocol %d)\n", ANIM_VERSION, ANIM_PROTOCOL_VERSION); return 1;
    case OPT_HELP: srv_config_print_help(argv[0]); return 1;
    default:
      snprintf(err, errlen, "unknown or incomplete option %s (see --help)", flag);
      return ANIM_EINVAL;
    }
    if (rc) return rc;
  }
  if (optind < argc) {
    snprintf(err, errlen, "unexpected argument %s (see --help)", argv[optind]);
    return ANIM_EINVAL;
  }
  return 0;
}

/* The config file: each line becomes "--name value" (or "--name") through the
 * same option table, so the file and the flags cannot disagree. */
static int apply_file(srv_config_t *c, const char *path, int *stream_soft_given, char *err, int errlen) {
  FILE *f = fopen(path, "r");
  if (!f) {
    snprintf(err, errlen, "--config %s: %s", path, strerror(errno));
    return ANIM_EINVAL;
  }
  char line[2048], flag[300], message[400];
  int number = 0, rc = 0;
  while (!rc && fgets(line, sizeof line, f)) {
    number++;
    line[strcspn(line, "#\r\n")] = '\0';
    char *name = line + strspn(line, " \t");
    if (!*name) continue;
    char *end = name + strcspn(name, " \t=");
    char *value = end + strspn(end, " \t=");
    *end = '\0';
    value[strcspn(value, "\t")] = '\0';
    for (char *t = value + strlen(value); t > value && t[-1] == ' ';) *--t = '\0';
    if (!strcmp(name, "config") || !strcmp(name, "help") || !strcmp(name, "version")) {
      snprintf(err, errlen, "%s:%d: %s is not a file setting", path, number, name);
      rc = ANIM_EINVAL;
      break;
    }
    snprintf(flag, sizeof flag, "--%s", name);
    char *argv[] = {"animserver", flag, *value ? value : NULL, NULL};
    rc = apply_options(c, *value ? 3 : 2, argv, stream_soft_given, message, sizeof message);
    if (rc) snprintf(err, errlen, "%s:%d: %s", path, number, message);
  }
  fclose(f);
  return rc;
}

int srv_config_parse_args(srv_config_t *c, int argc, char **argv, char *err, int errlen) {
  int stream_soft_given = 0, rc;
  for (int i = 1; i < argc; i++) {
    const char *path = !strcmp(argv[i], "--config") && i + 1 < argc ? argv[i + 1]
                       : !strncmp(argv[i], "--config=", 9)        ? argv[i] + 9
                                                                  : NULL;
    if (!path) continue;
    if (strlen(path) >= sizeof c->config_path) { snprintf(err, errlen, "--config: path too long"); return ANIM_EINVAL; }
    snprintf(c->config_path, sizeof c->config_path, "%s", path);
    if ((rc = apply_file(c, path, &stream_soft_given, err, errlen))) return rc;
  }
  if ((rc = apply_options(c, argc, argv, &stream_soft_given, err, errlen))) return rc;
  /* The default stream limit follows a smaller hard limit down. */
  if (!stream_soft_given && c->stream_soft_limit > c->output_hard_limit / 2)
    c->stream_soft_limit = c->output_hard_limit / 2;
  return srv_config_validate(c, err, errlen);
}
