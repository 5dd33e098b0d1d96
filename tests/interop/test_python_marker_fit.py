"""The Python client's marker_fit against the real server, on the default
(procedural) database's walk: markers made from the walk's joints (one with
its offset left to be found), numpy arrays of the documented shapes and
types back, the markers followed within 2 cm on average, a missing marker's
residual NaN, and bad input answered with the server's error naming the
field (the connection carrying on). Run by tests/run.sh with ANIM_BUILD_DIR
set."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from animtest import Server, animserver, check  # noqa: E402

errors = animserver.errors
MAX_MEAN_RESIDUAL = 0.02  # m
BONES = ["Hips", "Head", "LeftHand", "RightHand", "LeftFoot", "RightFoot", "LeftLeg", "RightLeg"]


def main():
    with Server() as server:
        with animserver.Client(server.host, server.port) as client:
            desc = client.describe_database("default")
            walk = next(r for r in desc.ranges if r.name == "walk")
            n = min(walk.stop - walk.start, 120)
            frames = client.pose("default", walk.start, n, global_=True)
            names = list(client.skeleton("default").names)
            idx = [names.index(b) for b in BONES]
            positions = np.asarray(frames.global_positions, dtype=np.float32)[:, idx, :]
            markers = [(b, (0.0, 0.0, 0.0)) for b in BONES[:-1]] + [BONES[-1]]
            missing = np.zeros((n, len(BONES)), dtype=bool)
            missing[n // 2, 2] = True
            r = client.marker_fit("default", markers, positions, missing=missing)
            nb = len(r.bones)
            check(isinstance(r, animserver.MarkerFit), "marker_fit answers a MarkerFit")
            check(r.positions.shape == (n, nb, 3) and r.positions.dtype == np.float32, f"positions {r.positions.shape}")
            check(r.rotations.shape == (n, nb, 4), f"rotations {r.rotations.shape}")
            check(r.residuals.shape == (n, len(BONES)) and r.offsets.shape == (len(BONES), 3), "residuals, offsets")
            check(np.isnan(r.residuals[n // 2, 2]) and np.isfinite(np.delete(r.residuals.reshape(-1), (n // 2) * len(BONES) + 2)).all(),
                  "a missing marker's residual is NaN, the others finite")
            check(r.mean_residual < MAX_MEAN_RESIDUAL, f"mean residual {100 * r.mean_residual:.2f} cm")
            check(np.linalg.norm(r.offsets[-1]) < 0.1, f"found offset {r.offsets[-1]}")
            bad = positions.copy()
            bad[3, 1, 0] = np.nan
            for call, name in ((lambda: client.marker_fit("default", markers, bad), "positions[3][1]"),
                               (lambda: client.marker_fit("default", ["Tail"] + markers[1:], positions), "markers[0].bone"),
                               (lambda: client.marker_fit("default", markers, positions, marker_halflife=-1.0),
                                "marker_halflife")):
                try:
                    call()
                    raise AssertionError(f"{name}: accepted")
                except errors.AnimError as e:
                    check(name in str(e), f"refused naming {name}: {e}")
            check(client.ping() is not None, "the connection carries on")


if __name__ == "__main__":
    main()
