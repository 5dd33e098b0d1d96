"""animserver: a Python client for the animserver character-animation server.

    import animserver
    with animserver.Client("127.0.0.1", 7878) as client:
        db = client.describe_database("default")
        poses = client.pose("default", 0, count=60, global_=True)     # numpy (60, bones, 3|4)
        best = client.search("default", from_frame={"frame": 100}, k=3).best

- :class:`Client` (blocking) and :class:`AsyncClient` (asyncio) cover every
  request of ``proto/animserver.proto``, one method each (``requests.py``),
  plus ``call(kind, ...)`` for any request by name;
- poses are numpy arrays (``poses.py``): w, x, y, z quaternions, the
  database's bone order; the quantized stream encoding decoded in numpy;
- failures raise :class:`AnimError` subclasses with the server's code and
  message (``errors.py``);
- streams are iterators (async iterators), reconnection follows the C
  library (``reconnect.py``);
- ``pb`` is the protoc-generated module, built from the proto (``_proto.py``).
"""
from . import errors
from ._proto import PROTO_PATH, PROTO_SHA256, pb
from .aio import AsyncClient, AsyncSubscription
from .client import Client, Pending, Subscription
from .codec import REQUEST_KINDS, RESPONSE_KINDS
from .errors import AnimError
from .poses import Pose, PoseFrames, StreamFrame, decode_quantized, forward_kinematics, quat_mul, quat_rotate
from .reconnect import ConnectionEvent, Reconnect
from .requests import (PROTOCOL_VERSION, Match, SearchResult, encoding_value, goal, pose_ref, pose_state, stick,
                       velocity)

__version__ = "0.1.0"

__all__ = ["AnimError", "AsyncClient", "AsyncSubscription", "Client", "ConnectionEvent", "Match", "Pending",
           "Pose", "PoseFrames", "PROTO_PATH", "PROTO_SHA256", "PROTOCOL_VERSION", "REQUEST_KINDS",
           "RESPONSE_KINDS", "Reconnect", "SearchResult", "StreamFrame", "Subscription", "decode_quantized",
           "encoding_value", "errors", "forward_kinematics", "goal", "pb", "pose_ref", "pose_state", "quat_mul",
           "quat_rotate", "stick", "velocity"]
