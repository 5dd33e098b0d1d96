/* aoi.c: the ground grid and region views (see aoi.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "aoi.h"
#include "pose/world.h"

/* Cell coordinates stay within a grid a little wider than the world (roots
 * are held within it; a float past it would not fit an int). */
#define CELL_LIMIT ((int32_t)(ANIM_WORLD_LIMIT / SRV_AOI_CELL) + 2)

static int32_t cell_coordinate(float v) {
  float c = floorf(v * (1.0f / SRV_AOI_CELL));
  if (!(c > (float)-CELL_LIMIT)) return -CELL_LIMIT; /* NaN too */
  if (c > (float)CELL_LIMIT) return CELL_LIMIT;
  return (int32_t)c;
}

static uint32_t cell_home(int32_t cx, int32_t cz, uint32_t mask) {
  uint64_t key = (uint64_t)(uint32_t)cx << 32 | (uint32_t)cz;
  return (uint32_t)((key * 0x9e3779b97f4a7c15u) >> 32) & mask;
}

/* Grows *array to hold n elements of size bytes (never shrinks). 0 or ANIM_ENOMEM. */
static int grow(void **array, uint32_t *capacity, uint32_t n, size_t size) {
  if (n <= *capacity) return 0;
  uint32_t c = *capacity ? *capacity : 16;
  while (c < n) c *= 2;
  void *grown = realloc(*array, (size_t)c * size);
  if (!grown) return ANIM_ENOMEM;
  *array = grown, *capacity = c;
  return 0;
}

#define GROW(array, capacity, n) grow((void **)&(array), &(capacity), (n), sizeof *(array))

/* ---- the grid ----------------------------------------------------------------------------- */

/* Room for n actors: three arrays of one capacity, and a cell table at most half full. */
static int grid_reserve(srv_aoi_grid_t *g, uint32_t n) {
  if (n > g->capacity) {
    uint32_t capacity = g->capacity ? g->capacity : 64;
    while (capacity < n) capacity *= 2;
    srv_aoi_entry_t *entries = realloc(g->entries, (size_t)capacity * sizeof *entries);
    if (entries) g->entries = entries;
    uint32_t *slot_of = realloc(g->slot_of, (size_t)capacity * sizeof *slot_of);
    if (slot_of) g->slot_of = slot_of;
    uint32_t *occupied = realloc(g->occupied, (size_t)capacity * sizeof *occupied);
    if (occupied) g->occupied = occupied;
    if (!entries || !slot_of || !occupied) return ANIM_ENOMEM;
    g->capacity = capacity;
  }
  uint32_t want = 2 * n < 64 ? 64 : 2 * n;
  if (want <= g->cells_capacity) return 0;
  uint32_t had = g->cells_capacity;
  if (GROW(g->cells, g->cells_capacity, want)) return ANIM_ENOMEM;
  if (had != g->cells_capacity) memset(g->cells, 0, (size_t)g->cells_capacity * sizeof *g->cells), g->ncells = 0;
  return 0;
}

int srv_aoi_grid_build(srv_aoi_grid_t *g, srv_actor_t *const *actors, uint32_t n) {
  /* Only the last build's cells are emptied, not the whole table (a grown
   * table starts empty): a few hundred slots rather than 2n. */
  for (uint32_t k = 0; k < g->ncells; k++) g->cells[g->occupied[k]].count = 0;
  g->nentries = g->ncells = 0;
  if (grid_reserve(g, n) != 0) return ANIM_ENOMEM;
  uint32_t mask = g->cells_capacity - 1;
  /* Count per cell, remembering each actor's slot. */
  for (uint32_t i = 0; i < n; i++) {
    const srv_actor_t *a = actors[i];
    g->slot_of[i] = UINT32_MAX;
    if (!a->pose.positions || a->pose.nbones < 1) continue;
    int32_t cx = cell_coordinate(a->pose.positions[0].x), cz = cell_coordinate(a->pose.positions[0].z);
    uint32_t slot = cell_home(cx, cz, mask);
    while (g->cells[slot].count && (g->cells[slot].cx != cx || g->cells[slot].cz != cz)) slot = (slot + 1) & mask;
    srv_aoi_cell_t *cell = &g->cells[slot];
    if (!cell->count) cell->cx = cx, cell->cz = cz, g->occupied[g->ncells++] = slot;
    cell->count++;
    g->slot_of[i] = slot;
  }
  /* Each cell's start; count becomes the fill cursor. */
  uint32_t start = 0;
  for (uint32_t k = 0; k < g->ncells; k++) {
    srv_aoi_cell_t *cell = &g->cells[g->occupied[k]];
    cell->start = start;
    start += cell->count;
    cell->count = 0;
  }
  for (uint32_t i = 0; i < n; i++) {
    if (g->slot_of[i] == UINT32_MAX) continue;
    srv_aoi_cell_t *cell = &g->cells[g->slot_of[i]];
    srv_actor_t *a = actors[i];
    g->entries[cell->start + cell->count++] = (srv_aoi_entry_t){a, a->pose.positions[0].x, a->pose.positions[0].z};
  }
  g->nentries = start;
  return 0;
}

void srv_aoi_grid_free(srv_aoi_grid_t *g) {
  free(g->cells), free(g->occupied), free(g->entries), free(g->slot_of);
  memset(g, 0, sizeof *g);
}

size_t srv_aoi_grid_bytes(const srv_aoi_grid_t *g) {
  return (size_t)g->cells_capacity * sizeof *g->cells +
         (size_t)g->capacity * (sizeof *g->occupied + sizeof *g->entries + sizeof *g->slot_of);
}

static const srv_aoi_cell_t *grid_cell(const srv_aoi_grid_t *g, int32_t cx, int32_t cz) {
  uint32_t mask = g->cells_capacity - 1;
  for (uint32_t slot = cell_home(cx, cz, mask); g->cells[slot].count; slot = (slot + 1) & mask)
    if (g->cells[slot].cx == cx && g->cells[slot].cz == cz) return &g->cells[slot];
  return NULL;
}

/* ---- id sets ------------------------------------------------------------------------------ */

static uint32_t id_home(uint64_t id, uint32_t mask) { return (uint32_t)((id * 0x9e3779b97f4a7c15u) >> 32) & mask; }

/* An empty set with room for n ids (at most half full). */
static int set_reset(uint64_t **set, uint32_t *capacity, uint32_t n) {
  if (GROW(*set, *capacity, 2 * n < 16 ? 16 : 2 * n)) return ANIM_ENOMEM;
  memset(*set, 0, (size_t)*capacity * sizeof **set);
  return 0;
}

static uint32_t set_add(uint64_t *set, uint32_t capacity, uint64_t id) {
  uint32_t mask = capacity - 1, slot = id_home(id, mask);
  while (set[slot] && set[slot] != id) slot = (slot + 1) & mask;
  set[slot] = id;
  return slot;
}

/* id's slot in set, or -1. */
static int64_t set_find(const uint64_t *set, uint32_t capacity, uint64_t id) {
  if (!capacity) return -1;
  uint32_t mask = capacity - 1;
  for (uint32_t slot = id_home(id, mask); set[slot]; slot = (slot + 1) & mask)
    if (set[slot] == id) return slot;
  return -1;
}

static int set_has(const uint64_t *set, uint32_t capacity, uint64_t id) { return set_find(set, capacity, id) >= 0; }

/* ---- views -------------------------------------------------------------------------------- */

srv_aoi_view_t *srv_aoi_view_create(const srv_aoi_region_t *region, float x, float z) {
  srv_aoi_view_t *v = calloc(1, sizeof *v);
  if (!v) return NULL;
  v->region = *region;
  v->x = x, v->z = z;
  return v;
}

void srv_aoi_view_free(srv_aoi_view_t *v) {
  if (!v) return;
  free(v->found), free(v->found_set), free(v->entered), free(v->left), free(v->due), free(v->told);
  free(v->told_set), free(v->due_member), free(v->found_sent), free(v->told_sent);
  free(v);
}

size_t srv_aoi_view_bytes(const srv_aoi_view_t *v) {
  return sizeof *v + (size_t)v->found_capacity * sizeof *v->found +
         (size_t)(v->found_set_capacity + v->told_set_capacity + v->found_sent_capacity + v->told_sent_capacity +
                  v->left_capacity + v->told_capacity) *
             sizeof(uint64_t) +
         (size_t)v->entered_capacity * sizeof *v->entered +
         (size_t)v->due_capacity * sizeof *v->due + (size_t)v->due_member_capacity * sizeof *v->due_member;
}

/* The half-extents of the region's bounding box. */
static void extent(const srv_aoi_region_t *r, float *out_x, float *out_z) {
  *out_x = r->box ? r->half_x : r->radius;
  *out_z = r->box ? r->half_z : r->radius;
}

static int inside(const srv_aoi_region_t *r, float dx, float dz) {
  if (r->box) return fabsf(dx) <= r->half_x && fabsf(dz) <= r->half_z;
  return dx * dx + dz * dz <= r->radius * r->radius;
}

static int add_found(srv_aoi_view_t *v, const srv_aoi_entry_t *e) {
  float dx = e->x - v->x, dz = e->z - v->z;
  if (!inside(&v->region, dx, dz)) return 0;
  if (GROW(v->found, v->found_capacity, v->nfound + 1)) return ANIM_ENOMEM;
  v->found[v->nfound++] = (srv_aoi_member_t){e->actor, dx * dx + dz * dz, 0, 0};
  return 0;
}

static int add_cell(srv_aoi_view_t *v, const srv_aoi_grid_t *g, const srv_aoi_cell_t *cell) {
  for (uint32_t i = 0; i < cell->count; i++)
    if (add_found(v, &g->entries[cell->start + i])) return ANIM_ENOMEM;
  return 0;
}

/* Every character inside the region, into found. */
static int query(srv_aoi_view_t *v, const srv_aoi_grid_t *g) {
  v->nfound = 0;
  if (!g->ncells) return 0;
  float ex, ez;
  extent(&v->region, &ex, &ez);
  int32_t x0 = cell_coordinate(v->x - ex), x1 = cell_coordinate(v->x + ex);
  int32_t z0 = cell_coordinate(v->z - ez), z1 = cell_coordinate(v->z + ez);
  uint64_t box_cells = (uint64_t)(x1 - x0 + 1) * (uint64_t)(z1 - z0 + 1);
  if (box_cells <= g->ncells) {
    for (int32_t cx = x0; cx <= x1; cx++)
      for (int32_t cz = z0; cz <= z1; cz++) {
        const srv_aoi_cell_t *cell = grid_cell(g, cx, cz);
        if (cell && add_cell(v, g, cell)) return ANIM_ENOMEM;
      }
    return 0;
  }
  for (uint32_t k = 0; k < g->ncells; k++) { /* the region covers more cells than are in use */
    const srv_aoi_cell_t *cell = &g->cells[g->occupied[k]];
    if (cell->cx >= x0 && cell->cx <= x1 && cell->cz >= z0 && cell->cz <= z1 && add_cell(v, g, cell))
      return ANIM_ENOMEM;
  }
  return 0;
}

/* a before b: nearer, ties by id (the same order every tick). */
static int nearer(const srv_aoi_member_t *a, const srv_aoi_member_t *b) {
  if (a->d2 != b->d2) return a->d2 < b->d2;
  return a->actor->id < b->actor->id;
}

static void swap(srv_aoi_member_t *a, srv_aoi_member_t *b) {
  srv_aoi_member_t t = *a;
  *a = *b, *b = t;
}

/* Moves the k nearest of m[0..n) to m[0..k) (k < n), in place: Hoare's
 * selection with a median of three. Not qsort: glibc's allocates a buffer
 * for arrays over a few hundred members, and this runs every tick. */
static void select_nearest(srv_aoi_member_t *m, uint32_t n, uint32_t k) {
  uint32_t lo = 0, hi = n - 1;
  while (hi > lo) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (nearer(&m[mid], &m[lo])) swap(&m[mid], &m[lo]);
    if (nearer(&m[hi], &m[lo])) swap(&m[hi], &m[lo]);
    if (nearer(&m[hi], &m[mid])) swap(&m[hi], &m[mid]);
    srv_aoi_member_t pivot = m[mid];
    uint32_t i = lo, j = hi;
    while (i <= j) {
      while (nearer(&m[i], &pivot)) i++;
      while (nearer(&pivot, &m[j])) j--;
      if (i <= j) {
        swap(&m[i], &m[j]);
        i++;
        if (j == 0) break;
        j--;
      }
    }
    if (k <= j) hi = j; /* the k-th nearest is left of i */
    else if (k >= i) lo = i;
    else return;
  }
}

/* Sorts m[0..n) nearest first, in place (heapsort: no allocation, n log n). */
static void sift(srv_aoi_member_t *m, uint32_t root, uint32_t end) {
  for (;;) { /* a heap with the farthest on top */
    uint32_t child = 2 * root + 1;
    if (child >= end) return;
    if (child + 1 < end && nearer(&m[child], &m[child + 1])) child++;
    if (!nearer(&m[root], &m[child])) return;
    swap(&m[root], &m[child]);
    root = child;
  }
}

static void sort_nearest(srv_aoi_member_t *m, uint32_t n) {
  for (uint32_t start = n / 2; start-- > 0;) sift(m, start, n);
  for (uint32_t end = n; end > 1; end--) {
    swap(&m[0], &m[end - 1]);
    sift(m, 0, end - 1);
  }
}

/* The band's divisor for a squared distance: the first band reaching it, else the last. */
static uint32_t divisor_at(const srv_aoi_region_t *r, float d2) {
  for (int b = 0; b < r->nbands; b++)
    if (d2 <= r->bands[b].radius * r->bands[b].radius) return r->bands[b].rate_divisor;
  return r->bands[r->nbands - 1].rate_divisor;
}

/* Spreads a band's characters over its divisor's ticks (ids are sequential per slot: hashed). */
static uint32_t phase_of(uint64_t id) { return (uint32_t)((id * 0x9e3779b97f4a7c15u) >> 40); }

int srv_aoi_view_update(srv_aoi_view_t *v, const srv_aoi_grid_t *g, uint64_t tick, int all_due) {
  v->nentered = v->nleft = v->ndue = 0;
  if (query(v, g)) return ANIM_ENOMEM;
  uint32_t cap = v->region.max_characters;
  if (cap && v->nfound > cap) {
    select_nearest(v->found, v->nfound, cap);
    v->nfound = cap;
    sort_nearest(v->found, cap);
  }
  /* Everything the frame and the commit need, grown now: commit cannot fail. */
  if (set_reset(&v->found_set, &v->found_set_capacity, v->nfound) || GROW(v->due, v->due_capacity, v->nfound) ||
      GROW(v->due_member, v->due_member_capacity, v->nfound) ||
      GROW(v->entered, v->entered_capacity, v->nfound) || GROW(v->left, v->left_capacity, v->ntold) ||
      GROW(v->told, v->told_capacity, v->nfound))
    return ANIM_ENOMEM;
  /* found_sent follows found_set's capacity (commit fills it by slot). */
  if (v->found_sent_capacity < v->found_set_capacity) {
    uint64_t *grown = realloc(v->found_sent, (size_t)v->found_set_capacity * sizeof *grown);
    if (!grown) return ANIM_ENOMEM;
    v->found_sent = grown, v->found_sent_capacity = v->found_set_capacity;
  }
  for (uint32_t i = 0; i < v->nfound; i++) {
    srv_actor_t *a = v->found[i].actor;
    v->found[i].slot = set_add(v->found_set, v->found_set_capacity, a->id);
    int64_t told = set_find(v->told_set, v->ntold ? v->told_set_capacity : 0, a->id);
    int entered = told < 0;
    v->found[i].sent = entered || !v->told_sent ? 0 : v->told_sent[told];
    if (entered) {
      const anim_database_t *db = &a->entry->db;
      v->entered[v->nentered++] = (srv_stream_entered_t){a->id, db->name, db->version, (uint32_t)a->pose.nbones};
    }
    uint32_t divisor = divisor_at(&v->region, v->found[i].d2);
    if (divisor <= 1) a->lod_scale = 1; /* watched closely: full detail (crowd.c's level of detail) */
    if (all_due || entered || (tick + phase_of(a->id)) % divisor == 0) v->due_member[v->ndue] = i, v->due[v->ndue++] = a;
  }
  for (uint32_t i = 0; i < v->ntold; i++)
    if (!set_has(v->found_set, v->found_set_capacity, v->told[i])) v->left[v->nleft++] = v->told[i];
  return 0;
}

void srv_aoi_view_commit(srv_aoi_view_t *v) {
  for (uint32_t i = 0; i < v->nfound; i++) {
    v->told[i] = v->found[i].actor->id;
    v->found_sent[v->found[i].slot] = v->found[i].sent;
  }
  v->ntold = v->nfound;
  /* This tick's set becomes the told one; the old told set's array is next tick's to fill. */
  uint64_t *set = v->told_set, *sent = v->told_sent;
  uint32_t capacity = v->told_set_capacity, sent_capacity = v->told_sent_capacity;
  v->told_set = v->found_set, v->told_set_capacity = v->found_set_capacity;
  v->told_sent = v->found_sent, v->told_sent_capacity = v->found_sent_capacity;
  v->found_set = set, v->found_set_capacity = capacity;
  v->found_sent = sent, v->found_sent_capacity = sent_capacity;
  v->nentered = v->nleft = 0;
}

/* Sorts due (and due_member with it) by id: heapsort, no allocation. */
static int due_before(const srv_aoi_view_t *v, uint32_t a, uint32_t b) { return v->due[a]->id < v->due[b]->id; }

static void due_swap(srv_aoi_view_t *v, uint32_t a, uint32_t b) {
  srv_actor_t *t = v->due[a];
  uint32_t m = v->due_member[a];
  v->due[a] = v->due[b], v->due_member[a] = v->due_member[b];
  v->due[b] = t, v->due_member[b] = m;
}

static void due_sift(srv_aoi_view_t *v, uint32_t root, uint32_t end) {
  for (;;) {
    uint32_t child = 2 * root + 1;
    if (child >= end) return;
    if (child + 1 < end && due_before(v, child, child + 1)) child++;
    if (!due_before(v, root, child)) return;
    due_swap(v, root, child);
    root = child;
  }
}

void srv_aoi_view_sort_due(srv_aoi_view_t *v) {
  uint32_t n = v->ndue;
  for (uint32_t start = n / 2; start-- > 0;) due_sift(v, start, n);
  for (uint32_t end = n; end > 1; end--) {
    due_swap(v, 0, end - 1);
    due_sift(v, 0, end - 1);
  }
}
