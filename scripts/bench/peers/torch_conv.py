#!/usr/bin/python3
"""PyTorch's time for each convolution layer of scripts/bench/conv_layers.lua, one thread.

Reads the layer list (JSON: reps, layers[{key, input NHWC, filter HWIO or HW C M, strides,
padding, depthwise}]) and prints `layer KEY MICROSECONDS` per layer (median of reps). TensorFlow's
SAME padding (possibly asymmetric) is applied with F.pad before timing, so both sides time the
convolution alone.
"""
import json
import sys
import time

try:
    import torch
    import torch.nn.functional as F
except Exception as e:  # noqa: BLE001
    print(f"SKIP torch: {e}")
    sys.exit(0)

torch.set_num_threads(1)
spec = json.load(open(sys.argv[1]))
reps = int(spec["reps"])
print(f"peer torch {torch.__version__}, mkldnn {torch.backends.mkldnn.is_available()}, threads {torch.get_num_threads()}")


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
        for _ in range(reps):
            t0 = time.perf_counter()
            F.conv2d(x, weight, stride=(sh, sw), groups=groups)
            times.append((time.perf_counter() - t0) * 1e6)
        times.sort()
        print(f"layer {layer['key']} {times[len(times) // 2]:.2f}")
