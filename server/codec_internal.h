/*
 * codec_internal.h: what the codec's files share (codec.c, codec_<area>.c):
 * the decoder's state with its field path, the encoder's scratch, the field
 * checks, and one decode and one encode function per request type, declared
 * from request_types.h. Not used outside the codec.
 */
#ifndef SRV_CODEC_INTERNAL_H
#define SRV_CODEC_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "animserver.pb-c.h"
#include "codec.h"
#include "database/feature.h"

/* ---- decoding ---- */

typedef struct srv_decoder {
  srv_request_t *request;
  const srv_codec_limits_t *limits;
  char path[192]; /* the field being converted: "batch_search.queries[2]" */
  size_t len;
  char *err;
  int errlen;
} srv_decoder_t;

/* Append ".name" or "[i]" to the path; each returns the mark srv_path_restore takes. */
size_t srv_path_field(srv_decoder_t *d, const char *name);
size_t srv_path_index(srv_decoder_t *d, size_t index);
void srv_path_restore(srv_decoder_t *d, size_t mark);

/* err = "<path><message>" (message usually starts with a space or a
 * subfield); returns code. */
int srv_decode_fail(srv_decoder_t *d, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* size bytes from the request's arena, charged to its budget; NULL (and err
 * set, ANIM_ELIMIT) when over it. */
void *srv_decode_alloc(srv_decoder_t *d, size_t size);

/* Field checks, named relative to the current path (field may be NULL for
 * the path itself). 0 or the code with err set. */
int srv_check_finite(srv_decoder_t *d, const char *field, const float *values, size_t n);
int srv_check_finite_value(srv_decoder_t *d, const char *field, double value);
/* A float option: 0 (the default) or finite within [lo, hi] (unit names them in the error). */
int srv_check_option(srv_decoder_t *d, const char *field, float value, float lo, float hi, const char *unit);
/* A world coordinate (core/pose/world.h): finite (ANIM_ENONFINITE) and
 * within +-ANIM_WORLD_LIMIT m (ANIM_EINVAL, the message naming the limit);
 * the array form names the element at fault ("positions[4]"). */
int srv_check_world(srv_decoder_t *d, const char *field, double value);
int srv_check_world_array(srv_decoder_t *d, const char *field, const float *values, size_t n);
/* value <= max, else code ("at most max"). */
int srv_check_max(srv_decoder_t *d, const char *field, uint64_t value, uint64_t max, int code);
/* A frame index: at most INT32_MAX (ANIM_ERANGE, as an index past the
 * database's end is); *out the index. */
int srv_check_frame(srv_decoder_t *d, const char *field, uint64_t value, int *out);
/* A plain name (database, tag): ANIM_EBADNAME when empty or not plain. */
int srv_check_name(srv_decoder_t *d, const char *field, const char *name);
/* The request's database (the field named field): a plain name, kept in out->database. */
int srv_decode_database(srv_decoder_t *d, const char *field, const char *name);

/* ---- encoding ---- */

/* Scratch for one response's protobuf-c messages: the first few kilobytes
 * on the encoding thread's stack (most answers fit: nothing allocated),
 * then heap blocks (encoder_scratch.c). */
#define SRV_ENCODER_INLINE_BYTES 2048
typedef struct srv_encoder {
  void *blocks;
  srv_encoder_spares_t *spares; /* where its largest block is kept (codec.h; NULL: freed) */
  int failed;
  /* 0, or what the whole framed ServerMessage can take at most, set by an
   * encoder whose messages are few and fixed (srv_encoder_bound): it is then
   * packed in one pass, without protobuf-c's sizing pass first. */
  size_t bound;
  size_t inline_used;
  max_align_t inline_data[SRV_ENCODER_INLINE_BYTES / sizeof(max_align_t)];
} srv_encoder_t;

void srv_encoder_init(srv_encoder_t *e, srv_encoder_spares_t *spares);
/* Frees what the encoder took (its largest block is kept in its spares for the next). */
void srv_encoder_end(srv_encoder_t *e);
void *srv_encoder_alloc(srv_encoder_t *e, size_t size); /* zeroed; NULL marks the encoding failed */
void *srv_encoder_copy(srv_encoder_t *e, const void *init, size_t size);
/* Sets e->bound to fixed + variable bytes when message (what the encoder
 * fills) has exactly nfields fields, the ones the caller's bound counts: a
 * field added to the schema turns the bound off (sizing pass again) rather
 * than making it short. Packing checks the bound and aborts past it. */
/* What a response's framing takes at most around its body: ServerMessage's
 * response tag and length (6), Response's id (11), the body's tag and length (6). */
#define SRV_RESPONSE_FRAMING_BOUND 23
void srv_encoder_bound(srv_encoder_t *e, const ProtobufCMessageDescriptor *message, unsigned nfields, size_t fixed,
                       size_t variable);
/* A scratch copy of a protobuf-c INIT value (a compound literal). */
#define SRV_ENCODER_NEW(e, type, init) ((type *)srv_encoder_copy((e), &(type)init, sizeof(type)))

/* ---- one decode and one encode per request type (codec_<area>.c) ---- */

#define SRV_CODEC_DECLARE(TYPE, name, Message)                                                          \
  int srv_decode_##name(srv_decoder_t *d, const Animserver__##Message##Request *in, srv_request_t *out); \
  void srv_encode_##name(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out);
SRV_REQUEST_TYPES(SRV_CODEC_DECLARE)
#undef SRV_CODEC_DECLARE

/* Shared by several areas' decoders: a Placement (|x|, |z| bounded, finite);
 * PathOptions (NULL: defaults; else defaults with the non-zero fields,
 * checked: core/graph/graph_path.h's rules and max_expansions at most
 * SRV_PATH_MAX_EXPANSIONS). */
int srv_decode_placement(srv_decoder_t *d, const Animserver__Placement *in, srv_placement_t *out);
int srv_decode_path_options(srv_decoder_t *d, const char *field, const Animserver__PathOptions *in,
                            anim_path_options_t *out);

/* ControllerParams' non-zero fields, each checked (its name in the error),
 * written over *out (codec_character.c); zero fields leave *out's. */
int srv_decode_controller_params(srv_decoder_t *d, const Animserver__ControllerParams *in,
                                 anim_controller_params_t *out);
/* Every parameter of params as a ControllerParams (codec_history.c). */
Animserver__ControllerParams *srv_encode_controller_params(srv_encoder_t *e, const anim_controller_params_t *params);

/* create_characters' MODE_TRACKER options (codec_fit.c): *out with the
 * defaults when in is NULL (present 0). */
int srv_decode_tracker_setup(srv_decoder_t *d, const Animserver__TrackerSetup *in, srv_tracker_setup_t *out);

/* Shared by several areas' encoders. */
struct anim_database;
/* Database frame frame as a Pose (arrays point into the database). */
Animserver__Pose *srv_encode_frame_pose(srv_encoder_t *e, const struct anim_database *db, int frame,
                                        srv_pose_options_t options);
Animserver__InertializerState *srv_encode_inertializer(srv_encoder_t *e, const srv_inertializer_t *state);
/* "LeftFoot position", "trajectory direction": how explanations name a feature term. */
void srv_feature_term_label(const anim_feature_term_t *term, char *out, size_t size);

#endif
