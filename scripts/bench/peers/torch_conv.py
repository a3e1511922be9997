#!/usr/bin/python3
"""PyTorch's time for each convolution layer of scripts/bench/conv_layers.lua, one thread.

Reads the layer list (JSON: reps, layers[{key, input NHWC, filter HWIO or HW C M, strides,
padding, depthwise}]) and prints `layer KEY MICROSECONDS CORES` per layer (median of reps; cores =
CPU time / wall time over the timed runs, which must stay near 1: torch runs 1x1 layers on OpenBLAS,
whose threads torch.set_num_threads does not bound, see torch_threads.py). TensorFlow's
SAME padding (possibly asymmetric) is applied with F.pad before timing, so both sides time the
convolution alone.
"""
import json
import sys
import time

from torch_threads import Threads

try:
    import torch
    import torch.nn.functional as F
except Exception as e:  # noqa: BLE001
    print(f"SKIP torch: {e}")
    sys.exit(0)

threads = Threads(torch)
threads.set(1)
spec = json.load(open(sys.argv[1]))
reps = int(spec["reps"])
print(f"peer torch {torch.__version__}, mkldnn {torch.backends.mkldnn.is_available()}, one thread: {threads.describe()}")


def same_pads(n, k, s):
    out = (n + s - 1) // s
    total = max((out - 1) * s + k - n, 0)
    return total // 2, total - total // 2


with torch.inference_mode():
    for layer in spec["layers"]:
        n, h, w, c = layer["input"]
        kh, kw = layer["filter"][0], layer["filter"][1]
        sh, sw = layer["strides"][1], layer["strides"][2]
        x = torch.rand(n, c, h, w)
        if layer["padding"] == "SAME":
            top, bottom = same_pads(h, kh, sh)
            left, right = same_pads(w, kw, sw)
            x = F.pad(x, (left, right, top, bottom))
        if layer["depthwise"]:
            m = layer["filter"][3]
            weight = torch.rand(c * m, 1, kh, kw)
            groups = c
        else:
            weight = torch.rand(layer["filter"][3], c, kh, kw)
            groups = 1
        for _ in range(3):
            F.conv2d(x, weight, stride=(sh, sw), groups=groups)
        times = []
        c0, w0 = time.process_time(), time.perf_counter()
        for _ in range(reps):
            t0 = time.perf_counter()
            F.conv2d(x, weight, stride=(sh, sw), groups=groups)
            times.append((time.perf_counter() - t0) * 1e6)
        cores = (time.process_time() - c0) / (time.perf_counter() - w0)
        times.sort()
        print(f"layer {layer['key']} {times[len(times) // 2]:.2f} {cores:.2f}")
