/* hash.c: the file checksum of hash.h. */
#include <string.h>
#include "base/hash.h"

#define P1 0x9e3779b185ebca87ull
#define P2 0xc2b2ae3d27d4eb4full
#define P3 0x165667b19e3779f9ull

static inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
static inline uint64_t round64(uint64_t acc, uint64_t word) { return rotl(acc + word * P2, 31) * P1; }
static inline uint64_t load64(const uint8_t *p) {
  uint64_t w;
  memcpy(&w, p, sizeof w); /* unaligned-safe; files are little-endian like the hosts we accept */
  return w;
}

uint64_t anim_hash64(const void *data, size_t len, uint64_t seed) {
  const uint8_t *p = data, *end = p + len;
  uint64_t a = seed + P1 + P2, b = seed + P2, c = seed, d = seed - P1;
  while (end - p >= 32) {
    a = round64(a, load64(p));
    b = round64(b, load64(p + 8));
    c = round64(c, load64(p + 16));
    d = round64(d, load64(p + 24));
    p += 32;
  }
  uint64_t h = rotl(a, 1) + rotl(b, 7) + rotl(c, 12) + rotl(d, 18) + (uint64_t)len;
  while (end - p >= 8) {
    h = rotl(h ^ round64(0, load64(p)), 27) * P1 + P3;
    p += 8;
  }
  while (p < end) h = rotl(h ^ (*p++ * P3), 11) * P1;
  h ^= h >> 33;
  h *= P2;
  h ^= h >> 29;
  h *= P3;
  return h ^ (h >> 32);
}
