/*
 * actor_machine.c: the MODE_MACHINE character kind: an action state machine
 * (core/machine/machine_character.h) on a binding of a loaded machine (machines.h)
 * to the actor's database, which it holds a reference to.
 *
 * Each tick runs the machine (events queued by send_events first) and
 * reports its displayed pose and its active state path, which the streams
 * carry (the path's names on the ticks it changed). Steering input reaches
 * its match states; character_state reports the path and times in state.
 * Nothing here runs for characters of other kinds.
 */
#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include "actor_machine.h"
#include "anim_error.h"
#include "machines.h"

typedef struct {
  anim_machine_character_t c;    /* first: srv_actor_machine_character */
  srv_bound_machine_t *bound;
  int states[ANIM_SM_MAX_DEPTH];
  uint32_t path[ANIM_SM_MAX_DEPTH];
  float times[ANIM_SM_MAX_DEPTH];
  char *names[ANIM_SM_MAX_DEPTH];
} machine_actor_t;

anim_machine_character_t *srv_actor_machine_character(srv_actor_t *a) {
  return a->kind == &srv_actor_machine ? &((machine_actor_t *)a->character)->c : NULL;
}

static void translate(void *character, vec3 step) {
  anim_machine_character_translate(&((machine_actor_t *)character)->c, step);
}

static void report(srv_actor_t *a) {
  machine_actor_t *m = a->character;
  anim_machine_character_t *c = &m->c;
  const anim_database_t *db = c->db;
  srv_actor_pose_t *p = &a->pose;
  p->nbones = db->nbones;
  p->positions = c->pose.positions;
  p->rotations = c->pose.rotations;
  p->frame = anim_machine_character_frame(c);
  p->transitioned = c->changed;
  p->contacts = p->frame >= 0 ? anim_database_contacts(db, p->frame) : 0;
  if (a->want & SRV_WANT_GLOBAL) anim_machine_character_global_pose(c);
  p->global_positions = c->global_positions;
  int depth = anim_machine_character_path(c, m->states, m->times, ANIM_SM_MAX_DEPTH);
  for (int l = 0; l < depth; l++) {
    m->path[l] = (uint32_t)m->states[l];
    m->names[l] = (char *)c->machine->states[m->states[l]].name;
  }
  p->depth = depth;
  p->state_path = m->path, p->state_times = m->times, p->state_names = m->names;
  p->state_changed = c->changed;
}

static void simulate(srv_actor_t *const *actors, int n, float dt, void *scratch) {
  for (int i = 0; i < n; i++) {
    machine_actor_t *m = actors[i]->character;
    int rc = anim_machine_character_tick(&m->c, dt);
    if (rc) actors[i]->error = rc;
    srv_actor_report(actors[i]);
  }
}

static int init(void *character, srv_db_entry_t *entry, const srv_actor_setup_t *setup, char *err, int errlen) {
  machine_actor_t *m = character;
  srv_bound_machine_t *bound = setup->shared;
  const anim_state_machine_t *sm = bound->machine;
  int rc = anim_machine_character_init(&m->c, sm, &entry->db, sm->has_match ? entry->indexes[ANIM_SEARCH_FAST] : NULL,
                                       &setup->request->params, setup->position, setup->facing);
  if (rc) {
    snprintf(err, (size_t)errlen, "machine %s: %s%s", bound->name, anim_strerror(rc),
             rc == ANIM_EINVAL && sm->has_match ? " (its match states need a database with trajectory features)" : "");
    return rc;
  }
  m->bound = srv_bound_machine_retain(bound);
  return 0;
}

static void character_free(void *character) {
  machine_actor_t *m = character;
  anim_machine_character_free(&m->c);
  srv_bound_machine_release(m->bound);
}

/* Its pose block, and with a match state its matcher's block and search scratch (NULL otherwise: 0). */
static size_t heap_bytes(const void *character) {
  const anim_machine_character_t *c = &((const machine_actor_t *)character)->c;
  return malloc_usable_size(c->memory) + malloc_usable_size(c->matcher.offset_positions) +
         malloc_usable_size(c->search_scratch);
}

static int set_input(void *character, const anim_controller_input_t *input) {
  return anim_machine_character_set_input(&((machine_actor_t *)character)->c, input);
}

static int state(const void *character, int offsets, srv_response_t *out) {
  const machine_actor_t *m = character;
  const anim_machine_character_t *c = &m->c;
  srv_character_state_response_t *s = &out->body.character_state;
  s->position = c->pose.positions[0];
  s->rotation = c->pose.rotations[0];
  s->velocity = c->pose.velocities[0];
  s->angular_velocity = c->pose.angular_velocities[0];
  s->frame = anim_machine_character_frame(c);
  s->range = s->frame >= 0 ? anim_database_range_of(c->db, s->frame) : -1;
  if (s->frame < 0) s->frame = 0;
  s->halflife = c->halflife;
  s->transitions = c->transitions;
  s->events_dropped = c->events_dropped;
  snprintf(s->machine, sizeof s->machine, "%s", m->bound->name);
  int states[ANIM_SM_MAX_DEPTH];
  float times[ANIM_SM_MAX_DEPTH];
  int depth = anim_machine_character_path(c, states, times, ANIM_SM_MAX_DEPTH);
  s->state_path = srv_response_alloc(out, (size_t)(depth + 1) * sizeof *s->state_path);
  s->state_times = srv_response_alloc(out, (size_t)(depth + 1) * sizeof *s->state_times);
  if (!s->state_path || !s->state_times) return ANIM_ENOMEM;
  for (int l = 0; l < depth; l++) {
    snprintf(s->state_path[l], sizeof s->state_path[l], "%s", c->machine->states[states[l]].name);
    s->state_times[l] = times[l];
  }
  s->depth = depth;
  s->time_since_transition = depth ? times[depth - 1] : 0.0f;
  return srv_actor_state_inertializer(&c->inertializer, offsets, out);
}

/* ---- set-up: the request's machine, bound to the database ---- */

static void bound_release(void *bound) { srv_bound_machine_release(bound); }

static int setup(const srv_actor_env_t *env, const srv_create_characters_request_t *request, srv_response_t *out,
                 void **out_shared, void (**out_release)(void *shared)) {
  const char *name = request->machine;
  const srv_machine_def_t *def = srv_machines_find(env->machines, name);
  if (!def)
    return srv_response_fail(out, ANIM_ENOTFOUND,
                             "create_characters.machine = \"%s\": no machine of that name is loaded", name);
  srv_bound_machine_t *bound;
  char err[200];
  int rc = srv_machines_bind(env->machines, def, out->entry, &bound, NULL, err, sizeof err);
  if (rc)
    return srv_response_fail(out, rc, "create_characters.machine = \"%s\": on database %s: %s", name,
                             out->entry->db.name, err);
  *out_shared = bound, *out_release = bound_release;
  return 0;
}

const srv_actor_kind_t srv_actor_machine = {
    .name = "machine",
    .setup = setup,
    .size = sizeof(machine_actor_t),
    .init = init,
    .free = character_free,
    .heap_bytes = heap_bytes,
    .simulate = simulate,
    .report = report,
    .translate = translate,
    .set_input = set_input,
    .inputs = 1u << ANIM_INPUT_STICK | 1u << ANIM_INPUT_VELOCITY | 1u << ANIM_INPUT_GOAL,
    .state = state,
};
