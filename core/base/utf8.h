/*
 * utf8.h: UTF-8 text checks on raw bytes, for text that arrives as bytes
 * and leaves in protobuf string fields (which must be UTF-8): machine text
 * and the names and diagnostics made from it.
 *
 * What it does not: decode code points, normalize, or allocate.
 */
#ifndef ANIM_UTF8_H
#define ANIM_UTF8_H

#include <stddef.h>

/* Length (1-4) of the valid UTF-8 sequence at s, of the n bytes left, or 0:
 * a stray continuation byte, a sequence cut short, overlong forms,
 * surrogates and code points past U+10FFFF are invalid. n >= 1. */
size_t anim_utf8_sequence(const unsigned char *s, size_t n);

/* Writes at most max_in bytes of s (n bytes) to out (size >= 1) as text
 * that is always valid UTF-8 and printable: valid sequences of printable
 * characters as they are, every other byte (control characters, DEL,
 * invalid UTF-8) as \xNN. A sequence that would not fit whole is left out
 * and "..." marks where s was cut. Returns the length written. */
size_t anim_utf8_quote(char *out, size_t size, const char *s, size_t n, size_t max_in);

#endif
