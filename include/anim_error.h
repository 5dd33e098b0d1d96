/*
 * anim_error.h: the one list of error codes shared by the animation core,
 * the server, the wire protocol and the client library.
 *
 * Every function that can fail returns int: 0 on success, one of the negative
 * ANIM_E* codes below on failure. The wire protocol carries the same codes
 * (as their positive value in ErrorCode), so an error raised in the server
 * reaches a client as the code it would have had locally.
 */
#ifndef ANIM_ERROR_H
#define ANIM_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

/* XX(name, value, message). Values are stable: they cross the wire. */
#define ANIM_ERRNO_MAP(XX)                                                   \
  XX(EINVAL, -1, "invalid argument")                                         \
  XX(ENOMEM, -2, "out of memory")                                            \
  XX(EIO, -3, "input/output error")                                          \
  XX(EFORMAT, -4, "malformed data")                                          \
  XX(ECHECKSUM, -5, "checksum mismatch")                                     \
  XX(EVERSION, -6, "unsupported version")                                    \
  XX(ETRUNCATED, -7, "truncated data")                                       \
  XX(ENOTFOUND, -8, "not found")                                             \
  XX(ERANGE, -9, "index out of range")                                       \
  XX(ETIMEDOUT, -10, "timed out")                                            \
  XX(ECONNECT, -11, "cannot connect")                                        \
  XX(ECLOSED, -12, "connection closed")                                      \
  XX(EPROTO, -13, "protocol error")                                          \
  XX(ETOOBIG, -14, "message too large")                                      \
  XX(EAGAIN, -15, "try again")                                               \
  XX(EBUSY, -16, "busy")                                                     \
  XX(ELIMIT, -17, "limit exceeded")                                          \
  XX(EUNSUPPORTED, -18, "unsupported request")                               \
  XX(ENONFINITE, -19, "NaN or infinite value")                               \
  XX(EDIMENSION, -20, "wrong vector length")                                 \
  XX(EBADNAME, -21, "invalid name")                                          \
  XX(ESHUTDOWN, -22, "server shutting down")                                 \
  XX(EINTERNAL, -23, "internal error")                                       \
  XX(EEXIST, -24, "already exists")                                          \
  XX(EPERM, -25, "not permitted")

typedef enum {
  ANIM_OK = 0,
#define ANIM_ERRNO_ENUM(name, value, message) ANIM_##name = value,
  ANIM_ERRNO_MAP(ANIM_ERRNO_ENUM)
#undef ANIM_ERRNO_ENUM
  ANIM_ERRNO_MIN = -25
} anim_errno_t;

/* A static, human-readable message for code (0 or any ANIM_E*); never NULL. */
const char *anim_strerror(int code);

/* The code's short name ("EINVAL"), or "UNKNOWN"; never NULL. */
const char *anim_err_name(int code);

#ifdef __cplusplus
}
#endif
#endif
