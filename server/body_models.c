/*
 * body_models.c: a database's body model, built on the pool, installed on
 * the entry on the loop (see body_models.h).
 */
#include "body_models.h"

#include "anim_error.h"
#include "body.h"

static void model_free(struct anim_physics_model *model) { anim_physics_model_free(model); }
static void held_free(void *held) { anim_physics_model_free(held); }

anim_physics_model_t *srv_body_model_build(srv_response_t *out, const char *field) {
  char err[200] = "";
  anim_physics_model_t *model = anim_physics_model_create(&out->entry->db, NULL, err, sizeof err);
  if (!model) {
    srv_response_fail(out, ANIM_EUNSUPPORTED, "%s: database %s has no body: %s", field, out->entry->db.name, err);
    return NULL;
  }
  /* Bodies for a crowd: 2.3 MB and 0.3-0.6 ms each instead of 23 MB and
   * 4 ms (a body falling and lying peaked at 91 rows, 22 contacts and
   * 23,143 stack values: physics/body.h). */
  anim_physics_model_set_sizes(model, 131072, 250, 64);
  out->held = model, out->release_held = held_free;
  return model;
}

anim_physics_model_t *srv_body_model_install(srv_response_t *out) {
  srv_db_entry_t *entry = out->entry;
  if (out->held && out->release_held == held_free && !entry->physics) {
    entry->physics = out->held, entry->physics_free = model_free;
    out->held = NULL, out->release_held = NULL;
  }
  return entry->physics;
}
