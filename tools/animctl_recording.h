/* animctl_recording.h: a recording file (the JSON lines `animctl stream -o`
 * and `animctl record -o` write, docs/formats.md) read back as a clip, for
 * `animctl record --from`. */
#ifndef ANIMCTL_RECORDING_H
#define ANIMCTL_RECORDING_H

#include <stdint.h>
#include "pose/clip.h"

/* One character's frames, a frame per tick step: a step the server skipped
 * (a late tick) is filled by interpolating its neighbours (positions
 * lerped, rotations slerped the short way), so that frame i is always
 * first tick + i steps and the export's timing is the stream's. */
typedef struct {
  int nbones, nframes, capacity;
  vec3 *positions; /* [frame * nbones + bone] */
  quat *rotations;
  uint64_t last_tick;
  uint64_t filled; /* frames interpolated over skipped ticks */
} recording_frames_t;

/* Appends the pose at tick (ticks step apart) after filling any skipped
 * steps; nbones fixed by the first call. 0, ANIM_EINVAL (a tick not after
 * the last, a step that is not a whole number of steps, another nbones),
 * ANIM_ENOMEM. */
int recording_frames_append(recording_frames_t *f, uint64_t tick, uint64_t step, int nbones, const vec3 *positions,
                            const quat *rotations);
/* The frames as a clip: skeleton's names and parents, rest offsets from
 * frame 0. 0 or a negative code. */
int recording_frames_clip(const recording_frames_t *f, const anim_skeleton_t *skeleton, float frame_time,
                          anim_clip_t *out_clip);
void recording_frames_free(recording_frames_t *f);

/* Reads one character of the file at path into out_clip: the header's bones
 * and parents, one clip frame per frame line holding that character (the
 * first pose's character when character is 0; skipped ticks filled as
 * above), rest offsets from its first frame, frame_time the header's
 * rate_divisor (1 when absent) over its tick_rate. *out_filled: frames
 * filled.
 * *out_character is the one read. 0, or ANIM_EIO (unreadable),
 * ANIM_EFORMAT (err: "PATH:LINE: what", e.g. a field missing, a pose of
 * rotations only, no frame of that character), ANIM_ENOMEM. Caller frees
 * with anim_clip_free. */
int recording_read(const char *path, uint64_t character, anim_clip_t *out_clip, uint64_t *out_character,
                   uint64_t *out_filled, char *err, int errlen);

#endif
