// ONNX Runtime (onnxruntime-node's bundled linux-x64 CPU library) on the benchmark MLP, timed in
// this process the way tfdev_bench times tfdev: WARM untimed runs, then REPS runs timed one by
// one, the median reported. Prints lines for scripts/bench/run to collect:
//   peer ort mlp b<B> t<T> <median microseconds> <cores>  InferenceSession run, called synchronously;
//        cores = process CPU time / wall time over the timed runs
//   peer ort_api mlp b<B> t<T> <median microseconds>  the public `await session.run()` (informative)
//   info ort <text> / skip ort <reason>  (info includes the fixed cost of one run of an Identity model)
// and writes each batch's output (float32, little-endian) to OUT/ort_b<B>.f32 for tfdev_bench to
// check against tfdev's own output.
//   node ort_mlp.js --modules DIR/node_modules --model mlp.onnx --out DIR --configs "1:1:50:1001 ..."
'use strict';
const fs = require('fs');
const path = require('path');
const { SIZES, mlpInput, parseConfigs, median, args } = require('./mlp_common.js');
const { identityModel } = require('./make_onnx.js');

const opt = args(process.argv.slice(2));
let ort, binding;
try {
  const dir = path.join(path.resolve(opt.modules), 'onnxruntime-node');
  ort = require(dir);
  binding = require(path.join(dir, 'dist', 'binding.js'));
} catch (e) {
  console.log(`skip ort onnxruntime-node not loadable from ${opt.modules}: ${String(e.message).split('\n')[0]}`);
  process.exit(0);
}

function options(threads) {
  return {
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    executionProviders: ['cpu'],
  };
}

const now = () => Number(process.hrtime.bigint()) / 1e3; // microseconds

async function main() {
  const configs = parseConfigs(opt.configs);
  const version = require(path.join(path.resolve(opt.modules), 'onnxruntime-node', 'package.json')).version;
  console.log(`info ort onnxruntime-node ${version} (CPU execution provider, library from the npm package), node ${process.version}`);
  console.log('info ort session: intraOpNumThreads = row threads, interOpNumThreads 1, sequential, graphOptimizationLevel all');
  binding.initOrt();
  const sync = new Map(), api = new Map();
  const written = new Set();
  {
    const s = new binding.binding.InferenceSession();
    const bytes = identityModel();
    s.loadModel(bytes.buffer, bytes.byteOffset, bytes.byteLength, options(1));
    const feeds = { x: new ort.Tensor('float32', mlpInput(1), [1, SIZES[0]]) }, fetches = { y: null };
    const c = configs[0], t = new Float64Array(c.reps);
    for (let i = 0; i < c.warm; i++) s.run(feeds, fetches, {});
    for (let r = 0; r < c.reps; r++) {
      const t0 = now();
      s.run(feeds, fetches, {});
      t[r] = now() - t0;
    }
    console.log(`info ort fixed cost of one synchronous run through the node binding (an Identity model, 1x784): ${median(t).toFixed(1)} us`);
    s.dispose();
  }
  for (const c of configs) {
    if (!sync.has(c.threads)) {
      const s = new binding.binding.InferenceSession();
      s.loadModel(path.resolve(opt.model), options(c.threads));
      sync.set(c.threads, s);
      api.set(c.threads, await ort.InferenceSession.create(path.resolve(opt.model), options(c.threads)));
    }
    const s = sync.get(c.threads), a = api.get(c.threads);
    const x = new ort.Tensor('float32', mlpInput(c.batch), [c.batch, SIZES[0]]);
    const feeds = { x }, fetches = { probs: null }, runOpts = {};
    for (let i = 0; i < c.warm; i++) s.run(feeds, fetches, runOpts);
    const t = new Float64Array(c.reps);
    const cpu0 = process.cpuUsage(), w0 = now();
    for (let r = 0; r < c.reps; r++) {
      const t0 = now();
      s.run(feeds, fetches, runOpts);
      t[r] = now() - t0;
    }
    const cpu = process.cpuUsage(cpu0), cores = (cpu.user + cpu.system) / (now() - w0);
    console.log(`peer ort mlp b${c.batch} t${c.threads} ${median(t).toFixed(3)} ${cores.toFixed(2)}`);
    for (let i = 0; i < c.warm; i++) await a.run(feeds);
    for (let r = 0; r < c.reps; r++) {
      const t0 = now();
      await a.run(feeds);
      t[r] = now() - t0;
    }
    console.log(`peer ort_api mlp b${c.batch} t${c.threads} ${median(t).toFixed(3)}`);
    if (!written.has(c.batch)) {
      const out = s.run(feeds, fetches, runOpts).probs.data;
      fs.writeFileSync(path.join(opt.out, `ort_b${c.batch}.f32`), Buffer.from(out.buffer, out.byteOffset, out.byteLength));
      written.add(c.batch);
    }
  }
}

main().catch((e) => {
  console.log(`skip ort failed: ${String(e.message).split('\n')[0]}`);
  process.exit(0);
});
