/*
 * fields.h: the fields of a protobuf message read from its wire bytes,
 * without its schema.
 *
 * For the few places that must look into a message before (or instead of)
 * decoding it: the id of a request that does not decode, every string of a
 * request checked on its raw bytes, the id of an answer a load generator
 * only counts. Pure: no allocation, no I/O.
 */
#ifndef ANIM_WIRE_FIELDS_H
#define ANIM_WIRE_FIELDS_H

#include <stddef.h>
#include <stdint.h>

enum { ANIM_WIRE_VARINT = 0, ANIM_WIRE_FIXED64 = 1, ANIM_WIRE_BYTES = 2, ANIM_WIRE_FIXED32 = 5 };

typedef struct {
  uint32_t number;     /* the field number */
  int type;            /* ANIM_WIRE_* */
  uint64_t value;      /* VARINT: the value */
  const uint8_t *data; /* BYTES: the bytes (a string, a message, a packed array); FIXED*: their bytes */
  size_t len;
} anim_wire_field_t;

/* Reads the field at *pos of the message's len bytes and moves *pos past
 * it. 1 with out_field filled, 0 at the end, ANIM_EPROTO when the bytes are
 * not a well-formed field (groups, which proto3 has not, included). */
int anim_wire_next_field(const uint8_t *message, size_t len, size_t *pos, anim_wire_field_t *out_field);

#endif
