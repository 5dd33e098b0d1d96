/* history.c: a character's recent ticks in a ring (see history.h). */
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "character/history.h"

/* A record's layout: the header, then the query (cols floats), the
 * candidates (ncandidates hits), their group costs (ncandidates x nterms
 * floats), the pose's rotations (nbones quats, 16-byte aligned) and its
 * local positions (nbones vec3); the stride keeps the next header 16-byte
 * aligned. */
typedef struct {
  size_t query, candidates, group_costs, rotations, positions, stride;
} layout_t;

static size_t align16(size_t bytes) { return (bytes + 15) & ~(size_t)15; }

static layout_t layout_of(int cols, int nterms, int nbones, int ncandidates) {
  layout_t l;
  l.query = align16(sizeof(anim_history_record_t));
  l.candidates = l.query + align16((size_t)cols * sizeof(float));
  l.group_costs = l.candidates + align16((size_t)ncandidates * sizeof(anim_search_hit_t));
  l.rotations = l.group_costs + align16((size_t)ncandidates * (size_t)nterms * sizeof(float));
  l.positions = l.rotations + align16((size_t)nbones * sizeof(quat));
  l.stride = l.positions + align16((size_t)nbones * sizeof(vec3));
  return l;
}

static int valid(const anim_database_t *db, int capacity, int ncandidates) {
  return db && db->features.values && db->features.schema.nterms >= 1 && db->nbones >= 1 && capacity >= 1 &&
         capacity <= ANIM_HISTORY_MAX_TICKS && ncandidates >= 1 && ncandidates <= ANIM_HISTORY_MAX_CANDIDATES;
}

size_t anim_history_bytes(const anim_database_t *db, int capacity, int ncandidates) {
  if (!valid(db, capacity, ncandidates)) return 0;
  layout_t l = layout_of(db->features.cols, db->features.schema.nterms, db->nbones, ncandidates);
  return l.stride * (size_t)capacity + (size_t)ncandidates * sizeof(anim_search_hit_t);
}

int anim_history_init(anim_history_t *out, const anim_database_t *db, int capacity, int ncandidates,
                      const volatile uint64_t *clock, uint64_t first_tick) {
  memset(out, 0, sizeof *out);
  size_t bytes = anim_history_bytes(db, capacity, ncandidates);
  if (!bytes) return ANIM_EINVAL;
  /* 16-byte records: the pose's quats and the header's fields aligned. */
  void *block = aligned_alloc(16, align16(bytes));
  if (!block) return ANIM_ENOMEM;
  memset(block, 0, align16(bytes)); /* touched now, not on the first ticks that record */
  layout_t l = layout_of(db->features.cols, db->features.schema.nterms, db->nbones, ncandidates);
  out->block = block;
  out->bytes = align16(bytes);
  out->stride = l.stride;
  out->capacity = capacity;
  out->ncandidates = ncandidates;
  out->cols = db->features.cols, out->nterms = db->features.schema.nterms, out->nbones = db->nbones;
  out->clock = clock;
  out->next_tick = first_tick;
  out->scratch = (anim_search_hit_t *)((char *)block + l.stride * (size_t)capacity);
  return 0;
}

void anim_history_free(anim_history_t *h) {
  if (!h) return;
  free(h->block);
  memset(h, 0, sizeof *h);
}

static anim_history_record_t *slot(const anim_history_t *h, uint64_t n) {
  return (anim_history_record_t *)((char *)h->block + h->stride * (size_t)(n % (uint64_t)h->capacity));
}

static layout_t layout(const anim_history_t *h) { return layout_of(h->cols, h->nterms, h->nbones, h->ncandidates); }

const float *anim_history_query(const anim_history_t *h, const anim_history_record_t *r) {
  return (const float *)((const char *)r + layout(h).query);
}
const anim_search_hit_t *anim_history_candidates(const anim_history_t *h, const anim_history_record_t *r) {
  return (const anim_search_hit_t *)((const char *)r + layout(h).candidates);
}
const float *anim_history_group_costs(const anim_history_t *h, const anim_history_record_t *r) {
  return (const float *)((const char *)r + layout(h).group_costs);
}
const quat *anim_history_rotations(const anim_history_t *h, const anim_history_record_t *r) {
  return (const quat *)((const char *)r + layout(h).rotations);
}

const vec3 *anim_history_positions(const anim_history_t *h, const anim_history_record_t *r) {
  return (const vec3 *)((const char *)r + layout(h).positions);
}


/* The top candidates of the tick's query, each with its cost by group. */
static void record_candidates(anim_history_t *h, const anim_controller_t *c, const anim_search_query_t *search,
                              anim_history_record_t *r, const layout_t *l) {
  float *query = (float *)((char *)r + l->query);
  anim_search_hit_t *hits = (anim_search_hit_t *)((char *)r + l->candidates);
  float *costs = (float *)((char *)r + l->group_costs);
  const anim_features_t *f = &c->db->features;
  memcpy(query, search->query, (size_t)f->cols * sizeof *query);
  anim_search_query_t q = *search;
  q.query = query;
  q.k = h->ncandidates;
  int count = 0;
  if (anim_search_run(c->index, &q, hits, &count, h->scratch) != 0) count = 0;
  r->ncandidates = count;
  r->current_frame = search->current_frame;
  r->transition_cost = search->transition_cost;
  r->ignore_range_end = search->ignore_range_end, r->ignore_surrounding = search->ignore_surrounding;
  r->tag_mask = search->tag_mask;
  for (int i = 0; i < count; i++) {
    const float *row = f->values + (size_t)hits[i].frame * (size_t)f->cols;
    for (int t = 0; t < f->schema.nterms; t++)
      costs[(size_t)i * (size_t)h->nterms + (size_t)t] =
          anim_search_distance(query + f->group_start[t], row + f->group_start[t], f->group_dims[t]);
  }
}

void anim_history_record(anim_history_t *h, const anim_controller_t *c, const anim_search_query_t *search,
                         const anim_search_hit_t *best) {
  layout_t l = layout(h);
  anim_history_record_t *r = slot(h, h->count);
  r->tick = h->clock ? *h->clock : h->next_tick++;
  r->frame = c->frame;
  r->chosen = search && best ? best->frame : -1;
  r->flags = (search ? ANIM_HISTORY_SEARCHED : 0) | (c->transitioned ? ANIM_HISTORY_TRANSITIONED : 0) |
             (search && c->search_at_rest ? ANIM_HISTORY_AT_REST : 0) | (c->holding ? ANIM_HISTORY_HOLDING : 0);
  r->reasons = search ? (uint32_t)c->search_reasons : 0;
  r->ncandidates = 0;
  r->current_frame = -1, r->transition_cost = 0.0f, r->ignore_range_end = r->ignore_surrounding = 0;
  r->tag_mask = 0;
  if (search) record_candidates(h, c, search, r, &l);
  r->time_since_transition = c->time_since_transition;
  r->halflife = c->params.inertialize_halflife;
  r->offset_position = c->offset_positions[0];
  /* The largest angle is the smallest |w| (angle = 2 acos |w|): one acos a tick, not one a bone. */
  float smallest_w = 1.0f;
  for (int b = 0; b < h->nbones; b++) {
    float w = fabsf(c->offset_rotations[b].w);
    if (w < smallest_w) smallest_w = w;
  }
  r->offset_angle = 2.0f * acosf(smallest_w);
  r->root_position = c->pose_positions[0];
  memcpy((char *)r + l.rotations, c->pose_rotations, (size_t)h->nbones * sizeof(quat));
  memcpy((char *)r + l.positions, c->pose_positions, (size_t)h->nbones * sizeof(vec3));
  h->count++;
}

uint64_t anim_history_held(const anim_history_t *h) {
  return h->count < (uint64_t)h->capacity ? h->count : (uint64_t)h->capacity;
}

const anim_history_record_t *anim_history_at(const anim_history_t *h, uint64_t i) {
  uint64_t held = anim_history_held(h);
  return i < held ? slot(h, h->count - held + i) : NULL;
}

int anim_history_span(const anim_history_t *h, uint64_t *out_first, uint64_t *out_last) {
  uint64_t held = anim_history_held(h);
  if (!held) return ANIM_ENOTFOUND;
  *out_first = anim_history_at(h, 0)->tick;
  *out_last = anim_history_at(h, held - 1)->tick;
  return 0;
}

/* Ticks only grow, so the records are sorted by tick: a binary search
 * (a clock may pass over ticks, so tick - first is not an index). */
const anim_history_record_t *anim_history_find(const anim_history_t *h, uint64_t tick) {
  uint64_t lo = 0, hi = anim_history_held(h);
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    const anim_history_record_t *r = anim_history_at(h, mid);
    if (r->tick == tick) return r;
    if (r->tick < tick) lo = mid + 1;
    else hi = mid;
  }
  return NULL;
}
