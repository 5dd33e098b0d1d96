#!/usr/bin/env python3
"""Records a pose stream to a .npz file.

Either creates characters driven by an input (``--create N --input
stick:0,0.8``) or watches existing ones (``--id ID ...``, anyone's). The file
holds, per frame: ``tick`` (F,), ``server_time_us`` (F,), ``characters`` (C,),
``frames`` (F, C) database frames, ``contacts`` (F, C) contact bits,
``positions`` (F, C, n, 3) (bone 0 the root in world space, the others local),
``rotations`` (F, C, n, 4) w, x, y, z, ``global_positions`` (F, C, n, 3) with
``--global``; and the skeleton: ``bone_names``, ``parents``, ``contact_bones``.

    python3 python/examples/record_stream.py --create 4 --input stick:0,0.8 --seconds 5 -o walk.npz
    python3 -c "import numpy; d = numpy.load('walk.npz'); print(d['positions'].shape)"
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import animserver  # noqa: E402


def parse_input(spec: str, character: int) -> "animserver.pb.CharacterInput":
    kind, _, values = spec.partition(":")
    numbers = [float(v) for v in values.split(",")] if values else []
    if len(numbers) < 2:
        raise SystemExit(f"--input {spec}: two numbers at least")
    x, z = numbers[:2]
    if kind == "stick":
        return animserver.stick(character, x, z)
    if kind == "velocity":
        return animserver.velocity(character, x, z, float(np.arctan2(x, z)))
    if kind == "goal":
        return animserver.goal(character, x, z, *numbers[2:3])
    raise SystemExit(f"--input {spec}: stick:X,Z | velocity:VX,VZ | goal:X,Z[,SPEED]")


def database_of(client: "animserver.Client", character: int) -> str:
    """The name of the database a character runs on (its state says)."""
    return client.character_state(character).database


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=7878)
    parser.add_argument("--auth-token", default=os.environ.get("ANIM_AUTH_TOKEN"))
    parser.add_argument("--database", help="for --create (default: default); with --id alone, the first "
                        "watched character's own database")
    parser.add_argument("--create", type=int, default=0, help="create N characters")
    parser.add_argument("--input", default="stick:0,0.8", help="their input (stick:X,Z velocity:VX,VZ goal:X,Z[,S])")
    parser.add_argument("--id", type=int, action="append", default=[], help="watch this character (repeatable)")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--encoding", choices=("float", "quantized"), default="quantized")
    parser.add_argument("--global", dest="global_positions", action="store_true", help="world positions of all bones")
    parser.add_argument("-o", "--output", default="stream.npz")
    args = parser.parse_args()
    if not args.create and not args.id:
        raise SystemExit("record_stream: --create N or --id ID")

    with animserver.Client(args.host, args.port, auth_token=args.auth_token, client_name="record-stream") as client:
        ids = list(args.id)
        database = args.database or ("default" if args.create else database_of(client, ids[0]))
        if args.create:
            created = client.create_characters(database, [{"x": 2.0 * i, "z": 0.0} for i in range(args.create)])
            ids += created.characters
            client.set_inputs([parse_input(args.input, c) for c in created.characters])
        db = client.describe_database(database)
        stream = client.subscribe(ids, encoding=args.encoding, global_positions=args.global_positions)
        frames = list(stream.frames(int(round(args.seconds * stream.tick_rate))))
        stream.close()

    characters = np.sort(frames[0].characters)
    order = [f.rows(characters) for f in frames]  # one character order for the whole file
    arrays = {
        "tick": np.array([f.tick for f in frames], dtype=np.uint64),
        "server_time_us": np.array([f.server_time_us for f in frames], dtype=np.uint64),
        "characters": characters,
        "frames": np.stack([f.frames[o] for f, o in zip(frames, order)]),
        "contacts": np.stack([f.contacts[o] for f, o in zip(frames, order)]),
        "positions": np.stack([f.positions[o] for f, o in zip(frames, order)]),
        "rotations": np.stack([f.rotations[o] for f, o in zip(frames, order)]),
        "bone_names": np.array([b.name for b in db.bones]),
        "parents": np.array([b.parent for b in db.bones], dtype=np.int32),
        "contact_bones": np.array(list(db.contact_bones)),
    }
    if args.global_positions:
        arrays["global_positions"] = np.stack([f.global_positions[o] for f, o in zip(frames, order)
                                               if f.global_positions is not None])
    np.savez_compressed(args.output, **arrays)
    dropped = frames[-1].dropped_frames + stream.client_dropped
    print(f"{args.output}: {len(frames)} frames of {len(ids)} characters, {len(db.bones)} bones "
          f"({args.encoding}), {dropped} dropped")


if __name__ == "__main__":
    main()
