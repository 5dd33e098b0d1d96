/*
 * actor_matching.c: the motion-matching character kind (core/character/controller.h).
 *
 * A chunk's characters tick in two halves around one batch search: every
 * character's tick_begin (the ones due for a search write their query into
 * the chunk's scratch), the batch on the database's index, every tick_end
 * with its best match. Steering is the controller's input; character_state
 * reports its simulation, trajectory, inertializer and foot locks, and when
 * asked the query it would search with now.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "actor.h"
#include "actor_matching.h"
#include "anim_error.h"
#include "character/history.h"

/* Scratch of one chunk of n characters on a database of cols feature columns. */
typedef struct {
  float *queries;
  anim_search_query_t *search;
  anim_search_hit_t *hits;
  int *counts, *searcher;
  void *search_scratch;
} scratch_t;

static size_t align(size_t bytes) { return (bytes + 63) & ~(size_t)63; }

static size_t layout(const srv_db_entry_t *entry, int n, void *base, scratch_t *out) {
  size_t cols = (size_t)entry->db.features.cols, count = (size_t)n, at = 0;
  char *b = base;
  size_t sizes[6] = {align(count * cols * sizeof(float)), align(count * sizeof(anim_search_query_t)),
                     align(count * sizeof(anim_search_hit_t)), align(count * sizeof(int)), align(count * sizeof(int)),
                     align(anim_search_scratch_size(entry->indexes[ANIM_SEARCH_FAST], 1))};
  if (out) {
    out->queries = (float *)(b + at), at += sizes[0];
    out->search = (anim_search_query_t *)(b + at), at += sizes[1];
    out->hits = (anim_search_hit_t *)(b + at), at += sizes[2];
    out->counts = (int *)(b + at), at += sizes[3];
    out->searcher = (int *)(b + at), at += sizes[4];
    out->search_scratch = b + at;
    return 0;
  }
  for (int i = 0; i < 6; i++) at += sizes[i];
  return at;
}

static size_t scratch_bytes(const srv_db_entry_t *entry, int n) { return layout(entry, n, NULL, NULL); }

static void translate(void *character, vec3 step) { anim_controller_translate(character, step); }

static void report_pose(srv_actor_t *a) {
  anim_controller_t *c = a->character;
  const anim_database_t *db = c->db;
  srv_actor_pose_t *p = &a->pose;
  p->nbones = db->nbones;
  p->positions = c->pose_positions;
  p->rotations = c->pose_rotations;
  p->frame = c->frame;
  p->transitioned = c->transitioned;
  p->contacts = anim_controller_contacts(c); /* the displayed feet */
  if (a->want & SRV_WANT_GLOBAL) anim_controller_global_pose(c);
  p->global_positions = c->global_positions;
}

void srv_matching_simulate(srv_actor_t *const *actors, int n, float dt, void *scratch,
                           void (*after)(srv_actor_t *actor, float dt)) {
  const srv_db_entry_t *entry = actors[0]->entry;
  scratch_t s;
  layout(entry, n, scratch, &s);
  size_t cols = (size_t)entry->db.features.cols;
  int nsearch = 0;
  /* Each character's state is asked for one character ahead (a crowd's
   * state does not stay in cache: 1.3x the ticks a second at 10,000). */
  for (int i = 0; i < n; i++) {
    if (i + 1 < n) anim_controller_prefetch(actors[i + 1]->character);
    anim_controller_t *c = actors[i]->character;
    c->search_scale = (int)actors[i]->lod_scale;
    /* Not watched closely (lod_scale over 1: no subscription streams it at
     * full rate): foot locking skipped. Not for a kind with its own after
     * hook (a physical body tracks the locked feet). */
    c->skip_feet = actors[i]->lod_scale > 1 && !after;
    int rc =
        anim_controller_tick_begin(actors[i]->character, dt, s.queries + (size_t)nsearch * cols, &s.search[nsearch]);
    s.searcher[i] = rc == 1 ? nsearch++ : -1;
    if (rc < 0) actors[i]->error = rc;
  }
  /* One batch for the chunk: the same database and index for all. */
  if (nsearch && anim_search_batch(entry->indexes[ANIM_SEARCH_FAST], s.search, nsearch, 1, s.hits, s.counts,
                                   s.search_scratch) != 0)
    memset(s.counts, 0, (size_t)nsearch * sizeof *s.counts);
  for (int i = 0; i < n; i++) {
    if (i + 1 < n) anim_controller_prefetch(actors[i + 1]->character), __builtin_prefetch(actors[i + 1]->quantized);
    int k = s.searcher[i];
    int rc = anim_controller_tick_end(actors[i]->character, k >= 0 && s.counts[k] > 0 ? &s.hits[k] : NULL);
    if (rc) actors[i]->error = rc;
    if (after) after(actors[i], dt);
    srv_actor_report(actors[i]);
  }
}

static void simulate(srv_actor_t *const *actors, int n, float dt, void *scratch) {
  srv_matching_simulate(actors, n, dt, scratch, NULL);
}

static int init(void *character, srv_db_entry_t *entry, const srv_actor_setup_t *setup, char *err, int errlen) {
  anim_controller_t *c = character;
  int rc = anim_controller_init(c, &entry->db, entry->indexes[ANIM_SEARCH_FAST], &setup->request->params,
                                setup->position, setup->facing, setup->start_frame);
  if (rc) {
    snprintf(err, (size_t)errlen, "%s", anim_strerror(rc));
    return rc;
  }
  /* What the server reports of a character is its pose's positions and
   * rotations, and its root's motion (report_pose, state): the other bones'
   * rates would be computed each tick for nothing. */
  c->pose_bone_rates = 0;
  /* Spread periodic searches over the ticks of an interval. */
  anim_controller_stagger(c, (int)(setup->slot % (uint32_t)c->params.search_interval));
  return 0;
}

/* A history (service_history.c) goes with its character. */
static void character_free(void *character) {
  anim_controller_t *c = character;
  if (c->history) anim_history_free(c->history), free(c->history);
  anim_controller_free(c);
}

/* The per-bone block, the warp's poses, and a history as its size was
 * asked (the limits count that figure: srv_history_bytes). */
static size_t heap_bytes(const void *character) {
  const anim_controller_t *c = character;
  return malloc_usable_size(c->offset_positions) + malloc_usable_size(c->warp.buffers[0].positions) +
         (c->history ? sizeof *c->history + c->history->bytes : 0);
}

static anim_controller_t *controller(void *character) { return character; }

static int set_input(void *character, const anim_controller_input_t *input) {
  return anim_controller_set_input(character, input);
}

static int state(const void *character, int offsets, srv_response_t *out) {
  const anim_controller_t *c = character;
  srv_character_state_response_t *s = &out->body.character_state;
  srv_actor_state_sim(&c->sim, out);
  s->ntrajectory = c->ntrajectory;
  memcpy(s->trajectory, c->trajectory_positions, sizeof s->trajectory);
  s->frame = c->frame;
  s->range = anim_database_range_of(c->db, c->frame);
  s->time_since_transition = c->time_since_transition;
  s->halflife = c->params.inertialize_halflife;
  s->searches = c->searches, s->transitions = c->transitions;
  if (s->query) {
    anim_controller_query(c, s->query);
    s->nquery = c->db->features.cols;
  }
  srv_actor_state_feet(&c->feet, out);
  s->play_rate = c->warp.shown;
  s->warp_angle = c->warp.angle, s->warp_held = c->warp.settled;
  s->stride_scale = anim_warp_stride(&c->warp), s->root_steering = c->warp.steering;
  s->has_params = 1, s->params = c->params;
  return srv_actor_state_inertializer(&c->inertializer, offsets, out);
}

/* A replica replays a tick from its record (the transition, the hold,
 * the warp's shown rate and turn, stride and root steering: warping or
 * not). */
static const anim_controller_t *replica(const void *character) { return character; }

const srv_actor_kind_t srv_actor_matching = {
    .name = "motion_matching",
    .size = sizeof(anim_controller_t),
    .init = init,
    .free = character_free,
    .heap_bytes = heap_bytes,
    .scratch_bytes = scratch_bytes,
    .simulate = simulate,
    .report = report_pose,
    .translate = translate,
    .set_input = set_input,
    .inputs = 1u << ANIM_INPUT_STICK | 1u << ANIM_INPUT_VELOCITY | 1u << ANIM_INPUT_GOAL,
    .state = state,
    .replica = replica,
    .controller = controller,
};
