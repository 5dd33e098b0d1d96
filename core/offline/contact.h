/*
 * contact.h: which frames each contact bone (a toe or foot) is planted in.
 *
 * What it does: per range and contact bone, a frame is in contact when the
 * bone is within `height` metres of its lowest height in the range and its
 * horizontal speed is below `speed` m/s; then single frames that differ from
 * both neighbours take their neighbours' value (one-frame blips either way
 * are noise at mocap rates). Lowest-in-the-range rather than a fixed ground
 * height: clips are not always captured on y = 0.
 * What it does not: choose the contact bones (build.c, bone_roles.h) or
 * smooth over more than one frame; the runtime's foot locks (foot_lock.h)
 * decide what to do with a contact.
 */
#ifndef ANIM_CONTACT_H
#define ANIM_CONTACT_H

#include "database/database.h"

/* Fills db->contacts for db's ranges and contact bones from its global
 * positions and velocities (which must be computed). Nothing fails. */
void anim_contacts_detect(anim_database_t *db, float height, float speed);

#endif
