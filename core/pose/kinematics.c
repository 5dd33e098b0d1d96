/* kinematics.c: forward kinematics and its inverse (see kinematics.h). */
#include "pose/kinematics.h"

void anim_fk(vec3 *out_positions, quat *out_rotations, const vec3 *local_positions, const quat *local_rotations,
             const int *parents, int nbones) {
  for (int i = 0; i < nbones; i++) {
    int p = parents[i];
    if (p < 0) {
      out_positions[i] = local_positions[i];
      out_rotations[i] = local_rotations[i];
    } else {
      out_positions[i] = vec3_add(out_positions[p], quat_mul_vec3(out_rotations[p], local_positions[i]));
      out_rotations[i] = quat_mul(out_rotations[p], local_rotations[i]);
    }
  }
}

void anim_fk_velocity(vec3 *out_positions, quat *out_rotations, vec3 *out_velocities, vec3 *out_angular_velocities,
                      const vec3 *local_positions, const quat *local_rotations, const vec3 *local_velocities,
                      const vec3 *local_angular_velocities, const int *parents, int nbones) {
  for (int i = 0; i < nbones; i++) {
    int p = parents[i];
    if (p < 0) {
      out_positions[i] = local_positions[i];
      out_rotations[i] = local_rotations[i];
      out_velocities[i] = local_velocities[i];
      out_angular_velocities[i] = local_angular_velocities[i];
      continue;
    }
    vec3 arm = quat_mul_vec3(out_rotations[p], local_positions[i]);
    out_positions[i] = vec3_add(out_positions[p], arm);
    out_rotations[i] = quat_mul(out_rotations[p], local_rotations[i]);
    out_velocities[i] = vec3_add(vec3_add(out_velocities[p], vec3_cross(out_angular_velocities[p], arm)),
                                 quat_mul_vec3(out_rotations[p], local_velocities[i]));
    out_angular_velocities[i] =
        vec3_add(out_angular_velocities[p], quat_mul_vec3(out_rotations[p], local_angular_velocities[i]));
  }
}

void anim_fk_bone(vec3 *out_position, quat *out_rotation, const vec3 *local_positions, const quat *local_rotations,
                  const int *parents, int bone) {
  vec3 position = local_positions[bone];
  quat rotation = local_rotations[bone];
  for (int p = parents[bone]; p >= 0; p = parents[p]) {
    position = vec3_add(local_positions[p], quat_mul_vec3(local_rotations[p], position));
    rotation = quat_mul(local_rotations[p], rotation);
  }
  *out_position = position;
  *out_rotation = rotation;
}

void anim_fk_bone_velocity(vec3 *out_position, quat *out_rotation, vec3 *out_velocity, vec3 *out_angular_velocity,
                           const vec3 *local_positions, const quat *local_rotations, const vec3 *local_velocities,
                           const vec3 *local_angular_velocities, const int *parents, int bone) {
  int chain[ANIM_MAX_BONES], depth = 0;
  for (int b = bone; b >= 0 && depth < ANIM_MAX_BONES; b = parents[b]) chain[depth++] = b;
  /* The chain's root: its local transform and velocities are global. */
  int b = chain[--depth];
  vec3 x = local_positions[b], v = local_velocities[b], w = local_angular_velocities[b];
  quat r = local_rotations[b];
  while (depth > 0) {
    b = chain[--depth];
    vec3 arm = quat_mul_vec3(r, local_positions[b]);
    v = vec3_add(vec3_add(v, vec3_cross(w, arm)), quat_mul_vec3(r, local_velocities[b]));
    w = vec3_add(w, quat_mul_vec3(r, local_angular_velocities[b]));
    x = vec3_add(x, arm);
    r = quat_mul(r, local_rotations[b]);
  }
  *out_position = x;
  *out_rotation = r;
  *out_velocity = v;
  *out_angular_velocity = w;
}

void anim_ik_local(vec3 *out_local_positions, quat *out_local_rotations, const vec3 *positions, const quat *rotations,
                   const int *parents, int nbones) {
  for (int i = 0; i < nbones; i++) {
    int p = parents[i];
    if (p < 0) {
      out_local_positions[i] = positions[i];
      out_local_rotations[i] = rotations[i];
    } else {
      out_local_positions[i] = quat_inv_mul_vec3(rotations[p], vec3_sub(positions[i], positions[p]));
      out_local_rotations[i] = quat_inv_mul(rotations[p], rotations[i]);
    }
  }
}
