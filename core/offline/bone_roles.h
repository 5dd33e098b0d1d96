/*
 * bone_roles.h: which bone of a skeleton plays which part in building a
 * database (the hips, the thighs, the feet, the toes), found by name.
 *
 * What it does: reads bone names the way the common rigs write them and
 * picks, per role, the bone that fits best; takes explicit names instead
 * where the caller gives them. What it does not: look at the hierarchy's
 * order (only at names, and at parent links to choose among namesakes and
 * to find the hips the legs hang from) or at the motion.
 *
 * How a name is read: the part after the last ':' or '|' (a namespace such
 * as Mixamo's "mixamorig:"), cut into lower-case words at separators
 * ('_', '.', ' ', '-'), at lower-to-upper case changes, at the last capital
 * of a capital run followed by a lower-case letter ("LHipJoint" -> l hip
 * joint) and at digits, which are dropped ("Bip01 L Toe0" -> bip l toe).
 * The side is a word "l"/"left" or "r"/"right" anywhere in the name
 * (LeftFoot, Foot_L, foot.L, lAnkle, L_Hip, "Bip01 L Foot"), or an "l"/"r"
 * glued to a role word in an all-lower-case name (lfoot). Names with a word
 * end, nub, site, ik, target or pole (end sites, IK helpers) play no role.
 * The remaining words decide the role, with a score for how specific they
 * are and one point off per word that means nothing here ("joint", "base"):
 *   thigh  upleg, up+leg, upper+leg, upperleg, thigh, femur (3); hip (2);
 *   foot   foot, ankle (3);
 *   toe    toe, toes, toebase (3); ball (2).
 * That reads Mixamo (mixamorig:LeftUpLeg/LeftFoot/LeftToeBase), CMU
 * (LeftHip or LeftUpLeg, LeftAnkle or LeftFoot, LeftToe or LeftToeBase;
 * LHipJoint loses to LeftHip), Bandai Namco (UpperLeg_L, Foot_L, Toes_L),
 * LaFAN1 (LeftUpLeg, LeftFoot, LeftToe), GAMES-105 (lHip, lAnkle,
 * lToeJoint), Unreal (thigh_l, foot_l, ball_l), Blender (thigh.L, foot.L,
 * toe.L), 3ds Max Biped ("Bip01 L Thigh") and SMPL (L_Hip, L_Ankle).
 * Ties go to the deepest thigh (past zero-length hip joints such as CMU's
 * LHipJoint) and to the shallowest foot and toe (an ankle above a foot end).
 * The hips are the nearest common ancestor of the two thighs when both are
 * found (GAMES-105's RootJoint, whatever its name); else a bone named hips,
 * hip or pelvis alone; else the root.
 */
#ifndef ANIM_BONE_ROLES_H
#define ANIM_BONE_ROLES_H

#include "pose/clip.h"

typedef enum {
  ANIM_BONE_HIPS = 0,
  ANIM_BONE_THIGH_LEFT,
  ANIM_BONE_THIGH_RIGHT,
  ANIM_BONE_FOOT_LEFT,
  ANIM_BONE_FOOT_RIGHT,
  ANIM_BONE_TOE_LEFT,
  ANIM_BONE_TOE_RIGHT,
  ANIM_BONE_ROLE_COUNT
} anim_bone_role_t;

/* Explicit bone names per role; NULL or "" leaves a role to be found by name. */
typedef struct {
  const char *names[ANIM_BONE_ROLE_COUNT];
} anim_bone_names_t;

/* The role's name on command lines: hips, thigh-left, thigh-right,
 * foot-left, foot-right, toe-left, toe-right. */
const char *anim_bone_role_name(anim_bone_role_t role);
/* The role called name, or -1. */
int anim_bone_role_parse(const char *name);

/* Fills out_bones[role] with the bone index playing each role in skeleton,
 * -1 where none does (the hips are always found: the root at worst).
 * named may be NULL. 0, or ANIM_ENOTFOUND when a named bone is not in the
 * skeleton (message in err naming the role and the name). */
int anim_bone_roles_find(const anim_skeleton_t *skeleton, const anim_bone_names_t *named,
                         int out_bones[ANIM_BONE_ROLE_COUNT], char *err, int errlen);

#endif
