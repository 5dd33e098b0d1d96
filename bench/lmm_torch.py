#!/usr/bin/python3
"""PyTorch peer of the learned-motion-matching networks (Debian's python3-torch).

The same network files (../shared/data/lmm, format in ../shared/README.md)
loaded into torch.nn.Linear layers, evaluated with the same normalization:
    y = last(relu(...relu(((x - in_mean) / in_std) W0 + b0)...)) * out_std + out_mean

    lmm_torch.py eval NET.bin IN.f32 OUT.f32
        rows of float32 inputs -> rows of float32 outputs (tests/test_nnet.c
        compares them with the C evaluation)
    lmm_torch.py bench DIR [--threads N] [--batches 1,64,1000] [--seconds S] [--interval N]
        one JSON row per network and batch, {"impl": "pytorch", "net", "batch",
        "us_per_item"}, and for the whole frame ("frame": stepper + decompressor
        every frame, the projector every N frames); torch.set_num_threads(N).
        Each in wall time, then again in the process's CPU time (net "NAME-cpu").
"""
import json
import os
import struct
import sys
import time

# torch.set_num_threads does not reach the OpenBLAS that Debian's torch
# multiplies with (no MKL): without these, a batch of 1,000 ran on both
# cores (the process's CPU time 1.9x its thread's). Set before torch loads
# OpenBLAS; one thread unless --threads says otherwise.
_THREADS = sys.argv[sys.argv.index("--threads") + 1] if "--threads" in sys.argv[:-1] else "1"
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_var, _THREADS)

import torch  # noqa: E402


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    pos = 0

    def i32():
        nonlocal pos
        (v,) = struct.unpack_from("<i", data, pos)
        pos += 4
        return v

    def floats(n):
        nonlocal pos
        t = torch.frombuffer(bytearray(data[pos:pos + 4 * n]), dtype=torch.float32)
        pos += 4 * n
        return t

    def array():
        return floats(i32())

    in_mean, in_std, out_mean, out_std = array(), array(), array(), array()
    layers = []
    for _ in range(i32()):
        rows, cols = i32(), i32()
        w = floats(rows * cols).reshape(rows, cols)
        b = array()
        linear = torch.nn.Linear(rows, cols)
        with torch.no_grad():
            linear.weight.copy_(w.t())
            linear.bias.copy_(b)
        layers.append(linear)
    assert pos == len(data), path
    return Net(in_mean, in_std, out_mean, out_std, layers)


class Net(torch.nn.Module):
    def __init__(self, in_mean, in_std, out_mean, out_std, layers):
        super().__init__()
        self.in_mean, self.in_std, self.out_mean, self.out_std = in_mean, in_std, out_mean, out_std
        self.layers = torch.nn.ModuleList(layers)
        self.ninputs, self.noutputs = len(in_mean), len(out_mean)

    def forward(self, x):
        x = (x - self.in_mean) / self.in_std
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i + 1 < len(self.layers):
                x = torch.relu(x)
        return x * self.out_std + self.out_mean


def cmd_eval(net_path, in_path, out_path):
    net = load(net_path)
    with open(in_path, "rb") as f:
        x = torch.frombuffer(bytearray(f.read()), dtype=torch.float32).reshape(-1, net.ninputs)
    with torch.inference_mode():
        y = net(x)
    with open(out_path, "wb") as f:
        f.write(y.contiguous().numpy().tobytes())


def time_per_call(fn, seconds, clock=time.perf_counter):
    """Best of three timings of at least `seconds` each (bench_lmm.c does the
    same); clock time.process_time: the CPU time of every thread of the
    process, what the work costs whatever else the machine runs (and were
    some library to start threads of its own, their time counts too)."""
    fn()
    best = float("inf")
    for _ in range(3):
        reps = 1
        while True:
            start = clock()
            for _ in range(reps):
                fn()
            elapsed = clock() - start
            if elapsed >= seconds:
                best = min(best, elapsed / reps)
                break
            reps *= 2
    return best


def cmd_bench(folder, threads, batches, seconds, interval):
    torch.set_num_threads(threads)
    nets = {n: load("%s/%s.bin" % (folder, n)) for n in ("projector", "stepper", "decompressor")}
    gen = torch.Generator().manual_seed(1)
    for batch in batches:
        inputs = {n: net.in_mean + net.in_std * torch.randn(batch, net.ninputs, generator=gen)
                  for n, net in nets.items()}
        for suffix, clock in (("", time.perf_counter), ("-cpu", time.process_time)):
            per_call = {}
            with torch.inference_mode():
                for name, net in nets.items():
                    x = inputs[name]
                    per_call[name] = time_per_call(lambda: net(x), seconds, clock)
                    print(json.dumps({"impl": "pytorch", "net": name + suffix, "batch": batch,
                                      "us_per_item": round(per_call[name] / batch * 1e6, 3)}), flush=True)
            # A frame of the networks alone: step, decompress, and project every interval frames.
            frame = per_call["stepper"] + per_call["decompressor"] + per_call["projector"] / interval
            print(json.dumps({"impl": "pytorch", "net": "frame" + suffix, "batch": batch,
                              "us_per_item": round(frame / batch * 1e6, 3)}), flush=True)


def main(argv):
    if len(argv) == 5 and argv[1] == "eval":
        cmd_eval(argv[2], argv[3], argv[4])
        return 0
    if len(argv) >= 3 and argv[1] == "bench":
        threads, batches, seconds, interval = 1, [1, 64, 1000], 0.5, 6
        args = argv[3:]
        while args:
            flag, value = args[0], args[1]
            args = args[2:]
            if flag == "--threads":
                threads = int(value)
            elif flag == "--batches":
                batches = [int(b) for b in value.split(",")]
            elif flag == "--seconds":
                seconds = float(value)
            elif flag == "--interval":
                interval = int(value)
            else:
                raise SystemExit("unknown option " + flag)
        cmd_bench(argv[2], threads, batches, seconds, interval)
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
