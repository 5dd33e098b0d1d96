/*
 * codec_markers.c: marker_fit on the wire (see codec.h): every field checked
 * by name (the bones against the database are the service's), the
 * positions viewed in place, the poses and residuals encoded flat.
 */
#include <math.h>
#include <string.h>

#include "anim_error.h"
#include "codec_internal.h"

_Static_assert(sizeof(vec3) == 3 * sizeof(float), "positions are viewed as vec3");

int srv_decode_marker_fit(srv_decoder_t *d, const Animserver__MarkerFitRequest *in, srv_request_t *out) {
  srv_marker_fit_request_t *r = &out->body.marker_fit;
  int rc;
  if ((rc = srv_decode_database(d, "database", in->database))) return rc;
  if (in->n_markers == 0) return srv_decode_fail(d, ANIM_EINVAL, ".markers: none (1..%d)", SRV_MARKER_FIT_MAX_MARKERS);
  if ((rc = srv_check_max(d, "markers", in->n_markers, SRV_MARKER_FIT_MAX_MARKERS, ANIM_ELIMIT))) return rc;
  if (in->frames == 0) return srv_decode_fail(d, ANIM_ERANGE, ".frames = 0: at least 1");
  if ((rc = srv_check_max(d, "frames", in->frames, d->limits->max_pose_frames, ANIM_ELIMIT))) return rc;
  size_t nm = in->n_markers, nf = in->frames;
  if (in->n_positions != nf * nm * 3)
    return srv_decode_fail(d, ANIM_EINVAL, ".positions: %zu values, frames x markers x 3 = %zu", in->n_positions, nf * nm * 3);
  if (in->n_missing != 0 && in->n_missing != nf * nm)
    return srv_decode_fail(d, ANIM_EINVAL, ".missing: %zu values, frames x markers = %zu (or none)", in->n_missing, nf * nm);
  for (size_t i = 0; i < nm; i++) {
    const Animserver__Marker *mk = in->markers[i];
    size_t mark = srv_path_field(d, "markers");
    srv_path_index(d, i);
    if ((rc = srv_check_name(d, "bone", mk->bone))) return rc;
    if (mk->n_offset != 0 && mk->n_offset != 3)
      return srv_decode_fail(d, ANIM_EINVAL, ".offset: %zu values, 3 or none", mk->n_offset);
    if (mk->n_offset) {
      if ((rc = srv_check_finite(d, "offset", mk->offset, 3))) return rc;
      vec3 o = vec3_make(mk->offset[0], mk->offset[1], mk->offset[2]);
      if (vec3_length(o) > 1.0f) return srv_decode_fail(d, ANIM_EINVAL, ".offset: %.3g m from the joint, at most 1 m", vec3_length(o));
      r->offsets[i] = o;
    }
    srv_path_restore(d, mark);
    r->bones[i] = mk->bone, r->has_offset[i] = mk->n_offset == 3;
  }
  /* Every present position a world coordinate; the first frame needs 3. */
  int first = 0;
  for (size_t f = 0; f < nf; f++)
    for (size_t i = 0; i < nm; i++) {
      size_t k = f * nm + i;
      if (in->n_missing && in->missing[k]) continue;
      first += f == 0;
      for (int c = 0; c < 3; c++) {
        if ((rc = srv_check_world(d, NULL, in->positions[3 * k + c]))) {
          size_t mark = srv_path_field(d, "positions");
          srv_path_index(d, f), srv_path_index(d, i);
          rc = srv_decode_fail(d, rc, " (frame %zu, marker %zu) is not a finite world coordinate", f, i);
          srv_path_restore(d, mark);
          return rc;
        }
      }
    }
  if (first < 3) return srv_decode_fail(d, ANIM_EINVAL, ".positions: %d markers seen in the first frame, at least 3", first);
  if ((rc = srv_check_option(d, "frame_time", in->frame_time, 0.001f, 1.0f, "s")) ||
      (rc = srv_check_option(d, "marker_halflife", in->marker_halflife, 0.002f, 1.0f, "s")) ||
      (rc = srv_check_option(d, "prior_halflife", in->prior_halflife, 0.01f, 100.0f, "s")) ||
      (rc = srv_check_option(d, "outlier_distance", in->outlier_distance, 0.01f, 10.0f, "m")) ||
      (rc = srv_check_option(d, "far_ratio", in->far_ratio, 1e-4f, 1.0f, "")) ||
      (rc = srv_check_option(d, "settle_time", in->settle_time, 0.0f, 10.0f, "s")) ||
      (rc = srv_check_option(d, "scale", in->scale, 0.1f, 10.0f, "")) ||
      (rc = srv_check_option(d, "total_mass", in->total_mass, 1e-3f, 1000.0f, "kg")))
    return rc;
  if (in->estimate_scale && in->scale != 0.0f)
    return srv_decode_fail(d, ANIM_EINVAL, ".scale = %g: set with estimate_scale (leave it 0)", in->scale);
  if (in->n_missing) {
    uint8_t *present = srv_decode_alloc(d, nf * nm);
    if (!present) return ANIM_ELIMIT;
    for (size_t k = 0; k < nf * nm; k++) present[k] = !in->missing[k];
    r->present = present;
  }
  r->nmarkers = (int)nm, r->nframes = (int)nf;
  r->positions = (const vec3 *)in->positions;
  r->frame_time = in->frame_time, r->marker_halflife = in->marker_halflife, r->prior_halflife = in->prior_halflife;
  r->outlier_distance = in->outlier_distance, r->far_ratio = in->far_ratio, r->settle_time = in->settle_time;
  r->scale = in->scale, r->total_mass = in->total_mass, r->estimate_scale = in->estimate_scale != 0;
  return 0;
}

void srv_encode_marker_fit(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  const srv_marker_fit_response_t *r = &in->body.marker_fit;
  const anim_database_t *db = &in->entry->db;
  Animserver__MarkerFitResponse *m = SRV_ENCODER_NEW(e, Animserver__MarkerFitResponse, ANIMSERVER__MARKER_FIT_RESPONSE__INIT);
  if (!m || !(m->bones = srv_encoder_alloc(e, (size_t)(r->nbones + 1) * sizeof *m->bones))) return;
  size_t n = (size_t)r->nframes;
  m->database_version = db->version;
  m->frames = (uint32_t)r->nframes;
  for (int b = 0; b < r->nbones; b++) m->bones[m->n_bones++] = (char *)db->skeleton.names[b];
  /* The arrays are the response's: the message points at them. */
  m->positions = r->positions, m->n_positions = n * (size_t)r->nbones * 3;
  m->rotations = r->rotations, m->n_rotations = n * (size_t)r->nbones * 4;
  m->residuals = r->residuals, m->n_residuals = n * (size_t)r->nmarkers;
  m->offsets = r->offsets, m->n_offsets = (size_t)r->nmarkers * 3;
  m->scale = r->scale, m->mean_residual = r->mean_residual, m->max_residual = r->max_residual;
  m->worst_frame = (uint32_t)r->worst_frame, m->worst_marker = (uint32_t)r->worst_marker;
  out->body_case = ANIMSERVER__RESPONSE__BODY_MARKER_FIT, out->marker_fit = m;
}
