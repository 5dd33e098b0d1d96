/*
 * codec_database.c: list, describe, load, reload and unload on the wire
 * (see codec.h). Describe and the changed-database answers read the entry
 * the response holds; list reads the summaries the service copied.
 */
#include <stdio.h>
#include "anim_error.h"
#include "codec_internal.h"
#include "registry.h"

int srv_decode_list_databases(srv_decoder_t *d, const Animserver__ListDatabasesRequest *in, srv_request_t *out) {
  return 0;
}

int srv_decode_describe_database(srv_decoder_t *d, const Animserver__DescribeDatabaseRequest *in, srv_request_t *out) {
  return srv_decode_database(d, "name", in->name);
}

int srv_decode_load_database(srv_decoder_t *d, const Animserver__LoadDatabaseRequest *in, srv_request_t *out) {
  return srv_decode_database(d, "name", in->name);
}

int srv_decode_reload_database(srv_decoder_t *d, const Animserver__ReloadDatabaseRequest *in, srv_request_t *out) {
  return srv_decode_database(d, "name", in->name);
}

int srv_decode_unload_database(srv_decoder_t *d, const Animserver__UnloadDatabaseRequest *in, srv_request_t *out) {
  return srv_decode_database(d, "name", in->name);
}

static Animserver__DatabaseSummary *encode_summary(srv_encoder_t *e, const srv_db_summary_t *s) {
  Animserver__DatabaseSummary *m = SRV_ENCODER_NEW(e, Animserver__DatabaseSummary, ANIMSERVER__DATABASE_SUMMARY__INIT);
  if (!m) return NULL;
  m->name = (char *)s->name;
  m->version = s->version;
  m->frames = s->frames;
  m->bones = s->bones;
  m->frame_rate = s->frame_rate;
  m->feature_dims = s->feature_dims;
  m->ranges = s->ranges;
  m->memory_bytes = s->memory_bytes;
  m->graph_memory_bytes = s->graph_memory_bytes;
  return m;
}

/* A summary of the held entry, in the encoder's scratch. */
static Animserver__DatabaseSummary *entry_summary(srv_encoder_t *e, const srv_db_entry_t *entry) {
  srv_db_summary_t *s = srv_encoder_alloc(e, sizeof *s);
  if (!s) return NULL;
  srv_db_entry_summary(entry, s);
  return encode_summary(e, s);
}

void srv_encode_list_databases(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  const srv_list_databases_response_t *r = &in->body.list_databases;
  Animserver__ListDatabasesResponse *list =
      SRV_ENCODER_NEW(e, Animserver__ListDatabasesResponse, ANIMSERVER__LIST_DATABASES_RESPONSE__INIT);
  if (!list || !(list->databases = srv_encoder_alloc(e, (size_t)(r->count + 1) * sizeof *list->databases))) return;
  for (int i = 0; i < r->count; i++) list->databases[list->n_databases++] = encode_summary(e, &r->summaries[i]);
  out->body_case = ANIMSERVER__RESPONSE__BODY_LIST_DATABASES;
  out->list_databases = list;
}

static const char *const feature_kind_names[] = {"position", "velocity", "trajectory position", "trajectory direction",
                                                 "inertialize"};

static void encode_skeleton(srv_encoder_t *e, const anim_database_t *db, Animserver__DescribeDatabaseResponse *out) {
  if (!(out->bones = srv_encoder_alloc(e, (size_t)db->nbones * sizeof *out->bones + 1))) return;
  for (int i = 0; i < db->nbones; i++) {
    Animserver__Bone *b = SRV_ENCODER_NEW(e, Animserver__Bone, ANIMSERVER__BONE__INIT);
    if (!b) return;
    b->name = (char *)db->skeleton.names[i];
    b->parent = db->skeleton.parents[i];
    out->bones[out->n_bones++] = b;
  }
  if (!(out->contact_bones = srv_encoder_alloc(e, ANIM_MAX_CONTACTS * sizeof *out->contact_bones))) return;
  for (int c = 0; c < db->ncontacts; c++)
    out->contact_bones[out->n_contact_bones++] = (char *)db->skeleton.names[db->contact_bones[c]];
}

static void encode_ranges(srv_encoder_t *e, const anim_database_t *db, Animserver__DescribeDatabaseResponse *out) {
  if (!(out->ranges = srv_encoder_alloc(e, (size_t)db->nranges * sizeof *out->ranges + 1))) return;
  for (int r = 0; r < db->nranges; r++) {
    Animserver__Range *m = SRV_ENCODER_NEW(e, Animserver__Range, ANIMSERVER__RANGE__INIT);
    if (!m || !(m->tags = srv_encoder_alloc(e, ANIM_MAX_TAGS * sizeof *m->tags))) return;
    m->name = (char *)db->ranges[r].name;
    m->start = (uint32_t)db->ranges[r].start;
    m->stop = (uint32_t)db->ranges[r].stop;
    for (int t = 0; t < db->ntags; t++)
      if (db->ranges[r].tag_mask & (1u << t)) m->tags[m->n_tags++] = (char *)db->tag_names[t];
    out->ranges[out->n_ranges++] = m;
  }
}

static void encode_schema(srv_encoder_t *e, const anim_features_t *f, Animserver__DescribeDatabaseResponse *out) {
  if (!(out->features = srv_encoder_alloc(e, (size_t)f->schema.nterms * sizeof *out->features + 1))) return;
  for (int t = 0; t < f->schema.nterms; t++) {
    const anim_feature_term_t *term = &f->schema.terms[t];
    Animserver__FeatureGroup *g = SRV_ENCODER_NEW(e, Animserver__FeatureGroup, ANIMSERVER__FEATURE_GROUP__INIT);
    if (!g) return;
    g->kind = (Animserver__FeatureKind)term->kind;
    g->bone = (char *)term->bone;
    g->weight = term->weight;
    g->halflife = term->halflife;
    g->n_frame_offsets = (size_t)term->nsamples;
    g->frame_offsets = (int32_t *)term->frame_offsets;
    g->first_column = (uint32_t)f->group_start[t];
    g->dims = (uint32_t)f->group_dims[t];
    g->n_offset = g->n_scale = (size_t)f->group_dims[t];
    g->offset = f->offset + f->group_start[t];
    g->scale = f->scale + f->group_start[t];
    out->features[out->n_features++] = g;
  }
}

void srv_encode_describe_database(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  Animserver__DescribeDatabaseResponse *d =
      SRV_ENCODER_NEW(e, Animserver__DescribeDatabaseResponse, ANIMSERVER__DESCRIBE_DATABASE_RESPONSE__INIT);
  if (!d) return;
  const anim_database_t *db = &in->entry->db;
  d->summary = entry_summary(e, in->entry);
  encode_skeleton(e, db, d);
  encode_ranges(e, db, d);
  encode_schema(e, &db->features, d);
  out->body_case = ANIMSERVER__RESPONSE__BODY_DESCRIBE_DATABASE;
  out->describe_database = d;
}

static void encode_changed(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  Animserver__DatabaseChangedResponse *c =
      SRV_ENCODER_NEW(e, Animserver__DatabaseChangedResponse, ANIMSERVER__DATABASE_CHANGED_RESPONSE__INIT);
  if (!c) return;
  c->summary = entry_summary(e, in->entry);
  out->body_case = ANIMSERVER__RESPONSE__BODY_DATABASE_CHANGED;
  out->database_changed = c;
}

void srv_encode_load_database(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  encode_changed(e, in, out);
}
void srv_encode_reload_database(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  encode_changed(e, in, out);
}
void srv_encode_unload_database(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  encode_changed(e, in, out);
}

/* "LeftFoot position", "trajectory direction": how search explanations name a term. */
void srv_feature_term_label(const anim_feature_term_t *term, char *out, size_t size) {
  const char *kind = (unsigned)term->kind < 5 ? feature_kind_names[term->kind] : "?";
  if (term->kind == ANIM_FEATURE_TRAJECTORY_POSITION || term->kind == ANIM_FEATURE_TRAJECTORY_DIRECTION)
    snprintf(out, size, "%s", kind);
  else
    snprintf(out, size, "%s %s", term->bone, kind);
}
