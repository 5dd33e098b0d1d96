/* crowd_trackers.c: tracker characters for the crowd benchmark (see crowd_trackers.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "bench_util.h"
#include "crowd_trackers.h"
#include "database/database.h"
#include "heldout.h"
#include "fit/pose_fit.h"
#include "tracker_feed.h"

#define TIMEOUT_MS 30000
#define NTRACKERS 4

struct crowd_trackers {
  anim_database_t db, truth;
  char dir[128];
  const char *bones[NTRACKERS];
  int bone_index[NTRACKERS];
};

crowd_trackers_t *crowd_trackers_open(const char *shared) {
  crowd_trackers_t *t = calloc(1, sizeof *t);
  char mocap[1024], err[256];
  snprintf(mocap, sizeof mocap, "%s/data/mocap/bandai-namco", shared);
  anim_pose_fit_model_options_t defaults;
  if (!t || anim_heldout_build(mocap, anim_heldout_bandai_clips, anim_heldout_bandai_count, &t->db, &t->truth, err,
                               sizeof err) != 0) {
    fprintf(stderr, "animbench crowd --trackers: %s\n", t ? err : "out of memory");
    free(t);
    return NULL;
  }
  if (anim_pose_fit_model_options_default(&defaults, &t->truth) != 0 ||
      tracker_feed_write_database(&t->db, t->dir, sizeof t->dir) != 0) {
    fprintf(stderr, "animbench crowd --trackers: cannot write the database\n");
    crowd_trackers_close(t);
    return NULL;
  }
  for (int k = 0; k < NTRACKERS; k++) {
    t->bones[k] = defaults.tracker_bones[k];
    t->bone_index[k] = anim_skeleton_find(&t->truth.skeleton, t->bones[k]);
  }
  return t;
}

void crowd_trackers_close(crowd_trackers_t *t) {
  if (!t) return;
  if (t->dir[0]) {
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s", t->dir);
    if (system(cmd) != 0) fprintf(stderr, "animbench: could not remove %s\n", t->dir);
  }
  anim_database_free(&t->db), anim_database_free(&t->truth);
  free(t);
}

const char *crowd_trackers_dir(const crowd_trackers_t *t) { return t->dir; }
const char *crowd_trackers_database(const crowd_trackers_t *t) { return t->db.name; }

/* Character i's held-out frame at step, and whether its clip starts over there. */
static int clip_frame(const anim_database_t *truth, uint64_t i, long step, int *out_restart) {
  const anim_range_t *range = &truth->ranges[i % (uint64_t)truth->nranges];
  long length = range->stop - range->start, at = (step + (long)(i * 37u)) % length;
  *out_restart = at == 0;
  return range->start + (int)at;
}

static vec3 place_of(uint64_t i) { return vec3_make(3.0f * (float)(i % 64), 0.0f, 3.0f * (float)(i / 64 % 1024)); }

double crowd_trackers_baseline(const crowd_trackers_t *t, const crowd_trackers_fit_t *fit) {
  enum { N = 200, TICKS = 120 };
  anim_pose_fit_model_t model;
  char err[256];
  if (anim_pose_fit_model_build(&model, &t->db, NULL, err, sizeof err) != 0) return 0.0;
  anim_pose_fitter_t *fitters = calloc(N, sizeof *fitters);
  int ok = fitters != NULL;
  anim_pose_fit_params_t params;
  anim_pose_fit_params_default(&params);
  params.iterations = 1; /* a tracker character's default (server/request_fit.h) */
  if (fit->search_interval) params.search_interval = fit->search_interval;
  if (fit->iterations) params.iterations = fit->iterations;
  for (int i = 0; i < N && ok; i++) ok = anim_pose_fitter_init(&fitters[i], &model, &params, NULL, 0) == 0;
  const anim_database_t *truth = &t->truth;
  double start = bench_now_s();
  for (int s = 0; s < TICKS && ok; s++)
    for (int i = 0; i < N; i++) {
      int restart, frame = clip_frame(truth, (uint64_t)i, s, &restart);
      anim_tracker_input_t in[ANIM_POSE_FIT_MAX_TRACKERS];
      memset(in, 0, sizeof in);
      for (int k = 0; k < model.ntrackers; k++) {
        in[k].present = 1, in[k].weight = 1.0f;
        in[k].position =
            vec3_add(truth->global_positions[(size_t)frame * (size_t)truth->nbones + (size_t)model.tracker_bones[k]],
                     place_of((uint64_t)i));
      }
      if (restart) anim_pose_fitter_reset(&fitters[i]);
      anim_pose_fitter_step(&fitters[i], in, 1.0f / 60.0f);
    }
  double elapsed = bench_now_s() - start;
  for (int i = 0; i < N && fitters; i++) anim_pose_fitter_free(&fitters[i]);
  free(fitters);
  anim_pose_fit_model_free(&model);
  return ok ? (double)N * TICKS / elapsed : 0.0;
}

int crowd_trackers_setup(const crowd_trackers_t *t, anim_test_raw_t *c, int n, int encoding,
                         const crowd_trackers_fit_t *fit, uint64_t *out_ids) {
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__CreateCharactersRequest create = ANIMSERVER__CREATE_CHARACTERS_REQUEST__INIT;
  Animserver__TrackerSetup setup = ANIMSERVER__TRACKER_SETUP__INIT;
  Animserver__TrackedBone bones[NTRACKERS], *list[NTRACKERS];
  for (int k = 0; k < NTRACKERS; k++) {
    animserver__tracked_bone__init(&bones[k]);
    bones[k].bone = (char *)t->bones[k];
    list[k] = &bones[k];
  }
  Animserver__Placement *places = calloc((size_t)n, sizeof *places),
                        **place_list = calloc((size_t)n, sizeof *place_list);
  for (int i = 0; i < n && places && place_list; i++)
    animserver__placement__init(&places[i]), place_list[i] = &places[i];
  setup.n_trackers = NTRACKERS, setup.trackers = list;
  Animserver__FitParams params = ANIMSERVER__FIT_PARAMS__INIT;
  params.search_interval = (uint32_t)fit->search_interval, params.iterations = (uint32_t)fit->iterations;
  setup.params = &params;
  create.database = (char *)t->db.name;
  create.mode = ANIMSERVER__CHARACTER_MODE__MODE_TRACKER;
  create.tracker = &setup;
  create.n_placements = (size_t)n, create.placements = place_list;
  request.body_case = ANIMSERVER__REQUEST__BODY_CREATE_CHARACTERS, request.create_characters = &create;
  Animserver__Response *r = places && place_list ? anim_test_raw_call(c, &request, TIMEOUT_MS) : NULL;
  free(places), free(place_list);
  int rc = !r ? ANIM_ETIMEDOUT : r->error ? -(int)r->error->code : 0;
  if (rc == 0) memcpy(out_ids, r->create_characters->characters, (size_t)n * sizeof *out_ids);
  else if (r && r->error) fprintf(stderr, "create_characters: %s\n", r->error->message);
  if (r) animserver__response__free_unpacked(r, NULL);
  if (rc) return rc;
  Animserver__Request sub_request = ANIMSERVER__REQUEST__INIT;
  Animserver__SubscribeRequest sub = ANIMSERVER__SUBSCRIBE_REQUEST__INIT;
  sub.owned = 1, sub.encoding = (Animserver__PoseEncoding)encoding;
  sub_request.body_case = ANIMSERVER__REQUEST__BODY_SUBSCRIBE, sub_request.subscribe = &sub;
  r = anim_test_raw_call(c, &sub_request, TIMEOUT_MS);
  rc = !r ? ANIM_ETIMEDOUT : r->error ? -(int)r->error->code : 0;
  if (r) animserver__response__free_unpacked(r, NULL);
  return rc;
}

int crowd_trackers_send(const crowd_trackers_t *t, anim_test_raw_t *c, const uint64_t *ids, int n, long step) {
  size_t count = (size_t)n;
  Animserver__CharacterTrackers *cts = calloc(count, sizeof *cts), **ct_list = calloc(count, sizeof *ct_list);
  Animserver__TrackerInput *inputs = calloc(count * NTRACKERS, sizeof *inputs);
  Animserver__TrackerInput **input_list = calloc(count * NTRACKERS, sizeof *input_list);
  Animserver__Vec3 *positions = calloc(count * NTRACKERS, sizeof *positions);
  int rc = cts && ct_list && inputs && input_list && positions ? 0 : -1;
  const anim_database_t *truth = &t->truth;
  for (size_t i = 0; i < count && !rc; i++) {
    int restart, frame = clip_frame(truth, ids[i], step, &restart);
    animserver__character_trackers__init(&cts[i]);
    cts[i].character = ids[i], cts[i].reset = restart;
    cts[i].n_trackers = NTRACKERS, cts[i].trackers = input_list + i * NTRACKERS;
    ct_list[i] = &cts[i];
    for (int k = 0; k < NTRACKERS; k++) {
      size_t j = i * NTRACKERS + (size_t)k;
      animserver__tracker_input__init(&inputs[j]);
      animserver__vec3__init(&positions[j]);
      vec3 p = vec3_add(truth->global_positions[(size_t)frame * (size_t)truth->nbones + (size_t)t->bone_index[k]],
                        place_of(ids[i]));
      positions[j].x = p.x, positions[j].y = p.y, positions[j].z = p.z;
      inputs[j].position = &positions[j];
      input_list[j] = &inputs[j];
    }
  }
  if (!rc) {
    Animserver__Request request = ANIMSERVER__REQUEST__INIT;
    Animserver__SetTrackersRequest set = ANIMSERVER__SET_TRACKERS_REQUEST__INIT;
    set.n_characters = count, set.characters = ct_list;
    request.body_case = ANIMSERVER__REQUEST__BODY_SET_TRACKERS, request.set_trackers = &set;
    rc = anim_test_raw_send(c, &request);
  }
  free(cts), free(ct_list), free(inputs), free(input_list), free(positions);
  return rc;
}
