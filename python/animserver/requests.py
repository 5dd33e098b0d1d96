"""Every request, one small method each, shared by the blocking and asyncio clients.

A method builds the request's fields and hands them to ``_call(kind, fields,
timeout, convert)``; ``kind`` is the name of the request's field in
``Request.body`` in the proto. The blocking client returns the result, the
asyncio client an awaitable of it. A request added to the proto needs one
line here (``tests/interop/test_python_client.py`` fails until it has one)
and can be sent by name meanwhile: ``client.call("kind", field=value)``.

Fields take messages, mappings (``{"frame": 12}``) or, for repeated messages,
lists of either; see ``proto/animserver.proto`` for each field's meaning.
Results are the proto's response messages (typed: the package carries the
stub protoc-gen-mypy generated for its proto), except where numbers belong in
numpy: ``pose`` returns :class:`~animserver.poses.PoseFrames`, ``search`` and
``batch_search`` :class:`SearchResult`, ``skeleton`` a
:class:`~animserver.skeleton.Skeleton`, ``subscribe`` a subscription object.
Each method is written once, as a :class:`~animserver._call.Call` builder;
``_call.request`` makes it a blocking method of :class:`~animserver.Client`
and a coroutine method of :class:`~animserver.AsyncClient`, typed for each.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Literal, Mapping, Optional, Protocol, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

from ._call import Call, body_as, request
from . import errors
from ._proto import pb
from .enums import enum_value
from .poses import Pose, PoseFrames
from .skeleton import Skeleton

__all__ = ["Requests", "SearchResult", "Match", "PROTOCOL_VERSION", "encoding_value", "pose_ref", "pose_state",
           "stick", "velocity", "goal", "Encoding", "Mode", "AlignModeName", "HasId", "Band", "BandLike",
           "subscribe_fields", "region_fields"]

PROTOCOL_VERSION = 1

Message = Any  # a message or a mapping of its fields, as a request's argument
PoseRefLike = Union[int, Mapping[str, Any], "pb.PoseRef", "pb.PoseState"]
Encoding = Union[Literal["float", "quantized"], int]
"""A PoseEncoding: its short name or value (checked before sending)."""
Mode = Union[Literal["motion_matching", "machine", "graph", "tracker", "learned", "physical"], int]
BodyModeName = Union[Literal["kinematic", "powered", "limp"], int]
"""A CharacterMode: its short name or value (checked before sending)."""
AlignModeName = Union[Literal["rigid", "similarity", "yaw"], int]
"""An AlignMode: its short name or value (checked before sending)."""


class HasId(Protocol):
    """A subscription object (anything with the subscription's ``id``)."""
    @property
    def id(self) -> int: ...


@dataclass
class Match:
    """One search result: database frame, its range, the cost, its local
    pose when ``include_pose`` was asked, and its normalized feature row
    (float32, the database's columns) when ``include_features`` was."""
    frame: int
    range: int
    range_name: str
    cost: float
    pose: Optional[Pose] = None
    features: Optional[npt.NDArray[np.float32]] = None


@dataclass
class SearchResult:
    """The matches by ascending cost; with ``explain``, the best match's cost
    split by feature group (``explanation``: group name -> cost) and the margin
    to the runner-up; with ``include_features``, the normalized query searched
    with (``query``, float32)."""
    database_version: int
    matches: List[Match]
    explanation: Dict[str, float] = field(default_factory=dict)
    margin: float = 0.0
    query: Optional[npt.NDArray[np.float32]] = None

    @classmethod
    def from_proto(cls, result: pb.SearchResult, database_version: int) -> "SearchResult":
        def floats(values: Any) -> Optional[npt.NDArray[np.float32]]:
            return np.array(values, dtype=np.float32) if len(values) else None
        matches = [Match(m.frame, m.range, m.range_name, m.cost, Pose.from_proto(m.pose) if m.HasField("pose") else None,
                         floats(m.features)) for m in result.matches]
        return cls(database_version, matches, {g.name: g.cost for g in result.explanation}, result.margin,
                   floats(result.query))

    @property
    def best(self) -> Match:
        """The lowest-cost match."""
        return self.matches[0]


def encoding_value(encoding: Encoding, field: str = "encoding") -> int:
    """``"float"``, ``"quantized"`` or a PoseEncoding value -> the value;
    InvalidArgumentError naming ``field`` for anything else."""
    return enum_value(pb.PoseEncoding.DESCRIPTOR, encoding, field)


def pose_state(positions: npt.ArrayLike, rotations: npt.ArrayLike, velocities: Optional[npt.ArrayLike] = None,
               angular_velocities: Optional[npt.ArrayLike] = None) -> pb.PoseState:
    """A ``pb.PoseState`` from (n, 3) / (n, 4) arrays (velocities default to 0)."""
    positions = np.asarray(positions, dtype=np.float32).reshape(-1, 3)
    n = len(positions)
    zeros = np.zeros((n, 3), np.float32)
    return pb.PoseState(positions=positions.ravel().tolist(),
                        rotations=np.asarray(rotations, np.float32).ravel().tolist(),
                        velocities=np.asarray(zeros if velocities is None else velocities, np.float32).ravel().tolist(),
                        angular_velocities=np.asarray(zeros if angular_velocities is None else angular_velocities,
                                                      np.float32).ravel().tolist())


def pose_ref(ref: PoseRefLike) -> pb.PoseRef:
    """A ``pb.PoseRef``: an int is a database frame, a PoseState an explicit pose."""
    if isinstance(ref, (int, np.integer)):
        return pb.PoseRef(frame=int(ref))
    if isinstance(ref, pb.PoseState):
        return pb.PoseRef(pose=ref)
    if isinstance(ref, pb.PoseRef):
        return ref
    if not ({"frame", "pose"} & set(ref)):
        return pb.PoseRef(pose=ref)  # type: ignore[arg-type]  # a mapping of PoseState's fields
    return pb.PoseRef(**ref)


def stick(character: int, x: float, z: float, camera_azimuth: float = 0.0, strafe: bool = False) -> pb.CharacterInput:
    """The seed's gamepad input: stick (x right, z forward, length <= 1)
    relative to the camera azimuth (radians about +Y)."""
    return pb.CharacterInput(character=character, stick=pb.StickInput(x=x, z=z, camera_azimuth=camera_azimuth,
                                                                      strafe=strafe))


def velocity(character: int, x: float, z: float, facing: float) -> pb.CharacterInput:
    """A desired world velocity (m/s) and facing (radians about +Y)."""
    return pb.CharacterInput(character=character, velocity=pb.VelocityInput(x=x, z=z, facing=facing))


def goal(character: int, x: float, z: float, speed: float = 1.4) -> pb.CharacterInput:
    """Walk to (x, z) at ``speed`` m/s, slowing on arrival, and stop there."""
    return pb.CharacterInput(character=character, goal=pb.GoalInput(x=x, z=z, speed=speed))


def _bytes(text: Union[str, bytes]) -> bytes:
    return text.encode() if isinstance(text, str) else bytes(text)


def _vec3s(points: npt.ArrayLike) -> List[Dict[str, float]]:
    return [{"x": float(p[0]), "y": float(p[1]), "z": float(p[2])} for p in np.asarray(points, np.float32).reshape(-1, 3)]


def _merge_query(query: Any, fields: Mapping[str, Any]) -> Any:
    """A search query from a message or mapping plus keyword fields (a keyword
    replaces the same field of ``query``)."""
    if query is None:
        return dict(fields)
    if not fields:
        return query
    if isinstance(query, Mapping):
        return {**query, **fields}
    merged = pb.SearchQuery()
    merged.CopyFrom(query)
    for name in fields:
        merged.ClearField(name)  # type: ignore[arg-type]  # a field name the caller gave (the constructor checks it)
    merged.MergeFrom(pb.SearchQuery(**{k: v for k, v in fields.items() if v is not None}))
    return merged


def _search_result(response: pb.SearchResponse) -> SearchResult:
    return SearchResult.from_proto(response.result, response.database_version)


def _batch_results(response: pb.BatchSearchResponse) -> List[SearchResult]:
    return [SearchResult.from_proto(r, response.database_version) for r in response.results]


def _subscription_id(subscription: Union[int, HasId]) -> int:
    return int(subscription if isinstance(subscription, int) else subscription.id)


def subscribe_fields(characters: Iterable[int], owned: bool, rate_divisor: int, encoding: Encoding,
                     global_positions: bool, rotations_only: bool) -> Dict[str, Any]:
    """A SubscribeRequest's fields (both clients' ``subscribe``)."""
    return {"characters": [int(c) for c in characters], "owned": owned, "rate_divisor": rate_divisor,
            "encoding": encoding_value(encoding, "subscribe.encoding"), "global_positions": global_positions,
            "rotations_only": rotations_only}


@dataclass
class InverseDynamics:
    """Joint torques, ground reaction forces and the root's residual along a
    database range (docs/physics.md), as numpy float32 arrays, frame-major:
    ``torques`` (frames, bones, 3) N m, each bone's joint torque in its own
    axes; ``foot_forces`` and ``foot_cops`` (frames, 2, 3), left then right,
    N and m, world (y up); ``residual_forces``, ``residual_torques`` (N m
    about the root joint) and ``com`` (frames, 3); ``power`` (frames,) W;
    ``over_limit`` (frames,) bool: the residual passed a limit. Of a
    character's recent motion (:meth:`character_inverse_dynamics`): frame i
    is its tick ``first_tick + i``, ``frame_rate`` the tick rate,
    ``ticks_filled`` the ticks the server's clock passed over (interpolated);
    ``character`` 0 for a database range."""
    database_version: int
    start: int
    frame_rate: float
    total_mass: float
    step: int
    bones: List[str]
    torques: npt.NDArray[np.float32]
    foot_forces: npt.NDArray[np.float32]
    foot_cops: npt.NDArray[np.float32]
    residual_forces: npt.NDArray[np.float32]
    residual_torques: npt.NDArray[np.float32]
    power: npt.NDArray[np.float32]
    over_limit: npt.NDArray[np.bool_]
    com: npt.NDArray[np.float32]
    frames_over_limit: int
    mean_residual_force: float
    max_residual_force: float
    mean_residual_torque: float
    max_residual_torque: float
    worst_frame: int
    feet: Tuple[str, str]
    character: int = 0
    first_tick: int = 0
    ticks_filled: int = 0

    @classmethod
    def from_response(cls, m: pb.InverseDynamicsResponse) -> "InverseDynamics":
        n, nb = m.frames, len(m.bones)

        def floats(values: Any, *shape: int) -> npt.NDArray[np.float32]:
            return np.array(values, dtype=np.float32).reshape(shape)
        return cls(m.database_version, m.start, m.frame_rate, m.total_mass, m.step, list(m.bones),
                   floats(m.torques, n, nb, 3), floats(m.foot_forces, n, 2, 3), floats(m.foot_cops, n, 2, 3),
                   floats(m.residual_forces, n, 3), floats(m.residual_torques, n, 3), floats(m.power, n),
                   np.array(m.over_limit, dtype=bool), floats(m.com, n, 3), m.frames_over_limit,
                   m.mean_residual_force, m.max_residual_force, m.mean_residual_torque, m.max_residual_torque,
                   m.worst_frame, (m.left_foot, m.right_foot), m.character, m.first_tick, m.ticks_filled)


@dataclass(frozen=True)
class MarkerFit:
    """Poses from markers, fitted by dragging the database's body model in
    MuJoCo (docs/physics.md), as numpy float32 arrays, frame-major:
    ``positions`` (frames, bones, 3) m and ``rotations`` (frames, bones, 4)
    (w, x, y, z): local poses, the bones above the hips at the origin so the
    hips' are world; ``residuals`` (frames, markers) m, NaN where missing;
    ``offsets`` (markers, 3) m, the ones used (found ones included)."""
    database_version: int
    bones: List[str]
    positions: npt.NDArray[np.float32]
    rotations: npt.NDArray[np.float32]
    residuals: npt.NDArray[np.float32]
    offsets: npt.NDArray[np.float32]
    scale: float
    mean_residual: float
    max_residual: float
    worst_frame: int
    worst_marker: int

    @classmethod
    def from_response(cls, m: pb.MarkerFitResponse) -> "MarkerFit":
        n, nb, nm = m.frames, len(m.bones), len(m.offsets) // 3

        def floats(values: Any, *shape: int) -> npt.NDArray[np.float32]:
            return np.array(values, dtype=np.float32).reshape(shape)
        return cls(m.database_version, list(m.bones), floats(m.positions, n, nb, 3), floats(m.rotations, n, nb, 4),
                   floats(m.residuals, n, nm), floats(m.offsets, nm, 3), m.scale, m.mean_residual, m.max_residual,
                   m.worst_frame, m.worst_marker)


@dataclass(frozen=True)
class Band:
    """A region's distance band: members up to ``radius`` metres from the
    centre (and past the band before) get a pose every ``rate_divisor`` ticks
    (0 or 1: every tick). Bands go nearest first, radii increasing, at most 8;
    a member past the last band's radius takes the last band's rate."""
    radius: float
    rate_divisor: int = 1


BandLike = Union[Band, Tuple[float, int]]
"""A :class:`Band` or a ``(radius, rate_divisor)`` pair."""


def _not_negative(value: int, field: str) -> int:
    # protobuf would refuse a negative uint with a ValueError naming no field.
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise errors.InvalidArgumentError(pb.ERROR_INVALID_ARGUMENT, f"{field} = {value!r}: a whole number >= 0")
    return int(value)


def region_fields(radius: Optional[float], box: Optional[Tuple[float, float]], centre: Tuple[float, float],
                  follow: int, bands: Sequence[BandLike], max_characters: int) -> Dict[str, Any]:
    """An AoiRegion's fields (both clients' ``subscribe_region``). Only the
    shape is checked here (integers not negative, bands as pairs); the
    server checks the values and names the field it refuses."""
    band_fields = []
    for i, given in enumerate(bands):
        raw: Any = given  # checked at run time: an untyped caller may pass anything
        if isinstance(raw, Band):
            band = raw
        elif isinstance(raw, (tuple, list)) and len(raw) == 2:
            band = Band(float(raw[0]), raw[1])
        else:
            raise errors.InvalidArgumentError(pb.ERROR_INVALID_ARGUMENT, f"subscribe.region.bands[{i}] = "
                                              f"{raw!r}: a Band or a (radius, rate_divisor) pair")
        band_fields.append({"radius": float(band.radius),
                            "rate_divisor": _not_negative(band.rate_divisor,
                                                          f"subscribe.region.bands[{i}].rate_divisor")})
    half_x, half_z = (0.0, 0.0) if box is None else (float(box[0]), float(box[1]))
    return {"centre": {"x": float(centre[0]), "y": 0.0, "z": float(centre[1])},
            "radius": 0.0 if radius is None else float(radius), "half_x": half_x, "half_z": half_z,
            "follow": _not_negative(follow, "subscribe.region.follow"), "bands": band_fields,
            "max_characters": _not_negative(max_characters, "subscribe.region.max_characters")}


class Requests:
    """The request methods; a client class provides ``_run`` (``_call.Blocking``
    or ``_call.Async``). Every method takes ``timeout`` (seconds; None: the
    client's default) and raises :class:`~animserver.errors.AnimError` (the
    server's code and message) on failure."""

    auth_token: Optional[str] = None
    client_name: str = "animserver-python"
    server: Optional[pb.HelloResponse] = None

    def _hello_done(self, body: pb.HelloResponse) -> pb.HelloResponse:
        self.server = body
        return body

    def _unsubscribed(self, response: pb.SubscriptionChangedResponse) -> pb.SubscriptionChangedResponse:
        return response

    # ---- session ----------------------------------------------------------------
    @request
    def hello(self, client_name: Optional[str] = None, auth_token: Optional[str] = None,
              protocol_version: int = PROTOCOL_VERSION, *, timeout: Optional[float] = None) -> Call[pb.HelloResponse]:
        """Handshake (versions, capabilities, limits, admin); carries the
        client's auth token unless another is given. Its answer is kept in ``server``."""
        return Call("hello", {"protocol_version": protocol_version, "client_name": client_name or self.client_name,
                              "auth_token": self.auth_token if auth_token is None else auth_token},
                    timeout, self._hello_done)

    @request
    def ping(self, payload: bytes = b"", *, timeout: Optional[float] = None) -> Call[pb.PingResponse]:
        """Echoes ``payload`` with the server's clock."""
        return Call("ping", {"payload": payload}, timeout, body_as(pb.PingResponse))

    @request
    def server_stats(self, *, timeout: Optional[float] = None) -> Call[pb.ServerStatsResponse]:
        """The server's counters."""
        return Call("server_stats", None, timeout, body_as(pb.ServerStatsResponse))

    @request
    def shutdown(self, *, timeout: Optional[float] = None) -> Call[pb.ShutdownResponse]:
        """Graceful shutdown (admin)."""
        return Call("shutdown", None, timeout, body_as(pb.ShutdownResponse))

    # ---- databases --------------------------------------------------------------
    @request
    def list_databases(self, *, timeout: Optional[float] = None) -> Call[pb.ListDatabasesResponse]:
        """Every loaded database's summary (``.databases``)."""
        return Call("list_databases", None, timeout, body_as(pb.ListDatabasesResponse))

    @request
    def describe_database(self, name: str = "default", *,
                          timeout: Optional[float] = None) -> Call[pb.DescribeDatabaseResponse]:
        """Skeleton (``bones``: names, parents), ranges and tags, feature schema, contact bones."""
        return Call("describe_database", {"name": name}, timeout, body_as(pb.DescribeDatabaseResponse))

    @request
    def skeleton(self, database: str = "default", *, timeout: Optional[float] = None) -> Call[Skeleton]:
        """The database's skeleton for numpy (names, ``parents`` array, contact
        bones, forward kinematics): a ``describe_database`` made into a
        :class:`~animserver.skeleton.Skeleton`."""
        return Call("describe_database", {"name": database}, timeout, Skeleton.from_description)

    @request
    def load_database(self, name: str, *, timeout: Optional[float] = None) -> Call[pb.DatabaseChangedResponse]:
        """Loads ``NAME.animdb`` from the server's data directory (admin)."""
        return Call("load_database", {"name": name}, timeout, body_as(pb.DatabaseChangedResponse))

    @request
    def reload_database(self, name: str, *, timeout: Optional[float] = None) -> Call[pb.DatabaseChangedResponse]:
        """Rebuilds ``name`` from its file and swaps it in (admin)."""
        return Call("reload_database", {"name": name}, timeout, body_as(pb.DatabaseChangedResponse))

    @request
    def unload_database(self, name: str, *, timeout: Optional[float] = None) -> Call[pb.DatabaseChangedResponse]:
        """Unloads ``name`` (admin)."""
        return Call("unload_database", {"name": name}, timeout, body_as(pb.DatabaseChangedResponse))

    # ---- search and poses -------------------------------------------------------
    @request
    def search(self, /, database: str = "default", query: Union[None, Mapping[str, Any], pb.SearchQuery] = None, *,
               timeout: Optional[float] = None, **query_fields: Any) -> Call[SearchResult]:
        """k nearest frames: ``query`` a ``pb.SearchQuery`` or mapping, and/or its fields
        as keywords (``from_frame={"frame": 100}, k=3, explain=True``); a keyword adds
        to a mapping (and overrides the same field), never silently dropped."""
        return Call("search", {"database": database, "query": _merge_query(query, query_fields)}, timeout,
                    _search_result)

    @request
    def batch_search(self, database: str, queries: Iterable[Union[Mapping[str, Any], pb.SearchQuery]], *,
                     timeout: Optional[float] = None) -> Call[List[SearchResult]]:
        """Many queries in one message, answered in order."""
        return Call("batch_search", {"database": database, "queries": list(queries)}, timeout, _batch_results)

    @request
    def pose(self, database: str, frame: int, count: int = 1, *, local: bool = False, global_: bool = False,
             velocities: bool = False, timeout: Optional[float] = None) -> Call[PoseFrames]:
        """Frames ``frame .. frame + count - 1`` as numpy arrays (local pose when
        neither ``local`` nor ``global_`` is asked)."""
        return Call("pose", {"database": database, "frame": frame, "count": count,
                             "options": {"local": local, "global": global_, "velocities": velocities}},
                    timeout, PoseFrames.from_response)

    # ---- inertialization and springs -------------------------------------------
    @request
    def inertialize_transition(self, source: PoseRefLike, destination: PoseRefLike, state: Message = None,
                               database: str = "", *,
                               timeout: Optional[float] = None) -> Call[pb.InertializeTransitionResponse]:
        """Offsets and anchor that keep the displayed pose continuous from
        ``source`` to ``destination`` (frames or ``pose_state``)."""
        return Call("inertialize_transition", {"database": database, "source": pose_ref(source),
                                               "destination": pose_ref(destination), "state": state},
                    timeout, body_as(pb.InertializeTransitionResponse))

    @request
    def inertialize_evaluate(self, state: Message, input: PoseRefLike, halflife: float, t: float, database: str = "",
                             *, timeout: Optional[float] = None) -> Call[pb.InertializeEvaluateResponse]:
        """Offsets ``t`` seconds later and the displayed pose for ``input``."""
        return Call("inertialize_evaluate", {"database": database, "state": state, "input": pose_ref(input),
                                             "halflife": halflife, "t": t},
                    timeout, body_as(pb.InertializeEvaluateResponse))

    @request
    def transition_cost(self, source: PoseRefLike, destination: PoseRefLike, halflife: float,
                        bones: Sequence[str] = (), database: str = "", *,
                        timeout: Optional[float] = None) -> Call[pb.TransitionCostResponse]:
        """Exact and approximate displacement of an inertialized transition."""
        return Call("transition_cost", {"database": database, "source": pose_ref(source),
                                        "destination": pose_ref(destination), "halflife": halflife,
                                        "bones": list(bones)}, timeout, body_as(pb.TransitionCostResponse))

    @request
    def spring_tune(self, *, fraction: Message = None, to_constraint: Message = None, from_constraint: Message = None,
                    timeout: Optional[float] = None) -> Call[pb.SpringTuneResponse]:
        """Spring half-life/gains for a fraction at a time, or gains <-> ERP/CFM (one problem)."""
        return Call("spring_tune", {"fraction": fraction, "to_constraint": to_constraint,
                                    "from_constraint": from_constraint}, timeout, body_as(pb.SpringTuneResponse))

    # ---- characters and streams -------------------------------------------------
    @request
    def create_characters(self, /, database: str = "default", placements: Iterable[Message] = (), params: Message = None,
                          mode: Mode = 0, *, timeout: Optional[float] = None,
                          **fields: Any) -> Call[pb.CreateCharactersResponse]:
        """Characters (``.characters``: ids in placement order); placements are
        ``{"x", "z", "facing", "start_frame": {"frame": f}}`` mappings or messages;
        ``mode`` a CharacterMode name (``"machine"``, ``"graph"``, ``"tracker"``) or value; a mode's
        options as keywords (``physics={"total_mass": 90}`` for ``mode="physical"``)."""
        return Call("create_characters", {"database": database, "placements": list(placements), "params": params,
                                          "mode": mode, **fields}, timeout, body_as(pb.CreateCharactersResponse))

    @request
    def destroy_characters(self, characters: Iterable[int], *,
                           timeout: Optional[float] = None) -> Call[pb.DestroyCharactersResponse]:
        """Destroys the caller's own characters (``.destroyed``)."""
        return Call("destroy_characters", {"characters": [int(c) for c in characters]}, timeout,
                    body_as(pb.DestroyCharactersResponse))

    @request
    def set_inputs(self, inputs: Iterable[Message], *, timeout: Optional[float] = None) -> Call[pb.SetInputsResponse]:
        """Inputs for many characters (:func:`stick`, :func:`velocity`, :func:`goal`)."""
        return Call("set_inputs", {"inputs": list(inputs)}, timeout, body_as(pb.SetInputsResponse))

    @request
    def character_state(self, character: int, offsets: bool = False, query: bool = False, *,
                        timeout: Optional[float] = None) -> Call[pb.CharacterStateResponse]:
        """Simulation, trajectory, frame, inertializer (per-bone offsets when
        asked), foot locks (``.feet``); with ``query``, the normalized query a
        motion-matching character would search with now (``.query``: pass it
        to :meth:`search` as ``features=``)."""
        return Call("character_state", {"character": int(character), "offsets": offsets, "query": query}, timeout,
                    body_as(pb.CharacterStateResponse))

    @request
    def update_subscription(self, subscription: Union[int, HasId], rate_divisor: int = 1, encoding: Encoding = "float",
                            paused: bool = False, *,
                            timeout: Optional[float] = None) -> Call[pb.SubscriptionChangedResponse]:
        """Replaces a subscription's rate, encoding and pause state."""
        return Call("update_subscription", {"subscription": _subscription_id(subscription),
                                            "rate_divisor": rate_divisor,
                                            "encoding": encoding_value(encoding, "update_subscription.encoding"),
                                            "paused": paused}, timeout, body_as(pb.SubscriptionChangedResponse))

    @request
    def unsubscribe(self, subscription: Union[int, HasId], *,
                    timeout: Optional[float] = None) -> Call[pb.SubscriptionChangedResponse]:
        """Ends a subscription."""
        return Call("unsubscribe", {"subscription": _subscription_id(subscription)}, timeout, self._unsubscribed)

    # ---- the debugger: a character's history and live parameters ----------------
    @request
    def set_history(self, character: int, seconds: float, candidates: int = 0, *,
                    timeout: Optional[float] = None) -> Call[pb.SetHistoryResponse]:
        """Turns the caller's motion-matching character's history on for its last ``seconds`` (at most the
        server's --max-history-seconds; ``candidates`` kept per search, 0: 8, at most 64) or off (0):
        ``.capacity`` ticks, ``.bytes`` counted in the server's limits, ``.tick`` the first it records."""
        return Call("set_history", {"character": int(character), "seconds": float(seconds),
                                    "candidates": int(candidates)}, timeout, body_as(pb.SetHistoryResponse))

    @request
    def character_history(self, character: int, last_seconds: float = 0.0, from_tick: int = 0, to_tick: int = 0,
                          poses: bool = False, queries: bool = False, *,
                          timeout: Optional[float] = None) -> Call[pb.CharacterHistoryResponse]:
        """A span of any character's history: the last ``last_seconds``, or ticks ``from_tick..to_tick``;
        ``.ticks`` oldest first, each with its frame, search reasons, ``.candidates`` (frame, range, cost,
        ``group_costs`` in ``.groups``' order) and, when asked, its pose and query. A span outside what is
        held: :class:`~animserver.errors.OutOfRangeError`."""
        return Call("character_history", {"character": int(character), "last_seconds": float(last_seconds),
                                          "from_tick": int(from_tick), "to_tick": int(to_tick), "poses": poses,
                                          "queries": queries}, timeout, body_as(pb.CharacterHistoryResponse))

    @request
    def set_character_params(self, /, character: int, params: Message = None, *, timeout: Optional[float] = None,
                             **fields: Any) -> Call[pb.SetCharacterParamsResponse]:
        """Changes the caller's motion-matching character's ControllerParams from the next tick on: the
        fields given (``params`` or keywords, e.g. ``inertialize_halflife=0.2``), the others kept; every
        field checked before any is applied. ``.params``: every parameter now in effect. The warps'
        switches and bounds too (``no_root_steering=True`` turns root steering off, ``False`` on again;
        ``root_steering_max=0.1``). A graph character takes ``inertialize_halflife``, the warps' bounds and
        ``no_root_steering`` (root steering is its one warp); anything else is refused, naming it."""
        given: Message = {**(params or {}), **fields} if fields else params
        return Call("set_character_params", {"character": int(character), "params": given}, timeout,
                    body_as(pb.SetCharacterParamsResponse))

    # ---- state machines ---------------------------------------------------------
    @request
    def load_machine(self, name: str, text: Union[str, bytes], replace: bool = False, *,
                     timeout: Optional[float] = None) -> Call[pb.LoadMachineResponse]:
        """Loads a machine from its text (docs/formats.md, "The machine text format"); ``.machine`` its summary."""
        return Call("load_machine", {"name": name, "text": _bytes(text), "replace": replace}, timeout,
                    body_as(pb.LoadMachineResponse))

    @request
    def check_machine(self, name: str, text: Union[str, bytes], database: str = "", *,
                      timeout: Optional[float] = None) -> Call[pb.CheckMachineResponse]:
        """Checks a machine without loading it (``.ok``, ``.diagnostics`` with line and column)."""
        return Call("check_machine", {"name": name, "text": _bytes(text), "database": database}, timeout,
                    body_as(pb.CheckMachineResponse))

    @request
    def list_machines(self, *, timeout: Optional[float] = None) -> Call[pb.ListMachinesResponse]:
        """The loaded machines' summaries (``.machines``)."""
        return Call("list_machines", None, timeout, body_as(pb.ListMachinesResponse))

    @request
    def unload_machine(self, name: str, *, timeout: Optional[float] = None) -> Call[pb.UnloadMachineResponse]:
        """Unloads a machine (running characters keep theirs)."""
        return Call("unload_machine", {"name": name}, timeout, body_as(pb.UnloadMachineResponse))

    @request
    def send_events(self, events: Iterable[Message], *, timeout: Optional[float] = None) -> Call[pb.SendEventsResponse]:
        """Events for machine characters: ``{"character": id, "event": "JUMP"}`` items; ``.tick`` takes them."""
        return Call("send_events", {"events": list(events)}, timeout, body_as(pb.SendEventsResponse))

    @request
    def set_params(self, params: Iterable[Message], *, timeout: Optional[float] = None) -> Call[pb.SetParamsResponse]:
        """Named parameters of machine characters: ``{"character", "name", "value"}`` items."""
        return Call("set_params", {"params": list(params)}, timeout, body_as(pb.SetParamsResponse))

    # ---- motion graphs ----------------------------------------------------------
    @request
    def build_graph(self, database: str = "default", options: Message = None, *,
                    timeout: Optional[float] = None) -> Call[pb.BuildGraphResponse]:
        """Starts a graph build on the server's pool (``.graph``: its progress). ``options``: GraphOptions
        fields, e.g. ``{"threshold": 0.06, "slide": "off"}`` (slide: auto, the default, on or off; the
        description reports it as resolved, on or off)."""
        return Call("build_graph", {"database": database, "options": options}, timeout,
                    body_as(pb.BuildGraphResponse))

    @request
    def describe_graph(self, database: str = "default", transitions: bool = False, matrix: bool = False, *,
                       timeout: Optional[float] = None) -> Call[pb.DescribeGraphResponse]:
        """The graph (or the build's progress); transitions and the distance picture when asked."""
        return Call("describe_graph", {"database": database, "transitions": transitions, "matrix": matrix},
                    timeout, body_as(pb.DescribeGraphResponse))

    @request
    def query_graph(self, /, database: str, points: Iterable[Sequence[float]], closed: bool = False, *,
                    timeout: Optional[float] = None, **fields: Any) -> Call[pb.QueryGraphResponse]:
        """A walk planned along a polyline of (x, z) points; its steps and error. ``fields``: the rest of
        QueryGraphRequest, e.g. ``seconds=20.0, options={"horizon": 2.0, "disable_memory": True}``
        (PathOptions: the planner's refinements are on unless disabled: ``disable_warm``,
        ``disable_bound``, ``disable_memory``)."""
        return Call("query_graph", {"database": database, "points": [{"x": p[0], "z": p[1]} for p in points],
                                    "closed": closed, **fields}, timeout, body_as(pb.QueryGraphResponse))

    @request
    def set_paths(self, paths: Iterable[Message], *, timeout: Optional[float] = None) -> Call[pb.SetPathsResponse]:
        """Paths for graph characters: ``{"character", "points": [{"x", "z"}...], "closed"}`` items."""
        return Call("set_paths", {"paths": list(paths)}, timeout, body_as(pb.SetPathsResponse))

    # ---- physics ----------------------------------------------------------------
    @request
    def inverse_dynamics(self, /, database: str, start: int, stop: int, *, timeout: Optional[float] = None,
                         **options: Any) -> Call[InverseDynamics]:
        """Joint torques, per-foot ground forces, the root's residual and power
        over frames ``[start, stop)`` of one range, as numpy arrays. ``options``:
        the rest of InverseDynamicsRequest (``max_root_torque``,
        ``max_root_force``, ``contact_height``, ``contact_speed``, ``step``,
        ``total_mass``; 0 or absent: the server's default)."""
        return Call("inverse_dynamics", {"database": database, "start": start, "stop": stop, **options}, timeout,
                    InverseDynamics.from_response)

    @request
    def character_inverse_dynamics(self, /, character: int, seconds: float = 0.0, from_tick: int = 0, to_tick: int = 0,
                                   *, timeout: Optional[float] = None, **options: Any) -> Call[InverseDynamics]:
        """The same along the caller's character's recent motion, as its history
        recorded it (:meth:`set_history` on): its last ``seconds``, or ticks
        ``from_tick..to_tick``, at the tick rate. Another connection's
        character, a history off or a span it does not hold (not yet shown,
        no longer held, reversed, longer than the history or than
        max_pose_frames): the server's error naming the field."""
        return Call("inverse_dynamics", {"character": _not_negative(character, "character"), "seconds": float(seconds),
                                         "from_tick": _not_negative(from_tick, "from_tick"),
                                         "to_tick": _not_negative(to_tick, "to_tick"), **options}, timeout,
                    InverseDynamics.from_response)

    @request
    def marker_fit(self, /, database: str, markers: Sequence[Union[str, Tuple[str, Sequence[float]]]],
                   positions: npt.ArrayLike, *, missing: Optional[npt.ArrayLike] = None,
                   timeout: Optional[float] = None, **options: Any) -> Call[MarkerFit]:
        """Poses from marker positions over frames, fitted through the body.
        ``markers``: a bone name (offset found from the first frame) or
        ``(bone, (x, y, z))`` (m, in the bone's frame) each; ``positions``:
        (frames, markers, 3) m, world, y up; ``missing``: (frames, markers)
        bool or None. ``options``: the rest of MarkerFitRequest
        (``frame_time``, ``marker_halflife``, ``prior_halflife``,
        ``outlier_distance``, ``far_ratio``, ``settle_time``, ``scale``,
        ``estimate_scale``, ``total_mass``; 0 or absent: the default)."""
        p = np.asarray(positions, dtype=np.float32)
        if p.ndim != 3 or p.shape[1] != len(markers) or p.shape[2] != 3:
            raise ValueError(f"marker_fit: positions must be (frames, {len(markers)}, 3), not {p.shape}")
        ms: List[Dict[str, Any]] = [{"bone": m} if isinstance(m, str) else
                                    {"bone": m[0], "offset": [float(v) for v in m[1]]} for m in markers]
        body: Dict[str, Any] = {"database": database, "markers": ms, "frames": int(p.shape[0]),
                                "positions": p.reshape(-1).tolist(), **options}
        if missing is not None:
            body["missing"] = np.asarray(missing, dtype=bool).reshape(-1).tolist()
        return Call("marker_fit", body, timeout, MarkerFit.from_response)

    # ---- poses from tracked points ----------------------------------------------
    @request
    def align(self, source: npt.ArrayLike, target: npt.ArrayLike, weights: Sequence[float] = (),
              mode: AlignModeName = "rigid", *, timeout: Optional[float] = None) -> Call[pb.AlignResponse]:
        """The transform taking (n, 3) ``source`` onto ``target`` (mode rigid, similarity or yaw)."""
        return Call("align", {"source": _vec3s(source), "target": _vec3s(target), "weights": list(weights),
                              "mode": mode}, timeout, body_as(pb.AlignResponse))

    @request
    def fit_pose(self, database: str, trackers: Iterable[Message], params: Message = None, *,
                 timeout: Optional[float] = None) -> Call[pb.FitPoseResponse]:
        """A full-body pose from tracked bones: ``{"bone", "position": {"x", "y", "z"}, ...}`` items."""
        return Call("fit_pose", {"database": database, "trackers": list(trackers), "params": params}, timeout,
                    body_as(pb.FitPoseResponse))

    @request
    def set_trackers(self, characters: Iterable[Message], *, tick: int = 0,
                     timeout: Optional[float] = None) -> Call[pb.SetTrackersResponse]:
        """Trackers of tracker characters: ``{"character", "trackers": [...]}`` items, in creation order;
        measured for server ``tick`` (0: the next; a tick ahead, at most 31 after the next, waits for it;
        one already past applies at the next). The response's ``.tick`` is when they apply."""
        return Call("set_trackers", {"characters": list(characters), "tick": int(tick)}, timeout,
                    body_as(pb.SetTrackersResponse))

    # ---- physical characters (MODE_PHYSICAL) ----------------------------------------
    @request
    def push(self, character: int, bone: Union[str, int], *, impulse: Optional[Sequence[float]] = None,
             force: Optional[Sequence[float]] = None, duration: float = 0.0,
             point: Sequence[float] = (0.0, 0.0, 0.0), tick: int = 0,
             timeout: Optional[float] = None) -> Call[pb.PushResponse]:
        """Pushes a physical character's bone (a name or an index): an ``impulse``
        (N s, world x, y, z) at once, or a ``force`` (N) for ``duration`` seconds, at
        ``point`` (m, the bone's frame); at server ``tick`` (0: the next). The
        response's ``.tick`` is when it applies. About 40 N s at the chest
        staggers a standing character, 300 N s makes it fall."""
        fields: Dict[str, Any] = {"character": int(character), "point": _vec3s([point])[0], "tick": int(tick)}
        if isinstance(bone, str):
            fields["bone"] = bone
        else:
            fields["bone_index"] = int(bone)
        if impulse is not None:
            fields["impulse"] = _vec3s([impulse])[0]
        if force is not None:
            fields["force"] = _vec3s([force])[0]
            fields["duration"] = float(duration)
        return Call("push", fields, timeout, body_as(pb.PushResponse))

    @request
    def set_body_modes(self, character: int, parts: Iterable[Message] = (), root: Message = None,
                       reset: bool = False, *, timeout: Optional[float] = None) -> Call[pb.SetBodyModesResponse]:
        """Drives of a physical character's parts: ``{"bone", "descendants", "mode":
        "limp", "strength": {"halflife", "damping_ratio", "max_torque"}, "duration"}``
        items; ``root``: the stabiliser ``{"mode", "halflife", "damping_ratio",
        "max_force", "max_torque", "duration"}`` (mode ``"limp"`` drops it)."""
        return Call("set_body_modes", {"character": int(character), "parts": list(parts), "root": root,
                                       "reset": reset}, timeout, body_as(pb.SetBodyModesResponse))

    @request
    def recover(self, character: int, *, timeout: Optional[float] = None) -> Call[pb.RecoverResponse]:
        """Blends a simulated physical character back to motion matching now."""
        return Call("recover", {"character": int(character)}, timeout, body_as(pb.RecoverResponse))

    # ---- any request by name ----------------------------------------------------
    @request
    def call(self, /, kind: str, fields: Message = None, *, timeout: Optional[float] = None, **kw: Any) -> Call[Any]:
        """Any request by its name in ``Request.body``; returns the response body message."""
        return Call(kind, fields if fields is not None else kw, timeout, body_as(object))
