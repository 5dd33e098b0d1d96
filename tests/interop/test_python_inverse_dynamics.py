"""The Python client's inverse_dynamics against the real server, on the
default (procedural) database's walk: numpy arrays of the documented shapes
and types, the ground carrying the body's weight on average and only
pushing, the over-limit flags counted, and bad input answered with the server's error naming the field
(the connection carrying on); then a walking character's last seconds from its history: the same arrays,
frame i its tick first_tick + i, its weight carried, and bad spans (reversed, not yet shown, another
connection's character) refused naming the field. Run by tests/run.sh with ANIM_BUILD_DIR set."""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from animtest import Server, animserver, check  # noqa: E402

errors = animserver.errors
WEIGHT_SHARE = 0.05  # |mean vertical ground force / body weight - 1| over the walk (docs/physics.md)


def main():
    with Server() as server:
        with animserver.Client(server.host, server.port) as client:
            desc = client.describe_database("default")
            walk = next(r for r in desc.ranges if r.name == "walk")
            r = client.inverse_dynamics("default", walk.start, walk.stop, max_root_torque=40.0)
            n, nb = walk.stop - walk.start, len(r.bones)
            check(isinstance(r, animserver.InverseDynamics), "inverse_dynamics answers an InverseDynamics")
            check(r.torques.shape == (n, nb, 3) and r.torques.dtype == np.float32, f"torques {r.torques.shape} float32")
            check(r.foot_forces.shape == (n, 2, 3) and r.foot_cops.shape == (n, 2, 3), "foot forces and cops (n, 2, 3)")
            check(r.residual_forces.shape == (n, 3) and r.power.shape == (n,) and r.over_limit.dtype == bool,
                  "residuals (n, 3), power (n,), over_limit bool")
            share = r.foot_forces[:, :, 1].sum(axis=1).mean() / (9.81 * r.total_mass)
            check(abs(share - 1) < WEIGHT_SHARE, f"mean vertical ground force {share:.3f} of body weight")
            check(int(r.over_limit.sum()) == r.frames_over_limit, f"{r.frames_over_limit} frames over the limits, "
                  "as flagged")
            check(np.all(r.foot_forces[:, :, 1] >= 0), "the ground only pushes")
            for fields, name in (({"start": walk.stop - 5, "stop": walk.stop + 5}, "stop"),
                                 ({"start": walk.start, "stop": walk.stop, "contact_speed": -1.0}, "contact_speed")):
                try:
                    client.inverse_dynamics("default", **fields)
                    raise AssertionError(f"{fields} was accepted")
                except errors.AnimError as e:
                    check(name in str(e), f"refused naming {name}: {e}")
            check(client.ping() is not None, "the connection carries on")
            character(server, client)


def character(server, client):
    me = client.create_characters("default").characters[0]
    client.set_history(me, 4.0)
    client.set_inputs([animserver.stick(me, 0.0, 0.8)])
    time.sleep(3.5)
    r = client.character_inverse_dynamics(me, seconds=3.0)
    n, nb = len(r.power), len(r.bones)
    check(r.character == me and n == 180 and r.frame_rate == 60.0, f"{n} ticks of character {r.character} at "
          f"{r.frame_rate} Hz")
    check(r.torques.shape == (n, nb, 3) and r.foot_forces.shape == (n, 2, 3), "the same arrays as a range's")
    h = client.character_history(me, from_tick=r.first_tick, to_tick=r.first_tick + n - 1)
    check(len(h.ticks) + r.ticks_filled == n and all(r.first_tick <= t.tick < r.first_tick + n for t in h.ticks),
          f"ticks {r.first_tick}..{r.first_tick + n - 1}: {len(h.ticks)} in the history, {r.ticks_filled} filled")
    share = r.foot_forces[:, :, 1].sum(axis=1).mean() / (9.81 * r.total_mass)
    check(abs(share - 1) < WEIGHT_SHARE, f"walking character: mean vertical ground force {share:.3f} of body weight")
    last = r.first_tick + n - 1
    for fields, name in (({"from_tick": last, "to_tick": last - 10}, "from_tick"),
                         ({"from_tick": last, "to_tick": last + 100}, "to_tick")):
        try:
            client.character_inverse_dynamics(me, **fields)
            raise AssertionError(f"{fields} was accepted")
        except errors.AnimError as e:
            check(name in str(e), f"refused naming {name}: {e}")
    with animserver.Client(server.host, server.port) as other:
        try:
            other.character_inverse_dynamics(me, seconds=1.0)
            raise AssertionError("another connection's character was accepted")
        except errors.AnimError as e:
            check("character" in str(e) and "another connection" in str(e), f"refused: {e}")
    client.destroy_characters([me])


if __name__ == "__main__":
    main()
