"""The four networks and the file format the server loads (core/learned/nnet.h):
four arrays (input mean, input std, output mean, output std; each an int32
count then float32 values), an int32 layer count, then per layer int32 rows,
int32 cols, rows x cols float32 weights (rows = inputs) and the biases as an
array; ReLU after every layer but the last. Little-endian."""
import os
import struct

import numpy as np
import torch
import torch.nn as nn


def relu_mlp(sizes):
    """Dense layers of the given widths, ReLU between them (the server's form)."""
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i + 2 < len(sizes):
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def decompressor_sizes(features, latent, hidden, pose):
    """(x, z) -> hidden -> the pose row (the reference's one hidden layer)."""
    return [features + latent, hidden, pose]


def stepper_sizes(features, latent, hidden):
    """(x, z) -> hidden -> hidden -> (dx/dt, dz/dt)."""
    return [features + latent, hidden, hidden, features + latent]


def projector_sizes(features, latent, hidden):
    """x -> 4 hidden layers -> (x, z)."""
    return [features, hidden, hidden, hidden, hidden, features + latent]


def _file_bytes(sizes):
    """Bytes of a written network of these widths (save()'s format)."""
    weights = sum(a * b + b for a, b in zip(sizes[:-1], sizes[1:]))
    return 4 * (weights + 2 * sizes[0] + 2 * sizes[-1]) + 4 * 4 + 4 + 4 * 3 * (len(sizes) - 1)


def bytes_of(features, latent, pose, hd, hs, hp):
    """Bytes of the three files for these widths."""
    return (_file_bytes(decompressor_sizes(features, latent, hd, pose)) + _file_bytes(stepper_sizes(features, latent, hs))
            + _file_bytes(projector_sizes(features, latent, hp)))


def widest(features, latent, pose, budget, step=32, most=512, least=32):
    """The widest width (a multiple of step, at most the reference's 512, at
    least 32) whose three networks take at most budget bytes."""
    width = least
    while width + step <= most and bytes_of(features, latent, pose, *(3 * [width + step])) <= budget:
        width += step
    return width


def compressor(inputs, hidden, latent):
    """Pose -> latent (training only, not written): the reference's ELU network."""
    return nn.Sequential(nn.Linear(inputs, hidden), nn.ELU(), nn.Linear(hidden, hidden), nn.ELU(),
                         nn.Linear(hidden, hidden), nn.ELU(), nn.Linear(hidden, latent))


def _array(values):
    values = np.asarray(values, dtype="<f4").reshape(-1)
    return struct.pack("<i", values.size) + values.tobytes()


def save(path, network, in_mean, in_std, out_mean, out_std):
    """Writes network (a relu_mlp) with its normalizations, atomically."""
    linears = [m for m in network if isinstance(m, nn.Linear)]
    blob = [_array(in_mean), _array(in_std), _array(out_mean), _array(out_std), struct.pack("<i", len(linears))]
    for layer in linears:
        w = layer.weight.detach().cpu().numpy().T.astype("<f4")  # rows = inputs
        blob.append(struct.pack("<ii", w.shape[0], w.shape[1]) + np.ascontiguousarray(w).tobytes())
        blob.append(_array(layer.bias.detach().cpu().numpy()))
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(b"".join(blob))
    os.replace(tmp, path)


def load_weights(path):
    """The arrays of a written file (tests compare with the trained network)."""
    with open(path, "rb") as f:
        data = f.read()
    pos = 0

    def array():
        nonlocal pos
        (n,) = struct.unpack_from("<i", data, pos)
        values = np.frombuffer(data, "<f4", n, pos + 4)
        pos += 4 + 4 * n
        return values

    norms = [array() for _ in range(4)]
    (nlayers,) = struct.unpack_from("<i", data, pos)
    pos += 4
    layers = []
    for _ in range(nlayers):
        rows, cols = struct.unpack_from("<ii", data, pos)
        w = np.frombuffer(data, "<f4", rows * cols, pos + 8).reshape(rows, cols)
        pos += 8 + 4 * rows * cols
        layers.append((w, array()))
    assert pos == len(data)
    return norms, layers
