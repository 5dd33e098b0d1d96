/*
 * log.h: one line per notable event on stderr, with a UTC timestamp and level.
 * Not thread-safe by design: only the event-loop thread logs.
 */
#ifndef SRV_LOG_H
#define SRV_LOG_H

typedef enum { SRV_LOG_DEBUG = 0, SRV_LOG_INFO = 1, SRV_LOG_WARN = 2, SRV_LOG_ERROR = 3 } srv_log_level_t;

void srv_log_set_level(srv_log_level_t level);
/* ANIM_EINVAL for an unknown name (debug, info, warn, error). */
int srv_log_parse_level(const char *name, srv_log_level_t *out_level);
void srv_log(srv_log_level_t level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
