/*
 * lmm.h: learned motion matching: a character driven by three small networks
 * instead of a database (the projector replaces the search, the stepper
 * playing the next frame, the decompressor the pose lookup).
 *
 * What the networks are (learnt from the public reference implementation,
 * orangeduck/Motion-Matching: lmm.h, nnet.h, controller.cpp, database.h,
 * character.h, resources/generate_database.py, train_decompressor.py,
 * train_stepper.py, train_projector.py; read, not copied):
 *
 * Skeleton: 23 bones, LaFAN1's 22 (subject 5's walk, run and a short idle,
 * each also mirrored left/right, resampled to 60 Hz and sped up by 10%)
 * below an added root, the "simulation bone": the Spine2 position projected
 * on the ground and smoothed (Savitzky-Golay, 31 frames), facing the Hips'
 * local +Y axis projected on the ground and smoothed (61 frames). Order and
 * parents:
 *   0 Simulation(-1)  1 Hips(0)  2 LeftUpLeg(1)  3 LeftLeg(2)  4 LeftFoot(3)
 *   5 LeftToe(4)  6 RightUpLeg(1)  7 RightLeg(6)  8 RightFoot(7)  9 RightToe(8)
 *   10 Spine(1)  11 Spine1(10)  12 Spine2(11)  13 Neck(12)  14 Head(13)
 *   15 LeftShoulder(12)  16 LeftArm(15)  17 LeftForeArm(16)  18 LeftHand(17)
 *   19 RightShoulder(12)  20 RightArm(19)  21 RightForeArm(20)  22 RightHand(21)
 * Metres, seconds, radians, Y up, character facing +Z; quaternions (w,x,y,z).
 * Local velocities are central differences at 60 Hz; local angular
 * velocities are those of the local rotations, about the parent's axes.
 * Contacts: LeftToe and RightToe, on when the toe's world speed was under
 * 0.15 m/s (median filtered over 6 frames).
 *
 * Features x (27 floats, each group normalized as (raw - offset) / scale,
 * offset the per-dimension mean over the database, scale the group's mean
 * per-dimension standard deviation divided by the group's weight):
 *   0-2   LeftFoot position   in the root's frame (m)    weight 0.75
 *   3-5   RightFoot position  in the root's frame (m)    weight 0.75
 *   6-8   LeftFoot velocity   in the root's frame (m/s)  weight 1
 *   9-11  RightFoot velocity  in the root's frame (m/s)  weight 1
 *   12-14 Hips velocity       in the root's frame (m/s)  weight 1
 *   15-20 root position 20, 40, 60 frames ahead, (x, z) in the root's frame now (m)  weight 1
 *   21-26 root facing (+Z) 20, 40, 60 frames ahead, (x, z) in the root's frame now    weight 1.5
 * ("in the root's frame": rotated by the inverse root rotation; velocities
 * are world velocities of the bone, root motion included, so rotated.) The
 * offsets and scales were not published with the networks: lmm_normalization.h
 * holds what tools/lmm_recover.c recovers from the networks themselves.
 * A consequence of the weights, visible in the files: the projector's output
 * std over each group's dimensions averages exactly the group's weight.
 *
 * Latent z: 32 floats from the compressor (not shipped), roughly zero-mean.
 *
 * Networks (file format: nnet.h; each file carries its own input and output
 * normalization, applied inside the evaluation):
 *   projector    27 -> 512 x4 -> 59: a normalized query x^ -> (x, z), the
 *                nearest database frame's features and latent;
 *   stepper      59 -> 512 x2 -> 59: (x, z) -> (dx/dt, dz/dt); one frame is
 *                (x, z) += dt * output, dt = 1/60 s;
 *   decompressor 59 -> 512 -> 338: (x, z) -> the pose, laid out as
 *     [0, 66)    local positions of bones 1..22 (m; bones 2..22 have output
 *                std 0: constant bone offsets, the output mean);
 *     [66, 198)  local rotations of bones 1..22 as the first two columns of
 *                the rotation matrix, six floats per bone in row-major
 *                order of the 3x2 block: m00 m01 m10 m11 m20 m21 (column
 *                x = (m00, m10, m20), column y = (m01, m11, m21)); the
 *                rotation is rebuilt by Gram-Schmidt (x normalized, z = x
 *                cross y normalized, y = z cross x);
 *     [198, 264) local velocities of bones 1..22 (m/s);
 *     [264, 330) local angular velocities of bones 1..22 (rad/s);
 *     [330, 333) root velocity in the root's own frame (m/s);
 *     [333, 336) root angular velocity in the root's own frame (rad/s);
 *     [336, 338) contacts, LeftToe and RightToe, on above 0.5.
 *   The decompressor's input normalization is the identity: it takes the
 *   normalized features and the latent as they are.
 *
 * How the reference controller uses them, per 60 Hz frame: the query is the
 * current features' foot and hip groups (already normalized) with the
 * trajectory groups computed from the predicted trajectory (springs, as in
 * motion matching) relative to the displayed root and normalized; every
 * search interval or when the input changes quickly, the projector maps it
 * to (x, z); if (x, z) differs from the current state the pose decompressed
 * from it becomes the destination of an inertialized transition and (x, z)
 * the current state; then every frame the stepper advances the state, the
 * decompressor gives the pose, and the root integrates the decompressed root
 * velocities: position += dt * R v, rotation = exp(dt R w) R, with R the
 * root rotation before the step.
 */
#ifndef ANIM_LMM_H
#define ANIM_LMM_H

#endif
