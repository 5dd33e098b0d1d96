/*
 * replica.c: a replicated stream's characters rebuilt with the core's
 * controller replay (see anim_client_replica.h, and the record layout in
 * proto/animserver.proto's StreamMessage.replica).
 *
 * Characters are kept in a dense array (a controller each, made as a
 * replica of the database: no search index) with an open-addressing index
 * by id, rebuilt when a frame leaves characters out. The keyframe format
 * and its checks are the core's (core/character/replica.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "anim_client_replica.h"
#include "anim_error.h"
#include "character/replica.h"
#include "character/replica_order.h"
#include "database/dbfile.h"

enum { FLAG_KEY = 1, FLAG_TRANSITION = 2, FLAG_HOLD_BEGIN = 4, FLAG_HOLD_END = 8, FLAG_RATE = 16, FLAG_ANGLE = 32,
       FLAG_FEET_SKIPPED = 64 };
/* A second flags byte follows (stride warping, root steering); its bits
 * this replica does not know are later fields it could not skip. */
#define FLAG_MORE 0x80
enum { MORE_STRIDE = 1, MORE_STEER = 2, MORE_BATCH = 4, MORE_DT = 8, MORE_UNKNOWN = 0xf0 };
/* FRAME_REGION: a region subscription's frame: ids rise through it, each
 * the delta from the one before; a character absent from it is still held
 * (its band skips ticks) until the frame's `left` names it. */
enum { FRAME_FRESH = 1, FRAME_REGION = 2 };

typedef struct {
  uint64_t id;
  uint64_t seen;       /* the frame that last named it */
  int foreign;         /* on another database: its records are skipped */
  anim_controller_t c; /* c.db NULL until its first keyframe on the replica's database */
} character_t;

struct anim_replica {
  anim_database_t db;
  character_t *items;
  int n, capacity;
  int32_t *index;      /* positions in items + 1 (0: empty); a power of two, at most half full */
  uint32_t index_capacity;
  anim_replica_order_t order; /* the ids of the last frame's records, in order, and this frame's */
  anim_replica_stats_t stats;
};

static uint32_t home(uint64_t id, uint32_t mask) {
  id ^= id >> 33, id *= 0xff51afd7ed558ccdull, id ^= id >> 33;
  return (uint32_t)id & mask;
}

static int find(const anim_replica_t *r, uint64_t id) {
  if (!r->index_capacity) return -1;
  uint32_t mask = r->index_capacity - 1;
  for (uint32_t slot = home(id, mask); r->index[slot]; slot = (slot + 1) & mask)
    if (r->items[r->index[slot] - 1].id == id) return r->index[slot] - 1;
  return -1;
}

static int reindex(anim_replica_t *r) {
  uint32_t capacity = r->index_capacity ? r->index_capacity : 64;
  while (capacity < 2u * (uint32_t)r->n + 2) capacity *= 2;
  if (capacity != r->index_capacity) {
    int32_t *grown = realloc(r->index, capacity * sizeof *grown);
    if (!grown) return ANIM_ENOMEM;
    r->index = grown, r->index_capacity = capacity;
  }
  memset(r->index, 0, r->index_capacity * sizeof *r->index);
  uint32_t mask = r->index_capacity - 1;
  for (int i = 0; i < r->n; i++) {
    uint32_t slot = home(r->items[i].id, mask);
    while (r->index[slot]) slot = (slot + 1) & mask;
    r->index[slot] = i + 1;
  }
  return 0;
}

anim_replica_t *anim_replica_create(const char *path, int *out_error, char *err, size_t errlen) {
  char message[512] = "";
  int rc = ANIM_EINVAL;
  anim_replica_t *r = NULL;
  if (!path) snprintf(message, sizeof message, "anim_replica_create: no database path");
  else if (!(r = calloc(1, sizeof *r))) rc = ANIM_ENOMEM, snprintf(message, sizeof message, "out of memory");
  else if ((rc = anim_dbfile_load(&r->db, path, message, (int)sizeof message)) == 0) rc = reindex(r);
  if (rc && r) {
    anim_database_free(&r->db);
    free(r->index), free(r);
    r = NULL;
  }
  if (out_error) *out_error = rc;
  if (err && errlen) snprintf(err, errlen, "%s", message);
  return r;
}

void anim_replica_free(anim_replica_t *r) {
  if (!r) return;
  for (int i = 0; i < r->n; i++) anim_controller_free(&r->items[i].c);
  free(r->items), free(r->index);
  anim_replica_order_free(&r->order);
  anim_database_free(&r->db);
  free(r);
}

static int get_varint(const uint8_t **at, const uint8_t *end, uint64_t *out) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (*at >= end) return ANIM_EPROTO;
    uint8_t b = *(*at)++;
    v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) return *out = v, 0;
  }
  return ANIM_EPROTO;
}

static int same_params(const anim_controller_params_t *a, const anim_controller_params_t *b) {
  return a->inertialize_halflife == b->inertialize_halflife && a->body_halflife_scale == b->body_halflife_scale &&
         a->root_halflife_scale == b->root_halflife_scale && a->foot_lock.enabled == b->foot_lock.enabled &&
         a->foot_lock.unlock_radius == b->foot_lock.unlock_radius &&
         a->foot_lock.release_halflife == b->foot_lock.release_halflife && a->warp.rate == b->warp.rate &&
         a->warp.stand == b->warp.stand && a->warp.orient == b->warp.orient;
}

/* Takes a keyframe for id: a new character, or one whose parameters changed, is made first. */
static int take_keyframe(anim_replica_t *r, uint64_t id, uint64_t frame_number, const uint8_t *bytes, size_t len) {
  anim_controller_params_t params;
  uint64_t version;
  int nbones;
  int rc = anim_controller_replica_params(bytes, len, &params, &version, &nbones);
  if (rc) return rc == ANIM_ETRUNCATED ? ANIM_EPROTO : ANIM_EFORMAT;
  int i = find(r, id);
  if (i >= 0 && r->items[i].c.db && !same_params(&r->items[i].c.params, &params)) anim_controller_free(&r->items[i].c);
  if (i < 0) {
    if (r->n == r->capacity) {
      int capacity = r->capacity ? 2 * r->capacity : 64;
      character_t *grown = realloc(r->items, (size_t)capacity * sizeof *grown);
      if (!grown) return ANIM_ENOMEM;
      r->items = grown, r->capacity = capacity;
    }
    i = r->n++;
    memset(&r->items[i], 0, sizeof r->items[i]);
    r->items[i].id = id;
    if ((rc = reindex(r)) != 0) return r->n--, rc;
  }
  character_t *ch = &r->items[i];
  ch->seen = frame_number;
  ch->foreign = version != r->db.version;
  if (ch->foreign) {
    anim_controller_free(&ch->c);
    r->stats.foreign++;
    return 0;
  }
  if (!ch->c.db) {
    /* As the server makes its characters (server/actor_matching.c): the
     * other bones' rates are not computed. */
    if ((rc = anim_controller_init(&ch->c, &r->db, NULL, &params, vec3_zero(), 0.0f, 0)) != 0) return ANIM_EFORMAT;
    ch->c.pose_bone_rates = 0;
  }
  if ((rc = anim_controller_replica_load(&ch->c, bytes, len)) != 0) return rc == ANIM_ETRUNCATED ? ANIM_EPROTO : rc;
  ch->seen = frame_number;
  r->stats.keyframes++;
  return 0;
}

/* Forgets the characters the frame did not name. */
static int forget_unseen(anim_replica_t *r, uint64_t frame_number) {
  int kept = 0;
  for (int i = 0; i < r->n; i++) {
    if (r->items[i].seen == frame_number) r->items[kept++] = r->items[i];
    else anim_controller_free(&r->items[i].c);
  }
  if (kept == r->n) return 0;
  r->n = kept;
  return reindex(r);
}

static uint16_t get_u16(const uint8_t *at) { return (uint16_t)(at[0] | at[1] << 8); }

/* One tick's flags and fields (the record past its id) into *out_record,
 * with its flags, second flags and dt (the frame's unless MORE_DT). */
static int read_tick(anim_replica_t *r, const uint8_t **io_at, const uint8_t *end, float frame_dt,
                     anim_controller_record_t *out_record, uint8_t *out_flags, uint8_t *out_more, float *out_dt) {
  const uint8_t *at = *io_at;
  uint64_t value;
  if (at >= end) return ANIM_EPROTO;
  uint8_t flags = *at++, more = 0;
  if (flags & FLAG_MORE) {
    if (at >= end) return ANIM_EPROTO;
    more = *at++;
    if (more & MORE_UNKNOWN) return ANIM_EPROTO;
  }
  *out_record = (anim_controller_record_t){-1, (uint8_t)!!(flags & FLAG_HOLD_BEGIN), (uint8_t)!!(flags & FLAG_HOLD_END),
                                           0, (uint8_t)!!(flags & FLAG_FEET_SKIPPED), 0, 1.0f, 0.0f, 1.0f, 0.0f, 1.0f,
                                           0.0f, 0.0f};
  *out_dt = frame_dt;
  if (more & MORE_DT) {
    if (end - at < 4) return ANIM_EPROTO;
    memcpy(out_dt, at, 4), at += 4;
  }
  if (flags & FLAG_TRANSITION) {
    int rc = get_varint(&at, end, &value);
    if (rc) return rc;
    if (value >= (uint64_t)r->db.nframes) return ANIM_EPROTO;
    out_record->transition_frame = (int)value;
  }
  /* The warp's rate and turn, when they changed (else the ones the replica holds). */
  int has_rate = (flags & FLAG_RATE) != 0, has_angle = (flags & FLAG_ANGLE) != 0;
  if ((size_t)(end - at) < 4u * (size_t)(has_rate + has_angle)) return ANIM_EPROTO;
  if (has_rate) memcpy(&out_record->play_rate, at, 4), at += 4;
  if (has_angle) memcpy(&out_record->warp_angle, at, 4), at += 4;
  /* The stride with its direction, and root steering, in the ticks they acted. */
  int has_stride = (more & MORE_STRIDE) != 0, has_steer = (more & MORE_STEER) != 0;
  /* 16 bits each, made floats as the server's tick made them (controller.h). */
  if ((size_t)(end - at) < 6u * (size_t)has_stride + 4u * (size_t)has_steer) return ANIM_EPROTO;
  if (has_stride) {
    out_record->stride = anim_record_stride((int32_t)get_u16(at) + 1);
    out_record->travel_x = anim_record_unit((int16_t)get_u16(at + 2));
    out_record->travel_z = anim_record_unit((int16_t)get_u16(at + 4));
    at += 6;
  }
  if (has_steer) {
    out_record->steer_x = anim_record_steer((int16_t)get_u16(at));
    out_record->steer_z = anim_record_steer((int16_t)get_u16(at + 2));
    at += 4;
  }
  *io_at = at, *out_flags = flags, *out_more = more;
  return 0;
}

/* Replays one tick of character i. */
static int replay(anim_replica_t *r, int i, float dt, anim_controller_record_t *record, uint8_t flags) {
  anim_controller_t *c = &r->items[i].c;
  if (!(flags & FLAG_RATE)) record->play_rate = c->warp.shown;
  if (!(flags & FLAG_ANGLE)) record->warp_angle = c->warp.angle;
  if (!(dt > 0.0f) || anim_controller_replay(c, dt, record) != 0) return ANIM_EPROTO;
  r->stats.replays++;
  return 0;
}

/* Forgets the characters a region frame says left. */
static int forget_left(anim_replica_t *r, const anim_stream_frame_t *f) {
  int kept = 0;
  for (int i = 0; i < r->n; i++) {
    int left = 0;
    for (int k = 0; k < f->nleft && !left; k++) left = f->left[k] == r->items[i].id;
    if (!left) r->items[kept++] = r->items[i];
    else anim_controller_free(&r->items[i].c);
  }
  if (kept == r->n) return 0;
  r->n = kept;
  return reindex(r);
}

int anim_replica_apply(anim_replica_t *r, const anim_stream_frame_t *f) {
  if (!r || !f || f->encoding != ANIM_POSE_REPLICATED) return ANIM_EINVAL;
  uint64_t number = ++r->stats.frames;
  const uint8_t *at = f->replica, *end = f->replica + f->replica_len;
  if (at == end) return ANIM_EPROTO; /* at least the frame's flags */
  uint8_t frame_flags = *at++;
  int region = (frame_flags & FRAME_REGION) != 0;
  anim_replica_order_begin(&r->order, frame_flags & FRAME_FRESH); /* fresh: ids whole */
  /* A region's departures go first: a character that left and came back
   * within the frame is a new one (its keyframe follows). */
  int rc = region && f->nleft ? forget_left(r, f) : 0;
  uint64_t last_id = 0;
  while (at < end && !rc) {
    uint64_t zigzag, value, id;
    if ((rc = get_varint(&at, end, &zigzag)) != 0) break;
    if (region) id = last_id + zigzag, last_id = id;
    else id = anim_replica_order_id(&r->order, zigzag);
    if ((rc = anim_replica_order_reserve(&r->order)) != 0) return rc;
    anim_replica_order_push(&r->order, id);
    anim_controller_record_t record;
    uint8_t flags, more;
    float dt;
    if ((rc = read_tick(r, &at, end, f->dt, &record, &flags, &more, &dt)) != 0) break;
    int i = find(r, id);
    if (more & MORE_BATCH) { /* a region band's skipped ticks, then the record's own */
      if (!region || flags != FLAG_MORE || more != MORE_BATCH) return ANIM_EPROTO;
      if ((rc = get_varint(&at, end, &value)) != 0) break;
      if (i < 0) return ANIM_EPROTO; /* no state to replay on */
      for (uint64_t k = 0; k < value && !rc; k++) {
        if ((rc = read_tick(r, &at, end, f->dt, &record, &flags, &more, &dt)) != 0) break;
        if ((flags & FLAG_KEY) || (more & MORE_BATCH)) return ANIM_EPROTO;
        if (!r->items[i].foreign && (rc = replay(r, i, dt, &record, flags)) == 0) r->stats.batched++;
      }
      if (rc || (rc = read_tick(r, &at, end, f->dt, &record, &flags, &more, &dt)) != 0) break;
      if ((flags & FLAG_KEY) || (more & (MORE_BATCH | MORE_DT))) return ANIM_EPROTO;
    } else if (more & MORE_DT) {
      return ANIM_EPROTO; /* only a batch's earlier ticks have their own */
    }
    if (flags & FLAG_KEY) {
      if ((rc = get_varint(&at, end, &value)) != 0) break;
      if (value > (uint64_t)(end - at)) return ANIM_EPROTO;
      rc = take_keyframe(r, id, number, at, (size_t)value);
      at += value;
      continue;
    }
    if (i < 0) return ANIM_EPROTO; /* no state to replay on: a keyframe was missed */
    r->items[i].seen = number;
    if (r->items[i].foreign) {
      r->stats.foreign++;
      continue;
    }
    if ((rc = replay(r, i, f->dt, &record, flags)) != 0) return rc;
  }
  if (rc) return rc;
  anim_replica_order_end(&r->order);
  return region ? 0 : forget_unseen(r, number);
}

int anim_replica_pose(const anim_replica_t *r, uint64_t character, anim_replica_pose_t *out) {
  int i = r ? find(r, character) : -1;
  if (i < 0 || r->items[i].foreign) return ANIM_ENOTFOUND;
  const anim_controller_t *c = &r->items[i].c;
  out->character = character;
  out->frame = (uint32_t)c->frame;
  out->nbones = c->db->nbones;
  out->positions = (const float *)c->pose_positions;
  out->rotations = (const float *)c->pose_rotations;
  out->contacts = anim_controller_contacts(c);
  out->transition = c->transitioned;
  out->current = r->items[i].seen == r->stats.frames;
  return 0;
}

void anim_replica_stats(const anim_replica_t *r, anim_replica_stats_t *out) {
  *out = r->stats;
  out->characters = r->n;
}
