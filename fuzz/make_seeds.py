#!/usr/bin/python3
"""Writes the seed corpora in fuzz/corpus/<harness>/ (run from anywhere: python3 fuzz/make_seeds.py).

Each harness decodes its input in its own way (see the comment at the top of
each fuzz/fuzz_*.c); the encoders here mirror those decoders, so every seed is
a meaningful input: valid device names and near misses, a tensor of each
dtype, real graphs with runs, and Lua programs that reach each entry point.
Tables the harnesses index by number (the op registry, the Lua dictionary)
are read from the sources, so seeds stay right when those grow.
"""
import os
import re
import shutil
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "fuzz", "corpus")


def c_strings(text):
    """The strings of a C initializer, in order: adjacent literals are one string, comments are skipped."""
    lit = r'"((?:[^"\\]|\\.)*)"'
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    items, cur = [], None
    for m in re.finditer(lit + r"|,", text):
        if m.group(0) == ",":
            if cur is not None:
                items.append(cur)
            cur = None
        else:
            cur = (cur or "") + m.group(1)
    if cur is not None:
        items.append(cur)
    return [bytes(s, "latin-1").decode("unicode_escape") for s in items]


def section(path, start, end="};"):
    text = open(os.path.join(ROOT, path), encoding="utf-8").read()
    i = text.index(start)
    return text[i + len(start):text.index(end, i)]


def registry_ops():
    """Op names in registry order, as tfd_ops_name(i) returns them: the families in builtin_ops.c's
    order, each family's table in its own order."""
    families = re.findall(r"&tfd_(\w+)_ops", section("runtime/ops/builtin_ops.c", "tfd_builtin_op_families[] = {"))
    names = []
    for fam in families:
        body = section("runtime/ops/%s_ops.c" % fam, "static const tfd_op_def %s_ops[] = {" % fam)
        for m in re.finditer(r'(?:BINARY|UNARY)\w*\("(\w+)"|\{\.name = "(\w+)"', body):
            names.append(m.group(1) or m.group(2))
    return names


OPS = registry_ops()
LUA_DICT = c_strings(section("fuzz/fuzz_lua_values.c", "static const char *const dict[] = {"))
GS_ATTRS = c_strings(section("fuzz/fuzz_graph_session.c", "static const char *const attr_names[] = {"))
GS_STRINGS = c_strings(section("fuzz/fuzz_graph_session.c", "static const char *const strings[] = {"))
GS_DEVICES = c_strings(section("fuzz/fuzz_graph_session.c", "static const char *const devices[] = {"))

seeds = {}


def add(harness, name, data):
    if isinstance(data, str):
        data = data.encode("latin-1")
    seeds.setdefault(harness, []).append((name, bytes(data)))


# ---- fuzz_device_name: name, then optionally NUL and a second name ----
for i, n in enumerate([
        "/job:localhost/replica:0/task:0/device:CPU:0",
        "/job:worker/replica:1/task:2/device:GPU:3",
        "/job:localhost/replica:0/task:0/cpu:0",
        "/job:a/replica:0/task:1/gpu:2",
        "/device:CPU:*",
        "/device:*:3",
        "/job:w/device:GPU:*",
        "/cpu:1",
        "/GPU:0",
        "CPU:0",
        "XLA_CPU:12",
        "/",
        "",
        "/job:*/replica:*/task:*/device:*:*",
        "/job:localhost/replica:0/task:0/device:cpu:0",
        "/job:localhost/replica:2147483647/task:0/device:CPU:0",
        # near misses
        "/job:localhost/replica:2147483648/task:0/device:CPU:0",
        "/job:1abc",
        "/job:a b",
        "/device:CPU:",
        "/device:CPU:x",
        "/replica:",
        "job:localhost",
        "/job:" + "j" * 127,
        "/job:" + "j" * 128,
        "/device:CPU:0/device:GPU:1",
        "CPU:0x",
]):
    add("fuzz_device_name", "name%02d" % i, n)
for i, (a, b) in enumerate([
        ("/job:a/replica:0", "/task:1/device:GPU:2"),
        ("/device:CPU:0", "/device:GPU:0"),
        ("/job:a", "/job:b"),
        ("CPU:1", "/job:localhost/replica:0/task:0/device:CPU:0"),
        ("/device:GPU:1", "/job:w/replica:0/task:3/device:CPU:0"),
        ("/job:w/replica:0/task:0", "/job:w/replica:0/task:0/device:CPU:*"),
]):
    add("fuzz_device_name", "pair%02d" % i, a + "\0" + b)


# ---- fuzz_tensor_bytes: dtype, rank, dims, mode, bytes ----
DT = {"float32": 0, "float64": 1, "int32": 2, "int64": 3, "bool": 4, "resource": 5}


def tensor_seed(dtype, dims, data, mode=1):
    out = bytearray([dtype, len(dims) if len(dims) >= 0 else 0xFF])
    for d in dims:
        if isinstance(d, int) and 0 <= d < 16:
            out.append(d)
        elif d == "neg":
            out.append(0xE0)
        elif d == "max":
            out.append(0xE2)
        elif d == "2^62":
            out.append(0xE5)
        else:  # a 2-byte size
            out += bytes([0xE6]) + struct.pack("<H", d)
    out.append(mode)
    return bytes(out) + data


add("fuzz_tensor_bytes", "f32_2x2", tensor_seed(DT["float32"], [2, 2], struct.pack("<4f", 1.25, 2, 3, 4)))
add("fuzz_tensor_bytes", "f64_3", tensor_seed(DT["float64"], [3], struct.pack("<3d", 0.5, -1, 1e300)))
add("fuzz_tensor_bytes", "i32_2x3", tensor_seed(DT["int32"], [2, 3], struct.pack("<6i", 1, 2, 3, 4, 5, 6), mode=0x0B))
add("fuzz_tensor_bytes", "i64_scalar", tensor_seed(DT["int64"], [], struct.pack("<q", -7)))
add("fuzz_tensor_bytes", "bool_4", tensor_seed(DT["bool"], [4], b"\x01\x00\x02\xff"))
add("fuzz_tensor_bytes", "resource_1", tensor_seed(DT["resource"], [1], b"\0" * 192))
add("fuzz_tensor_bytes", "f32_zero_dim", tensor_seed(DT["float32"], [3, 0, 2], b""))
add("fuzz_tensor_bytes", "f32_rank8", tensor_seed(DT["float32"], [1, 2, 1, 2, 1, 2, 1, 1], struct.pack("<8f", *range(8))))
add("fuzz_tensor_bytes", "f32_rank9", tensor_seed(DT["float32"], [1] * 9, struct.pack("<f", 1)))
add("fuzz_tensor_bytes", "i32_negative", tensor_seed(DT["int32"], [2, "neg"], b""))
add("fuzz_tensor_bytes", "i32_overflow", tensor_seed(DT["int32"], ["2^62", "2^62"], b"", mode=0))
add("fuzz_tensor_bytes", "f64_huge", tensor_seed(DT["float64"], [40000, 40000], b"\0" * 8, mode=0))
add("fuzz_tensor_bytes", "bool_2x65535", tensor_seed(DT["bool"], [2, 65535], b"\x01"))
add("fuzz_tensor_bytes", "f32_short", tensor_seed(DT["float32"], [4], b"\0" * 12, mode=0))
add("fuzz_tensor_bytes", "bad_dtype", bytes([0xC8 + 4 - 8 + 8, 1, 2, 1]) + b"\0" * 8)  # dtype 4: not a tfd_dtype
add("fuzz_tensor_bytes", "dtype_zero", bytes([0xC8, 0, 1]))


# ---- fuzz_graph_session: options, graph, actions ----
class G:
    """Mirrors fuzz_graph_session.c's decoder."""
    F32, I32, F64, I64, BOOL, RES, VARIANT, STR = range(8)  # decode_dtype's table
    INT, FLOAT, BOOLA, STRING, TYPE, SHAPE, TENSOR, LIST_INT, LIST_FLOAT, LIST_TYPE, LIST_STRING = range(1, 12)

    def __init__(self, options=0):
        self.b = bytearray([options])
        self.names = {}

    def byte(self, v):
        self.b.append(v & 0xFF)
        return self

    def graph(self, nodes, base=0):
        """nodes: (name, op, inputs, device, attrs); name is the node's default name ('a'.. by position)."""
        self.byte(len(nodes))
        names = {n[0]: base + i for i, n in enumerate(nodes)}
        self.names.update(names)
        for i, (name, op, inputs, device, attrs) in enumerate(nodes):
            k = base + i
            self.byte(0)  # default name
            self.byte(OPS.index(op))
            self.byte(len(inputs))
            for inp in inputs:
                ctrl = inp.startswith("^")
                node, _, idx = inp.lstrip("^").partition(":")
                j = self.names[node]
                if ctrl:
                    self.byte(0x80 | (0x20 if j >= k else 0) | j)
                elif j < k:
                    self.byte((0x20 if idx else 0) | j)
                    if idx:
                        self.byte(int(idx))
                else:
                    self.byte(0x40 | (0x20 if idx else 0) | j)
                    if idx:
                        self.byte(int(idx))
            self.byte(0x90 + GS_DEVICES.index(device) if device is not None else 0)
            self.byte(len(attrs))
            for aname, atype, value in attrs:
                self.byte(GS_ATTRS.index(aname))
                self.byte(0xB0 + atype - 1)
                self.value(atype, value)
        return self

    def int_(self, v):
        if 0 <= v < 128 or -128 <= v < -16:  # decode_int: bytes below 0xF0 are int8
            return self.byte(v & 0xFF)
        self.byte(0xF6)
        self.b += struct.pack("<q", v)
        return self

    def value(self, t, v):
        if t == G.INT:
            self.int_(v)
        elif t == G.FLOAT:
            self.byte([0, 1, -1, 0.5, 1e308, -0.0, 5e-324, 3].index(v))
        elif t == G.BOOLA:
            self.byte(1 if v else 0)
        elif t == G.STRING:
            self.byte(GS_STRINGS.index(v))
        elif t == G.TYPE:
            self.byte(v)
        elif t == G.SHAPE:
            self.byte(len(v) + 1 if v is not None else 0xFF)
            for d in v or []:
                self.byte(d + 1)
        elif t == G.TENSOR:
            self.byte(0)
            self.tensor(*v)
        else:  # lists: every item carries an int, a float, a dtype and a string
            self.byte(len(v))
            for item in v:
                self.int_(item if t == G.LIST_INT else 0)
                self.byte(0)
                self.byte(item if t == G.LIST_TYPE else 0)
                self.byte(GS_STRINGS.index(item) if t == G.LIST_STRING else 0)

    def tensor(self, dtype, dims, values=None):
        """values: small integers (0..7, one byte each), or bytes for raw mode."""
        self.byte(dtype)
        self.byte(len(dims))
        for d in dims:
            self.byte(d)
        if dtype in (G.RES, G.VARIANT):
            return self
        if dtype == G.STR:  # values: the strings, each a length byte and its bytes
            for v in values:
                self.byte(len(v))
                self.b += v
            return self
        n = 1
        for d in dims:
            n *= d
        if isinstance(values, (bytes, bytearray)):
            self.byte(1)
            self.b += values
        else:
            self.byte(0)
            values = values or [1] * n
            for x in values:
                self.byte(x)
        return self

    def tname(self, name):
        node, _, idx = name.partition(":")
        j = self.names[node]
        if idx:
            return self.byte(0x40 | j).byte(int(idx))
        return self.byte(j)

    def run(self, feeds=(), fetches=(), targets=(), options=0, meta=False):
        """feeds: (name, tensor args)."""
        self.byte(0).byte(len(fetches)).byte(len(targets)).byte(len(feeds))
        for name, t in feeds:
            self.tname(name)
            self.tensor(*t)
        for f in fetches:
            self.tname(f)
        for t in targets:
            self.byte(self.names[t])
        return self.byte(options).byte(1 if meta else 0)

    def extend(self, nodes):
        self.byte(3)
        return self.graph(nodes, base=len(self.names))

    def callable(self, feeds, fetches, calls):
        self.byte(4).byte(len(feeds)).byte(len(fetches)).byte(0)
        for f in feeds:
            self.tname(f)
        for f in fetches:
            self.tname(f)
        self.byte(len(calls))
        for values in calls:
            for t in values:
                self.tensor(*t)
            self.byte(0).byte(0)  # run options, the real handle
        return self.byte(1)  # release

    def prun(self, inputs, outputs, steps, close=True):
        """steps: (feed mask, fetch mask, tensors for the fed inputs)."""
        self.byte(5).byte(len(inputs)).byte(len(outputs)).byte(0)
        for n in inputs:
            self.tname(n)
        for n in outputs:
            self.tname(n)
        self.byte(len(steps))
        for fm, om, tensors in steps:
            self.byte(fm).byte(om)
            for t in tensors:
                self.tensor(*t)
        return self.byte(1 if close else 0)

    def reset(self, containers=()):
        self.byte(6).byte(len(containers))
        for c in containers:
            self.byte(["", "c", "localhost", "q", "v"].index(c))
        return self

    def eager(self, node_index, inputs):
        self.byte(7).byte(0).byte(node_index)
        self.byte(len(inputs))
        for t in inputs:
            self.tensor(*t)
        return self.byte(0)  # run options: the default deadline

    def query(self, node, tensor):
        return self.byte(8).byte(self.names[node]).tname(tensor)

    def close(self):
        return self.byte(9)


def attr(name, t, v):
    return (name, t, v)


F32 = G.F32
I32 = G.I32


def const(name, dtype, dims, values=None):
    return (name, "Const", [], None, [attr("value", G.TENSOR, (dtype, dims, values))])


mlp_nodes = [
    ("x", "Placeholder", [], None, [attr("dtype", G.TYPE, F32), attr("shape", G.SHAPE, [-1, 2])]),
    const("w", F32, [2, 2], [1, 2, 3, 4]),
    const("bias", F32, [2], [0, 1]),
    ("mm", "MatMul", ["x", "w"], None, []),
    ("add", "BiasAdd", ["mm", "bias"], None, []),
    ("relu", "Relu", ["add"], None, []),
    ("sm", "Softmax", ["relu"], None, []),
]
X = (F32, [2, 2], [1, 1, 2, 0])
g = G(0).graph(mlp_nodes).run(feeds=[("x", X)], fetches=["sm", "mm:0"], meta=True, options=0x1C)
g.callable(["x"], ["relu"], [[X], [(F32, [1, 2], [3, 4])]]).prun(["x"], ["mm", "sm"], [(1, 1, [X]), (0, 2, [])])
add("fuzz_graph_session", "mlp", g.b)

mlp2 = [list(n) for n in mlp_nodes]
mlp2[3][3] = "/device:CPU:1"
mlp2[5][3] = "/job:localhost/replica:0/task:0/device:CPU:1"
g = G(0x01).graph([tuple(n) for n in mlp2]).run(feeds=[("x", X)], fetches=["sm"], options=0x0C, meta=True)
g.query("mm", "sm:0")
add("fuzz_graph_session", "mlp_two_devices", g.b)

var_nodes = [
    ("v", "VarHandleOp", [], None, [attr("dtype", G.TYPE, I32), attr("shape", G.SHAPE, [2]),
                                    attr("shared_name", G.STRING, "v")]),
    const("init", I32, [2], [1, 2]),
    ("assign", "AssignVariableOp", ["v", "init"], None, [attr("dtype", G.TYPE, I32)]),
    ("read", "ReadVariableOp", ["v"], None, [attr("dtype", G.TYPE, I32)]),
    const("one", I32, [2], [1, 1]),
    ("inc", "AssignAddVariableOp", ["v", "one"], None, [attr("dtype", G.TYPE, I32)]),
]
g = G(0).graph(var_nodes).run(targets=["assign"]).run(fetches=["read"]).run(targets=["inc"]).run(fetches=["read"])
g.reset().run(fetches=["read"])
add("fuzz_graph_session", "variable", g.b)

queue_nodes = [
    ("q", "FIFOQueueV2", [], None, [attr("component_types", G.LIST_TYPE, [F32]), attr("capacity", G.INT, 2)]),
    ("x", "Placeholder", [], None, [attr("dtype", G.TYPE, F32), attr("shape", G.SHAPE, [])]),
    ("enq", "QueueEnqueueV2", ["q", "x"], None, [attr("Tcomponents", G.LIST_TYPE, [F32])]),
    ("deq", "QueueDequeueV2", ["q"], None, [attr("component_types", G.LIST_TYPE, [F32])]),
    ("size", "QueueSizeV2", ["q"], None, []),
    ("close", "QueueCloseV2", ["q"], None, []),
]
S = (F32, [], [3])
g = G(0).graph(queue_nodes).run(feeds=[("x", S)], targets=["enq"]).run(fetches=["size"]).run(fetches=["deq"])
g.run(fetches=["deq"]).run(targets=["close"]).run(fetches=["deq"])
add("fuzz_graph_session", "fifo_queue", g.b)
g = G(0).graph(queue_nodes).run(feeds=[("x", S)], targets=["enq"]).run(feeds=[("x", S)], targets=["enq"])
g.run(feeds=[("x", S)], targets=["enq"]).close().run(fetches=["size"])
add("fuzz_graph_session", "fifo_queue_full", g.b)

concat_nodes = [
    const("a", I32, [2, 2], [1, 2, 3, 4]),
    const("b", I32, [1, 2], [5, 6]),
    const("axis", I32, [], [0]),
    ("c", "ConcatV2", ["a", "b", "axis"], None, [attr("N", G.INT, 2)]),
]
add("fuzz_graph_session", "concat", G(0).graph(concat_nodes).run(fetches=["c"]).b)

reshape_nodes = [
    const("a", F32, [2, 3], [1, 2, 3, 4, 5, 6]),
    ("shape", "Const", [], None, [attr("value", G.TENSOR, (I32, [2], struct.pack("<2i", -1, 2)))]),
    ("r", "Reshape", ["a", "shape"], None, []),
    const("perm", I32, [2], [1, 0]),
    ("t", "Transpose", ["r", "perm"], None, []),
    const("axes", I32, [1], [0]),
    ("s", "Sum", ["t", "axes"], None, [attr("keep_dims", G.BOOLA, True)]),
    ("m", "Mean", ["t", "axes"], None, []),
    ("mx", "Max", ["t", "axes"], None, []),
]
add("fuzz_graph_session", "reshape_transpose_reduce", G(0).graph(reshape_nodes).run(fetches=["r", "t", "s"]).run(
    fetches=["m", "mx"]).b)

cast_nodes = [
    const("a", I32, [3], [1, 2, 7]),
    ("f", "Cast", ["a"], None, [attr("DstT", G.TYPE, G.F64)]),
    ("b", "Cast", ["f"], None, [attr("DstT", G.TYPE, G.BOOL)]),
    ("i", "Cast", ["b"], None, [attr("DstT", G.TYPE, G.I64)]),
]
add("fuzz_graph_session", "cast", G(0).graph(cast_nodes).run(fetches=["f", "b", "i"]).b)

fill_nodes = [
    const("dims", I32, [2], [2, 3]),
    const("v", F32, [], [5]),
    ("fill", "Fill", ["dims", "v"], None, []),
    ("shape", "Shape", ["fill"], None, []),
    ("z", "ZerosLike", ["fill"], None, []),
    ("o", "OnesLike", ["fill"], None, []),
    ("ru", "RandomUniform", ["dims"], None, [attr("dtype", G.TYPE, F32), attr("seed", G.INT, 1)]),
    ("rn", "RandomStandardNormal", ["dims"], None, [attr("dtype", G.TYPE, F32), attr("seed2", G.INT, 7)]),
]
add("fuzz_graph_session", "fill_random", G(0).graph(fill_nodes).run(fetches=["fill", "shape", "z"]).run(
    fetches=["o", "ru", "rn"]).b)

cwise = [const("a", F32, [2, 2], [1, 2, 3, 4]), const("b", F32, [2], [2, 1])]
for i, op in enumerate(["Add", "AddV2", "Sub", "Mul", "Maximum", "Minimum", "RealDiv"]):
    cwise.append(("n%d" % i, op, ["a", "b"], None, []))
for i, op in enumerate(["Neg", "Abs", "Square", "Exp", "Log", "Sqrt", "Sigmoid", "Tanh"]):
    cwise.append(("u%d" % i, op, ["a"], None, []))
g = G(0).graph(cwise)
for k in range(0, 15, 3):
    names = [n[0] for n in cwise[2 + k:2 + k + 3]]
    g.run(fetches=names)
add("fuzz_graph_session", "cwise", g.b)

misc_nodes = [
    ("p", "Placeholder", [], None, [attr("dtype", G.TYPE, I32)]),
    ("pd", "PlaceholderWithDefault", ["c"], None, [attr("dtype", G.TYPE, I32), attr("shape", G.SHAPE, [2])]),
    const("c", I32, [2], [4, 5]),
    ("id", "Identity", ["pd", "^p"], None, []),
    ("noop", "NoOp", ["^id"], None, []),
    ("h", "GetSessionHandle", ["c"], None, []),
]
g = G(0).graph(misc_nodes).run(fetches=["id"], feeds=[("p", (I32, [], [1]))]).run(fetches=["pd"]).run(
    targets=["noop"], feeds=[("p", (I32, [], [1]))]).run(fetches=["h"])
add("fuzz_graph_session", "placeholders_control", g.b)

g = G(0).graph(mlp_nodes[:4]).extend([("sq", "Square", ["mm"], None, [])]).run(
    feeds=[("x", X)], fetches=["sq"]).eager(3, [X, (F32, [2, 2], [1, 0, 0, 1])])
add("fuzz_graph_session", "extend_eager", g.b)

# Malformed on purpose: a cycle, a bad device, an unknown input.
bad = [("a", "Identity", ["c"], None, []), ("b", "Identity", ["a"], "gpu zero", []), ("c", "Identity", ["b"], None, [])]
add("fuzz_graph_session", "cycle", G(0).graph(bad).run(fetches=["a"]).b)
add("fuzz_graph_session", "empty", b"\x00\x00")

# Control flow: a while loop counting to 5, a conditional taken both ways (a dead fetch, too), a
# TensorList, non-maximum suppression and Where.
LOOP = [attr("frame_name", G.STRING, "loop")]
INVARIANT = LOOP + [attr("is_constant", G.BOOLA, True)]
loop_nodes = [
    const("zero", I32, [], [0]), const("n", I32, [], [5]), const("one", I32, [], [1]),
    ("enter", "Enter", ["zero"], None, LOOP), ("limit", "Enter", ["n"], None, INVARIANT),
    ("step", "Enter", ["one"], None, INVARIANT), ("merge", "Merge", ["enter", "next"], None, []),
    ("less", "Less", ["merge", "limit"], None, []), ("cond", "LoopCond", ["less"], None, []),
    ("switch", "Switch", ["merge", "cond"], None, []), ("add", "AddV2", ["switch:1", "step"], None, []),
    ("next", "NextIteration", ["add"], None, []), ("exit", "Exit", ["switch"], None, []),
]
# String tensors and the string ops: a split, hashes, n-grams and a regex replacement.
str_nodes = [
    const("s", G.STR, [3], [b"hello world", b"a,b c", b""]), const("d", G.STR, [], [b" "]),
    const("sp", I32, [2], [0, 3]),
    ("split", "StringSplit", ["s", "d"], None, []),
    ("h", "StringToHashBucketFast", ["s"], None, [attr("num_buckets", G.INT, 7)]),
    ("ng", "StringNGrams", ["split:1", "sp"], None, [
        attr("separator", G.STRING, " "), attr("ngram_widths", G.LIST_INT, [1, 2]), attr("left_pad", G.STRING, "c"),
        attr("right_pad", G.STRING, "q"), attr("pad_width", G.INT, 1), attr("preserve_short_sequences", G.BOOLA, True),
        attr("Tsplits", G.TYPE, I32)]),
    ("rx", "StaticRegexReplace", ["s"], None, [attr("pattern", G.STRING, "(a|b)*c?"), attr("rewrite", G.STRING, "\\1-\\0")]),
    ("eq", "Equal", ["s", "rx"], None, []),
]
add("fuzz_graph_session", "strings", G(0).graph(str_nodes).run(fetches=["split:1", "h", "ng", "rx", "eq"]).b)

add("fuzz_graph_session", "while_loop", G(0).graph(loop_nodes).run(fetches=["exit"], meta=True).run(
    fetches=["exit", "add"]).b)
add("fuzz_graph_session", "while_loop_two_devices", G(0x01).graph(loop_nodes).run(fetches=["exit"]).b)
cond_nodes = [
    ("x", "Placeholder", [], None, [attr("dtype", G.TYPE, I32), attr("shape", G.SHAPE, [])]),
    ("p", "Placeholder", [], None, [attr("dtype", G.TYPE, G.BOOL), attr("shape", G.SHAPE, [])]),
    const("two", I32, [], [2]), ("sw", "Switch", ["x", "p"], None, []), ("t", "Mul", ["sw:1", "two"], None, []),
    ("f", "AddV2", ["sw", "two"], None, []), ("y", "Merge", ["f", "t"], None, []),
]
X5 = (I32, [], [5])
add("fuzz_graph_session", "conditional", G(0).graph(cond_nodes).run(
    feeds=[("x", X5), ("p", (G.BOOL, [], [1]))], fetches=["y", "y:1", "t"]).run(
    feeds=[("x", X5), ("p", (G.BOOL, [], [0]))], fetches=["y", "t"]).b)
list_nodes = [
    const("shape", I32, [1], [2]), const("n", I32, [], [3]), const("i", I32, [], [1]), const("v", F32, [2], [4, 5]),
    ("list", "TensorListReserve", ["shape", "n"], None, [attr("element_dtype", G.TYPE, F32)]),
    ("set", "TensorListSetItem", ["list", "i", "v"], None, []),
    ("get", "TensorListGetItem", ["set", "i", "shape"], None, [attr("element_dtype", G.TYPE, F32)]),
    ("stack", "TensorListStack", ["set", "shape"], None, [attr("element_dtype", G.TYPE, F32)]),
]
add("fuzz_graph_session", "tensor_list", G(0).graph(list_nodes).run(fetches=["stack", "get", "list"]).b)
nms_nodes = [
    const("boxes", F32, [3, 4], [0, 0, 1, 1, 0, 0, 1, 2, 3, 3, 4, 4]), const("scores", F32, [3], [3, 2, 1]),
    const("max", I32, [], [2]), const("iou", F32, [], [0]), const("zero", F32, [], [0]),
    ("nms", "NonMaxSuppressionV5", ["boxes", "scores", "max", "iou", "zero", "zero"], None, []),
    ("where", "Where", ["scores"], None, []),
]
add("fuzz_graph_session", "nms_where", G(0).graph(nms_nodes).run(fetches=["nms", "nms:1", "nms:2", "where"]).b)


# ---- fuzz_lua_values: stack-machine programs ----
class L:
    NIL, TRUE, FALSE, INT8, INTSPEC, INTRAW, FLOATSPEC, FLOATRAW = 0, 145, 1, 2, 50, 74, 3, 51
    STR, STRNUL, STRRAW, TABLE, SET, APPEND, SETKEY, SELFREF, NEST, META = 4, 5, 149, 6, 7, 8, 9, 10, 11, 12
    DUP, POP, SWAP, FIXTURE, OBJ, JUNK, FACTORY, GC, CALL = 13, 14, 15, 16, 17, 18, 19, 20, 21
    ENTRIES = ["tensor", "tensor_dtype", "tensor_spec", "totable", "tostring", "from_bytes", "index", "len",
               "bytes", "item", "tensor_close", "session", "create", "extend", "run", "run_meta", "make_callable",
               "callable",
               "prun_setup", "prun", "prun_close", "reset", "session_close", "list_devices", "cost_models",
               "compute", "device_cpu", "renamed", "device_attrs", "resource_mgr", "register", "add_devices",
               "new_device", "factory_get", "factory_reset", "dn_parse", "dn_names", "dn_canonicalize", "dn_merge",
               "dn_misc", "graph", "g_op", "g_placeholder", "g_const", "g_variable", "g_graph_def", "arith",
               "device_set", "device_mgr", "timeline", "gc", "chaos"]
    FIXTURES = ["mlp", "variable", "queue", "concat", "fill", "options", "feeds", "fetches", "run_options",
                "tensor_spec", "callable_spec", "feeds2", "cpu_config", "parsed_name", "noop_graph"]

    def __init__(self):
        self.b = bytearray()

    def op(self, *bs):
        self.b += bytes(bs)
        return self

    def s(self, text):
        return self.op(L.STR, LUA_DICT.index(text))

    def raw(self, data):
        data = data.encode("latin-1") if isinstance(data, str) else data
        return self.op(L.STRRAW, len(data)).op(*data)

    def i(self, v):
        if -128 <= v < 128:
            return self.op(L.INT8, v & 0xFF)
        self.b += bytes([L.INTRAW]) + struct.pack("<q", v)
        return self

    def f(self, v):
        self.b += bytes([L.FLOATRAW]) + struct.pack("<d", v)
        return self

    def fixture(self, name):
        return self.op(L.FIXTURE, L.FIXTURES.index(name))

    def call(self, entry, nargs):
        return self.op(L.CALL, L.ENTRIES.index(entry), nargs)

    def table(self, items=(), fields=()):
        """items: callables pushing a value each; fields: (key, pusher)."""
        self.op(L.TABLE)
        for push in items:
            push(self)
            self.op(L.APPEND)
        for key, push in fields:
            push(self)
            self.op(L.SETKEY, LUA_DICT.index(key))
        return self


def num(v):
    return lambda p: p.i(v) if isinstance(v, int) else p.f(v)


def lstr(v):
    return lambda p: p.s(v)


def ltab(items=(), fields=()):
    return lambda p: p.table(items, fields)


def nested(rows):
    return ltab([ltab([num(x) for x in r]) for r in rows])


lua = {}
lua["tensor_nested"] = L().table([ltab([num(1), num(2)]), ltab([num(3), num(4)])]).call("tensor", 1).call(
    "totable", 1).op(L.POP).call("tostring", 1)
lua["tensor_dtype"] = L().table([num(1.5), num(-2)]).s("float64").call("tensor_dtype", 2).call("bytes", 1)
lua["tensor_spec"] = L().s("int32").table([num(2), num(3)]).table([num(x) for x in range(6)]).call(
    "tensor_spec", 3).op(L.DUP, 0).i(2).call("index", 2).call("totable", 1)
lua["tensor_spec_zeros"] = L().fixture("tensor_spec").call("tensor", 1).call("len", 1).call("item", 1)
lua["from_bytes"] = L().s("float32").table([num(2)]).raw(struct.pack("<2f", 1.25, 2)).call(
    "from_bytes", 3).call("totable", 1).s("bool").table([num(2)]).raw("\1\0").call("from_bytes", 3)
lua["tensor_scalar_close"] = L().f(2.5).call("tensor", 1).op(L.DUP, 0).call("tensor_close", 1).op(L.POP).call(
    "totable", 1)
lua["tensor_deep"] = L().i(1).op(L.NEST, 3).call("tensor", 1)
lua["tensor_very_deep"] = L().i(1).op(L.NEST, 4).call("tensor", 1)
lua["tensor_selfref"] = L().table([num(1)]).op(L.SELFREF, 1).call("tensor", 1)
lua["tensor_meta_raise"] = L().table([num(1), num(2)]).op(L.META, 0).call("tensor", 1).fixture(
    "tensor_spec").op(L.META, 6).call("tensor", 1)
lua["session_mlp"] = L().fixture("options").call("session", 1).fixture("mlp").call("create", 2).fixture(
    "feeds").fixture("fetches").op(L.NIL).fixture("run_options").call("run", 5)
lua["session_mlp_default"] = L().call("session", 0).fixture("mlp").call("create", 2).fixture("feeds").s(
    "y").call("run", 3).call("totable", 1)
lua["session_callable"] = L().call("session", 0).fixture("mlp").call("create", 2).fixture("callable_spec").table(
    [ltab([num(1), num(1)]), ltab([num(2), num(0)])]).call("make_callable", 3)
lua["session_prun"] = L().call("session", 0).fixture("mlp").call("create", 2).table([lstr("x")]).table(
    [lstr("mm"), lstr("y")]).call("prun_setup", 3).op(L.NIL).op(L.SWAP).fixture("feeds").s("mm").call(
    "prun", 4).call("prun_close", 0)
lua["session_variable_reset"] = L().call("session", 0).fixture("variable").call("create", 2).table().op(
    L.NIL).table([lambda p: p.raw("v/Assign")]).call("run", 4).op(L.POP).op(L.NIL).table().s("v/Read").call(
    "run", 3).op(L.POP).op(L.NIL).table().op(L.NIL).table([lstr("inc")]).call("run", 4).op(L.POP).call(
    "reset", 0).op(L.NIL).table().s("v/Read").call("run", 3).call("session_close", 0)
lua["session_queue"] = L().call("session", 0).fixture("queue").call("create", 2).table(
    fields=[("x", num(2.5)), ("n", num(1))]).op(L.NIL).table([lstr("enqueue")]).call("run", 4).op(L.POP).op(
    L.NIL).table().s("value").call("run", 3).op(L.POP).op(L.NIL).table().s("value").call("run", 3)
lua["session_concat"] = L().call("session", 0).fixture("concat").call("create", 2).table(
    fields=[("a", nested([[1, 2]]))]).table([lstr("c"), lstr("r"), lstr("f"), lstr("t"), lstr("s")]).call("run", 3)
lua["session_fill"] = L().call("session", 0).fixture("fill").call("create", 2).table(
    fields=[("dims", ltab([num(2), num(3)]))]).table([lstr("fill"), lstr("ru")]).call("run", 3)
lua["session_extend_chaos"] = L().call("session", 0).fixture("mlp").call("create", 2).fixture(
    "noop_graph").call("extend", 2).fixture("feeds").op(L.META, 6).s("y").call("run", 3)
lua["session_bad_options"] = L().table(fields=[("intra_op_threads", num(-1))]).call("session", 1).table(
    fields=[("device_count", ltab(fields=[("CPU", num(2.5))]))]).call("session", 1).s("x").call("session", 1)
lua["session_list_devices"] = L().fixture("options").call("session", 1).s("y").call("list_devices", 2).call(
    "cost_models", 1)
lua["compute"] = L().op(L.NIL).s("MatMul").table([nested([[1.5, 2]]), nested([[3.0], [4.5]])]).call(
    "compute", 3).op(L.NIL).s("Fill").table([ltab([num(2), num(2)]), num(1.5)]).call("compute", 3)
lua["compute_attrs"] = L().op(L.NIL).s("Cast").table([ltab([num(1), num(2)])]).table(
    fields=[("DstT", lstr("float64"))]).call("compute", 4)
lua["device_cpu"] = L().fixture("cpu_config").call("device_cpu", 1).op(L.DUP, 0).call("device_attrs", 1).op(
    L.POP).s("/job:w/replica:0/task:7").call("renamed", 2).call("resource_mgr", 1)
lua["factory_register"] = L().s("XPU").op(L.FACTORY, 8).i(70).call("register", 3).op(L.NIL).call(
    "add_devices", 1).s("XPU").call("factory_get", 1)
lua["factory_raises"] = L().s("XPU").op(L.FACTORY, 0).i(300).call("register", 3).call("add_devices", 0).s(
    "XPU").op(L.FACTORY, 4).i(400).call("register", 3).call("session", 0)
lua["factory_reentrant"] = L().s("CPU").op(L.FACTORY, 13).i(1000).call("register", 3).call("add_devices", 0).call(
    "factory_reset", 0).s("CPU").op(L.FACTORY, 11).i(1000).call("register", 3).call("session", 0)
lua["factory_chaos"] = L().call("session", 0).s("SIM").op(L.FACTORY, 17).i(500).call("register", 3).fixture(
    "options").call("session", 1)
lua["device_name"] = L().s("/job:localhost/replica:0/task:0/device:CPU:0").call("dn_parse", 1).call(
    "dn_names", 1).s("/cpu:0").s("/job:localhost/replica:0/task:0").call("dn_canonicalize", 2).s(
    "/device:CPU:1").s("/device:CPU:*").op(L.TRUE).call("dn_merge", 3)
lua["device_name_table"] = L().fixture("parsed_name").call("dn_names", 1).fixture("parsed_name").s(
    "/device:CPU:*").call("dn_misc", 2)
lua["device_name_nul"] = L().op(L.STRNUL, 2).call("dn_parse", 1).raw("/job:" + "j" * 60).call("dn_parse", 1)
lua["graph_builder"] = L().call("graph", 0).op(L.DUP, 0).s("float32").table([num(-1), num(2)]).call(
    "g_placeholder", 3).op(L.DUP, 0).call("arith", 2).op(L.POP).call("g_graph_def", 1)
lua["graph_builder_op"] = L().call("graph", 0).table([num(1), num(2)]).table(
    fields=[("dtype", lstr("int32"))]).call("g_const", 3).op(L.TABLE).op(L.SWAP).op(L.APPEND).op(L.NIL).op(
    L.SWAP).s("Relu").op(L.SWAP).call("g_op", 3).op(L.NIL).op(L.SWAP).call("g_variable", 2)
lua["device_set_mgr"] = L().op(L.NIL).call("add_devices", 1).op(L.DUP, 0).s("/device:CPU:*").call(
    "device_set", 2).op(L.POP).s("CPU:0").call("device_mgr", 2)
lua["gc_finalizers"] = L().table([num(1)]).op(L.META, 11).call("session", 0).call("tensor", 0).op(L.GC).call(
    "chaos", 0).fixture("mlp").call("create", 1)
lua["timeline"] = L().call("session", 0).fixture("mlp").call("create", 2).fixture("feeds").s("y").call(
    "run_meta", 3).call("timeline", 1)
# One byte away from the use-after-free reproducers in fuzz/findings/: the same
# conversions, with a metatable whose __index only collects garbage (5) instead
# of closing every object (6).
GC_META = 5
lua["near_run_feed_meta"] = L().call("session", 0).fixture("mlp").call("create", 2).op(L.TABLE).op(
    L.TABLE).op(L.META, GC_META).op(L.SETKEY, LUA_DICT.index("x")).s("y").call("run", 3)
lua["near_callable_feed_meta"] = L().call("session", 0).fixture("mlp").call("create", 2).fixture(
    "callable_spec").op(L.TABLE).op(L.META, GC_META).call("make_callable", 3)
lua["near_make_callable_meta"] = L().call("session", 0).fixture("mlp").call("create", 2).op(L.TABLE).op(
    L.META, GC_META).call("make_callable", 2)
lua["near_compute_input_meta"] = L().op(L.NIL).s("MatMul").op(L.TABLE).op(L.TABLE).op(L.META, GC_META).op(
    L.APPEND).op(L.TABLE).op(L.META, GC_META).call("compute", 4)
for name, p in lua.items():
    add("fuzz_lua_values", name, p.b)


def main():
    for harness, items in seeds.items():
        d = os.path.join(OUT, harness)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        for name, data in items:
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)
        print("%-20s %3d seeds, %6d bytes" % (harness, len(items), sum(len(x) for _, x in items)))


if __name__ == "__main__":
    sys.exit(main())
