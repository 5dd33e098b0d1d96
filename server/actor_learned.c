/*
 * actor_learned.c: the learned-motion-matching character kind (core/learned/lmm.h):
 * three networks instead of a database's poses and search.
 *
 * Learned characters live on a database with networks: the database "lmm"
 * (--lmm), whose skeleton is the reference networks'
 * (core/offline/lmm_database.h), or any database with networks trained on
 * it (tools/lmm_train: NAME.lmm/ beside NAME.animdb, --lmm-default for the
 * embedded default), whose skeleton is the database's; so
 * describe_database, pose buffers and streams serve them as any other. A chunk's characters tick
 * as one batch (one product per network for the chunk), in the chunk's
 * scratch: their pointers, then the networks' floats. Steering is the
 * controller's input; character_state reports the simulation, the
 * predicted trajectory and the inertializer. Feet are locked as a
 * motion-matching character's (lmm.h, anim_lmm_character_feet) on the
 * legs of the database "lmm"; the stream's contacts are the feet shown
 * planted. Its play rate follows motion matching's warp parameters
 * (set_character_params: play_rate_min/max, no_play_rate) and
 * character_state reports it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "actor.h"
#include "anim_error.h"
#include "learned/lmm.h"

static size_t pointers_bytes(int n) { return ((size_t)n * sizeof(anim_lmm_character_t *) + 63) & ~(size_t)63; }

static size_t scratch_bytes(const srv_db_entry_t *entry, int n) {
  return pointers_bytes(n) + anim_lmm_scratch_floats(entry->lmm, n) * sizeof(float);
}

static void translate(void *character, vec3 step) { anim_lmm_translate(character, step); }

static void report(srv_actor_t *a) {
  anim_lmm_character_t *c = a->character;
  srv_actor_pose_t *p = &a->pose;
  p->nbones = c->nets->nbones;
  p->positions = c->pose.positions;
  p->rotations = c->pose.rotations;
  p->frame = -1; /* no database frame: the networks' own pose */
  p->transitioned = c->transitioned;
  p->contacts = anim_lmm_contacts(c); /* with locked feet, the feet shown planted */
  if (a->want & SRV_WANT_GLOBAL) anim_lmm_global_pose(c);
  p->global_positions = c->global_positions;
}

static void simulate(srv_actor_t *const *actors, int n, float dt, void *scratch) {
  anim_lmm_character_t **characters = scratch;
  for (int i = 0; i < n; i++) characters[i] = actors[i]->character;
  int rc = anim_lmm_tick_batch(characters, n, dt, (float *)((char *)scratch + pointers_bytes(n)));
  for (int i = 0; i < n; i++) {
    if (rc) actors[i]->error = rc;
    srv_actor_report(actors[i]);
  }
}

static int init(void *character, srv_db_entry_t *entry, const srv_actor_setup_t *setup, char *err, int errlen) {
  anim_lmm_character_t *c = character;
  if (!entry->lmm) {
    snprintf(err, (size_t)errlen, "database %s has no learned networks: MODE_LEARNED runs on database lmm (--lmm) "
             "or on one with networks trained on it (NAME.lmm/ beside its file, --lmm-default)", entry->db.name);
    return ANIM_EUNSUPPORTED;
  }
  anim_controller_params_t params = setup->request->params;
  if (!setup->request->search_interval_given) params.search_interval = 6; /* anim_lmm_params_default's */
  float *scratch = malloc(anim_lmm_scratch_floats(entry->lmm, 1) * sizeof *scratch); /* once, at creation */
  int rc = scratch ? anim_lmm_character_init(c, entry->lmm, &params, setup->position, setup->facing, scratch)
                   : ANIM_ENOMEM;
  free(scratch);
  /* The feet: locked on the legs of the learned skeleton's database (the one it lives on). */
  if (!rc) rc = anim_lmm_character_feet(c, &entry->db);
  if (rc) {
    snprintf(err, (size_t)errlen, "%s", anim_strerror(rc));
    return rc;
  }
  /* Spread periodic projections over the frames of an interval. */
  anim_lmm_stagger(c, (int)(setup->slot % (uint32_t)params.search_interval));
  return 0;
}

static int set_input(void *character, const anim_controller_input_t *input) {
  return anim_lmm_set_input(character, input);
}

static int state(const void *character, int offsets, srv_response_t *out) {
  const anim_lmm_character_t *c = character;
  srv_character_state_response_t *s = &out->body.character_state;
  srv_actor_state_sim(&c->sim, out);
  s->ntrajectory = c->ntrajectory;
  memcpy(s->trajectory, c->trajectory_positions, sizeof(vec3) * (size_t)c->ntrajectory);
  s->frame = 0, s->range = -1;
  s->time_since_transition = c->time_since_projection;
  s->halflife = c->params.inertialize_halflife;
  s->searches = c->projections, s->transitions = c->transitions;
  s->play_rate = c->rate;
  srv_actor_state_feet(&c->feet, out);
  return srv_actor_state_inertializer(&c->inertializer, offsets, out);
}

static void get_params(const void *character, anim_controller_params_t *out_params) {
  *out_params = ((const anim_lmm_character_t *)character)->params;
}

/* Every field applies (the warps other than the rate are read by no one),
 * so a refusal is the validation's as a whole: err left empty. */
static int set_params(void *character, const anim_controller_params_t *next, char *err, int errlen) {
  (void)err, (void)errlen;
  return anim_lmm_set_params(character, next);
}

const srv_actor_kind_t srv_actor_learned = {
    .name = "learned",
    .size = sizeof(anim_lmm_character_t),
    .init = init,
    .scratch_bytes = scratch_bytes,
    .simulate = simulate,
    .report = report,
    .translate = translate,
    .set_input = set_input,
    .inputs = 1u << ANIM_INPUT_STICK | 1u << ANIM_INPUT_VELOCITY | 1u << ANIM_INPUT_GOAL,
    .state = state,
    .get_params = get_params,
    .set_params = set_params,
};
