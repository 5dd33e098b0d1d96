/*
 * test_gyro.c: the seed's gyroscopic experiment (physics/gyro.h): a free
 * box of water 1 x 0.4 x 0.2 m (80 kg, principal inertia diag(1.33, 6.93,
 * 7.73) kg m^2) spinning at (1, 2, 3) rad/s, h = 1/60 s, no gravity.
 *  - the explicit gyroscopic step gains energy every step, without bound;
 *  - the implicit step never gains energy (60 s);
 *  - the seed's equivalent torque reproduces the implicit step;
 *  - MuJoCo's own free body on the same box, Euler and RK4, for comparison.
 * Writes $ANIM_BUILD_DIR/physics_gyro.svg (energy over time; docs/physics.md
 * shows a copy: make physics-gyro-plot).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <mujoco/mujoco.h>

#include "gyro.h"

#define H (1.0 / 60.0)
#define SECONDS 60
#define STEPS 3600 /* SECONDS / H */
#define PLOT_SECONDS 40

/* The seed's box: density 1000 kg/m^3, 1 x 0.4 x 0.2 m. */
static const double box_dims[3] = {1.0, 0.4, 0.2};
static double inertia[3];
static const double spin[3] = {1, 2, 3};

static double energy_explicit[STEPS + 1], energy_implicit[STEPS + 1], energy_mj_euler[STEPS + 1], energy_mj_rk4[STEPS + 1],
    energy_mj_implicit[STEPS + 1];

static void box_inertia(void) {
  double m = 1000.0 * box_dims[0] * box_dims[1] * box_dims[2];
  inertia[0] = m / 12 * (box_dims[1] * box_dims[1] + box_dims[2] * box_dims[2]);
  inertia[1] = m / 12 * (box_dims[0] * box_dims[0] + box_dims[2] * box_dims[2]);
  inertia[2] = m / 12 * (box_dims[0] * box_dims[0] + box_dims[1] * box_dims[1]);
}

static void test_box_inertia(void **state) {
  (void)state;
  box_inertia();
  /* The seed's figures, to its two decimals. */
  assert_true(fabs(inertia[0] - 1.33) < 0.005 && fabs(inertia[1] - 6.93) < 0.005 && fabs(inertia[2] - 7.73) < 0.005);
}

static void test_explicit_gains_energy(void **state) {
  (void)state;
  anim_gyro_state_t s = {{1, 0, 0, 0}, {spin[0], spin[1], spin[2]}};
  double e0 = anim_gyro_energy(&s, inertia);
  energy_explicit[0] = e0;
  int ten = -1, last = STEPS;
  for (int n = 1; n <= STEPS; n++) {
    anim_gyro_step_explicit(&s, inertia, NULL, H);
    double e = anim_gyro_energy(&s, inertia);
    energy_explicit[n] = e;
    if (!isfinite(e) || e > 1e12 * e0) {
      last = n;
      break;
    }
    /* Never a loss (gyro.h: E1 = E0 + |dw|_I^2 / 2; equal where the spin
     * passes close to a principal axis, to rounding). */
    if (!(e >= energy_explicit[n - 1] * (1 - 1e-12)))
      fail_msg("explicit: energy fell at step %d (%.9g -> %.9g J)", n, energy_explicit[n - 1], e);
    if (ten < 0 && e > 10 * e0) ten = n;
  }
  for (int n = last + 1; n <= STEPS; n++) energy_explicit[n] = NAN;
  printf("  explicit: %.2f J at start, 10x after %.2f s, past 1e12 x (or non-finite) after %.2f s\n", e0, ten * H, last * H);
  assert_true(ten > 0 && ten * H < 40.0); /* ten times the start within 40 s (measured 29.4) */
  assert_true(last < STEPS);              /* without bound: past 1e12 x within the minute */
}

static void test_implicit_keeps_energy(void **state) {
  (void)state;
  anim_gyro_state_t s = {{1, 0, 0, 0}, {spin[0], spin[1], spin[2]}};
  double e0 = anim_gyro_energy(&s, inertia), l0 = anim_gyro_momentum(&s, inertia);
  energy_implicit[0] = e0;
  for (int n = 1; n <= STEPS; n++) {
    /* The seed's torque form through the explicit update gives the same step. */
    double tau[3], w_seed[3], I[3] = {inertia[0], inertia[1], inertia[2]};
    anim_gyro_implicit_torque(tau, &s, I, NULL, H);
    anim_gyro_state_t seed = s;
    /* w1 = w0 + h I^-1 tau~: the explicit step's update with tau~ in place of L x w. */
    {
      anim_gyro_state_t probe = s;
      /* I^-1 tau~ through a zero-spin state (no gyroscopic term) of the same orientation. */
      probe.w[0] = probe.w[1] = probe.w[2] = 0;
      anim_gyro_step_explicit(&probe, I, tau, H);
      for (int k = 0; k < 3; k++) w_seed[k] = s.w[k] + probe.w[k];
    }
    (void)seed;
    anim_gyro_step_implicit(&s, inertia, NULL, H);
    for (int k = 0; k < 3; k++)
      if (fabs(w_seed[k] - s.w[k]) > 1e-9 * (1 + fabs(s.w[k]))) fail_msg("seed torque form differs at step %d", n);
    double e = anim_gyro_energy(&s, inertia);
    energy_implicit[n] = e;
    if (e > energy_implicit[n - 1] * (1 + 1e-12))
      fail_msg("implicit: energy grew at step %d (%.12g -> %.12g J)", n, energy_implicit[n - 1], e);
  }
  printf("  implicit: %.2f J at start, %.2f J after %d s (%.3f); momentum %.2f -> %.2f N m s\n", e0, energy_implicit[STEPS],
         SECONDS, energy_implicit[STEPS] / e0, l0, anim_gyro_momentum(&s, inertia));
  assert_true(energy_implicit[STEPS] > 0.2 * e0); /* it loses some energy, it does not stop */
}

/* MuJoCo's warnings (its Euler run goes unstable, as measured) to stderr,
 * not to MUJOCO_LOG.TXT in the working directory. */
static void warning_to_stderr(const char *message) { fprintf(stderr, "  MuJoCo warning: %s\n", message); }

/* MuJoCo's free body with the same inertia. */
static void mujoco_run(const char *integrator, double *out_energy) {
  char xml[1024], err[512];
  snprintf(xml, sizeof xml,
           "<mujoco><option timestep=\"%.17g\" gravity=\"0 0 0\" integrator=\"%s\"/><worldbody><body><freejoint/>"
           "<inertial pos=\"0 0 0\" mass=\"80\" diaginertia=\"%.17g %.17g %.17g\"/></body></worldbody></mujoco>",
           H, integrator, inertia[0], inertia[1], inertia[2]);
  mjVFS *vfs = malloc(sizeof *vfs);
  mj_defaultVFS(vfs);
  mj_makeEmptyFileVFS(vfs, "box.xml", (int)strlen(xml));
  memcpy(vfs->filedata[mj_findFileVFS(vfs, "box.xml")], xml, strlen(xml));
  mjModel *m = mj_loadXML("box.xml", vfs, err, sizeof err);
  mj_deleteVFS(vfs);
  free(vfs);
  if (!m) fail_msg("MuJoCo: %s", err);
  mjData *d = mj_makeData(m);
  /* The free joint's angular velocity is in the body frame (identity orientation at the start). */
  for (int k = 0; k < 3; k++) d->qvel[3 + k] = spin[k];
  for (int n = 0; n <= STEPS; n++) {
    double e = 0;
    for (int k = 0; k < 3; k++) e += 0.5 * inertia[k] * d->qvel[3 + k] * d->qvel[3 + k];
    out_energy[n] = e;
    if (n < STEPS) mj_step(m, d);
  }
  mj_deleteData(d);
  mj_deleteModel(m);
}

static void test_mujoco(void **state) {
  (void)state;
  mujoco_run("Euler", energy_mj_euler);
  mujoco_run("RK4", energy_mj_rk4);
  mujoco_run("implicit", energy_mj_implicit);
  double e0 = energy_mj_euler[0], euler_max = 0, rk4_max = 0, rk4_min = INFINITY;
  for (int n = 0; n <= STEPS; n++) {
    euler_max = fmax(euler_max, energy_mj_euler[n] / e0);
    rk4_max = fmax(rk4_max, energy_mj_rk4[n] / e0);
    rk4_min = fmin(rk4_min, energy_mj_rk4[n] / e0);
  }
  int euler_ten = -1;
  double implicit_max = 0, implicit_min = INFINITY;
  for (int n = 0; n <= STEPS; n++) {
    if (euler_ten < 0 && energy_mj_euler[n] > 10 * e0) euler_ten = n;
    implicit_max = fmax(implicit_max, energy_mj_implicit[n] / e0);
    implicit_min = fmin(implicit_min, energy_mj_implicit[n] / e0);
  }
  printf("  MuJoCo Euler: 10x after %.2f s, %.3g x at most (then NaN); implicit: %.6f..%.6f x;\n"
         "  RK4: %.6f after %d s (range %.6f..%.6f)\n",
         euler_ten * H, euler_max, implicit_min, implicit_max, energy_mj_rk4[STEPS] / e0, SECONDS, rk4_min, rk4_max);
  /* Measured: MuJoCo 2.2.2's Euler step takes the gyroscopic (Coriolis)
   * force explicitly and gains energy like ODE's default; its implicit
   * and RK4 integrators do not (docs/physics.md). */
  assert_true(euler_ten > 0);
  assert_true(rk4_max < 1.01 && rk4_min > 0.99);
  assert_true(implicit_max <= 1.0 + 1e-9);
}

/* Energy over time relative to the start, the first PLOT_SECONDS, clipped at 4. */
static void test_write_plot(void **state) {
  (void)state;
  const char *dir = getenv("ANIM_BUILD_DIR");
  char path[1024];
  snprintf(path, sizeof path, "%s/physics_gyro.svg", dir ? dir : "build");
  FILE *f = fopen(path, "w");
  if (!f) fail_msg("cannot write %s", path);
  const int W = 760, Hh = 300, L = 50, R = 230, T = 20, B = 40;
  double ymax = 4.0;
  int steps = (int)(PLOT_SECONDS / H);
  fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">\n", W, Hh);
  fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, Hh);
  int pw = W - L - R, ph = Hh - T - B;
  for (int i = 0; i <= 4; i++) {
    double y = T + ph - ph * i / 4.0;
    fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/><text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%d</text>\n", L, y,
            L + pw, y, L - 6, y + 4, i);
  }
  for (int s = 0; s <= PLOT_SECONDS; s += 5) {
    double x = L + pw * s / (double)PLOT_SECONDS;
    fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%d s</text>\n", x, Hh - B + 16, s);
  }
  fprintf(f, "<text x=\"12\" y=\"%d\" transform=\"rotate(-90 12 %d)\" text-anchor=\"middle\">kinetic energy / start</text>\n", T + ph / 2, T + ph / 2);
  /* MuJoCo's curves wide and pale under ours: Euler lies exactly on the explicit step. */
  const struct {
    const double *e;
    const char *name, *colour;
    double width;
  } series[] = {{energy_mj_euler, "MuJoCo Euler (under explicit)", "#98df8a", 6},
                {energy_mj_rk4, "MuJoCo RK4", "#c5b0d5", 6},
                {energy_mj_implicit, "MuJoCo implicit", "#ffbb78", 6},
                {energy_explicit, "explicit (ODE's default)", "#d62728", 1.5},
                {energy_implicit, "implicit (the seed's)", "#1f77b4", 1.5}};
  int nseries = (int)(sizeof series / sizeof series[0]);
  for (int k = 0; k < nseries; k++) {
    fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%.1f\" points=\"", series[k].colour, series[k].width);
    for (int n = 0; n <= steps; n++) {
      double v = series[k].e[n] / series[k].e[0];
      if (!isfinite(v)) break;
      int clipped = v > ymax;
      if (clipped) v = ymax;
      fprintf(f, "%.1f,%.1f ", L + pw * n / (double)steps, T + ph - ph * v / ymax);
      if (clipped) break;
    }
    fprintf(f, "\"/>\n<text x=\"%d\" y=\"%d\" fill=\"%s\">%s</text>\n", L + pw + 8, T + 20 + 18 * (nseries - 1 - k),
            k < 3 ? "#555" : series[k].colour, series[k].name);
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"4\" fill=\"%s\"/>\n", L + pw + 8 + 200, T + 14 + 18 * (nseries - 1 - k), 16,
            series[k].colour);
  }
  fprintf(f, "<text x=\"%d\" y=\"%d\" fill=\"#555\">box diag(1.33, 6.93, 7.73)</text>\n", L + pw + 8, T + 130);
  fprintf(f, "<text x=\"%d\" y=\"%d\" fill=\"#555\">spin (1, 2, 3) rad/s</text>\n", L + pw + 8, T + 146);
  fprintf(f, "<text x=\"%d\" y=\"%d\" fill=\"#555\">h = 1/60 s</text>\n", L + pw + 8, T + 162);
  fprintf(f, "</svg>\n");
  fclose(f);
  printf("  wrote %s\n", path);
}

int main(void) {
  mju_user_warning = warning_to_stderr;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_box_inertia),
      cmocka_unit_test(test_explicit_gains_energy),
      cmocka_unit_test(test_implicit_keeps_energy),
      cmocka_unit_test(test_mujoco),
      cmocka_unit_test(test_write_plot),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
