"""Rotations and forward kinematics in PyTorch, as the server decodes a pose
(core/learned/lmm.c): rotations from the first two matrix columns by
Gram-Schmidt, and the skeleton walked from the root with velocities.
Quaternions are (w, x, y, z), as in the database."""
import numpy as np
import torch


def quat_to_matrix(q):
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    rows = [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
            2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
            2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]
    return torch.stack(rows, dim=-1).reshape(q.shape[:-1] + (3, 3))


def txy_to_matrix(t):
    """(..., 6) m00 m01 m10 m11 m20 m21 -> (..., 3, 3): x kept as it points,
    z = x cross y, y = z cross x (lmm.c's quat_from_two_columns)."""
    x = t[..., 0::2]
    y = t[..., 1::2]
    x = x / torch.sqrt((x * x).sum(-1, keepdim=True) + 1e-12)
    z = torch.cross(x, y, dim=-1)
    z = z / torch.sqrt((z * z).sum(-1, keepdim=True) + 1e-12)
    y = torch.cross(z, x, dim=-1)
    return torch.stack([x, y, z], dim=-1)


def _levels(parents):
    """Bones 1..B-1 grouped by depth: per level (bones, index of each one's
    parent within the level above; -1 for the root's children)."""
    depth = [0] * len(parents)
    for b in range(1, len(parents)):
        depth[b] = depth[parents[b]] + 1
    levels = []
    for d in range(1, max(depth) + 1):
        bones = [b for b in range(1, len(parents)) if depth[b] == d]
        above = levels[-1][0] if levels else [0]
        levels.append((bones, [above.index(parents[b]) for b in bones]))
    return levels


def fk(pos, rot, vel, ang, rvel, rang, parents):
    """Character-space pose of bones 1..B-1 (the root at the origin facing +Z,
    moving at rvel, turning at rang, both in its own frame) from local
    positions, rotation matrices, velocities and angular velocities of bones
    1..B-1 (..., B-1, 3[, 3]). Returns dict pos, rot, txy, vel, ang. One
    level of the hierarchy at a time (all its bones at once)."""
    shape = pos.shape[:-2]
    R = torch.eye(3, dtype=pos.dtype).expand(shape + (1, 3, 3))
    P = torch.zeros(shape + (1, 3), dtype=pos.dtype)
    V, W = rvel[..., None, :], rang[..., None, :]
    out_bones, outs = [], {"pos": [], "rot": [], "vel": [], "ang": []}
    for bones, up in _levels(parents):
        i = torch.tensor([b - 1 for b in bones])
        j = torch.tensor(up)
        Rp, Pp, Vp, Wp = R.index_select(-3, j), P.index_select(-2, j), V.index_select(-2, j), W.index_select(-2, j)
        offset = (Rp @ pos.index_select(-2, i)[..., None])[..., 0]
        R = Rp @ rot.index_select(-3, i)
        P = Pp + offset
        V = Vp + (Rp @ vel.index_select(-2, i)[..., None])[..., 0] + torch.cross(Wp, offset, dim=-1)
        W = Wp + (Rp @ ang.index_select(-2, i)[..., None])[..., 0]
        out_bones += bones
        for k, v in (("pos", P), ("rot", R), ("vel", V), ("ang", W)):
            outs[k].append(v)
    order = torch.tensor([out_bones.index(b) for b in range(1, len(parents))])
    out = dict(pos=torch.cat(outs["pos"], -2).index_select(-2, order),
               rot=torch.cat(outs["rot"], -3).index_select(-3, order),
               vel=torch.cat(outs["vel"], -2).index_select(-2, order),
               ang=torch.cat(outs["ang"], -2).index_select(-2, order))
    out["txy"] = out["rot"][..., :2].reshape(out["rot"].shape[:-2] + (6,))
    return out


def np_quat_to_matrix(q):
    return quat_to_matrix(torch.from_numpy(np.ascontiguousarray(q, dtype=np.float64))).numpy()


def np_fk(pos, rot, vel, ang, rvel, rang, parents):
    t = lambda a: torch.from_numpy(np.ascontiguousarray(a, dtype=np.float64))
    with torch.no_grad():
        out = fk(t(pos), t(rot), t(vel), t(ang), t(rvel), t(rang), parents)
    return {k: v.numpy().astype(np.float32) for k, v in out.items()}
