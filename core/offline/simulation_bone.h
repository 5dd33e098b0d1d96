/*
 * simulation_bone.h: the ground-level root the runtime moves (bone 0 of a
 * database), made from a clip's hips and hip line.
 *
 * What it does: per frame, the hips projected on the ground (y = 0) and the
 * actor's facing as a yaw, facing "forward" = (left thigh - right thigh) x
 * up (without both thighs, the hips' own +Z); path and facing each smoothed
 * with a Gaussian (sigma 6 and 10 frames at the database rate) whose window
 * extends past the clip's ends by point reflection, so straight or steadily
 * turning motion is not bent at the ends. Then every frame is written under
 * it: bones above the hips (a ground-level root such as Bandai's joint_Root,
 * which carries part of the travel in some clips) fold into the simulation
 * bone (their local transform becomes the identity); bones hanging from the
 * simulation bone or a folded one get their source global transform relative
 * to the simulation bone; the rest keep their local transforms. Global poses
 * stay exactly the source's.
 * What it does not: find the hips and thighs (bone_roles.h), resample or
 * mirror (build.c, mirror.c), or compute velocities.
 */
#ifndef ANIM_SIMULATION_BONE_H
#define ANIM_SIMULATION_BONE_H

#include "offline/bone_roles.h"
#include "database/database.h"

/* The character's facing in one pose (global positions gp and rotations gr):
 * perpendicular to the line from the right to the left thigh, on the
 * ground; without thighs (lhip or rhip < 0) the hips' own +Z. Zero when the
 * pose gives no direction (a vertical hip line). */
vec3 anim_pose_facing(const vec3 *gp, const quat *gr, int hips, int lhip, int rhip);

/* Writes clip's frames (its skeleton = db's source bones, db bone b + 1 =
 * clip bone b) under a new simulation bone 0 into db's local arrays from
 * frame `start`. roles: the clip skeleton's bones per role (bone_roles.h).
 * 0 or ANIM_ENOMEM. */
int anim_simulation_bone_write(anim_database_t *db, int start, const anim_clip_t *clip, const int *roles);

#endif
