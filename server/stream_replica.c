/* stream_replica.c: the replicated encoding's records (see stream_replica.h). */
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "character/replica.h"
#include "stream_replica.h"

/* FLAG_MORE: a second flags byte follows (MORE_*), for stride warping
 * and root steering (controller.h's record), and whatever comes later.
 * A region frame's record may open with a head of FLAG_MORE, MORE_BATCH
 * and a count n: n earlier ticks follow (flags and fields each, MORE_DT
 * with their dt when it is not the frame's), then the record's own tick. */
enum { FLAG_KEY = 1, FLAG_TRANSITION = 2, FLAG_HOLD_BEGIN = 4, FLAG_HOLD_END = 8, FLAG_RATE = 16, FLAG_ANGLE = 32,
       FLAG_FEET_SKIPPED = 64, FLAG_MORE = 128 };
enum { MORE_STRIDE = 1, MORE_STEER = 2, MORE_BATCH = 4, MORE_DT = 8 };

const anim_controller_t *srv_replica_of(const srv_actor_t *a) {
  return a->kind->replica ? a->kind->replica(a->character) : NULL;
}

size_t srv_replica_bound(const srv_actor_t *a, int keys) {
  const anim_controller_t *c = srv_replica_of(a);
  if (!c) return 0;
  size_t bytes = 10 + 1 + 5 + 8 + 1 + 12 + 8; /* id, flags, transition frame, warp rate and angle, more flags,
                                                 stride and its direction, steering */
  if (keys || c->ticks == 0) bytes += 5 + anim_controller_replica_size(c);
  return bytes;
}

static int reserve(srv_replica_records_t *r, size_t more);

/* One tick's flags and fields at most (put_tick). */
#define TICK_BYTES (1 + 1 + 4 + 5 + 8 + 12 + 8)

size_t srv_replica_bound_region(const srv_actor_t *a, int keys, uint64_t sent) {
  const anim_controller_t *c = srv_replica_of(a);
  if (!c) return 0;
  uint64_t ticks = sent <= c->ticks ? c->ticks + 1 - sent : 1; /* the ticks it will carry, after this one's */
  if (keys || !sent || c->ticks == 0 || ticks > SRV_ACTOR_RECORDS)
    return 10 + TICK_BYTES + 5 + anim_controller_replica_size(c);
  return 10 + 5 + ticks * TICK_BYTES;
}

enum { FRAME_FRESH = 1, FRAME_REGION = 2 };

/* Past a fresh frame (about 2.4 KB a character) the records take two
 * bytes a character: the buffer a burst of keyframes grew is given back
 * once frames stay under a quarter of it. */
#define RECORDS_KEEP ((size_t)64 * 1024)

void srv_replica_begin(srv_replica_records_t *r, int keys, int region) {
  if (r->capacity > RECORDS_KEEP && 4 * r->len < r->capacity && !keys) {
    size_t capacity = 2 * r->len > RECORDS_KEEP ? 2 * r->len : RECORDS_KEEP;
    uint8_t *shrunk = realloc(r->bytes, capacity);
    if (shrunk) r->bytes = shrunk, r->capacity = capacity;
  }
  r->len = 0, r->failed = 0, r->region = region, r->last_id = 0;
  anim_replica_order_begin(&r->order, keys);
  if (r->capacity || !reserve(r, 1)) r->bytes[r->len++] = (uint8_t)((keys ? FRAME_FRESH : 0) | (region ? FRAME_REGION : 0));
  else r->failed = 1;
}

int srv_replica_end(srv_replica_records_t *r) {
  anim_replica_order_end(&r->order);
  return r->failed ? ANIM_ENOMEM : 0;
}

static int reserve(srv_replica_records_t *r, size_t more) {
  if (r->len + more <= r->capacity) return 0;
  size_t capacity = r->capacity ? r->capacity : 4096;
  while (capacity < r->len + more) capacity *= 2;
  uint8_t *grown = realloc(r->bytes, capacity);
  if (!grown) return ANIM_ENOMEM;
  r->bytes = grown, r->capacity = capacity;
  return 0;
}

static void put_varint(srv_replica_records_t *r, uint64_t v) {
  while (v >= 0x80) r->bytes[r->len++] = (uint8_t)(v | 0x80), v >>= 7;
  r->bytes[r->len++] = (uint8_t)v;
}

static void put_u16(srv_replica_records_t *r, uint16_t v) {
  r->bytes[r->len++] = (uint8_t)v, r->bytes[r->len++] = (uint8_t)(v >> 8);
}

/* One tick's flags and fields (the record's layout past its id), with
 * the tick's dt when it is not the frame's (dt not 0: a batch's earlier
 * ticks on a server behind its rate). Room reserved by the caller
 * (TICK_BYTES). */
static void put_tick(srv_replica_records_t *r, const anim_controller_record_t *rec, int key, float dt) {
  int transition = rec->transition_frame >= 0;
  /* The warp's rate and turn when they changed this tick (the client holds
   * the last ones); a keyframe carries them whole. */
  int rate = !key && (rec->warp_changed & ANIM_RECORD_PLAY_RATE), angle = !key && (rec->warp_changed & ANIM_RECORD_WARP_ANGLE);
  /* The stride and steering whenever the tick had them: they follow the
   * input every tick they act. */
  int stride = !key && rec->stride != 1.0f, steer = !key && (rec->steer_x != 0.0f || rec->steer_z != 0.0f);
  int more = (stride ? MORE_STRIDE : 0) | (steer ? MORE_STEER : 0) | (dt != 0.0f ? MORE_DT : 0);
  r->bytes[r->len++] = (uint8_t)((key ? FLAG_KEY : 0) | (transition ? FLAG_TRANSITION : 0) |
                                 (rec->hold_begin ? FLAG_HOLD_BEGIN : 0) | (rec->hold_end ? FLAG_HOLD_END : 0) |
                                 (rate ? FLAG_RATE : 0) | (angle ? FLAG_ANGLE : 0) |
                                 (rec->feet_skipped ? FLAG_FEET_SKIPPED : 0) | (more ? FLAG_MORE : 0));
  if (more) r->bytes[r->len++] = (uint8_t)more;
  if (dt != 0.0f) memcpy(r->bytes + r->len, &dt, 4), r->len += 4;
  if (transition) put_varint(r, (uint64_t)rec->transition_frame);
  if (rate) memcpy(r->bytes + r->len, &rec->play_rate, 4), r->len += 4;
  if (angle) memcpy(r->bytes + r->len, &rec->warp_angle, 4), r->len += 4;
  /* 16 bits each: the tick played them rounded so (controller.h). */
  if (stride) {
    put_u16(r, (uint16_t)(anim_record_stride_code(rec->stride) - 1));
    put_u16(r, (uint16_t)(int16_t)anim_record_unit_code(rec->travel_x));
    put_u16(r, (uint16_t)(int16_t)anim_record_unit_code(rec->travel_z));
  }
  if (steer) {
    put_u16(r, (uint16_t)(int16_t)anim_record_steer_code(rec->steer_x));
    put_u16(r, (uint16_t)(int16_t)anim_record_steer_code(rec->steer_z));
  }
}

int srv_replica_append(srv_replica_records_t *r, const srv_actor_t *a, const anim_controller_t *c, int keys) {
  const anim_controller_record_t *rec = &c->record;
  /* Its first tick (the client has no state yet), or moved outside a tick. */
  int key = keys || c->ticks <= 1 || rec->moved;
  size_t state = key ? anim_controller_replica_size(c) : 0;
  if (r->failed || reserve(r, 10 + TICK_BYTES + 5 + state) != 0 || anim_replica_order_reserve(&r->order) != 0)
    return r->failed = 1, ANIM_ENOMEM;
  put_varint(r, anim_replica_order_code(&r->order, a->id));
  anim_replica_order_push(&r->order, a->id);
  put_tick(r, rec, key, 0.0f);
  if (key) {
    put_varint(r, state);
    r->len += anim_controller_replica_save(c, r->bytes + r->len);
  }
  return 0;
}

/* The ticks of a after `sent` (its controller's tick count when its
 * subscriber last had its state) up to its last one, from its ring: 1 when
 * they are all there and none moved it outside a tick. */
static int ring_has(const srv_actor_t *a, uint64_t sent, uint64_t now) {
  if (!a->records || now - sent > SRV_ACTOR_RECORDS) return 0;
  for (uint64_t t = sent + 1; t <= now; t++) {
    const srv_actor_tick_record_t *e = &a->records[t % SRV_ACTOR_RECORDS];
    if (e->ticks != (uint32_t)t || e->record.moved) return 0;
  }
  return 1;
}

int srv_replica_append_region(srv_replica_records_t *r, const srv_actor_t *a, const anim_controller_t *c, int keys,
                              uint64_t *io_sent, float frame_dt) {
  const anim_controller_record_t *rec = &c->record;
  uint64_t now = c->ticks, sent = *io_sent;
  /* Ticks it has not been sent: 1 in a band of divisor 1; a keyframe when
   * the subscriber has no state of it, or the ring no longer holds them. */
  int key = keys || !sent || sent >= now || c->ticks <= 1 || rec->moved || (now - sent > 1 && !ring_has(a, sent, now));
  uint64_t batch = key ? 0 : now - sent - 1;
  size_t state = key ? anim_controller_replica_size(c) : 0;
  if (r->failed || reserve(r, 10 + 5 + (batch + 1) * TICK_BYTES + 5 + state) != 0 ||
      anim_replica_order_reserve(&r->order) != 0)
    return r->failed = 1, ANIM_ENOMEM;
  put_varint(r, a->id - r->last_id); /* ids rise through the frame */
  r->last_id = a->id;
  anim_replica_order_push(&r->order, a->id);
  if (batch) { /* the ticks it skipped, oldest first, then this one's */
    r->bytes[r->len++] = FLAG_MORE;
    r->bytes[r->len++] = MORE_BATCH;
    put_varint(r, batch);
    for (uint64_t t = sent + 1; t < now; t++) {
      const srv_actor_tick_record_t *e = &a->records[t % SRV_ACTOR_RECORDS];
      put_tick(r, &e->record, 0, memcmp(&e->dt, &frame_dt, 4) ? e->dt : 0.0f);
    }
  }
  put_tick(r, rec, key, 0.0f);
  if (key) {
    put_varint(r, state);
    r->len += anim_controller_replica_save(c, r->bytes + r->len);
  }
  *io_sent = now;
  return 0;
}

void srv_replica_size_for(srv_replica_records_t *r, const srv_crowd_t *crowd, const srv_aoi_view_t *view) {
  size_t n = crowd->count;
  if (view && view->region.max_characters && view->region.max_characters < n) n = view->region.max_characters;
  (void)anim_replica_order_reserve_for(&r->order, n);
}

size_t srv_replica_bytes(const srv_replica_records_t *r) { return r->capacity + anim_replica_order_bytes(&r->order); }

void srv_replica_records_free(srv_replica_records_t *r) {
  free(r->bytes);
  anim_replica_order_free(&r->order);
  memset(r, 0, sizeof *r);
}

/* ---- the rings of records a replicated region replays from ---------------------------- */

/* A replicated region's motion-matching members keep their last ticks'
 * records (actor.h's ring), from the tick a replicated region first sees
 * them: once per character, never per tick. 0, or ANIM_ENOMEM. */
static int keep_records_of(srv_crowd_t *crowd, srv_actor_t *a) {
  if (a->records || !srv_replica_of(a)) return 0;
  if (!(a->records = calloc(SRV_ACTOR_RECORDS, sizeof *a->records))) return ANIM_ENOMEM;
  /* Its share of the crowd's memory (srv_crowd_actor_bytes counts the ring). */
  size_t bytes = SRV_ACTOR_RECORDS * sizeof *a->records;
  a->bytes += bytes, crowd->bytes += bytes;
  return 0;
}

int srv_replica_keep_members(srv_crowd_t *crowd, const srv_aoi_view_t *v) {
  for (uint32_t i = 0; i < v->nfound; i++)
    if (keep_records_of(crowd, v->found[i].actor)) return ANIM_ENOMEM;
  return 0;
}

/* When a region becomes replicated (loop, between ticks): every character
 * alive keeps its records from now on, so the ticks that follow allocate
 * only for characters made later. Out of memory here is not an error:
 * the tick that first sees such a character tries again. */
void srv_replica_keep_all(srv_crowd_t *crowd) {
  uint32_t cursor;
  for (srv_actor_t *a = srv_crowd_first(crowd, &cursor); a; a = srv_crowd_next(crowd, &cursor))
    if (keep_records_of(crowd, a)) return;
}
