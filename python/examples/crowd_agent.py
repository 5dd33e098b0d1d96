#!/usr/bin/env python3
"""An agent steering 100 characters toward goals and logging their foot contacts.

Each character walks to a random goal in a square; on arrival it gets a new
one. Every streamed frame's contact bits are compared with the previous
frame's: a foot that becomes planted is a touchdown, logged as a CSV line
(tick, character, foot, x, z of the root). At the end: goals reached,
touchdowns per foot, the cadence (steps per second per character).

    python3 python/examples/crowd_agent.py --port 7878 --seconds 20 --log contacts.csv
"""
import argparse
import csv
import os
import sys
from typing import Optional

import numpy as np
import numpy.typing as npt

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import animserver  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=7878)
    parser.add_argument("--auth-token", default=os.environ.get("ANIM_AUTH_TOKEN"))
    parser.add_argument("--database", default="default")
    parser.add_argument("--characters", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--area", type=float, default=20.0, help="goals in [-area/2, area/2]^2 (m)")
    parser.add_argument("--speed", type=float, default=1.4, help="walking speed to goals (m/s)")
    parser.add_argument("--log", default="contacts.csv", help="CSV of touchdowns")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)

    with animserver.Client(args.host, args.port, auth_token=args.auth_token, client_name="crowd-agent") as client:
        feet = list(client.describe_database(args.database).contact_bones)
        n = args.characters
        side = int(np.ceil(np.sqrt(n)))
        placements = [{"x": (i % side - side / 2) * 1.5, "z": (i // side - side / 2) * 1.5,
                       "facing": float(rng.uniform(-np.pi, np.pi))} for i in range(n)]
        ids = np.array(client.create_characters(args.database, placements).characters, dtype=np.uint64)
        goals = rng.uniform(-args.area / 2, args.area / 2, size=(n, 2))
        client.set_inputs([animserver.goal(int(c), x, z, args.speed) for c, (x, z) in zip(ids, goals)])

        stream = client.subscribe(ids.tolist(), encoding="quantized", rotations_only=True)
        ticks = int(args.seconds * stream.tick_rate)
        previous: Optional[npt.NDArray[np.bool_]] = None  # the last frame's planted feet (characters, feet)
        reached = 0
        touchdowns = np.zeros((n, len(feet)), dtype=np.int64)
        with open(args.log, "w", newline="") as out:
            log = csv.writer(out)
            log.writerow(["tick", "character", "foot", "x", "z"])
            for frame in stream.frames(ticks):
                rows = frame.rows(ids)  # the frame's rows in the order of ids (the server orders rows its own way)
                planted = frame.contact_flags(len(feet))[rows]
                root = frame.positions[rows, 0]  # world space
                if previous is not None:
                    down = planted & ~previous
                    for i, f in zip(*np.nonzero(down)):
                        log.writerow([frame.tick, int(ids[i]), feet[f], f"{root[i, 0]:.3f}", f"{root[i, 2]:.3f}"])
                    touchdowns += down
                previous = planted
                # New goals for whoever arrived (one set_inputs for all of them).
                arrived = np.flatnonzero(np.linalg.norm(root[:, [0, 2]] - goals, axis=1) < 0.3)
                if len(arrived):
                    goals[arrived] = rng.uniform(-args.area / 2, args.area / 2, size=(len(arrived), 2))
                    client.set_inputs([animserver.goal(int(ids[i]), goals[i, 0], goals[i, 1], args.speed)
                                       for i in arrived])
                    reached += len(arrived)
        stream.close()
        seconds = ticks / stream.tick_rate
        print(f"{n} characters for {seconds:.1f} s: {reached} goals reached, "
              f"{touchdowns.sum()} touchdowns ({', '.join(f'{f} {touchdowns[:, i].sum()}' for i, f in enumerate(feet))}), "
              f"{touchdowns.sum() / n / seconds:.2f} steps/s per character; log: {args.log}")


if __name__ == "__main__":
    main()
