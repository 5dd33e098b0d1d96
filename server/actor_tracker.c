/*
 * actor_tracker.c: the tracker-driven character kind (MODE_TRACKER): a
 * full-body pose fitted every tick to a few tracked points (core/fit/pose_fit.h)
 * that a client sends with set_trackers, every tick or less often.
 *
 * Each tick feeds the fitter one measurement per tracker. A tracker updated
 * since the last tick gives its new position; between updates it is
 * predicted at its velocity (the client's, else the least-squares slope of
 * its last ANIM_POSE_FIT_HISTORY updates over their arrival times), and the
 * fitter's goal springs and its prior (the database frame a search on the
 * trackers found, played on and inertialized) carry the rest of the body.
 * A tracker the client reports lost, or not updated for hold_seconds, is
 * absent for the fitter, which lets the joints only it held fall back to
 * the prior smoothly.
 *
 * A set_trackers named for a tick ahead (set_trackers.tick) waits in the
 * character until the tick it names, and is then taken as if it had come
 * just before that tick: a client that knows its measurements in advance
 * (a recorded take, the tests' tracker feed) stays in step with the server
 * however late the loaded machine lets it send. The character counts the
 * wait in its own clock's seconds (the crowd's ticks times the period; a
 * late tick that folds skipped deadlines into its dt takes every set due
 * by its end, oldest tick first). The sets waiting are one block of
 * SRV_TRACKERS_MAX_PENDING, allocated on the loop at the first set ahead.
 *
 * Before its first tracker arrives the character shows its start frame at
 * its placement; afterwards the trackers place it (world space).
 *
 * The characters of a chunk are fitted one after the other: a fit is a
 * Gauss-Newton solve of its own, and the core's batch search is a loop of
 * single searches, so batching them would share nothing. What is not
 * here: the model (fit_models.h, built before creation and shared), the
 * checks of the codec (request_fit.h).
 */
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "actor.h"
#include "anim_error.h"
#include "fit_models.h"
#include "pose/kinematics.h"

#define HISTORY ANIM_POSE_FIT_HISTORY

typedef struct {
  int present;            /* the client's last word: tracked */
  int fresh;              /* updated since the last tick */
  anim_tracker_input_t last; /* the last update (position, orientation, velocity, weight) */
  int client_velocity;    /* last.velocity came from the client */
  double time;            /* the character's clock at the tick that applied the last update */
  vec3 history[HISTORY];  /* recent updates, oldest first, and their times */
  double history_time[HISTORY];
  int nhistory;
} tracker_t;

/* A set_trackers waiting for its tick. */
typedef struct {
  double due;   /* the character's clock at the end of the tick before it, plus a margin */
  int reset;
  anim_tracker_input_t inputs[ANIM_POSE_FIT_MAX_TRACKERS]; /* creation order */
} pending_t;

typedef struct {
  srv_fit_model_t *model; /* a reference */
  const anim_database_t *db;
  anim_pose_fitter_t fitter;
  int ntrackers;
  int order[ANIM_POSE_FIT_MAX_TRACKERS]; /* creation index -> model tracker */
  const char *bones[ANIM_POSE_FIT_MAX_TRACKERS]; /* creation order, the skeleton's names */
  tracker_t trackers[ANIM_POSE_FIT_MAX_TRACKERS];
  float hold_seconds;
  double clock;           /* simulated seconds */
  int started;            /* the fitter has shown a pose */
  int stagger;            /* frames the first search interval is shortened by (the slot's share) */
  int reset;              /* forget the user at the next tick */
  uint64_t transitions;   /* the fitter's count at the last report */
  int start_frame;
  vec3 *idle_positions, *idle_globals; /* before the first tracker: the start frame at the placement */
  quat *idle_rotations;
  pending_t *pending;     /* SRV_TRACKERS_MAX_PENDING sets ahead (NULL until the first), npending of them used */
  int npending;
} character_t;

/* ---- trackers -------------------------------------------------------------------- */

/* Least-squares slope of positions over their times (m/s); 0 with fewer than two. */
static vec3 history_slope(const tracker_t *t) {
  if (t->nhistory < 2) return vec3_zero();
  double mean_t = 0.0;
  vec3 mean_p = vec3_zero();
  for (int i = 0; i < t->nhistory; i++) mean_t += t->history_time[i], mean_p = vec3_add(mean_p, t->history[i]);
  mean_t /= t->nhistory;
  mean_p = vec3_scale(mean_p, 1.0f / (float)t->nhistory);
  double stt = 0.0, stx = 0.0, sty = 0.0, stz = 0.0;
  for (int i = 0; i < t->nhistory; i++) {
    double dt = t->history_time[i] - mean_t;
    vec3 dp = vec3_sub(t->history[i], mean_p);
    stt += dt * dt, stx += dt * dp.x, sty += dt * dp.y, stz += dt * dp.z;
  }
  if (!(stt > 0.0)) return vec3_zero();
  return vec3_make((float)(stx / stt), (float)(sty / stt), (float)(stz / stt));
}

/* The update applied by this tick (clock: its end): into the history. */
static void take_update(tracker_t *t, double clock) {
  t->fresh = 0;
  t->time = clock;
  if (t->nhistory == HISTORY) {
    memmove(t->history, t->history + 1, sizeof(vec3) * (HISTORY - 1));
    memmove(t->history_time, t->history_time + 1, sizeof(double) * (HISTORY - 1));
    t->nhistory--;
  }
  t->history[t->nhistory] = t->last.position;
  t->history_time[t->nhistory++] = clock;
  if (!t->client_velocity) t->last.velocity = history_slope(t);
}

/* The fitter's input for tracker t at the end of this tick. */
static anim_tracker_input_t predict(tracker_t *t, double clock, float hold_seconds) {
  anim_tracker_input_t in;
  memset(&in, 0, sizeof in);
  if (!t->present) return in;
  if (t->fresh) take_update(t, clock);
  double age = clock - t->time;
  if (age > hold_seconds) { /* stale: lost until the next update */
    t->present = 0, t->nhistory = 0;
    return in;
  }
  in = t->last;
  in.present = 1;
  in.position = vec3_add(t->last.position, vec3_scale(t->last.velocity, (float)age));
  in.has_velocity = 1;
  return in;
}

/* ---- the kind -------------------------------------------------------------------- */

static void character_free(void *character) {
  character_t *c = character;
  anim_pose_fitter_free(&c->fitter);
  free(c->idle_positions);
  free(c->pending);
  srv_fit_model_release(c->model);
  memset(c, 0, sizeof *c);
}

/* The fitter's memory and the idle pose's block. */
static size_t heap_bytes(const void *character) {
  const character_t *c = character;
  return (c->fitter.owns_memory ? malloc_usable_size(c->fitter.memory) : 0) + malloc_usable_size(c->idle_positions) +
         malloc_usable_size(c->pending);
}

/* The start frame at the placement, shown until the first tracker arrives. */
static int idle_pose(character_t *c, const srv_actor_setup_t *setup) {
  const anim_database_t *db = c->db;
  size_t n = (size_t)db->nbones;
  char *block = malloc(n * (2 * sizeof(vec3) + 2 * sizeof(quat)));
  if (!block) return ANIM_ENOMEM;
  c->idle_positions = (vec3 *)block;
  c->idle_globals = c->idle_positions + n;
  c->idle_rotations = (quat *)(c->idle_globals + n);
  quat *global_rotations = c->idle_rotations + n;
  size_t base = (size_t)setup->start_frame * n;
  memcpy(c->idle_positions, db->local_positions + base, n * sizeof(vec3));
  memcpy(c->idle_rotations, db->local_rotations + base, n * sizeof(quat));
  c->idle_positions[0] = vec3_make(setup->position.x, c->idle_positions[0].y, setup->position.z);
  c->idle_rotations[0] = quat_from_angle_axis(setup->facing, vec3_make(0.0f, 1.0f, 0.0f));
  anim_fk(c->idle_globals, global_rotations, c->idle_positions, c->idle_rotations, db->skeleton.parents, db->nbones);
  return 0;
}

static int init(void *character, srv_db_entry_t *entry, const srv_actor_setup_t *setup, char *err, int errlen) {
  character_t *c = character;
  const srv_tracker_setup_t *ts = &setup->request->tracker;
  srv_fit_model_t *model = setup->shared;
  if (!model || !ts->present) {
    snprintf(err, (size_t)errlen, "no tracker setup");
    return ANIM_EINVAL;
  }
  c->db = &entry->db;
  srv_fit_key_t key;
  int rc = srv_fit_key_make(&key, c->db, ts->trackers, sizeof ts->trackers[0], ts->ntrackers, c->order, err, errlen);
  if (rc) return rc;
  c->ntrackers = ts->ntrackers;
  for (int i = 0; i < c->ntrackers; i++) c->bones[i] = c->db->skeleton.names[key.bones[c->order[i]]];
  c->hold_seconds = ts->hold_seconds;
  c->start_frame = setup->start_frame;
  c->stagger = (int)(setup->slot % (uint32_t)ts->params.search_interval);
  if ((rc = anim_pose_fitter_init(&c->fitter, &model->model, &ts->params, NULL, 0)) ||
      (rc = idle_pose(c, setup))) {
    character_free(c);
    snprintf(err, (size_t)errlen, "%s", anim_strerror(rc));
    return rc;
  }
  c->model = srv_fit_model_retain(model);
  return 0;
}

static void report(srv_actor_t *a) {
  character_t *c = a->character;
  const anim_database_t *db = c->db;
  srv_actor_pose_t *p = &a->pose;
  p->nbones = db->nbones;
  p->contacts = 0;
  p->transitioned = 0;
  if (!c->started) {
    p->positions = c->idle_positions, p->rotations = c->idle_rotations, p->global_positions = c->idle_globals;
    p->frame = c->start_frame;
    return;
  }
  const anim_pose_fitter_t *f = &c->fitter;
  p->positions = f->pose_positions, p->rotations = f->pose_rotations, p->global_positions = f->global_positions;
  p->frame = f->prior_frame;
  p->contacts = anim_database_contacts(db, f->prior_frame);
  p->transitioned = f->transitions != c->transitions;
  c->transitions = f->transitions;
}

/* One character's trackers as a client's word: a reset forgets the user
 * first; each tracker lost, or updated (fresh for the next prediction). */
static void take_trackers(character_t *c, const anim_tracker_input_t *inputs, int reset) {
  if (reset) {
    c->reset = 1;
    for (int k = 0; k < c->ntrackers; k++) memset(&c->trackers[k], 0, sizeof c->trackers[k]);
  }
  for (int k = 0; k < c->ntrackers; k++) {
    tracker_t *t = &c->trackers[k];
    const anim_tracker_input_t *u = &inputs[k];
    if (!u->present) {
      t->present = t->fresh = 0, t->nhistory = 0;
      continue;
    }
    t->present = t->fresh = 1;
    t->last = *u;
    t->client_velocity = u->has_velocity;
  }
}

/* The sets waiting whose tick this one is (its end: clock), oldest tick first. */
static void take_due(character_t *c) {
  for (;;) {
    int first = -1;
    for (int i = 0; i < c->npending; i++)
      if (c->pending[i].due < c->clock && (first < 0 || c->pending[i].due < c->pending[first].due)) first = i;
    if (first < 0) return;
    take_trackers(c, c->pending[first].inputs, c->pending[first].reset);
    c->pending[first] = c->pending[--c->npending];
  }
}

static void simulate(srv_actor_t *const *actors, int n, float dt, void *scratch) {
  (void)scratch;
  for (int i = 0; i < n; i++) {
    character_t *c = actors[i]->character;
    c->clock += dt;
    if (c->npending) take_due(c);
    if (c->reset) anim_pose_fitter_reset(&c->fitter), c->started = 0, c->reset = 0;
    anim_tracker_input_t in[ANIM_POSE_FIT_MAX_TRACKERS];
    memset(in, 0, sizeof in);
    for (int k = 0; k < c->ntrackers; k++) in[c->order[k]] = predict(&c->trackers[k], c->clock, c->hold_seconds);
    int rc = anim_pose_fitter_step(&c->fitter, in, dt);
    /* Characters that start together would search on the same ticks:
     * spread their searches over the interval, as motion matching does. */
    if (rc == 0 && !c->started) c->fitter.frames_since_search += c->stagger;
    if (rc == 0) c->started = 1;
    else if (rc != ANIM_ENOTFOUND) actors[i]->error = rc; /* ENOTFOUND: no tracker yet, the idle pose stays */
    srv_actor_report(actors[i]);
  }
}

static int set_trackers(void *character, const srv_character_trackers_t *in, double ahead, int apply, char *err,
                        int errlen) {
  character_t *c = character;
  if (!apply) {
    if (in->ntrackers != c->ntrackers) {
      snprintf(err, (size_t)errlen, ".trackers has %d trackers: the character tracks %d (its creation order)",
               in->ntrackers, c->ntrackers);
      return ANIM_EDIMENSION;
    }
    for (int k = 0; k < in->ntrackers; k++) {
      const char *bone = in->trackers[k].tracked.bone;
      if (bone && strcmp(bone, c->bones[k]) != 0) {
        snprintf(err, (size_t)errlen, ".trackers[%d].bone = \"%s\": the character's tracker %d is %s", k, bone, k,
                 c->bones[k]);
        return ANIM_EINVAL;
      }
    }
    if (ahead > 0.0 && c->npending >= SRV_TRACKERS_MAX_PENDING) {
      snprintf(err, (size_t)errlen, ": the character already holds %d sets for ticks ahead, at most %d", c->npending,
               SRV_TRACKERS_MAX_PENDING);
      return ANIM_ELIMIT;
    }
    if (ahead > 0.0 && !c->pending && !(c->pending = calloc(SRV_TRACKERS_MAX_PENDING, sizeof *c->pending))) {
      snprintf(err, (size_t)errlen, ": no memory for trackers ahead");
      return ANIM_ENOMEM;
    }
    return 0;
  }
  anim_tracker_input_t inputs[ANIM_POSE_FIT_MAX_TRACKERS];
  for (int k = 0; k < in->ntrackers; k++) inputs[k] = in->trackers[k].input;
  if (ahead <= 0.0) {
    take_trackers(c, inputs, in->reset);
    return 0;
  }
  /* Due at the tick that ends `ahead` after the next one's end: after this
   * clock's next tick, clock + ahead is the end of the tick before it (a
   * microsecond's margin against the sum's rounding). */
  /* Full only when this request lists the character again (each check
   * saw room): its last set, from this request, is for the same tick and
   * gives way to this one, as two sets for one tick do. */
  int again = c->npending >= SRV_TRACKERS_MAX_PENDING;
  pending_t *p = again ? &c->pending[c->npending - 1] : &c->pending[c->npending++];
  p->due = c->clock + ahead + 1e-6;
  p->reset = in->reset || (again && p->reset);
  memcpy(p->inputs, inputs, (size_t)in->ntrackers * sizeof *inputs);
  return 0;
}

static int state(const void *character, int offsets, srv_response_t *out) {
  const character_t *c = character;
  const anim_pose_fitter_t *f = &c->fitter;
  srv_character_state_response_t *s = &out->body.character_state;
  s->position = c->started ? f->root_position : c->idle_positions[0];
  s->rotation = c->started ? quat_from_angle_axis(f->root_yaw, vec3_make(0.0f, 1.0f, 0.0f)) : c->idle_rotations[0];
  s->angular_velocity = vec3_make(0.0f, c->started ? f->root_yaw_velocity : 0.0f, 0.0f);
  s->desired_rotation = s->rotation;
  s->frame = c->started ? f->prior_frame : c->start_frame;
  s->range = anim_database_range_of(c->db, s->frame);
  s->halflife = f->params.inertialize_halflife;
  s->searches = f->searches, s->transitions = f->transitions;
  s->scale = c->started ? f->scale : 1.0f;
  s->ntracker_residuals = c->ntrackers;
  for (int k = 0; k < c->ntrackers; k++) s->tracker_residuals[k] = c->started ? f->residuals[c->order[k]] : -1.0f;
  return srv_actor_state_inertializer(&f->prior_inertializer, offsets && c->started, out);
}

/* ---- set-up: the fit model of the tracked bones, cached per database ---- */

static int tracker_key(const srv_tracker_setup_t *setup, const anim_database_t *db, srv_fit_key_t *key,
                       srv_response_t *out) {
  int order[SRV_MAX_TRACKERS];
  char err[160];
  int rc =
      srv_fit_key_make(key, db, setup->trackers, sizeof setup->trackers[0], setup->ntrackers, order, err, sizeof err);
  return rc ? srv_response_fail(out, rc, "create_characters.tracker.trackers%s", err) : 0;
}

/* The cached model of the request's bones, else a build off the loop. */
static int prepare(const srv_create_characters_request_t *request, srv_response_t *out) {
  srv_fit_key_t key;
  int rc = tracker_key(&request->tracker, &out->entry->db, &key, out);
  if (rc) return rc;
  out->fit_model = srv_fit_cache_find(&out->entry->fit_models, &key);
  out->body.create_characters.build = !out->fit_model;
  return 0;
}

static int build(const srv_create_characters_request_t *request, srv_response_t *out) {
  srv_fit_key_t key;
  char err[160];
  int rc = tracker_key(&request->tracker, &out->entry->db, &key, out);
  if (!rc && (rc = srv_fit_model_build(&out->entry->db, &key, &out->fit_model, err, sizeof err)))
    return srv_response_fail(out, rc, "create_characters.tracker.trackers: %s", err);
  return rc;
}

static void built(const srv_create_characters_request_t *request, srv_response_t *out) {
  (void)request;
  out->fit_model = srv_fit_cache_put(&out->entry->fit_models, out->fit_model);
}

/* The characters share the model the response holds. */
static int setup(const srv_actor_env_t *env, const srv_create_characters_request_t *request, srv_response_t *out,
                 void **out_shared, void (**out_release)(void *shared)) {
  (void)env, (void)request;
  *out_shared = out->fit_model, *out_release = NULL;
  return 0;
}

const srv_actor_kind_t srv_actor_tracker = {
    .name = "tracker",
    .size = sizeof(character_t),
    .prepare = prepare,
    .build = build,
    .built = built,
    .setup = setup,
    .init = init,
    .free = character_free,
    .heap_bytes = heap_bytes,
    .simulate = simulate,
    .report = report,
    .set_trackers = set_trackers,
    .state = state,
};
