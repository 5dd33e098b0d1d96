/* log.c: timestamped log lines on stderr (see log.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "anim_error.h"
#include "log.h"

static srv_log_level_t current_level = SRV_LOG_INFO;
static const char *const level_names[] = {"debug", "info", "warn", "error"};

void srv_log_set_level(srv_log_level_t level) { current_level = level; }

int srv_log_parse_level(const char *name, srv_log_level_t *out_level) {
  for (int i = 0; i < 4; i++)
    if (strcmp(name, level_names[i]) == 0) {
      *out_level = (srv_log_level_t)i;
      return 0;
    }
  return ANIM_EINVAL;
}

void srv_log(srv_log_level_t level, const char *fmt, ...) {
  if (level < current_level) return;
  struct timespec now;
  struct tm utc;
  char stamp[32];
  clock_gettime(CLOCK_REALTIME, &now);
  gmtime_r(&now.tv_sec, &utc);
  strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &utc);
  char line[1024];
  va_list args;
  va_start(args, fmt);
  vsnprintf(line, sizeof line, fmt, args);
  va_end(args);
  fprintf(stderr, "%s.%03ldZ %-5s %s\n", stamp, now.tv_nsec / 1000000, level_names[level], line);
}
