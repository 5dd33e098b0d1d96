"""Poses as numpy arrays, for both stream encodings and for database frames.

Conventions (docs/protocol.md, "Encodings and conventions"): bones in the
database's order (``describe_database().bones``, parents before children),
vectors as ``(..., 3)`` float32 arrays, rotations as unit quaternions
``(..., 4)`` in **w, x, y, z** order. In a stream, bone 0 (the root) is in
world space and the other bones are local to their parent; database frames
(``pose`` requests) put bone 0 in its clip's animation space.

The quantized encoding is decoded here in numpy, vectorised over every
character of a frame, from docs/protocol.md alone:

- the root's world position: 3 x int32 little-endian, steps of 1e-4 m;
- each bone's rotation: 7 bytes, the low 56 bits of a little-endian uint64;
  bits 0-15, 16-31, 32-47 are three int16 components (in w, x, y, z order
  skipping the dropped one), each ``int16 / 32767 / sqrt(2)``; bits 48-49 the
  index of the dropped largest component, ``sqrt(max(0, 1 - sum of squares))``;
- unless ``rotations_only``: bones 1..n-1's local positions, 3 x int16, steps
  of 1/8192 m.

So a pose is ``12 + 7n + 6(n - 1)`` bytes (``12 + 7n`` with rotations only).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, List, Optional, Protocol, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

from . import errors
from ._proto import pb

__all__ = ["decode_quantized", "quantized_bones", "Pose", "PoseFrames", "StreamFrame", "CharacterPose", "CharacterEntered",
           "forward_kinematics", "quat_mul", "quat_rotate", "Floats", "Parents", "HasParents"]

Floats = npt.NDArray[np.float32]
"""The arrays of poses: float32, (..., 3) vectors or (..., 4) w, x, y, z quaternions."""
Parents = Union[Sequence[int], npt.NDArray[np.integer[Any]]]
"""Each bone's parent index (-1 for the root), parents before children."""


class HasParents(Protocol):
    """A skeleton (:class:`~animserver.skeleton.Skeleton`): anything with a ``parents`` array."""
    @property
    def parents(self) -> npt.NDArray[np.int32]: ...

_ROOT_STEP = 1e-4
_POSITION_STEP = 1.0 / 8192.0
_COMPONENT_SCALE = 1.0 / (32767.0 * np.sqrt(2.0))
# For each dropped index (0 w, 1 x, 2 y, 3 z): where the three kept components go.
_KEPT = np.array([[1, 2, 3], [0, 2, 3], [0, 1, 3], [0, 1, 2]], dtype=np.intp)


def quantized_bones(nbytes: int, rotations_only: bool) -> int:
    """The bone count of a quantized pose of ``nbytes`` bytes; ValueError when
    no bone count has that size."""
    body = nbytes - 12 if rotations_only else nbytes - 12 + 6
    per_bone = 7 if rotations_only else 13
    if body < per_bone or body % per_bone:
        raise ValueError(f"{nbytes} bytes is no quantized pose ({'12 + 7n' if rotations_only else '12 + 13n - 6'})")
    return body // per_bone


def decode_quantized(blobs: Sequence[bytes], rotations_only: bool = False) -> Tuple[Floats, Floats]:
    """Decodes quantized poses of one size, all at once.

    Returns ``positions`` (C, n, 3) float32 (bone 0 the root in world space,
    the others local; (C, 1, 3) with ``rotations_only``) and ``rotations``
    (C, n, 4) float32, w, x, y, z."""
    count = len(blobs)
    if count == 0:
        return np.zeros((0, 0, 3), np.float32), np.zeros((0, 0, 4), np.float32)
    size = len(blobs[0])
    if any(len(b) != size for b in blobs):
        raise ValueError("decode_quantized: poses of different sizes (group them by size)")
    n = quantized_bones(size, rotations_only)
    raw = np.frombuffer(b"".join(blobs), dtype=np.uint8).reshape(count, size)

    root = raw[:, 0:12].copy().view("<i4").astype(np.float64) * _ROOT_STEP  # (C, 3)

    codes = np.zeros((count, n, 8), dtype=np.uint8)
    codes[:, :, :7] = raw[:, 12:12 + 7 * n].reshape(count, n, 7)
    code = codes.view("<u8")[..., 0]  # (C, n) the 56-bit codes
    kept = np.stack([((code >> np.uint64(16 * i)) & np.uint64(0xFFFF)).astype(np.uint16).view(np.int16)
                     for i in range(3)], axis=-1).astype(np.float64) * _COMPONENT_SCALE  # (C, n, 3)
    dropped = ((code >> np.uint64(48)) & np.uint64(3)).astype(np.intp)  # (C, n)
    rotations = np.empty((count, n, 4), dtype=np.float64)
    np.put_along_axis(rotations, _KEPT[dropped], kept, axis=-1)
    largest = np.sqrt(np.maximum(0.0, 1.0 - np.einsum("cni,cni->cn", kept, kept)))
    np.put_along_axis(rotations, dropped[..., None], largest[..., None], axis=-1)

    if rotations_only:
        positions = root[:, None, :]
    else:
        local = raw[:, 12 + 7 * n:].copy().view("<i2").reshape(count, n - 1, 3).astype(np.float64) * _POSITION_STEP
        positions = np.concatenate([root[:, None, :], local], axis=1)
    return positions.astype(np.float32), rotations.astype(np.float32)


def _repr(obj: Any) -> str:
    """Shapes instead of values: poses are big."""
    parts = []
    for name, value in vars(obj).items():
        if name == "message" or value is None:
            continue
        if isinstance(value, np.ndarray) and value.size > 8:
            parts.append(f"{name}=<{value.dtype} {value.shape}>")
        else:
            parts.append(f"{name}={value!r}")
    return f"{type(obj).__name__}({', '.join(parts)})"


def _floats(values: Any, width: int) -> Optional[Floats]:
    if len(values) == 0:
        return None
    return np.asarray(values, dtype=np.float32).reshape(-1, width)


@dataclass(repr=False)
class Pose:
    """One database frame's pose (a ``pose`` request's frame or a search
    match's). Arrays are (n, 3) or (n, 4); a part not asked for is None."""
    frame: int
    local_positions: Optional[Floats] = None
    local_rotations: Optional[Floats] = None
    local_velocities: Optional[Floats] = None
    local_angular_velocities: Optional[Floats] = None
    global_positions: Optional[Floats] = None
    global_rotations: Optional[Floats] = None
    global_velocities: Optional[Floats] = None
    global_angular_velocities: Optional[Floats] = None
    contacts: Optional[npt.NDArray[np.bool_]] = None  # (number of contact bones,) bool

    __repr__ = _repr

    @classmethod
    def from_proto(cls, pose: Any) -> "Pose":
        """From a ``pb.Pose``."""
        out = cls(frame=pose.frame)
        for name in _POSE_ARRAYS:
            setattr(out, name, _floats(getattr(pose, name), 4 if name.endswith("rotations") else 3))
        out.contacts = np.asarray(pose.contacts, dtype=bool) if len(pose.contacts) else None
        return out


_POSE_ARRAYS = ("local_positions", "local_rotations", "local_velocities", "local_angular_velocities",
                "global_positions", "global_rotations", "global_velocities", "global_angular_velocities")


@dataclass(repr=False)
class PoseFrames:
    """Consecutive database frames stacked: arrays (F, n, 3) / (F, n, 4),
    ``frames`` (F,), ``contacts`` (F, contact bones) bool; parts not asked
    for are None. ``database_version`` names the data that answered."""
    database_version: int
    frames: npt.NDArray[np.uint32]
    local_positions: Optional[Floats] = None
    local_rotations: Optional[Floats] = None
    local_velocities: Optional[Floats] = None
    local_angular_velocities: Optional[Floats] = None
    global_positions: Optional[Floats] = None
    global_rotations: Optional[Floats] = None
    global_velocities: Optional[Floats] = None
    global_angular_velocities: Optional[Floats] = None
    contacts: Optional[npt.NDArray[np.bool_]] = None

    __repr__ = _repr

    @classmethod
    def from_response(cls, response: Any) -> "PoseFrames":
        """From a ``pb.PoseResponse``."""
        poses = response.poses
        out = cls(database_version=response.database_version,
                  frames=np.fromiter((p.frame for p in poses), dtype=np.uint32, count=len(poses)))
        if not poses:
            return out
        for name in _POSE_ARRAYS:
            if len(getattr(poses[0], name)):
                width = 4 if name.endswith("rotations") else 3
                flat = np.asarray([v for p in poses for v in getattr(p, name)], dtype=np.float32)
                setattr(out, name, flat.reshape(len(poses), -1, width))
        if len(poses[0].contacts):
            out.contacts = np.asarray([list(p.contacts) for p in poses], dtype=bool)
        return out

    def __len__(self) -> int:
        return len(self.frames)

    def __getitem__(self, i: int) -> Pose:
        """Frame ``i`` as a Pose."""
        pose = Pose(frame=int(self.frames[i]))
        for name in _POSE_ARRAYS + ("contacts",):
            value = getattr(self, name)
            setattr(pose, name, None if value is None else value[i])
        return pose


@dataclass(repr=False)
class CharacterPose:
    """One character's row of a :class:`StreamFrame`: its id, the database
    frame playing, its contact bits, whether a transition started this tick,
    and its arrays cut to its own bone count (no NaN padding): ``positions``
    (n, 3) (bone 0 the root in world space, the others local; (1, 3) with
    rotations only), ``rotations`` (n, 4) w, x, y, z, ``global_positions``
    (n, 3) when the subscription asked for them. Arrays are views into the
    frame's."""
    character: int
    frame: int
    contacts: int
    transition: bool
    positions: Floats
    rotations: Floats
    global_positions: Optional[Floats] = None
    physics: int = 0  # a physical character's PhysicsState (pb.PHYSICS_KINEMATIC, ...); 0 for other kinds

    __repr__ = _repr


@dataclass(frozen=True)
class CharacterEntered:
    """A character that came into a region subscription's area: what drawing
    it needs (its database, that database's content version, its bone
    count). Its pose is in the frame that announces it."""
    character: int
    database: str
    database_version: int
    bones: int


@dataclass(repr=False)
class StreamFrame:
    """One StreamMessage of a subscription, decoded.

    Per character c: ``characters[c]`` (id), ``frames[c]`` (database frame
    playing), ``contacts[c]`` (bit i: contact bone i planted), ``transitions[c]``
    (an inertialized transition started this tick), ``positions[c]`` (n, 3):
    bone 0 the root in world space, the others local to their parent ((1, 3)
    with rotations only), ``rotations[c]`` (n, 4) w, x, y, z local (bone 0 in
    world space), ``global_positions[c]`` (n, 3) world space when the
    subscription asked for them, ``physics[c]`` a physical character's
    PhysicsState (``pb.PHYSICS_POWERED``, ...; 0 for other kinds). Characters
    on databases of different bone counts are padded with NaN to the largest
    (``bones[c]`` says how many).

    Region subscriptions (``subscribe_region``): ``entered`` lists the
    characters that came into the region this frame (each once; their poses
    are in this frame), ``left`` those that went out of it (walked out,
    pushed out by ``max_characters``, or destroyed), each once."""
    subscription: int
    tick: int
    server_time_us: int
    dt: float
    encoding: int
    dropped_frames: int
    gone: Tuple[int, ...]
    characters: npt.NDArray[np.uint64]
    frames: npt.NDArray[np.uint32]
    contacts: npt.NDArray[np.uint32]
    transitions: npt.NDArray[np.bool_]
    bones: npt.NDArray[np.int32]
    positions: Floats
    rotations: Floats
    global_positions: Optional[Floats] = None
    entered: Tuple[CharacterEntered, ...] = ()
    left: Tuple[int, ...] = ()
    message: Any = field(default=None, repr=False)
    physics: Optional[npt.NDArray[np.int32]] = None  # (C,) PhysicsState per character (0: not physical)

    __repr__ = _repr

    @classmethod
    def from_message(cls, message: Any, rotations_only: bool = False) -> "StreamFrame":
        """Decodes a ``pb.StreamMessage`` (either encoding)."""
        message = _unpacked(message)
        poses = message.poses
        count = len(poses)
        quantized = message.encoding == pb.ENCODING_QUANTIZED
        if quantized:
            positions, rotations, bones = _decode_grouped([p.quantized for p in poses], rotations_only)
        else:
            positions, rotations, bones = _floats_grouped(poses)
        global_positions = None
        if count and len(poses[0].global_positions):
            global_positions = _stack_ragged([p.global_positions for p in poses], 3, bones)
        return cls(subscription=message.subscription_id, tick=message.tick, server_time_us=message.server_time_us,
                   dt=message.dt, encoding=message.encoding, dropped_frames=message.dropped_frames,
                   gone=tuple(message.gone),
                   characters=np.fromiter((p.character for p in poses), dtype=np.uint64, count=count),
                   frames=np.fromiter((p.frame for p in poses), dtype=np.uint32, count=count),
                   contacts=np.fromiter((p.contacts for p in poses), dtype=np.uint32, count=count),
                   transitions=np.fromiter((p.transition for p in poses), dtype=bool, count=count),
                   bones=bones, positions=positions, rotations=rotations, global_positions=global_positions,
                   entered=tuple(CharacterEntered(e.character, e.database, e.database_version, e.bones)
                                 for e in message.entered),
                   left=tuple(message.left), message=message,
                   physics=np.fromiter((p.physics for p in poses), dtype=np.int32, count=count))

    def contact_flags(self, ncontacts: int) -> npt.NDArray[np.bool_]:
        """``contacts`` as (C, ncontacts) bools (contact bone order:
        ``describe_database().contact_bones``)."""
        return ((self.contacts[:, None] >> np.arange(ncontacts, dtype=np.uint32)) & 1).astype(bool)

    def global_pose(self, skeleton: Union[HasParents, Parents]) -> Tuple[Floats, Floats]:
        """World positions and rotations of every bone (forward kinematics on
        the local pose, ``skeleton`` a :class:`~animserver.skeleton.Skeleton`
        or its parents array; needs full positions, not rotations only)."""
        if self.positions.shape[1] != self.rotations.shape[1]:
            raise ValueError("global_pose needs local positions (subscribe without rotations_only)")
        parents = skeleton if isinstance(skeleton, (Sequence, np.ndarray)) else skeleton.parents
        return forward_kinematics(parents, self.positions, self.rotations)

    # ---- rows by character ------------------------------------------------------
    # Row c of every array is character ``characters[c]``; the server may order
    # rows as it likes and a destroyed character's row goes, so look rows up by
    # id rather than by the order characters were created or subscribed in.

    def __len__(self) -> int:
        """The number of characters (rows)."""
        return len(self.characters)

    def __bool__(self) -> bool:
        return True  # a frame of no characters is still a frame (None is what ends a stream)

    def __contains__(self, character: object) -> bool:
        return isinstance(character, (int, np.integer)) and bool((self.characters == int(character)).any())

    def row(self, character: int) -> int:
        """The row of ``character``; NotFoundError when it is not in this frame."""
        found = np.flatnonzero(self.characters == np.uint64(character))
        if not len(found):
            raise errors.NotFoundError(pb.ERROR_NOT_FOUND, f"character {character} is not in this frame "
                                       f"(subscription {self.subscription}, tick {self.tick}: "
                                       f"{len(self.characters)} characters)")
        return int(found[0])

    def rows(self, characters: Iterable[int]) -> npt.NDArray[np.intp]:
        """The rows of ``characters``, in their order (index any of the frame's
        arrays with it: ``frame.positions[frame.rows(mine)]`` is in the order
        of ``mine``); NotFoundError naming the first one not in this frame."""
        wanted = np.fromiter((int(c) for c in characters), dtype=np.uint64)
        order = np.argsort(self.characters, kind="stable")
        ordered = self.characters[order]
        at = np.minimum(np.searchsorted(ordered, wanted), max(len(ordered) - 1, 0))
        hit = (ordered[at] == wanted) if len(ordered) else np.zeros(len(wanted), dtype=bool)
        if not hit.all():
            self.row(int(wanted[np.argmin(hit)]))  # raises, naming it
        rows: npt.NDArray[np.intp] = order[at].astype(np.intp)
        return rows

    def pose(self, character: int) -> CharacterPose:
        """The row of ``character`` as a :class:`CharacterPose`; NotFoundError
        when it is not in this frame."""
        return self._pose(self.row(character))

    def __iter__(self) -> Iterator[CharacterPose]:
        """Every row as a :class:`CharacterPose` (each says its character)."""
        return (self._pose(r) for r in range(len(self.characters)))

    def _pose(self, r: int) -> CharacterPose:
        n = int(self.bones[r])
        return CharacterPose(character=int(self.characters[r]), frame=int(self.frames[r]),
                             contacts=int(self.contacts[r]), transition=bool(self.transitions[r]),
                             positions=self.positions[r, :n], rotations=self.rotations[r, :n],
                             global_positions=None if self.global_positions is None else self.global_positions[r, :n],
                             physics=0 if self.physics is None else int(self.physics[r]))


def _decode_grouped(blobs: List[bytes], rotations_only: bool) -> Tuple[Floats, Floats, npt.NDArray[np.int32]]:
    count = len(blobs)
    sizes = np.fromiter((len(b) for b in blobs), dtype=np.int64, count=count)
    if count == 0 or (sizes == sizes[0]).all():
        positions, rotations = decode_quantized(blobs, rotations_only)
        return positions, rotations, np.full(count, rotations.shape[1] if count else 0, dtype=np.int32)
    bones = np.array([quantized_bones(int(s), rotations_only) for s in sizes], dtype=np.int32)
    n = int(bones.max())
    positions = np.full((count, 1 if rotations_only else n, 3), np.nan, np.float32)
    rotations = np.full((count, n, 4), np.nan, np.float32)
    for size in np.unique(sizes):
        rows = np.nonzero(sizes == size)[0]
        p, r = decode_quantized([blobs[i] for i in rows], rotations_only)
        positions[rows, :p.shape[1]] = p
        rotations[rows, :r.shape[1]] = r
    return positions, rotations, bones


def _stack_ragged(arrays: List[Any], width: int, bones: Any = None) -> Floats:
    """Per-pose float arrays stacked (C, n, width), NaN-padded when their
    lengths differ. Each array is either packed little-endian bytes (the
    stream view, see ``_proto.StreamView``) or a repeated float field."""
    count = len(arrays)
    if count == 0:
        return np.zeros((0, 0, width), np.float32)
    packed = isinstance(arrays[0], (bytes, bytearray))
    lengths = np.fromiter((len(a) for a in arrays), dtype=np.int64, count=count)
    if packed:
        lengths //= 4
    if (lengths == lengths[0]).all():
        if packed:
            flat = np.frombuffer(b"".join(arrays), dtype="<f4").astype(np.float32)
        else:
            flat = np.fromiter(itertools.chain.from_iterable(arrays), dtype=np.float32, count=int(lengths.sum()))
        return flat.reshape(count, -1, width)
    out = np.full((count, int(lengths.max()) // width, width), np.nan, np.float32)
    for i, a in enumerate(arrays):
        values = np.frombuffer(a, dtype="<f4") if packed else np.asarray(a, dtype=np.float32)
        out[i, :len(values) // width] = values.reshape(-1, width)
    return out


def _floats_grouped(poses: Any) -> Tuple[Floats, Floats, npt.NDArray[np.int32]]:
    rotations = _stack_ragged([p.rotations for p in poses], 4)
    bones = np.fromiter((len(p.rotations) for p in poses), dtype=np.int32, count=len(poses))
    bones //= 16 if len(poses) and isinstance(poses[0].rotations, bytes) else 4
    positions = _stack_ragged([p.positions for p in poses], 3)
    return positions, rotations, bones


def _unpacked(message: Any) -> Any:
    """The ordinary StreamMessage of a view whose floats were not packed (the
    view's bytes fields then stay empty and the floats sit in unknown fields)."""
    if message.encoding != pb.ENCODING_FLOAT or not len(message.poses):
        return message
    first = message.poses[0]
    if not isinstance(first.rotations, bytes) or len(first.rotations):
        return message
    return pb.StreamMessage.FromString(message.SerializeToString())


def quat_mul(a: npt.NDArray[Any], b: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """Hamilton products of (..., 4) w, x, y, z quaternions."""
    aw, ax, ay, az = np.moveaxis(a, -1, 0)
    bw, bx, by, bz = np.moveaxis(b, -1, 0)
    return np.stack([aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw], axis=-1)


def quat_rotate(q: npt.NDArray[Any], v: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """Rotates (..., 3) vectors by (..., 4) unit quaternions (w, x, y, z)."""
    w = q[..., :1]
    u = q[..., 1:]
    t = 2.0 * np.cross(u, v)
    rotated: npt.NDArray[Any] = v + w * t + np.cross(u, t)
    return rotated


def forward_kinematics(parents: Parents, local_positions: npt.ArrayLike,
                       local_rotations: npt.ArrayLike) -> Tuple[Floats, Floats]:
    """Global positions and rotations from a local pose, vectorised over any
    leading axes (frames, characters): ``(..., n, 3)``, ``(..., n, 4)``.
    Bone 0's transform is taken as already global; parents precede children."""
    parent_list = [int(p) for p in parents]
    lp = np.asarray(local_positions, dtype=np.float64)
    lr = np.asarray(local_rotations, dtype=np.float64)
    gp = lp.copy()
    gr = lr.copy()
    for b in range(1, len(parent_list)):
        p = parent_list[b]
        if not 0 <= p < b:
            raise ValueError(f"bone {b}'s parent {p} does not precede it")
        gp[..., b, :] = gp[..., p, :] + quat_rotate(gr[..., p, :], lp[..., b, :])
        gr[..., b, :] = quat_mul(gr[..., p, :], lr[..., b, :])
    return gp.astype(np.float32), gr.astype(np.float32)
