/*
 * body_internal.h: the model and body structs shared by body_model.c (the
 * build) and body_step.c (the drives and the step). Not installed.
 */
#ifndef ANIM_PHYSICS_BODY_INTERNAL_H
#define ANIM_PHYSICS_BODY_INTERNAL_H

#include <mujoco/mujoco.h>

#include "body.h"

#define ANIM_PHYSICS_MAX_CAPSULES (2 * ANIM_MAX_BONES)

struct anim_physics_model {
  mjModel *m;
  int nbones, root;
  int parents[ANIM_MAX_BONES];
  unsigned char sim[ANIM_MAX_BONES];     /* 1: simulated (the root and the bones below it) */
  unsigned char welded[ANIM_MAX_BONES];  /* 1: a leaf welded into its parent's body (no joint, no body) */
  unsigned char fixed[ANIM_MAX_BONES];   /* 1: a body without a joint (a still joint), at fixed_rotation */
  unsigned char joint[ANIM_MAX_BONES];   /* 1: a ball joint (sim, not the root, not welded, not fixed) */
  quat fixed_rotation[ANIM_MAX_BONES];
  unsigned char leg[ANIM_MAX_BONES];     /* 1: a thigh, shank or foot bone (bone_roles.h) */
  vec3 offsets[ANIM_MAX_BONES];
  /* MuJoCo addresses per bone (-1 for bone 0; a welded bone: its parent's
   * body, no joint). The root's are its free joint's. */
  int body_id[ANIM_MAX_BONES], qposadr[ANIM_MAX_BONES], dofadr[ANIM_MAX_BONES];
  float body_mass[ANIM_MAX_BONES];
  float limit[ANIM_MAX_BONES];
  float joint_damping[ANIM_MAX_BONES];    /* N m s / rad in the model (implicit): the default drive's */
  float inertia[ANIM_MAX_BONES];          /* mean of the joint axes' inertias (M_ii) */
  double dof_inertia[ANIM_MAX_BONES][3];  /* per joint axis (the root: its rotation's) */
  int ncapsules;
  anim_physics_capsule_t capsules[ANIM_PHYSICS_MAX_CAPSULES];
  float total_mass, rest_root_height, tick, upper_armature;
  float mass_scale; /* total_mass / ANIM_PHYSICS_REFERENCE_MASS: armature and torque limits scale by it */
  int substeps;
  char *mjcf;
};

/* Formats a message into err (size errlen; nothing when err is NULL): the
 * build's and the step's errors. Defined in body_model.c. */
void body_errorf(char *err, int errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

struct anim_physics_body {
  const anim_physics_model_t *model;
  mjData *d;
  anim_physics_drive_t drives[ANIM_MAX_BONES];
  anim_physics_root_t root;
  quat prev_target[ANIM_MAX_BONES];       /* local rotations of the last target */
  double prev_velocity[ANIM_MAX_BONES][3]; /* the last target's joint angular velocities */
  int has_prev_velocity;
  vec3 prev_root_position;                /* the last target's root (world) */
  quat prev_root_rotation;
  vec3 bone0_position;                    /* the last target's root parent (world) */
  quat bone0_rotation;
};

#endif
