/* error.c: messages and names for the ANIM_E* codes of anim_error.h. */
#include "anim_error.h"

const char *anim_strerror(int code) {
  switch (code) {
  case ANIM_OK: return "success";
#define XX(name, value, message) case value: return message;
    ANIM_ERRNO_MAP(XX)
#undef XX
  default: return "unknown error";
  }
}

const char *anim_err_name(int code) {
  switch (code) {
  case ANIM_OK: return "OK";
#define XX(name, value, message) case value: return #name;
    ANIM_ERRNO_MAP(XX)
#undef XX
  default: return "UNKNOWN";
  }
}
