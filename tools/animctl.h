/* animctl.h: what the animctl subcommand files share. */
#ifndef ANIMCTL_H
#define ANIMCTL_H

#include <stdio.h>
#include "anim_client.h"

typedef struct {
  const char *host;
  int port;
  int timeout_ms;
  int json;
  const char *auth_token; /* --auth-token or $ANIM_AUTH_TOKEN: a hello carries it first */
} options_t;

/* Prints "animctl: what: error (NAME): server message" and returns 1; with
 * --json, one line {"error": {"request", "code", "code_value", "description",
 * "message"}} instead. client may be NULL (no server message). */
int report_error(const char *what, int rc, anim_client_t *client);

/* A usage or local error (printf-style, no trailing newline): "animctl:
 * MESSAGE" on stderr, with --json one line {"error": {"message"}} instead.
 * Returns 2, the usage-error exit status. */
int animctl_fail(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* The connection to the server, opened on the first call (the same client
 * after): a command checks its arguments first, so that a usage error exits
 * 2 whatever the server, then connects. With --auth-token a hello carries
 * the token first. 0, or 1 with the failure reported (cannot reach the
 * server, authentication refused). main closes it. */
int animctl_connect(const options_t *options, anim_client_t **out_client);

/* s as a JSON string, quoted and escaped. */
void animctl_json_string(FILE *out, const char *s);

int animctl_db(const options_t *options, int argc, char **argv);
int animctl_load(const options_t *options, int argc, char **argv);

int animctl_inertialize(const options_t *options, int argc, char **argv);
int animctl_transition_cost(const options_t *options, int argc, char **argv);
int animctl_spring(const options_t *options, int argc, char **argv);

int animctl_render(const options_t *options, int argc, char **argv);
int animctl_stream(const options_t *options, int argc, char **argv);
int animctl_record(const options_t *options, int argc, char **argv);

int animctl_machine(const options_t *options, int argc, char **argv);
int animctl_graph(const options_t *options, int argc, char **argv);
int animctl_align(const options_t *options, int argc, char **argv);
int animctl_fit(const options_t *options, int argc, char **argv);
int animctl_inverse_dynamics(const options_t *options, int argc, char **argv);
int animctl_physics(const options_t *options, int argc, char **argv);
int animctl_marker_fit(const options_t *options, int argc, char **argv);

/* A steering input from SPEC: stick:X,Z or velocity:VX,VZ. 0, or -1 when
 * SPEC is neither (nothing printed). */
int animctl_parse_input(const char *spec, anim_character_input_t *out);

int animctl_history(const options_t *options, int argc, char **argv);
int animctl_set_params(const options_t *options, int argc, char **argv);

#endif
