/* quality_wire.c: quality runs over the wire (see quality_wire.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "anim_error.h"
#include "quality_wire.h"

#define TIMEOUT_MS 20000

typedef struct {
  anim_quality_meter_t meter;
  anim_input_program_t program;
  uint64_t id;
  vec3 *positions;
  uint64_t last_tick;
  int seen;
} character_t;

anim_character_input_t anim_test_wire_input(const anim_controller_input_t *in) {
  anim_character_input_t out;
  if (in->kind == ANIM_INPUT_VELOCITY) anim_character_input_velocity(&out, in->velocity.x, in->velocity.z, in->facing);
  else anim_character_input_stick(&out, in->stick_x, in->stick_z, in->camera_azimuth, in->strafe);
  return out;
}

/* Sets the inputs the programs give at time t (s since the first frame);
 * starts timing the velocity commands among them. */
static int steer(anim_client_t *client, character_t *chars, int n, float t) {
  uint64_t ids[n];
  anim_character_input_t inputs[n];
  int count = 0;
  for (int i = 0; i < n; i++) {
    anim_controller_input_t in;
    vec3 command;
    int commanded;
    if (!anim_input_program_at(&chars[i].program, t, &in, &command, &commanded)) continue;
    if (commanded) anim_quality_meter_command(&chars[i].meter, command);
    ids[count] = chars[i].id, inputs[count] = anim_test_wire_input(&in), count++;
  }
  return count ? anim_client_characters_set_input(client, ids, inputs, count, NULL, TIMEOUT_MS) : 0;
}

static int find(const character_t *chars, int n, uint64_t id) {
  for (int i = 0; i < n; i++)
    if (chars[i].id == id) return i;
  return -1;
}

int anim_quality_run_wire(anim_client_t *client, anim_quality_wire_run_t *runs, int n, float seconds, char *err,
                          int errlen) {
  character_t *chars = calloc((size_t)n, sizeof *chars);
  uint64_t *ids = calloc((size_t)n, sizeof *ids);
  int rc = chars && ids ? 0 : ANIM_ENOMEM, created = 0;
  for (int i = 0; i < n && !rc; i++) {
    if (anim_quality_meter_init(&chars[i].meter, runs[i].db)) rc = ANIM_ENOMEM;
    chars[i].positions = calloc((size_t)runs[i].db->nbones, sizeof(vec3));
    if (!chars[i].positions) rc = ANIM_ENOMEM;
    anim_input_program_init(&chars[i].program, runs[i].kind, runs[i].seed);
    anim_character_placement_t place = {3.0f * (float)i, 0.0f, 0.0f, 0};
    anim_character_mode_t learned = {.mode = ANIM_MODE_LEARNED};
    if (!rc && (rc = anim_client_characters_create_mode(client, runs[i].database, runs[i].learned ? &learned : NULL,
                                                         NULL, &place, 1, &chars[i].id, TIMEOUT_MS)))
      snprintf(err, (size_t)errlen, "create on %s: %s", runs[i].database, anim_strerror(rc));
    if (!rc) ids[created++] = chars[i].id;
  }
  uint64_t subscription = 0;
  float rate = 60.0f;
  anim_subscribe_options_t so;
  memset(&so, 0, sizeof so);
  so.characters = ids, so.ncharacters = n, so.encoding = ANIM_POSE_FLOAT, so.global_positions = 1;
  if (!rc && (rc = steer(client, chars, n, 0.0f))) snprintf(err, (size_t)errlen, "set_input: %s", anim_strerror(rc));
  if (!rc && (rc = anim_client_subscribe(client, &so, NULL, NULL, &subscription, &rate, TIMEOUT_MS)))
    snprintf(err, (size_t)errlen, "subscribe: %s", anim_strerror(rc));
  uint64_t first_tick = 0;
  int have_first = 0;
  float dt = 1.0f / rate;
  while (!rc) {
    anim_stream_frame_t *frame;
    if ((rc = anim_client_next_frame(client, &frame, TIMEOUT_MS))) {
      snprintf(err, (size_t)errlen, "stream: %s", anim_strerror(rc));
      break;
    }
    if (!have_first) first_tick = frame->tick, have_first = 1;
    float t = (float)(frame->tick - first_tick + 1) * dt; /* the time of the next tick */
    for (int p = 0; p < frame->nposes; p++) {
      const anim_character_pose_t *pose = &frame->poses[p];
      int i = find(chars, n, pose->character);
      if (i < 0 || !pose->global_positions) continue;
      character_t *c = &chars[i];
      const anim_database_t *db = runs[i].db;
      if (c->seen && frame->tick != c->last_tick + 1)
        anim_quality_meter_gap(&c->meter), runs[i].gaps += (long)(frame->tick - c->last_tick - 1);
      for (int b = 0; b < db->nbones && b < pose->nbones; b++)
        c->positions[b] = vec3_make(pose->global_positions[3 * b], pose->global_positions[3 * b + 1],
                                    pose->global_positions[3 * b + 2]);
      long data = runs[i].learned ? -1 : 0; /* a learned character plays no database frame */
      if (!runs[i].learned && pose->frame < (uint32_t)db->nframes)
        data = (long)anim_database_contacts(db, (int)pose->frame);
      anim_quality_meter_frame(&c->meter, c->positions, pose->contacts, data, frame->dt > 0 ? frame->dt : dt);
      c->last_tick = frame->tick, c->seen = 1;
    }
    anim_stream_frame_free(frame);
    if (t >= seconds) break;
    if ((rc = steer(client, chars, n, t))) snprintf(err, (size_t)errlen, "set_input: %s", anim_strerror(rc));
  }
  if (subscription) anim_client_unsubscribe(client, subscription, TIMEOUT_MS);
  if (created) anim_client_characters_destroy(client, ids, created, TIMEOUT_MS);
  for (int i = 0; i < n && chars; i++) {
    if (!rc) anim_quality_meter_result(&chars[i].meter, &runs[i].result);
    anim_quality_meter_free(&chars[i].meter);
    free(chars[i].positions);
  }
  free(chars), free(ids);
  return rc;
}

static double monotonic_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int anim_test_steer_for(anim_client_t *client, const uint64_t *ids, anim_input_program_t *programs, int n,
                        double start, double seconds, anim_test_input_override_fn override, int timeout_ms) {
  anim_character_input_t *inputs = malloc((size_t)(n > 0 ? n : 1) * sizeof *inputs);
  uint64_t *changed = malloc((size_t)(n > 0 ? n : 1) * sizeof *changed);
  int rc = inputs && changed ? 0 : ANIM_ENOMEM;
  for (double end = monotonic_s() + seconds; !rc && monotonic_s() < end;) {
    rc = anim_client_poll(client, 5);
    if (rc == ANIM_ETIMEDOUT) rc = 0;
    int count = 0;
    for (int i = 0; i < n && !rc; i++) {
      float t = (float)(monotonic_s() - start);
      anim_controller_input_t in;
      if (override && override(&programs[i], t, &inputs[count])) changed[count++] = ids[i];
      else if (anim_input_program_at(&programs[i], t, &in, NULL, NULL))
        inputs[count] = anim_test_wire_input(&in), changed[count++] = ids[i];
    }
    if (!rc && count) rc = anim_client_characters_set_input(client, changed, inputs, count, NULL, timeout_ms);
  }
  free(inputs), free(changed);
  return rc;
}
