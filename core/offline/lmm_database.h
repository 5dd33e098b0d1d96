/*
 * lmm_database.h: a small database of the learned skeleton, so that the
 * requests that describe a database (skeleton, bone names, parents) and
 * the pose buffers sized by one serve learned characters too.
 *
 * Its frames are what the networks themselves produce for a scripted walk
 * (standing, walking, running, turning), decompressed and written under a
 * simulation bone exactly as a motion-capture clip would be: the skeleton
 * comes out in the networks' order (the simulation bone, then Hips and the
 * rest), so a learned character's bone i is the database's bone i.
 * Not here: the networks (lmm.h), serving them (server/).
 */
#ifndef ANIM_LMM_DATABASE_H
#define ANIM_LMM_DATABASE_H

#include "database/database.h"
#include "learned/lmm.h"

/* Frames of the scripted walk (at 60 Hz). */
#define ANIM_LMM_DATABASE_FRAMES 600

/* Builds out_db named name (features included) from nets. 0, or a code
 * with a message: ANIM_EINVAL (NULL arguments), ANIM_ENOMEM, or what the
 * builder reports. Free with anim_database_free. */
int anim_lmm_database(anim_database_t *out_db, const char *name, const anim_lmm_networks_t *nets, char *err,
                      int errlen);

#endif
