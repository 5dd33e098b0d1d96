/*
 * service_graph.c: build, describe and query a database's motion graph, and
 * give MODE_GRAPH characters their paths.
 *
 * A build is checked and marked on the loop (prepare), runs on the thread
 * pool (handle, the strips in turn, progress in the entry's slot) and is
 * installed on the loop (finish); a build that fails or never runs is
 * recorded by the release of the job the response holds. A query plays a
 * MODE_GRAPH character without creating one, on the pool, on a reference to
 * the graph taken on the loop.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "actor_graph.h"
#include "anim_error.h"
#include "animserver.pb-c.h"
#include "graphs.h"
#include "service.h"

static void graph_release(void *graph) { srv_graph_release(graph); }

/* ---- options: the request's, resolved against the database ---- */

static int resolve_options(const srv_graph_request_options_t *in, const anim_database_t *db, srv_graph_options_t *out,
                           srv_response_t *response) {
  memset(out, 0, sizeof *out);
  anim_graph_options_t *o = &out->core;
  anim_graph_options_default(o);
  if (in->window) o->window = in->window;
  if (in->threshold) o->threshold = in->threshold;
  o->min_gap = in->min_gap, o->spacing = in->spacing, o->node_spacing = in->node_spacing;
  o->prune = !in->keep_all;
  o->slide = in->slide;
  out->matrix_size = in->matrix_size;
  for (int t = 0; t < in->ntags; t++) {
    int bit = anim_database_find_tag(db, in->tags[t]);
    if (bit < 0)
      return srv_response_fail(response, ANIM_ENOTFOUND,
                               "build_graph.options.tags[%d] = \"%s\": database %s has no such tag", t, in->tags[t],
                               db->name);
    o->tag_mask |= 1u << bit;
  }
  if (in->nweights) {
    if (in->nweights != db->nbones)
      return srv_response_fail(response, ANIM_EDIMENSION,
                               "build_graph.options.bone_weights: %d weights, database %s has %d bones",
                               in->nweights, db->name, db->nbones);
    memcpy(out->weights, in->bone_weights, (size_t)in->nweights * sizeof *out->weights);
    out->nweights = in->nweights;
    o->bone_weights = out->weights;
  }
  int h = (int)lroundf(o->window * db->frame_rate * 0.5f);
  if (h < 1)
    return srv_response_fail(response, ANIM_EINVAL, "build_graph.options.window = %g: under two frames at %g Hz",
                             o->window, db->frame_rate);
  if (o->spacing > h)
    return srv_response_fail(response, ANIM_EINVAL,
                             "build_graph.options.spacing = %d: at most half the window (%d frames)", o->spacing, h);
  int rc = anim_graph_options_validate(o, db);
  if (rc) return srv_response_fail(response, rc, "build_graph.options: %s", anim_strerror(rc));
  if (!o->spacing) o->spacing = h; /* reported as built */
  if (!o->min_gap) o->min_gap = 2 * h + 1;
  if (!o->node_spacing) o->node_spacing = (int)lroundf(0.1f * db->frame_rate);
  return 0;
}

/* ---- describing: a snapshot on the loop ---- */

static void describe_into(const srv_service_ctx_t *ctx, srv_db_entry_t *entry, srv_graph_description_t *d,
                          srv_response_t *out) {
  const srv_graph_slot_t *slot = entry->graph;
  d->status = ANIMSERVER__GRAPH_STATUS__GRAPH_NONE;
  if (slot) {
    d->status = slot->building ? ANIMSERVER__GRAPH_STATUS__GRAPH_BUILDING
                : slot->failed ? ANIMSERVER__GRAPH_STATUS__GRAPH_FAILED
                : slot->ready  ? ANIMSERVER__GRAPH_STATUS__GRAPH_READY
                               : ANIMSERVER__GRAPH_STATUS__GRAPH_NONE;
    d->rows_done = atomic_load(&slot->rows_done);
    d->rows_total = atomic_load(&slot->rows_total);
    snprintf(d->error, sizeof d->error, "%s", slot->failed ? slot->error : "");
    if (slot->ready) {
      d->graph = srv_graph_retain(slot->ready);
      out->held = d->graph, out->release_held = graph_release;
    }
  }
  /* The characters on the graph that serves, not on an older build: each
   * keeps the graph it started on (as machine characters their bindings). */
  uint32_t cursor;
  const srv_graph_t *ready = slot ? slot->ready : NULL;
  for (srv_actor_t *a = srv_crowd_first(ctx->env->crowd, &cursor); ready && a;
       a = srv_crowd_next(ctx->env->crowd, &cursor))
    d->characters += srv_actor_graph_of(a) == ready;
}

static int describe(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  srv_graph_description_t *d = &out->body.describe_graph.description;
  d->transitions = request->body.describe_graph.transitions;
  d->matrix = request->body.describe_graph.matrix;
  describe_into(ctx, out->entry, d, out);
  return 0;
}

/* ---- building ---- */

static int build_begin(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  int rc = srv_service_acquire_database(ctx, request, out);
  if (rc) return rc;
  const anim_database_t *db = &out->entry->db;
  srv_graph_options_t options;
  if ((rc = resolve_options(&request->body.build_graph.options, db, &options, out))) return rc;
  char why[320];
  if (srv_graph_build_fits(ctx->env->registry, db, &options, ctx->env->config->max_graph_memory, why, sizeof why))
    return srv_response_fail(out, ANIM_ELIMIT, "build_graph.database = \"%s\": %s", db->name, why);
  srv_graph_slot_t *slot = srv_graph_slot_of(out->entry);
  if (!slot) return ANIM_ENOMEM;
  if (slot->building)
    return srv_response_fail(out, ANIM_EBUSY, "build_graph.database = \"%s\": its graph is being built "
                             "(describe_graph reports the progress)", db->name);
  if (srv_graphs_building(ctx->env->registry) >= SRV_GRAPH_MAX_BUILDS)
    return srv_response_fail(out, ANIM_EBUSY,
                             "build_graph: %d graph build%s in flight on this server, at most %d at once",
                             SRV_GRAPH_MAX_BUILDS, SRV_GRAPH_MAX_BUILDS > 1 ? "s" : "", SRV_GRAPH_MAX_BUILDS);
  srv_graph_build_t *job = srv_graph_build_begin(slot, db, &options);
  if (!job) return ANIM_ENOMEM;
  out->held = job, out->release_held = srv_graph_build_end;
  return 0;
}

static int build_run(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  srv_graph_build_t *job = out->held;
  int rc = srv_graph_build_run(job);
  return rc ? srv_response_fail(out, rc, "build_graph: %s", job->err) : 0;
}

static int build_end(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  srv_graph_build_end(out->held);
  out->held = NULL;
  describe_into(ctx, out->entry, &out->body.build_graph.description, out);
  return 0;
}

/* ---- querying ---- */

/* The graph serving on the response's entry, a reference held by the response. */
static int hold_ready(const char *request_name, srv_response_t *out, srv_graph_t **out_graph) {
  const srv_graph_slot_t *slot = out->entry->graph;
  if (!slot || !slot->ready) {
    int building = slot && slot->building;
    return srv_response_fail(out, building ? ANIM_EAGAIN : ANIM_ENOTFOUND, "%s.database = \"%s\": %s", request_name,
                             out->entry->db.name,
                             building ? "its graph is still being built" : "no graph: build_graph first");
  }
  *out_graph = srv_graph_retain(slot->ready);
  return 0;
}

static int query_prepare(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  srv_graph_t *graph = NULL;
  int rc = srv_service_acquire_database(ctx, request, out);
  if (rc || (rc = hold_ready("query_graph", out, &graph))) return rc;
  out->held = graph, out->release_held = graph_release;
  return 0;
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

/* Pool: a headless graph character on the path, one database frame a tick. */
static int query(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  const srv_query_graph_request_t *req = &request->body.query_graph;
  srv_query_graph_response_t *r = &out->body.query_graph;
  const srv_graph_t *graph = out->held;
  const anim_motion_graph_t *g = graph->graph;
  const anim_database_t *db = &out->entry->db;
  float dt = 1.0f / db->frame_rate;
  int ticks = (int)ceilf(req->seconds * db->frame_rate), settle = (int)lroundf(req->settle * db->frame_rate);
  if (!(r->steps = srv_response_alloc(out, (size_t)(ticks + 1) * sizeof *r->steps)) ||
      (req->roots && !(r->roots = srv_response_alloc(out, (size_t)(ticks + 1) * 2 * sizeof *r->roots))))
    return ANIM_ENOMEM;
  anim_graph_character_t c;
  anim_controller_params_t defaults;
  anim_controller_params_default(&defaults);
  int start = srv_graph_node_from(g, req->start_frame >= 0 ? req->start_frame : 0);
  anim_path_t path = {req->points, req->npoints, req->closed};
  int rc = anim_graph_character_init(&c, g, db, &req->options, defaults.inertialize_halflife,
                                     vec3_make(req->x, 0.0f, req->z), req->facing, start);
  if (!rc) rc = anim_graph_character_set_path(&c, &path);
  if (rc) {
    anim_graph_character_free(&c);
    return srv_response_fail(out, rc, "query_graph: %s", anim_strerror(rc));
  }
  float length = c.planner.length, s = c.s, error_sum = 0.0f;
  int counted = 0, prev_edge = -1, prev_frame = -1, t = 0;
  double plan_ms_sum = 0.0;
  for (; t < ticks; t++) {
    uint64_t plans = c.plans;
    double t0 = now_ms();
    rc = anim_graph_character_tick(&c, dt);
    double ms = now_ms() - t0;
    if (rc) break;
    if (c.plans != plans) {
      r->plans++, plan_ms_sum += ms;
      if (ms > r->plan_ms_max) r->plan_ms_max = (float)ms;
      r->exhausted += (uint32_t)c.planner.exhausted;
    }
    if (c.edge >= 0 && (c.edge != prev_edge || c.frame < prev_frame)) {
      const anim_graph_edge_t *e = &g->edges[c.edge];
      r->steps[r->nsteps++] = (srv_graph_step_t){c.edge, e->first_frame, g->nodes[e->target].frame, e->transition >= 0,
                                                 (float)t * dt};
    }
    prev_edge = c.edge, prev_frame = c.frame;
    float x = c.pose_positions[0].x, z = c.pose_positions[0].z, d;
    if (r->roots) r->roots[2 * r->nroots] = x, r->roots[2 * r->nroots + 1] = z, r->nroots++;
    /* Progress along the part followed (unwrapped on a closed path); error to the nearest point. */
    float now = anim_path_planner_project(&c.planner, x, z, s, ANIM_GRAPH_TRACK_WINDOW, NULL), ds = now - s;
    if (req->closed) ds -= length * roundf(ds / length);
    r->arc += ds, s = now;
    anim_path_planner_project(&c.planner, x, z, 0.0f, -1.0f, &d);
    if (t >= settle) {
      error_sum += d, counted++;
      if (d > r->error_max) r->error_max = d, r->error_max_time = (float)t * dt;
    }
    if ((req->closed && r->arc >= length) || (!req->closed && (s >= length - 0.05f || c.arrived))) {
      t++;
      break;
    }
  }
  r->seconds = (float)t * dt;
  r->error_mean = counted ? error_sum / (float)counted : 0.0f;
  r->expansions = c.expansions;
  r->plan_ms_mean = r->plans ? (float)(plan_ms_sum / r->plans) : 0.0f;
  anim_graph_character_free(&c);
  return rc ? srv_response_fail(out, rc, "query_graph: at %.2f s: %s", r->seconds, anim_strerror(rc)) : 0;
}

/* ---- paths for characters ---- */

static int set_paths(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  const srv_set_paths_request_t *req = &request->body.set_paths;
  for (int i = 0; i < req->n; i++) {
    srv_actor_t *a = srv_service_owned_actor(ctx, req->items[i].character, "set_paths.paths", i, out);
    if (!a) return out->error;
    if (!srv_actor_graph_character(a))
      return srv_response_fail(out, ANIM_EUNSUPPORTED, "set_paths.paths[%d].character = %llu: a %s character, not "
                               "MODE_GRAPH", i, (unsigned long long)a->id, a->kind->name);
  }
  for (int i = 0; i < req->n; i++) {
    const srv_path_item_t *p = &req->items[i];
    srv_actor_t *a = srv_crowd_find(ctx->env->crowd, p->character);
    anim_graph_character_t *c = srv_actor_graph_character(a);
    anim_path_t path = {p->points, p->npoints, p->closed};
    if (!p->npoints) {
      anim_graph_character_wander(c, (uint32_t)p->character);
      continue;
    }
    int rc = anim_graph_character_set_path(c, &path);
    /* A longer path than the planner had room for grows it (even when a
     * second growth then fails): server_stats' character_bytes follows. */
    srv_crowd_remeasure(ctx->env->crowd, a);
    if (rc != 0) return srv_response_fail(out, ANIM_ENOMEM, "set_paths.paths[%d]: out of memory", i);
  }
  out->body.set_paths.tick = ctx->env->crowd->tick + 1;
  return 0;
}

static int always(const srv_request_t *request, const srv_response_t *prepared) { return 1; }

const srv_service_t srv_service_build_graph = {
    .prepare = build_begin, .handle = build_run, .finish = build_end, .off_loop = always};
/* Not parked during ticks (progress is polled): it reads only actors' kind
 * and graph, which never change. */
const srv_service_t srv_service_describe_graph = {.prepare = srv_service_acquire_database, .handle = describe};
const srv_service_t srv_service_query_graph = {.prepare = query_prepare, .handle = query, .off_loop = always};
const srv_service_t srv_service_set_paths = {.handle = set_paths, .flags = SRV_SERVICE_CROWD};
