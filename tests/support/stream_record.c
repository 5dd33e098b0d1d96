/* stream_record.c: stream frames as text for the filmstrip tools (see stream_record.h). */
#include <stdlib.h>
#include "stream_record.h"

FILE *anim_stream_record_open(const char *name, int nbones, const int32_t *parents) {
  const char *build = getenv("ANIM_BUILD_DIR");
  char path[512];
  snprintf(path, sizeof path, "%s/tests/%s", build && *build ? build : "build", name);
  FILE *f = fopen(path, "w");
  if (!f) return NULL;
  fprintf(f, "animstream 1\nbones %d\nparents", nbones);
  for (int b = 0; b < nbones; b++) fprintf(f, " %d", (int)parents[b]);
  fprintf(f, "\n");
  return f;
}

void anim_stream_record_frame(FILE *f, double time, const char *label, const Animserver__CharacterPose *p) {
  if (!f || p->n_rotations < 4) return;
  fprintf(f, "frame %.4f %s %d %.5f %.5f %.5f %.5f", time, label && *label ? label : "-",
          p->transition ? 1 : 0, p->rotations[0], p->rotations[1], p->rotations[2], p->rotations[3]);
  for (size_t i = 0; i < p->n_global_positions; i++) fprintf(f, " %.4f", p->global_positions[i]);
  fprintf(f, "\n");
}

void anim_stream_record_close(FILE *f) {
  if (f) fclose(f);
}
