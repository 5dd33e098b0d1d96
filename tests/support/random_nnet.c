/* random_nnet.c: see random_nnet.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "random_nnet.h"

static void put(unsigned char **p, size_t *len, const void *v, size_t n) {
  unsigned char *grown = realloc(*p, *len + n);
  if (!grown) fail_msg("out of memory");
  *p = grown;
  memcpy(*p + *len, v, n);
  *len += n;
}

anim_nnet_t *anim_test_random_nnet(int nin, int nout, const anim_test_nnet_shape_t *shape) {
  unsigned char *b = NULL;
  size_t len = 0;
  int widths[3] = {nin, shape->hidden, nout};
  /* Normalization: input mean, input scale, output mean, output scale. */
  for (int a = 0; a < 4; a++) {
    int32_t n = a < 2 ? nin : nout;
    put(&b, &len, &n, 4);
    for (int i = 0; i < n; i++) {
      float v = a == 1   ? 1.0f
                : a == 3 ? (i >= shape->zero_from && i < shape->zero_to ? 0.0f : shape->out_std)
                : a == 2 && shape->out_mean ? shape->out_mean[i]
                                            : 0.0f;
      put(&b, &len, &v, 4);
    }
  }
  int32_t layers = 2;
  put(&b, &len, &layers, 4);
  for (int l = 0; l < 2; l++) {
    int32_t rc[2] = {widths[l], widths[l + 1]};
    put(&b, &len, rc, 8);
    for (int i = 0; i < rc[0] * rc[1]; i++) {
      float v = 0.1f * shape->uniform();
      put(&b, &len, &v, 4);
    }
    put(&b, &len, &rc[1], 4);
    for (int i = 0; i < rc[1]; i++) {
      float v = 0.0f;
      put(&b, &len, &v, 4);
    }
  }
  char err[256];
  anim_nnet_t *nn = anim_nnet_parse(b, len, "small", NULL, err, sizeof err);
  free(b);
  if (!nn) fail_msg("%s", err);
  return nn;
}
