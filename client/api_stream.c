/*
 * api_stream.c: subscriptions and their pose frames (see
 * include/anim_client_stream.h).
 *
 * This file registers its own handler for stream messages with the client
 * (anim__client_on_stream) on the first subscription: client.c hands it
 * every stream message and knows nothing of subscriptions. A frame is
 * decoded into floats (convert_stream.c), then given to its subscription's
 * callback or queued for anim_client_next_frame. The queue is bounded: a
 * caller that stops reading loses the oldest frames, counted, never memory.
 *
 * A callback may call anything but anim_client_close, unsubscribing its own
 * subscription or a blocking call that dispatches more frames included:
 * nothing here is read after the callback returns but the frame it was
 * given.
 */
#include <stdlib.h>
#include <string.h>
#include "client_internal.h"
#include "convert.h"

#define FRAME_QUEUE_MAX 256

typedef struct subscription {
  uint64_t id;
  int rotations_only; /* how the frames are laid out (the wire does not say) */
  anim_stream_cb cb;
  void *data;
  struct subscription *next;
} subscription_t;

typedef struct queued_frame {
  anim_stream_frame_t *frame;
  struct queued_frame *next;
} queued_frame_t;

typedef struct {
  anim_client_t *client;
  subscription_t *subscriptions;
  queued_frame_t *head, *tail;
  int nqueued;
  uint64_t dropped;
} streams_t;

static void on_stream(void *ctx, const Animserver__StreamMessage *m, size_t wire_bytes);

/* Registered with the client: the connection is gone or the client closing. */
static void streams_drop(anim_client_t *client, void *ctx) {
  streams_t *st = ctx;
  for (subscription_t *s = st->subscriptions, *next; s; s = next) next = s->next, free(s);
  for (queued_frame_t *q = st->head, *next; q; q = next) {
    next = q->next;
    anim_stream_frame_free(q->frame);
    free(q);
  }
  free(st);
}

/* This client's streams, registered on first use when create is set (NULL: none, or out of memory). */
static streams_t *streams_of(anim_client_t *client, int create) {
  if (client->handlers.stream == on_stream) return client->handlers.stream_ctx;
  if (!create) return NULL;
  streams_t *st = calloc(1, sizeof *st);
  if (!st) return NULL;
  st->client = client;
  anim__client_on_stream(client, on_stream, st, streams_drop);
  return st;
}

/* ---- frames in ----------------------------------------------------------------------------- */

static void enqueue(streams_t *st, anim_stream_frame_t *frame) {
  queued_frame_t *q = malloc(sizeof *q);
  if (!q) {
    anim_stream_frame_free(frame);
    st->dropped++;
    return;
  }
  if (st->nqueued == FRAME_QUEUE_MAX) { /* the oldest goes */
    queued_frame_t *old = st->head;
    st->head = old->next;
    if (!st->head) st->tail = NULL;
    anim_stream_frame_free(old->frame);
    free(old);
    st->nqueued--;
    st->dropped++;
  }
  q->frame = frame;
  q->next = NULL;
  if (st->tail) st->tail->next = q;
  else st->head = q;
  st->tail = q;
  st->nqueued++;
}

static void on_stream(void *ctx, const Animserver__StreamMessage *m, size_t wire_bytes) {
  streams_t *st = ctx;
  anim_client_t *client = st->client;
  subscription_t *s = st->subscriptions;
  while (s && s->id != m->subscription_id) s = s->next;
  if (!s) return; /* a frame already on its way when we unsubscribed */
  anim_stream_frame_t *frame;
  if (anim__stream_frame_from(m, s->rotations_only, wire_bytes, &frame) != 0) {
    anim__client_set_error(client, ANIM_EPROTO, "a stream frame's poses do not match its encoding");
    st->dropped++;
    return;
  }
  frame->received_us = anim__monotonic_us();
  frame->client_dropped = st->dropped;
  if (!s->cb) {
    enqueue(st, frame);
    return;
  }
  /* The callback may unsubscribe, or lose the connection (st freed): only
   * the frame is touched after it. */
  anim_stream_cb cb = s->cb;
  void *data = s->data;
  cb(client, frame, data);
  anim_stream_frame_free(frame);
}

int anim_client_next_frame(anim_client_t *client, anim_stream_frame_t **out_frame, int timeout_ms) {
  if (!client || !out_frame) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  *out_frame = NULL;
  uint64_t deadline = anim__monotonic_us() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000u;
  for (;;) {
    streams_t *st = streams_of(client, 0);
    if (st && st->head) {
      queued_frame_t *q = st->head;
      st->head = q->next;
      if (!st->head) st->tail = NULL;
      st->nqueued--;
      *out_frame = q->frame;
      free(q);
      return 0;
    }
    uint64_t now = anim__monotonic_us();
    if (now >= deadline) return ANIM_ETIMEDOUT;
    int rc = anim_client_poll(client, (int)((deadline - now + 999) / 1000));
    if (rc != 0 && rc != ANIM_ETIMEDOUT) return rc;
  }
}

/* ---- subscribe ------------------------------------------------------------------------------- */

/* A subscription's own state until its answer registers it. */
typedef struct {
  anim_stream_cb stream_cb;
  void *stream_data;
  int rotations_only;
} subscribe_extra_t;

typedef struct {
  uint64_t subscription;
  float tick_rate;
} subscribed_t;

/* The subscription is registered when its answer arrives, before any of its frames. */
static void subscribe_complete(anim_client_t *client, anim__pending_t *p, int status, const Animserver__Response *r) {
  const subscribe_extra_t *x = p->extra;
  subscribed_t out = {0, 0.0f};
  if (status == 0 && !r->subscribe) status = anim__client_check_answer(client, ANIM_EPROTO);
  if (status == 0) {
    streams_t *st = streams_of(client, 1);
    subscription_t *s = st ? calloc(1, sizeof *s) : NULL;
    if (!s) {
      status = anim__client_set_error(client, ANIM_ENOMEM, "out of memory");
    } else {
      s->id = r->subscribe->subscription;
      s->rotations_only = x->rotations_only;
      s->cb = x->stream_cb;
      s->data = x->stream_data;
      s->next = st->subscriptions;
      st->subscriptions = s;
      out.subscription = s->id;
      out.tick_rate = r->subscribe->tick_rate;
    }
  }
  if (anim__pending_deliver(p, status, &out, sizeof out)) return;
  anim_subscribed_cb cb = (anim_subscribed_cb)p->cb;
  if (cb) cb(client, p->id, status, out.subscription, out.tick_rate, p->data);
}

/* caller: the public function, named in a refusal (the user called it, not this). */
static int subscribe_send(const char *caller, anim_client_t *client, const anim_subscribe_options_t *options,
                          const anim_region_t *region, anim_stream_cb stream_cb, void *stream_data,
                          anim_subscribed_cb cb, void *data, uint64_t *out_id) {
  if (!client || !options || options->ncharacters < 0 || (options->ncharacters && !options->characters) ||
      options->rate_divisor < 0 || (options->encoding != ANIM_POSE_FLOAT && options->encoding != ANIM_POSE_QUANTIZED &&
                                    options->encoding != ANIM_POSE_REPLICATED))
    return anim__client_refuse(client, ANIM_EINVAL, caller);
  int bands_ok = region && region->nbands >= 0 && region->nbands <= 8 && (!region->nbands || region->bands);
  for (int i = 0; bands_ok && i < region->nbands; i++) bands_ok = region->bands[i].rate_divisor >= 0;
  if (region && (!bands_ok || region->max_characters < 0)) /* the values themselves are the server's to check */
    return anim__client_refuse(client, ANIM_EINVAL, caller);
  subscribe_extra_t *x = malloc(sizeof *x);
  if (!x) return anim__client_set_error(client, ANIM_ENOMEM, "out of memory");
  x->stream_cb = stream_cb;
  x->stream_data = stream_data;
  x->rotations_only = options->rotations_only ? 1 : 0;
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__SubscribeRequest sub = ANIMSERVER__SUBSCRIBE_REQUEST__INIT;
  Animserver__AoiRegion aoi = ANIMSERVER__AOI_REGION__INIT;
  Animserver__Vec3 centre = ANIMSERVER__VEC3__INIT;
  Animserver__AoiBand bands[8], *band_pointers[8];
  if (region) {
    centre.x = region->x, centre.z = region->z;
    aoi.centre = &centre;
    aoi.radius = region->radius;
    aoi.half_x = region->half_x, aoi.half_z = region->half_z;
    aoi.follow = region->follow;
    for (int i = 0; i < region->nbands; i++) {
      animserver__aoi_band__init(&bands[i]);
      bands[i].radius = region->bands[i].radius;
      bands[i].rate_divisor = (uint32_t)region->bands[i].rate_divisor;
      band_pointers[i] = &bands[i];
    }
    aoi.n_bands = (size_t)region->nbands, aoi.bands = band_pointers;
    aoi.max_characters = (uint32_t)region->max_characters;
    sub.region = &aoi;
  }
  sub.n_characters = (size_t)options->ncharacters;
  sub.characters = (uint64_t *)options->characters;
  sub.owned = options->owned ? 1 : 0;
  sub.rate_divisor = (uint32_t)options->rate_divisor;
  sub.encoding = (Animserver__PoseEncoding)options->encoding;
  sub.global_positions = options->global_positions ? 1 : 0;
  sub.rotations_only = options->rotations_only ? 1 : 0;
  request.body_case = ANIMSERVER__REQUEST__BODY_SUBSCRIBE;
  request.subscribe = &sub;
  return anim__client_send_with(client, &request, ANIMSERVER__RESPONSE__BODY_SUBSCRIBE, subscribe_complete,
                                (anim__cb_fn)cb, data, x, out_id);
}

int anim_client_subscribe_send(anim_client_t *client, const anim_subscribe_options_t *options,
                               anim_stream_cb stream_cb, void *stream_data, anim_subscribed_cb cb, void *data,
                               uint64_t *out_id) {
  return subscribe_send(__func__, client, options, NULL, stream_cb, stream_data, cb, data, out_id);
}

int anim_client_subscribe_region_send(anim_client_t *client, const anim_subscribe_options_t *options,
                                      const anim_region_t *region, anim_stream_cb stream_cb, void *stream_data,
                                      anim_subscribed_cb cb, void *data, uint64_t *out_id) {
  if (!region) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  return subscribe_send(__func__, client, options, region, stream_cb, stream_data, cb, data, out_id);
}

static int subscribe_wait(const char *caller, anim_client_t *client, const anim_subscribe_options_t *options,
                          const anim_region_t *region, anim_stream_cb cb, void *data, uint64_t *out_subscription,
                          float *out_tick_rate, int timeout_ms) {
  if (!client) return anim__client_refuse(client, ANIM_EINVAL, caller);
  subscribed_t out = {0, 0.0f};
  int rc;
  ANIM__CLIENT_RUN(rc, client, timeout_ms, &out, sizeof out,
                   subscribe_send(caller, client, options, region, cb, data, NULL, NULL, &id_));
  if (rc == 0 && out_subscription) *out_subscription = out.subscription;
  if (rc == 0 && out_tick_rate) *out_tick_rate = out.tick_rate;
  return rc;
}

int anim_client_subscribe(anim_client_t *client, const anim_subscribe_options_t *options, anim_stream_cb cb,
                          void *data, uint64_t *out_subscription, float *out_tick_rate, int timeout_ms) {
  return subscribe_wait(__func__, client, options, NULL, cb, data, out_subscription, out_tick_rate, timeout_ms);
}

int anim_client_subscribe_region(anim_client_t *client, const anim_subscribe_options_t *options,
                                 const anim_region_t *region, anim_stream_cb cb, void *data,
                                 uint64_t *out_subscription, float *out_tick_rate, int timeout_ms) {
  if (!region) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  return subscribe_wait(__func__, client, options, region, cb, data, out_subscription, out_tick_rate, timeout_ms);
}

/* ---- update, unsubscribe ------------------------------------------------------------------------ */

int anim_client_subscription_update_send(anim_client_t *client, uint64_t subscription, int rate_divisor, int encoding,
                                         int paused, anim_status_cb cb, void *data, uint64_t *out_id) {
  if (!client || rate_divisor < 0) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__UpdateSubscriptionRequest update = ANIMSERVER__UPDATE_SUBSCRIPTION_REQUEST__INIT;
  update.subscription = subscription;
  update.rate_divisor = (uint32_t)rate_divisor;
  update.encoding = (Animserver__PoseEncoding)encoding;
  update.paused = paused ? 1 : 0;
  request.body_case = ANIMSERVER__REQUEST__BODY_UPDATE_SUBSCRIPTION;
  request.update_subscription = &update;
  return anim__client_send(client, &request, ANIMSERVER__RESPONSE__BODY_SUBSCRIPTION_CHANGED,
                           anim__client_status_complete, (anim__cb_fn)cb, data, out_id);
}

int anim_client_subscription_update(anim_client_t *client, uint64_t subscription, int rate_divisor, int encoding,
                                    int paused, int timeout_ms) {
  if (!client) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  uint64_t id = 0, unused;
  int rc = anim__client_ready(client, &timeout_ms);
  if (rc == 0)
    rc = anim_client_subscription_update_send(client, subscription, rate_divisor, encoding, paused, NULL, NULL, &id);
  return anim__client_wait(client, rc, id, &unused, sizeof unused, timeout_ms);
}

/* Frames of the subscription still on their way are ignored from now on. */
static void forget(anim_client_t *client, uint64_t subscription) {
  streams_t *st = streams_of(client, 0);
  for (subscription_t **s = st ? &st->subscriptions : NULL; s && *s; s = &(*s)->next) {
    if ((*s)->id != subscription) continue;
    subscription_t *gone = *s;
    *s = gone->next;
    free(gone);
    return;
  }
}

int anim_client_unsubscribe_send(anim_client_t *client, uint64_t subscription, anim_status_cb cb, void *data,
                                 uint64_t *out_id) {
  if (!client) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  forget(client, subscription); /* whatever the server answers */
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__UnsubscribeRequest unsub = ANIMSERVER__UNSUBSCRIBE_REQUEST__INIT;
  unsub.subscription = subscription;
  request.body_case = ANIMSERVER__REQUEST__BODY_UNSUBSCRIBE;
  request.unsubscribe = &unsub;
  return anim__client_send(client, &request, ANIMSERVER__RESPONSE__BODY_SUBSCRIPTION_CHANGED,
                           anim__client_status_complete, (anim__cb_fn)cb, data, out_id);
}

int anim_client_unsubscribe(anim_client_t *client, uint64_t subscription, int timeout_ms) {
  if (!client) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  uint64_t id = 0, unused;
  int rc = anim__client_ready(client, &timeout_ms);
  if (rc == 0) rc = anim_client_unsubscribe_send(client, subscription, NULL, NULL, &id);
  else forget(client, subscription);
  return anim__client_wait(client, rc, id, &unused, sizeof unused, timeout_ms);
}
