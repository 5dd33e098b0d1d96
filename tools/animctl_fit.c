/*
 * animctl_fit.c: the pose-from-tracked-points subcommands of animctl.
 *
 *   animctl align --source x,y,z ... --target x,y,z ... [--weights w,...]
 *                 [--mode rigid|similarity|yaw]
 *       the transform taking source onto target, and the residual
 *   animctl fit DB BONE=x,y,z[@vx,vy,vz] ...
 *       a full-body pose from tracked bones (positions in metres,
 *       optional velocities in m/s), each tracker's residual, the scale
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "animctl.h"

enum { MAX_POINTS = 256 };

static int parse_vec3(const char *text, float *out) {
  char tail;
  return sscanf(text, "%f,%f,%f%c", &out[0], &out[1], &out[2], &tail) == 3 ? 0 : 2;
}

int animctl_align(const options_t *o, int argc, char **argv) {
  static float source[3 * MAX_POINTS], target[3 * MAX_POINTS], weights[MAX_POINTS];
  int ns = 0, nt = 0, nw = 0, mode = ANIM_ALIGN_RIGID;
  float *into = NULL;
  int *count = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--source")) into = source, count = &ns;
    else if (!strcmp(argv[i], "--target")) into = target, count = &nt;
    else if (!strcmp(argv[i], "--weights") && i + 1 < argc) {
      for (char *p = argv[++i], *end; *p && nw < MAX_POINTS; p = *end ? end + 1 : end) {
        weights[nw++] = strtof(p, &end);
        if (end == p) return animctl_fail("--weights %s: expected numbers", argv[i]);
      }
    } else if (!strcmp(argv[i], "--mode") && i + 1 < argc) {
      const char *m = argv[++i];
      mode = !strcmp(m, "rigid") ? ANIM_ALIGN_RIGID : !strcmp(m, "similarity") ? ANIM_ALIGN_SIMILARITY
             : !strcmp(m, "yaw")   ? ANIM_ALIGN_YAW : -1;
      if (mode < 0) return animctl_fail("--mode %s: rigid, similarity or yaw", m);
    } else if (into && *count < MAX_POINTS && parse_vec3(argv[i], into + 3 * *count) == 0) {
      ++*count;
    } else {
      return animctl_fail("align: %s: expected x,y,z after --source or --target", argv[i]);
    }
  }
  if (ns != nt || ns < 1 || (nw && nw != ns))
    return animctl_fail("align: as many source as target points (and weights), at least one");
  anim_align_result_t a;
  anim_client_t *client;
  int rc = animctl_connect(o, &client);
  if (rc) return rc;
  rc = anim_client_align(client, source, target, nw ? weights : NULL, ns, mode, &a, o->timeout_ms);
  if (rc) return report_error("align", rc, client);
  if (o->json)
    printf("{\"rotation\": [%.7g, %.7g, %.7g, %.7g], \"translation\": [%.7g, %.7g, %.7g], \"scale\": %.7g, "
           "\"yaw\": %.7g, \"cost\": %.7g, \"rms\": %.7g}\n",
           a.rotation[0], a.rotation[1], a.rotation[2], a.rotation[3], a.translation[0], a.translation[1],
           a.translation[2], a.scale, a.yaw, a.cost, a.rms);
  else
    printf("rotation (w x y z) %.6f %.6f %.6f %.6f\ntranslation %.6f %.6f %.6f\nscale %.6f  yaw %.6f rad\n"
           "residual: cost %.6g m^2, rms %.6g m\n",
           a.rotation[0], a.rotation[1], a.rotation[2], a.rotation[3], a.translation[0], a.translation[1],
           a.translation[2], a.scale, a.yaw, a.cost, a.rms);
  return 0;
}

int animctl_fit(const options_t *o, int argc, char **argv) {
  if (argc < 3) return animctl_fail("fit DB BONE=x,y,z[@vx,vy,vz] ...");
  anim_tracker_t t[8];
  char names[8][64];
  int n = 0;
  for (int i = 2; i < argc; i++) {
    const char *eq = strchr(argv[i], '='), *at = eq ? strchr(eq, '@') : NULL;
    if (!eq || n == 8 || eq == argv[i] || (size_t)(eq - argv[i]) >= sizeof names[0])
      return animctl_fail("fit: %s: expected BONE=x,y,z (at most 8 trackers)", argv[i]);
    memset(&t[n], 0, sizeof t[n]);
    snprintf(names[n], sizeof names[n], "%.*s", (int)(eq - argv[i]), argv[i]);
    t[n].bone = names[n];
    char position[96];
    snprintf(position, sizeof position, "%.*s", (int)(at ? at - eq - 1 : (long)strlen(eq + 1)), eq + 1);
    if (parse_vec3(position, t[n].position) || (at && parse_vec3(at + 1, t[n].velocity)))
      return animctl_fail("fit: %s: expected BONE=x,y,z[@vx,vy,vz]", argv[i]);
    t[n].has_velocity = at != NULL;
    n++;
  }
  anim_fit_result_t *f = NULL;
  anim_client_t *client;
  int rc = animctl_connect(o, &client);
  if (rc) return rc;
  rc = anim_client_fit_pose(client, argv[1], t, n, &f, o->timeout_ms);
  if (rc) return report_error("fit", rc, client);
  if (o->json) {
    printf("{\"frame\": %u, \"scale\": %.5f, \"residuals\": [", f->frame, f->scale);
    for (int k = 0; k < f->nresiduals; k++) printf("%s%.5f", k ? ", " : "", f->residuals[k]);
    printf("], \"global_positions\": [");
    for (int b = 0; b < 3 * f->nbones; b++) printf("%s%.5f", b ? ", " : "", f->global_positions[b]);
    printf("]}\n");
  } else {
    printf("prior frame %u, user scale %.3f, %d bones\n", f->frame, f->scale, f->nbones);
    for (int k = 0; k < f->nresiduals; k++) printf("  %-16s residual %.4f m\n", names[k], f->residuals[k]);
    printf("root at %.3f %.3f %.3f\n", f->global_positions[0], f->global_positions[1], f->global_positions[2]);
  }
  anim_fit_result_free(f);
  return 0;
}
