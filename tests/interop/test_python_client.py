#!/usr/bin/env python3
"""Interoperability: a Python client built only from Debian's python3-protobuf
and the code protoc generates from proto/ talks to the real server.

It proves the wire format is standard varint-delimited protobuf: no animserver
C code is involved on this side. Run by tests/run.sh with ANIM_BUILD_DIR set.
"""
import math
import os
import socket
import struct
import subprocess
import sys
import tempfile

from google.protobuf.internal.decoder import _DecodeVarint  # standard delimited framing
from google.protobuf.internal.encoder import _VarintBytes

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("ANIM_BUILD_DIR", "build")


def generate_module():
    out = tempfile.mkdtemp(prefix="animserver-py-")
    subprocess.run(["protoc", f"--python_out={out}", "-I", os.path.join(ROOT, "proto"),
                    os.path.join(ROOT, "proto", "animserver.proto")], check=True)
    sys.path.insert(0, out)
    import animserver_pb2  # noqa: E402 (generated just above)
    return animserver_pb2


def start_server():
    proc = subprocess.Popen([os.path.join(BUILD, "animserver"), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = proc.stdout.readline().strip()
    assert line.startswith("listening on "), line
    host, port = line[len("listening on "):].rsplit(":", 1)
    return proc, host, int(port)


class Connection:
    def __init__(self, pb, host, port):
        self.pb = pb
        self.sock = socket.create_connection((host, port), timeout=5)
        self.buffer = b""

    def send(self, request):
        body = request.SerializeToString()
        self.sock.sendall(_VarintBytes(len(body)) + body)

    def receive(self):
        while True:
            if self.buffer:
                try:
                    length, start = _DecodeVarint(self.buffer, 0)
                except IndexError:
                    length, start = None, 0
                if length is not None and len(self.buffer) >= start + length:
                    message = self.pb.ServerMessage()
                    message.ParseFromString(self.buffer[start:start + length])
                    self.buffer = self.buffer[start + length:]
                    return message
            chunk = self.sock.recv(65536)
            assert chunk, "server closed the connection"
            self.buffer += chunk


def unpack_quantized(data, rotations_only):
    """The ENCODING_QUANTIZED layout, from the proto's comment alone: root
    position 3 x int32 (1e-4 m); then 7 bytes per bone rotation (smallest
    three: largest component's index in bits 48-49, the other three in 16-bit
    slots of 1/32767 of 1/sqrt 2, in w, x, y, z order without the dropped one);
    then, unless rotations_only, 3 x int16 per bone from bone 1 (1/8192 m)."""
    root = [v * 1e-4 for v in struct.unpack_from("<3i", data, 0)]
    body = len(data) - 12
    n = body // 7 if rotations_only else (body + 6) // 13
    rotations = []
    for b in range(n):
        code = int.from_bytes(data[12 + 7 * b:19 + 7 * b], "little")
        largest = (code >> 48) & 3
        parts = [struct.unpack("<h", struct.pack("<H", (code >> (16 * i)) & 0xFFFF))[0] / 32767.0 / math.sqrt(2.0)
                 for i in range(3)]
        q, slot = [0.0] * 4, 0
        for i in range(4):
            if i != largest:
                q[i] = parts[slot]
                slot += 1
        q[largest] = math.sqrt(max(0.0, 1.0 - sum(c * c for c in q)))
        rotations.append(q)
    positions = [root]
    if not rotations_only:
        base = 12 + 7 * n
        for b in range(1, n):
            positions.append([v / 8192.0 for v in struct.unpack_from("<3h", data, base + 6 * (b - 1))])
    return positions, rotations


def check(condition, what):
    if not condition:
        raise AssertionError(what)
    print(f"  ok: {what}")


def main():
    pb = generate_module()
    proc, host, port = start_server()
    try:
        conn = Connection(pb, host, port)
        conn.send(pb.Request(id=1, hello=pb.HelloRequest(protocol_version=1, client_name="python-interop")))
        reply = conn.receive().response
        check(reply.id == 1 and reply.WhichOneof("body") == "hello", "hello answered by id")
        check(reply.hello.protocol_version == 1, "protocol version 1")
        check("ping" in reply.hello.capabilities, "capabilities list ping")
        check(reply.hello.limits.max_frame_bytes > 0, "limits carried")

        # Pipelined: three requests in one write, answers matched by id.
        frames = b""
        for i in (10, 11, 12):
            body = pb.Request(id=i, ping=pb.PingRequest(payload=b"p%d" % i)).SerializeToString()
            frames += _VarintBytes(len(body)) + body
        conn.sock.sendall(frames)
        answers = {}
        for _ in range(3):
            response = conn.receive().response
            answers[response.id] = response.ping.payload
        check(answers == {10: b"p10", 11: b"p11", 12: b"p12"}, "pipelined pings echoed by id")

        # A search on the embedded default database, by frame.
        query = pb.SearchQuery(from_frame=pb.FrameIndex(frame=100), k=3, explain=True)
        conn.send(pb.Request(id=30, search=pb.SearchRequest(database="default", query=query)))
        reply = conn.receive().response
        check(reply.id == 30 and reply.WhichOneof("body") == "search", "search answered")
        matches = reply.search.result.matches
        check(len(matches) == 3 and matches[0].cost == 0.0, "a frame's own features find it at cost 0")
        check(all(a.cost <= b.cost for a, b in zip(matches, matches[1:])), "matches by ascending cost")
        check(reply.search.database_version != 0, "the answer names the database version")
        check(len(reply.search.result.explanation) == 7, "explanation per feature group")

        # Inertialization of explicit two-bone poses (root, child): the child's
        # offset is source - destination and decays as e^-yt (x0 + (v0 + y x0) t).
        def pose(x, v):
            return pb.PoseRef(pose=pb.PoseState(positions=[0, 0, 0, x, 0, 0], velocities=[0, 0, 0, v, 0, 0],
                                                rotations=[1, 0, 0, 0, 1, 0, 0, 0], angular_velocities=[0] * 6))
        transition = pb.InertializeTransitionRequest(source=pose(1.0, 0.0), destination=pose(0.0, 0.0))
        conn.send(pb.Request(id=31, inertialize_transition=transition))
        reply = conn.receive().response
        check(reply.WhichOneof("body") == "inertialize_transition", "inertialize transition answered")
        state = reply.inertialize_transition.state
        check(len(state.offset_positions) == 6 and len(state.anchor) == 14, "offsets and anchor returned")
        check(abs(state.offset_positions[3] - 1.0) < 1e-6, "child offset is source - destination")
        evaluate = pb.InertializeEvaluateRequest(state=state, input=pose(0.0, 0.0), halflife=0.2, t=0.1)
        conn.send(pb.Request(id=32, inertialize_evaluate=evaluate))
        reply = conn.receive().response
        check(reply.WhichOneof("body") == "inertialize_evaluate", "inertialize evaluate answered")
        out = reply.inertialize_evaluate.output
        y = 2.0 * math.log(2.0) / 0.2
        expect = math.exp(-y * 0.1) * (1.0 + y * 0.1)
        check(abs(reply.inertialize_evaluate.state.offset_positions[3] - expect) < 1e-5, "offset decays in closed form")
        check(abs(out.positions[3] - expect) < 1e-5, "displayed child = destination + decayed offset")

        # Characters and a stream: two subscriptions (floats and quantized) of
        # the same character; the quantized bytes, decoded here from the
        # documented layout, agree with the floats of the same tick.
        create = pb.CreateCharactersRequest(database="default", placements=[pb.Placement(x=1.0, z=2.0)])
        conn.send(pb.Request(id=40, create_characters=create))
        reply = conn.receive().response
        check(reply.WhichOneof("body") == "create_characters", "a character created")
        character = reply.create_characters.characters[0]
        steer = pb.CharacterInput(character=character, velocity=pb.VelocityInput(x=0.0, z=1.4, facing=0.0))
        conn.send(pb.Request(id=41, set_inputs=pb.SetInputsRequest(inputs=[steer])))
        check(conn.receive().response.WhichOneof("body") == "set_inputs", "input set")
        for request_id, encoding in ((42, pb.ENCODING_FLOAT), (43, pb.ENCODING_QUANTIZED)):
            conn.send(pb.Request(id=request_id, subscribe=pb.SubscribeRequest(characters=[character], encoding=encoding)))
        subscriptions = {}
        frames = {}
        while len(subscriptions) < 2 or not any(t in frames.get(pb.ENCODING_QUANTIZED, {}) for t in
                                                 frames.get(pb.ENCODING_FLOAT, {})):
            message = conn.receive()
            if message.WhichOneof("kind") == "response":
                subscriptions[message.response.subscribe.subscription] = message.response.id
            else:
                frames.setdefault(message.stream.encoding, {})[message.stream.tick] = message.stream
        tick = next(t for t in frames[pb.ENCODING_FLOAT] if t in frames[pb.ENCODING_QUANTIZED])
        exact = frames[pb.ENCODING_FLOAT][tick].poses[0]
        packed = frames[pb.ENCODING_QUANTIZED][tick].poses[0]
        check(exact.character == character and len(exact.rotations) == 4 * 22, "float pose: 22 bones")
        positions, rotations = unpack_quantized(packed.quantized, False)
        check(len(rotations) == 22 and len(packed.quantized) == 12 + 7 * 22 + 6 * 21, "quantized pose: 292 bytes")
        worst_angle = max(2.0 * math.acos(min(1.0, abs(sum(a * b for a, b in zip(q, exact.rotations[4 * i:4 * i + 4])))))
                          for i, q in enumerate(rotations))
        worst_position = max(abs(positions[i][k] - exact.positions[3 * i + k]) for i in range(22) for k in range(3))
        check(worst_angle < 1e-3 and worst_position < 1e-4, "quantized layout decodes to the float pose "
              f"(rotations within {worst_angle:.1e} rad, positions {worst_position:.1e} m)")

        conn.send(pb.Request(id=20))  # no body
        reply = conn.receive()
        while reply.WhichOneof("kind") == "stream":  # frames still arriving
            reply = conn.receive()
        reply = reply.response
        check(reply.id == 20 and reply.error.code == pb.ERROR_UNSUPPORTED, "empty request gets ERROR_UNSUPPORTED")
        conn.sock.close()
    finally:
        proc.terminate()
        code = proc.wait(timeout=10)
    check(code == 0, "server exits 0 on SIGTERM")
    print("python interop: passed")


if __name__ == "__main__":
    main()
