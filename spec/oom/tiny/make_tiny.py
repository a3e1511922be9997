#!/usr/bin/env python3
"""Writes spec/oom/tiny/: a small TensorFlow.js graph model (model.json and its weights in two
shards), the shape of what TensorFlow.js's converter writes, for the out-of-memory sweep's model
targets where ../shared/models is absent (CI). Run from anywhere; writes beside this file.
x [1,6,6,1] -> _FusedConv2D 3x3x1x4 [BiasAdd, Relu] -> MaxPool 2x2 -> Reshape [1,16]
  -> _FusedMatMul 16x3 [BiasAdd] -> Softmax "probs". model.pb, the same graph as a binary GraphDef,
is written by tfdev itself: tfdev -e 'local t=require"tfdev"; t.graph_def.save(t.graph_def.load(
"spec/oom/tiny/model.json"), "spec/oom/tiny/model.pb")'."""
import base64, json, os, struct

here = os.path.dirname(os.path.abspath(__file__))

def floats(n, seed):
    v, out = seed, []
    for _ in range(n):
        v = (v * 1103515245 + 12345) % 2**31
        out.append((v / 2**31 - 0.5) / 2)
    return out

def b64(s):
    return base64.b64encode(s.encode()).decode()

weights = [("conv/filter", [3, 3, 1, 4], floats(36, 1)), ("conv/bias", [4], floats(4, 2)),
           ("dense/kernel", [16, 3], floats(48, 3)), ("dense/bias", [3], floats(3, 4))]
blob = b"".join(struct.pack("<%df" % len(v), *v) for _, _, v in weights)
half = len(blob) // 2 // 4 * 4
with open(os.path.join(here, "group1-shard1of2.bin"), "wb") as f:
    f.write(blob[:half])
with open(os.path.join(here, "group1-shard2of2.bin"), "wb") as f:
    f.write(blob[half:])

F = {"type": "DT_FLOAT"}
def shape(*d):
    return {"shape": {"dim": [{"size": str(x)} for x in d]}}
def const(name, dims):
    return {"name": name, "op": "Const", "attr": {"dtype": F, "value": {"tensor": {"dtype": "DT_FLOAT",
            "tensorShape": {"dim": [{"size": str(x)} for x in dims]}}}}}

nodes = [
    {"name": "x", "op": "Placeholder", "attr": {"dtype": F, "shape": shape(1, 6, 6, 1)}},
    const("conv/filter", [3, 3, 1, 4]), const("conv/bias", [4]),
    const("dense/kernel", [16, 3]), const("dense/bias", [3]),
    {"name": "flat/shape", "op": "Const", "attr": {"dtype": {"type": "DT_INT32"}, "value": {"tensor": {
        "dtype": "DT_INT32", "tensorShape": {"dim": [{"size": "2"}]}, "intVal": [1, 16]}}}},
    {"name": "conv/Relu", "op": "_FusedConv2D", "input": ["x", "conv/filter", "conv/bias"], "device": "/device:CPU:0",
     "attr": {"T": F, "num_args": {"i": "1"}, "epsilon": {"f": 0}, "padding": {"s": b64("VALID")},
              "strides": {"list": {"i": ["1", "1", "1", "1"]}}, "dilations": {"list": {"i": ["1", "1", "1", "1"]}},
              "data_format": {"s": b64("NHWC")}, "explicit_paddings": {"list": {}}, "use_cudnn_on_gpu": {"b": True},
              "fused_ops": {"list": {"s": [b64("BiasAdd"), b64("Relu")]}}}},
    {"name": "pool", "op": "MaxPool", "input": ["conv/Relu"],
     "attr": {"T": F, "ksize": {"list": {"i": ["1", "2", "2", "1"]}}, "strides": {"list": {"i": ["1", "2", "2", "1"]}},
              "padding": {"s": b64("VALID")}, "data_format": {"s": b64("NHWC")}}},
    {"name": "flat", "op": "Reshape", "input": ["pool", "flat/shape"], "attr": {"T": F, "Tshape": {"type": "DT_INT32"}}},
    {"name": "dense/BiasAdd", "op": "_FusedMatMul", "input": ["flat", "dense/kernel", "dense/bias"], "device": "/device:CPU:0",
     "attr": {"T": F, "num_args": {"i": "1"}, "epsilon": {"f": 0}, "transpose_a": {"b": False},
              "transpose_b": {"b": False}, "fused_ops": {"list": {"s": [b64("BiasAdd")]}}}},
    {"name": "probs", "op": "Softmax", "input": ["dense/BiasAdd"], "attr": {"T": F}},
]
model = {
    "format": "graph-model", "generatedBy": "spec/oom/tiny/make_tiny.py", "convertedBy": None,
    "modelTopology": {"node": nodes, "library": {}, "versions": {"producer": 1286}},
    "signature": {"inputs": {"x": {"name": "x:0", "dtype": "DT_FLOAT", "tensorShape": shape(1, 6, 6, 1)["shape"]}},
                  "outputs": {"probs": {"name": "probs:0", "dtype": "DT_FLOAT",
                                        "tensorShape": shape(1, 3)["shape"]}}},
    "weightsManifest": [{"paths": ["group1-shard1of2.bin", "group1-shard2of2.bin"],
                         "weights": [{"name": n, "shape": s, "dtype": "float32"} for n, s, _ in weights]}],
}
with open(os.path.join(here, "model.json"), "w") as f:
    json.dump(model, f, indent=1)
    f.write("\n")
