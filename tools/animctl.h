/* animctl.h: what the animctl subcommand files share. */
#ifndef ANIMCTL_H
#define ANIMCTL_H

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

int animctl_load(anim_client_t *client, const options_t *options, int argc, char **argv);

int animctl_inertialize(anim_client_t *client, const options_t *options, int argc, char **argv);
int animctl_transition_cost(anim_client_t *client, const options_t *options, int argc, char **argv);
int animctl_spring(anim_client_t *client, const options_t *options, int argc, char **argv);

int animctl_render(anim_client_t *client, const options_t *options, int argc, char **argv);
int animctl_stream(anim_client_t *client, const options_t *options, int argc, char **argv);

int animctl_machine(anim_client_t *client, const options_t *options, int argc, char **argv);
int animctl_graph(anim_client_t *client, const options_t *options, int argc, char **argv);
int animctl_align(anim_client_t *client, const options_t *options, int argc, char **argv);
int animctl_fit(anim_client_t *client, const options_t *options, int argc, char **argv);

#endif
