/* quantize.c: smallest-three rotations and fixed-point positions (see quantize.h). */
#include <string.h>

#include "anim_error.h"
#include "pose/quantize.h"
#include "pose/world.h"

/* Every root the server streams is within the world limit: the int32 root
 * code must hold it, with room to spare. */
_Static_assert(2LL * ANIM_WORLD_LIMIT_METRES * ANIM_ROOT_STEPS_PER_METRE < 2147483647LL,
               "the quantized root's range covers the world");

#define COMPONENT_RANGE 0.70710678118654752f /* 1 / sqrt 2 */

static int16_t component_pack(float c) {
  float scaled = clampf(c * (32767.0f / COMPONENT_RANGE), -32767.0f, 32767.0f);
  return (int16_t)(scaled + (scaled >= 0.0f ? 0.5f : -0.5f));
}

static inline uint64_t component_bits(float c) { return (uint16_t)component_pack(c); }

uint64_t anim_quat_pack(quat q) {
  /* Poses arrive unit length to float precision: normalize (a square root and
   * a division, a third of the cost) only those that are not. */
  float norm2 = quat_dot(q, q);
  if (fabsf(norm2 - 1.0f) > 1e-6f) q = quat_normalize(q);
  /* The largest magnitude (the pick of a pair, then of the two winners), and
   * everything after it chosen by selects, not array indexing: the compiler
   * keeps it all in registers (2.3x faster than through arrays, same bits). */
  float aw = fabsf(q.w), ax = fabsf(q.x), ay = fabsf(q.y), az = fabsf(q.z);
  int first = ax > aw, second = 2 + (az > ay);
  int largest = (second == 3 ? az : ay) > (first ? ax : aw) ? second : first;
  float dropped = largest == 0 ? q.w : largest == 1 ? q.x : largest == 2 ? q.y : q.z;
  float sign = dropped < 0.0f ? -1.0f : 1.0f; /* q and -q: keep the dropped one positive */
  /* The kept three in w, x, y, z order: (x y z), (w y z), (w x z) or (w x y). */
  float k0 = largest == 0 ? q.x : q.w, k1 = largest <= 1 ? q.y : q.x, k2 = largest <= 2 ? q.z : q.y;
  return (uint64_t)largest << 48 | component_bits(sign * k0) | component_bits(sign * k1) << 16 |
         component_bits(sign * k2) << 32;
}

/* Four rotations at once, one per lane (GCC's vector extensions: SSE on
 * x86-64): anim_quat_pack's comparisons, selects and roundings, the same
 * operations in the same order, so the same codes bit for bit
 * (test_quantize). The scalar picks compile to branches that random-looking
 * rotations mispredict: a 25-bone pose took 990 ns that way, 155 ns here.
 * A group holding a rotation that is not unit length to float precision (or
 * not finite) goes the scalar way. Four lanes, not core/math/lanes.h's eight:
 * these selects on eight-wide vectors, without AVX, went through memory
 * (520 ns a pose). */
typedef float v4f __attribute__((vector_size(16)));
typedef int32_t v4i __attribute__((vector_size(16)));

static inline v4f pick4(v4i mask, v4f a, v4f b) { return (v4f)(((v4i)a & mask) | ((v4i)b & ~mask)); }
static inline v4i picki4(v4i mask, v4i a, v4i b) { return (a & mask) | (b & ~mask); }
static inline v4f splat4(float x) { return (v4f){x, x, x, x}; }

/* clampf to +-32767, then round_away (below), per lane. */
static v4i round_clamped4(v4f scaled) {
  scaled = pick4(scaled < -32767.0f, splat4(-32767.0f), pick4(scaled > 32767.0f, splat4(32767.0f), scaled));
  return __builtin_convertvector(scaled + pick4(scaled >= 0.0f, splat4(0.5f), splat4(-0.5f)), v4i);
}

static v4i components4(v4f sign, v4f k) { return round_clamped4(sign * k * (32767.0f / COMPONENT_RANGE)); }

static void quat_pack4(const quat *q, uint64_t out[4]) {
  v4f w, x, y, z;
  for (int l = 0; l < 4; l++) w[l] = q[l].w, x[l] = q[l].x, y[l] = q[l].y, z[l] = q[l].z;
  v4f off = w * w + x * x + y * y + z * z - 1.0f;
  v4i unit = (off <= 1e-6f) & (off >= -1e-6f); /* NaN compares false */
  if (!(unit[0] & unit[1] & unit[2] & unit[3])) {
    for (int l = 0; l < 4; l++) out[l] = anim_quat_pack(q[l]);
    return;
  }
  const v4i magnitude = {0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7fffffff};
  v4f aw = (v4f)((v4i)w & magnitude), ax = (v4f)((v4i)x & magnitude), ay = (v4f)((v4i)y & magnitude),
      az = (v4f)((v4i)z & magnitude);
  v4i first = ax > aw, second = az > ay; /* -1 where true */
  v4i largest = picki4(pick4(second, az, ay) > pick4(first, ax, aw), 2 - second, -first);
  v4i is0 = largest == 0, is1 = largest == 1, is2 = largest == 2;
  v4f dropped = pick4(is0, w, pick4(is1, x, pick4(is2, y, z)));
  v4f sign = pick4(dropped < 0.0f, splat4(-1.0f), splat4(1.0f));
  v4i c0 = components4(sign, pick4(is0, x, w)), c1 = components4(sign, pick4(is0 | is1, y, x)),
      c2 = components4(sign, pick4(is0 | is1 | is2, z, y));
  for (int l = 0; l < 4; l++)
    out[l] = (uint64_t)largest[l] << 48 | (uint64_t)(uint16_t)c0[l] | (uint64_t)(uint16_t)c1[l] << 16 |
             (uint64_t)(uint16_t)c2[l] << 32;
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

/* Round half away from zero without a libm call (lrintf is not inlined
 * unless errno is given up, and this runs for every bone of every streamed
 * character, every tick). */
static inline int32_t round_away(float x) { return (int32_t)(x + (x >= 0.0f ? 0.5f : -0.5f)); }

int16_t anim_local_position_pack(float metres) {
  return (int16_t)round_away(clampf(metres * (1.0f / ANIM_LOCAL_POSITION_STEP), -32767.0f, 32767.0f));
}

float anim_local_position_unpack(int16_t packed) { return (float)packed * ANIM_LOCAL_POSITION_STEP; }

int32_t anim_root_position_pack(float metres) {
  /* In double: a float quotient would lose whole steps beyond 1.6 km. */
  double steps = (double)metres / (double)ANIM_ROOT_POSITION_STEP;
  return (int32_t)lrint(steps < -2147483647.0 ? -2147483647.0 : steps > 2147483647.0 ? 2147483647.0 : steps);
}

float anim_root_position_unpack(int32_t packed) { return (float)((double)packed * (double)ANIM_ROOT_POSITION_STEP); }

/* ---- whole poses ------------------------------------------------------------------ */

static uint8_t *put_le(uint8_t *out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; i++) out[i] = (uint8_t)(value >> (8 * i));
  return out + bytes;
}

static const uint8_t *get_le(const uint8_t *in, uint64_t *out_value, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; i++) value |= (uint64_t)in[i] << (8 * i);
  *out_value = value;
  return in + bytes;
}

size_t anim_pose_quantized_size(int nbones, int rotations_only) {
  if (nbones < 1) return 0;
  return 12 + 7 * (size_t)nbones + (rotations_only ? 0 : 6 * (size_t)(nbones - 1));
}

/* Little-endian hosts store a record's fields as whole words (one store
 * each instead of a byte loop); others go byte by byte. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HOST_LITTLE_ENDIAN 1
#else
#define HOST_LITTLE_ENDIAN 0
#endif

_Static_assert(sizeof(vec3) == 3 * sizeof(float), "vec3 arrays are read as flat floats");

void anim_pose_quantize(uint8_t *out, const vec3 *positions, const quat *rotations, int nbones, int rotations_only) {
  out = put_le(out, (uint32_t)anim_root_position_pack(positions[0].x), 4);
  out = put_le(out, (uint32_t)anim_root_position_pack(positions[0].y), 4);
  out = put_le(out, (uint32_t)anim_root_position_pack(positions[0].z), 4);
  for (int b = 0; b < nbones; b += 4) {
    uint64_t codes[4];
    if (b + 4 <= nbones) quat_pack4(rotations + b, codes);
    else { /* the last one to three, padded */
      quat q[4] = {quat_identity(), quat_identity(), quat_identity(), quat_identity()};
      memcpy(q, rotations + b, (size_t)(nbones - b) * sizeof *q);
      quat_pack4(q, codes);
    }
    for (int l = 0; l < 4 && b + l < nbones; l++) {
      /* 8 bytes where 7 belong: the next record's first byte is written
       * again right after; the last rotation of the record, which may end
       * the buffer, takes exactly its 7. */
      if (HOST_LITTLE_ENDIAN && b + l + 1 < nbones) memcpy(out, &codes[l], 8), out += 7;
      else out = put_le(out, codes[l], 7);
    }
  }
  if (rotations_only) return;
  /* The local positions as one flat run of 3 (nbones - 1) values. */
  const float *x = &positions[1].x;
  size_t n = 3 * (size_t)(nbones - 1);
  size_t j = 0;
  for (; HOST_LITTLE_ENDIAN && j + 4 <= n; j += 4) { /* anim_local_position_pack four at a time */
    v4f metres;
    memcpy(&metres, x + j, sizeof metres);
    v4i steps = round_clamped4(metres * (1.0f / ANIM_LOCAL_POSITION_STEP));
    for (int l = 0; l < 4; l++) {
      uint16_t v = (uint16_t)steps[l];
      memcpy(out + 2 * (j + (size_t)l), &v, 2);
    }
  }
  for (; j < n; j++) {
    uint16_t v = (uint16_t)anim_local_position_pack(x[j]);
    if (HOST_LITTLE_ENDIAN) memcpy(out + 2 * j, &v, 2);
    else put_le(out + 2 * j, v, 2);
  }
}

int anim_pose_dequantize(const uint8_t *in, size_t len, int nbones, int rotations_only, vec3 *out_positions,
                         quat *out_rotations) {
  if (nbones < 1 || len != anim_pose_quantized_size(nbones, rotations_only)) return ANIM_EFORMAT;
  uint64_t v[3];
  for (int i = 0; i < 3; i++) in = get_le(in, &v[i], 4);
  out_positions[0] = vec3_make(anim_root_position_unpack((int32_t)(uint32_t)v[0]),
                               anim_root_position_unpack((int32_t)(uint32_t)v[1]),
                               anim_root_position_unpack((int32_t)(uint32_t)v[2]));
  for (int b = 0; b < nbones; b++) {
    uint64_t code;
    in = get_le(in, &code, 7);
    out_rotations[b] = anim_quat_unpack(code);
  }
  if (rotations_only) return 0;
  for (int b = 1; b < nbones; b++) {
    for (int i = 0; i < 3; i++) in = get_le(in, &v[i], 2);
    out_positions[b] = vec3_make(anim_local_position_unpack((int16_t)(uint16_t)v[0]),
                                 anim_local_position_unpack((int16_t)(uint16_t)v[1]),
                                 anim_local_position_unpack((int16_t)(uint16_t)v[2]));
  }
  return 0;
}
