/*
 * convert_stream.c: a stream message -> an anim_stream_frame_t of floats (see
 * convert.h), and its free.
 *
 * Quantized poses are expanded with core/pose/quantize.c, the code the server
 * encodes with, so callers always see floats. A frame is one allocation
 * (header, poses, gone ids, arrivals, departures, floats), freed with one call. Pure: which
 * subscription a frame belongs to, and where it goes, is api_stream.c's.
 */
#include <stdlib.h>
#include <string.h>
#include "convert.h"
#include "pose/quantize.h"

void anim_stream_frame_free(anim_stream_frame_t *frame) {
  free(frame); /* one block: header, poses, floats, gone ids */
}

static size_t align8(size_t n) { return (n + 7) & ~(size_t)7; }

/* Bones of a quantized pose, from its size (the layout is in quantize.h). */
static int quantized_bones(size_t len, int rotations_only) {
  if (len < 12 + 7) return 0;
  size_t body = len - 12;
  if (rotations_only) return body % 7 == 0 ? (int)(body / 7) : 0;
  return (body + 6) % 13 == 0 ? (int)((body + 6) / 13) : 0;
}

static int pose_bones(const Animserver__CharacterPose *m, int quantized, int rotations_only) {
  if (quantized) return quantized_bones(m->quantized.len, rotations_only);
  return m->n_rotations % 4 == 0 ? (int)(m->n_rotations / 4) : 0;
}

/* Floats a decoded pose needs: positions (3n, or 3), rotations 4n, global 3n. */
static size_t pose_floats(int n, int rotations_only, int global) {
  return (size_t)(rotations_only ? 3 : 3 * n) + 4 * (size_t)n + (global ? 3 * (size_t)n : 0);
}

static int decode_pose(const Animserver__CharacterPose *m, int quantized, int rotations_only, int n, float *floats,
                       anim_character_pose_t *out) {
  size_t npos = (size_t)(rotations_only ? 3 : 3 * n);
  out->character = m->character;
  out->frame = m->frame;
  out->nbones = n;
  out->contacts = m->contacts;
  out->transition = m->transition;
  out->depth = 0; /* a machine character's active states */
  for (size_t l = 0; l < m->n_state_path && l < 8; l++) {
    out->state_path[l] = m->state_path[l];
    out->state_times[l] = l < m->n_state_times ? m->state_times[l] : 0.0f;
    out->depth = (int)l + 1;
  }
  out->state_changed = m->state_changed;
  out->physics = (int)m->physics;
  float *positions = floats, *rotations = floats + npos, *global = rotations + 4 * (size_t)n;
  if (quantized) {
    /* Decode into vec3/quat arrays laid out as plain floats. */
    if (anim_pose_dequantize(m->quantized.data, m->quantized.len, n, rotations_only, (vec3 *)positions,
                             (quat *)rotations) != 0)
      return ANIM_EPROTO;
  } else {
    if (m->n_positions != npos) return ANIM_EPROTO;
    if (npos) memcpy(positions, m->positions, npos * sizeof *positions); /* rotations only: no positions */
    memcpy(rotations, m->rotations, 4 * (size_t)n * sizeof *rotations);
  }
  out->positions = positions;
  out->rotations = rotations;
  out->global_positions = NULL;
  if (m->n_global_positions) {
    if (m->n_global_positions != 3 * (size_t)n) return ANIM_EPROTO;
    memcpy(global, m->global_positions, 3 * (size_t)n * sizeof *global);
    out->global_positions = global;
  }
  return 0;
}

/* One allocation for the whole frame, so the caller frees it with one call. */
int anim__stream_frame_from(const Animserver__StreamMessage *m, int rotations_only, size_t wire_bytes,
                            anim_stream_frame_t **out) {
  *out = NULL;
  if (!m) return ANIM_EPROTO;
  /* A replicated frame's poses (characters it cannot replicate) are quantized. */
  int quantized = m->encoding == ANIMSERVER__POSE_ENCODING__ENCODING_QUANTIZED ||
                  m->encoding == ANIMSERVER__POSE_ENCODING__ENCODING_REPLICATED;
  size_t floats = 0;
  for (size_t i = 0; i < m->n_poses; i++) {
    int n = pose_bones(m->poses[i], quantized, rotations_only);
    if (n <= 0) return ANIM_EPROTO;
    floats += pose_floats(n, rotations_only, m->poses[i]->n_global_positions > 0);
  }
  size_t size = align8(sizeof(anim_stream_frame_t)) + align8(m->n_poses * sizeof(anim_character_pose_t)) +
                align8(m->n_gone * sizeof(uint64_t)) + align8(m->n_entered * sizeof(anim_character_entered_t)) +
                align8(m->n_left * sizeof(uint64_t)) + align8(floats * sizeof(float)) + m->replica.len;
  uint8_t *block = malloc(size);
  if (!block) return ANIM_ENOMEM;
  anim_stream_frame_t *f = (anim_stream_frame_t *)block;
  memset(f, 0, sizeof *f);
  f->poses = (anim_character_pose_t *)(block + align8(sizeof *f));
  uint64_t *gone = (uint64_t *)((uint8_t *)f->poses + align8(m->n_poses * sizeof *f->poses));
  anim_character_entered_t *entered =
      (anim_character_entered_t *)((uint8_t *)gone + align8(m->n_gone * sizeof *gone));
  uint64_t *left = (uint64_t *)((uint8_t *)entered + align8(m->n_entered * sizeof *entered));
  float *cursor = (float *)((uint8_t *)left + align8(m->n_left * sizeof *left));
  f->subscription = m->subscription_id;
  f->tick = m->tick;
  f->server_time_us = m->server_time_us;
  f->dropped_frames = m->dropped_frames;
  f->encoding = m->encoding == ANIMSERVER__POSE_ENCODING__ENCODING_REPLICATED ? ANIM_POSE_REPLICATED
                : quantized                                                  ? ANIM_POSE_QUANTIZED
                                                                             : ANIM_POSE_FLOAT;
  uint8_t *replica = (uint8_t *)cursor + align8(floats * sizeof(float));
  if (m->replica.len) memcpy(replica, m->replica.data, m->replica.len);
  f->replica = replica, f->replica_len = m->replica.len;
  f->dt = m->dt;
  f->wire_bytes = wire_bytes;
  for (size_t i = 0; i < m->n_poses; i++) {
    int n = pose_bones(m->poses[i], quantized, rotations_only);
    if (decode_pose(m->poses[i], quantized, rotations_only, n, cursor, &f->poses[i]) != 0) {
      free(block);
      return ANIM_EPROTO;
    }
    cursor += pose_floats(n, rotations_only, m->poses[i]->n_global_positions > 0);
  }
  f->nposes = (int)m->n_poses;
  if (m->n_gone) memcpy(gone, m->gone, m->n_gone * sizeof *gone);
  f->gone = gone;
  f->ngone = (int)m->n_gone;
  for (size_t i = 0; i < m->n_entered; i++) {
    const Animserver__CharacterEntered *e = m->entered[i];
    if (!e || !e->database || strlen(e->database) >= sizeof entered[i].database) {
      free(block);
      return ANIM_EPROTO;
    }
    entered[i].character = e->character;
    strcpy(entered[i].database, e->database);
    entered[i].database_version = e->database_version;
    entered[i].bones = (int)e->bones;
  }
  f->entered = entered;
  f->nentered = (int)m->n_entered;
  if (m->n_left) memcpy(left, m->left, m->n_left * sizeof *left);
  f->left = left;
  f->nleft = (int)m->n_left;
  *out = f;
  return 0;
}

