// TensorFlow.js peer of scripts/bench/layers_models.lua: loads a layers or graph model (model.json and its
// weight files from disk, through tf.io.fromMemory, as no file loader ships without tfjs-node) and times
// predict / execute on the given backend, one thread: prints "median_ms <ms>", or "SKIP <why>".
//
//   node tfjs_layers.js MODEL_JSON wasm|cpu INPUT_BIN DIMS(comma) WARM REPS float32|int32
'use strict';
const fs = require('fs');
const path = require('path');

function skip(why) { console.log('SKIP ' + why); process.exit(0); }

let tf, tfl;
try {
  tf = require('@tensorflow/tfjs-core');
  tfl = require('@tensorflow/tfjs-layers');
} catch (e) { skip('@tensorflow/tfjs-core and -layers are not installed (scripts/bench/run --peers)'); }

async function main() {
  const [file, backend, input, dims, warm, reps, dtype] = process.argv.slice(2);
  console.warn = () => {};
  try {
    if (backend === 'wasm') {
      const wasm = require('@tensorflow/tfjs-backend-wasm');
      wasm.setThreadsCount && wasm.setThreadsCount(1);
    } else {
      require('@tensorflow/tfjs-backend-cpu');
    }
  } catch (e) { skip(`@tensorflow/tfjs-backend-${backend} is not installed (scripts/bench/run --peers)`); }
  if (!(await tf.setBackend(backend))) skip(`TensorFlow.js could not start its ${backend} backend`);
  const json = JSON.parse(fs.readFileSync(file, 'utf8'));
  const dir = path.dirname(file);
  const specs = [], buffers = [];
  for (const group of json.weightsManifest) {
    specs.push(...group.weights);
    for (const p of group.paths) buffers.push(fs.readFileSync(path.join(dir, p)));
  }
  const all = Buffer.concat(buffers);
  const weightData = all.buffer.slice(all.byteOffset, all.byteOffset + all.length);
  const artifacts = tf.io.fromMemory({ modelTopology: json.modelTopology, weightSpecs: specs, weightData });
  let model;
  if (json.modelTopology && json.modelTopology.node) {
    let tfc;
    try { tfc = require('@tensorflow/tfjs-converter'); } catch (e) { skip('@tensorflow/tfjs-converter is not installed'); }
    const g = await tfc.loadGraphModel(artifacts);
    model = { predict: (x) => { const y = g.execute(x); return Array.isArray(y) ? y[0] : y; } };
  } else {
    model = await tfl.loadLayersModel(artifacts);
  }
  const shape = dims.split(',').map(Number);
  const raw = fs.readFileSync(input);
  const f = new Float32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.length));
  const x = dtype === 'int32' ? tf.tensor(Int32Array.from(f), shape, 'int32') : tf.tensor(f, shape);
  const run = () => { const y = model.predict(x); y.dataSync(); y.dispose(); };
  for (let i = 0; i < Number(warm); i++) run();
  const t = [];
  for (let i = 0; i < Number(reps); i++) {
    const t0 = process.hrtime.bigint();
    run();
    t.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  t.sort((a, b) => a - b);
  console.log('median_ms ' + t[(t.length - 1) >> 1]);
}
main().catch((e) => skip('TensorFlow.js failed: ' + String(e.message || e).split('\n')[0]));
