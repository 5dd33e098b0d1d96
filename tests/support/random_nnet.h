/*
 * random_nnet.h: small random networks in the server's network file format
 * (core/learned/nnet.h), parsed, for the learned tests that need networks of
 * given sizes rather than trained ones.
 */
#ifndef ANIM_TEST_RANDOM_NNET_H
#define ANIM_TEST_RANDOM_NNET_H

#include "learned/nnet.h"

typedef struct {
  int hidden;             /* the one hidden layer's width */
  float out_std;          /* the outputs' normalization scale ... */
  int zero_from, zero_to; /* ... but 0 on [zero_from, zero_to) (constant outputs) */
  const float *out_mean;  /* the outputs' mean (NULL: 0) */
  float (*uniform)(void); /* the weights: 0.1 x uniform() in [-1, 1) */
} anim_test_nnet_shape_t;

/* nin -> shape->hidden -> nout; the inputs' mean 0 and scale 1. Fails the
 * running test when the bytes are refused. */
anim_nnet_t *anim_test_random_nnet(int nin, int nout, const anim_test_nnet_shape_t *shape);

#endif
