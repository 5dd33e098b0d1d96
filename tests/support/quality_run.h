/*
 * quality_run.h: the motion-quality runs of issue 16 in process: the real
 * mocap datasets as `animdb build --mirror` makes them, and a controller
 * driven by an input program (input_program.h) measured on what it
 * displays (motion_quality.h), the contact flags being the ones the server
 * streams for it.
 *
 * No cmocka: tests wrap the dataset build with shared_data.h's skip/fail;
 * benchmarks call it directly.
 */
#ifndef ANIM_TEST_QUALITY_RUN_H
#define ANIM_TEST_QUALITY_RUN_H

#include "character/controller.h"
#include "input_program.h"
#include "motion_quality.h"

typedef struct {
  const char *name;   /* short name for reports */
  const char *folder; /* under data/mocap of the shared folder */
  float scale;        /* metres per file unit (the folder's SOURCE.md) */
} anim_quality_dataset_t;

#define ANIM_QUALITY_DATASETS 4 /* every shared mocap folder */
extern const anim_quality_dataset_t anim_quality_datasets[ANIM_QUALITY_DATASETS];

/* Dataset d's database from shared_dir/data/mocap/<folder>: every clip, 60
 * Hz, mirrored, default features. 0, or an error with a message in err. */
int anim_quality_dataset_build(anim_database_t *out_db, const char *shared_dir, int d, char *err, int errlen);

/* Called after each tick with the character and the flags streamed for it. */
typedef void (*anim_quality_tick_cb)(void *ctx, const anim_controller_t *character, uint32_t contacts);

/* Drives a controller on db/index (params NULL: defaults) from the origin,
 * facing +Z, playing frame 0, with program kind (seed) for `seconds` at 60
 * Hz, and measures it into out. cb (may be NULL) sees every tick. 0, or a
 * controller error. */
int anim_quality_run_controller(const anim_database_t *db, const anim_search_index_t *index,
                                const anim_controller_params_t *params, anim_program_kind_t kind, uint32_t seed,
                                float seconds, anim_quality_t *out, anim_quality_tick_cb cb, void *ctx);

/* The same from start_frame (a frame of db), facing `facing` (radians about
 * +Y): another path through the data for the same program, to average a
 * figure over many (a controller change sends one path elsewhere by chance). */
int anim_quality_run_controller_from(const anim_database_t *db, const anim_search_index_t *index,
                                     const anim_controller_params_t *params, anim_program_kind_t kind, uint32_t seed,
                                     int start_frame, float facing, float seconds, anim_quality_t *out,
                                     anim_quality_tick_cb cb, void *ctx);

/* The contact flags the server streams for a controller character (bit i:
 * contact i). */
uint32_t anim_quality_streamed_contacts(const anim_controller_t *character);

#endif
