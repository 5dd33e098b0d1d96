/* encoder_scratch.c: the memory an encoder (codec_internal.h) builds one
 * response's protobuf-c messages in: its inline bytes first, then heap
 * blocks handed out by bumping, each at least twice the one before, so a
 * response of many messages (a search's matches with their poses) takes a
 * block or two, not one allocation a message; the largest block of a
 * response is kept for the next ones. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "codec_internal.h"

typedef struct encoder_block {
  struct encoder_block *next;
  size_t size, used;
  max_align_t data[];
} encoder_block_t;

#define ENCODER_BLOCK_MIN ((size_t)16 * 1024)
/* A response's largest block is kept for the next responses when no
 * larger than ENCODER_SPARE_MAX, up to ENCODER_SPARES of them (a few
 * threads encode at once: the loop's and the pool's), shared by every
 * thread: a batch of searches runs on whichever pool thread is free. */
#define ENCODER_SPARE_MAX ((size_t)256 * 1024)
#define ENCODER_SPARES 4
static struct {
  pthread_mutex_t lock;
  encoder_block_t *blocks[ENCODER_SPARES];
  int n;
} encoder_spares = {PTHREAD_MUTEX_INITIALIZER, {NULL}, 0};

/* A kept block of at least size bytes, or NULL. */
static encoder_block_t *encoder_spare_take(size_t size) {
  encoder_block_t *block = NULL;
  pthread_mutex_lock(&encoder_spares.lock);
  for (int i = 0; i < encoder_spares.n; i++)
    if (encoder_spares.blocks[i]->size >= size) {
      block = encoder_spares.blocks[i];
      encoder_spares.blocks[i] = encoder_spares.blocks[--encoder_spares.n];
      break;
    }
  pthread_mutex_unlock(&encoder_spares.lock);
  return block;
}

/* Keeps block, in place of the smallest kept one when all are taken and
 * that one is smaller; frees what is not kept. */
static void encoder_spare_give(encoder_block_t *block) {
  pthread_mutex_lock(&encoder_spares.lock);
  if (encoder_spares.n < ENCODER_SPARES) {
    encoder_spares.blocks[encoder_spares.n++] = block, block = NULL;
  } else {
    int smallest = 0;
    for (int i = 1; i < encoder_spares.n; i++)
      if (encoder_spares.blocks[i]->size < encoder_spares.blocks[smallest]->size) smallest = i;
    if (encoder_spares.blocks[smallest]->size < block->size) {
      encoder_block_t *out = encoder_spares.blocks[smallest];
      encoder_spares.blocks[smallest] = block, block = out;
    }
  }
  pthread_mutex_unlock(&encoder_spares.lock);
  free(block);
}

static encoder_block_t *encoder_block_new(size_t least, size_t after) {
  size_t size = after > ENCODER_BLOCK_MIN / 2 ? 2 * after : ENCODER_BLOCK_MIN;
  if (size < least) size = least;
  encoder_block_t *block = encoder_spare_take(size);
  if (block) {
    block->used = 0;
    return block;
  }
  if ((block = malloc(sizeof *block + size))) block->size = size, block->used = 0;
  return block;
}

void srv_encoder_init(srv_encoder_t *e) {
  e->blocks = NULL, e->failed = 0, e->bound = 0, e->inline_used = 0; /* the inline bytes are zeroed as handed out */
}

/* Frees the response's blocks but the largest, which is kept (when not too large). */
void srv_encoder_end(srv_encoder_t *e) {
  encoder_block_t *keep = NULL, *blocks = e->blocks;
  e->blocks = NULL;
  for (encoder_block_t *b = blocks; b; b = b->next)
    if (b->size <= ENCODER_SPARE_MAX && (!keep || b->size > keep->size)) keep = b;
  for (encoder_block_t *b = blocks, *next; b; b = next) {
    next = b->next;
    if (b != keep) free(b);
  }
  if (keep) encoder_spare_give(keep);
}

void *srv_encoder_alloc(srv_encoder_t *e, size_t size) {
  size_t align = sizeof(max_align_t), at = (e->inline_used + align - 1) / align * align;
  if (at <= sizeof e->inline_data && size <= sizeof e->inline_data - at) {
    e->inline_used = at + size;
    return memset((char *)e->inline_data + at, 0, size);
  }
  encoder_block_t *block = e->blocks;
  at = block ? (block->used + align - 1) / align * align : 0;
  if (!block || at > block->size || size > block->size - at) {
    if (size > SIZE_MAX / 2 || !(block = encoder_block_new(size, block ? block->size : 0))) {
      e->failed = 1;
      return NULL;
    }
    block->next = e->blocks, e->blocks = block, at = 0;
  }
  block->used = at + size;
  return memset((char *)block->data + at, 0, size);
}

void *srv_encoder_copy(srv_encoder_t *e, const void *init, size_t size) {
  void *p = srv_encoder_alloc(e, size);
  if (p) memcpy(p, init, size);
  return p;
}
