// The benchmark MLP's data, made exactly as scripts/bench/bench_runtime.c makes it
// (random_tensor): a 32-bit LCG, seed = seed * 1103515245 + 12345, value = ((seed >> 8) & 0xffff)
// / 65536 - 0.5. Every value is a multiple of 2^-16 in [-0.5, 0.5), so float32 holds it exactly.
'use strict';

const SIZES = [784, 512, 512, 10];

function lcgFloats(count, seed) {
  const out = new Float32Array(count);
  let s = seed >>> 0;
  for (let i = 0; i < count; i++) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    out[i] = ((s >>> 8) & 0xffff) / 65536 - 0.5;
  }
  return out;
}

// Layer l: w[l] is SIZES[l] x SIZES[l+1] row-major (seed 10 + l), b[l] has SIZES[l+1] values (seed 20 + l).
function mlpWeights() {
  const w = [], b = [];
  for (let l = 0; l < 3; l++) {
    w.push(lcgFloats(SIZES[l] * SIZES[l + 1], 10 + l));
    b.push(lcgFloats(SIZES[l + 1], 20 + l));
  }
  return { w, b };
}

// The input of a batch: batch x 784, seed 30.
function mlpInput(batch) {
  return lcgFloats(batch * SIZES[0], 30);
}

// "B:T:WARM:REPS B:T:WARM:REPS ..." (scripts/bench/run passes the same string to every program).
function parseConfigs(text) {
  return text.trim().split(/\s+/).map((c) => {
    const [batch, threads, warm, reps] = c.split(':').map(Number);
    return { batch, threads, warm, reps };
  });
}

function median(v) {
  const s = Float64Array.from(v).sort();
  const n = s.length;
  return n % 2 ? s[(n - 1) / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

function args(argv) {
  const out = {};
  for (let i = 0; i < argv.length; i++) {
    if (argv[i].startsWith('--')) {
      out[argv[i].slice(2)] = argv[i + 1];
      i++;
    }
  }
  return out;
}

module.exports = { SIZES, lcgFloats, mlpWeights, mlpInput, parseConfigs, median, args };
