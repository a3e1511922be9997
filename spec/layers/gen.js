// Makes the layers models of spec/layers/ and their reference outputs with TensorFlow.js 4.22
// (tfjs-layers on the pure-JavaScript CPU backend): each model's model.json and weight files as
// tf.LayersModel.save writes them (some re-written with quantized weights, shards and file names
// without ".bin", as converters write them), its inputs and its outputs.
//
//   mkdir -p tfjs && cd tfjs && npm init -y && npm install --ignore-scripts @tensorflow/tfjs-core@4.22.0 \
//     @tensorflow/tfjs-backend-cpu@4.22.0 @tensorflow/tfjs-layers@4.22.0
//   NODE_PATH=$PWD/node_modules node spec/layers/gen.js spec/layers
//
// Deterministic: weights and inputs come from a fixed linear congruential sequence.
const tf = require('@tensorflow/tfjs-core');
require('@tensorflow/tfjs-backend-cpu');
const tfl = require('@tensorflow/tfjs-layers');
const fs = require('fs');
const path = require('path');

let seed = 12345;
function rand() { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; }
function values(n, lo, hi) { const v = new Float32Array(n); for (let i = 0; i < n; i++) v[i] = lo + (hi - lo) * rand(); return v; }

// Every weight random in [-0.5, 0.5); variances (and gammas) positive.
function randomize(model) {
  model.setWeights(model.weights.map(w => {
    const n = w.shape.reduce((a, b) => a * b, 1);
    const positive = /moving_variance|gamma/.test(w.originalName || w.name);
    return tf.tensor(values(n, positive ? 0.5 : -0.5, positive ? 1.5 : 0.5), w.shape, w.dtype);
  }));
}

async function save(model, dir, opts = {}) {
  fs.mkdirSync(dir, { recursive: true });
  let artifacts;
  await model.save(tf.io.withSaveHandler(async a => { artifacts = a; return { modelArtifactsInfo: {} }; }));
  let data = Buffer.from(artifacts.weightData);
  let specs = artifacts.weightSpecs.map(s => Object.assign({}, s));
  if (opts.quantize) { // every weight stored as uint8 or float16, the model set to what a reader gets back
    const chunks = [], back = [];
    let at = 0;
    for (const s of specs) {
      const n = s.shape.reduce((a, b) => a * b, 1);
      const f = new Float32Array(data.buffer.slice(data.byteOffset + at, data.byteOffset + at + 4 * n));
      at += 4 * n;
      if (opts.quantize === 'uint8') {
        let min = Math.min(...f), max = Math.max(...f);
        const scale = (max - min) / 255 || 1;
        const q = Buffer.alloc(n);
        const r = new Float32Array(n);
        for (let i = 0; i < n; i++) { q[i] = Math.round((f[i] - min) / scale); r[i] = q[i] * scale + min; }
        s.quantization = { dtype: 'uint8', scale, min };
        chunks.push(q); back.push(r);
      } else {
        const q = Buffer.alloc(2 * n), r = new Float32Array(n);
        for (let i = 0; i < n; i++) { const h = toHalf(f[i]); q.writeUInt16LE(h, 2 * i); r[i] = fromHalf(h); }
        s.quantization = { dtype: 'float16' };
        chunks.push(q); back.push(r);
      }
    }
    data = Buffer.concat(chunks);
    model.setWeights(model.weights.map((w, i) => tf.tensor(back[i], w.shape)));
  }
  const shards = opts.shards || 1, paths = [];
  const per = Math.ceil(data.length / shards);
  for (let k = 0; k < shards; k++) {
    const name = `group1-shard${k + 1}of${shards}` + (opts.noBin ? '' : '.bin');
    fs.writeFileSync(path.join(dir, name), data.subarray(k * per, Math.min(data.length, (k + 1) * per)));
    paths.push(name);
  }
  const json = { format: 'layers-model', generatedBy: 'TensorFlow.js tfjs-layers v4.22.0', convertedBy: null,
    modelTopology: artifacts.modelTopology, weightsManifest: [{ paths, weights: specs }] };
  if (opts.noFormat) { delete json.format; } // older files: no format key
  fs.writeFileSync(path.join(dir, 'model.json'), JSON.stringify(json));
}

function inputsFor(model) {
  return model.inputs.map(t => {
    const shape = t.shape.map(d => d == null ? 2 : d);
    const n = shape.reduce((a, b) => a * b, 1);
    if (t.dtype === 'int32') return tf.tensor(Int32Array.from(values(n, 0, 9.99), Math.floor), shape, 'int32');
    return tf.tensor(values(n, -1, 1), shape);
  });
}

async function make(name, model, opts = {}) {
  randomize(model);
  const dir = path.join(process.argv[2] || 'spec/layers', name);
  await save(model, dir, opts);
  const xs = opts.inputs || inputsFor(model);
  let ys = model.predict(xs.length === 1 ? xs[0] : xs);
  if (!Array.isArray(ys)) ys = [ys];
  const ref = { inputs: [], outputs: [] };
  xs.forEach((x, i) => ref.inputs.push({ name: model.inputNames[i], dtype: x.dtype, shape: x.shape, values: Array.from(x.dataSync()) }));
  ys.forEach((y, i) => ref.outputs.push({ name: model.outputNames[i], dtype: y.dtype, shape: y.shape, values: Array.from(y.dataSync()) }));
  fs.writeFileSync(path.join(dir, 'reference.json'), JSON.stringify(ref));
  console.log(name, model.layers.map(l => l.getClassName()).join(' '));
}

function toHalf(f) {
  const b = new DataView(new ArrayBuffer(4)); b.setFloat32(0, f); const x = b.getUint32(0);
  const sign = (x >>> 16) & 0x8000, e = ((x >>> 23) & 0xff) - 127 + 15, m = x & 0x7fffff;
  if (e <= 0) return sign; if (e >= 31) return sign | 0x7c00;
  let h = sign | (e << 10) | (m >> 13); if ((m >> 12) & 1) h++; return h;
}
function fromHalf(h) {
  const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (e === 0) return s * m * Math.pow(2, -24); if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * Math.pow(2, e - 15);
}

async function main() {
  await tf.setBackend('cpu');
  const L = tfl.layers;
  // core: Dense with activations, dropout kin
  let m = tfl.sequential();
  m.add(L.dense({ units: 16, activation: 'relu', inputShape: [8] }));
  m.add(L.dropout({ rate: 0.5 }));
  m.add(L.dense({ units: 8, activation: 'tanh' }));
  m.add(L.gaussianNoise({ stddev: 1 }));
  m.add(L.dense({ units: 4, activation: 'softmax' }));
  await make('mlp', m);
  // the same network, quantized to uint8, in 3 shards named without .bin, and without a format key
  m = tfl.sequential();
  m.add(L.dense({ units: 16, activation: 'relu', inputShape: [8] }));
  m.add(L.dense({ units: 4, activation: 'sigmoid' }));
  await make('mlp_uint8_shards', m, { quantize: 'uint8', shards: 3, noBin: true, noFormat: true });
  m = tfl.sequential();
  m.add(L.dense({ units: 6, activation: 'elu', inputShape: [5] }));
  m.add(L.dense({ units: 3, useBias: false }));
  await make('mlp_float16', m, { quantize: 'float16' });
  // convolutions, pools, normalisation
  m = tfl.sequential();
  m.add(L.conv2d({ filters: 4, kernelSize: 3, padding: 'same', activation: 'relu', inputShape: [9, 9, 2] }));
  m.add(L.batchNormalization());
  m.add(L.maxPooling2d({ poolSize: 2 }));
  m.add(L.depthwiseConv2d({ kernelSize: 3, depthMultiplier: 2, padding: 'valid' }));
  m.add(L.separableConv2d({ filters: 5, kernelSize: 2, padding: 'same', activation: 'relu6' }));
  m.add(L.conv2d({ filters: 3, kernelSize: 2, strides: 2, dilationRate: 1, padding: 'valid', useBias: false }));
  m.add(L.averagePooling2d({ poolSize: 1 }));
  m.add(L.globalAveragePooling2d({}));
  m.add(L.dense({ units: 3 }));
  await make('cnn', m);
  m = tfl.sequential();
  m.add(L.zeroPadding2d({ padding: [[1, 2], [0, 1]], inputShape: [5, 4, 3] }));
  m.add(L.conv2d({ filters: 2, kernelSize: [3, 2], dilationRate: 2, padding: 'valid' }));
  m.add(L.upSampling2d({ size: [2, 3] }));
  m.add(L.cropping2D({ cropping: [[1, 0], [2, 1]] }));
  m.add(L.upSampling2d({ size: [2, 2], interpolation: 'bilinear' }));
  m.add(L.batchNormalization({ center: false, scale: false, epsilon: 0.01 }));
  m.add(L.globalMaxPooling2d({}));
  await make('image', m);
  // sequences
  m = tfl.sequential();
  m.add(L.conv1d({ filters: 4, kernelSize: 3, padding: 'same', activation: 'selu', inputShape: [10, 3] }));
  m.add(L.maxPooling1d({ poolSize: 2 }));
  m.add(L.averagePooling1d({ poolSize: 2, strides: 1 }));
  m.add(L.layerNormalization({}));
  m.add(L.flatten());
  m.add(L.repeatVector({ n: 2 }));
  m.add(L.permute({ dims: [2, 1] }));
  m.add(L.reshape({ targetShape: [8, 4] }));
  m.add(L.globalMaxPooling1d({}));
  await make('sequence', m);
  m = tfl.sequential();
  m.add(L.embedding({ inputDim: 10, outputDim: 4, inputLength: 5, inputShape: [5] }));
  m.add(L.flatten());
  m.add(L.dense({ units: 2, activation: 'softplus' }));
  await make('embedding', m);
  // activations and the advanced ones
  m = tfl.sequential();
  m.add(L.dense({ units: 6, inputShape: [4], activation: 'softsign' }));
  m.add(L.activation({ activation: 'hardSigmoid' }));
  m.add(L.dense({ units: 6, activation: 'swish' }));
  m.add(L.leakyReLU({ alpha: 0.2 }));
  m.add(L.dense({ units: 6 }));
  m.add(L.prelu({}));
  m.add(L.dense({ units: 6 }));
  m.add(L.elu({}));
  m.add(L.reLU({ maxValue: 0.3 }));
  m.add(L.dense({ units: 6 }));
  m.add(L.thresholdedReLU({ theta: 0.1 }));
  m.add(L.dense({ units: 5 }));
  m.add(L.softmax({}));
  await make('activations', m);
  // functional: two inputs, a layer called twice, every merge, two outputs
  const a = tfl.input({ shape: [6], name: 'a' }), b = tfl.input({ shape: [6], name: 'b' });
  const shared = L.dense({ units: 6, activation: 'relu', name: 'shared' });
  const sa = shared.apply(a), sb = shared.apply(b);
  const merged = [L.add().apply([sa, sb]), L.multiply().apply([sa, sb]),
    L.average().apply([sa, sb, a]), L.maximum().apply([sa, b]), L.minimum().apply([a, sb])];
  const cat = L.concatenate({ axis: -1 }).apply(merged);
  const out1 = L.dense({ units: 3, name: 'scores' }).apply(cat);
  const out2 = L.dense({ units: 2, activation: 'sigmoid', name: 'flags' }).apply(L.dense({ units: 4 }).apply(sb));
  await make('functional', tfl.model({ inputs: [a, b], outputs: [out1, out2] }));
  // recurrent: every cell, sequences and last states, go_backwards, Bidirectional's merge modes, TimeDistributed
  const rec = { recurrentInitializer: 'zeros' }; // randomize() sets every weight; tfjs's Orthogonal needs chained ops
  m = tfl.sequential();
  m.add(L.lstm({ units: 5, returnSequences: true, inputShape: [6, 3], ...rec }));
  m.add(L.gru({ units: 4, returnSequences: true, goBackwards: true, ...rec }));
  m.add(L.simpleRNN({ units: 3, activation: 'relu', ...rec }));
  m.add(L.dense({ units: 2 }));
  await make('recurrent', m);
  m = tfl.sequential();
  m.add(L.embedding({ inputDim: 10, outputDim: 4, inputLength: 7, inputShape: [7] }));
  m.add(L.bidirectional({ layer: L.lstm({ units: 3, returnSequences: true, recurrentActivation: 'sigmoid', ...rec }) }));
  m.add(L.bidirectional({ layer: L.gru({ units: 2, returnSequences: true, ...rec }), mergeMode: 'sum' }));
  m.add(L.timeDistributed({ layer: L.dense({ units: 3, activation: 'relu' }) }));
  m.add(L.bidirectional({ layer: L.simpleRNN({ units: 2, goBackwards: true, ...rec }), mergeMode: 'ave' }));
  await make('bidirectional', m);
  // nested models: a Sequential and a functional model used as layers, one of them called twice
  const base = tfl.sequential({ name: 'base' });
  base.add(L.dense({ units: 5, activation: 'relu', inputShape: [4], name: 'base_d1' }));
  base.add(L.dense({ units: 3, name: 'base_d2' }));
  const hi = tfl.input({ shape: [3], name: 'hi' });
  const head = tfl.model({ name: 'head', inputs: hi, outputs: [L.dense({ units: 2, activation: 'tanh', name: 'head_d' }).apply(hi),
    L.dense({ units: 1, name: 'head_e' }).apply(hi)] });
  const p = tfl.input({ shape: [4], name: 'p' }), q = tfl.input({ shape: [4], name: 'q' });
  const [h1, e1] = head.apply(base.apply(p)), [h2] = head.apply(base.apply(q));
  await make('nested', tfl.model({ inputs: [p, q], outputs: [L.concatenate().apply([h1, h2, e1])] }));
  // transposed convolutions, Dot over 2-D and 3-D inputs (normalized, each axes pairing), Rescaling
  m = tfl.sequential();
  m.add(L.rescaling({ scale: 1 / 4, offset: -0.5, inputShape: [3, 4, 2] }));
  m.add(L.conv2dTranspose({ filters: 3, kernelSize: 3, strides: 2, padding: 'valid', activation: 'relu' }));
  m.add(L.conv2dTranspose({ filters: 2, kernelSize: [2, 3], strides: [1, 2], padding: 'same' }));
  await make('transpose', m);
  const da = tfl.input({ shape: [3, 4], name: 'da' }), db = tfl.input({ shape: [5, 4], name: 'db' });
  const dc = tfl.input({ shape: [4, 3], name: 'dc' }), dv = tfl.input({ shape: [6], name: 'dv' });
  const d22 = L.dot({ axes: [2, 2] }).apply([da, db]);                   // [N, 3, 5]
  const d21 = L.dot({ axes: [2, 1] }).apply([da, dc]);                   // [N, 3, 3]
  const d11 = L.dot({ axes: 1, normalize: true }).apply([dc, dc]);       // [N, 3, 3]
  const d12 = L.dot({ axes: [1, 2] }).apply([dc, da]);                   // [N, 3, 3]
  const dvv = L.dot({ axes: -1, normalize: true }).apply([dv, L.dense({ units: 6 }).apply(dv)]); // [N, 1]
  await make('dot', tfl.model({ inputs: [da, db, dc, dv], outputs: [d22, d21, d11, d12, dvv] }));
  // masks: Embedding's mask_zero and Masking through recurrent layers (padded steps at the start and inside)
  const ids = tfl.input({ shape: [6], name: 'ids', dtype: 'int32' }), feats = tfl.input({ shape: [5, 2], name: 'feats' });
  const emb = L.embedding({ inputDim: 8, outputDim: 3, maskZero: true }).apply(ids);
  const seq = L.lstm({ units: 3, returnSequences: true, recurrentActivation: 'sigmoid', ...rec }).apply(emb);
  const back = L.gru({ units: 2, goBackwards: true, ...rec }).apply(L.dense({ units: 4, activation: 'tanh' }).apply(seq));
  const bi = L.bidirectional({ layer: L.simpleRNN({ units: 2, returnSequences: true, ...rec }) }).apply(emb);
  const mk = L.simpleRNN({ units: 3, ...rec }).apply(L.masking({ maskValue: 0.5 }).apply(feats));
  // 3-D convolutions and pools (NDHWC)
  m = tfl.sequential();
  m.add(L.conv3d({ filters: 3, kernelSize: [2, 3, 3], padding: 'same', activation: 'relu', inputShape: [4, 6, 6, 2] }));
  m.add(L.maxPooling3d({ poolSize: 2 }));
  m.add(L.conv3d({ filters: 2, kernelSize: 2, strides: [1, 1, 1], padding: 'valid', useBias: false }));
  m.add(L.averagePooling3d({ poolSize: [1, 2, 2], padding: 'same' }));
  m.add(L.flatten());
  m.add(L.dense({ units: 2 }));
  await make('conv3d', m);
  await make('masks', tfl.model({ inputs: [ids, feats], outputs: [back, L.globalAveragePooling1d().apply(bi), mk] }), {
    inputs: [tf.tensor([[0, 0, 3, 5, 0, 7], [2, 4, 6, 1, 3, 0]], [2, 6], 'int32'),
      tf.tensor([[[0.5, 0.5], [0.1, 0.5], [0.5, 0.5], [-0.3, 0.2], [0.9, -0.4]],
        [[0.2, 0.7], [0.5, 0.5], [0.5, 0.5], [0.5, 0.5], [0.5, 0.5]]], [2, 5, 2])] });
  // return_state: each cell's final states as outputs of their own ([output, h, c] and [output, h])
  const sx = tfl.input({ shape: [5, 3], name: 'sx' });
  const [lo, lh, lc] = L.lstm({ units: 4, returnState: true, returnSequences: true, recurrentActivation: 'sigmoid', ...rec }).apply(sx);
  const [go, gh] = L.gru({ units: 3, returnState: true, goBackwards: true, ...rec }).apply(lo);
  const [so, sh] = L.simpleRNN({ units: 2, returnState: true, ...rec }).apply(sx);
  await make('states', tfl.model({ inputs: sx, outputs: [lo, L.concatenate().apply([lh, lc, gh, sh]), go, so] }));
  // the generic RNN over each cell
  m = tfl.sequential();
  m.add(L.rnn({ cell: L.lstmCell({ units: 4, recurrentActivation: 'sigmoid', ...rec }), returnSequences: true, inputShape: [5, 3] }));
  m.add(L.rnn({ cell: L.gruCell({ units: 3, ...rec }), returnSequences: true, goBackwards: true }));
  m.add(L.rnn({ cell: L.simpleRNNCell({ units: 2, ...rec }) }));
  await make('rnn_cells', m);
  // Bidirectional's return_state: [output, forward h (and c), backward h (and c)]
  const bx = tfl.input({ shape: [4, 3], name: 'bx' });
  const [bo, bfh, bfc, bbh, bbc] = L.bidirectional({ layer: L.lstm({ units: 2, returnState: true, ...rec }) }).apply(bx);
  const [go2, gfh, gbh] = L.bidirectional({ layer: L.gru({ units: 3, returnState: true, returnSequences: true, ...rec }),
    mergeMode: 'sum' }).apply(bx);
  await make('bidirectional_states', tfl.model({ inputs: bx, outputs: [bo, bfh, bfc, bbh, bbc, go2, gfh, gbh] }));
}
main().catch(e => { console.error(e); process.exit(1); });
