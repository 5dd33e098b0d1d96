/*
 * test_config.c: the server's settings from flags and from a config file:
 * bad values first (each naming the flag, or the file and line), then the
 * file read before the flags so flags win, tokens from files, protected
 * mode refusing a non-loopback address without an auth token, and the
 * example file and --help agreeing with the options table (options.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "server/config.h"
#include "server/options.h"
#include "anim_error.h"

static char dir[64];

static const char *write_file(const char *name, const char *text) {
  static char path[128];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  return path;
}

static int parse(srv_config_t *c, char *err, const char *a0, const char *a1, const char *a2, const char *a3) {
  char *argv[] = {"animserver", (char *)a0, (char *)a1, (char *)a2, (char *)a3, NULL};
  int argc = 1;
  while (argc < 5 && argv[argc]) argc++;
  srv_config_default(c);
  return srv_config_parse_args(c, argc, argv, err, 256);
}

static int setup(void **state) {
  snprintf(dir, sizeof dir, "/tmp/animconfig-XXXXXX");
  return mkdtemp(dir) ? 0 : -1;
}

static void test_bad_values(void **state) {
  srv_config_t c;
  char err[256];
  assert_int_equal(parse(&c, err, "--port", "70000", NULL, NULL), ANIM_EINVAL);
  assert_non_null(strstr(err, "--port"));
  assert_int_equal(parse(&c, err, "--auth-token", "has space", NULL, NULL), ANIM_EINVAL);
  assert_int_equal(parse(&c, err, "--pool-nice", "20", NULL, NULL), ANIM_EINVAL); /* nice values stop at 19 */
  assert_non_null(strstr(err, "--pool-nice"));
  assert_int_equal(parse(&c, err, "--pool-nice", "0", NULL, NULL), 0);
  assert_int_equal(c.pool_nice, 0);
  assert_int_equal(parse(&c, err, "--host", "0.0.0.0", NULL, NULL), ANIM_EINVAL);
  assert_non_null(strstr(err, "protected mode"));
  assert_int_equal(parse(&c, err, "--auth-token-file", "/nonexistent/token", NULL, NULL), ANIM_EINVAL);
  const char *bad = write_file("bad.conf", "# comment\nport 7000\nmax-batch zero\n");
  assert_int_equal(parse(&c, err, "--config", bad, NULL, NULL), ANIM_EINVAL);
  assert_non_null(strstr(err, "bad.conf:3"));
  assert_non_null(strstr(err, "--max-batch"));
  const char *unknown = write_file("unknown.conf", "speed 11\n");
  assert_int_equal(parse(&c, err, "--config", unknown, NULL, NULL), ANIM_EINVAL);
  assert_non_null(strstr(err, "unknown.conf:1"));
  const char *nested = write_file("nested.conf", "config other.conf\n");
  assert_int_equal(parse(&c, err, "--config", nested, NULL, NULL), ANIM_EINVAL);
  assert_int_equal(parse(&c, err, "--config", "/nonexistent.conf", NULL, NULL), ANIM_EINVAL);
}

/* Every numeric flag lands in its own field (server/config.c's table: one
 * wrong offset or size there moves a value, or spills into a neighbour). */
static void test_numeric_flags_set_their_fields(void **state) {
  char *argv[] = {"animserver", "--port", "1", "--max-frame-bytes", "1002", "--decode-budget-bytes", "10003",
                  "--max-connections", "4", "--max-in-flight", "5", "--max-batch", "6", "--output-soft-limit", "1007",
                  "--output-hard-limit", "3008", "--max-pose-frames", "9", "--tick-rate", "30.5",
                  "--max-characters", "11", "--max-characters-per-connection", "12", "--stream-soft-limit", "1013",
                  "--stream-soft-seconds", "2.25", "--metrics-port", "8015", "--idle-timeout", "3.75",
                  "--max-databases", "17", "--max-database-memory", "123456789018", "--max-ids", "19",
                  "--pool-nice", "7", "--max-output-memory", "987654321021", NULL};
  srv_config_t c;
  char err[256];
  srv_config_default(&c);
  assert_int_equal(srv_config_parse_args(&c, (int)(sizeof argv / sizeof argv[0]) - 1, argv, err, sizeof err), 0);
  assert_int_equal(c.port, 1);
  assert_int_equal(c.max_frame_bytes, 1002);
  assert_int_equal(c.decode_budget_bytes, 10003);
  assert_int_equal(c.max_connections, 4);
  assert_int_equal(c.max_in_flight, 5);
  assert_int_equal(c.max_batch, 6);
  assert_int_equal(c.output_soft_limit, 1007);
  assert_int_equal(c.output_hard_limit, 3008);
  assert_int_equal(c.max_pose_frames, 9);
  assert_true(c.tick_rate == 30.5);
  assert_int_equal(c.max_characters, 11);
  assert_int_equal(c.max_characters_per_connection, 12);
  assert_int_equal(c.stream_soft_limit, 1013);
  assert_true(c.stream_soft_seconds == 2.25);
  assert_int_equal(c.metrics_port, 8015);
  assert_true(c.idle_timeout == 3.75);
  assert_int_equal(c.max_databases, 17);
  assert_int_equal(c.max_database_memory, 123456789018ull);
  assert_int_equal(c.max_ids_per_request, 19);
  assert_int_equal(c.pool_nice, 7);
  assert_int_equal(c.max_output_memory, 987654321021ull);
}

static void test_file_then_flags(void **state) {
  srv_config_t c;
  char err[256];
  const char *token = write_file("token", "s3cret-token\n");
  char text[512];
  snprintf(text, sizeof text,
           "# animserver settings\n"
           "port = 7001\n"
           "max-batch 64          # a comment after a value\n"
           "no-default-db\n"
           "tick-rate 30\n"
           "host 0.0.0.0\n"
           "auth-token-file %s\n"
           "metrics-port 9100\n"
           "\n",
           token);
  const char *path = write_file("good.conf", text);
  assert_int_equal(parse(&c, err, "--config", path, "--port", "7002"), 0);
  assert_int_equal(c.port, 7002); /* the flag wins */
  assert_int_equal(c.max_batch, 64);
  assert_int_equal(c.default_database, 0);
  assert_true(c.tick_rate == 30.0);
  assert_string_equal(c.host, "0.0.0.0");
  assert_string_equal(c.auth_token, "s3cret-token"); /* so protected mode lets 0.0.0.0 through */
  assert_int_equal(c.metrics_port, 9100);
  assert_string_equal(c.config_path, path);
}

static void test_loopback_names(void **state) {
  assert_true(srv_config_host_is_loopback("127.0.0.1"));
  assert_true(srv_config_host_is_loopback("127.1.2.3"));
  assert_true(srv_config_host_is_loopback("::1"));
  assert_false(srv_config_host_is_loopback("0.0.0.0"));
  assert_false(srv_config_host_is_loopback("::"));
  assert_false(srv_config_host_is_loopback("10.0.0.1"));
}

/* deploy/animserver.conf, the example shipped for systemd and Kubernetes:
 * it is what the options table generates (so every setting is there, with
 * its default and help), it parses, and it holds the defaults (its data
 * directory aside). */
static void test_example_file(void **state) {
  const char *example = "deploy/animserver.conf";
  FILE *f = fopen(example, "r");
  assert_non_null(f);
  static char text[32768], generated[32768];
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = '\0';
  FILE *g = fmemopen(generated, sizeof generated - 1, "w");
  assert_non_null(g);
  assert_int_equal(srv_config_write_example(g), 0);
  fclose(g);
  if (strcmp(text, generated) != 0) {
    size_t at = 0;
    while (text[at] && text[at] == generated[at]) at++;
    fail_msg("%s differs from server/options.h's table at byte %zu (\"%.40s\" vs \"%.40s\"): run "
             "`make example-config`", example, at, text + at, generated + at);
  }
  srv_config_t c, d;
  char err[256];
  assert_int_equal(parse(&c, err, "--config", example, NULL, NULL), 0);
  assert_string_equal(c.data_dir, "/var/lib/animserver");
  srv_config_default(&d);
  memcpy(d.data_dir, c.data_dir, sizeof d.data_dir);
  memcpy(d.config_path, c.config_path, sizeof d.config_path);
  assert_memory_equal(&c, &d, sizeof c);
  /* Every row of the table is in it, with its default and its help. */
  int rows = 0;
  for (int i = 0; i < srv_noptions; i++) {
    const srv_option_t *o = &srv_options[i];
    if (!o->name || o->example == SRV_OPTION_NONE) continue;
    rows++;
    char line[160], words[40];
    const char *value = o->example == SRV_OPTION_DEFAULT ? o->default_text : o->example_text;
    snprintf(line, sizeof line, "\n%s%s%s%s\n", o->example == SRV_OPTION_COMMENT ? "# " : "", o->name,
             value && *value ? " " : "", value ? value : "");
    if (!strstr(text, line)) fail_msg("%s has no line \"%s\"", example, line + 1);
    snprintf(words, sizeof words, "%.30s", o->help); /* the help's first words, before any wrap */
    words[strcspn(words, " ")] = '\0';
    if (!strstr(strstr(text, line) - 400 > text ? strstr(text, line) - 400 : text, words))
      fail_msg("%s: no help above --%s", example, o->name);
  }
  assert_true(rows >= 30);
}

/* --help lists every row of the table (the test above checks the file), with
 * its default; the table's defaults are inside their own bounds. */
static void test_help_lists_the_table(void **state) {
  char command[1024], line[512];
  static char help[32768];
  const char *build = getenv("ANIM_BUILD_DIR");
  snprintf(command, sizeof command, "%s/animserver --help", build && *build ? build : "build");
  FILE *p = popen(command, "r");
  assert_non_null(p);
  size_t n = 0;
  /* A wrapped paragraph's lines joined into one. */
  while (fgets(line, sizeof line, p) && n + strlen(line) < sizeof help) {
    const char *more = line + strspn(line, " ");
    if (more - line >= 20 && n > 0 && help[n - 1] == '\n') help[n - 1] = ' ';
    else more = line;
    n += (size_t)sprintf(help + n, "%s", more);
  }
  assert_int_equal(pclose(p), 0);
  for (int i = 0; i < srv_noptions; i++) {
    const srv_option_t *o = &srv_options[i];
    if (!o->name) continue;
    char flag[96], def[96];
    snprintf(flag, sizeof flag, "\n  --%s", o->name);
    const char *at = strstr(help, flag);
    if (!at) fail_msg("--help does not list --%s", o->name);
    if (o->default_text && (o->kind == SRV_OPTION_NUMBER || o->kind == SRV_OPTION_REAL)) {
      snprintf(def, sizeof def, "Default: %s.", o->default_text);
      const char *next = strstr(at + 1, "\n  --");
      const char *found = strstr(at, def);
      if (!found || (next && found > next)) fail_msg("--help: --%s does not say \"%s\"", o->name, def);
    }
  }
  srv_config_t c;
  char err[256];
  srv_config_default(&c);
  assert_int_equal(srv_config_validate(&c, err, sizeof err), 0);
}

/* Bounds from the table: checked by validate on a config set in code too;
 * metrics-port's -1 (none) may be given. */
static void test_bounds(void **state) {
  srv_config_t c;
  char err[256];
  /* --max-graph-memory: a row like the others, parsed, bounded, named in errors */
  assert_int_equal(parse(&c, err, "--max-graph-memory", "-5", NULL, NULL), ANIM_EINVAL);
  assert_non_null(strstr(err, "--max-graph-memory"));
  assert_int_equal(parse(&c, err, "--max-graph-memory", "1e6", NULL, NULL), ANIM_EINVAL);
  assert_int_equal(parse(&c, err, "--max-graph-memory", "123456789", NULL, NULL), 0);
  assert_int_equal(c.max_graph_memory, 123456789);
  srv_config_default(&c);
  assert_int_equal(c.max_graph_memory, 0); /* no limit, as before the option */
  /* validate checks the table's bounds on a config set in code too */
  c.max_frame_bytes = 10;
  assert_int_equal(srv_config_validate(&c, err, sizeof err), ANIM_EINVAL);
  assert_non_null(strstr(err, "--max-frame-bytes 10"));
  /* metrics-port: -1 (none) is its default and may be given */
  assert_int_equal(parse(&c, err, "--metrics-port", "-1", NULL, NULL), 0);
  assert_int_equal(c.metrics_port, -1);
  assert_int_equal(parse(&c, err, "--metrics-port", "-2", NULL, NULL), ANIM_EINVAL);
}

static int teardown(void **state) {
  const char *names[] = {"bad.conf", "unknown.conf", "nested.conf", "token", "good.conf"};
  char path[128];
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    unlink(path);
  }
  return rmdir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bad_values),
      cmocka_unit_test(test_numeric_flags_set_their_fields),
      cmocka_unit_test(test_file_then_flags),
      cmocka_unit_test(test_loopback_names),
      cmocka_unit_test(test_example_file),
      cmocka_unit_test(test_help_lists_the_table),
      cmocka_unit_test(test_bounds),
  };
  return cmocka_run_group_tests_name("config", tests, setup, teardown);
}
