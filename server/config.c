/* config.c: defaults, validation, command line, config file, --help and the
 * example file of the server's settings, all from options.h's table. */
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "config.h"
#include "options.h"

/* ---- the table as data ------------------------------------------------------------ */

#define FIELD_OF(FIELD) (((srv_config_t *)0)->FIELD)
#define SRV_OPTION_ROW(NAME, KIND, FIELD, DEFAULT, MIN, MAX, RELOAD, ARG, EXAMPLE, EXAMPLE_TEXT, HELP)             \
  {NAME, SRV_OPTION_##KIND, offsetof(srv_config_t, FIELD), sizeof FIELD_OF(FIELD),                              \
   _Generic(FIELD_OF(FIELD), int: 1, default: 0), DEFAULT, (double)(MIN), (double)(MAX), SRV_OPTION_##RELOAD, ARG, \
   SRV_OPTION_##EXAMPLE, EXAMPLE_TEXT, HELP},
#define SRV_OPTION_SECTION_ROW(HEADING) {.name = NULL, .kind = SRV_OPTION_SECTION, .help = HEADING},
const srv_option_t srv_options[] = {SRV_OPTIONS(SRV_OPTION_ROW, SRV_OPTION_SECTION_ROW)};
#undef SRV_OPTION_ROW
#undef SRV_OPTION_SECTION_ROW
#undef FIELD_OF
const int srv_noptions = (int)(sizeof srv_options / sizeof srv_options[0]);

const srv_option_t *srv_option_find(const char *name) {
  for (int i = 0; i < srv_noptions; i++)
    if (srv_options[i].name && !strcmp(srv_options[i].name, name)) return &srv_options[i];
  return NULL;
}

/* Program actions: flags that print and exit, not settings. */
enum { ACTION_HELP = 1, ACTION_VERSION, ACTION_EXAMPLE };
static const struct {
  const char *name;
  int action;
  const char *help;
} actions[] = {
    {"example-config", ACTION_EXAMPLE, "print the example config file (deploy/animserver.conf) and exit"},
    {"version", ACTION_VERSION, "print the version and exit"},
    {"help", ACTION_HELP, "this text"},
};
#define NACTIONS ((int)(sizeof actions / sizeof actions[0]))

static int is_number(const srv_option_t *o) { return o->kind == SRV_OPTION_NUMBER || o->kind == SRV_OPTION_REAL; }

/* A NUMBER field's value (4 or 8 bytes; an int may be negative). */
static double number_value(const srv_config_t *c, const srv_option_t *o) {
  const char *field = (const char *)c + o->offset;
  if (o->kind == SRV_OPTION_REAL) {
    double v;
    memcpy(&v, field, sizeof v);
    return v;
  }
  if (o->size == sizeof(uint64_t)) {
    uint64_t v;
    memcpy(&v, field, sizeof v);
    return (double)v;
  }
  if (o->is_signed) {
    int32_t v;
    memcpy(&v, field, sizeof v);
    return v;
  }
  uint32_t v;
  memcpy(&v, field, sizeof v);
  return v;
}

/* ---- setting one option ------------------------------------------------------------ */

static int parse_whole(const char *flag, const char *text, double min, double max, int64_t *out, char *err,
                       int errlen) {
  char *end;
  errno = 0;
  long long v = strtoll(text, &end, 10);
  if (errno || end == text || *end || (text[0] == '-' && min >= 0) || !((double)v >= min && (double)v <= max)) {
    snprintf(err, errlen, "%s %s: expected a whole number in %.0f..%.0f", flag, text, min, max);
    return ANIM_EINVAL;
  }
  *out = v;
  return 0;
}

static int parse_real(const char *flag, const char *text, double min, double max, double *out, char *err,
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

/* Stores value (the flag's argument; NULL for ON / OFF) in o's field. */
static int set_option(srv_config_t *c, const srv_option_t *o, const char *value, char *err, int errlen) {
  char flag[64];
  snprintf(flag, sizeof flag, "--%s", o->name);
  char *field = (char *)c + o->offset;
  switch (o->kind) {
  case SRV_OPTION_NUMBER: {
    int64_t v;
    int rc = parse_whole(flag, value, o->min, o->max, &v, err, errlen);
    if (rc) return rc;
    if (o->size == sizeof(uint64_t)) {
      uint64_t wide = (uint64_t)v;
      memcpy(field, &wide, sizeof wide);
    } else {
      uint32_t narrow = (uint32_t)v; /* an int's bits too (two's complement) */
      memcpy(field, &narrow, sizeof narrow);
    }
    return 0;
  }
  case SRV_OPTION_REAL: {
    double v;
    int rc = parse_real(flag, value, o->min, o->max, &v, err, errlen);
    if (!rc) memcpy(field, &v, sizeof v);
    return rc;
  }
  case SRV_OPTION_TEXT:
    if (strlen(value) >= o->size) {
      snprintf(err, errlen, "%s: too long (at most %zu bytes)", flag, o->size - 1);
      return ANIM_EINVAL;
    }
    memcpy(field, value, strlen(value) + 1);
    return 0;
  case SRV_OPTION_TOKEN: return set_token(field, o->size, flag, value, err, errlen);
  case SRV_OPTION_TOKEN_FILE: return read_token(field, o->size, flag, value, err, errlen);
  case SRV_OPTION_ON:
  case SRV_OPTION_OFF: {
    int v = o->kind == SRV_OPTION_ON;
    memcpy(field, &v, sizeof v);
    return 0;
  }
  case SRV_OPTION_LIST: /* --db: the one list, c->preload */
    if (c->npreload == SRV_MAX_PRELOAD || strlen(value) >= sizeof c->preload[0]) {
      snprintf(err, errlen, "%s %s: at most %d names of at most %zu bytes", flag, value, SRV_MAX_PRELOAD,
               sizeof c->preload[0] - 1);
      return ANIM_EINVAL;
    }
    snprintf(c->preload[c->npreload++], sizeof c->preload[0], "%s", value);
    return 0;
  case SRV_OPTION_LEVEL:
    if (srv_log_parse_level(value, (srv_log_level_t *)(void *)field) != 0) {
      snprintf(err, errlen, "%s %s: expected debug, info, warn or error", flag, value);
      return ANIM_EINVAL;
    }
    return 0;
  case SRV_OPTION_CONFIG: return 0; /* read before the command line */
  case SRV_OPTION_SECTION: break;
  }
  snprintf(err, errlen, "%s: not a setting", flag);
  return ANIM_EINVAL;
}

/* ---- defaults and validation ------------------------------------------------------------ */

void srv_config_default(srv_config_t *config) {
  char err[256];
  memset(config, 0, sizeof *config);
  for (int i = 0; i < srv_noptions; i++) {
    const srv_option_t *o = &srv_options[i];
    if (!o->name || !o->default_text) continue;
    if (o->kind == SRV_OPTION_ON || o->kind == SRV_OPTION_OFF) {
      int v = atoi(o->default_text);
      memcpy((char *)config + o->offset, &v, sizeof v);
    } else if (set_option(config, o, o->default_text, err, sizeof err) != 0) {
      /* A default outside its own bounds is a bug of the table. */
      fprintf(stderr, "animserver: options.h: the default of %s\n", err);
      abort();
    }
  }
}

int srv_config_validate(const srv_config_t *c, char *err, int errlen) {
  for (int i = 0; i < srv_noptions; i++) {
    const srv_option_t *o = &srv_options[i];
    if (!o->name || !is_number(o)) continue;
    double v = number_value(c, o);
    if (!(v >= o->min && v <= o->max)) {
      if (o->kind == SRV_OPTION_REAL) snprintf(err, errlen, "--%s %g: must be %g..%g", o->name, v, o->min, o->max);
      else snprintf(err, errlen, "--%s %.0f: must be %.0f..%.0f", o->name, v, o->min, o->max);
      return ANIM_EINVAL;
    }
  }
  if (c->output_soft_limit > c->output_hard_limit) {
    snprintf(err, errlen, "output limits: need --output-soft-limit (%zu) <= --output-hard-limit (%zu)",
             c->output_soft_limit, c->output_hard_limit);
    return ANIM_EINVAL;
  }
  if (c->decode_budget_bytes < c->max_frame_bytes) {
    snprintf(err, errlen, "--decode-budget-bytes must be >= --max-frame-bytes");
    return ANIM_EINVAL;
  }
  if (c->stream_soft_limit > c->output_hard_limit) {
    snprintf(err, errlen, "stream limits: need --stream-soft-limit (%zu) <= --output-hard-limit (%zu)",
             c->stream_soft_limit, c->output_hard_limit);
    return ANIM_EINVAL;
  }
  if (!srv_config_host_is_loopback(c->host) && !c->auth_token[0]) {
    snprintf(err, errlen, "--host %s is not a loopback address: protected mode refuses to serve it without "
             "--auth-token (or --auth-token-file)", c->host);
    return ANIM_EINVAL;
  }
  return 0;
}

int srv_config_host_is_loopback(const char *host) {
  return !strncmp(host, "127.", 4) || !strcmp(host, "::1") || !strcmp(host, "localhost");
}

/* ---- --help and the example file ---------------------------------------------------------- */

/* text's words from column `at`, lines up to `width` columns, each further
 * line starting with prefix. */
static int wrap(FILE *out, const char *text, int at, int width, const char *prefix) {
  int col = at, rc = 0;
  for (;;) {
    while (*text == ' ') text++;
    int n = (int)strcspn(text, " ");
    if (!n) break;
    if (col > at && col + 1 + n > width) {
      rc |= fprintf(out, "\n%s", prefix) < 0;
      col = (int)strlen(prefix);
    } else if (col > at) {
      rc |= fputc(' ', out) == EOF;
      col++;
    }
    rc |= fprintf(out, "%.*s", n, text) < 0;
    col += n;
    text += n;
  }
  return rc;
}

/* The help paragraph with its default and reload rule. */
static void describe(const srv_option_t *o, char *out, size_t size) {
  int n = snprintf(out, size, "%s", o->help);
  if (o->default_text && (is_number(o) || o->kind == SRV_OPTION_TEXT || o->kind == SRV_OPTION_LEVEL))
    n += snprintf(out + n, size - (size_t)n, " Default: %s.", o->default_text);
  if (o->reload == SRV_OPTION_RESTART && o->kind != SRV_OPTION_CONFIG)
    snprintf(out + n, size - (size_t)n, " Takes a restart (SIGHUP keeps it).");
}

#define HELP_COLUMN 34
#define HELP_WIDTH 110

void srv_config_print_help(const char *program) {
  char text[1024], flag[96];
  printf("usage: %s [options]\n\n"
         "Serves motion databases, motion-matching search and pose streams over TCP.\n"
         "Every option is also a config file key (--config FILE).\n",
         program);
  for (int i = 0; i < srv_noptions; i++) {
    const srv_option_t *o = &srv_options[i];
    if (!o->name) {
      printf("\n%s:\n", o->help);
      continue;
    }
    describe(o, text, sizeof text);
    int n = snprintf(flag, sizeof flag, "  --%s%s%s", o->name, o->arg[0] ? " " : "", o->arg);
    printf("%s", flag);
    for (int pad = n; pad < HELP_COLUMN; pad++) putchar(' ');
    if (n >= HELP_COLUMN) printf("\n%*s", HELP_COLUMN, "");
    wrap(stdout, text, HELP_COLUMN, HELP_WIDTH, "                                  ");
    putchar('\n');
  }
  printf("\n");
  for (int i = 0; i < NACTIONS; i++) printf("  --%-*s%s\n", HELP_COLUMN - 4, actions[i].name, actions[i].help);
}

int srv_config_write_example(FILE *out) {
  int rc = fprintf(out,
                   "# /etc/animserver/animserver.conf: animserver's settings, read with\n"
                   "#   animserver --config /etc/animserver/animserver.conf\n"
                   "#\n"
                   "# One setting a line, \"name value\" (or \"name = value\"), with the long flag's\n"
                   "# name without its dashes; '#' starts a comment; a flag alone (\"reuseport\")\n"
                   "# turns it on. Flags on the command line override the file. Every setting is\n"
                   "# listed below: the active lines hold the defaults (data-dir excepted), the\n"
                   "# commented ones are off by default. `animserver --help` lists the same.\n"
                   "#\n"
                   "# Generated from server/options.h by `make example-config`: edit the table,\n"
                   "# not this file (tests/server/test_config.c checks they agree).\n") < 0;
  char text[1024];
  for (int i = 0; i < srv_noptions; i++) {
    const srv_option_t *o = &srv_options[i];
    if (!o->name) {
      int shown = 0; /* a heading only over rows the file shows */
      for (int j = i + 1; j < srv_noptions && srv_options[j].name; j++) shown |= srv_options[j].example != SRV_OPTION_NONE;
      if (!shown) continue;
      rc |= fprintf(out, "\n# ---- %s ", o->help) < 0;
      for (int n = (int)strlen(o->help) + 8; n < 80; n++) rc |= fputc('-', out) == EOF;
      rc |= fputc('\n', out) == EOF;
      continue;
    }
    if (o->example == SRV_OPTION_NONE) continue;
    describe(o, text, sizeof text);
    rc |= fputs("# ", out) == EOF;
    rc |= wrap(out, text, 2, 80, "# ");
    rc |= fputc('\n', out) == EOF;
    const char *value = o->example == SRV_OPTION_DEFAULT ? o->default_text : o->example_text;
    rc |= fprintf(out, "%s%s%s%s\n", o->example == SRV_OPTION_COMMENT ? "# " : "", o->name,
                  value && value[0] ? " " : "", value ? value : "") < 0;
  }
  return rc ? ANIM_EIO : 0;
}

/* ---- parsing --------------------------------------------------------------------------------- */

/* One pass of getopt over argv (the command line, or one line of a file):
 * the long options are the table's rows (val: 256 + row) and the actions. */
static int apply_options(srv_config_t *c, int argc, char **argv, int *stream_soft_given, char *err, int errlen) {
  static struct option options[sizeof srv_options / sizeof srv_options[0] + NACTIONS + 1];
  if (!options[0].name) {
    int n = 0;
    for (int i = 0; i < srv_noptions; i++) {
      const srv_option_t *o = &srv_options[i];
      if (!o->name) continue;
      int flag_only = o->kind == SRV_OPTION_ON || o->kind == SRV_OPTION_OFF;
      options[n++] = (struct option){o->name, flag_only ? no_argument : required_argument, 0, 256 + i};
    }
    for (int i = 0; i < NACTIONS; i++) options[n++] = (struct option){actions[i].name, no_argument, 0, actions[i].action};
  }
  optind = 1;
  opterr = 0;
  int opt;
  while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
    const char *flag = optind > 1 ? argv[optind - 1] : "";
    if (opt >= 256 && opt < 256 + srv_noptions) {
      const srv_option_t *o = &srv_options[opt - 256];
      int rc = set_option(c, o, optarg, err, errlen);
      if (rc) return rc;
      if (!strcmp(o->name, "stream-soft-limit")) *stream_soft_given = 1;
      continue;
    }
    switch (opt) {
    case ACTION_VERSION: printf("animserver %s (protocol %d)\n", ANIM_VERSION, ANIM_PROTOCOL_VERSION); return 1;
    case ACTION_HELP: srv_config_print_help(argv[0]); return 1;
    case ACTION_EXAMPLE: srv_config_write_example(stdout); return 1;
    default:
      snprintf(err, errlen, "unknown or incomplete option %s (see --help)", flag);
      return ANIM_EINVAL;
    }
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
    const srv_option_t *o = srv_option_find(name);
    int action = 0;
    for (int i = 0; i < NACTIONS; i++) action |= !strcmp(name, actions[i].name);
    if (action || (o && o->kind == SRV_OPTION_CONFIG)) {
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
