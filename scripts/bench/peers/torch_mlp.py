"""PyTorch on the benchmark MLP, timed in this process the way tfdev_bench times tfdev: WARM
untimed runs, then REPS runs timed one by one, the median reported. Two forms of the same model:
eager nn.Sequential(Linear, ReLU, Linear, ReLU, Linear, Softmax), and torch.jit.trace of it frozen
with torch.jit.freeze. Everything under torch.inference_mode(), torch.set_num_threads(row threads),
one inter-op thread. torch.set_num_threads does not reach the OpenBLAS that Debian's torch calls for
Linear (it would use every core), so OpenBLAS's own openblas_set_num_threads is called too. Prints lines for scripts/bench/run to collect:
  peer torch_eager mlp b<B> t<T> <median microseconds> <cores: CPU time / wall time over the timed runs>
  peer torch_jit mlp b<B> t<T> <median microseconds> <cores>
  info torch <text> / skip torch_eager <reason> / skip torch_jit <reason>
and writes each batch's output (float32) to OUT/torch_eager_b<B>.f32 and OUT/torch_jit_b<B>.f32.

  /usr/bin/python3 torch_mlp.py --out DIR --configs "1:1:50:1001 64:1:50:501 ..."

The weights are tfdev's benchmark weights, made with the same generator (random_tensor in
bench_runtime.c, mlp_common.js): a 32-bit LCG, value = ((seed >> 8) & 0xffff) / 65536 - 0.5.
"""
import argparse
import array
import os
import sys
import time

from torch_threads import Threads

SIZES = [784, 512, 512, 10]


def lcg_floats(count, seed):
    out = [0.0] * count
    s = seed
    for i in range(count):
        s = (s * 1103515245 + 12345) & 0xFFFFFFFF
        out[i] = ((s >> 8) & 0xFFFF) / 65536.0 - 0.5
    return out


def median(v):
    s = sorted(v)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--configs", required=True)
    opt = ap.parse_args()
    try:
        import torch
    except Exception as e:  # noqa: BLE001 - any import failure means no peer
        reason = f"{type(e).__name__}: {e}".splitlines()[0]
        print(f"skip torch_eager cannot import torch with {sys.executable}: {reason}")
        print(f"skip torch_jit cannot import torch with {sys.executable}: {reason}")
        return
    configs = [tuple(int(p) for p in c.split(":")) for c in opt.configs.split()]
    torch.set_num_interop_threads(1)
    print(f"info torch torch {torch.__version__} (python {sys.version.split()[0]}, {sys.executable}), "
          f"parallel backend: {torch.__config__.parallel_info().splitlines()[-1].split(':')[-1].strip()}")

    threads_of = Threads(torch)
    print(f"info torch {threads_of.describe()} = row threads")

    layers = []
    for l in range(3):
        w = torch.tensor(lcg_floats(SIZES[l] * SIZES[l + 1], 10 + l), dtype=torch.float32)
        b = torch.tensor(lcg_floats(SIZES[l + 1], 20 + l), dtype=torch.float32)
        lin = torch.nn.Linear(SIZES[l], SIZES[l + 1])
        with torch.no_grad():  # tfdev's w is in x out; Linear keeps out x in
            lin.weight.copy_(w.reshape(SIZES[l], SIZES[l + 1]).t())
            lin.bias.copy_(b)
        layers.append(lin)
        if l < 2:
            layers.append(torch.nn.ReLU())
    layers.append(torch.nn.Softmax(dim=-1))
    eager = torch.nn.Sequential(*layers).eval()
    x_all = torch.tensor(lcg_floats(max(c[0] for c in configs) * SIZES[0], 30), dtype=torch.float32)
    with torch.no_grad():
        jit = torch.jit.freeze(torch.jit.trace(eager, x_all[: SIZES[0]].reshape(1, SIZES[0])))

    written = set()
    for batch, threads, warm, reps in configs:
        threads_of.set(threads)
        x = x_all[: batch * SIZES[0]].reshape(batch, SIZES[0]).clone()
        for name, model in (("torch_eager", eager), ("torch_jit", jit)):
            with torch.inference_mode():
                for _ in range(warm):
                    model(x)
                t = [0.0] * reps
                c0, w0 = time.process_time(), time.perf_counter()
                for r in range(reps):
                    t0 = time.perf_counter_ns()
                    model(x)
                    t[r] = (time.perf_counter_ns() - t0) / 1e3
                cores = (time.process_time() - c0) / (time.perf_counter() - w0)
                print(f"peer {name} mlp b{batch} t{threads} {median(t):.3f} {cores:.2f}", flush=True)
                if (name, batch) not in written:
                    with open(os.path.join(opt.out, f"{name}_b{batch}.f32"), "wb") as f:
                        array.array("f", model(x).flatten().tolist()).tofile(f)
                    written.add((name, batch))


if __name__ == "__main__":
    main()
