"""animserver: a Python client for the animserver character-animation server.

    import animserver
    with animserver.Client("127.0.0.1", 7878) as client:
        skeleton = client.skeleton("default")                          # names, parents (numpy)
        poses = client.pose("default", 0, count=60, global_=True)     # numpy (60, bones, 3|4)
        best = client.search("default", from_frame={"frame": 100}, k=3).best

- :class:`Client` (blocking) and :class:`AsyncClient` (asyncio) cover every
  request of ``proto/animserver.proto``, one method each (``requests.py``),
  plus ``call(kind, ...)`` for any request by name;
- poses are numpy arrays (``poses.py``): w, x, y, z quaternions, the
  database's bone order; the quantized stream encoding decoded in numpy;
- failures raise :class:`AnimError` subclasses with the server's code and
  message (``errors.py``), importable from here: ``animserver.NotFoundError``;
- streams are iterators (async iterators) of frames whose rows say their
  character (``frame.pose(id)``, ``frame.rows(ids)``); reconnection follows
  the C library (``reconnect.py``); ``subscribe_region`` streams whoever is
  inside a circle or box (``frame.entered``, ``frame.left``);
- :class:`Skeleton` (``client.skeleton(db)``): bone names, a parents array,
  forward kinematics;
- enum arguments by short name (``encoding="quantized"``, ``mode="graph"``)
  or value, checked before sending (``enums.py``);
- typed (``py.typed``): results are the proto's messages, typed by the stub
  generated with the module, or the dataclasses above; ``AsyncClient``'s
  methods are typed as coroutines;
- ``pb`` is the protoc-generated module, built from the proto (``_proto.py``).
"""
from . import errors
from ._proto import PROTO_PATH, PROTO_SHA256, pb
from .aio import AsyncClient, AsyncSubscription
from .client import Client, Pending, Subscription
from .codec import REQUEST_KINDS, RESPONSE_KINDS
from .errors import (AnimError, InvalidArgumentError, OutOfMemoryError, IoError, MalformedError, ChecksumError,
                     VersionError, TruncatedError, NotFoundError, OutOfRangeError, TimedOutError, CannotConnectError,
                     ClosedError, ProtocolError, TooLargeError, TryAgainError, BusyError, LimitError, UnsupportedError,
                     NonFiniteError, WrongDimensionError, BadNameError, ShuttingDownError, InternalError, ExistsError,
                     NotPermittedError)
from .poses import (CharacterEntered, CharacterPose, Floats, Pose, PoseFrames, StreamFrame, decode_quantized, forward_kinematics,
                    quat_mul, quat_rotate)
from .reconnect import ConnectionEvent, Reconnect
from .requests import (PROTOCOL_VERSION, Band, BandLike, InverseDynamics, MarkerFit, Match, SearchResult, encoding_value, goal, pose_ref, pose_state, stick,
                       velocity)
from .skeleton import Skeleton

__version__ = "0.1.0"

__all__ = ["AnimError", "AsyncClient", "AsyncSubscription", "Band", "BandLike", "CharacterEntered", "CharacterPose", "Client", "ConnectionEvent", "Floats", "InverseDynamics", "MarkerFit",
           "Match", "Pending", "Pose", "PoseFrames", "PROTO_PATH", "PROTO_SHA256", "PROTOCOL_VERSION", "REQUEST_KINDS",
           "RESPONSE_KINDS", "Reconnect", "SearchResult", "Skeleton", "StreamFrame", "Subscription",
           "decode_quantized", "encoding_value", "errors", "forward_kinematics", "goal", "pb", "pose_ref",
           "pose_state", "quat_mul", "quat_rotate", "stick", "velocity",
           # the errors, one class per ErrorCode
           "InvalidArgumentError", "OutOfMemoryError", "IoError", "MalformedError", "ChecksumError", "VersionError",
           "TruncatedError", "NotFoundError", "OutOfRangeError", "TimedOutError", "CannotConnectError", "ClosedError",
           "ProtocolError", "TooLargeError", "TryAgainError", "BusyError", "LimitError", "UnsupportedError",
           "NonFiniteError", "WrongDimensionError", "BadNameError", "ShuttingDownError", "InternalError",
           "ExistsError", "NotPermittedError"]
