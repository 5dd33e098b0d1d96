/* tracker_feed.c: a held-out clip fed to a tracker character over the wire (see tracker_feed.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "database/database.h"
#include "offline/dbfile_write.h"
#include "fit_eval.h"
#include "tracker_feed.h"

#define TIMEOUT_MS 20000

void tracker_feed_options_default(tracker_feed_options_t *o) {
  memset(o, 0, sizeof *o);
  static const char *const bones[] = {"Head", "LeftHand", "RightHand", "Hips"};
  for (int k = 0; k < 4; k++) o->bones[k] = bones[k];
  o->ntrackers = 4;
  o->pelvis = "Hips";
  o->range = -1;
  o->noise = 0.005f;
  o->drop_tracker = -1;
  o->every = 1;
  o->ahead = TRACKER_FEED_AHEAD;
  o->seed = 0x9e3779b9u;
}

int tracker_feed_write_database(const anim_database_t *db, char *dir, size_t dir_size) {
  snprintf(dir, dir_size, "/tmp/animserver-fit-XXXXXX");
  if (!mkdtemp(dir)) return -1;
  char path[512], err[256];
  snprintf(path, sizeof path, "%s/%s.animdb", dir, db->name);
  return anim_dbfile_write(db, path, err, sizeof err) == 0 ? 0 : -1;
}

/* The error code of a response (0 when it has a body), -1 when none came. */
static int code_of(Animserver__Response *r) {
  int code = !r ? -1 : r->error ? -(int)r->error->code : 0;
  if (r && r->error) fprintf(stderr, "tracker_feed: %s\n", r->error->message);
  return code;
}

int tracker_feed_load(anim_test_raw_t *c, const char *name) {
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__LoadDatabaseRequest load = ANIMSERVER__LOAD_DATABASE_REQUEST__INIT;
  load.name = (char *)name;
  request.body_case = ANIMSERVER__REQUEST__BODY_LOAD_DATABASE, request.load_database = &load;
  Animserver__Response *r = anim_test_raw_call(c, &request, TIMEOUT_MS);
  int rc = code_of(r);
  if (r) animserver__response__free_unpacked(r, NULL);
  return rc;
}

int tracker_feed_create(anim_test_raw_t *c, const char *database, const tracker_feed_options_t *o, uint64_t *out_id) {
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__CreateCharactersRequest create = ANIMSERVER__CREATE_CHARACTERS_REQUEST__INIT;
  Animserver__TrackerSetup setup = ANIMSERVER__TRACKER_SETUP__INIT;
  Animserver__TrackedBone bones[TRACKER_FEED_MAX], *list[TRACKER_FEED_MAX];
  for (int k = 0; k < o->ntrackers; k++) {
    animserver__tracked_bone__init(&bones[k]);
    bones[k].bone = (char *)o->bones[k];
    list[k] = &bones[k];
  }
  setup.n_trackers = (size_t)o->ntrackers, setup.trackers = list;
  create.database = (char *)database;
  create.mode = ANIMSERVER__CHARACTER_MODE__MODE_TRACKER;
  create.tracker = &setup;
  request.body_case = ANIMSERVER__REQUEST__BODY_CREATE_CHARACTERS, request.create_characters = &create;
  Animserver__Response *r = anim_test_raw_call(c, &request, TIMEOUT_MS);
  int rc = code_of(r);
  if (rc == 0) *out_id = r->create_characters->characters[0];
  if (r) animserver__response__free_unpacked(r, NULL);
  return rc;
}

int tracker_feed_destroy(anim_test_raw_t *c, uint64_t id) {
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__DestroyCharactersRequest d = ANIMSERVER__DESTROY_CHARACTERS_REQUEST__INIT;
  d.n_characters = 1, d.characters = &id;
  request.body_case = ANIMSERVER__REQUEST__BODY_DESTROY_CHARACTERS, request.destroy_characters = &d;
  Animserver__Response *r = anim_test_raw_call(c, &request, TIMEOUT_MS);
  int rc = code_of(r);
  if (r) animserver__response__free_unpacked(r, NULL);
  return rc;
}

/* ---- one run ---- */

typedef struct {
  const tracker_feed_options_t *o;
  const anim_database_t *truth;
  int tracked[TRACKER_FEED_MAX]; /* bone index of each tracker */
  int *eval, *is_tracked;
  unsigned seed;
  vec3 sent[TRACKER_FEED_MAX];
  int nsent;
  double sum, sum_tracked, sum_untracked, sum_drop;
  long n, n_tracked, n_untracked, n_drop;
} feed_t;

static int dropping(const feed_t *f, const anim_range_t *range, int frame) {
  float t = (float)(frame - range->start) / f->truth->frame_rate;
  return f->o->drop_tracker >= 0 && t >= f->o->drop_start && t < f->o->drop_start + f->o->drop_seconds;
}

/* Sends the trackers of truth frame `frame` for tick `tick` (0: the next;
 * reset: a new user first); *out_request its request id. */
static int send_frame(anim_test_raw_t *c, feed_t *f, uint64_t id, const anim_range_t *range, int frame, int reset,
                      uint64_t tick, uint64_t *out_request) {
  const anim_database_t *truth = f->truth;
  Animserver__TrackerInput inputs[TRACKER_FEED_MAX], *list[TRACKER_FEED_MAX];
  Animserver__Vec3 positions[TRACKER_FEED_MAX];
  f->nsent = 0;
  for (int k = 0; k < f->o->ntrackers; k++) {
    animserver__tracker_input__init(&inputs[k]);
    animserver__vec3__init(&positions[k]);
    list[k] = &inputs[k];
    vec3 p = truth->global_positions[(size_t)frame * (size_t)truth->nbones + (size_t)f->tracked[k]];
    vec3 noise = vec3_make(fit_eval_gaussian(&f->seed), fit_eval_gaussian(&f->seed), fit_eval_gaussian(&f->seed));
    p = vec3_add(p, vec3_scale(noise, f->o->noise));
    if (k == f->o->drop_tracker && dropping(f, range, frame)) {
      inputs[k].lost = 1;
      continue;
    }
    positions[k].x = p.x, positions[k].y = p.y, positions[k].z = p.z;
    inputs[k].position = &positions[k];
    f->sent[f->nsent++] = p;
  }
  Animserver__CharacterTrackers ct = ANIMSERVER__CHARACTER_TRACKERS__INIT, *cts = &ct;
  ct.character = id, ct.reset = reset;
  ct.n_trackers = (size_t)f->o->ntrackers, ct.trackers = list;
  Animserver__SetTrackersRequest set = ANIMSERVER__SET_TRACKERS_REQUEST__INIT;
  set.n_characters = 1, set.characters = &cts;
  set.tick = tick;
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  request.body_case = ANIMSERVER__REQUEST__BODY_SET_TRACKERS, request.set_trackers = &set;
  int rc = anim_test_raw_send(c, &request);
  *out_request = request.id;
  return rc;
}

static void compare(feed_t *f, const anim_range_t *range, int r, int frame, const float *pose,
                    tracker_feed_result_t *out) {
  const anim_database_t *truth = f->truth;
  int nb = truth->nbones;
  const vec3 *tg = truth->global_positions + (size_t)frame * (size_t)nb;
  vec3 fit[ANIM_MAX_BONES];
  for (int b = 0; b < nb; b++) fit[b] = vec3_make(pose[3 * b], pose[3 * b + 1], pose[3 * b + 2]);
  int drop_bone = f->o->drop_tracker >= 0 && dropping(f, range, frame) ? f->tracked[f->o->drop_tracker] : -1;
  for (int b = 0; b < nb; b++) {
    if (!f->eval[b]) continue;
    double e = vec3_length(vec3_sub(fit[b], tg[b]));
    f->sum += e, f->n++;
    if (f->is_tracked[b]) f->sum_tracked += e, f->n_tracked++;
    else f->sum_untracked += e, f->n_untracked++;
    if (b == drop_bone) f->sum_drop += e, f->n_drop++;
    if (e > out->worst_error) out->worst_error = e, out->worst_bone = b, out->worst_frame = frame;
  }
  out->frames++;
  if (f->o->frame_cb) f->o->frame_cb(f->o->user, r, frame, fit, tg, f->sent, f->nsent);
}

static int subscribe(anim_test_raw_t *c, uint64_t id) {
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__SubscribeRequest sub = ANIMSERVER__SUBSCRIBE_REQUEST__INIT;
  sub.n_characters = 1, sub.characters = &id;
  sub.global_positions = 1;
  request.body_case = ANIMSERVER__REQUEST__BODY_SUBSCRIBE, request.subscribe = &sub;
  Animserver__Response *r = anim_test_raw_call(c, &request, TIMEOUT_MS);
  int rc = code_of(r);
  if (r) animserver__response__free_unpacked(r, NULL);
  return rc;
}

static float final_scale(anim_test_raw_t *c, uint64_t id) {
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__CharacterStateRequest st = ANIMSERVER__CHARACTER_STATE_REQUEST__INIT;
  st.character = id;
  request.body_case = ANIMSERVER__REQUEST__BODY_CHARACTER_STATE, request.character_state = &st;
  Animserver__Response *r = anim_test_raw_call(c, &request, TIMEOUT_MS);
  float scale = r && !r->error ? r->character_state->scale : 0.0f;
  if (r) animserver__response__free_unpacked(r, NULL);
  return scale;
}

/* The ticks the sends in flight were meant for, in order (answers come in order). */
#define IN_FLIGHT 256
typedef struct {
  uint64_t tick[IN_FLIGHT];
  int head, n;
} in_flight_t;

/* Sends the frames of ticks (sent, last] that are due (every), each named
 * for its tick; *sent becomes last. */
static int send_ahead(anim_test_raw_t *c, feed_t *f, uint64_t id, const anim_range_t *range, uint64_t base_tick,
                      uint64_t *sent, uint64_t last, in_flight_t *flight) {
  int every = f->o->every > 0 ? f->o->every : 1;
  for (uint64_t tick = *sent + 1; tick <= last; tick++) {
    int frame = range->start + (int)(tick - base_tick);
    if (frame >= range->stop) break;
    if ((frame - range->start) % every) continue;
    uint64_t request;
    if (send_frame(c, f, id, range, frame, 0, tick, &request) != 0) return -1;
    if (flight->n < IN_FLIGHT) flight->tick[(flight->head + flight->n++) % IN_FLIGHT] = tick;
  }
  *sent = last;
  return 0;
}

/* Plays range r: the first frame with a reset (its answer names the tick
 * that shows it), then tick by tick, in one of two ways:
 * - ahead > 0, in step with the server: each frame named for its tick and
 *   sent `ahead` ticks before it (set_trackers.tick); the server holds it
 *   until then, so a client the loaded machine lets send late still has
 *   its trackers applied at the ticks they are for.
 * - ahead 0, as a real-time source: the trackers for tick T + 1 go when
 *   every pose that has arrived is read: when the client runs behind the
 *   server (a loaded machine), it sends the newest tick's next frame
 *   rather than each stale one in turn.
 * An answer naming another tick than the send was meant for counts in
 * `late`. */
static int play_range(anim_test_raw_t *c, feed_t *f, uint64_t id, int r, int ahead, tracker_feed_result_t *out,
                      char *err, int errlen) {
  const anim_range_t *range = &f->truth->ranges[r];
  /* base_tick 0: the reset's answer not read yet; sent: the last tick sent ahead for */
  uint64_t reset_request, request, base_tick = 0, sent = 0, send_tick = 0;
  int send_frame_index = -1; /* real time: the frame to send once caught up, or -1 */
  in_flight_t flight = {{0}, 0, 0};
  if (send_frame(c, f, id, range, range->start, 1, 0, &reset_request) != 0)
    return snprintf(err, (size_t)errlen, "send failed"), -1;
  int every = f->o->every > 0 ? f->o->every : 1;
  for (;;) {
    Animserver__ServerMessage *m = anim_test_raw_next(c, send_frame_index >= 0 ? 1 : TIMEOUT_MS);
    if (!m && send_frame_index >= 0) { /* nothing more has arrived: send */
      if (send_frame(c, f, id, range, send_frame_index, 0, 0, &request) != 0)
        return snprintf(err, (size_t)errlen, "send failed"), -1;
      if (flight.n < IN_FLIGHT) flight.tick[(flight.head + flight.n++) % IN_FLIGHT] = send_tick;
      send_frame_index = -1;
      continue;
    }
    if (!m) return snprintf(err, (size_t)errlen, "no answer or pose within %d ms", TIMEOUT_MS), -1;
    int done = 0, rc = 0;
    if (m->kind_case == ANIMSERVER__SERVER_MESSAGE__KIND_RESPONSE) {
      const Animserver__Response *res = m->response;
      if (res->error) rc = (snprintf(err, (size_t)errlen, "set_trackers: %s", res->error->message), -1);
      else if (res->body_case == ANIMSERVER__RESPONSE__BODY_SET_TRACKERS) {
        if (res->id == reset_request) {
          base_tick = res->set_trackers->tick, sent = base_tick;
          if (ahead > 0 && send_ahead(c, f, id, range, base_tick, &sent, base_tick + (uint64_t)ahead, &flight))
            rc = (snprintf(err, (size_t)errlen, "send failed"), -1);
        } else if (flight.n) {
          out->late += res->set_trackers->tick != flight.tick[flight.head];
          flight.head = (flight.head + 1) % IN_FLIGHT, flight.n--;
        }
      }
    } else if (m->kind_case == ANIMSERVER__SERVER_MESSAGE__KIND_STREAM && base_tick && m->stream->tick >= base_tick &&
               m->stream->n_poses == 1 && m->stream->poses[0]->character == id) {
      uint64_t tick = m->stream->tick;
      int frame = range->start + (int)(tick - base_tick);
      const Animserver__CharacterPose *p = m->stream->poses[0];
      if (frame >= range->stop) done = 1;
      else if (p->n_global_positions == 3 * (size_t)f->truth->nbones)
        compare(f, range, r, frame, p->global_positions, out);
      int next = frame + 1;
      if (next >= range->stop) done = 1;
      else if (ahead > 0) {
        if (send_ahead(c, f, id, range, base_tick, &sent, tick + (uint64_t)ahead, &flight))
          rc = (snprintf(err, (size_t)errlen, "send failed"), -1);
      } else if ((next - range->start) % every == 0 || send_frame_index >= 0) {
        /* Due, or one due not sent yet (behind): the newest frame goes. */
        send_frame_index = next, send_tick = tick + 1;
      }
    }
    animserver__server_message__free_unpacked(m, NULL);
    if (rc) return -1;
    if (done) return 0;
  }
}

int tracker_feed_run(anim_test_raw_t *c, uint64_t id, const tracker_feed_options_t *o, tracker_feed_result_t *out,
                     char *err, int errlen) {
  memset(out, 0, sizeof *out);
  out->worst_bone = out->worst_frame = -1;
  const anim_database_t *truth = o->truth;
  feed_t f;
  memset(&f, 0, sizeof f);
  f.o = o, f.truth = truth, f.seed = o->seed;
  int nb = truth->nbones, pelvis = anim_skeleton_find(&truth->skeleton, o->pelvis);
  for (int k = 0; k < o->ntrackers; k++)
    if ((f.tracked[k] = anim_skeleton_find(&truth->skeleton, o->bones[k])) < 0)
      return snprintf(err, (size_t)errlen, "no bone %s", o->bones[k]), -1;
  if (pelvis < 0) return snprintf(err, (size_t)errlen, "no pelvis %s", o->pelvis), -1;
  f.eval = calloc((size_t)nb, sizeof(int));
  f.is_tracked = calloc((size_t)nb, sizeof(int));
  int rc = !f.eval || !f.is_tracked ? -1 : 0;
  for (int b = 0; b < nb && !rc; b++)
    for (int a = b; a >= 0; a = truth->skeleton.parents[a]) f.eval[b] |= a == pelvis;
  for (int k = 0; k < o->ntrackers && !rc; k++) f.is_tracked[f.tracked[k]] = 1;
  if (!rc && subscribe(c, id) != 0) rc = -1, snprintf(err, (size_t)errlen, "subscribe failed");
  for (int r = 0; r < truth->nranges && !rc; r++)
    if (o->range < 0 || o->range == r)
      rc = play_range(c, &f, id, r, o->ahead, out, err, errlen);
  out->mean_error = f.n ? f.sum / f.n : 0;
  out->mean_tracked_error = f.n_tracked ? f.sum_tracked / f.n_tracked : 0;
  out->mean_untracked_error = f.n_untracked ? f.sum_untracked / f.n_untracked : 0;
  out->dropped_error = f.n_drop ? f.sum_drop / f.n_drop : 0;
  if (!rc) out->scale = final_scale(c, id);
  free(f.eval), free(f.is_tracked);
  return rc;
}
