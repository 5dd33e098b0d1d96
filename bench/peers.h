/*
 * peers.h: C entry points to the benchmark's peers, FAISS IndexFlatL2 and a
 * nanoflann k-d tree, implemented in small C++ shims. k <= 64.
 */
#ifndef ANIM_BENCH_PEERS_H
#define ANIM_BENCH_PEERS_H

#ifdef __cplusplus
extern "C" {
#endif

void *peer_faiss_build(const float *x, int rows, int cols);
void peer_faiss_search(void *handle, const float *q, int k, float *out_dist, long *out_index);
void peer_faiss_free(void *handle);

void *peer_nanoflann_build(const float *x, int rows, int cols);
void peer_nanoflann_search(void *handle, const float *q, int k, float *out_dist, long *out_index);
void peer_nanoflann_free(void *handle);

#ifdef __cplusplus
}
#endif
#endif
