/* quantize.c: smallest-three rotations and fixed-point positions (see quantize.h). */
#include "quantize.h"

#define COMPONENT_RANGE 0.70710678118654752f /* 1 / sqrt 2 */

static int16_t component_pack(float c) {
  float scaled = clampf(c / COMPONENT_RANGE, -1.0f, 1.0f) * 32767.0f;
  return (int16_t)lrintf(scaled);
}

uint64_t anim_quat_pack(quat q) {
  q = quat_normalize(q);
  float c[4] = {q.w, q.x, q.y, q.z};
  int largest = 0;
  for (int i = 1; i < 4; i++)
    if (fabsf(c[i]) > fabsf(c[largest])) largest = i;
  float sign = c[largest] < 0.0f ? -1.0f : 1.0f; /* q and -q: keep the dropped one positive */
  uint64_t packed = (uint64_t)largest << 48;
  for (int i = 0, slot = 0; i < 4; i++) {
    if (i == largest) continue;
    packed |= (uint64_t)(uint16_t)component_pack(sign * c[i]) << (16 * slot++);
  }
  return packed;
}

quat anim_quat_unpack(uint64_t packed) {
  int largest = (int)((packed >> 48) & 3);
  float c[4], sum = 0.0f;
  for (int i = 0, slot = 0; i < 4; i++) {
    if (i == largest) continue;
    c[i] = (float)(int16_t)(uint16_t)(packed >> (16 * slot++)) / 32767.0f * COMPONENT_RANGE;
    sum += c[i] * c[i];
  }
  c[largest] = sqrtf(fmaxf(0.0f, 1.0f - sum));
  return quat_normalize(quat_make(c[0], c[1], c[2], c[3]));
}

int16_t anim_local_position_pack(float metres) {
  return (int16_t)lrintf(clampf(metres / ANIM_LOCAL_POSITION_STEP, -32767.0f, 32767.0f));
}

float anim_local_position_unpack(int16_t packed) { return (float)packed * ANIM_LOCAL_POSITION_STEP; }

int32_t anim_root_position_pack(float metres) {
  return (int32_t)lrint(clampf(metres / ANIM_ROOT_POSITION_STEP, -2147483520.0f, 2147483520.0f));
}

float anim_root_position_unpack(int32_t packed) { return (float)((double)packed * (double)ANIM_ROOT_POSITION_STEP); }
