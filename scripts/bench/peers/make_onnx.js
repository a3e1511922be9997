// Writes the benchmark MLP 784-512-512-10 as an ONNX model, with the weights tfdev's benchmark
// uses (mlp_common.js makes them with the same generator). No onnx package: the protobuf bytes
// are written here (onnx.proto field numbers, opset 13, IR version 8).
//   node make_onnx.js OUT.onnx
// Graph: x[N,784] -> MatMul w0 -> Add b0 -> Relu -> MatMul w1 -> Add b1 -> Relu -> MatMul w2
//        -> Add b2 -> Softmax (last axis) -> probs[N,10]
'use strict';
const fs = require('fs');
const path = require('path');
const { SIZES, mlpWeights } = require('./mlp_common.js');

function varint(value) {
  const bytes = [];
  let v = BigInt(value);
  if (v < 0n) v += 1n << 64n; // int64 fields: two's complement, 10 bytes
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v) b |= 0x80;
    bytes.push(b);
  } while (v);
  return Buffer.from(bytes);
}
const key = (field, wire) => varint((field << 3) | wire);
const int = (field, v) => Buffer.concat([key(field, 0), varint(v)]);
const bytes = (field, buf) => Buffer.concat([key(field, 2), varint(buf.length), buf]);
const str = (field, s) => bytes(field, Buffer.from(s, 'utf8'));
const msg = (field, ...parts) => bytes(field, Buffer.concat(parts));

const FLOAT = 1;

// TensorProto: dims = 1, data_type = 2, name = 8, raw_data = 9 (little-endian floats).
function initializer(name, dims, data) {
  const raw = Buffer.alloc(data.length * 4);
  for (let i = 0; i < data.length; i++) raw.writeFloatLE(data[i], i * 4);
  return msg(5, ...dims.map((d) => int(1, d)), int(2, FLOAT), str(8, name), bytes(9, raw));
}

// ValueInfoProto { name = 1, type = 2 { tensor_type = 1 { elem_type = 1, shape = 2 { dim = 1 } } } };
// a dimension is dim_value = 1 or dim_param = 2.
function valueInfo(field, name, dims) {
  const dimProtos = dims.map((d) => msg(1, typeof d === 'string' ? str(2, d) : int(1, d)));
  return msg(field, str(1, name), msg(2, msg(1, int(1, FLOAT), msg(2, ...dimProtos))));
}

// NodeProto: input = 1, output = 2, name = 3, op_type = 4.
function node(op, inputs, output) {
  return msg(1, ...inputs.map((i) => str(1, i)), str(2, output), str(3, output), str(4, op));
}

function model() {
  const { w, b } = mlpWeights();
  const parts = [];
  let input = 'x';
  for (let l = 0; l < 3; l++) {
    parts.push(node('MatMul', [input, `w${l}`], `mm${l}`));
    parts.push(node('Add', [`mm${l}`, `b${l}`], `z${l}`));
    if (l < 2) {
      parts.push(node('Relu', [`z${l}`], `h${l}`));
      input = `h${l}`;
    }
  }
  parts.push(node('Softmax', ['z2'], 'probs'));
  parts.push(str(2, 'tfdev_bench_mlp'));
  for (let l = 0; l < 3; l++) {
    parts.push(initializer(`w${l}`, [SIZES[l], SIZES[l + 1]], w[l]));
    parts.push(initializer(`b${l}`, [SIZES[l + 1]], b[l]));
  }
  parts.push(valueInfo(11, 'x', ['N', SIZES[0]]));
  parts.push(valueInfo(12, 'probs', ['N', SIZES[3]]));
  const graph = msg(7, ...parts);
  // ModelProto: ir_version = 1, producer_name = 2, graph = 7, opset_import = 8 { domain = 1, version = 2 }.
  return Buffer.concat([int(1, 8), str(2, 'tfdev scripts/bench/peers/make_onnx.js'), graph, msg(8, str(1, ''), int(2, 13))]);
}

// x[N,784] -> Identity -> y: what one run costs through ORT and its node binding without work.
function identityModel() {
  const graph = msg(7, node('Identity', ['x'], 'y'), str(2, 'identity'), valueInfo(11, 'x', ['N', SIZES[0]]),
    valueInfo(12, 'y', ['N', SIZES[0]]));
  return Buffer.concat([int(1, 8), str(2, 'tfdev scripts/bench/peers/make_onnx.js'), graph, msg(8, str(1, ''), int(2, 13))]);
}

module.exports = { model, identityModel };

if (require.main === module) {
  const out = process.argv[2];
  if (!out) {
    console.error('usage: node make_onnx.js OUT.onnx');
    process.exit(2);
  }
  fs.mkdirSync(path.dirname(path.resolve(out)), { recursive: true });
  fs.writeFileSync(out, model());
}
