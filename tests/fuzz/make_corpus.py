#!/usr/bin/python3
"""Writes the fuzzers' seed corpora into tests/fuzz/corpus/<target>/.

Run from the repository root after `make` (it uses build/animdb and protoc):
    /usr/bin/python3 tests/fuzz/make_corpus.py
Every seed is small (well under 64 KiB) and made here: hand-written BVH
text, requests built with python3-protobuf from proto/animserver.proto,
delimited streams of those requests, and a database file that build/animdb
makes from the small biped BVH below. Deterministic: the same files each run.
"""
import math
import os
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus")


def write(target, name, data):
    folder = os.path.join(CORPUS, target)
    os.makedirs(folder, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    assert len(data) < 64 * 1024, (target, name, len(data))
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


# ---- BVH ----------------------------------------------------------------------

MINIMAL_BVH = """HIERARCHY
ROOT Hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
}
MOTION
Frames: 2
Frame Time: 0.5
0 90 0 0 0 0
1 90 2 10 20 30
"""

# CRLF, tabs, "Frame Time: .0333" without a leading zero, YXZ order, a
# position channel on a non-root joint, end sites.
ODD_BVH = ("HIERARCHY\r\nROOT\tpelvis\r\n{\r\n\tOFFSET 0.0 0.0 0.0\r\n"
           "\tCHANNELS 6 Xposition Yposition Zposition Yrotation Xrotation Zrotation\r\n"
           "\tJOINT spine\r\n\t{\r\n\t\tOFFSET 0 10 0\r\n\t\tCHANNELS 4 Yposition Zrotation Yrotation Xrotation\r\n"
           "\t\tEnd Site\r\n\t\t{\r\n\t\t\tOFFSET 0 5 0\r\n\t\t}\r\n\t}\r\n"
           "\tJOINT lHip\r\n\t{\r\n\t\tOFFSET 5 -3 0\r\n\t\tCHANNELS 3 Zrotation Xrotation Yrotation\r\n"
           "\t\tEnd Site\r\n\t\t{\r\n\t\t\tOFFSET 0 -40 0\r\n\t\t}\r\n\t}\r\n}\r\n"
           "MOTION\r\nFrames: 3\r\nFrame Time: .0333\r\n"
           "0 95 0 0 0 0 10 0 0 0 0 0 0\r\n"
           "1 95.5 1 5 -2 1 10.5 3 1 -1 10 0 0\r\n"
           "2 96 2 10 -4 2 11 6 2 -2 20 0 -5\r\n")


def biped_bvh(frames=24, frame_time=1.0 / 12.0):
    """A small walking biped with the bone names the default feature schema
    looks for (Hips, Left/RightUpLeg, Leg, Foot, Toe): every feature group varies."""
    legs = ""
    for side, x in (("Left", 9), ("Right", -9)):
        legs += (f"  JOINT {side}UpLeg\n  {{\n    OFFSET {x} -5 0\n    CHANNELS 3 Zrotation Xrotation Yrotation\n"
                 f"    JOINT {side}Leg\n    {{\n      OFFSET 0 -42 0\n      CHANNELS 3 Zrotation Xrotation Yrotation\n"
                 f"      JOINT {side}Foot\n      {{\n        OFFSET 0 -40 0\n"
                 f"        CHANNELS 3 Zrotation Xrotation Yrotation\n"
                 f"        JOINT {side}Toe\n        {{\n          OFFSET 0 -6 12\n"
                 f"          CHANNELS 3 Zrotation Xrotation Yrotation\n"
                 f"          End Site\n          {{\n            OFFSET 0 0 5\n          }}\n"
                 f"        }}\n      }}\n    }}\n  }}\n")
    text = ("HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 0\n"
            "  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"
            + legs + "}\n" + f"MOTION\nFrames: {frames}\nFrame Time: {frame_time:.6f}\n")
    z = 0.0
    for f in range(frames):
        t = f * frame_time
        speed = 80.0 + 60.0 * t            # cm/s, accelerating
        z += speed * frame_time
        phase = 2.0 * math.pi * 1.6 * t
        yaw = 25.0 * t                     # degrees, turning left
        row = [4.0 * math.sin(phase / 2), 92.0 + 2.0 * math.cos(2 * phase), z, 0.0, 0.0, yaw]
        for sign in (1.0, -1.0):
            swing = 28.0 * math.sin(phase) * sign
            knee = 30.0 + 25.0 * math.sin(phase + 1.0 * sign)
            row += [0.0, swing, 0.0, 0.0, knee, 0.0, 0.0, -swing / 2, 0.0, 0.0, 10.0 * sign, 0.0]
        text += " ".join(f"{v:.3f}" for v in row) + "\n"
    return text


# ---- learned-motion-matching network files (nnet.h) ---------------------------------

def nnet_file(widths, seed):
    """A network widths[0] -> ... -> widths[-1] in the format of ../shared/README.md."""
    state = [seed]

    def value():  # deterministic, in (-1, 1)
        state[0] = (state[0] * 1103515245 + 12345) % (1 << 31)
        return state[0] / float(1 << 30) - 1.0

    def array(values):
        return struct.pack("<i", len(values)) + struct.pack("<%df" % len(values), *values)

    nin, nout = widths[0], widths[-1]
    out = array([0.1 * value() for _ in range(nin)]) + array([1.0 + 0.5 * abs(value()) for _ in range(nin)])
    out += array([0.1 * value() for _ in range(nout)]) + array([abs(value()) for _ in range(nout)])
    out += struct.pack("<i", len(widths) - 1)
    for rows, cols in zip(widths, widths[1:]):
        out += (struct.pack("<ii", rows, cols)
                + struct.pack("<%df" % (rows * cols), *[value() for _ in range(rows * cols)]))
        out += array([0.1 * value() for _ in range(cols)])
    return out


# ---- protobuf requests ------------------------------------------------------------


def load_pb():
    # The Python client's generated module (from proto/, generated on import).
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from animserver._proto import pb  # noqa: E402
    return pb


def requests(pb):
    """(name, Request) seeds covering every request type, valid and not."""
    seeds = []
    add = lambda name, **kw: seeds.append((name, pb.Request(**kw)))
    add("hello", id=1, hello=pb.HelloRequest(protocol_version=1, client_name="fuzz"))
    add("ping", id=2, ping=pb.PingRequest(payload=b"hi"))
    add("list", id=3, list_databases=pb.ListDatabasesRequest())
    add("describe", id=4, describe_database=pb.DescribeDatabaseRequest(name="default"))
    add("describe_tiny", id=4, describe_database=pb.DescribeDatabaseRequest(name="tiny"))
    add("load_spare", id=5, load_database=pb.LoadDatabaseRequest(name="spare"))
    add("load_tiny", id=5, load_database=pb.LoadDatabaseRequest(name="tiny"))
    add("reload_tiny", id=6, reload_database=pb.ReloadDatabaseRequest(name="tiny"))
    add("unload_tiny", id=7, unload_database=pb.UnloadDatabaseRequest(name="tiny"))
    add("unload_default", id=7, unload_database=pb.UnloadDatabaseRequest(name="default"))
    add("search_frame", id=8, search=pb.SearchRequest(database="default", query=pb.SearchQuery(
        from_frame=pb.FrameIndex(frame=100), k=5, current_frame=pb.FrameIndex(frame=100), transition_cost=0.1,
        ignore_range_end=20, ignore_surrounding=10, tags=["walk"], include_pose=True, explain=True,
        method=pb.SEARCH_BOXES)))
    add("search_trajectory", id=8, search=pb.SearchRequest(database="tiny", query=pb.SearchQuery(
        from_frame=pb.FrameIndex(frame=3),
        trajectory_positions=[pb.Vec2(x=0, z=1), pb.Vec2(x=0, z=2), pb.Vec2(x=0.5, z=3)],
        trajectory_directions=[pb.Vec2(x=0, z=1)] * 3, k=2, method=pb.SEARCH_BRUTE)))
    add("search_features", id=8, search=pb.SearchRequest(database="default", query=pb.SearchQuery(
        features=[0.1 * i for i in range(27)], raw_features=True, k=3, method=pb.SEARCH_FAST)))
    bones = ["LeftFoot", "RightFoot"]
    add("search_bones", id=8, search=pb.SearchRequest(database="default", query=pb.SearchQuery(
        bone_positions=[pb.BoneVector(bone=b, x=0.1, y=0.05, z=0.2) for b in bones],
        bone_velocities=[pb.BoneVector(bone=b, x=0, y=0, z=1.2) for b in bones + ["Hips"]],
        trajectory_positions=[pb.Vec2(x=0, z=0.5 * i) for i in (1, 2, 3)],
        trajectory_directions=[pb.Vec2(x=0, z=1)] * 3, k=1, explain=True)))
    add("batch", id=9, batch_search=pb.BatchSearchRequest(database="default", queries=[
        pb.SearchQuery(from_frame=pb.FrameIndex(frame=i * 200), k=2) for i in range(20)]))
    # "global" is a Python keyword: the field is passed by name.
    add("pose", id=10, pose=pb.PoseRequest(database="default", frame=10, count=3,
                                           options=pb.PoseOptions(local=True, velocities=True, **{"global": True})))
    add("pose_span", id=10, pose=pb.PoseRequest(database="tiny", frame=0, count=70))

    def pose_state(n, shift=0.0):
        return pb.PoseState(positions=[0.1 * i + shift for i in range(3 * n)], velocities=[0.0] * (3 * n),
                            rotations=[1.0, 0.0, 0.0, 0.0] * n, angular_velocities=[0.1] * (3 * n))

    state = pb.InertializerState(offset_positions=[0.0] * 6, offset_velocities=[0.0] * 6,
                                 offset_rotations=[1.0, 0.0, 0.0, 0.0] * 2, offset_angular_velocities=[0.0] * 6,
                                 anchor=[0, 0, 0, 1, 0, 0, 0, 1, 0, 2, 1, 0, 0, 0])
    add("transition_poses", id=11, inertialize_transition=pb.InertializeTransitionRequest(
        source=pb.PoseRef(pose=pose_state(2)), destination=pb.PoseRef(pose=pose_state(2, 0.5)), state=state))
    add("transition_frames", id=11, inertialize_transition=pb.InertializeTransitionRequest(
        database="default", source=pb.PoseRef(frame=5), destination=pb.PoseRef(frame=400)))
    add("evaluate", id=12, inertialize_evaluate=pb.InertializeEvaluateRequest(
        state=state, input=pb.PoseRef(pose=pose_state(2)), halflife=0.1, t=0.05))
    add("evaluate_frame", id=12, inertialize_evaluate=pb.InertializeEvaluateRequest(
        database="tiny", state=pb.InertializerState(offset_positions=[0.0] * 66, offset_velocities=[0.0] * 66,
                                                    offset_rotations=[1.0, 0, 0, 0] * 22,
                                                    offset_angular_velocities=[0.0] * 66),
        input=pb.PoseRef(frame=2), halflife=0.2, t=0.0))
    add("cost_frames", id=13, transition_cost=pb.TransitionCostRequest(
        database="default", source=pb.PoseRef(frame=1), destination=pb.PoseRef(frame=300), halflife=0.1,
        bones=["LeftFoot", "Hips"]))
    add("cost_poses", id=13, transition_cost=pb.TransitionCostRequest(
        source=pb.PoseRef(pose=pose_state(3)), destination=pb.PoseRef(pose=pose_state(3, 1.0)), halflife=0.3))
    add("tune_fraction", id=14, spring_tune=pb.SpringTuneRequest(
        fraction=pb.SpringFraction(alpha=0.1, t=0.5, x0=1.0, v0=-2.0, mass=2.0)))
    add("tune_to", id=14, spring_tune=pb.SpringTuneRequest(
        to_constraint=pb.SpringGains(stiffness=100, damping=10, dt=1 / 60)))
    add("tune_from", id=14, spring_tune=pb.SpringTuneRequest(
        from_constraint=pb.SpringConstraint(erp=0.2, cfm=0.01, dt=1 / 60)))
    add("empty", id=15)
    # The harness's own character: slot 0, generation 1 (fuzz_request.c sets the crowd's first generation;
    # a real run draws it at random).
    ch = 4294967297
    add("create", id=16, create_characters=pb.CreateCharactersRequest(
        database="default", params=pb.ControllerParams(search_interval=6, inertialize_halflife=0.15),
        placements=[pb.Placement(x=1.0, z=2.0, facing=0.5, start_frame=pb.FrameIndex(frame=100)), pb.Placement()]))
    add("create_tiny", id=16, create_characters=pb.CreateCharactersRequest(database="tiny"))
    add("destroy", id=17, destroy_characters=pb.DestroyCharactersRequest(characters=[ch, ch, 99]))
    add("inputs", id=18, set_inputs=pb.SetInputsRequest(inputs=[
        pb.CharacterInput(character=ch, stick=pb.StickInput(x=0.3, z=0.8, camera_azimuth=1.0, strafe=True)),
        pb.CharacterInput(character=ch, velocity=pb.VelocityInput(x=1.0, z=-2.0, facing=3.0)),
        pb.CharacterInput(character=ch, goal=pb.GoalInput(x=5.0, z=5.0, speed=1.4))]))
    add("state", id=19, character_state=pb.CharacterStateRequest(character=ch, offsets=True))
    add("subscribe", id=20, subscribe=pb.SubscribeRequest(characters=[ch], owned=True, rate_divisor=2,
                                                          encoding=pb.ENCODING_QUANTIZED, global_positions=True))
    # Region subscriptions (decode_region, server/codec_character.c): a circle with bands and a cap, a box
    # following the harness's character, and one refused (bands not in order of radius).
    add("subscribe_region_circle", id=20, subscribe=pb.SubscribeRequest(
        encoding=pb.ENCODING_QUANTIZED, region=pb.AoiRegion(
            centre=pb.Vec3(x=1.0, y=0.0, z=2.0), radius=12.0, max_characters=4,
            bands=[pb.AoiBand(radius=3.0, rate_divisor=1), pb.AoiBand(radius=8.0, rate_divisor=4),
                   pb.AoiBand(radius=30.0, rate_divisor=30)])))
    add("subscribe_region_follow", id=20, subscribe=pb.SubscribeRequest(
        rate_divisor=2, rotations_only=True, region=pb.AoiRegion(half_x=5.0, half_z=2.5, follow=ch)))
    add("subscribe_region_bad", id=20, subscribe=pb.SubscribeRequest(
        region=pb.AoiRegion(radius=5.0, bands=[pb.AoiBand(radius=4.0), pb.AoiBand(radius=2.0)])))
    add("update_subscription", id=21, update_subscription=pb.UpdateSubscriptionRequest(
        subscription=1, rate_divisor=3, encoding=pb.ENCODING_FLOAT, paused=True))
    add("unsubscribe", id=22, unsubscribe=pb.UnsubscribeRequest(subscription=1))
    add("stats", id=23, server_stats=pb.ServerStatsRequest())
    # State machines ("walker" is loaded, on tiny's ranges) and motion graphs (tiny has one).
    walker = (b"turning { clip walk_turn_left loop  STOP stopping }\n"
              b"stopping { clip walk_stop  END turning  GO turning }\n")
    add("load_machine", id=24, load_machine=pb.LoadMachineRequest(name="walker2", text=walker))
    add("load_machine_replace", id=24, load_machine=pb.LoadMachineRequest(name="walker", text=walker + b"# again\n",
                                                                          replace=True))
    add("load_machine_file", id=24, load_machine=pb.LoadMachineRequest(name="missing"))
    add("check_machine", id=25, check_machine=pb.CheckMachineRequest(text=walker, database="tiny"))
    add("check_machine_errors", id=25, check_machine=pb.CheckMachineRequest(
        name="bad", text=b"a { clip walk GO x }\nb { clip run }\nmachine m { d { machine m } }\n", database="default"))
    add("list_machines", id=26, list_machines=pb.ListMachinesRequest())
    add("unload_machine", id=27, unload_machine=pb.UnloadMachineRequest(name="walker"))
    add("create_machine", id=28, create_characters=pb.CreateCharactersRequest(
        database="tiny", mode=pb.MODE_MACHINE, machine="walker", placements=[pb.Placement(x=1.0), pb.Placement(z=1.0)]))
    add("events", id=29, send_events=pb.SendEventsRequest(events=[pb.CharacterEvent(character=ch, event="STOP"),
                                                                 pb.CharacterEvent(character=ch, event="GO")]))
    add("params", id=30, set_params=pb.SetParamsRequest(
        params=[pb.CharacterParam(character=ch, name="speed", value=0.5)]))
    add("build_graph", id=31, build_graph=pb.BuildGraphRequest(database="tiny", options=pb.GraphOptions(
        window=0.4, threshold=0.08, tags=["turn"], keep_all=True, matrix_size=16)))
    add("describe_graph", id=32, describe_graph=pb.DescribeGraphRequest(database="tiny", transitions=True, matrix=True))
    add("query_graph", id=33, query_graph=pb.QueryGraphRequest(
        database="tiny", points=[pb.Vec2(x=0, z=0), pb.Vec2(x=0, z=3), pb.Vec2(x=2, z=3)], closed=True,
        start=pb.Placement(facing=0.5, start_frame=pb.FrameIndex(frame=10)),
        options=pb.PathOptions(horizon=1.0, keep=0.3),
        seconds=2.0, settle=0.5, roots=True))
    add("create_graph", id=34, create_characters=pb.CreateCharactersRequest(
        database="tiny", mode=pb.MODE_GRAPH, path=pb.PathOptions(max_expansions=500)))
    add("set_paths", id=35, set_paths=pb.SetPathsRequest(paths=[
        pb.CharacterPath(character=ch, points=[pb.Vec2(x=0, z=0), pb.Vec2(x=1, z=1)]), pb.CharacterPath(character=ch)]))
    add("inverse_dynamics", id=36, inverse_dynamics=pb.InverseDynamicsRequest(
        database="tiny", start=0, stop=20, max_root_torque=30, contact_height=0.06, step=2))
    add("set_history", id=36, set_history=pb.SetHistoryRequest(character=ch, seconds=2.0, candidates=4))
    add("history_last", id=37, character_history=pb.CharacterHistoryRequest(character=ch, last_seconds=0.5,
                                                                              poses=True, queries=True))
    add("history_ticks", id=38, character_history=pb.CharacterHistoryRequest(character=ch, from_tick=1, to_tick=3))
    add("set_character_params", id=39, set_character_params=pb.SetCharacterParamsRequest(
        character=ch, params=pb.ControllerParams(inertialize_halflife=0.2, search_interval=4)))
    add("marker_fit", id=40, marker_fit=pb.MarkerFitRequest(
        database="tiny", markers=[pb.Marker(bone="Hips", offset=[0, 0.05, 0]), pb.Marker(bone="Head"),
                                  pb.Marker(bone="LeftFoot", offset=[0.02, 0, 0.03])],
        frames=2, positions=[0, 0.95, 0, 0, 1.6, 0, 0.1, 0.08, 0, 0, 0.96, 0.01, 0, 1.6, 0.01, 0.1, 0.08, 0.01],
        missing=[False, False, False, False, True, False], marker_halflife=0.01, estimate_scale=True))
    return seeds


# ---- server messages (fuzz_client_convert): one of each answer and stream frame ----


def server_messages(pb):
    """(name, flags byte, ServerMessage) seeds: every answer the client converts, and stream frames."""
    seeds = []
    r = lambda name, flags=0, **kw: seeds.append((name, flags, pb.ServerMessage(response=pb.Response(**kw))))
    r("hello", id=1, hello=pb.HelloResponse(protocol_version=1, server_version="0.1.0", capabilities=["ping", "stream"],
                                            limits=pb.Limits(max_frame_bytes=1 << 20, max_k=64, tick_rate=60),
                                            connection_id=3, admin=True))
    r("error", 5, id=2, error=pb.Error(code=pb.ERROR_NOT_FOUND, message="no database 'x'"))
    summary = pb.DatabaseSummary(name="default", version=7, frames=100, bones=2, frame_rate=60, feature_dims=4,
                                 ranges=1)
    r("list", id=3, list_databases=pb.ListDatabasesResponse(databases=[summary, pb.DatabaseSummary(name="tiny")]))
    r("describe", 9, id=4, describe_database=pb.DescribeDatabaseResponse(
        summary=summary, bones=[pb.Bone(name="Hips", parent=-1), pb.Bone(name="LeftFoot", parent=0)],
        ranges=[pb.Range(name="walk", start=0, stop=100, tags=["walk", "loop"])],
        features=[pb.FeatureGroup(kind=pb.FEATURE_BONE_POSITION, bone="LeftFoot", weight=1, first_column=0, dims=3,
                                  offset=[0.1, 0.2, 0.3], scale=[1, 2, 3]),
                  pb.FeatureGroup(kind=pb.FEATURE_TRAJECTORY_POSITION, frame_offsets=[20, 40], first_column=3, dims=4,
                                  offset=[0] * 4, scale=[1] * 4)],
        contact_bones=["LeftFoot", "Nope"]))
    pose = pb.Pose(frame=5, local_positions=[0.1 * i for i in range(6)], local_rotations=[1, 0, 0, 0] * 2,
                   global_positions=[0.2 * i for i in range(6)], contacts=[True, False])
    result = pb.SearchResult(matches=[pb.Match(frame=5, range=0, range_name="walk", cost=0.5, pose=pose),
                                      pb.Match(frame=9, cost=0.7)],
                             explanation=[pb.GroupCost(name="LeftFoot position", cost=0.2)], margin=0.2)
    r("search", id=5, search=pb.SearchResponse(database_version=7, result=result))
    r("batch", 17, id=6, batch_search=pb.BatchSearchResponse(database_version=7, results=[result, pb.SearchResult()]))
    r("pose", id=7, pose=pb.PoseResponse(database_version=7, poses=[pose, pb.Pose(frame=6)]))
    state = pb.InertializerState(offset_positions=[0.0] * 6, offset_velocities=[0.1] * 6,
                                 offset_rotations=[1.0, 0.0, 0.0, 0.0] * 2, offset_angular_velocities=[0.0] * 6,
                                 anchor=[0, 0, 0, 1, 0, 0, 0, 1, 0, 2, 1, 0, 0, 0])
    r("transition", id=8, inertialize_transition=pb.InertializeTransitionResponse(database_version=7, state=state))
    r("evaluate", id=9, inertialize_evaluate=pb.InertializeEvaluateResponse(
        state=state, output=pb.PoseState(positions=[0.0] * 6, velocities=[0.0] * 6, rotations=[1, 0, 0, 0] * 2,
                                         angular_velocities=[0.0] * 6)))
    r("cost", id=10, transition_cost=pb.TransitionCostResponse(exact=1.5, approximate=1.4, bones=[
        pb.BoneCost(bone="Hips", exact=1.0, approximate=0.9),
        pb.BoneCost(bone="LeftFoot", exact=0.5, approximate=0.5)]))
    r("spring", id=11, spring_tune=pb.SpringTuneResponse(halflife=0.2, stiffness=100, damping=20, erp=0.3, cfm=0.01))
    r("character_state", id=12, character_state=pb.CharacterStateResponse(
        tick=99, position=pb.Vec3(x=1, y=0, z=2), rotation=pb.Quat(w=1),
        trajectory=[pb.Vec3(z=0.5 * i) for i in range(3)],
        frame=5, range_name="walk", inertializer=state))
    r("set_history", id=40, set_history=pb.SetHistoryResponse(capacity=120, bytes=90368, tick=7))
    r("character_history", id=41, character_history=pb.CharacterHistoryResponse(
        first_tick=5, last_tick=9, capacity=120, tick_rate=60, groups=["LeftFoot position", "trajectory position"],
        ticks=[pb.HistoryTick(tick=5, frame=10, chosen=-1),
               pb.HistoryTick(tick=6, frame=11, searched=True, chosen=11, reasons=[pb.SEARCH_PERIODIC],
                              candidates=[pb.HistoryCandidate(frame=11, range_name="walk", cost=0.5,
                                                              group_costs=[0.1, 0.4])],
                              query=[0.5] * 4, root_position=pb.Vec3(x=1), rotations=[1, 0, 0, 0] * 2)]))
    r("set_character_params", id=42, set_character_params=pb.SetCharacterParamsResponse(
        tick=8, params=pb.ControllerParams(search_interval=10, inertialize_halflife=0.1)))
    r("stats", id=13, server_stats=pb.ServerStatsResponse(uptime_us=5, connections=2, ticks=600, tick_rate=60))
    machine = pb.MachineSummary(name="jump", version=9, source="request", text_bytes=120,
                                states=[pb.MachineState(name=n, motion="clip") for n in ("stand", "crouch", "float")],
                                machines=[""], events=["END", "AUTO", "JUMP_PRESS"],
                                params=[pb.MachineParam(name="speed", initial=0.3)], max_transitions=4, depth=1)
    r("load_machine", id=14, load_machine=pb.LoadMachineResponse(machine=machine))
    r("check_machine", id=15, check_machine=pb.CheckMachineResponse(ok=False, total=2, diagnostics=[
        pb.MachineDiagnostic(problem="UNKNOWN_TARGET", line=1, column=9, message="request:1:9: no state 'nowhere'")]))
    r("check_machine_ok", id=15, check_machine=pb.CheckMachineResponse(ok=True, machine=machine))
    r("list_machines", id=16, list_machines=pb.ListMachinesResponse(machines=[machine, pb.MachineSummary(name="x")]))
    graph = pb.GraphDescription(status=pb.GRAPH_READY, ready=True, frames=100, nodes=4, edges=6, transitions=2,
                                transition_list=[pb.GraphTransition(from_frame=10, to_frame=50, distance=0.02)],
                                matrix_size=2, matrix=[0.0, 0.1, 0.1, float("inf")])
    r("describe_graph", id=17, describe_graph=pb.DescribeGraphResponse(graph=graph))
    r("build_graph", 3, id=18, build_graph=pb.BuildGraphResponse(graph=pb.GraphDescription(status=pb.GRAPH_BUILDING,
                                                                                         progress=0.5)))
    r("query_graph", id=19, query_graph=pb.QueryGraphResponse(
        steps=[pb.GraphStep(edge=1, first_frame=0, last_frame=30, time=0.0),
               pb.GraphStep(edge=2, first_frame=50, last_frame=80, jump=True, time=0.5)],
        error_mean=0.02, seconds=1.0, plans=2, roots=[pb.Vec2(x=0, z=0.1 * i) for i in range(4)]))
    r("align", id=20, align=pb.AlignResponse(rotation=pb.Quat(w=1), matrix=[1, 0, 0, 0, 1, 0, 0, 0, 1],
                                            translation=pb.Vec3(x=1), scale=1, cost=0.0, rms=0.0))
    r("fit_pose", id=21, fit_pose=pb.FitPoseResponse(pose=pb.Pose(
        frame=3, local_positions=[0.0] * 6, local_rotations=[1, 0, 0, 0] * 2, global_positions=[0.0] * 6,
        global_rotations=[1, 0, 0, 0] * 2), residuals=[0.01, 0.02], scale=1.02))
    floats = pb.CharacterPose(character=4294967297, frame=3, positions=[0.1 * i for i in range(6)],
                              rotations=[1, 0, 0, 0] * 2, global_positions=[0.0] * 6, contacts=1, transition=True)
    machine_pose = pb.CharacterPose(character=3, positions=[0.0] * 3, rotations=[1, 0, 0, 0],
                                    state_path=[0, 2], state_times=[1.5, 0.25], state_changed=True)
    seeds.append(("stream_machine", 0, pb.ServerMessage(stream=pb.StreamMessage(
        subscription_id=4, tick=14, poses=[machine_pose]))))
    seeds.append(("stream_float", 0, pb.ServerMessage(stream=pb.StreamMessage(
        subscription_id=1, tick=10, poses=[floats], gone=[5], dt=1 / 60))))
    root_only = pb.CharacterPose(character=2, positions=[1, 2, 3], rotations=[1, 0, 0, 0] * 3)
    seeds.append(("stream_rotations_only", 1, pb.ServerMessage(stream=pb.StreamMessage(
        subscription_id=2, tick=11, poses=[root_only]))))
    # Quantized: 12 bytes of root, then 7 per bone (rotations only) or 13 per bone less 6 (quantize.h).
    seeds.append(("stream_quantized", 1, pb.ServerMessage(stream=pb.StreamMessage(
        subscription_id=3, tick=12, encoding=pb.ENCODING_QUANTIZED,
        poses=[pb.CharacterPose(character=2, quantized=bytes(range(12 + 7 * 2)))]))))
    seeds.append(("stream_quantized_full", 0, pb.ServerMessage(stream=pb.StreamMessage(
        subscription_id=3, tick=13, encoding=pb.ENCODING_QUANTIZED,
        poses=[pb.CharacterPose(character=2, quantized=bytes(12 + 13 * 3 - 6))]))))
    return seeds


# ---- state machines (fuzz_machine): the procedural database's ranges and tags ----

MACHINE_SEEDS = {
    # The seed's text as written: binds nowhere (no range named like its states).
    "seed.sm": "stand\t{JUMP_PRESS\tstand2crouch }\nstand2crouch\t\t\n{\t\t\n\tJUMP_RELEASE\thop\n\tEND\tcrouch\n}\n"
               "crouch\t{JUMP_RELEASE\ttakeoff }\ntakeoff\t{END\tfloat }\nhop\t{END\tfloat }\n"
               "float\t{NEAR_GROUND\tland }\nland\t{END\tstand }\n",
    "jump.sm": "halflife 0.1\nmax_transitions 3\n"
               "stand { clip idle [0 0.5] loop  JUMP_PRESS crouch }\n"
               "crouch { clip walk_start [0 0.4]  JUMP_RELEASE takeoff halflife 0.2  END crouch }\n"
               "takeoff { clip run_start [2 2.4]  END float }\n"
               "float { clip run [0 0.3] loop  NEAR_GROUND land exit 0.1 }\n"
               "land { clip run_stop [2.5 3.1]  END stand }\n",
    "nested.sm": "# nested machines\nidle { tag idle loop  GO moving }\nmoving { machine loco  STOP idle  END idle }\n"
                 "machine loco {\n  walk { clip walk [0 1] loop  FAST run  HALT stopping }\n"
                 "  run { tag run loop  SLOW walk  STOP walk }\n  stopping { clip walk_stop [2 2.5] }\n}\n",
    "blend.sm": "param speed 0.3\ncycle { blend speed ( 0 walk [0 1] 0.5 jog [0 0.8] 1 run ) AUTO other exit 2 }\n"
                "other { clip \"sprint\" [0 0.5] END cycle }\n",
    "match.sm": "loco { match (walk run)  JUMP jump }\njump { clip run [0 0.5]  END loco }\n",
    "errors.sm": "a { clip walk GO x }\nb { clip run }\nc { clip run AUTO c }\nmachine m { d { machine m } }\n",
}


def varint(n):
    out = b""
    while n >= 0x80:
        out += bytes([(n & 0x7F) | 0x80])
        n >>= 7
    return out + bytes([n])


def main():
    # BVH
    write("fuzz_bvh", "minimal.bvh", MINIMAL_BVH)
    write("fuzz_bvh", "odd.bvh", ODD_BVH)
    biped = biped_bvh()
    write("fuzz_bvh", "biped.bvh", biped)
    # The same biped as other rigs name it (bone roles are read from names).
    write("fuzz_bvh", "mixamo.bvh", biped.replace("ROOT ", "ROOT mixamorig:").replace("JOINT ", "JOINT mixamorig:"))
    games105 = biped.replace("ROOT Hips", "ROOT RootJoint")
    for left, right, ours in (("lHip", "rHip", "UpLeg"), ("lKnee", "rKnee", "Leg"), ("lAnkle", "rAnkle", "Foot"),
                              ("lToeJoint", "rToeJoint", "Toe")):
        games105 = games105.replace("JOINT Left" + ours + "\n", "JOINT " + left + "\n")
        games105 = games105.replace("JOINT Right" + ours + "\n", "JOINT " + right + "\n")
    write("fuzz_bvh", "games105.bvh", games105)

    for name, text in MACHINE_SEEDS.items():
        write("fuzz_machine", name, text)

    # A database file from the biped, by the project's own animdb.
    animdb = os.path.join(ROOT, "build", "animdb")
    with tempfile.TemporaryDirectory() as tmp:
        bvh = os.path.join(tmp, "biped.bvh")
        with open(bvh, "w") as f:
            f.write(biped)
        out = os.path.join(tmp, "biped.animdb")
        subprocess.run([animdb, "build", "-o", out, "--name", "biped", "--rate", "15", "--tag", "biped=walk", bvh],
                       check=True, stdout=subprocess.DEVNULL)
        with open(out, "rb") as f:
            write("fuzz_dbfile", "biped.animdb", f.read())

    # Requests, and delimited streams of them for the frame reader.
    pb = load_pb()
    seeds = requests(pb)
    for name, request in seeds:
        write("fuzz_request", name + ".pb", request.SerializeToString())
    payloads = [r.SerializeToString() for _, r in seeds[:6]]
    stream = b"".join(varint(len(p)) + p for p in payloads)
    # fuzz_frame input: max_frame (u16 LE), chunk seed (u16 LE), stop-after byte, stream.
    write("fuzz_frame", "requests", struct.pack("<HHB", 4096, 7, 0) + stream)
    write("fuzz_frame", "small_limit", struct.pack("<HHB", 16, 3, 0) + stream)
    write("fuzz_frame", "stop_after_2", struct.pack("<HHB", 4096, 11, 2) + stream)
    write("fuzz_frame", "empty_frames", struct.pack("<HHB", 100, 1, 0) + b"\x00\x00\x03abc\x00")
    write("fuzz_frame", "long_varint", struct.pack("<HHB", 65535, 5, 0) + b"\x80" * 9 + b"\x01" + b"xyz")
    write("fuzz_frame", "split_frame", struct.pack("<HHB", 1000, 9, 0) + varint(300) + bytes(range(256)) + bytes(44))

    # Server messages for the client's reader and conversions: flags byte, then the payload.
    for name, flags, message in server_messages(pb):
        write("fuzz_client_convert", name, bytes([flags]) + message.SerializeToString())

    # Network files: the shapes of the three LMM networks, shrunk (hidden 512 -> 8).
    write("fuzz_nnet", "tiny.bin", nnet_file([2, 3, 1], 1))
    write("fuzz_nnet", "projector_like.bin", nnet_file([27, 8, 8, 8, 8, 59], 2))
    write("fuzz_nnet", "stepper_like.bin", nnet_file([59, 8, 8, 59], 3))
    write("fuzz_nnet", "decompressor_like.bin", nnet_file([59, 8, 338], 4))
    write("fuzz_nnet", "wide_panel.bin", nnet_file([33, 40, 65], 5))
    write("fuzz_nnet", "truncated.bin", nnet_file([3, 5, 4], 6)[:-7])


if __name__ == "__main__":
    main()
