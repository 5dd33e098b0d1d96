// faiss_shim.cpp: a C entry to FAISS's exact flat L2 index for the benchmark
// (Debian's static libfaiss has no C API compiled in).
#include <faiss/IndexFlat.h>
#include <omp.h>

#include "peers.h"

extern "C" void *peer_faiss_build(const float *x, int rows, int cols) {
  // One thread: the benchmark measures single-query latency of every method alike.
  omp_set_num_threads(1);
  auto *index = new faiss::IndexFlatL2(cols);
  index->add(rows, x);
  return index;
}

extern "C" void peer_faiss_search(void *handle, const float *q, int k, float *out_dist, long *out_index) {
  auto *index = static_cast<faiss::IndexFlatL2 *>(handle);
  faiss::Index::idx_t labels[64];
  index->search(1, q, k, out_dist, labels);
  for (int i = 0; i < k; i++) out_index[i] = static_cast<long>(labels[i]);
}

extern "C" void peer_faiss_free(void *handle) { delete static_cast<faiss::IndexFlatL2 *>(handle); }
