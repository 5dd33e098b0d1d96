// nanoflann_shim.cpp: a C entry to a nanoflann k-d tree (exact: eps 0) over
// the benchmark's feature matrix, read in place through an adaptor.
#include <nanoflann.hpp>

#include "peers.h"

namespace {
struct Matrix {
  const float *x;
  size_t rows, cols;
  size_t kdtree_get_point_count() const { return rows; }
  float kdtree_get_pt(size_t i, size_t d) const { return x[i * cols + d]; }
  template <class Box> bool kdtree_get_bbox(Box &) const { return false; }
};
using Tree = nanoflann::KDTreeSingleIndexAdaptor<nanoflann::L2_Simple_Adaptor<float, Matrix>, Matrix, -1, size_t>;
struct Handle {
  Matrix matrix;
  Tree tree;
  Handle(const float *x, int rows, int cols)
      : matrix{x, static_cast<size_t>(rows), static_cast<size_t>(cols)},
        tree(cols, matrix, nanoflann::KDTreeSingleIndexAdaptorParams(16)) {
    tree.buildIndex();
  }
};
}  // namespace

extern "C" void *peer_nanoflann_build(const float *x, int rows, int cols) { return new Handle(x, rows, cols); }

extern "C" void peer_nanoflann_search(void *handle, const float *q, int k, float *out_dist, long *out_index) {
  auto *h = static_cast<Handle *>(handle);
  size_t index[64];
  h->tree.knnSearch(q, static_cast<size_t>(k), index, out_dist);
  for (int i = 0; i < k; i++) out_index[i] = static_cast<long>(index[i]);
}

extern "C" void peer_nanoflann_free(void *handle) { delete static_cast<Handle *>(handle); }
