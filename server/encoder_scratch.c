/* encoder_scratch.c: the memory an encoder (codec_internal.h) builds one
 * response's protobuf-c messages in: its inline bytes first, then heap
 * blocks handed out by bumping, each at least twice the one before, so a
 * response of many messages (a search's matches with their poses) takes a
 * block or two, not one allocation a message; the largest block of a
 * response is kept for the next ones in the caller's srv_encoder_spares_t
 * (codec.h). */
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
/* A response's largest block is kept (srv_encoder_spares_t, codec.h) when
 * no larger than this. */
#define ENCODER_SPARE_MAX ((size_t)256 * 1024)

void srv_encoder_spares_init(srv_encoder_spares_t *spares) {
  memset(spares, 0, sizeof *spares);
  pthread_mutex_init(&spares->lock, NULL);
}

void srv_encoder_spares_close(srv_encoder_spares_t *spares) {
  while (spares->n > 0) free(spares->blocks[--spares->n]);
  pthread_mutex_destroy(&spares->lock);
}

/* A kept block of at least size bytes, or NULL. */
static encoder_block_t *encoder_spare_take(srv_encoder_spares_t *spares, size_t size) {
  encoder_block_t *block = NULL;
  if (!spares) return NULL;
  pthread_mutex_lock(&spares->lock);
  for (int i = 0; i < spares->n; i++) {
    encoder_block_t *kept = spares->blocks[i];
    if (kept->size >= size) {
      block = kept;
      spares->blocks[i] = spares->blocks[--spares->n];
      break;
    }
  }
  pthread_mutex_unlock(&spares->lock);
  return block;
}

/* Keeps block, in place of the smallest kept one when all are taken and
 * that one is smaller; frees what is not kept. */
static void encoder_spare_give(srv_encoder_spares_t *spares, encoder_block_t *block) {
  if (spares) {
    pthread_mutex_lock(&spares->lock);
    if (spares->n < SRV_ENCODER_SPARES) {
      spares->blocks[spares->n++] = block, block = NULL;
    } else {
      int smallest = 0;
      for (int i = 1; i < spares->n; i++)
        if (((encoder_block_t *)spares->blocks[i])->size < ((encoder_block_t *)spares->blocks[smallest])->size)
          smallest = i;
      if (((encoder_block_t *)spares->blocks[smallest])->size < block->size) {
        encoder_block_t *out = spares->blocks[smallest];
        spares->blocks[smallest] = block, block = out;
      }
    }
    pthread_mutex_unlock(&spares->lock);
  }
  free(block);
}

static encoder_block_t *encoder_block_new(srv_encoder_spares_t *spares, size_t least, size_t after) {
  size_t size = after > ENCODER_BLOCK_MIN / 2 ? 2 * after : ENCODER_BLOCK_MIN;
  if (size < least) size = least;
  encoder_block_t *block = encoder_spare_take(spares, size);
  if (block) {
    block->used = 0;
    return block;
  }
  if ((block = malloc(sizeof *block + size))) block->size = size, block->used = 0;
  return block;
}

void srv_encoder_init(srv_encoder_t *e, srv_encoder_spares_t *spares) {
  e->spares = spares;
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
  if (keep) encoder_spare_give(e->spares, keep);
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
    if (size > SIZE_MAX / 2 || !(block = encoder_block_new(e->spares, size, block ? block->size : 0))) {
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
