// The conformance cases gen.js runs, by converter op family: for each op its dtypes, the attrs that change the
// result, and edge shapes (empty, scalar, broadcast, negative axes). Inputs are drawn as the cases are declared.
'use strict';
module.exports = function ({ fam, C, F, I, B, CX, V, K, Ki, Ks, R, dt, fl, ints, floats, strs, dts, shp, cnode, fdef, func }) {
  const SPECIAL = () => V('float32', [6], [0, 'NaN', 'Infinity', '-Infinity', 1.5, -2.5]);
  const fixnum = (t) => ({ ...t, values: t.values.map((v) => (typeof v === 'string' ? Number(v) : v)) });

  // ---- arithmetic ----
  fam('arithmetic');
  const binops = { Add: 'fi', AddV2: 'fi', Sub: 'fi', Mul: 'fi', RealDiv: 'fi', Div: 'fi', DivNoNan: 'f', FloorDiv: 'fi',
    Maximum: 'fi', Minimum: 'fi', Pow: 'fi', SquaredDifference: 'fi', Mod: 'fi', FloorMod: 'fi' };
  const divlike = new Set(['RealDiv', 'Div', 'DivNoNan', 'FloorDiv', 'Mod', 'FloorMod']);
  for (const [op, types] of Object.entries(binops)) {
    const pos = op === 'Pow';
    const den = (s) => divlike.has(op) ? F(s, 0.5, 3) : pos ? F(s, 0, 2) : F(s);
    C(op, 'float32 [2,3] op [2,3]', [pos ? F([2, 3], 0.5, 3) : F([2, 3]), den([2, 3])]);
    C(op, 'float32 broadcast [2,3] op [3]', [pos ? F([2, 3], 0.5, 3) : F([2, 3]), den([3])]);
    C(op, 'float32 broadcast [2,1] op [1,3]', [pos ? F([2, 1], 0.5, 3) : F([2, 1]), den([1, 3])]);
    C(op, 'float32 scalar op [4]', [pos ? F([], 0.5, 3) : F([]), den([4])]);
    C(op, 'float32 empty [0,3] op [3]', [F([0, 3]), den([3])]);
    if (divlike.has(op)) C(op, 'float32 negative divisors', [V('float32', [4], [7, -7, 7, -7]), V('float32', [4], [2, 2, -2, -2])]);
    if (op === 'RealDiv' || op === 'DivNoNan' || op === 'Div') C(op, 'float32 by zero', [V('float32', [3], [1, -1, 0]), V('float32', [3], [0, 0, 0])]);
    if (types.includes('i')) {
      if (divlike.has(op)) C(op, 'int32 signs', [V('int32', [6], [7, -7, 7, -7, 5, 0]), V('int32', [6], [2, 2, -2, -2, 3, 4])]);
      else if (pos) C(op, 'int32', [I([5], -3, 3), I([5], 0, 3)]);
      else C(op, 'int32 broadcast [2,3] op [3]', [I([2, 3]), I([3])]);
    }
  }
  C('AddN', 'float32 three [2,2]', [F([2, 2]), F([2, 2]), F([2, 2])], { N: 3 });
  C('AddN', 'int32 two [3]', [I([3]), I([3])], { N: 2 });
  C('AddN', 'float32 one', [F([2])], { N: 1 });
  C('AddN', 'float32 empty', [F([0, 2]), F([0, 2])], { N: 2 });
  C('BiasAdd', 'float32 [2,3]+[3]', [F([2, 3]), F([3])]);
  C('BiasAdd', 'float32 NHWC [1,2,2,3]', [F([1, 2, 2, 3]), F([3])], { data_format: 'NHWC' });
  C('BiasAdd', 'int32 [2,2]', [I([2, 2]), I([2])]);
  for (const op of ['Maximum', 'Minimum'])
    C(op, 'float32 NaN either side', [V('float32', [4], ['NaN', 1, 'NaN', -1]), V('float32', [4], [1, 'NaN', 'NaN', 'Infinity'])]);
  C('Pow', 'float32 negative bases', [V('float32', [4], [-2, -2, -0.5, 0]), V('float32', [4], [3, 0.5, -2, 0])]);
  C('Pow', 'float32 overflow', [V('float32', [2], [10, -10]), V('float32', [2], [40, 39])]);

  // ---- basic_math ----
  fam('basic_math');
  const unary = { Abs: ['fi'], Acos: ['f', -1, 1], Asin: ['f', -1, 1], Atan: ['f'], Ceil: ['f'], Cos: ['f'], Cosh: ['f'],
    Elu: ['f'], Exp: ['f'], Floor: ['f'], Log: ['f', 0.1, 5], Neg: ['fi'], Relu: ['fi'], Relu6: ['fi', -3, 8], Selu: ['f'],
    Sigmoid: ['f'], Sin: ['f'], Sinh: ['f'], Sqrt: ['f', 0, 5], Rsqrt: ['f', 0.1, 5], Square: ['fi'], Tan: ['f', -1.5, 1.5],
    Tanh: ['f'], Sign: ['fi'], Round: ['fi'], Expm1: ['f'], Log1p: ['f', -0.9, 5], Reciprocal: ['fi', 0.5, 3],
    Softplus: ['f', -5, 5], Asinh: ['f'], Acosh: ['f', 1, 5], Atanh: ['f', -0.9, 0.9], Erf: ['f'], LeakyRelu: ['f'],
    IsNan: ['f'], IsFinite: ['f'], IsInf: ['f'] };
  for (const [op, [types, lo, hi]] of Object.entries(unary)) {
    C(op, 'float32 [2,3]', [F([2, 3], lo, hi)]);
    C(op, 'float32 special values', [SPECIAL()]);
    C(op, 'float32 scalar', [F([], lo, hi)]);
    C(op, 'float32 empty [0,2]', [F([0, 2])]);
    if (types.includes('i')) C(op, 'int32 [6]', [op === 'Reciprocal' ? V('int32', [4], [1, -1, 2, 3]) : I([6])]);
  }
  C('Round', 'float32 halves (to even)', [V('float32', [8], [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 0.49])]);
  C('LeakyRelu', 'float32 alpha 0.1', [F([2, 3])], { alpha: fl(0.1) });
  C('LeakyRelu', 'float32 alpha 2', [F([4])], { alpha: fl(2) });
  C('Atan2', 'float32 [2,3]', [F([2, 3]), F([2, 3])]);
  C('Atan2', 'float32 broadcast and zeros', [V('float32', [4], [0, 0, 1, -1]), V('float32', [1], [0])]);
  C('ClipByValue', 'float32 scalar bounds', [F([2, 3]), Ks(-1, 'float32'), Ks(1.5, 'float32')]);
  C('ClipByValue', 'int32 scalar bounds', [I([6]), Ks(-2), Ks(3)]);
  C('Prelu', 'float32 alpha [3]', [F([2, 3]), F([3], 0, 1)]);
  C('Prelu', 'float32 NHWC alpha [2]', [F([1, 2, 2, 2]), F([2], 0, 1)]);

  // ---- logical ----
  fam('logical');
  for (const op of ['Equal', 'NotEqual', 'Greater', 'GreaterEqual', 'Less', 'LessEqual']) {
    C(op, 'float32 [2,3]', [F([2, 3], -1, 1), F([2, 3], -1, 1)]);
    C(op, 'float32 broadcast [2,1] [1,3]', [F([2, 1], -1, 1), F([1, 3], -1, 1)]);
    C(op, 'int32 broadcast [4] scalar', [I([4], -2, 2), I([], -2, 2)]);
    C(op, 'float32 NaN', [V('float32', [3], ['NaN', 1, 'NaN']), V('float32', [3], ['NaN', 'NaN', 1])]);
    C(op, 'float32 empty', [F([0]), F([1])]);
    if (op === 'Equal' || op === 'NotEqual') C(op, 'bool', [B([4]), B([4])]);
  }
  C('LogicalAnd', 'bool broadcast', [B([2, 3]), B([3])]);
  C('LogicalOr', 'bool broadcast', [B([2, 1]), B([1, 3])]);
  C('LogicalAnd', 'bool empty', [B([0]), B([1])]);
  C('LogicalNot', 'bool [5]', [B([5])]);
  C('LogicalNot', 'bool scalar', [B([])]);
  C('Select', 'float32 same shape', [B([2, 3]), F([2, 3]), F([2, 3])], {}, { T: 'float32' });
  C('Select', 'float32 row condition', [B([2]), F([2, 3]), F([2, 3])], {}, { T: 'float32' });
  C('Select', 'int32 scalar condition', [B([]), I([3]), I([3])], {}, { T: 'int32' });
  C('SelectV2', 'float32 broadcast condition', [B([3]), F([2, 3]), F([2, 3])], {}, { T: 'float32' });
  C('SelectV2', 'int32 broadcast all', [B([2, 1]), I([1, 3]), I([])], {}, { T: 'int32' });
  C('SelectV2', 'float32 empty', [B([0]), F([0]), F([0])], {}, { T: 'float32' });
  C('BitwiseAnd', 'int32', [I([6], -8, 8), I([6], -8, 8)], {}, { T: 'int32' });

  // ---- reduction ----
  fam('reduction');
  for (const op of ['Sum', 'Mean', 'Max', 'Min', 'Prod']) {
    C(op, 'float32 axis 1', [F([2, 3]), Ki([1])], { keep_dims: false });
    C(op, 'float32 axis -1 keep_dims', [F([2, 3]), Ki([-1])], { keep_dims: true });
    C(op, 'float32 axes [0,2]', [F([2, 2, 3]), Ki([0, 2])], { keep_dims: false });
    C(op, 'float32 scalar axis 0', [F([4]), Ks(0)], { keep_dims: false });
    C(op, 'float32 no axes', [F([2, 2]), K('int32', [0], [])], { keep_dims: false });
    C(op, 'int32 axis 0', [I([3, 2]), Ki([0])], { keep_dims: false });
    C(op, 'float32 empty reduced', [F([0, 3]), Ki([0])], { keep_dims: false });
    C(op, 'float32 empty kept', [F([2, 0]), Ki([0])], { keep_dims: true });
    C(op, 'float32 empty all axes', [F([0, 3]), Ki([0, -1])], { keep_dims: false });
  }
  for (const op of ['All', 'Any']) {
    C(op, 'bool axis 1', [B([3, 4]), Ki([1])], { keep_dims: false });
    C(op, 'bool axis -2 keep_dims', [B([3, 4]), Ki([-2])], { keep_dims: true });
    C(op, 'bool empty', [B([0, 2]), Ki([0])], { keep_dims: false });
  }
  for (const op of ['ArgMax', 'ArgMin']) {
    C(op, 'float32 axis 0', [F([3, 4]), Ks(0)], { output_type: dt('int32') });
    C(op, 'float32 axis -1', [F([3, 4]), Ks(-1)], { output_type: dt('int32') });
    C(op, 'int32 ties', [V('int32', [6], [1, 3, 3, 0, 0, 1]), Ks(0)], { output_type: dt('int32') });
    C(op, 'float32 default int64 output', [F([2, 3]), Ks(1)]);
  }
  for (const op of ['Cumsum', 'Cumprod']) {
    C(op, 'float32 axis 0', [F([3, 2], 0.5, 2), Ks(0)], { exclusive: false, reverse: false });
    C(op, 'float32 axis -1 exclusive', [F([2, 3], 0.5, 2), Ks(-1)], { exclusive: true, reverse: false });
    C(op, 'float32 reverse', [F([4], 0.5, 2), Ks(0)], { exclusive: false, reverse: true });
    C(op, 'int32 exclusive reverse', [I([5], -3, 3), Ks(0)], { exclusive: true, reverse: true });
  }
  C('Bincount', 'int32 no weights', [V('int32', [6], [0, 1, 1, 3, 4, 1]), Ks(5), K('float32', [0], [])], {}, { T: 'float32' });
  C('Bincount', 'float32 weights', [V('int32', [5], [0, 1, 1, 3, 2]), Ks(4), F([5])], {}, { T: 'float32' });
  C('DenseBincount', 'int32 1-D', [V('int32', [6], [0, 1, 1, 3, 4, 1]), Ks(5), K('float32', [0], [])], { binary_output: false, Tidx: dt('int32') }, { T: 'float32' });
  C('DenseBincount', 'binary_output', [V('int32', [6], [0, 1, 1, 3, 4, 1]), Ks(5), K('float32', [0], [])], { binary_output: true, Tidx: dt('int32') }, { T: 'float32' });
  C('DenseBincount', 'int32 2-D weighted', [V('int32', [2, 3], [0, 1, 1, 2, 2, 0]), Ks(3), F([2, 3])], { binary_output: false, Tidx: dt('int32') }, { T: 'float32' });

  // ---- slice_join ----
  fam('slice_join');
  C('ConcatV2', 'float32 axis 0', [F([1, 3]), F([2, 3]), Ks(0)], { N: 2, Tidx: dt('int32') });
  C('ConcatV2', 'float32 axis -1 three', [F([2, 1]), F([2, 2]), F([2, 0]), Ks(-1)], { N: 3, Tidx: dt('int32') });
  C('ConcatV2', 'int32 axis 1', [I([2, 2]), I([2, 1]), Ks(1)], { N: 2, Tidx: dt('int32') });
  C('ConcatV2', 'bool axis 0', [B([2]), B([3]), Ks(0)], { N: 2, Tidx: dt('int32') });
  C('ConcatV2', 'float32 empty', [F([0, 2]), F([0, 2]), Ks(0)], { N: 2, Tidx: dt('int32') });
  C('Concat', 'float32 axis 1', [Ks(1), F([2, 1]), F([2, 2])], { N: 2 }, { T: 'float32' });
  C('GatherV2', 'float32 axis 0', [F([4, 2]), V('int32', [3], [3, 0, 3]), Ks(0)], { batch_dims: 0 });
  C('GatherV2', 'float32 axis -1', [F([2, 3]), V('int32', [2, 2], [2, 0, 1, 1]), Ks(-1)], { batch_dims: 0 });
  C('GatherV2', 'int32 axis 1 scalar index', [I([2, 3]), V('int32', [], [2]), Ks(1)], { batch_dims: 0 });
  C('GatherV2', 'float32 batch_dims 1', [F([2, 3]), V('int32', [2, 2], [0, 2, 1, 1]), Ks(1)], { batch_dims: 1 });
  C('GatherV2', 'bool empty indices', [B([3]), V('int32', [0], []), Ks(0)], { batch_dims: 0 });
  C('GatherV2', 'float32 batch_dims -1', [F([2, 3]), V('int32', [2, 2], [0, 2, 1, 1]), Ks(1)], { batch_dims: -1 });
  C('Gather', 'float32', [F([3, 2]), V('int32', [2], [2, 0])], { validate_indices: true }, { T: false });
  C('Reverse', 'float32 dims [true,false]', [F([2, 3]), K('bool', [2], [true, false])]);
  C('ReverseV2', 'float32 axis [1]', [F([2, 3]), Ki([1])]);
  C('ReverseV2', 'int32 axis [-1,0]', [I([2, 3]), Ki([-1, 0])]);
  C('ReverseV2', 'float32 no axes', [F([3]), K('int32', [0], [])]);
  C('Slice', 'float32 [1..]', [F([3, 4]), Ki([1, 1]), Ki([2, 2])], {}, { T: 'float32' });
  C('Slice', 'int32 size -1', [I([3, 4]), Ki([0, 2]), Ki([-1, -1])], {}, { T: 'int32' });
  C('Slice', 'float32 empty size', [F([3, 4]), Ki([1, 0]), Ki([0, 4])], {}, { T: 'float32' });
  const ss = (name, x, b, e, s, masks) => C('StridedSlice', name, [x, Ki(b), Ki(e), Ki(s)],
    { begin_mask: 0, end_mask: 0, ellipsis_mask: 0, new_axis_mask: 0, shrink_axis_mask: 0, Index: dt('int32'), ...masks }, { T: x.dtype });
  ss('float32 plain', F([4, 3]), [1, 0], [3, 2], [1, 1], {});
  ss('float32 negative stride', F([5]), [-1], [-6], [-2], {});
  ss('int32 begin/end masks', I([4, 3]), [1, 1], [0, 0], [1, 1], { begin_mask: 1, end_mask: 2 });
  ss('float32 shrink axis', F([3, 4]), [1, 0], [2, 4], [1, 1], { shrink_axis_mask: 1 });
  ss('float32 new axis', F([3]), [0, 0], [1, 2], [1, 1], { new_axis_mask: 1 });
  ss('float32 ellipsis', F([2, 3, 4]), [0, 1], [1, 3], [1, 1], { ellipsis_mask: 1 });
  ss('float32 empty', F([4]), [3], [1], [1], {});
  ss('int32 shrink negative index', I([3, 4]), [-1, 1], [0, 3], [1, 1], { shrink_axis_mask: 1 });
  ss('float32 negative stride with end mask', F([2, 5]), [0, -2], [2, 0], [1, -1], { end_mask: 2 });
  C('Pack', 'float32 axis 0', [F([2]), F([2]), F([2])], { N: 3, axis: 0 });
  C('Pack', 'int32 axis -1', [I([2, 2]), I([2, 2])], { N: 2, axis: -1 });
  C('Pack', 'float32 scalars', [F([]), F([])], { N: 2, axis: 0 });
  C('Pack', 'bool axis 1', [B([2]), B([2])], { N: 2, axis: 1 });
  C('Unpack', 'float32 axis 0', [F([3, 2])], { num: 3, axis: 0 }, { outs: [0, 1, 2] });
  C('Unpack', 'int32 axis -1', [I([2, 2])], { num: 2, axis: -1 }, { outs: [0, 1] });
  C('Tile', 'float32 [2,3] x [2,1]', [F([2, 3]), Ki([2, 1])]);
  C('Tile', 'int32 x [3]', [I([2]), Ki([3])]);
  C('Tile', 'bool x [0,2]', [B([1, 2]), Ki([0, 2])]);
  C('Tile', 'float32 scalar x []', [F([]), K('int32', [0], [])]);
  C('Split', 'float32 axis 1 in 3', [Ks(1), F([2, 6])], { num_split: 3 }, { outs: [0, 1, 2], T: 'float32' });
  C('Split', 'int32 axis -1 in 2', [Ks(-1), I([2, 4])], { num_split: 2 }, { outs: [0, 1], T: 'int32' });
  C('SplitV', 'float32 sizes [1,-1]', [F([2, 5]), Ki([1, -1]), Ks(1)], { num_split: 2, Tlen: dt('int32') }, { outs: [0, 1] });
  C('SplitV', 'int32 axis -2 sizes [2,0,1]', [I([3, 2]), Ki([2, 0, 1]), Ks(-2)], { num_split: 3, Tlen: dt('int32') }, { outs: [0, 1, 2] });
  C('ScatterNd', 'float32 rows', [V('int32', [2, 1], [2, 0]), F([2, 3]), Ki([4, 3])], { Tindices: dt('int32') }, { T: 'float32' });
  C('ScatterNd', 'int32 elements summed', [V('int32', [3, 2], [0, 0, 1, 1, 0, 0]), I([3]), Ki([2, 2])], { Tindices: dt('int32') }, { T: 'int32' });
  C('GatherNd', 'float32 elements', [F([2, 3]), V('int32', [2, 2], [1, 2, 0, 0])], { Tindices: dt('int32') }, { T: false });
  C('GatherNd', 'int32 rows', [I([3, 2]), V('int32', [2, 1], [2, 0])], { Tindices: dt('int32') }, { T: false });
  C('GatherNd', 'float32 empty indices', [F([3, 2]), V('int32', [0, 1], [])], { Tindices: dt('int32') }, { T: false });
  C('SparseToDense', 'float32 1-D', [V('int32', [3], [0, 2, 4]), Ki([6]), F([3]), Ks(0.5, 'float32')], { validate_indices: true }, { T: 'float32' });
  C('SparseToDense', 'int32 2-D', [V('int32', [2, 2], [0, 1, 1, 0]), Ki([2, 3]), I([2]), Ks(-1)], { validate_indices: true }, { T: 'int32' });
  C('SparseToDense', 'float32 scalar value', [V('int32', [2], [1, 3]), Ki([4]), Ks(2, 'float32'), Ks(0, 'float32')], { validate_indices: true }, { T: 'float32' });
  C('TensorScatterUpdate', 'float32 rows', [F([4, 2]), V('int32', [2, 1], [3, 1]), F([2, 2])], { Tindices: dt('int32') });
  C('TensorScatterUpdate', 'int32 elements', [I([2, 2]), V('int32', [2, 2], [0, 1, 1, 0]), I([2])], { Tindices: dt('int32') });

  // ---- transformation ----
  fam('transformation');
  const cast = (name, x, to) => C('Cast', name, [x], { SrcT: dt(x.dtype), DstT: dt(to), Truncate: false }, { T: false });
  cast('float32 to int32', V('float32', [6], [1.7, -1.7, 0.5, -0.5, 2.5, 100]), 'int32');
  cast('int32 to float32', I([4]), 'float32');
  cast('float32 to bool', V('float32', [4], [0, 0.5, -2, 'NaN']), 'bool');
  cast('bool to float32', B([4]), 'float32');
  cast('bool to int32', B([4]), 'int32');
  cast('int32 to bool', V('int32', [4], [0, 3, -1, 0]), 'bool');
  cast('float32 empty to int32', F([0, 2]), 'int32');
  C('ExpandDims', 'float32 axis 0', [F([2, 3]), Ks(0)], { Tdim: dt('int32') });
  C('ExpandDims', 'int32 axis -1', [I([2, 3]), Ks(-1)], { Tdim: dt('int32') });
  C('ExpandDims', 'bool scalar', [B([]), Ks(0)], { Tdim: dt('int32') });
  C('MirrorPad', 'float32 REFLECT', [F([2, 3]), K('int32', [2, 2], [1, 1, 2, 2])], { mode: 'REFLECT', Tpaddings: dt('int32') });
  C('MirrorPad', 'int32 SYMMETRIC', [I([2, 3]), K('int32', [2, 2], [2, 0, 0, 3])], { mode: 'SYMMETRIC', Tpaddings: dt('int32') });
  C('Pad', 'float32', [F([2, 2]), K('int32', [2, 2], [1, 0, 0, 2])], { Tpaddings: dt('int32') });
  C('Pad', 'int32 1-D', [I([3]), K('int32', [1, 2], [2, 1])], { Tpaddings: dt('int32') });
  C('Pad', 'float32 empty', [F([0, 2]), K('int32', [2, 2], [1, 1, 0, 0])], { Tpaddings: dt('int32') });
  C('PadV2', 'float32 value', [F([2, 2]), K('int32', [2, 2], [0, 1, 1, 0]), Ks(9.5, 'float32')], { Tpaddings: dt('int32') });
  C('PadV2', 'int32 value', [I([2]), K('int32', [1, 2], [1, 2]), Ks(-7)], { Tpaddings: dt('int32') });
  C('Reshape', 'float32 -1', [F([2, 3]), Ki([3, -1])], { Tshape: dt('int32') });
  C('Reshape', 'int32 to scalar', [I([1, 1]), K('int32', [0], [])], { Tshape: dt('int32') });
  C('Reshape', 'bool empty', [B([0, 3]), Ki([3, 0])], { Tshape: dt('int32') });
  C('EnsureShape', 'float32', [F([2, 3])], { shape: shp([2, 3]) }, { T: 'float32' });
  C('Squeeze', 'float32 all', [F([1, 2, 1])], { squeeze_dims: ints([]) });
  C('Squeeze', 'int32 axis -1', [I([1, 2, 1])], { squeeze_dims: ints([-1]) });
  C('Squeeze', 'float32 axis 0', [F([1, 3])], { squeeze_dims: ints([0]) });
  C('SpaceToBatchND', 'float32 block 2', [F([1, 4, 4, 1]), Ki([2, 2]), K('int32', [2, 2], [0, 0, 0, 0])], { Tblock_shape: dt('int32'), Tpaddings: dt('int32') });
  C('SpaceToBatchND', 'int32 padded', [I([1, 2, 3, 1]), Ki([2, 2]), K('int32', [2, 2], [0, 0, 0, 1])], { Tblock_shape: dt('int32'), Tpaddings: dt('int32') });
  C('BatchToSpaceND', 'float32 block 2', [F([4, 2, 2, 1]), Ki([2, 2]), K('int32', [2, 2], [0, 0, 0, 0])], { Tblock_shape: dt('int32'), Tcrops: dt('int32') });
  C('BatchToSpaceND', 'int32 cropped', [I([4, 1, 2, 1]), Ki([2, 2]), K('int32', [2, 2], [0, 0, 0, 1])], { Tblock_shape: dt('int32'), Tcrops: dt('int32') });
  C('DepthToSpace', 'float32 NHWC block 2', [F([1, 1, 2, 8])], { block_size: 2, data_format: 'NHWC' });
  C('DepthToSpace', 'int32 NHWC block 2', [I([2, 1, 1, 4])], { block_size: 2, data_format: 'NHWC' });
  C('BroadcastTo', 'float32 [3] to [2,3]', [F([3]), Ki([2, 3])], { Tidx: dt('int32') });
  C('BroadcastTo', 'int32 [2,1] to [2,2,4]', [I([2, 1]), Ki([2, 2, 4])], { Tidx: dt('int32') });
  C('BroadcastTo', 'bool scalar to [0]', [B([]), Ki([0])], { Tidx: dt('int32') });
  C('BroadcastArgs', 'int32', [V('int32', [2], [2, 1]), V('int32', [3], [4, 1, 3])], {}, { T: 'int32' });

  // ---- matrices ----
  fam('matrices');
  C('MatMul', 'float32', [F([2, 3]), F([3, 4])], { transpose_a: false, transpose_b: false });
  C('MatMul', 'float32 transpose_a', [F([3, 2]), F([3, 4])], { transpose_a: true, transpose_b: false });
  C('MatMul', 'float32 transpose_b', [F([2, 3]), F([4, 3])], { transpose_a: false, transpose_b: true });
  C('MatMul', 'float32 both', [F([3, 2]), F([4, 3])], { transpose_a: true, transpose_b: true });
  C('MatMul', 'int32', [I([2, 2]), I([2, 3])], { transpose_a: false, transpose_b: false });
  C('MatMul', 'float32 empty inner', [F([2, 0]), F([0, 3])], { transpose_a: false, transpose_b: false });
  C('BatchMatMul', 'float32', [F([2, 2, 3]), F([2, 3, 2])], { adj_x: false, adj_y: false });
  C('BatchMatMul', 'float32 adj_x adj_y', [F([2, 3, 2]), F([2, 2, 3])], { adj_x: true, adj_y: true });
  C('BatchMatMulV2', 'float32 broadcast batch', [F([2, 1, 2, 3]), F([3, 3, 2])], { adj_x: false, adj_y: false });
  C('BatchMatMulV2', 'float32 adj_y', [F([2, 2, 3]), F([2, 4, 3])], { adj_x: false, adj_y: true });
  C('BatchMatMulV2', 'int32', [I([1, 2, 2]), I([2, 2, 2])], { adj_x: false, adj_y: false });
  C('_FusedMatMul', 'BiasAdd', [F([2, 3]), F([3, 4]), F([4])], { transpose_a: false, transpose_b: false, num_args: 1, fused_ops: strs(['BiasAdd']), epsilon: fl(0.0001), leakyrelu_alpha: fl(0.2) });
  C('_FusedMatMul', 'BiasAdd Relu transpose_b', [F([2, 3]), F([4, 3]), F([4])], { transpose_a: false, transpose_b: true, num_args: 1, fused_ops: strs(['BiasAdd', 'Relu']), epsilon: fl(0.0001), leakyrelu_alpha: fl(0.2) });
  C('_FusedMatMul', 'BiasAdd LeakyRelu', [F([2, 3]), F([3, 2]), F([2])], { transpose_a: false, transpose_b: false, num_args: 1, fused_ops: strs(['BiasAdd', 'LeakyRelu']), epsilon: fl(0.0001), leakyrelu_alpha: fl(0.3) });
  C('Transpose', 'float32 [1,0]', [F([2, 3]), Ki([1, 0])], { Tperm: dt('int32') });
  C('Transpose', 'int32 [2,0,1]', [I([2, 3, 2]), Ki([2, 0, 1])], { Tperm: dt('int32') });
  C('Transpose', 'bool empty', [B([0, 2]), Ki([1, 0])], { Tperm: dt('int32') });
  C('Einsum', 'matmul', [F([2, 3]), F([3, 2])], { equation: 'ij,jk->ik', N: 2 });
  C('Einsum', 'batch dot', [F([2, 3]), F([2, 3])], { equation: 'bi,bi->b', N: 2 });
  C('Einsum', 'transpose', [F([2, 3])], { equation: 'ij->ji', N: 1 });
  C('Einsum', 'batch matmul', [F([2, 2, 3]), F([2, 3, 2])], { equation: 'bij,bjk->bik', N: 2 });
  C('Einsum', 'attention scores', [F([1, 2, 3, 4]), F([1, 2, 2, 4])], { equation: 'bhqd,bhkd->bhqk', N: 2 });
  C('Einsum', 'transposed a', [F([3, 2]), F([3, 4])], { equation: 'ji,jk->ik', N: 2 });
  C('Einsum', 'transposed b', [F([2, 3]), F([4, 3])], { equation: 'ij,kj->ik', N: 2 });
  C('Einsum', 'output transposed', [F([2, 3]), F([3, 4])], { equation: 'ij,jk->ki', N: 2 });
  C('Einsum', 'outer product', [F([3]), F([4])], { equation: 'i,j->ij', N: 2 });
  C('Einsum', 'row sums', [F([2, 3])], { equation: 'ij->i', N: 1 });
  C('Einsum', 'int32 matmul', [I([2, 3]), I([3, 2])], { equation: 'ij,jk->ik', N: 2 });
  C('Einsum', 'int32 batch dot', [I([2, 3]), I([2, 3])], { equation: 'bi,bi->b', N: 2 });
  C('MatrixBandPart', 'float32 lower 1 upper 0', [F([3, 3]), Ks(1), Ks(0)], { Tindex: dt('int32') });
  C('MatrixBandPart', 'int32 lower -1 upper 1', [I([2, 3, 4]), Ks(-1), Ks(1)], { Tindex: dt('int32') });

  // ---- normalization ----
  fam('normalization');
  C('EuclideanNorm', 'float32 axis 1', [F([2, 3]), Ki([1])], { keep_dims: false, Tidx: dt('int32') });
  C('EuclideanNorm', 'float32 axis -1 keep', [F([2, 3]), Ki([-1])], { keep_dims: true, Tidx: dt('int32') });
  C('EuclideanNorm', 'float32 all', [F([2, 2]), Ki([0, 1])], { keep_dims: false, Tidx: dt('int32') });
  for (const op of ['FusedBatchNorm', 'FusedBatchNormV2', 'FusedBatchNormV3']) {
    const extra = op === 'FusedBatchNorm' ? {} : { U: dt('float32') };
    C(op, 'float32 inference NHWC', [F([1, 2, 2, 3]), F([3], 0.5, 2), F([3]), F([3]), F([3], 0.5, 2)],
      { epsilon: fl(0.001), is_training: false, data_format: 'NHWC', ...extra });
    C(op, 'float32 epsilon 0.5', [F([2, 1, 1, 2]), F([2], 0.5, 2), F([2]), F([2]), F([2], 0.5, 2)],
      { epsilon: fl(0.5), is_training: false, data_format: 'NHWC', ...extra });
  }
  C('LRN', 'float32 defaults', [F([1, 1, 2, 6])], { depth_radius: 5, bias: fl(1), alpha: fl(1), beta: fl(0.5) });
  C('LRN', 'float32 radius 1', [F([1, 2, 1, 4])], { depth_radius: 1, bias: fl(2), alpha: fl(0.5), beta: fl(0.75) });
  for (const op of ['Softmax', 'LogSoftmax']) {
    C(op, 'float32 [2,3]', [F([2, 3])]);
    C(op, 'float32 [4]', [F([4], -10, 10)]);
    C(op, 'float32 [2,2,3]', [F([2, 2, 3])]);
    C(op, 'float32 large', [V('float32', [3], [1000, 1001, 999])]);
    C(op, 'float32 empty', [F([0, 3])]);
    C(op, 'float32 infinity', [V('float32', [3], ['-Infinity', 0, 1])]);
  }

  // ---- convolution ----
  fam('convolution');
  for (const op of ['AvgPool', 'MaxPool']) {
    C(op, 'float32 VALID 2x2 s2', [F([1, 4, 4, 1])], { ksize: ints([1, 2, 2, 1]), strides: ints([1, 2, 2, 1]), padding: 'VALID', data_format: 'NHWC' });
    C(op, 'float32 SAME 3x3 s1', [F([1, 3, 3, 2])], { ksize: ints([1, 3, 3, 1]), strides: ints([1, 1, 1, 1]), padding: 'SAME', data_format: 'NHWC' });
    C(op, 'float32 SAME 2x2 s2 odd', [F([2, 3, 5, 1])], { ksize: ints([1, 2, 2, 1]), strides: ints([1, 2, 2, 1]), padding: 'SAME', data_format: 'NHWC' });
    C(op, 'float32 VALID 3x1 s(1,2) empty batch', [F([0, 3, 3, 1])], { ksize: ints([1, 3, 1, 1]), strides: ints([1, 1, 2, 1]), padding: 'VALID', data_format: 'NHWC' });
  }
  C('MaxPoolWithArgmax', 'float32 VALID', [F([1, 4, 4, 1])], { ksize: ints([1, 2, 2, 1]), strides: ints([1, 2, 2, 1]), padding: 'VALID', include_batch_in_index: false, Targmax: dt('int64') }, { outs: [0, 1] });
  for (const op of ['AvgPool3D', 'MaxPool3D'])
    C(op, 'float32 VALID', [F([1, 2, 4, 4, 1])], { ksize: ints([1, 2, 2, 2, 1]), strides: ints([1, 1, 2, 2, 1]), padding: 'VALID', data_format: 'NDHWC' });
  const conv = (name, x, f, strides, padding, dil, more = {}) => C('Conv2D', name, [x, f],
    { strides: ints(strides), padding, dilations: ints(dil), data_format: 'NHWC', use_cudnn_on_gpu: true, explicit_paddings: ints([]), ...more });
  conv('float32 VALID', F([1, 4, 4, 2]), F([2, 2, 2, 3]), [1, 1, 1, 1], 'VALID', [1, 1, 1, 1]);
  conv('float32 SAME stride 2', F([1, 5, 5, 1]), F([3, 3, 1, 2]), [1, 2, 2, 1], 'SAME', [1, 1, 1, 1]);
  conv('float32 dilation 2', F([1, 5, 5, 1]), F([2, 2, 1, 1]), [1, 1, 1, 1], 'VALID', [1, 2, 2, 1]);
  conv('float32 EXPLICIT padding', F([1, 3, 3, 1]), F([2, 2, 1, 1]), [1, 1, 1, 1], 'EXPLICIT', [1, 1, 1, 1], { explicit_paddings: ints([0, 0, 1, 0, 0, 1, 0, 0]) });
  C('_FusedConv2D', 'BiasAdd Relu', [F([1, 3, 3, 2]), F([2, 2, 2, 2]), F([2])], { num_args: 1, strides: ints([1, 1, 1, 1]), padding: 'VALID',
    data_format: 'NHWC', dilations: ints([1, 1, 1, 1]), explicit_paddings: ints([]), use_cudnn_on_gpu: true, fused_ops: strs(['BiasAdd', 'Relu']), epsilon: fl(0.0001), leakyrelu_alpha: fl(0.2) });
  C('_FusedConv2D', 'BiasAdd LeakyRelu SAME', [F([1, 3, 3, 1]), F([3, 3, 1, 2]), F([2])], { num_args: 1, strides: ints([1, 1, 1, 1]), padding: 'SAME',
    data_format: 'NHWC', dilations: ints([1, 1, 1, 1]), explicit_paddings: ints([]), use_cudnn_on_gpu: true, fused_ops: strs(['BiasAdd', 'LeakyRelu']), epsilon: fl(0.0001), leakyrelu_alpha: fl(0.3) });
  C('Conv2DBackpropInput', 'float32 VALID stride 2', [Ki([1, 4, 4, 1]), F([2, 2, 1, 2]), F([1, 2, 2, 2])], { strides: ints([1, 2, 2, 1]), padding: 'VALID',
    data_format: 'NHWC', dilations: ints([1, 1, 1, 1]), explicit_paddings: ints([]), use_cudnn_on_gpu: true }, { T: 'float32' });
  C('Conv2DBackpropInput', 'float32 SAME stride 1', [Ki([1, 3, 3, 1]), F([2, 2, 1, 1]), F([1, 3, 3, 1])], { strides: ints([1, 1, 1, 1]), padding: 'SAME',
    data_format: 'NHWC', dilations: ints([1, 1, 1, 1]), explicit_paddings: ints([]), use_cudnn_on_gpu: true }, { T: 'float32' });
  // The converter also maps Conv1D and DepthwiseConv2d, which are not TensorFlow ops (see README.md).
  for (const op of ['DepthwiseConv2dNative']) {
    C(op, 'float32 VALID multiplier 2', [F([1, 3, 3, 2]), F([2, 2, 2, 2])], { strides: ints([1, 1, 1, 1]), padding: 'VALID', data_format: 'NHWC', dilations: ints([1, 1, 1, 1]), explicit_paddings: ints([]) });
    C(op, 'float32 SAME stride 2', [F([1, 4, 4, 1]), F([3, 3, 1, 1])], { strides: ints([1, 2, 2, 1]), padding: 'SAME', data_format: 'NHWC', dilations: ints([1, 1, 1, 1]), explicit_paddings: ints([]) });
  }
  for (const op of ['FusedDepthwiseConv2dNative', '_FusedDepthwiseConv2dNative'])
    C(op, 'BiasAdd Relu6', [F([1, 3, 3, 2]), F([2, 2, 2, 1]), F([2])], { num_args: 1, strides: ints([1, 1, 1, 1]), padding: 'VALID',
      data_format: 'NHWC', dilations: ints([1, 1, 1, 1]), explicit_paddings: ints([]), fused_ops: strs(['BiasAdd', 'Relu6']) });
  C('Conv3D', 'float32 VALID', [F([1, 3, 3, 3, 1]), F([2, 2, 2, 1, 2])], { strides: ints([1, 1, 1, 1, 1]), padding: 'VALID', data_format: 'NDHWC', dilations: ints([1, 1, 1, 1, 1]) });
  C('Dilation2D', 'float32 VALID', [F([1, 4, 4, 1]), F([2, 2, 1])], { strides: ints([1, 1, 1, 1]), rates: ints([1, 1, 1, 1]), padding: 'VALID' });
  C('Dilation2D', 'float32 SAME rate 2', [F([1, 4, 4, 1]), F([2, 2, 1])], { strides: ints([1, 1, 1, 1]), rates: ints([1, 2, 2, 1]), padding: 'SAME' });
  // 3-D pools, Conv3D, MaxPoolWithArgmax, Dilation2D: padding, strides, batch and channels, empty batches.
  const p3 = (op, name, x, k, s, padding) => C(op, name, [x], { ksize: ints(k), strides: ints(s), padding, data_format: 'NDHWC' });
  for (const op of ['AvgPool3D', 'MaxPool3D']) {
    p3(op, 'float32 SAME 2x3x2 s2 batch 2 channels 2', F([2, 3, 4, 5, 2]), [1, 2, 3, 2, 1], [1, 2, 2, 2, 1], 'SAME');
    p3(op, 'float32 VALID 3x3x3 s1 channels 3', F([1, 3, 4, 4, 3]), [1, 3, 3, 3, 1], [1, 1, 1, 1, 1], 'VALID');
    p3(op, 'float32 SAME window past the input', F([1, 2, 2, 2, 1]), [1, 3, 3, 3, 1], [1, 1, 1, 1, 1], 'SAME');
    p3(op, 'float32 VALID strides (1,2,3)', F([1, 4, 5, 7, 1]), [1, 2, 2, 2, 1], [1, 1, 2, 3, 1], 'VALID');
    p3(op, 'float32 empty batch', F([0, 2, 2, 2, 1]), [1, 2, 2, 2, 1], [1, 1, 1, 1, 1], 'VALID');
  }
  const c3 = (name, x, f, s, padding, dil = [1, 1, 1, 1, 1]) => C('Conv3D', name, [x, f], { strides: ints(s), padding, data_format: 'NDHWC', dilations: ints(dil) });
  c3('float32 SAME stride 2 batch 2', F([2, 4, 5, 3, 2]), F([3, 2, 3, 2, 3]), [1, 2, 2, 1, 1], 'SAME');
  c3('float32 VALID strides (1,2,1) channels 3', F([1, 4, 4, 4, 3]), F([2, 2, 2, 3, 4]), [1, 1, 2, 1, 1], 'VALID');
  c3('float32 SAME 1x1x1 pointwise', F([2, 2, 3, 2, 3]), F([1, 1, 1, 3, 2]), [1, 1, 1, 1, 1], 'SAME');
  c3('float32 SAME stride 3 filter past the input', F([1, 2, 4, 4, 1]), F([3, 3, 3, 1, 2]), [1, 3, 3, 3, 1], 'SAME');
  c3('float32 empty batch', F([0, 3, 3, 3, 1]), F([2, 2, 2, 1, 1]), [1, 1, 1, 1, 1], 'VALID');
  c3('float32 dilation 2', F([1, 5, 5, 5, 1]), F([2, 2, 2, 1, 1]), [1, 1, 1, 1, 1], 'VALID', [1, 2, 2, 2, 1]);
  const argmax = (name, x, k, s, padding, withBatch) => C('MaxPoolWithArgmax', name, [x],
    { ksize: ints(k), strides: ints(s), padding, include_batch_in_index: withBatch, Targmax: dt('int64') }, { outs: [0, 1] });
  argmax('float32 SAME 3x3 s1 batch 2 channels 2 include_batch_in_index', F([2, 3, 3, 2]), [1, 3, 3, 1], [1, 1, 1, 1], 'SAME', true);
  argmax('float32 SAME 3x3 s1 batch 2 channels 2', F([2, 3, 3, 2]), [1, 3, 3, 1], [1, 1, 1, 1], 'SAME', false);
  argmax('float32 VALID 2x3 s(1,2) channels 3', F([1, 4, 5, 3]), [1, 2, 3, 1], [1, 1, 2, 1], 'VALID', false);
  argmax('float32 SAME 2x2 s2 odd batch 2 include_batch_in_index', F([2, 5, 3, 1]), [1, 2, 2, 1], [1, 2, 2, 1], 'SAME', true);
  const dil2 = (name, x, f, s, r, padding) => C('Dilation2D', name, [x, f], { strides: ints(s), rates: ints(r), padding });
  dil2('float32 SAME stride 2 batch 2 channels 2', F([2, 5, 5, 2]), F([3, 2, 2]), [1, 2, 2, 1], [1, 1, 1, 1], 'SAME');
  dil2('float32 VALID rates (2,1) strides (1,2)', F([1, 6, 6, 1]), F([2, 3, 1]), [1, 1, 2, 1], [1, 2, 1, 1], 'VALID');
  dil2('float32 SAME rates 2 stride 2 channels 3', F([1, 5, 4, 3]), F([2, 2, 3]), [1, 2, 2, 1], [1, 2, 2, 1], 'SAME');
  dil2('int32 SAME', I([1, 4, 4, 1]), I([2, 2, 1]), [1, 1, 1, 1], [1, 1, 1, 1], 'SAME');
  dil2('float32 empty batch', F([0, 3, 3, 1]), F([2, 2, 1]), [1, 1, 1, 1], [1, 1, 1, 1], 'VALID');

  // ---- image ----
  fam('image');
  for (const op of ['ResizeBilinear', 'ResizeNearestNeighbor']) {
    C(op, 'float32 up 2x', [F([1, 2, 2, 1]), Ki([4, 4])], { align_corners: false, half_pixel_centers: false });
    C(op, 'float32 align_corners', [F([1, 2, 3, 1]), Ki([3, 5])], { align_corners: true, half_pixel_centers: false });
    C(op, 'float32 half_pixel_centers down', [F([1, 4, 4, 2]), Ki([3, 2])], { align_corners: false, half_pixel_centers: true });
    C(op, 'int32 up', [I([1, 2, 2, 1]), Ki([3, 3])], { align_corners: false, half_pixel_centers: true });
  }
  C('CropAndResize', 'bilinear', [F([1, 4, 4, 1]), V('float32', [2, 4], [0, 0, 1, 1, 0.25, 0.25, 0.75, 1]), V('int32', [2], [0, 0]), Ki([3, 3])], { method: 'bilinear', extrapolation_value: fl(0) });
  C('CropAndResize', 'nearest, outside', [F([1, 3, 3, 2]), V('float32', [1, 4], [-0.5, 0, 1, 1.5]), V('int32', [1], [0]), Ki([2, 3])], { method: 'nearest', extrapolation_value: fl(-1) });
  C('CropAndResize', 'flipped box', [F([1, 3, 4, 1]), V('float32', [1, 4], [1, 0.8, 0, 0.2]), V('int32', [1], [0]), Ki([3, 2])], { method: 'bilinear', extrapolation_value: fl(0) });
  C('CropAndResize', 'crop size 1', [F([2, 3, 3, 2]), V('float32', [2, 4], [0, 0, 1, 1, 0.2, 0.1, 0.6, 0.9]), V('int32', [2], [1, 0]), Ki([1, 1])], { method: 'bilinear', extrapolation_value: fl(0) });
  C('CropAndResize', 'bilinear extrapolation', [F([1, 3, 3, 1]), V('float32', [1, 4], [-0.5, -0.5, 1.5, 1.5]), V('int32', [1], [0]), Ki([3, 3])], { method: 'bilinear', extrapolation_value: fl(7.5) });
  C('CropAndResize', 'int32 image', [I([1, 3, 3, 1]), V('float32', [1, 4], [0, 0, 1, 1]), V('int32', [1], [0]), Ki([2, 2])], { method: 'bilinear', extrapolation_value: fl(0) });
  C('ImageProjectiveTransformV3', 'translate nearest', [F([1, 3, 3, 1]), V('float32', [1, 8], [1, 0, 1, 0, 1, 0, 0, 0]), Ki([3, 3]), Ks(0, 'float32')], { interpolation: 'NEAREST', fill_mode: 'CONSTANT', dtype: dt('float32') });
  C('ImageProjectiveTransformV3', 'nearest constant', [F([1, 4, 5, 2]), V('float32', [1, 8], [0.9, 0.3, -1.5, -0.2, 1.1, 1.25, 0.02, -0.01]), Ki([5, 4]), Ks(-3.5, 'float32')], { interpolation: 'NEAREST', fill_mode: 'CONSTANT', dtype: dt('float32') });
  C('ImageProjectiveTransformV3', 'bilinear constant', [F([1, 4, 5, 2]), V('float32', [1, 8], [0.9, 0.3, -1.5, -0.2, 1.1, 1.25, 0.02, -0.01]), Ki([5, 4]), Ks(-3.5, 'float32')], { interpolation: 'BILINEAR', fill_mode: 'CONSTANT', dtype: dt('float32') });
  C('ImageProjectiveTransformV3', 'nearest reflect', [F([1, 4, 5, 2]), V('float32', [1, 8], [0.9, 0.3, -1.5, -0.2, 1.1, 1.25, 0.02, -0.01]), Ki([5, 4]), Ks(-3.5, 'float32')], { interpolation: 'NEAREST', fill_mode: 'REFLECT', dtype: dt('float32') });
  C('ImageProjectiveTransformV3', 'bilinear reflect', [F([1, 4, 5, 2]), V('float32', [1, 8], [0.9, 0.3, -1.5, -0.2, 1.1, 1.25, 0.02, -0.01]), Ki([5, 4]), Ks(-3.5, 'float32')], { interpolation: 'BILINEAR', fill_mode: 'REFLECT', dtype: dt('float32') });
  C('ImageProjectiveTransformV3', 'nearest wrap', [F([1, 4, 5, 2]), V('float32', [1, 8], [0.9, 0.3, -1.5, -0.2, 1.1, 1.25, 0.02, -0.01]), Ki([5, 4]), Ks(-3.5, 'float32')], { interpolation: 'NEAREST', fill_mode: 'WRAP', dtype: dt('float32') });
  C('ImageProjectiveTransformV3', 'bilinear wrap', [F([1, 4, 5, 2]), V('float32', [1, 8], [0.9, 0.3, -1.5, -0.2, 1.1, 1.25, 0.02, -0.01]), Ki([5, 4]), Ks(-3.5, 'float32')], { interpolation: 'BILINEAR', fill_mode: 'WRAP', dtype: dt('float32') });
  C('ImageProjectiveTransformV3', 'nearest nearest', [F([1, 4, 5, 2]), V('float32', [1, 8], [0.9, 0.3, -1.5, -0.2, 1.1, 1.25, 0.02, -0.01]), Ki([5, 4]), Ks(-3.5, 'float32')], { interpolation: 'NEAREST', fill_mode: 'NEAREST', dtype: dt('float32') });
  C('ImageProjectiveTransformV3', 'bilinear nearest', [F([1, 4, 5, 2]), V('float32', [1, 8], [0.9, 0.3, -1.5, -0.2, 1.1, 1.25, 0.02, -0.01]), Ki([5, 4]), Ks(-3.5, 'float32')], { interpolation: 'BILINEAR', fill_mode: 'NEAREST', dtype: dt('float32') });
  C('ImageProjectiveTransformV3', 'per-image transforms bilinear', [F([2, 3, 3, 1]), V('float32', [2, 8], [1, 0, 0.5, 0, 1, -0.5, 0, 0, 0.5, 0, 0, 0, 0.5, 0, 0, 0]), Ki([3, 3]), Ks(0, 'float32')], { interpolation: 'BILINEAR', fill_mode: 'CONSTANT', dtype: dt('float32') });

  // ---- creation ----
  fam('creation');
  C('Fill', 'float32 [2,3]', [Ki([2, 3]), Ks(1.5, 'float32')], { index_type: dt('int32') }, { T: 'float32' });
  C('Fill', 'int32 empty', [Ki([0, 2]), Ks(7)], { index_type: dt('int32') }, { T: 'int32' });
  C('Fill', 'bool scalar', [K('int32', [0], []), K('bool', [], [true])], { index_type: dt('int32') }, { T: 'bool' });
  C('LinSpace', 'float32 5', [Ks(1, 'float32'), Ks(3, 'float32'), Ks(5)], { Tidx: dt('int32') }, { T: 'float32' });
  C('LinSpace', 'float32 1', [Ks(2, 'float32'), Ks(9, 'float32'), Ks(1)], { Tidx: dt('int32') }, { T: 'float32' });
  C('OneHot', 'float32 depth 3', [V('int32', [4], [0, 2, -1, 3]), Ks(3), Ks(1, 'float32'), Ks(0, 'float32')], { axis: -1, TI: dt('int32') }, { T: 'float32' });
  C('OneHot', 'int32 2-D on/off', [V('int32', [2, 2], [1, 0, 2, 1]), Ks(3), Ks(5), Ks(-1)], { axis: -1, TI: dt('int32') }, { T: 'int32' });
  C('OneHot', 'float32 axis 0', [V('int32', [3], [0, 2, 1]), Ks(3), Ks(1, 'float32'), Ks(0, 'float32')], { axis: 0, TI: dt('int32') }, { T: 'float32' });
  C('OnesLike', 'float32', [F([2, 3])], {}, { T: 'float32' });
  C('OnesLike', 'int32 empty', [I([0])], {}, { T: 'int32' });
  C('OnesLike', 'bool', [B([3])], {}, { T: 'bool' });
  C('ZerosLike', 'float32', [F([2, 2])]);
  C('ZerosLike', 'int32 scalar', [I([])]);
  C('Range', 'int32 0..10 by 3', [Ks(0), Ks(10), Ks(3)], { Tidx: dt('int32') });
  C('Range', 'float32 negative step', [Ks(2, 'float32'), Ks(-1, 'float32'), Ks(-0.5, 'float32')], { Tidx: dt('float32') });
  C('Range', 'int32 empty', [Ks(3), Ks(3), Ks(1)], { Tidx: dt('int32') });
  C('Range', 'int32 negative step', [Ks(5), Ks(-4), Ks(-3)], { Tidx: dt('int32') });
  C('Range', 'float32 fractional', [Ks(0, 'float32'), Ks(1, 'float32'), Ks(0.3, 'float32')], { Tidx: dt('float32') });

  // ---- dynamic ----
  fam('dynamic');
  const boxes = () => V('float32', [5, 4], [0, 0, 1, 1, 0, 0.1, 1, 1.1, 0, -0.1, 1, 0.9, 0, 10, 1, 11, 0, 10.1, 1, 11.1]);
  const scores = () => V('float32', [5], [0.9, 0.75, 0.6, 0.95, 0.5]);
  C('NonMaxSuppressionV2', 'max 3 iou 0.5', [boxes(), scores(), Ks(3), Ks(0.5, 'float32')], {}, { T: 'float32' });
  C('NonMaxSuppressionV3', 'score threshold 0.7', [boxes(), scores(), Ks(5), Ks(0.5, 'float32'), Ks(0.7, 'float32')], {}, { T: 'float32' });
  C('NonMaxSuppressionV4', 'padded', [boxes(), scores(), Ks(4), Ks(0.5, 'float32'), Ks(0, 'float32')], { pad_to_max_output_size: true }, { T: 'float32', outs: [0, 1] });
  C('NonMaxSuppressionV4', 'not padded', [boxes(), scores(), Ks(4), Ks(0.5, 'float32'), Ks(0, 'float32')], { pad_to_max_output_size: false }, { T: 'float32', outs: [0, 1] });
  C('NonMaxSuppressionV5', 'soft sigma 0.5', [boxes(), scores(), Ks(5), Ks(0.5, 'float32'), Ks(0, 'float32'), Ks(0.5, 'float32')], { pad_to_max_output_size: false }, { T: 'float32', outs: [0, 1] });
  C('NonMaxSuppressionV5', 'hard', [boxes(), scores(), Ks(5), Ks(0.3, 'float32'), Ks(0, 'float32'), Ks(0, 'float32')], { pad_to_max_output_size: false }, { T: 'float32', outs: [0, 1] });
  C('Where', 'bool 2-D', [B([2, 3])], {}, { T: 'bool' });
  C('Where', 'bool 1-D none', [V('bool', [3], [false, false, false])], {}, { T: 'bool' });
  C('Where', 'float32', [V('float32', [4], [0, 1.5, 0, -2])], {}, { T: 'float32' });
  C('Where', 'int32 3-D', [V('int32', [2, 1, 2], [0, 3, -1, 0])], {}, { T: 'int32' });
  C('ListDiff', 'int32', [V('int32', [6], [1, 2, 3, 4, 3, 5]), V('int32', [2], [3, 1])], { out_idx: dt('int32') }, { outs: [0, 1] });
  C('ListDiff', 'float32', [V('float32', [4], [0.5, 1, 2, 1]), V('float32', [1], [1])], { out_idx: dt('int32') }, { outs: [0, 1] });

  // ---- evaluation ----
  fam('evaluation');
  for (const op of ['LowerBound', 'UpperBound']) {
    C(op, 'float32', [V('float32', [2, 4], [0, 1, 1, 3, -2, 0, 2, 2]), V('float32', [2, 3], [1, 2, 5, -3, 2, 0])], { out_type: dt('int32') }, { T: 'float32' });
    C(op, 'int32', [V('int32', [1, 5], [1, 2, 2, 2, 7]), V('int32', [1, 3], [2, 0, 8])], { out_type: dt('int32') }, { T: 'int32' });
  }
  C('TopKV2', 'float32 k 2', [F([2, 4]), Ks(2)], { sorted: true }, { outs: [0, 1] });
  C('TopKV2', 'int32 ties k 3', [V('int32', [5], [3, 1, 3, 2, 3]), Ks(3)], { sorted: true }, { outs: [0, 1] });
  C('TopKV2', 'float32 k 0', [F([3]), Ks(0)], { sorted: true }, { outs: [0, 1] });
  // (no NaN: TensorFlow's order for it is whatever its sort leaves)
  C('TopKV2', 'float32 infinities', [V('float32', [5], [1, '-Infinity', 'Infinity', 0, 2]), Ks(3)], { sorted: true }, { outs: [0, 1] });
  C('Unique', 'int32', [V('int32', [7], [4, 1, 4, 2, 1, 1, 7])], { out_idx: dt('int32') }, { outs: [0, 1] });
  C('Unique', 'float32', [V('float32', [4], [0.5, -1, 0.5, 2])], { out_idx: dt('int32') }, { outs: [0, 1] });
  C('Unique', 'bool empty', [V('bool', [0], [])], { out_idx: dt('int32') }, { outs: [0, 1] });
  C('UniqueV2', 'int32 axis 0 rows', [V('int32', [3, 2], [1, 2, 3, 4, 1, 2]), Ki([0])], { out_idx: dt('int32'), Taxis: dt('int32') }, { outs: [0, 1] });
  C('UniqueV2', 'float32 axis 1 columns', [V('float32', [2, 3], [1, 2, 1, 3, 4, 3]), Ki([1])], { out_idx: dt('int32'), Taxis: dt('int32') }, { outs: [0, 1] });

  // ---- graph ----
  fam('graph');
  C('PlaceholderWithDefault', 'float32 default', [K('float32', [2], [1.5, -2])], { dtype: dt('float32'), shape: shp([2]) }, { T: false });
  C('Identity', 'float32', [F([2, 2])]);
  C('Identity', 'bool empty', [B([0])]);
  C('IdentityN', 'two', [F([2]), I([3])], { T: dts(['float32', 'int32']) }, { T: false, outs: [0, 1] });
  C('IdentityN', 'three with bool and empty', [B([2]), F([0, 3]), I([2, 2])], { T: dts(['bool', 'float32', 'int32']) }, { T: false, outs: [0, 1, 2] });
  C('Snapshot', 'int32', [I([3])]);
  C('StopGradient', 'float32', [F([3])]);
  C('Rank', 'float32 rank 3', [F([1, 2, 3])]);
  C('Rank', 'int32 scalar', [I([])]);
  C('Size', 'float32', [F([2, 3])], { out_type: dt('int32') });
  C('Size', 'bool empty', [B([0, 4])], { out_type: dt('int32') });
  C('Shape', 'float32', [F([2, 3, 1])], { out_type: dt('int32') });
  C('Shape', 'int32 scalar', [I([])], { out_type: dt('int32') });
  C('ShapeN', 'two', [F([2]), F([1, 3])], { out_type: dt('int32'), N: 2 }, { outs: [0, 1] });
  C('ShapeN', 'int32 three, scalar and empty', [I([]), I([0, 2]), I([2, 1, 3])], { out_type: dt('int32'), N: 3 }, { outs: [0, 1, 2] });
  C('Print', 'identity of x', [F([3]), F([3])], { T: 'float32', U: dts(['float32']), message: 'x', first_n: -1, summarize: 3 }, { T: false });

  // ---- control ----
  fam('control');
  C('Switch', 'float32 pred true, output 1', [F([3]), V('bool', [], [true])], {}, { outs: [1] });
  C('Switch', 'int32 pred false, output 0', [I([2]), V('bool', [], [false])], {}, { outs: [0] });
  C('Merge', 'one live input', [F([3])], { N: 1 }, { outs: [0] });
  // A while loop in TensorFlow's v1 form: i = x; while i < 10: i = i + i (Enter, Merge, LoopCond, Switch, NextIteration,
  // Exit); the bound is a Const in the frame through a control edge from the Merge, as tf.while_loop makes them.
  const loop = (name, x) => C('Enter', name, [x], { frame_name: 'loop', is_constant: false, parallel_iterations: 10 }, {
    fetch: ['exit:0'], extra: [
      { name: 'merge', op: 'Merge', input: ['op', 'next'], attr: { T: dt(x.dtype), N: { i: '2' } } },
      { name: 'ten', op: 'Const', input: ['^merge'], attr: { dtype: dt(x.dtype), value: { tensor: { dtype: x.dtype === 'int32' ? 'DT_INT32' : 'DT_FLOAT', tensorShape: { dim: [] }, ...(x.dtype === 'int32' ? { intVal: [10] } : { floatVal: [10] }) } } } },
      { name: 'less', op: 'Less', input: ['merge', 'ten'], attr: { T: dt(x.dtype) } },
      { name: 'cond', op: 'LoopCond', input: ['less'] },
      { name: 'switch', op: 'Switch', input: ['merge', 'cond'], attr: { T: dt(x.dtype) } },
      { name: 'body', op: 'Identity', input: ['switch:1'], attr: { T: dt(x.dtype) } },
      { name: 'sum', op: 'AddV2', input: ['body', 'body'], attr: { T: dt(x.dtype) } },
      { name: 'next', op: 'NextIteration', input: ['sum'], attr: { T: dt(x.dtype) } },
      { name: 'exit', op: 'Exit', input: ['switch'], attr: { T: dt(x.dtype) } }] });
  loop('while loop int32 doubling', V('int32', [], [3]));
  loop('while loop float32 doubling', V('float32', [], [0.75]));
  // TensorLists: built from a tensor, then read back.
  const tl = (op, name, inputs, attrs, fetchNode, opts = {}) => C(op, name, inputs, attrs, { fetch: [fetchNode], ...opts });
  const stack = (src, dtype, shape) => ({ name: 'stack', op: 'TensorListStack', input: [src, 'eshape'], attr: { element_dtype: dt(dtype), num_elements: { i: '-1' } } });
  const eshape = (dims) => ({ name: 'eshape', op: 'Const', attr: { dtype: dt('int32'), value: { tensor: { dtype: 'DT_INT32', tensorShape: { dim: [{ size: String(dims.length) }] }, intVal: dims } } } });
  tl('TensorListFromTensor', 'then Stack, float32', [F([3, 2]), Ki([2])], { element_dtype: dt('float32'), shape_type: dt('int32') }, 'stack:0',
    { extra: [eshape([2]), stack('op', 'float32')] });
  tl('TensorListFromTensor', 'then GetItem 1, int32', [I([3, 2]), Ki([2])], { element_dtype: dt('int32'), shape_type: dt('int32') }, 'get:0',
    { extra: [eshape([2]), { name: 'idx', op: 'Const', attr: { dtype: dt('int32'), value: { tensor: { dtype: 'DT_INT32', tensorShape: { dim: [] }, intVal: [1] } } } },
      { name: 'get', op: 'TensorListGetItem', input: ['op', 'idx', 'eshape'], attr: { element_dtype: dt('int32') } }] });
  tl('TensorListFromTensor', 'then Length', [F([4, 1]), Ki([1])], { element_dtype: dt('float32'), shape_type: dt('int32') }, 'len:0',
    { extra: [{ name: 'len', op: 'TensorListLength', input: ['op'] }] });
  tl('TensorListReserve', 'SetItem then Stack', [Ki([2]), Ks(3)], { element_dtype: dt('float32'), shape_type: dt('int32') }, 'stack:0',
    { extra: [eshape([2]), { name: 'z', op: 'Const', attr: { dtype: dt('float32'), value: { tensor: { dtype: 'DT_FLOAT', tensorShape: { dim: [{ size: '2' }] }, floatVal: [0.5, -1] } } } },
      { name: 'z0', op: 'Const', attr: { dtype: dt('float32'), value: { tensor: { dtype: 'DT_FLOAT', tensorShape: { dim: [{ size: '2' }] }, floatVal: [0, 0] } } } },
      { name: 'i1', op: 'Const', attr: { dtype: dt('int32'), value: { tensor: { dtype: 'DT_INT32', tensorShape: { dim: [] }, intVal: [1] } } } },
      { name: 'i0', op: 'Const', attr: { dtype: dt('int32'), value: { tensor: { dtype: 'DT_INT32', tensorShape: { dim: [] }, intVal: [0] } } } },
      { name: 'i2', op: 'Const', attr: { dtype: dt('int32'), value: { tensor: { dtype: 'DT_INT32', tensorShape: { dim: [] }, intVal: [2] } } } },
      { name: 'set0', op: 'TensorListSetItem', input: ['op', 'i0', 'z0'], attr: { element_dtype: dt('float32') } },
      { name: 'set1', op: 'TensorListSetItem', input: ['set0', 'i1', 'z'], attr: { element_dtype: dt('float32') } },
      { name: 'set', op: 'TensorListSetItem', input: ['set1', 'i2', 'z0'], attr: { element_dtype: dt('float32') } },
      stack('set', 'float32')] });
  tl('EmptyTensorList', 'PushBack twice, Stack', [Ki([2]), Ks(-1)], { element_dtype: dt('float32'), shape_type: dt('int32') }, 'stack:0',
    { extra: [eshape([2]),
      { name: 'a', op: 'Const', attr: { dtype: dt('float32'), value: { tensor: { dtype: 'DT_FLOAT', tensorShape: { dim: [{ size: '2' }] }, floatVal: [1, 2] } } } },
      { name: 'b', op: 'Const', attr: { dtype: dt('float32'), value: { tensor: { dtype: 'DT_FLOAT', tensorShape: { dim: [{ size: '2' }] }, floatVal: [3, 4] } } } },
      { name: 'p1', op: 'TensorListPushBack', input: ['op', 'a'], attr: { element_dtype: dt('float32') } },
      { name: 'p2', op: 'TensorListPushBack', input: ['p1', 'b'], attr: { element_dtype: dt('float32') } },
      stack('p2', 'float32')] });
  tl('TensorListFromTensor', 'then Gather [2,0]', [F([3, 2]), Ki([2])], { element_dtype: dt('float32'), shape_type: dt('int32') }, 'g:0',
    { extra: [eshape([2]), { name: 'gi', op: 'Const', attr: { dtype: dt('int32'), value: { tensor: { dtype: 'DT_INT32', tensorShape: { dim: [{ size: '2' }] }, intVal: [2, 0] } } } },
      { name: 'g', op: 'TensorListGather', input: ['op', 'gi', 'eshape'], attr: { element_dtype: dt('float32') } }] });
  tl('TensorListScatterV2', 'then Stack', [F([2, 2]), Ki([1, 0]), Ki([2]), Ks(2)], { element_dtype: dt('float32'), shape_type: dt('int32') }, 'stack:0',
    { extra: [eshape([2]), stack('op', 'float32')] });
  tl('TensorArrayV3', 'Write then Read', [Ks(2)], { dtype: dt('float32'), element_shape: shp([2]), dynamic_size: false, clear_after_read: true, identical_element_shapes: true, tensor_array_name: '' }, 'read:0',
    { extra: [
      { name: 'v', op: 'Const', attr: { dtype: dt('float32'), value: { tensor: { dtype: 'DT_FLOAT', tensorShape: { dim: [{ size: '2' }] }, floatVal: [1.5, 2.5] } } } },
      { name: 'i1', op: 'Const', attr: { dtype: dt('int32'), value: { tensor: { dtype: 'DT_INT32', tensorShape: { dim: [] }, intVal: [1] } } } },
      { name: 'w', op: 'TensorArrayWriteV3', input: ['op', 'i1', 'v', 'op:1'], attr: { T: dt('float32') } },
      { name: 'read', op: 'TensorArrayReadV3', input: ['op', 'i1', 'w'], attr: { dtype: dt('float32') } }] });
  tl('TensorArrayV3', 'Scatter then Gather and Size', [Ks(3)], { dtype: dt('float32'), element_shape: shp([2]), dynamic_size: false, clear_after_read: true, identical_element_shapes: true, tensor_array_name: '' }, 'gather:0',
    { extra: [
      { name: 'v', op: 'Const', attr: { dtype: dt('float32'), value: { tensor: { dtype: 'DT_FLOAT', tensorShape: { dim: [{ size: '3' }, { size: '2' }] }, floatVal: [1, 2, 3, 4, 5, 6] } } } },
      { name: 'idx', op: 'Const', attr: { dtype: dt('int32'), value: { tensor: { dtype: 'DT_INT32', tensorShape: { dim: [{ size: '3' }] }, intVal: [2, 0, 1] } } } },
      { name: 'sc', op: 'TensorArrayScatterV3', input: ['op', 'idx', 'v', 'op:1'], attr: { T: dt('float32') } },
      { name: 'gidx', op: 'Const', attr: { dtype: dt('int32'), value: { tensor: { dtype: 'DT_INT32', tensorShape: { dim: [{ size: '2' }] }, intVal: [0, 2] } } } },
      { name: 'gather', op: 'TensorArrayGatherV3', input: ['op', 'gidx', 'sc'], attr: { dtype: dt('float32'), element_shape: shp([2]) } }] });

  const kc = (name, dtype, dims, vals) => ({ name, op: 'Const', attr: { dtype: dt(dtype), value: { tensor: { dtype: { int32: 'DT_INT32', int64: 'DT_INT64' }[dtype] || 'DT_FLOAT', tensorShape: { dim: dims.map((d) => ({ size: String(d) })) }, ...(dtype === 'int32' ? { intVal: vals } : dtype === 'int64' ? { int64Val: vals.map(String) } : { floatVal: vals }) } } } });
  tl('TensorArrayV3', 'Split then Concat, Size, Close', [Ks(2)], { dtype: dt('float32'), element_shape: shp([-1, 2]), dynamic_size: false, clear_after_read: true, identical_element_shapes: false, tensor_array_name: '' }, 'cat:0',
    { fetch: ['cat:0', 'size:0'], extra: [
      kc('v', 'float32', [5, 2], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]), kc('lens', 'int64', [2], [3, 2]),
      { name: 'split', op: 'TensorArraySplitV3', input: ['op', 'v', 'lens', 'op:1'], attr: { T: dt('float32') } },
      { name: 'cat', op: 'TensorArrayConcatV3', input: ['op', 'split'], attr: { dtype: dt('float32'), element_shape_except0: shp([2]) } },
      { name: 'size', op: 'TensorArraySizeV3', input: ['op', 'split'] },
      { name: 'close', op: 'TensorArrayCloseV3', input: ['op', '^cat', '^size'] }] });
  tl('TensorListReserve', 'Resize then Length', [Ki([2]), Ks(3)], { element_dtype: dt('float32'), shape_type: dt('int32') }, 'len:0',
    { extra: [kc('n', 'int32', [], [5]), { name: 'rs', op: 'TensorListResize', input: ['op', 'n'] },
      { name: 'len', op: 'TensorListLength', input: ['rs'] }] });
  tl('TensorListScatter', 'then Stack', [F([3, 2]), Ki([2, 0, 1]), Ki([2])], { element_dtype: dt('float32'), shape_type: dt('int32') }, 'stack:0',
    { extra: [eshape([2]), stack('op', 'float32')] });
  tl('TensorListFromTensor', 'then Concat', [F([3, 2]), Ki([2])], { element_dtype: dt('float32'), shape_type: dt('int32') }, 'cat:0',
    { extra: [{ name: 'cat', op: 'TensorListConcat', input: ['op'], attr: { element_dtype: dt('float32'), element_shape: shp([2]) } }] });
  tl('TensorListSplit', 'then Stack', [F([4]), Ki([2]), K('int64', [2], [2, 2])], { element_dtype: dt('float32'), shape_type: dt('int32') }, 'stack:0',
    { extra: [eshape([2]), stack('op', 'float32')] });
  tl('TensorListFromTensor', 'then Gather [1,1,0] int32, element_shape -1', [I([3, 2]), Ks(-1)], { element_dtype: dt('int32'), shape_type: dt('int32') }, 'g:0',
    { extra: [kc('gi', 'int32', [3], [1, 1, 0]), kc('ges', 'int32', [], [-1]),
      { name: 'g', op: 'TensorListGather', input: ['op', 'gi', 'ges'], attr: { element_dtype: dt('int32') } }] });
  tl('TensorListScatter', 'int32 element_shape -1, then Length', [I([2, 3]), Ki([0, 4]), Ks(-1)], { element_dtype: dt('int32'), shape_type: dt('int32') }, 'len:0',
    { extra: [{ name: 'len', op: 'TensorListLength', input: ['op'] }] });
  tl('TensorListReserve', 'Resize to 0 then Length', [Ki([2]), Ks(3)], { element_dtype: dt('float32'), shape_type: dt('int32') }, 'len:0',
    { extra: [kc('n', 'int32', [], [0]), { name: 'rs', op: 'TensorListResize', input: ['op', 'n'] },
      { name: 'len', op: 'TensorListLength', input: ['rs'] }] });
  tl('TensorListFromTensor', 'int32 [2,2,3] then Concat', [I([2, 2, 3]), Ki([2, 3])], { element_dtype: dt('int32'), shape_type: dt('int32') }, 'cat:0',
    { extra: [{ name: 'cat', op: 'TensorListConcat', input: ['op'], attr: { element_dtype: dt('int32'), element_shape: shp([2, 3]) } }] });
  tl('TensorListFromTensor', 'then PopBack', [I([3, 2]), Ki([2])], { element_dtype: dt('int32'), shape_type: dt('int32') }, 'pop:1',
    { extra: [eshape([2]), { name: 'pop', op: 'TensorListPopBack', input: ['op', 'eshape'], attr: { element_dtype: dt('int32') } }] });
  C('Identity', 'after a NoOp', [F([2])], {}, { inputNames: ['in0', '^noop'], extra: [{ name: 'noop', op: 'NoOp' }] });

  // ---- hash_table ----
  fam('hash_table');
  C('HashTableV2', 'int32 keys: import, find, size', [], { key_dtype: dt('int32'), value_dtype: dt('float32'), shared_name: '', use_node_name_sharing: false, container: '' }, {
    T: false, fetch: ['find:0', 'size:0'], extra: [
      { name: 'keys', op: 'Const', attr: { dtype: dt('int32'), value: { tensor: { dtype: 'DT_INT32', tensorShape: { dim: [{ size: '3' }] }, intVal: [1, 5, 9] } } } },
      { name: 'vals', op: 'Const', attr: { dtype: dt('float32'), value: { tensor: { dtype: 'DT_FLOAT', tensorShape: { dim: [{ size: '3' }] }, floatVal: [0.5, 1.5, 2.5] } } } },
      { name: 'imp', op: 'LookupTableImportV2', input: ['op', 'keys', 'vals'], attr: { Tin: dt('int32'), Tout: dt('float32') } },
      { name: 'q', op: 'Const', attr: { dtype: dt('int32'), value: { tensor: { dtype: 'DT_INT32', tensorShape: { dim: [{ size: '4' }] }, intVal: [5, 2, 9, 1] } } } },
      { name: 'dflt', op: 'Const', attr: { dtype: dt('float32'), value: { tensor: { dtype: 'DT_FLOAT', tensorShape: { dim: [] }, floatVal: [-1] } } } },
      { name: 'find', op: 'LookupTableFindV2', input: ['op', 'q', 'dflt', '^imp'], attr: { Tin: dt('int32'), Tout: dt('float32') } },
      { name: 'size', op: 'LookupTableSizeV2', input: ['op', '^imp'] }] });

  C('HashTableV2', 'int32 keys: InitializeTableV2, find', [], { key_dtype: dt('int32'), value_dtype: dt('int32'), shared_name: '', use_node_name_sharing: false, container: '' }, {
    T: false, fetch: ['find:0'], extra: [
      { name: 'keys', op: 'Const', attr: { dtype: dt('int32'), value: { tensor: { dtype: 'DT_INT32', tensorShape: { dim: [{ size: '2' }] }, intVal: [3, -4] } } } },
      { name: 'vals', op: 'Const', attr: { dtype: dt('int32'), value: { tensor: { dtype: 'DT_INT32', tensorShape: { dim: [{ size: '2' }] }, intVal: [30, 40] } } } },
      { name: 'init', op: 'InitializeTableV2', input: ['op', 'keys', 'vals'], attr: { Tkey: dt('int32'), Tval: dt('int32') } },
      { name: 'q', op: 'Const', attr: { dtype: dt('int32'), value: { tensor: { dtype: 'DT_INT32', tensorShape: { dim: [{ size: '2' }, { size: '2' }] }, intVal: [-4, 3, 0, 3] } } } },
      { name: 'dflt', op: 'Const', attr: { dtype: dt('int32'), value: { tensor: { dtype: 'DT_INT32', tensorShape: { dim: [] }, intVal: [0] } } } },
      { name: 'find', op: 'LookupTableFindV2', input: ['op', 'q', 'dflt', '^init'], attr: { Tin: dt('int32'), Tout: dt('int32') } }] });

  C('HashTableV2', 'int32 keys, int32 values: import, missing keys get the default', [], { key_dtype: dt('int32'), value_dtype: dt('int32'), shared_name: '', use_node_name_sharing: false, container: '' }, {
    T: false, fetch: ['find:0', 'size:0'], extra: [
      kc('keys', 'int32', [4], [10, -3, 0, 7]), kc('vals', 'int32', [4], [1, 2, 3, 4]),
      { name: 'imp', op: 'LookupTableImportV2', input: ['op', 'keys', 'vals'], attr: { Tin: dt('int32'), Tout: dt('int32') } },
      kc('q', 'int32', [5], [7, 8, -3, 10, 1]), kc('dflt', 'int32', [], [-99]),
      { name: 'find', op: 'LookupTableFindV2', input: ['op', 'q', 'dflt', '^imp'], attr: { Tin: dt('int32'), Tout: dt('int32') } },
      { name: 'size', op: 'LookupTableSizeV2', input: ['op', '^imp'] }] });
  C('HashTableV2', 'int32 keys, float32 values: InitializeTableV2, find with default 0.5', [], { key_dtype: dt('int32'), value_dtype: dt('float32'), shared_name: 'shared_t', use_node_name_sharing: false, container: '' }, {
    T: false, fetch: ['find:0'], extra: [
      kc('keys', 'int32', [3], [2, 4, 6]), kc('vals', 'float32', [3], [-1.5, 0.25, 8]),
      { name: 'init', op: 'InitializeTableV2', input: ['op', 'keys', 'vals'], attr: { Tkey: dt('int32'), Tval: dt('float32') } },
      kc('q', 'int32', [3], [6, 5, 2]), kc('dflt', 'float32', [], [0.5]),
      { name: 'find', op: 'LookupTableFindV2', input: ['op', 'q', 'dflt', '^init'], attr: { Tin: dt('int32'), Tout: dt('float32') } }] });

  // TensorFlow 1's table ops: the same tables under the v1 names (TF.js maps both onto one implementation).
  C('HashTable', 'v1: int32 keys: import, find, size', [], { key_dtype: dt('int32'), value_dtype: dt('float32'), shared_name: '', use_node_name_sharing: false, container: '' }, {
    T: false, fetch: ['find:0', 'size:0'], extra: [
      kc('keys', 'int32', [3], [4, -2, 11]), kc('vals', 'float32', [3], [0.5, -1.5, 2]),
      { name: 'imp', op: 'LookupTableImport', input: ['op', 'keys', 'vals'], attr: { Tin: dt('int32'), Tout: dt('float32') } },
      kc('q', 'int32', [2, 2], [11, 3, -2, 4]), kc('dflt', 'float32', [], [7]),
      { name: 'find', op: 'LookupTableFind', input: ['op', 'q', 'dflt', '^imp'], attr: { Tin: dt('int32'), Tout: dt('float32') } },
      { name: 'size', op: 'LookupTableSize', input: ['op', '^imp'] }] });
  C('HashTable', 'v1: int32 keys: InitializeTable, find', [], { key_dtype: dt('int32'), value_dtype: dt('int32'), shared_name: 'v1_t', use_node_name_sharing: false, container: '' }, {
    T: false, fetch: ['find:0'], extra: [
      kc('keys', 'int32', [2], [8, 9]), kc('vals', 'int32', [2], [80, 90]),
      { name: 'init', op: 'InitializeTable', input: ['op', 'keys', 'vals'], attr: { Tkey: dt('int32'), Tval: dt('int32') } },
      kc('q', 'int32', [3], [9, 1, 8]), kc('dflt', 'int32', [], [-1]),
      { name: 'find', op: 'LookupTableFind', input: ['op', 'q', 'dflt', '^init'], attr: { Tin: dt('int32'), Tout: dt('int32') } }] });
  // string keys and values: a vocabulary lookup, the other way round, and strings to strings
  C('HashTableV2', 'string keys, int32 values: a vocabulary', [], { key_dtype: dt('string'), value_dtype: dt('int32'), shared_name: '', use_node_name_sharing: false, container: '' }, {
    T: false, fetch: ['find:0', 'size:0'], extra: [
      cnode('keys', V('string', [4], ['the', 'cat', '', 'sat'])), kc('vals', 'int32', [4], [0, 1, 2, 3]),
      { name: 'imp', op: 'LookupTableImportV2', input: ['op', 'keys', 'vals'], attr: { Tin: dt('string'), Tout: dt('int32') } },
      cnode('q', V('string', [2, 3], ['sat', 'on', 'the', '', 'mat', 'cat'])), kc('dflt', 'int32', [], [-1]),
      { name: 'find', op: 'LookupTableFindV2', input: ['op', 'q', 'dflt', '^imp'], attr: { Tin: dt('string'), Tout: dt('int32') } },
      { name: 'size', op: 'LookupTableSizeV2', input: ['op', '^imp'] }] });
  C('HashTableV2', 'int32 keys, string values', [], { key_dtype: dt('int32'), value_dtype: dt('string'), shared_name: '', use_node_name_sharing: false, container: '' }, {
    T: false, fetch: ['find:0'], extra: [
      kc('keys', 'int32', [3], [1, 2, 3]), cnode('vals', V('string', [3], ['one', 'two', 'three'])),
      { name: 'init', op: 'InitializeTableV2', input: ['op', 'keys', 'vals'], attr: { Tkey: dt('int32'), Tval: dt('string') } },
      kc('q', 'int32', [4], [3, 0, 1, 3]), cnode('dflt', V('string', [], ['unknown'])),
      { name: 'find', op: 'LookupTableFindV2', input: ['op', 'q', 'dflt', '^init'], attr: { Tin: dt('int32'), Tout: dt('string') } }] });
  C('HashTable', 'v1: string keys, string values', [], { key_dtype: dt('string'), value_dtype: dt('string'), shared_name: '', use_node_name_sharing: false, container: '' }, {
    T: false, fetch: ['find:0'], extra: [
      cnode('keys', V('string', [2], ['hi', 'bye'])), cnode('vals', V('string', [2], ['hello', 'goodbye'])),
      { name: 'init', op: 'InitializeTable', input: ['op', 'keys', 'vals'], attr: { Tkey: dt('string'), Tval: dt('string') } },
      cnode('q', V('string', [3], ['bye', 'hey', 'hi'])), cnode('dflt', V('string', [], ['?'])),
      { name: 'find', op: 'LookupTableFind', input: ['op', 'q', 'dflt', '^init'], attr: { Tin: dt('string'), Tout: dt('string') } }] });

  // ---- sparse ----
  fam('sparse');
  for (const op of ['SparseSegmentSum', 'SparseSegmentMean']) {
    C(op, 'float32', [F([3, 2]), V('int32', [4], [0, 2, 1, 1]), V('int32', [4], [0, 0, 1, 2])], { Tidx: dt('int32'), Tsegmentids: dt('int32') }, { T: 'float32' });
    C(op, 'float32 gap in segments', [F([2]), V('int32', [2], [1, 0]), V('int32', [2], [0, 2])], { Tidx: dt('int32'), Tsegmentids: dt('int32') }, { T: 'float32' });
    C(op, 'float32 [3,2,2] data, repeated indices', [F([3, 2, 2]), V('int32', [5], [2, 2, 0, 1, 2]), V('int32', [5], [0, 0, 1, 1, 3])], { Tidx: dt('int32'), Tsegmentids: dt('int32') }, { T: 'float32' });
    C(op, 'float32 twelve rows in one segment', [F([4, 3]), V('int32', [12], [0, 1, 2, 3, 3, 2, 1, 0, 0, 1, 2, 3]), V('int32', [12], [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])], { Tidx: dt('int32'), Tsegmentids: dt('int32') }, { T: 'float32' });
    C(op, 'float32 empty indices', [F([3, 2]), V('int32', [0], []), V('int32', [0], [])], { Tidx: dt('int32'), Tsegmentids: dt('int32') }, { T: 'float32' });
  }
  C('SparseSegmentSum', 'int32 data', [I([3, 2]), V('int32', [3], [0, 2, 1]), V('int32', [3], [0, 0, 2])], { Tidx: dt('int32'), Tsegmentids: dt('int32') }, { T: 'int32' });

  // ---- ragged ----
  fam('ragged');
  C('RaggedRange', 'int32 splits int32', [V('int32', [3], [0, 5, 2]), V('int32', [3], [3, 5, 8]), V('int32', [3], [1, 1, 3])], { Tsplits: dt('int32') }, { T: 'int32', outs: [0, 1] });
  C('RaggedRange', 'float32 scalar delta', [V('float32', [2], [0, 1]), V('float32', [2], [1, 2.5]), V('float32', [], [0.5])], { Tsplits: dt('int32') }, { T: 'float32', outs: [0, 1] });
  C('RaggedTensorToTensor', 'ROW_SPLITS', [Ki([3, 4]), F([5]), Ks(0, 'float32'), V('int32', [4], [0, 2, 2, 5])],
    { row_partition_types: strs(['ROW_SPLITS']), num_row_partition_tensors: 1, Tindex: dt('int32'), Tshape: dt('int32') }, { T: 'float32' });

  // ---- complex numbers (basic_math's, appended so the family's earlier cases keep their inputs) ----
  fam('basic_math_complex');
  C('Complex', 'float32 [2,3]', [F([2, 3]), F([2, 3])], { Tout: dt('complex64') });
  // TensorFlow.js refuses shapes that differ; TensorFlow broadcasts them (spec/complex_spec.lua checks that).
  C('Complex', 'float32 scalars', [F([]), F([])], { Tout: dt('complex64') });
  C('Complex', 'float32 empty [0,3]', [F([0, 3]), F([0, 3])], { Tout: dt('complex64') });
  for (const op of ['Real', 'Imag', 'ComplexAbs']) {
    C(op, 'complex64 [2,3]', [CX([2, 3])], { Tout: dt('float32') });
    C(op, 'complex64 scalar', [CX([])], { Tout: dt('float32') });
    C(op, 'complex64 empty [0,2]', [CX([0, 2])], { Tout: dt('float32') });
  }
  C('ComplexAbs', 'complex64 const', [K('complex64', [3], [3, 4, -5, 12, 0, -2])], { Tout: dt('float32') });
  cast('float32 to complex64', F([2, 3]), 'complex64');
  cast('int32 to complex64', I([5]), 'complex64');
  cast('complex64 to float32', CX([2, 2]), 'float32');
  // TensorFlow.js's complex arithmetic gives NaN where it broadcasts: spec/complex_spec.lua checks tfdev's.
  for (const op of ['Add', 'AddV2', 'Sub', 'Mul']) {
    C(op, 'complex64 [2,3]', [CX([2, 3]), CX([2, 3])]);
    C(op, 'complex64 scalars', [CX([]), CX([])]);
  }
  // TensorFlow.js has no complex RealDiv or Neg: spec/complex_spec.lua checks tfdev's.

  // ---- spectral: TensorFlow.js ignores fft_length, so the cases give the lengths it uses ----
  fam('spectral');
  for (const op of ['FFT', 'IFFT']) {
    C(op, 'complex64 [8] (power of two)', [CX([8])]);
    C(op, 'complex64 [2,5] (Bluestein)', [CX([2, 5])]);
    C(op, 'complex64 [3,1]', [CX([3, 1])]);
    C(op, 'complex64 [2,2,12]', [CX([2, 2, 12])]);
    C(op, 'complex64 [1,97] (prime)', [CX([1, 97])]);
  }
  C('RFFT', 'float32 [8]', [F([8]), Ki([8])]);
  C('RFFT', 'float32 [3,6]', [F([3, 6]), Ki([6])]);
  C('RFFT', 'float32 [2,5] (odd)', [F([2, 5]), Ki([5])]);
  C('RFFT', 'float32 [2,2,1]', [F([2, 2, 1]), Ki([1])]);
  C('RFFT', 'float32 [1,100]', [F([1, 100]), Ki([100])]);
  C('IRFFT', 'complex64 [5] to 8', [CX([5]), Ki([8])]);
  C('IRFFT', 'complex64 [2,4] to 6', [CX([2, 4]), Ki([6])]);
  C('IRFFT', 'complex64 [3,2] to 2', [CX([3, 2]), Ki([2])]);
  C('IRFFT', 'complex64 [1,51] to 100', [CX([1, 51]), Ki([100])]);

  // ---- string: TensorFlow.js's CPU kernels for the four string ops its converter maps ----
  fam('string');
  const S = (shape, values) => V('string', shape, values);
  const words = ['', 'a', 'b', 'c', 'd', 'hello', 'hello world', 'TensorFlow', '0123456789abcdef',
    '0123456789abcdefg', 'the quick brown fox jumps', 'the quick brown fox jumps over the lazy dog!!',
    'x'.repeat(64), 'y'.repeat(65), 'The quick brown fox jumps over the lazy dog, then naps for an hour or two.'];
  C('StringToHashBucketFast', '15 strings, lengths 0 to 75, 10 buckets', [S([15], words)], { num_buckets: 10 });
  C('StringToHashBucketFast', '[3,5], 1000003 buckets', [S([3, 5], words)], { num_buckets: 1000003 });
  C('StringToHashBucketFast', 'one bucket', [S([4], words.slice(4, 8))], { num_buckets: 1 });
  C('StringToHashBucketFast', 'empty', [S([0], [])], { num_buckets: 7 });
  C('StringToHashBucketFast', 'a Const input, 2^31-1 buckets', [K('string', [3], ['a', 'bc', 'def'])],
    { num_buckets: 2147483647 });
  const lines = ['hello world', 'a  b', '', ' lead,and;trail ', ',;,', 'one'];
  for (const [d, dn] of [[' ', 'space'], ['', 'empty (bytes)'], [',;', 'two delimiters'], ['o', 'the letter o']]) {
    for (const skip of [true, false])
      C('StringSplit', `${dn} delimiter, skip_empty ${skip}`, [S([6], lines), K('string', [], [d])], { skip_empty: skip },
        { outs: [0, 1, 2] });
  }
  C('StringSplit', 'no strings', [S([0], []), K('string', [], [' '])], {}, { outs: [0, 1, 2] });
  // TensorFlow.js lower-cases string attributes (separator, pads, pattern, rewrite: its converter reads them without
  // keepCase), TensorFlow does not: the cases write them in lower case.
  const toks = S([7], ['a', 'b', 'c', 'd', 'e', 'f', 'g']);
  const ng = (sep, widths, lp, rp, pad, keep) => ({ separator: sep, ngram_widths: ints(widths), left_pad: lp,
    right_pad: rp, pad_width: pad, preserve_short_sequences: keep, Tsplits: dt('int32') });
  C('StringNGrams', 'bigrams, no padding', [toks, Ki([0, 3, 7])], ng(' ', [2], '', '', 0, false), { outs: [0, 1] });
  C('StringNGrams', 'bi- and trigrams padded by 1', [toks, Ki([0, 3, 7])], ng('|', [2, 3], 'l', 'r', 1, false),
    { outs: [0, 1] });
  C('StringNGrams', 'trigrams, dynamic padding', [toks, Ki([0, 2, 2, 7])], ng(' ', [3], '<s>', '</s>', -1, false),
    { outs: [0, 1] });
  C('StringNGrams', 'widths 1 to 4, padding 2', [toks, Ki([0, 1, 4, 7])], ng('_', [1, 2, 3, 4], 'p', 'q', 2, false),
    { outs: [0, 1] });
  C('StringNGrams', 'short rows preserved', [toks, Ki([0, 2, 3, 7])], ng(' ', [4], '', '', 0, true), { outs: [0, 1] });
  C('StringNGrams', 'short rows preserved with padding', [toks, Ki([0, 1, 7])], ng('-', [5], 'l', 'r', 1, true),
    { outs: [0, 1] });
  C('StringNGrams', 'short rows dropped', [toks, Ki([0, 2, 3, 7])], ng(' ', [4], '', '', 0, false), { outs: [0, 1] });
  C('StringNGrams', 'empty separator', [toks, Ki([0, 7])], ng('', [2], '', '', 0, false), { outs: [0, 1] });
  C('StringNGrams', 'no data', [S([0], []), Ki([0])], ng(' ', [2], '', '', 0, false), { outs: [0, 1] });
  const texts = S([2, 3], ['hello world', 'aaa', '', 'Tensor Flow 2.0', '  two  spaces ', 'x1y22z333']);
  const rx = (pattern, rewrite, global) => ({ pattern, rewrite, replace_global: global });
  for (const global of [true, false]) {
    C('StaticRegexReplace', `vowels, global ${global}`, [texts], rx('[aeiou]', '*', global));
    C('StaticRegexReplace', `digit runs, global ${global}`, [texts], rx('[0-9]+', '#', global));
    C('StaticRegexReplace', `whitespace runs, global ${global}`, [texts], rx('\\s+', ' ', global));
  }
  C('StaticRegexReplace', 'anchored start', [texts], rx('^[a-z]', 'x', true));
  C('StaticRegexReplace', 'anchored end', [texts], rx('[a-z]$', 'x', true));
  C('StaticRegexReplace', 'alternation and groups', [texts], rx('(ll|aa)o?', '-', true));
  C('StaticRegexReplace', 'word characters', [texts], rx('\\w+', 'w', true));
  C('StaticRegexReplace', 'non-digits, repetition count', [texts], rx('[^0-9]{2}', '.', true));
  C('StaticRegexReplace', 'dot (any but newline)', [S([3], ['ab', 'a\nb', 'azb'])], rx('a.b', 'x', true));
  C('StaticRegexReplace', 'empty matches', [S([2], ['abc', ''])], rx('x*', '-', true));
  C('StaticRegexReplace', 'escaped punctuation', [S([2], ['a.b.c', '1+1=2'])], rx('\\.|\\+', ' ', true));
  C('StaticRegexReplace', 'negated class, deletion', [texts], rx('[^a-z ]', '', true));

  // ---- functional control flow: If/StatelessIf and While/StatelessWhile over the graph's function library ----
  fam('control_functional');
  const T = (d) => ({ T: dt(d) });
  const branchFns = [
    fdef('then_f', [['a', 'float32'], ['b', 'float32']], [['r', 'float32']], [
      cnode('then_f/ten', V('float32', [], [10])),
      { name: 'm', op: 'Mul', input: ['a', 'then_f/ten:output:0'], attr: T('float32') },
      { name: 's', op: 'AddV2', input: ['m:z:0', 'b'], attr: T('float32') }], { r: 's:z:0' }),
    fdef('else_f', [['a', 'float32'], ['b', 'float32']], [['r', 'float32']], [
      { name: 'd', op: 'Sub', input: ['a', 'b'], attr: T('float32') }], { r: 'd:z:0' }),
  ];
  const ifAttrs = (tcond) => ({ Tcond: dt(tcond), Tin: dts(['float32', 'float32']), Tout: dts(['float32']),
    then_branch: func('then_f'), else_branch: func('else_f') });
  for (const op of ['If', 'StatelessIf']) {
    for (const c of [true, false])
      C(op, `bool condition ${c}`, [V('bool', [], [c]), F([2, 3]), F([2, 3])], ifAttrs('bool'), { T: false, library: branchFns });
    C(op, 'int32 condition 0', [V('int32', [], [0]), F([4]), F([4])], ifAttrs('int32'), { T: false, library: branchFns });
    C(op, 'int32 condition 7', [V('int32', [], [7]), F([4]), F([4])], ifAttrs('int32'), { T: false, library: branchFns });
  }
  // while (i < n) { x = x * 0.5 + 1; i = i + 1 }, and the same with a branch inside the body
  const loopFns = [
    fdef('cond_f', [['x', 'float32'], ['i', 'int32'], ['n', 'int32']], [['ok', 'bool']], [
      { name: 'lt', op: 'Less', input: ['i', 'n'], attr: T('int32') }], { ok: 'lt:z:0' }),
    fdef('body_f', [['x', 'float32'], ['i', 'int32'], ['n', 'int32']], [['x2', 'float32'], ['i2', 'int32'], ['n2', 'int32']], [
      cnode('body_f/half', V('float32', [], [0.5])), cnode('body_f/one', V('float32', [], [1])),
      cnode('body_f/inc', V('int32', [], [1])),
      { name: 'h', op: 'Mul', input: ['x', 'body_f/half:output:0'], attr: T('float32') },
      { name: 'p', op: 'AddV2', input: ['h:z:0', 'body_f/one:output:0'], attr: T('float32') },
      { name: 'j', op: 'AddV2', input: ['i', 'body_f/inc:output:0'], attr: T('int32') }], { x2: 'p:z:0', i2: 'j:z:0', n2: 'n' }),
  ];
  const whileAttrs = (body) => ({ T: dts(['float32', 'int32', 'int32']), cond: func('cond_f'), body: func(body),
    parallel_iterations: 10 });
  for (const op of ['While', 'StatelessWhile']) {
    C(op, 'three iterations', [F([2, 3]), V('int32', [], [0]), V('int32', [], [3])], whileAttrs('body_f'),
      { T: false, library: loopFns, outs: [0, 1, 2] });
    C(op, 'no iteration', [F([4]), V('int32', [], [5]), V('int32', [], [2])], whileAttrs('body_f'),
      { T: false, library: loopFns, outs: [0, 1] });
  }
  const nested = loopFns.concat(branchFns, [
    fdef('body_if', [['x', 'float32'], ['i', 'int32'], ['n', 'int32']], [['x2', 'float32'], ['i2', 'int32'], ['n2', 'int32']], [
      cnode('body_if/two', V('int32', [], [2])), cnode('body_if/inc', V('int32', [], [1])),
      { name: 'mod', op: 'FloorMod', input: ['i', 'body_if/two:output:0'], attr: T('int32') },
      { name: 'odd', op: 'Cast', input: ['mod:z:0'], attr: { SrcT: dt('int32'), DstT: dt('bool') } },
      { name: 'br', op: 'StatelessIf', input: ['odd:y:0', 'x', 'x'], attr: ifAttrs('bool') },
      { name: 'j', op: 'AddV2', input: ['i', 'body_if/inc:output:0'], attr: T('int32') }], { x2: 'br:output:0', i2: 'j:z:0', n2: 'n' })]);
  C('While', 'a StatelessIf in the body', [F([3]), V('int32', [], [0]), V('int32', [], [4])], whileAttrs('body_if'),
    { T: false, library: nested, outs: [0, 1] });
};
