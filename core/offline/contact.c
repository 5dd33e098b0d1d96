/* contact.c: foot contacts of a database under construction (see contact.h). */
#include <math.h>
#include "offline/contact.h"

void anim_contacts_detect(anim_database_t *db, float height, float speed) {
  int nb = db->nbones, nc = db->ncontacts;
  for (int r = 0; r < db->nranges; r++) {
    int a = db->ranges[r].start, z = db->ranges[r].stop;
    for (int c = 0; c < nc; c++) {
      int bone = db->contact_bones[c];
      float lowest = 1e30f;
      for (int f = a; f < z; f++) lowest = fminf(lowest, db->global_positions[(size_t)f * (size_t)nb + (size_t)bone].y);
      for (int f = a; f < z; f++) {
        size_t k = (size_t)f * (size_t)nb + (size_t)bone;
        vec3 v = db->global_velocities[k];
        float horizontal = sqrtf(v.x * v.x + v.z * v.z);
        db->contacts[(size_t)f * (size_t)nc + (size_t)c] =
            db->global_positions[k].y < lowest + height && horizontal < speed;
      }
      for (int f = a + 1; f + 1 < z; f++) {
        uint8_t *prev = &db->contacts[(size_t)(f - 1) * (size_t)nc + (size_t)c];
        uint8_t *cur = prev + nc, *next = cur + nc;
        if (*prev == *next && *cur != *prev) *cur = *prev;
      }
    }
  }
}

