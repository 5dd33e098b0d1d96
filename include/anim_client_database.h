/*
 * anim_client_database.h: databases, search and poses (part of the client
 * library; include anim_client.h).
 *
 * Plain C results of the database requests (list, describe, load, reload,
 * unload), motion-matching search (one query or a batch) and database poses.
 * Every request has a blocking form (outputs, a timeout) and a _send form
 * (a typed callback whose results are valid during the callback only,
 * NULL when status != 0). What a connection is, and how callbacks run, is in
 * anim_client_session.h.
 */
#ifndef ANIM_CLIENT_DATABASE_H
#define ANIM_CLIENT_DATABASE_H

#include "anim_client_session.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  char name[64];
  uint64_t version;       /* content hash of the data that answered */
  uint32_t frames, bones;
  float frame_rate;       /* Hz */
  uint32_t feature_dims, ranges;
  uint64_t memory_bytes;       /* poses, features, search indexes */
  uint64_t graph_memory_bytes; /* its motion graph (build_graph); 0 without one */
} anim_db_summary_t;

typedef struct {
  char name[64];
  uint32_t start, stop;   /* frames [start, stop) */
  int ntags;
  char tags[8][64];
} anim_range_info_t;

typedef struct {
  int kind; /* 0 bone position, 1 bone velocity, 2 trajectory position, 3 trajectory direction, 4 inertialize */
  char bone[64];
  float weight, halflife;
  int nsamples;
  int frame_offsets[8];
  uint32_t first_column, dims;
} anim_feature_group_info_t;

/* Owned by the library; free with anim_db_description_free. */
typedef struct {
  anim_db_summary_t summary;
  int nbones;
  char (*bone_names)[64];
  int *bone_parents;
  int nranges;
  anim_range_info_t *ranges;
  int ngroups;
  anim_feature_group_info_t *groups;
  float *feature_offset, *feature_scale; /* feature_dims each: raw = normalized * scale + offset */
  int ncontact_bones;
  int *contact_bones;                    /* bone index of each contact bone (foot contacts, in order) */
} anim_db_description_t;

/* A pose: arrays of 3 floats (vectors) or 4 floats (w, x, y, z) per bone, NULL when not requested. */
typedef struct {
  uint32_t frame;
  int nbones;
  const float *local_positions, *local_rotations, *local_velocities, *local_angular_velocities;
  const float *global_positions, *global_rotations, *global_velocities, *global_angular_velocities;
  int ncontacts;
  const uint8_t *contacts;
} anim_pose_t;

typedef struct {
  int local, global, velocities; /* neither local nor global: local */
} anim_pose_options_t;

enum { ANIM_METHOD_DEFAULT = 0, ANIM_METHOD_BRUTE = 1, ANIM_METHOD_BOXES = 2, ANIM_METHOD_FAST = 3 };

/* A search query. Start from anim_query_init. The query vector is one of:
 *  - features (nfeatures == the database's dims; normalized unless raw_features);
 *  - the features of database frame from_frame, whose trajectory part may be
 *    replaced by trajectory_positions/directions (x, z pairs in character
 *    space, one per trajectory sample);
 *  - the inputs features are made of: bone positions and velocities in
 *    character space (position_bones[i] at positions[3i..3i+2], likewise
 *    velocities, at most 16 each) plus the trajectory; every term of the
 *    database's schema must be covered. */
typedef struct {
  const float *features;
  int nfeatures;
  int raw_features;
  int from_frame;              /* -1: not used */
  const float *trajectory_positions;
  int ntrajectory_positions;   /* pairs */
  const float *trajectory_directions;
  int ntrajectory_directions;
  int k;                       /* results wanted, 1..max_k */
  int current_frame;           /* -1: none; else it competes without transition cost */
  float transition_cost;
  int ignore_range_end, ignore_surrounding;
  const char *const *tags;     /* only ranges with any of these tags */
  int ntags;
  int include_pose, explain;
  int method;                  /* ANIM_METHOD_* */
  const char *const *position_bones;
  const float *positions;
  int npositions;
  const char *const *velocity_bones;
  const float *velocities;
  int nvelocities;
} anim_query_t;

void anim_query_init(anim_query_t *query);

typedef struct {
  uint32_t frame, range;
  char range_name[64];
  float cost;
  anim_pose_t *pose;           /* when include_pose, else NULL */
} anim_match_t;

typedef struct {
  int nmatches;
  anim_match_t *matches;       /* ascending cost */
  int nexplain;                /* when explain: cost of the best match per feature group */
  char (*explain_names)[64];
  float *explain_costs;
  float margin;                /* runner-up cost - best cost */
} anim_result_t;

/* Owned by the library; free with anim_search_reply_free. */
typedef struct {
  uint64_t database_version;
  int nresults;
  anim_result_t *results;      /* one per query, in order */
} anim_search_reply_t;

/* Owned by the library; free with anim_pose_reply_free. */
typedef struct {
  uint64_t database_version;
  int nposes;
  anim_pose_t *poses;
} anim_pose_reply_t;

/* NULL is ignored by each. */
void anim_db_description_free(anim_db_description_t *description);
void anim_search_reply_free(anim_search_reply_t *reply);
void anim_pose_reply_free(anim_pose_reply_t *reply);
/* A single pose allocated by the library (anim_client_inertialize_evaluate's). */
void anim_pose_free(anim_pose_t *pose);

/* ---- requests ------------------------------------------------------------------------ */

typedef void (*anim_db_list_cb)(anim_client_t *client, uint64_t id, int status, const anim_db_summary_t *summaries,
                                int count, void *data);
typedef void (*anim_db_describe_cb)(anim_client_t *client, uint64_t id, int status,
                                    const anim_db_description_t *description, void *data);
typedef void (*anim_db_changed_cb)(anim_client_t *client, uint64_t id, int status, const anim_db_summary_t *summary,
                                   void *data);
typedef void (*anim_search_cb)(anim_client_t *client, uint64_t id, int status, const anim_search_reply_t *reply,
                               void *data);
typedef void (*anim_pose_cb)(anim_client_t *client, uint64_t id, int status, const anim_pose_reply_t *reply,
                             void *data);

/* Databases. list fills up to max summaries and sets *out_count to how many
 * the server has (the callback sees them all). load/reload/unload are admin
 * operations: load reads NAME.animdb from the server's data directory;
 * reload rebuilds it aside and swaps it in. out_summary may be NULL. */
int anim_client_db_list(anim_client_t *client, anim_db_summary_t *out_summaries, int max, int *out_count,
                        int timeout_ms);
int anim_client_db_list_send(anim_client_t *client, anim_db_list_cb cb, void *data, uint64_t *out_id);
int anim_client_db_describe(anim_client_t *client, const char *name, anim_db_description_t **out_description,
                            int timeout_ms);
int anim_client_db_describe_send(anim_client_t *client, const char *name, anim_db_describe_cb cb, void *data,
                                 uint64_t *out_id);
int anim_client_db_load(anim_client_t *client, const char *name, anim_db_summary_t *out_summary, int timeout_ms);
int anim_client_db_load_send(anim_client_t *client, const char *name, anim_db_changed_cb cb, void *data,
                             uint64_t *out_id);
int anim_client_db_reload(anim_client_t *client, const char *name, anim_db_summary_t *out_summary, int timeout_ms);
int anim_client_db_reload_send(anim_client_t *client, const char *name, anim_db_changed_cb cb, void *data,
                               uint64_t *out_id);
int anim_client_db_unload(anim_client_t *client, const char *name, int timeout_ms);
int anim_client_db_unload_send(anim_client_t *client, const char *name, anim_db_changed_cb cb, void *data,
                               uint64_t *out_id);

/* One query, or n in one message (a crowd); *out_reply has one result per query. */
int anim_client_search(anim_client_t *client, const char *database, const anim_query_t *query,
                       anim_search_reply_t **out_reply, int timeout_ms);
int anim_client_search_batch(anim_client_t *client, const char *database, const anim_query_t *queries, int n,
                             anim_search_reply_t **out_reply, int timeout_ms);
int anim_client_search_send(anim_client_t *client, const char *database, const anim_query_t *queries, int n,
                            anim_search_cb cb, void *data, uint64_t *out_id);

/* count frames from frame (count 0 means 1). options may be NULL (local pose). */
int anim_client_pose(anim_client_t *client, const char *database, int frame, int count,
                     const anim_pose_options_t *options, anim_pose_reply_t **out_reply, int timeout_ms);
int anim_client_pose_send(anim_client_t *client, const char *database, int frame, int count,
                          const anim_pose_options_t *options, anim_pose_cb cb, void *data, uint64_t *out_id);

#ifdef __cplusplus
}
#endif
#endif
