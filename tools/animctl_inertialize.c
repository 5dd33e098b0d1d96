/*
 * animctl_inertialize.c: the inertialization subcommands of animctl.
 *
 *   animctl inertialize DB SRC_FRAME DST_FRAME [--halflife H] [--t T]
 *       transition from one database frame to another, then the offsets and
 *       the displayed root t seconds later
 *   animctl transition-cost DB SRC_FRAME DST_FRAME [--halflife H] [--bone NAME]...
 *   animctl spring halflife --alpha A --t T [--x0 X] [--v0 V] [--mass M]
 *   animctl spring erp-cfm --stiffness K --damping C --dt DT
 *   animctl spring gains --erp E --cfm C --dt DT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "animctl.h"

static int parse_frame(const char *text, int *out) {
  char *end;
  long v = strtol(text, &end, 10);
  if (!*text || *end || v < 0 || v > 1000000000) {
    return animctl_fail("%s: expected a frame index", text);
  }
  *out = (int)v;
  return 0;
}

/* --name VALUE pairs into doubles; returns 2 on an unknown or incomplete flag. */
static int parse_doubles(int argc, char **argv, int first, const char *const *names, double *values, int n) {
  for (int i = first; i < argc; i += 2) {
    int found = 0;
    for (int j = 0; j < n && !found; j++)
      if (i + 1 < argc && strcmp(argv[i], names[j]) == 0) {
        char *end;
        values[j] = strtod(argv[i + 1], &end);
        if (*end) {
          return animctl_fail("%s %s: expected a number", argv[i], argv[i + 1]);
        }
        found = 1;
      }
    if (!found) {
      return animctl_fail("unknown or incomplete option %s", argv[i]);
    }
  }
  return 0;
}

int animctl_inertialize(const options_t *o, int argc, char **argv) {
  int src = 0, dst = 0, rc; /* set by parse_frame; zeroed for the compiler, which cannot see it */
  if (argc < 4 || (rc = parse_frame(argv[2], &src)) || (rc = parse_frame(argv[3], &dst))) {
    return animctl_fail("inertialize DB SRC_FRAME DST_FRAME [--halflife H] [--t T]");
  }
  static const char *const names[] = {"--halflife", "--t"};
  double values[2] = {0.1, 0.0};
  if ((rc = parse_doubles(argc, argv, 4, names, values, 2))) return rc;
  anim_pose_source_t from = {src, 0, NULL, NULL, NULL, NULL}, to = {dst, 0, NULL, NULL, NULL, NULL};
  anim_inertializer_state_t *state, *later;
  anim_pose_t *pose;
  anim_client_t *client;
  if ((rc = animctl_connect(o, &client)) != 0) return rc;
  rc = anim_client_inertialize_transition(client, argv[1], &from, &to, NULL, &state, o->timeout_ms);
  if (rc) return report_error("inertialize transition", rc, client);
  rc = anim_client_inertialize_evaluate(client, argv[1], state, &to, (float)values[0], (float)values[1], &later, &pose,
                                        o->timeout_ms);
  if (rc) {
    anim_inertializer_state_free(state);
    return report_error("inertialize evaluate", rc, client);
  }
  for (int b = 0; b < later->nbones; b++) {
    const float *p = later->offset_positions + 3 * b, *v = later->offset_velocities + 3 * b;
    const float *q = later->offset_rotations + 4 * b, *w = later->offset_angular_velocities + 3 * b;
    if (o->json)
      printf("{\"bone\":%d,\"t\":%g,\"offset_position\":[%g,%g,%g],\"offset_velocity\":[%g,%g,%g],"
             "\"offset_rotation\":[%g,%g,%g,%g],\"offset_angular_velocity\":[%g,%g,%g]}\n",
             b, values[1], p[0], p[1], p[2], v[0], v[1], v[2], q[0], q[1], q[2], q[3], w[0], w[1], w[2]);
    else
      printf("bone %2d  offset pos %8.4f %8.4f %8.4f  vel %8.4f %8.4f %8.4f  rot %7.4f %7.4f %7.4f %7.4f\n", b, p[0],
             p[1], p[2], v[0], v[1], v[2], q[0], q[1], q[2], q[3]);
  }
  if (!o->json && pose && pose->local_positions)
    printf("displayed root at t=%gs: %.4f %.4f %.4f\n", values[1], pose->local_positions[0], pose->local_positions[1],
           pose->local_positions[2]);
  anim_inertializer_state_free(state);
  anim_inertializer_state_free(later);
  anim_pose_free(pose);
  return 0;
}

int animctl_transition_cost(const options_t *o, int argc, char **argv) {
  int src = 0, dst = 0, rc; /* set by parse_frame; zeroed for the compiler, which cannot see it */
  if (argc < 4 || (rc = parse_frame(argv[2], &src)) || (rc = parse_frame(argv[3], &dst))) {
    return animctl_fail("transition-cost DB SRC_FRAME DST_FRAME [--halflife H] [--bone NAME]...");
  }
  float halflife = 0.1f;
  const char *bones[128];
  int nbones = 0;
  for (int i = 4; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--halflife")) halflife = strtof(argv[i + 1], NULL);
    else if (!strcmp(argv[i], "--bone") && nbones < 128) bones[nbones++] = argv[i + 1];
    else {
      return animctl_fail("transition-cost: unknown option %s", argv[i]);
    }
  }
  anim_pose_source_t from = {src, 0, NULL, NULL, NULL, NULL}, to = {dst, 0, NULL, NULL, NULL, NULL};
  anim_transition_cost_t *cost;
  anim_client_t *client;
  if ((rc = animctl_connect(o, &client)) != 0) return rc;
  rc = anim_client_transition_cost(client, argv[1], &from, &to, halflife, bones, nbones, &cost, o->timeout_ms);
  if (rc) return report_error("transition-cost", rc, client);
  if (o->json) {
    printf("{\"exact\":%.9g,\"approximate\":%.9g,\"bones\":[", cost->exact, cost->approximate);
    for (int b = 0; b < cost->nbones; b++)
      printf("%s{\"bone\":\"%s\",\"exact\":%.9g,\"approximate\":%.9g}", b ? "," : "", cost->names[b],
             cost->exact_per_bone[b], cost->approximate_per_bone[b]);
    printf("]}\n");
  } else {
    for (int b = 0; b < cost->nbones; b++)
      printf("%-24s exact %10.6f  approximate %10.6f\n", cost->names[b], cost->exact_per_bone[b],
             cost->approximate_per_bone[b]);
    printf("%-24s exact %10.6f  approximate %10.6f  (metre-seconds)\n", "total", cost->exact, cost->approximate);
  }
  anim_transition_cost_free(cost);
  return 0;
}

int animctl_spring(const options_t *o, int argc, char **argv) {
  static const char *const halflife[] = {"--alpha", "--t", "--x0", "--v0", "--mass"};
  static const char *const erp_cfm[] = {"--stiffness", "--damping", "--dt"};
  static const char *const gains[] = {"--erp", "--cfm", "--dt"};
  const char *verb = argc >= 2 ? argv[1] : "";
  double v[5] = {0.0, 0.0, 1.0, 0.0, 1.0};
  int rc;
  if (!strcmp(verb, "halflife")) rc = parse_doubles(argc, argv, 2, halflife, v, 5);
  else if (!strcmp(verb, "erp-cfm") || !strcmp(verb, "gains")) {
    v[2] = 1.0 / 60.0; /* --dt */
    rc = parse_doubles(argc, argv, 2, !strcmp(verb, "gains") ? gains : erp_cfm, v, 3);
  } else return animctl_fail("spring halflife|erp-cfm|gains ...");
  if (rc) return rc;
  anim_spring_tuning_t t;
  anim_client_t *client;
  if ((rc = animctl_connect(o, &client)) != 0) return rc;
  if (!strcmp(verb, "halflife"))
    rc = anim_client_spring_halflife(client, v[0], v[1], v[2], v[3], v[4], &t, o->timeout_ms);
  else if (!strcmp(verb, "erp-cfm"))
    rc = anim_client_spring_to_constraint(client, v[0], v[1], v[2], &t, o->timeout_ms);
  else
    rc = anim_client_spring_from_constraint(client, v[0], v[1], v[2], &t, o->timeout_ms);
  if (rc) return report_error("spring", rc, client);
  if (o->json)
    printf("{\"halflife\":%.12g,\"stiffness\":%.12g,\"damping\":%.12g,\"erp\":%.12g,\"cfm\":%.12g}\n", t.halflife,
           t.stiffness, t.damping, t.erp, t.cfm);
  else
    printf("halflife %.6g s  stiffness %.6g  damping %.6g  erp %.6g  cfm %.6g\n", t.halflife, t.stiffness, t.damping,
           t.erp, t.cfm);
  return 0;
}
