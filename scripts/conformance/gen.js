// Generates tfdev's op conformance data (spec/conformance/<family>.json) from TensorFlow.js's CPU backend.
//
// Run:   NODE_PATH=/tmp/tfjs/node_modules node scripts/conformance/gen.js spec/conformance
// Needs: node (>= 16) and, on NODE_PATH, @tensorflow/tfjs-core, @tensorflow/tfjs-backend-cpu and
//        @tensorflow/tfjs-converter (4.22.0 made the checked-in data: `npm install @tensorflow/tfjs-core@4.22.0
//        @tensorflow/tfjs-backend-cpu@4.22.0 @tensorflow/tfjs-converter@4.22.0` in /tmp/tfjs).
//
// Each case is a small TensorFlow graph (Placeholders for the runtime inputs, Consts for the inputs TensorFlow.js
// needs constant, and the op under test, attrs in protobuf's JSON mapping as TensorFlow writes them), loaded as a
// TensorFlow.js graph model from memory and run on the 'cpu' backend with fixed inputs (a seeded pseudo-random
// sequence, so every run writes the same bytes). A case TensorFlow.js rejects is left out (listed on stderr).
// Family names are the converter's op_list files; the ops without cases are listed in spec/conformance/README.md.
'use strict';
const fs = require('fs');
const path = require('path');
const tf = require('@tensorflow/tfjs-core');
require('@tensorflow/tfjs-backend-cpu');
const tfc = require('@tensorflow/tfjs-converter');

// TensorFlow.js's advice (install tfjs-node, use execute()) is noise here.
console.warn = () => {};
const OUT = process.argv[2];
if (!OUT) { console.error('usage: node gen.js OUT_DIR'); process.exit(2); }

// ---- deterministic inputs --------------------------------------------------------------------------------------
let seed = 0;
function rnd() { // mulberry32
  seed = (seed + 0x6D2B79F5) | 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const numel = (shape) => shape.reduce((a, b) => a * b, 1);
// Floats are multiples of 1/16 (exact in float32, short in JSON) in [lo, hi).
function fvals(n, lo = -3, hi = 3) {
  const out = [];
  for (let i = 0; i < n; i++) out.push(Math.round((lo + rnd() * (hi - lo)) * 16) / 16);
  return out;
}
function ivals(n, lo = -5, hi = 5) {
  const out = [];
  for (let i = 0; i < n; i++) out.push(lo + Math.floor(rnd() * (hi - lo + 1)));
  return out;
}
function bvals(n) { const out = []; for (let i = 0; i < n; i++) out.push(rnd() < 0.5); return out; }

// Tensor specs: placeholders (runtime inputs) and consts.
function F(shape, lo, hi) { return { dtype: 'float32', shape, values: fvals(numel(shape), lo, hi) }; }
function I(shape, lo, hi) { return { dtype: 'int32', shape, values: ivals(numel(shape), lo, hi) }; }
function B(shape) { return { dtype: 'bool', shape, values: bvals(numel(shape)) }; }
// complex64: values are real and imaginary parts in turn, as TensorFlow.js's dataSync() gives them.
function CX(shape, lo, hi) { return { dtype: 'complex64', shape, values: fvals(2 * numel(shape), lo, hi) }; }
function V(dtype, shape, values) { return { dtype, shape, values }; }
function K(dtype, shape, values) { return { dtype, shape, values, konst: true }; } // a Const input
const Ki = (values) => K('int32', [values.length], values); // 1-D int32 const (axes, shapes, sizes)
const Ks = (v, dtype = 'int32') => K(dtype, [], [v]);        // scalar const
const R = (dtype, shape, lo, hi) => dtype === 'float32' ? F(shape, lo, hi) : dtype === 'int32' ? I(shape, lo, hi) : B(shape);

// ---- attrs in protobuf's JSON mapping ----------------------------------------------------------------------------
const DT = { float32: 'DT_FLOAT', int32: 'DT_INT32', bool: 'DT_BOOL', int64: 'DT_INT64', variant: 'DT_VARIANT',
  resource: 'DT_RESOURCE', string: 'DT_STRING', complex64: 'DT_COMPLEX64' };
const dt = (d) => ({ type: DT[d] });
const fl = (x) => ({ f: x });                          // float attr (plain JS numbers are ints)
const ints = (xs) => ({ list: { i: xs.map(String) } });
const floats = (xs) => ({ list: { f: xs } });
const strs = (xs) => ({ list: { s: xs.map((s) => Buffer.from(s).toString('base64')) } });
const dts = (xs) => ({ list: { type: xs.map((d) => DT[d]) } });
const shp = (dims) => ({ shape: dims === null ? { unknownRank: true } : { dim: dims.map((d) => ({ size: String(d) })) } });
function attrValue(v) {
  if (typeof v === 'boolean') return { b: v };
  if (typeof v === 'number') return { i: String(v) };
  if (typeof v === 'string') return { s: Buffer.from(v).toString('base64') };
  return v; // already mapped
}

// ---- the converter's op list: which ops have which attrs (for T) ---------------------------------------------------
const OPLIST = path.join(path.dirname(require.resolve('@tensorflow/tfjs-converter/package.json')), 'dist/operations/op_list');
const FAMILY_OPS = {};
const OP_ATTRS = {};
for (const f of fs.readdirSync(OPLIST).filter((f) => f.endsWith('.js')).sort()) {
  const fam = f.replace(/\.js$/, '');
  const mod = require(path.join(OPLIST, f));
  FAMILY_OPS[fam] = mod.json.map((o) => o.tfOpName);
  for (const o of mod.json) OP_ATTRS[o.tfOpName] = new Set((o.attrs || []).map((a) => a.tfName));
}

// ---- cases ------------------------------------------------------------------------------------------------------
const CASES = {}; // family -> [case]
let family = null;
// Each family draws from its own seed, so that adding a case to one family leaves the others' data as it was.
function fam(name) {
  family = name; CASES[name] = CASES[name] || [];
  seed = 0;
  for (const ch of name) seed = (Math.imul(seed, 31) + ch.charCodeAt(0)) | 0;
}
// C(op, name, inputs, attrs, opts): opts.outs (output indices, default [0]), opts.T (dtype for T, false for none),
// opts.extra (more nodes, e.g. a consumer of the op: then opts.fetch names what to fetch).
function C(op, name, inputs, attrs = {}, opts = {}) {
  CASES[family].push({ op, name, inputs, attrs, opts });
}

function tensorJSON(t) {
  const tensor = { dtype: DT[t.dtype], tensorShape: { dim: t.shape.map((d) => ({ size: String(d) })) } };
  if (t.dtype === 'float32') tensor.floatVal = t.values;
  else if (t.dtype === 'int32') tensor.intVal = t.values;
  else if (t.dtype === 'bool') tensor.boolVal = t.values;
  else if (t.dtype === 'int64') tensor.int64Val = t.values.map(String); // TensorFlow.js holds these as int32
  else if (t.dtype === 'complex64') tensor.scomplexVal = t.values;
  else if (t.dtype === 'string') tensor.stringVal = t.values.map((v) => Buffer.from(v).toString('base64'));
  else throw new Error('const dtype ' + t.dtype);
  return tensor;
}

function buildGraph(c) {
  const nodes = [];
  const inputNames = [];
  c.inputs.forEach((t, i) => {
    const name = 'in' + i;
    inputNames.push(name);
    if (t.konst) nodes.push({ name, op: 'Const', attr: { dtype: dt(t.dtype), value: { tensor: tensorJSON(t) } } });
    else nodes.push({ name, op: 'Placeholder', attr: { dtype: dt(t.dtype), shape: shp(t.shape) } });
  });
  const attr = {};
  const T = c.opts.T !== undefined ? c.opts.T : (OP_ATTRS[c.op] && OP_ATTRS[c.op].has('T') && c.inputs.length ? c.inputs[0].dtype : false);
  if (T) attr.T = dt(T);
  for (const [k, v] of Object.entries(c.attrs)) attr[k] = attrValue(v);
  const node = { name: 'op', op: c.op, input: c.opts.inputNames || inputNames };
  if (Object.keys(attr).length) node.attr = attr;
  nodes.push(node);
  for (const n of c.opts.extra || []) nodes.push(n);
  return nodes;
}

// TensorFlow.js takes Consts' values from weights only: every Const of the graph (and of its library's functions, which
// therefore name theirs uniquely) becomes a weight, its bytes read from the value in the node (as TensorFlow reads a
// TensorProto: fewer values than elements repeat the last one).
const WDT = { DT_FLOAT: 'float32', DT_INT32: 'int32', DT_BOOL: 'bool', DT_INT64: 'int32', DT_COMPLEX64: 'complex64',
  DT_STRING: 'string' };
function weightsOf(nodes) {
  const specs = [];
  const bufs = [];
  for (const n of nodes) {
    if (n.op !== 'Const') continue;
    const t = n.attr.value.tensor;
    const shape = t.tensorShape.dim.map((d) => Number(d.size));
    if (t.stringVal) { // TensorFlow.js's string weights: each a uint32 little-endian length, then its bytes
      const strings = t.stringVal.map((b) => Buffer.from(b, 'base64'));
      const parts = [];
      for (let k = 0; k < numel(shape); k++) {
        const b = strings.length ? strings[Math.min(k, strings.length - 1)] : Buffer.alloc(0);
        const len = Buffer.alloc(4);
        len.writeUInt32LE(b.length);
        parts.push(len, b);
      }
      specs.push({ name: n.name, shape, dtype: 'string' });
      bufs.push(Buffer.concat(parts));
      continue;
    }
    const given = (t.floatVal || t.intVal || t.boolVal || t.int64Val || t.scomplexVal || []).map((v) => (typeof v === 'string' ? Number(v) : v));
    const vals = [];
    const per = t.scomplexVal ? 2 : 1; // a complex value is a pair of floats; the last pair repeats
    for (let k = 0; k < per * numel(shape); k++) vals.push(given.length ? given[Math.min(k, given.length - per + (k % per))] : 0);
    const dtype = WDT[t.dtype];
    specs.push({ name: n.name, shape, dtype });
    const arr = dtype === 'float32' || dtype === 'complex64' ? new Float32Array(vals) : dtype === 'int32' ? new Int32Array(vals)
      : new Uint8Array(vals.map((b) => (b ? 1 : 0)));
    bufs.push(Buffer.from(arr.buffer));
  }
  const all = Buffer.concat(bufs);
  return { specs, data: all.buffer.slice(all.byteOffset, all.byteOffset + all.length) };
}

// The shortest decimal that reads back as the same float32; non-finite values as strings.
function num(x, dtype) {
  if (dtype === 'bool') return !!x;
  if (typeof x === 'string') return x; // inputs written as "NaN", "Infinity"
  if (Number.isNaN(x)) return 'NaN';
  if (x === Infinity) return 'Infinity';
  if (x === -Infinity) return '-Infinity';
  if (dtype !== 'float32' && dtype !== 'complex64') return x;
  for (let p = 1; p <= 9; p++) {
    const y = parseFloat(x.toPrecision(p));
    if (Math.fround(y) === x) return y;
  }
  return x;
}
const tensorOut = (t) => ({ dtype: t.dtype, shape: t.shape, values: Array.from(t.values).map((x) => num(x, t.dtype)) });

const skipped = [];
async function runCase(c) {
  const nodes = buildGraph(c);
  const library = c.opts.library;
  const w = weightsOf(nodes.concat(...(library || []).map((f) => f.nodeDef)));
  const topology = { node: nodes, versions: { producer: 1 } };
  if (library) topology.library = { function: library };
  const model = await tfc.loadGraphModel(tf.io.fromMemory({ modelTopology: topology, weightSpecs: w.specs, weightData: w.data }));
  const feeds = {};
  c.inputs.forEach((t, i) => {
    if (t.konst) return;
    const vals = t.dtype === 'string' ? t.values : t.values.map((v) => (typeof v === 'string' ? Number(v) : v));
    feeds['in' + i] = t.dtype === 'complex64'
      ? tf.complex(tf.tensor(vals.filter((_, k) => k % 2 === 0), t.shape), tf.tensor(vals.filter((_, k) => k % 2 === 1), t.shape))
      : tf.tensor(vals, t.shape, t.dtype);
  });
  const fetch = c.opts.fetch || (c.opts.outs || [0]).map((k) => 'op:' + k);
  let res = await model.executeAsync(feeds, fetch);
  if (!Array.isArray(res)) res = [res];
  const outs = res.map((t, k) => {
    const values = t.dtype === 'string' ? t.dataSync().map((b) => Buffer.from(b).toString('utf8'))
      : Array.from(t.dataSync()).map((x) => num(x, t.dtype));
    const o = { name: fetch[k], dtype: t.dtype, shape: t.shape, values };
    return o;
  });
  tf.dispose(res);
  Object.values(feeds).forEach((t) => t.dispose());
  model.dispose();
  return {
    op: c.op, name: c.name, graph: nodes, ...(library ? { library } : {}),
    inputs: c.inputs.map((t, i) => ({ name: 'in' + i, dtype: t.dtype, shape: t.shape, values: t.values.map((x) => num(x, t.dtype)), ...(t.konst ? { const: true } : {}) })),
    outputs: outs,
  };
}

// Inputs are drawn as cases.js declares the cases, from one seeded sequence: the same every run.
// A Const node of tensor spec t (for function bodies), and a FunctionDef: args as [name, dtype], nodes in the function
// syntax ("arg", "node:output_arg:0"), ret mapping output names to tensors.
const cnode = (name, t) => ({ name, op: 'Const', attr: { dtype: dt(t.dtype), value: { tensor: tensorJSON(t) } } });
const fdef = (name, ins, outs, nodes, ret) => ({
  signature: { name, inputArg: ins.map(([n, d]) => ({ name: n, type: DT[d] })), outputArg: outs.map(([n, d]) => ({ name: n, type: DT[d] })) },
  nodeDef: nodes, ret });
const func = (name) => ({ func: { name } });
require('./cases.js')({ fam, C, F, I, B, CX, V, K, Ki, Ks, R, dt, fl, ints, floats, strs, dts, shp, numel, cnode, fdef, func });

async function main() {
  await tf.setBackend('cpu');
  await tf.ready();
  fs.mkdirSync(OUT, { recursive: true });
  const summary = [];
  const recorded = [];
  for (const famName of Object.keys(CASES).sort()) {
    const out = [];
    for (const c of CASES[famName]) {
      try {
        out.push(await runCase(c));
        recorded.push(out[out.length - 1]);
      } catch (e) {
        skipped.push(`${famName}: ${c.op} ${c.name}: ${String(e.message).split('\n')[0].slice(0, 160)}`);
      }
    }
    if (!out.length) continue; // every case of the family was rejected (see README.md)
    const text = '{"tfjs_version": "' + tf.version_core + '", "family": "' + famName + '", "cases": [\n' +
      out.map((c) => JSON.stringify(c)).join(',\n') + '\n]}\n';
    fs.writeFileSync(path.join(OUT, famName + '.json'), text);
    summary.push(`${famName}: ${out.length} cases, ${text.length} bytes`);
  }
  for (const s of skipped) console.error('skipped (TensorFlow.js rejects it): ' + s);
  for (const s of summary) console.error(s);
  const covered = new Set(recorded.flatMap((c) => c.graph.map((n) => n.op)));
  const missing = Object.entries(FAMILY_OPS).map(([f, ops]) => [f, ops.filter((o) => !covered.has(o))]).filter(([, o]) => o.length);
  for (const [f, ops] of missing) console.error(`no cases: ${f}: ${ops.join(' ')}`);
}
main().catch((e) => { console.error(e); process.exit(1); });
