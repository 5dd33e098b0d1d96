"""Every request, one small method each, shared by the blocking and asyncio clients.

A method builds the request's fields and hands them to ``_call(kind, fields,
timeout, convert)``; ``kind`` is the name of the request's field in
``Request.body`` in the proto. The blocking client returns the result, the
asyncio client an awaitable of it. A request added to the proto needs one
line here (``tests/interop/test_python_client.py`` fails until it has one)
and can be sent by name meanwhile: ``client.call("kind", field=value)``.

Fields take messages, mappings (``{"frame": 12}``) or, for repeated messages,
lists of either; see ``proto/animserver.proto`` for each field's meaning.
Results are the proto's response messages, except where numbers belong in
numpy: ``pose`` returns :class:`~animserver.poses.PoseFrames`, ``search`` and
``batch_search`` :class:`SearchResult`, ``subscribe`` a subscription object.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Union

import numpy as np

from ._proto import pb
from .poses import Pose, PoseFrames

__all__ = ["Requests", "SearchResult", "Match", "PROTOCOL_VERSION", "encoding_value", "pose_ref", "pose_state",
           "stick", "velocity", "goal"]

PROTOCOL_VERSION = 1

Message = Any  # a generated protobuf message
PoseRefLike = Union[int, Mapping[str, Any], Message]


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
    features: Optional[np.ndarray] = None


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
    query: Optional[np.ndarray] = None

    @classmethod
    def from_proto(cls, result: Message, database_version: int) -> "SearchResult":
        def floats(values: Any) -> Optional[np.ndarray]:
            return np.array(values, dtype=np.float32) if len(values) else None
        matches = [Match(m.frame, m.range, m.range_name, m.cost, Pose.from_proto(m.pose) if m.HasField("pose") else None,
                         floats(m.features)) for m in result.matches]
        return cls(database_version, matches, {g.name: g.cost for g in result.explanation}, result.margin,
                   floats(result.query))

    @property
    def best(self) -> Match:
        """The lowest-cost match."""
        return self.matches[0]


def encoding_value(encoding: Union[str, int]) -> int:
    """``"float"``, ``"quantized"`` or a PoseEncoding value -> the value."""
    if isinstance(encoding, str):
        return pb.PoseEncoding.Value("ENCODING_" + encoding.upper())
    return int(encoding)


def pose_state(positions: Any, rotations: Any, velocities: Any = None, angular_velocities: Any = None) -> Message:
    """A ``pb.PoseState`` from (n, 3) / (n, 4) arrays (velocities default to 0)."""
    positions = np.asarray(positions, dtype=np.float32).reshape(-1, 3)
    n = len(positions)
    zeros = np.zeros((n, 3), np.float32)
    return pb.PoseState(positions=positions.ravel().tolist(),
                        rotations=np.asarray(rotations, np.float32).ravel().tolist(),
                        velocities=np.asarray(zeros if velocities is None else velocities, np.float32).ravel().tolist(),
                        angular_velocities=np.asarray(zeros if angular_velocities is None else angular_velocities,
                                                      np.float32).ravel().tolist())


def pose_ref(ref: PoseRefLike) -> Message:
    """A ``pb.PoseRef``: an int is a database frame, a PoseState an explicit pose."""
    if isinstance(ref, (int, np.integer)):
        return pb.PoseRef(frame=int(ref))
    if isinstance(ref, pb.PoseState):
        return pb.PoseRef(pose=ref)
    if isinstance(ref, Mapping) and not ({"frame", "pose"} & set(ref)):
        return pb.PoseRef(pose=ref)
    return ref if isinstance(ref, pb.PoseRef) else pb.PoseRef(**ref)


def stick(character: int, x: float, z: float, camera_azimuth: float = 0.0, strafe: bool = False) -> Message:
    """The seed's gamepad input: stick (x right, z forward, length <= 1)
    relative to the camera azimuth (radians about +Y)."""
    return pb.CharacterInput(character=character, stick=pb.StickInput(x=x, z=z, camera_azimuth=camera_azimuth,
                                                                      strafe=strafe))


def velocity(character: int, x: float, z: float, facing: float) -> Message:
    """A desired world velocity (m/s) and facing (radians about +Y)."""
    return pb.CharacterInput(character=character, velocity=pb.VelocityInput(x=x, z=z, facing=facing))


def goal(character: int, x: float, z: float, speed: float = 1.4) -> Message:
    """Walk to (x, z) at ``speed`` m/s, slowing on arrival, and stop there."""
    return pb.CharacterInput(character=character, goal=pb.GoalInput(x=x, z=z, speed=speed))


def _bytes(text: Union[str, bytes]) -> bytes:
    return text.encode() if isinstance(text, str) else bytes(text)


def _vec3s(points: Any) -> List[Dict[str, float]]:
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
        merged.ClearField(name)
    merged.MergeFrom(pb.SearchQuery(**{k: v for k, v in fields.items() if v is not None}))
    return merged


def _search_result(response: Message) -> SearchResult:
    return SearchResult.from_proto(response.result, response.database_version)


def _batch_results(response: Message) -> List[SearchResult]:
    return [SearchResult.from_proto(r, response.database_version) for r in response.results]


def _subscription_id(subscription: Any) -> int:
    return int(getattr(subscription, "id", subscription))


class Requests:
    """The request methods; a client class provides ``_call`` and
    ``_subscription``. Every method takes ``timeout`` (seconds; None: the
    client's default) and raises :class:`~animserver.errors.AnimError` (the
    server's code and message) on failure."""

    auth_token: Optional[str] = None
    client_name: str = "animserver-python"

    def _call(self, kind: str, fields: Any, timeout: Optional[float] = None,
              convert: Optional[Callable[[Message], Any]] = None) -> Any:
        raise NotImplementedError

    def _subscription(self, response: Message, rotations_only: bool) -> Any:
        raise NotImplementedError

    # ---- session ----------------------------------------------------------------
    def hello(self, client_name: Optional[str] = None, auth_token: Optional[str] = None,
              protocol_version: int = PROTOCOL_VERSION, *, timeout: Optional[float] = None) -> Message:
        """Handshake (``pb.HelloResponse``: versions, capabilities, limits, admin);
        carries the client's auth token unless another is given."""
        return self._call("hello", {"protocol_version": protocol_version,
                                    "client_name": client_name or self.client_name,
                                    "auth_token": self.auth_token if auth_token is None else auth_token},
                          timeout, getattr(self, "_hello_done", None))

    def ping(self, payload: bytes = b"", *, timeout: Optional[float] = None) -> Message:
        """Echoes ``payload`` with the server's clock (``pb.PingResponse``)."""
        return self._call("ping", {"payload": payload}, timeout)

    def server_stats(self, *, timeout: Optional[float] = None) -> Message:
        """The server's counters (``pb.ServerStatsResponse``)."""
        return self._call("server_stats", None, timeout)

    def shutdown(self, *, timeout: Optional[float] = None) -> Message:
        """Graceful shutdown (admin)."""
        return self._call("shutdown", None, timeout)

    # ---- databases --------------------------------------------------------------
    def list_databases(self, *, timeout: Optional[float] = None) -> Message:
        """Every loaded database's summary (``.databases``)."""
        return self._call("list_databases", None, timeout)

    def describe_database(self, name: str = "default", *, timeout: Optional[float] = None) -> Message:
        """Skeleton (``bones``: names, parents), ranges and tags, feature schema, contact bones."""
        return self._call("describe_database", {"name": name}, timeout)

    def load_database(self, name: str, *, timeout: Optional[float] = None) -> Message:
        """Loads ``NAME.animdb`` from the server's data directory (admin)."""
        return self._call("load_database", {"name": name}, timeout)

    def reload_database(self, name: str, *, timeout: Optional[float] = None) -> Message:
        """Rebuilds ``name`` from its file and swaps it in (admin)."""
        return self._call("reload_database", {"name": name}, timeout)

    def unload_database(self, name: str, *, timeout: Optional[float] = None) -> Message:
        """Unloads ``name`` (admin)."""
        return self._call("unload_database", {"name": name}, timeout)

    # ---- search and poses -------------------------------------------------------
    def search(self, database: str = "default", query: Any = None, *, timeout: Optional[float] = None,
               **query_fields: Any) -> SearchResult:
        """k nearest frames: ``query`` a ``pb.SearchQuery`` or mapping, and/or its fields
        as keywords (``from_frame={"frame": 100}, k=3, explain=True``); a keyword adds
        to a mapping (and overrides the same field), never silently dropped."""
        return self._call("search", {"database": database, "query": _merge_query(query, query_fields)}, timeout,
                          _search_result)

    def batch_search(self, database: str, queries: Iterable[Any], *,
                     timeout: Optional[float] = None) -> List[SearchResult]:
        """Many queries in one message, answered in order."""
        return self._call("batch_search", {"database": database, "queries": list(queries)}, timeout, _batch_results)

    def pose(self, database: str, frame: int, count: int = 1, *, local: bool = False, global_: bool = False,
             velocities: bool = False, timeout: Optional[float] = None) -> PoseFrames:
        """Frames ``frame .. frame + count - 1`` as numpy arrays (local pose when
        neither ``local`` nor ``global_`` is asked)."""
        return self._call("pose", {"database": database, "frame": frame, "count": count,
                                   "options": {"local": local, "global": global_, "velocities": velocities}},
                          timeout, PoseFrames.from_response)

    # ---- inertialization and springs -------------------------------------------
    def inertialize_transition(self, source: PoseRefLike, destination: PoseRefLike, state: Any = None,
                               database: str = "", *, timeout: Optional[float] = None) -> Message:
        """Offsets and anchor that keep the displayed pose continuous from
        ``source`` to ``destination`` (frames or ``pose_state``)."""
        return self._call("inertialize_transition", {"database": database, "source": pose_ref(source),
                                                     "destination": pose_ref(destination), "state": state}, timeout)

    def inertialize_evaluate(self, state: Any, input: PoseRefLike, halflife: float, t: float, database: str = "",
                             *, timeout: Optional[float] = None) -> Message:
        """Offsets ``t`` seconds later and the displayed pose for ``input``."""
        return self._call("inertialize_evaluate", {"database": database, "state": state, "input": pose_ref(input),
                                                   "halflife": halflife, "t": t}, timeout)

    def transition_cost(self, source: PoseRefLike, destination: PoseRefLike, halflife: float,
                        bones: Sequence[str] = (), database: str = "", *,
                        timeout: Optional[float] = None) -> Message:
        """Exact and approximate displacement of an inertialized transition."""
        return self._call("transition_cost", {"database": database, "source": pose_ref(source),
                                              "destination": pose_ref(destination), "halflife": halflife,
                                              "bones": list(bones)}, timeout)

    def spring_tune(self, *, fraction: Any = None, to_constraint: Any = None, from_constraint: Any = None,
                    timeout: Optional[float] = None) -> Message:
        """Spring half-life/gains for a fraction at a time, or gains <-> ERP/CFM (one problem)."""
        return self._call("spring_tune", {"fraction": fraction, "to_constraint": to_constraint,
                                          "from_constraint": from_constraint}, timeout)

    # ---- characters and streams -------------------------------------------------
    def create_characters(self, database: str = "default", placements: Iterable[Any] = (), params: Any = None,
                          mode: int = 0, *, timeout: Optional[float] = None, **fields: Any) -> Message:
        """Characters (``.characters``: ids in placement order); placements are
        ``{"x", "z", "facing", "start_frame": {"frame": f}}`` mappings or messages."""
        return self._call("create_characters", {"database": database, "placements": list(placements),
                                                "params": params, "mode": mode, **fields}, timeout)

    def destroy_characters(self, characters: Iterable[int], *, timeout: Optional[float] = None) -> Message:
        """Destroys the caller's own characters (``.destroyed``)."""
        return self._call("destroy_characters", {"characters": [int(c) for c in characters]}, timeout)

    def set_inputs(self, inputs: Iterable[Any], *, timeout: Optional[float] = None) -> Message:
        """Inputs for many characters (:func:`stick`, :func:`velocity`, :func:`goal`)."""
        return self._call("set_inputs", {"inputs": list(inputs)}, timeout)

    def character_state(self, character: int, offsets: bool = False, query: bool = False, *,
                        timeout: Optional[float] = None) -> Message:
        """Simulation, trajectory, frame, inertializer (per-bone offsets when
        asked), foot locks (``.feet``); with ``query``, the normalized query a
        motion-matching character would search with now (``.query``: pass it
        to :meth:`search` as ``features=``)."""
        return self._call("character_state", {"character": int(character), "offsets": offsets, "query": query},
                          timeout)

    def subscribe(self, characters: Iterable[int] = (), owned: bool = False, rate_divisor: int = 1,
                  encoding: Union[str, int] = "float", global_positions: bool = False, rotations_only: bool = False,
                  *, timeout: Optional[float] = None) -> Any:
        """A pose stream of these characters and/or all the caller owns: an
        iterable (asyncio client: async iterable) of StreamFrames."""
        return self._call("subscribe", {"characters": [int(c) for c in characters], "owned": owned,
                                        "rate_divisor": rate_divisor, "encoding": encoding_value(encoding),
                                        "global_positions": global_positions, "rotations_only": rotations_only},
                          timeout, lambda r: self._subscription(r, rotations_only))

    def update_subscription(self, subscription: Any, rate_divisor: int = 1, encoding: Union[str, int] = "float",
                            paused: bool = False, *, timeout: Optional[float] = None) -> Message:
        """Replaces a subscription's rate, encoding and pause state."""
        return self._call("update_subscription", {"subscription": _subscription_id(subscription),
                                                  "rate_divisor": rate_divisor, "encoding": encoding_value(encoding),
                                                  "paused": paused}, timeout)

    def unsubscribe(self, subscription: Any, *, timeout: Optional[float] = None) -> Message:
        """Ends a subscription."""
        return self._call("unsubscribe", {"subscription": _subscription_id(subscription)}, timeout,
                          getattr(self, "_unsubscribed", None))

    # ---- state machines ---------------------------------------------------------
    def load_machine(self, name: str, text: Union[str, bytes], replace: bool = False, *,
                     timeout: Optional[float] = None) -> Message:
        """Loads a machine from its text (README "The machine text format"); ``.machine`` its summary."""
        return self._call("load_machine", {"name": name, "text": _bytes(text), "replace": replace}, timeout)

    def check_machine(self, name: str, text: Union[str, bytes], database: str = "", *,
                      timeout: Optional[float] = None) -> Message:
        """Checks a machine without loading it (``.ok``, ``.diagnostics`` with line and column)."""
        return self._call("check_machine", {"name": name, "text": _bytes(text), "database": database}, timeout)

    def list_machines(self, *, timeout: Optional[float] = None) -> Message:
        """The loaded machines' summaries (``.machines``)."""
        return self._call("list_machines", None, timeout)

    def unload_machine(self, name: str, *, timeout: Optional[float] = None) -> Message:
        """Unloads a machine (running characters keep theirs)."""
        return self._call("unload_machine", {"name": name}, timeout)

    def send_events(self, events: Iterable[Any], *, timeout: Optional[float] = None) -> Message:
        """Events for machine characters: ``{"character": id, "event": "JUMP"}`` items; ``.tick`` takes them."""
        return self._call("send_events", {"events": list(events)}, timeout)

    def set_params(self, params: Iterable[Any], *, timeout: Optional[float] = None) -> Message:
        """Named parameters of machine characters: ``{"character", "name", "value"}`` items."""
        return self._call("set_params", {"params": list(params)}, timeout)

    # ---- motion graphs ----------------------------------------------------------
    def build_graph(self, database: str = "default", options: Any = None, *,
                    timeout: Optional[float] = None) -> Message:
        """Starts a graph build on the server's pool (``.graph``: its progress). ``options``: GraphOptions
        fields, e.g. ``{"threshold": 0.06, "slide": "GRAPH_SLIDE_OFF"}`` (slide: GRAPH_SLIDE_AUTO, the
        default, _ON or _OFF; the description reports it as resolved, on or off)."""
        return self._call("build_graph", {"database": database, "options": options}, timeout)

    def describe_graph(self, database: str = "default", transitions: bool = False, matrix: bool = False, *,
                       timeout: Optional[float] = None) -> Message:
        """The graph (or the build's progress); transitions and the distance picture when asked."""
        return self._call("describe_graph", {"database": database, "transitions": transitions, "matrix": matrix},
                          timeout)

    def query_graph(self, database: str, points: Iterable[Sequence[float]], closed: bool = False, *,
                    timeout: Optional[float] = None, **fields: Any) -> Message:
        """A walk planned along a polyline of (x, z) points; its steps and error. ``fields``: the rest of
        QueryGraphRequest, e.g. ``seconds=20.0, options={"horizon": 2.0, "disable_memory": True}``
        (PathOptions: the planner's refinements are on unless disabled: ``disable_warm``,
        ``disable_bound``, ``disable_memory``)."""
        return self._call("query_graph", {"database": database, "points": [{"x": p[0], "z": p[1]} for p in points],
                                          "closed": closed, **fields}, timeout)

    def set_paths(self, paths: Iterable[Any], *, timeout: Optional[float] = None) -> Message:
        """Paths for graph characters: ``{"character", "points": [{"x", "z"}...], "closed"}`` items."""
        return self._call("set_paths", {"paths": list(paths)}, timeout)

    # ---- poses from tracked points ----------------------------------------------
    def align(self, source: Any, target: Any, weights: Sequence[float] = (), mode: Union[str, int] = "rigid", *,
              timeout: Optional[float] = None) -> Message:
        """The transform taking (n, 3) ``source`` onto ``target`` (mode rigid, similarity or yaw)."""
        mode = pb.AlignMode.Value("ALIGN_" + mode.upper()) if isinstance(mode, str) else int(mode)
        return self._call("align", {"source": _vec3s(source), "target": _vec3s(target), "weights": list(weights),
                                    "mode": mode}, timeout)

    def fit_pose(self, database: str, trackers: Iterable[Any], params: Any = None, *,
                 timeout: Optional[float] = None) -> Message:
        """A full-body pose from tracked bones: ``{"bone", "position": {"x", "y", "z"}, ...}`` items."""
        return self._call("fit_pose", {"database": database, "trackers": list(trackers), "params": params}, timeout)

    def set_trackers(self, characters: Iterable[Any], *, timeout: Optional[float] = None) -> Message:
        """Trackers of tracker characters: ``{"character", "trackers": [...]}`` items, in creation order."""
        return self._call("set_trackers", {"characters": list(characters)}, timeout)

    # ---- any request by name ----------------------------------------------------
    def call(self, kind: str, fields: Any = None, *, timeout: Optional[float] = None, **kw: Any) -> Any:
        """Any request by its name in ``Request.body``; returns the response body message."""
        return self._call(kind, fields if fields is not None else kw, timeout)
