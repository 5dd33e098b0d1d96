/*
 * animctl_db.c: animctl db: list, describe, load, reload and unload
 * databases (list_databases, describe_database and the admin requests).
 * Text by default, one JSON object with --json.
 */
#include <stdio.h>
#include <string.h>
#include "animctl.h"

static void print_json_string(const char *s) { animctl_json_string(stdout, s); }

static void print_summary_json(const anim_db_summary_t *s) {
  printf("{\"name\":");
  print_json_string(s->name);
  printf(",\"version\":\"%016llx\",\"frames\":%u,\"bones\":%u,\"frame_rate\":%g,\"feature_dims\":%u,"
         "\"ranges\":%u,\"memory_bytes\":%llu,\"graph_memory_bytes\":%llu}",
         (unsigned long long)s->version, s->frames, s->bones, s->frame_rate, s->feature_dims, s->ranges,
         (unsigned long long)s->memory_bytes, (unsigned long long)s->graph_memory_bytes);
}

static void print_summary_text(const anim_db_summary_t *s) {
  printf("%-20s %016llx %8u frames %4u bones %5.1f Hz %3u dims %4u ranges %8.1f MiB\n", s->name,
         (unsigned long long)s->version, s->frames, s->bones, s->frame_rate, s->feature_dims, s->ranges,
         (double)s->memory_bytes / (1024.0 * 1024.0));
}

static int cmd_db_list(anim_client_t *client, const options_t *o) {
  anim_db_summary_t summaries[64];
  int count = 0;
  int rc = anim_client_db_list(client, summaries, 64, &count, o->timeout_ms);
  if (rc) return report_error("db list", rc, client);
  if (count > 64) count = 64;
  if (o->json) {
    printf("[");
    for (int i = 0; i < count; i++) {
      if (i) printf(",");
      print_summary_json(&summaries[i]);
    }
    printf("]\n");
  } else {
    for (int i = 0; i < count; i++) print_summary_text(&summaries[i]);
  }
  return 0;
}

static const char *const group_kind_names[] = {"position", "velocity", "trajectory-position",
                                               "trajectory-direction", "inertialize"};

static int cmd_db_describe(anim_client_t *client, const options_t *o, const char *name) {
  anim_db_description_t *d;
  int rc = anim_client_db_describe(client, name, &d, o->timeout_ms);
  if (rc) return report_error("db describe", rc, client);
  if (o->json) {
    printf("{\"summary\":");
    print_summary_json(&d->summary);
    printf(",\"bones\":[");
    for (int i = 0; i < d->nbones; i++) {
      printf("%s{\"name\":", i ? "," : "");
      print_json_string(d->bone_names[i]);
      printf(",\"parent\":%d}", d->bone_parents[i]);
    }
    printf("],\"ranges\":[");
    for (int i = 0; i < d->nranges; i++) {
      printf("%s{\"name\":", i ? "," : "");
      print_json_string(d->ranges[i].name);
      printf(",\"start\":%u,\"stop\":%u,\"tags\":[", d->ranges[i].start, d->ranges[i].stop);
      for (int t = 0; t < d->ranges[i].ntags; t++) {
        if (t) printf(",");
        print_json_string(d->ranges[i].tags[t]);
      }
      printf("]}");
    }
    printf("],\"features\":[");
    for (int i = 0; i < d->ngroups; i++) {
      const anim_feature_group_info_t *g = &d->groups[i];
      printf("%s{\"kind\":\"%s\",\"bone\":", i ? "," : "", (unsigned)g->kind < 5 ? group_kind_names[g->kind] : "?");
      print_json_string(g->bone);
      printf(",\"weight\":%g,\"first_column\":%u,\"dims\":%u}", g->weight, g->first_column, g->dims);
    }
    printf("]}\n");
  } else {
    print_summary_text(&d->summary);
    printf("bones:\n");
    for (int i = 0; i < d->nbones; i++)
      printf("  %3d %-24s parent %s\n", i, d->bone_names[i],
             d->bone_parents[i] >= 0 ? d->bone_names[d->bone_parents[i]] : "-");
    printf("ranges:\n");
    for (int i = 0; i < d->nranges; i++) {
      printf("  %3d %-40s [%u, %u)", i, d->ranges[i].name, d->ranges[i].start, d->ranges[i].stop);
      for (int t = 0; t < d->ranges[i].ntags; t++) printf(" #%s", d->ranges[i].tags[t]);
      printf("\n");
    }
    printf("features:\n");
    for (int i = 0; i < d->ngroups; i++) {
      const anim_feature_group_info_t *g = &d->groups[i];
      printf("  cols %2u-%2u %-20s %-14s weight %g\n", g->first_column, g->first_column + g->dims - 1,
             (unsigned)g->kind < 5 ? group_kind_names[g->kind] : "?", g->bone, g->weight);
    }
  }
  anim_db_description_free(d);
  return 0;
}

static int cmd_db_admin(anim_client_t *client, const options_t *o, const char *verb, const char *name) {
  anim_db_summary_t summary;
  int rc;
  if (strcmp(verb, "load") == 0) rc = anim_client_db_load(client, name, &summary, o->timeout_ms);
  else if (strcmp(verb, "reload") == 0) rc = anim_client_db_reload(client, name, &summary, o->timeout_ms);
  else rc = anim_client_db_unload(client, name, o->timeout_ms);
  if (rc) return report_error(verb, rc, client);
  if (strcmp(verb, "unload") == 0) {
    printf(o->json ? "{\"unloaded\":\"%s\"}\n" : "unloaded %s\n", name);
  } else if (o->json) {
    print_summary_json(&summary);
    printf("\n");
  } else {
    print_summary_text(&summary);
  }
  return 0;
}

int animctl_db(const options_t *o, int argc, char **argv) {
  int list = argc == 2 && strcmp(argv[1], "list") == 0;
  int describe = argc == 3 && strcmp(argv[1], "describe") == 0;
  int admin = argc == 3 && (!strcmp(argv[1], "load") || !strcmp(argv[1], "reload") || !strcmp(argv[1], "unload"));
  if (!list && !describe && !admin)
    return animctl_fail("db: expected list, describe NAME, load NAME, reload NAME or unload NAME");
  int rc;
  anim_client_t *client;
  if ((rc = animctl_connect(o, &client)) != 0) return rc;
  if (list) return cmd_db_list(client, o);
  if (describe) return cmd_db_describe(client, o, argv[2]);
  return cmd_db_admin(client, o, argv[1], argv[2]);
}
