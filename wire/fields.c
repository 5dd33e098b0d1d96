/* fields.c: reading protobuf fields from wire bytes (see fields.h). */
#include "anim_error.h"
#include "fields.h"
#include "frame.h"

int anim_wire_next_field(const uint8_t *m, size_t len, size_t *pos, anim_wire_field_t *out) {
  if (*pos >= len) return 0;
  uint64_t key, value;
  int n = anim_varint_decode(m + *pos, len - *pos, &key);
  if (n <= 0 || key >> 3 == 0 || key >> 3 > UINT32_MAX) return ANIM_EPROTO;
  size_t at = *pos + (size_t)n;
  out->number = (uint32_t)(key >> 3);
  out->type = (int)(key & 7);
  out->value = 0;
  out->data = NULL;
  out->len = 0;
  switch (out->type) {
  case ANIM_WIRE_VARINT:
    if ((n = anim_varint_decode(m + at, len - at, &out->value)) <= 0) return ANIM_EPROTO;
    at += (size_t)n;
    break;
  case ANIM_WIRE_BYTES:
    if ((n = anim_varint_decode(m + at, len - at, &value)) <= 0 || value > len - at - (size_t)n) return ANIM_EPROTO;
    out->data = m + at + n;
    out->len = (size_t)value;
    at += (size_t)n + (size_t)value;
    break;
  case ANIM_WIRE_FIXED64:
  case ANIM_WIRE_FIXED32:
    out->len = out->type == ANIM_WIRE_FIXED64 ? 8 : 4;
    if (out->len > len - at) return ANIM_EPROTO;
    out->data = m + at;
    at += out->len;
    break;
  default:
    return ANIM_EPROTO;
  }
  *pos = at;
  return 1;
}
