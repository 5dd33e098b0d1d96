"""A database's skeleton: bone names, parents and contact bones, for numpy.

    skeleton = client.skeleton("default")
    skeleton.parents                      # (n,) int32, -1 for the root: forward kinematics, plotting
    skeleton.index("LeftFoot")            # its column in every pose array
    positions, rotations = skeleton.global_pose(frame.positions, frame.rotations)

It is read from ``describe_database`` (``Skeleton.from_description`` takes a
description already fetched); it does not change while the database's
``version`` does not (a reload may change it). Bones are in the database's
order, parents before children, as every pose array's bone axis.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional, Tuple

import numpy as np
import numpy.typing as npt

from . import errors
from ._proto import pb
from .poses import Floats, forward_kinematics

__all__ = ["Skeleton"]


@dataclass(frozen=True, eq=False, repr=False)
class Skeleton:
    """``names`` (n,), ``parents`` (n,) int32 read-only (-1 for the root),
    ``contact_bones`` (the bones of a stream frame's contact bits, in bit
    order), the ``database`` and its ``version``."""
    database: str
    version: int
    names: Tuple[str, ...]
    parents: npt.NDArray[np.int32]
    contact_bones: Tuple[str, ...]

    @classmethod
    def from_description(cls, description: pb.DescribeDatabaseResponse) -> "Skeleton":
        """From a ``describe_database`` answer."""
        parents = np.array([b.parent for b in description.bones], dtype=np.int32)
        parents.setflags(write=False)
        return cls(database=description.summary.name, version=description.summary.version,
                   names=tuple(b.name for b in description.bones), parents=parents,
                   contact_bones=tuple(description.contact_bones))

    def __len__(self) -> int:
        return len(self.names)

    def __repr__(self) -> str:
        return f"Skeleton({self.database!r} v{self.version}: {len(self.names)} bones, root {self.names[0]!r})" \
            if self.names else f"Skeleton({self.database!r}: no bones)"

    def index(self, name: str) -> int:
        """The bone's index (its column in pose arrays); NotFoundError naming it."""
        try:
            return self._indices()[name]
        except KeyError:
            raise errors.NotFoundError(pb.ERROR_NOT_FOUND, f"bone {name!r} is not in database {self.database!r} "
                                       f"({len(self.names)} bones: {', '.join(self.names[:6])}, ...)") from None

    def parent(self, name: str) -> Optional[str]:
        """The parent bone's name (None for the root)."""
        p = int(self.parents[self.index(name)])
        return None if p < 0 else self.names[p]

    def children(self, name: str) -> Tuple[str, ...]:
        """The bones whose parent is ``name``, in order."""
        i = self.index(name)
        return tuple(self.names[c] for c in np.flatnonzero(self.parents == i))

    @property
    def contact_indices(self) -> npt.NDArray[np.intp]:
        """The contact bones' indices, in contact-bit order."""
        return np.array([self.index(n) for n in self.contact_bones], dtype=np.intp)

    def global_pose(self, local_positions: npt.ArrayLike, local_rotations: npt.ArrayLike) -> Tuple[Floats, Floats]:
        """World (or, for database frames, animation-space) positions and
        rotations from a local pose (..., n, 3) / (..., n, 4): forward
        kinematics over any leading axes (frames, characters)."""
        return forward_kinematics(self.parents, local_positions, local_rotations)

    def _indices(self) -> Dict[str, int]:
        # Built per call: a skeleton is small (tens of bones) and holds no cache.
        return {n: i for i, n in enumerate(self.names)}
