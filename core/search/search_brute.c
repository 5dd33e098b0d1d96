/* search_brute.c: the reference method: every row, in order. */
#include "search/search_internal.h"

static void scan(const anim_search_index_t *index, const anim_search_query_t *q, anim_topk_t *topk) {
  const float *x = index->data.features;
  int cols = index->data.cols;
  for (int i = 0; i < index->data.rows; i++) anim_search_offer(index, q, topk, i, x + (size_t)i * (size_t)cols);
}

int anim_search_brute_init(anim_search_index_t *index, char *err, int errlen) {
  index->scan = scan;
  return 0;
}
