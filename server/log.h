/*
 * log.h: one line per notable event on stderr, with a UTC timestamp and level.
 * Not thread-safe by design: only the event-loop thread logs.
 */
#ifndef ANIM_LOG_H
#define ANIM_LOG_H

typedef enum { ANIM_LOG_DEBUG = 0, ANIM_LOG_INFO = 1, ANIM_LOG_WARN = 2, ANIM_LOG_ERROR = 3 } anim_log_level_t;

void anim_log_set_level(anim_log_level_t level);
/* ANIM_EINVAL for an unknown name (debug, info, warn, error). */
int anim_log_parse_level(const char *name, anim_log_level_t *out_level);
void anim_log(anim_log_level_t level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
