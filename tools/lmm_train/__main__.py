"""lmm_train: trains learned motion matching's networks on one database, for
the server (docs/lmm_train.md).

    /usr/bin/python3 tools/lmm_train DATABASE OUT [options]     (make lmm-train DB=... OUT=...)

DATABASE is a .animdb file, or "default" for the embedded procedural
database. Its arrays are exported by `animdb arrays` into OUT/arrays; then,
as the reference implementation (orangeduck/Motion-Matching's
train_decompressor.py, train_stepper.py, train_projector.py) and the paper
(Holden et al. 2020, "Learned Motion Matching") do:

1. compressor + decompressor on pairs of consecutive frames: the
   compressor maps the pose (local and character-space positions,
   rotations, velocities, angular velocities) to a latent z; the
   decompressor maps (x, z) (x: the database's normalized features) back
   to the pose row. Losses on local positions, rotations, velocities,
   angular velocities, root velocities and contacts, on character-space
   (forward kinematics) positions, rotations and velocities, on the
   finite-difference velocities of both, and latent regularization (L1,
   L2 and its velocity);
2. stepper: (x, z) -> (dx/dt, dz/dt), rolled out over windows of 20 frames
   from the compressed features, losses on values and velocities;
3. projector: a noisy query -> the nearest frame's (x, z), losses on the
   values and on the query's distance to them.

Writes OUT/decompressor.bin, stepper.bin, projector.bin (the format and
normalizations core/learned/nnet.h and lmm.h load: put OUT at NAME.lmm beside
NAME.animdb, or give it to --lmm-default), OUT/loss.svg (the curves),
OUT/train.json (figures) and OUT/checkpoint.pt (resumed from when present).
Deterministic given --seed (one thread by default). Exit status: 0, 1
failure (the reason on stderr: a database it cannot use is refused), 2 usage.
"""
import argparse
import json
import math
import os
import sys
import time

# torch.set_num_threads does not reach the OpenBLAS that Debian's torch
# multiplies with: left alone it runs on every core, which on a shared
# machine halved the decompressor's steps per second (6 against 12 it/s
# under a load of 18) and made runs differ in the last digits (its sums
# split between threads). Set before torch loads it.
_THREADS = sys.argv[sys.argv.index("--threads") + 1] if "--threads" in sys.argv[:-1] else "1"
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_var, _THREADS)

import numpy as np  # noqa: E402
import torch  # noqa: E402

import data
import networks
import plot

STAGES = ("decompressor", "stepper", "projector")


def parse_args(argv):
    p = argparse.ArgumentParser(prog="lmm_train", description="Train learned motion matching on a database.")
    p.add_argument("database", help='a .animdb file, or "default" (the embedded procedural database)')
    p.add_argument("out", help="output directory (the networks, loss.svg, train.json, checkpoint.pt)")
    p.add_argument("--animdb", default=os.environ.get("ANIMDB", "build/animdb"), help="the animdb tool (default build/animdb)")
    p.add_argument("--steps", type=int, default=None, help="steps of every network (overrides the three below)")
    p.add_argument("--decompressor-steps", type=int, default=100000)
    p.add_argument("--stepper-steps", type=int, default=50000)
    p.add_argument("--projector-steps", type=int, default=50000)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--hidden", default=None,
                   help="N or D,S,P: width of the hidden layers of the decompressor, stepper and projector "
                        "(default: the widest one width whose three networks fit in a tenth of the database's "
                        "memory, at most the reference's 512)")
    p.add_argument("--compressor-hidden", type=int, default=None,
                   help="width of the compressor's layers (training only, never written; default the widest of --hidden)")
    p.add_argument("--latent", type=int, default=32)
    p.add_argument("--lr", type=float, default=0.001)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--threads", type=int, default=1, help="PyTorch threads (default 1: deterministic, polite)")
    p.add_argument("--checkpoint-every", type=int, default=2000)
    p.add_argument("--eval-every", type=int, default=1000,
                   help="decompressor steps between error measurements (and where it ends)")
    p.add_argument("--log-every", type=int, default=100)
    p.add_argument("--fresh", action="store_true", help="ignore OUT/checkpoint.pt")
    p.add_argument("--deadline", default=None, help="stop (checkpointed, networks written) at this UTC time HH:MM")
    p.add_argument("--minutes", default=None,
                   help="D,S,P: at most this many minutes of training per network (decompressor, stepper, projector); "
                        "a network whose time is up is finished as if its steps were done")
    p.add_argument("--stop-after", type=int, default=0, help="stop (checkpointed) after this many steps of this run")
    a = p.parse_args(argv)
    try:
        a.minutes = [float(x) for x in a.minutes.split(",")] if a.minutes else None
    except ValueError:
        a.minutes = []
    if a.minutes is not None and (len(a.minutes) != 3 or min(a.minutes) <= 0):
        p.error("--minutes takes three positive numbers: decompressor,stepper,projector")
    if a.hidden is not None:
        try:
            widths = [int(x) for x in a.hidden.split(",")]
        except ValueError:
            widths = []
        if len(widths) == 1:
            widths = widths * 3
        if len(widths) != 3 or min(widths) < 1:
            p.error("--hidden takes one positive width, or three: decompressor,stepper,projector")
        a.hidden = widths
    if a.compressor_hidden is not None and a.compressor_hidden < 1:
        p.error("--compressor-hidden must be >= 1")
    if a.steps is not None:
        a.decompressor_steps = a.stepper_steps = a.projector_steps = a.steps
    for name in ("decompressor_steps", "stepper_steps", "projector_steps", "batch", "latent", "threads",
                 "checkpoint_every", "eval_every", "log_every"):
        if getattr(a, name) < 1:
            p.error("--%s must be >= 1" % name.replace("_", "-"))
    return a


def say(message):
    sys.stderr.write("lmm_train: %s\n" % message)
    sys.stderr.flush()


class Progress:
    """A progress line per log interval (redrawn in place on a terminal)."""

    def __init__(self, name, total, start):
        self.name, self.total, self.t0, self.s0 = name, total, time.time(), start
        self.tty = sys.stderr.isatty()

    def show(self, step, loss, extra=""):
        rate = (step - self.s0) / max(time.time() - self.t0, 1e-9)
        eta = (self.total - step) / rate if rate > 0 else 0
        done = int(30 * step / self.total)
        line = "%-12s [%s%s] %7d/%d loss %.4f %5.0f it/s eta %4.0f s%s" % (
            self.name, "#" * done, "." * (30 - done), step, self.total, loss, rate, eta, extra)
        sys.stderr.write(("\r" + line) if self.tty else line + "\n")
        sys.stderr.flush()

    def end(self):
        if self.tty:
            sys.stderr.write("\n")


def shape_text(shape):
    shape = tuple(shape)
    if len(shape) == 2:  # checkpoints before per-network widths: one width, the compressor's too
        shape = (shape[0],) * 4 + (shape[1],)
    return "hidden %d,%d,%d, compressor %d, latent %d" % shape


class Trainer:
    def __init__(self, args, db):
        self.args, self.db = args, db
        torch.manual_seed(args.seed)
        self.rng = np.random.default_rng(args.seed)
        D, L = db.nfeatures, args.latent
        Hd, Hs, Hp = args.hidden
        t = lambda a: torch.from_numpy(np.ascontiguousarray(a, dtype=np.float32))
        self.X, self.Y, self.Cin = t(db.features), t(db.Y), t(db.C)
        self.Q = {k: t(v) for k, v in db.q_parts.items()}
        # Normalizations (from the data, so the same on resume).
        self.y_mean, y_std_div, y_std = db.stats(db.Y, 1e-5)
        self.y_std_div, self.y_std_file = t(y_std_div), np.where(y_std < 1e-5, 0.0, y_std).astype(np.float32)
        self.y_mean_t = t(self.y_mean)
        c_mean, c_std, _ = db.stats(db.C, 1e-5)
        self.c_mean, self.c_std = t(c_mean), t(c_std)
        self.compressor = networks.compressor(self.Cin.shape[1], args.compressor_hidden, L)
        self.decompressor = networks.relu_mlp(networks.decompressor_sizes(D, L, Hd, db.npose))
        self.stepper = networks.relu_mlp(networks.stepper_sizes(D, L, Hs))
        self.projector = networks.relu_mlp(networks.projector_sizes(D, L, Hp))
        self.models = dict(compressor=self.compressor, decompressor=self.decompressor, stepper=self.stepper,
                           projector=self.projector)
        params = dict(decompressor=list(self.compressor.parameters()) + list(self.decompressor.parameters()),
                      stepper=list(self.stepper.parameters()), projector=list(self.projector.parameters()))
        self.optims = {s: torch.optim.AdamW(params[s], lr=args.lr, amsgrad=True, weight_decay=0.001) for s in STAGES}
        self.scheds = {s: torch.optim.lr_scheduler.ExponentialLR(self.optims[s], 0.99 ** (1.0 / 1000)) for s in STAGES}
        self.history = {s: [] for s in STAGES}
        self.history["mjpe_cm"] = []
        self.stage, self.step, self.Z = 0, 0, None
        self.seconds = {s: 0.0 for s in STAGES}

    # ---- decompressor --------------------------------------------------------------------

    def split(self, Y):
        """A pose row -> its parts (bones 1..B-1)."""
        B1, C = self.db.nbones - 1, len(self.db.contact_bones)
        sizes = [3 * B1, 6 * B1, 3 * B1, 3 * B1, 3, 3, C]
        parts = torch.split(Y, sizes, dim=-1)
        sh = Y.shape[:-1]
        return dict(pos=parts[0].reshape(sh + (B1, 3)), txy=parts[1].reshape(sh + (B1, 6)),
                    vel=parts[2].reshape(sh + (B1, 3)), ang=parts[3].reshape(sh + (B1, 3)), rvel=parts[4],
                    rang=parts[5], con=parts[6])

    def decode(self, X, Z):
        """(x, z) -> the pose row in metres, as the server evaluates the file
        (constant columns exactly their mean)."""
        out = self.decompressor(torch.cat([X, Z], dim=-1))
        return out * torch.from_numpy(self.y_std_file) + self.y_mean_t

    def character(self, parts):
        import kinematics
        rot = kinematics.txy_to_matrix(parts["txy"])
        return kinematics.fk(parts["pos"], rot, parts["vel"], parts["ang"], parts["rvel"], parts["rang"],
                             self.db.parents)

    def decompressor_loss(self):
        db, dt = self.db, self.db.dt
        starts = self.rng.choice(db.pair_starts, size=self.args.batch)
        idx = torch.from_numpy(np.stack([starts, starts + 1], axis=1))
        Xg, Yg, Cg = self.X[idx], self.Y[idx], self.Cin[idx]
        Z = self.compressor((Cg - self.c_mean) / self.c_std)
        Yt = self.decompressor(torch.cat([Xg, Z], dim=-1)) * self.y_std_div + self.y_mean_t
        g, p = self.split(Yg), self.split(Yt)
        Qg = {k: v[idx] for k, v in self.Q.items()}
        Qt = self.character(p)
        l1 = lambda a, b: torch.mean(torch.abs(a - b))
        vel = lambda a: (a[:, 1] - a[:, 0]) / dt
        loss = (75.0 * l1(p["pos"], g["pos"]) + 10.0 * l1(p["txy"], g["txy"]) + 10.0 * l1(p["vel"], g["vel"])
                + 1.25 * l1(p["ang"], g["ang"]) + 2.0 * l1(p["rvel"], g["rvel"]) + 2.0 * l1(p["rang"], g["rang"])
                + 2.0 * l1(p["con"], g["con"])
                + 15.0 * l1(Qt["pos"], Qg["pos"]) + 5.0 * l1(Qt["txy"], Qg["txy"]) + 2.0 * l1(Qt["vel"], Qg["vel"])
                + 0.75 * l1(Qt["ang"], Qg["ang"])
                + 10.0 * l1(vel(p["pos"]), vel(g["pos"])) + 1.75 * l1(vel(p["txy"]), vel(g["txy"]))
                + 2.0 * l1(vel(Qt["pos"]), vel(Qg["pos"])) + 0.75 * l1(vel(Qt["txy"]), vel(Qg["txy"]))
                + 0.1 * torch.mean(Z * Z) + 0.1 * torch.mean(torch.abs(Z)) + 0.01 * torch.mean(torch.abs(vel(Z))))
        return loss

    def compress_all(self):
        with torch.no_grad():
            return torch.cat([self.compressor((c - self.c_mean) / self.c_std) for c in torch.split(self.Cin, 4096)])

    def mean_joint_error_cm(self):
        """Mean over training frames and bones 1..B-1 of the distance between
        the decompressed and the database's character-space joint positions."""
        with torch.no_grad():
            Z = self.compress_all()
            total, count = 0.0, 0
            for s in range(0, self.db.nframes, 4096):
                sl = slice(s, s + 4096)
                Qt = self.character(self.split(self.decode(self.X[sl], Z[sl])))
                d = torch.sqrt(((Qt["pos"] - self.Q["pos"][sl]) ** 2).sum(-1))
                total += float(d.sum())
                count += d.numel()
        return 100.0 * total / count

    # ---- stepper ---------------------------------------------------------------------------

    def stepper_norms(self):
        XZ = torch.cat([self.X, self.Z], dim=-1)
        s = torch.from_numpy(self.db.pair_starts)
        V = (XZ[s + 1] - XZ[s]) / self.db.dt
        floor = lambda a: torch.clamp(a, min=1e-5)
        return XZ.mean(0), floor(XZ.std(0)), V.mean(0), floor(V.std(0))

    def stepper_loss(self):
        W, D, dt = data.STEPPER_WINDOW, self.db.nfeatures, self.db.dt
        starts = self.rng.choice(self.db.window_starts, size=self.args.batch)
        idx = torch.from_numpy(starts[:, None] + np.arange(W)[None, :])
        XZg = torch.cat([self.X[idx], self.Z[idx]], dim=-1)
        in_mean, in_std, out_mean, out_std = self.step_norms
        state = [XZg[:, 0]]
        for _ in range(1, W):
            v = self.stepper((state[-1] - in_mean) / in_std) * out_std + out_mean
            state.append(state[-1] + dt * v)
        XZt = torch.stack(state, dim=1)
        l1 = lambda a, b: torch.mean(torch.abs(a - b))
        vel = lambda a: (a[:, 1:] - a[:, :-1]) / dt
        return (2.0 * l1(XZt[..., :D], XZg[..., :D]) + 7.5 * l1(XZt[..., D:], XZg[..., D:])
                + 0.2 * l1(vel(XZt[..., :D]), vel(XZg[..., :D])) + 0.5 * l1(vel(XZt[..., D:]), vel(XZg[..., D:])))

    # ---- projector -------------------------------------------------------------------------

    def projector_norms(self):
        XZ = torch.cat([self.X, self.Z], dim=-1)
        floor = lambda a: torch.clamp(a, min=1e-5)
        return self.X.mean(0), floor(self.X.std(0)), XZ.mean(0), floor(XZ.std(0))

    def projector_loss(self):
        D = self.db.nfeatures
        frames = torch.from_numpy(self.rng.choice(self.db.nframes, size=self.args.batch))
        sigma = torch.from_numpy(self.rng.uniform(0.0, 1.0, size=(self.args.batch, 1)).astype(np.float32))
        noise = torch.from_numpy(self.rng.standard_normal((self.args.batch, D)).astype(np.float32))
        Xhat = self.X[frames] + sigma * noise * self.X.std(0)
        with torch.no_grad():
            nearest = torch.argmin(torch.cdist(Xhat, self.X), dim=1)
        Xg, Zg = self.X[nearest], self.Z[nearest]
        in_mean, in_std, out_mean, out_std = self.proj_norms
        out = self.projector((Xhat - in_mean) / in_std) * out_std + out_mean
        Xt, Zt = out[:, :D], out[:, D:]
        dist = lambda a, b: torch.sqrt(torch.sum((a - b) ** 2, dim=-1) + 1e-8)
        l1 = lambda a, b: torch.mean(torch.abs(a - b))
        return 1.0 * l1(Xt, Xg) + 5.0 * l1(Zt, Zg) + 0.3 * l1(dist(Xhat, Xt), dist(Xhat, Xg))

    # ---- files -----------------------------------------------------------------------------

    def write_networks(self, out):
        D, L = self.db.nfeatures, self.args.latent
        networks.save(os.path.join(out, "decompressor.bin"), self.decompressor, np.zeros(D + L), np.ones(D + L),
                      self.y_mean, self.y_std_file)
        if self.stage >= 1 or self.Z is not None:
            n = [a.numpy() for a in self.step_norms]
            networks.save(os.path.join(out, "stepper.bin"), self.stepper, *n)
            n = [a.numpy() for a in self.proj_norms]
            networks.save(os.path.join(out, "projector.bin"), self.projector, *n)

    def state_dict(self):
        return dict(version=self.db.version, seed=self.args.seed, shape=self.shape(),
                    stage=self.stage, step=self.step, history=self.history, seconds=self.seconds,
                    models={k: m.state_dict() for k, m in self.models.items()},
                    optims={k: o.state_dict() for k, o in self.optims.items()},
                    scheds={k: s.state_dict() for k, s in self.scheds.items()},
                    rng=self.rng.bit_generator.state, torch_rng=torch.get_rng_state())

    def shape(self):
        return tuple(self.args.hidden) + (self.args.compressor_hidden, self.args.latent)

    def load_state(self, st):
        if st["version"] != self.db.version:
            raise data.Refused("the checkpoint is of database version %s, this is %s (--fresh to start over)"
                               % (st["version"], self.db.version))
        if tuple(st["shape"]) != self.shape():
            raise data.Refused("the checkpoint's networks are %s; these options give %s (--fresh to start over)"
                               % (shape_text(st["shape"]), shape_text(self.shape())))
        for k, m in self.models.items():
            m.load_state_dict(st["models"][k])
        for k, o in self.optims.items():
            o.load_state_dict(st["optims"][k])
        for k, s in self.scheds.items():
            s.load_state_dict(st["scheds"][k])
        self.rng.bit_generator.state = st["rng"]
        torch.set_rng_state(st["torch_rng"])
        self.stage, self.step, self.history, self.seconds = st["stage"], st["step"], st["history"], st["seconds"]


def main(argv):
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.use_deterministic_algorithms(True)
    os.makedirs(args.out, exist_ok=True)
    arrays = os.path.join(args.out, "arrays")
    deadline = None
    if args.deadline:
        hh, mm = (int(x) for x in args.deadline.split(":"))
        now = time.gmtime()
        deadline = time.time() + ((hh * 60 + mm) - (now.tm_hour * 60 + now.tm_min)) * 60 - now.tm_sec
    try:
        data.export(args.database, arrays, args.animdb)
        db = data.Database(arrays, args.latent)
    except data.Refused as e:
        say(str(e))
        return 1
    budget = db.memory_bytes // 10
    if args.hidden is None:
        args.hidden = [networks.widest(db.nfeatures, args.latent, db.npose, budget)] * 3
    if args.compressor_hidden is None:
        args.compressor_hidden = max(args.hidden)
    planned = networks.bytes_of(db.nfeatures, args.latent, db.npose, *args.hidden)
    say("%s: %d frames at %g Hz, %d bones, %d contacts, %d features, %.2f MB in memory; networks %d,%d,%d wide "
        "(decompressor, stepper, projector), latent %d: %.2f MB (%.1f%% of the database's), seed %d"
        % (db.name, db.nframes, db.frame_rate, db.nbones, len(db.contact_bones), db.nfeatures, db.memory_bytes / 1e6,
           *args.hidden, args.latent, planned / 1e6, 100.0 * planned / db.memory_bytes, args.seed))
    tr = Trainer(args, db)
    ckpt = os.path.join(args.out, "checkpoint.pt")
    if os.path.exists(ckpt) and not args.fresh:
        try:
            tr.load_state(torch.load(ckpt))
        except data.Refused as e:
            say(str(e))
            return 1
        say("resumed from %s: %s" % (ckpt, "%s step %d" % (STAGES[tr.stage], tr.step) if tr.stage < len(STAGES)
                                        else "finished (the files written again)"))

    def checkpoint():
        tmp = ckpt + ".tmp"
        torch.save(tr.state_dict(), tmp)
        os.replace(tmp, ckpt)
        plot.write_svg(os.path.join(args.out, "loss.svg"), tr.history,
                       "learned motion matching on %s (%d frames, seed %d)" % (db.name, db.nframes, args.seed))

    totals = dict(decompressor=args.decompressor_steps, stepper=args.stepper_steps, projector=args.projector_steps)
    losses = dict(decompressor=tr.decompressor_loss, stepper=tr.stepper_loss, projector=tr.projector_loss)
    stopped, taken = False, 0

    def must_stop():
        return (deadline and time.time() > deadline) or (args.stop_after and taken >= args.stop_after)

    while tr.stage < len(STAGES) and not stopped:
        name = STAGES[tr.stage]
        if name != "decompressor" and tr.Z is None:
            tr.Z = tr.compress_all()
            tr.step_norms, tr.proj_norms = tr.stepper_norms(), tr.projector_norms()
        bar, window, t0 = Progress(name, totals[name], tr.step), [], time.time()
        while tr.step < totals[name]:
            loss = losses[name]()
            tr.optims[name].zero_grad()
            loss.backward()
            tr.optims[name].step()
            tr.scheds[name].step()
            tr.step += 1
            taken += 1
            window.append(float(loss))
            if not math.isfinite(window[-1]):
                say("%s: the loss is %s at step %d; lower --lr" % (name, window[-1], tr.step))
                return 1
            if tr.step % args.log_every == 0 or tr.step == totals[name]:
                tr.history[name].append((tr.step, sum(window) / len(window)))
                extra = ""
                if name == "decompressor" and (tr.step % args.eval_every == 0 or tr.step == totals[name]):
                    cm = tr.mean_joint_error_cm()
                    tr.history["mjpe_cm"].append((tr.step, cm))
                    extra = "  joint error %.2f cm" % cm
                bar.show(tr.step, tr.history[name][-1][1], extra)
                window = []
            if args.minutes and tr.seconds[name] + time.time() - t0 > 60.0 * args.minutes[tr.stage]:
                say("%s: its %g minutes are up at step %d" % (name, args.minutes[tr.stage], tr.step))
                tr.history["%s_steps" % name] = tr.step
                if name == "decompressor" and not (tr.history["mjpe_cm"] and tr.history["mjpe_cm"][-1][0] == tr.step):
                    # The curve ends where the decompressor did, not at the last --eval-every.
                    tr.history["mjpe_cm"].append((tr.step, tr.mean_joint_error_cm()))
                break
            if tr.step % args.checkpoint_every == 0 or must_stop():
                tr.seconds[name] += time.time() - t0
                t0 = time.time()
                if must_stop():
                    stopped = True
                    break
                checkpoint()
        bar.end()
        tr.seconds[name] += time.time() - t0
        if not stopped:
            tr.stage, tr.step = tr.stage + 1, 0
        checkpoint()
    if tr.Z is None:
        tr.Z = tr.compress_all()
        tr.step_norms, tr.proj_norms = tr.stepper_norms(), tr.projector_norms()
    tr.write_networks(args.out)
    cm = tr.mean_joint_error_cm()
    done = tr.history.get("decompressor_steps", totals["decompressor"]) if tr.stage > 0 else tr.step
    if done and not any(step == done for step, _ in tr.history["mjpe_cm"]):
        # Runs checkpointed before the error was measured where the
        # decompressor ended: the final figure goes on the curve too.
        tr.history["mjpe_cm"].append((done, cm))
        checkpoint()
    summary = dict(database=db.name, version=db.version, frames=db.nframes, bones=db.nbones,
                   contacts=len(db.contact_bones), features=db.nfeatures, hidden=args.hidden,
                   compressor_hidden=args.compressor_hidden, latent=args.latent, database_bytes=db.memory_bytes,
                   seed=args.seed, steps=totals,
                   steps_done={s: tr.history.get(s + "_steps", totals[s] if tr.stage > STAGES.index(s) else tr.step * (tr.stage == STAGES.index(s))) for s in STAGES}, finished=tr.stage >= len(STAGES), seconds=tr.seconds,
                   mean_joint_error_cm=cm, final_loss={s: (tr.history[s][-1][1] if tr.history[s] else None) for s in STAGES},
                   network_bytes={f: os.path.getsize(os.path.join(args.out, f + ".bin")) for f in STAGES})
    summary["network_fraction"] = sum(summary["network_bytes"].values()) / float(db.memory_bytes)
    with open(os.path.join(args.out, "train.json"), "w") as f:
        json.dump(summary, f, indent=1)
    say("%s: decompressor mean joint position error %.2f cm on the %d training frames; networks in %s%s"
        % (db.name, cm, db.nframes, args.out, "" if summary["finished"] else " (stopped early: run again to resume)"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
