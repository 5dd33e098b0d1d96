/*
 * request_search.h: bodies of search, batch_search and pose (see request.h).
 */
#ifndef SRV_REQUEST_SEARCH_H
#define SRV_REQUEST_SEARCH_H

#include <stddef.h>
#include <stdint.h>
#include "database/feature.h"
#include "search/search.h"

#define SRV_MAX_QUERY_TAGS 32
/* Rows past which a search by brute force or the seed's boxes takes too
 * long for the loop or the read batches (milliseconds): such a search goes
 * to the pool on its own. Under it, every method is light. */
#define SRV_SEARCH_LIGHT_ROWS 50000

/* One search query; the codec has checked every float is finite and every
 * count is within its protocol bound. Frame indices are checked against the
 * database by the service. -1 means "not given" for the frame fields. */
typedef struct {
  const float *features; /* nfeatures values, or NULL */
  int nfeatures;
  int raw_features;      /* features are unnormalized */
  int from_frame;
  const float *trajectory_positions; /* x, z pairs */
  int ntrajectory_positions;         /* pairs */
  const float *trajectory_directions;
  int ntrajectory_directions;
  int k;
  int current_frame;
  float transition_cost;
  int ignore_range_end, ignore_surrounding;
  const char *tags[SRV_MAX_QUERY_TAGS];
  int ntags;
  int include_pose, explain;
  int include_features; /* the normalized query and each match's feature row */
  int method; /* anim_search_method_t */
  /* Bone inputs (character space): names and x, y, z triples. */
  const char *bone_position_names[ANIM_MAX_FEATURE_TERMS];
  float bone_positions[ANIM_MAX_FEATURE_TERMS][3];
  int nbone_positions;
  const char *bone_velocity_names[ANIM_MAX_FEATURE_TERMS];
  float bone_velocities[ANIM_MAX_FEATURE_TERMS][3];
  int nbone_velocities;
} srv_query_t;

/* search (one query) and batch_search. */
typedef struct {
  srv_query_t *queries;
  int nqueries;
} srv_search_request_t;
typedef srv_search_request_t srv_batch_search_request_t;

/* What a pose answer holds per frame. */
typedef struct {
  int local, global, velocities;
} srv_pose_options_t;

typedef struct {
  int frame, count;
  srv_pose_options_t options;
} srv_pose_request_t;

/* One query's answer. */
typedef struct {
  anim_search_hit_t *hits; /* response-owned */
  int count;
  int include_pose;
  float *query;  /* include_features: the normalized query (response-owned, the database's columns) */
  int explained;
  float group_costs[ANIM_MAX_FEATURE_TERMS]; /* best match, per schema term */
  float margin;                              /* runner-up cost - best cost */
} srv_search_result_t;

typedef struct {
  srv_search_result_t *results; /* response-owned, one per query */
  int nresults;
} srv_search_response_t;
typedef srv_search_response_t srv_batch_search_response_t;

typedef struct {
  int frame, count;
  srv_pose_options_t options;
} srv_pose_response_t;

#endif
