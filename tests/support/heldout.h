/*
 * heldout.h: a motion database that leaves some clips out, and those clips
 * as their own database, for measuring a method on motion it has not seen
 * (pose fitting's quality tests and benchmark). No cmocka here, so the
 * benchmarks link it too; tests skip or fail through shared_data.h.
 */
#ifndef ANIM_TEST_HELDOUT_H
#define ANIM_TEST_HELDOUT_H

struct anim_database;

/* The held-out clips of the Bandai Namco set used by pose fitting: a long
 * walk, a run and a left turn, each with kin left in the database (other
 * walks, runs, and the right turn whose mirror image turns left). */
extern const char *const anim_heldout_bandai_clips[];
extern const int anim_heldout_bandai_count;

/* Imports every BVH of mocap_dir (centimetres, as Bandai's) and splits the
 * clips by name: out_db gets the clips not in held_out (60 Hz, mirrored,
 * default features), out_truth the held-out ones (60 Hz, not mirrored, no
 * features). 0; ANIM_ENOTFOUND when a held-out name matches no clip; import
 * and build errors with a message in err. Free both with anim_database_free. */
int anim_heldout_build(const char *mocap_dir, const char *const *held_out, int nheld, struct anim_database *out_db,
                       struct anim_database *out_truth, char *err, int errlen);

#endif
