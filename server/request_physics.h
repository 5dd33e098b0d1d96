/*
 * request_physics.h: bodies of the physics characters' requests (MODE_PHYSICAL):
 * push, set_body_modes, recover (see request.h; the proto's PushRequest has
 * the rules). The codec checks every value that needs no character (finite,
 * bounds, one of impulse or force); the kind (actor_physical.c) checks the
 * bones against its skeleton.
 */
#ifndef SRV_REQUEST_PHYSICS_H
#define SRV_REQUEST_PHYSICS_H

#include <stdint.h>
#include "math/anim_math.h"

/* The bounds the codec enforces (the proto's comments state them). */
#define SRV_PUSH_MAX_IMPULSE 2000.0f  /* N s: 28 m/s on 70 kg, far past any fall */
#define SRV_PUSH_MAX_FORCE 20000.0f   /* N */
#define SRV_PUSH_MAX_DURATION 2.0f    /* s */
#define SRV_PUSH_MAX_POINT 1.0f       /* m from the bone's joint */
#define SRV_PUSH_MAX_AHEAD 36000u     /* ticks (10 min at 60 Hz) */
/* Pushes one character holds before they apply (the kind refuses more with
 * ERROR_LIMIT); also the forces it keeps acting at once. */
#define SRV_PUSHES_MAX_PENDING 8
#define SRV_BODY_MAX_PARTS 64
#define SRV_BODY_MAX_DURATION 60.0f   /* s */

/* A bone as a request names it: name when not NULL, else index (0: none). */
typedef struct {
  const char *name;
  uint32_t index;
} srv_bone_ref_t;

typedef struct {
  uint64_t character;
  srv_bone_ref_t bone;
  vec3 point;     /* m, bone frame */
  vec3 force;     /* N (an impulse: impulse / tick, applied one tick) */
  vec3 impulse;   /* N s, when is_impulse */
  int is_impulse;
  float duration; /* s, a force's */
  uint64_t tick;  /* 0: the next */
} srv_push_request_t;

typedef struct {
  uint64_t tick;
} srv_push_response_t;

typedef struct {
  int given;              /* a Strength came with the part */
  float halflife, damping_ratio, max_torque;
} srv_strength_t;

typedef struct {
  srv_bone_ref_t bone;
  int descendants;
  int mode;               /* ANIM_PHYSICS_* */
  srv_strength_t strength;
  float duration;         /* s, 0: until set again */
} srv_body_part_t;

typedef struct {
  int given;
  int mode;
  float halflife, damping_ratio, max_force, max_torque, duration;
} srv_root_setting_t;

typedef struct {
  uint64_t character;
  const srv_body_part_t *parts;
  int nparts;
  srv_root_setting_t root;
  int reset;
} srv_set_body_modes_request_t;

typedef struct {
  uint64_t tick;
} srv_set_body_modes_response_t;

typedef struct {
  uint64_t character;
} srv_recover_request_t;

typedef struct {
  uint64_t tick;
} srv_recover_response_t;

#endif
