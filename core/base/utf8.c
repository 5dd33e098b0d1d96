/*
 * utf8.c: UTF-8 text checks on raw bytes (see utf8.h).
 *
 * The rules are RFC 3629's: the lead byte fixes the length, continuation
 * bytes are 10xxxxxx, and the first continuation byte is narrowed where a
 * lead byte alone would allow overlong forms (E0, F0), surrogates (ED) or
 * code points past U+10FFFF (F4); C0, C1 and F5-FF never lead.
 */
#include <stdio.h>
#include <string.h>

#include "base/utf8.h"

size_t anim_utf8_sequence(const unsigned char *s, size_t n) {
  unsigned char c = s[0];
  if (c < 0x80) return 1;
  size_t len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
  if (len == 0 || c > 0xf4 || len > n) return 0;
  for (size_t i = 1; i < len; i++)
    if ((s[i] & 0xc0) != 0x80) return 0;
  if (c == 0xe0 && s[1] < 0xa0) return 0; /* overlong */
  if (c == 0xed && s[1] > 0x9f) return 0; /* surrogate */
  if (c == 0xf0 && s[1] < 0x90) return 0; /* overlong */
  if (c == 0xf4 && s[1] > 0x8f) return 0; /* past U+10FFFF */
  return len;
}

size_t anim_utf8_quote(char *out, size_t size, const char *s, size_t n, size_t max_in) {
  const unsigned char *u = (const unsigned char *)s;
  size_t in = 0, w = 0, end = n < max_in ? n : max_in;
  while (in < end) {
    size_t len = anim_utf8_sequence(u + in, n - in);
    int printable = len > 1 || (len == 1 && u[in] >= 0x20 && u[in] != 0x7f);
    size_t need = printable ? len : 4; /* \xNN */
    if (in + (printable ? len : 1) > end || w + need + 1 > size) break;
    if (printable) memcpy(out + w, u + in, len), in += len;
    else snprintf(out + w, 5, "\\x%02x", u[in]), in += 1;
    w += need;
  }
  if (in < n && w + 4 <= size) memcpy(out + w, "...", 3), w += 3;
  out[w] = '\0';
  return w;
}
