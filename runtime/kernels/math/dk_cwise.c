/* Device kernels of the elementwise ops (k_cwise.c, k_logic.c, k_math.c, Prelu of k_conv.c, Cast of
 * k_basic.c): unary math and activations, binary arithmetic, comparisons and logic with numpy
 * broadcasting as strided walks, IsNan/IsInf/IsFinite, Select and SelectV2, AddN, BiasAdd, Softmax,
 * LogSoftmax, ClipByValue, Prelu and Cast, checked by
 * cwise_logic.h as the CPU kernels are. int32 (which lives on the host) and dtypes the math lacks run the CPU kernel
 * on the host. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cwise_logic.h"
#include "../device_kernel.h"
#include "../kernel_shared.h"

enum {
  K_UNARY,
  K_BINARY,
  K_COMPARE,
  K_LOGIC,
  K_SELECT,
  K_SELECT_V2,
  K_ADD_N,
  K_BIAS_ADD,
  K_SOFTMAX,
  K_PRELU,
  K_CAST,
  K_MATH_BINARY, /* k_math.c's Div, DivNoNan, Mod, BitwiseAnd; Atan2 */
  K_PREDICATE,   /* IsNan, IsInf, IsFinite: float in, bool out */
  K_LOG_SOFTMAX,
  K_CLIP
};
enum { P_IS_NAN, P_IS_INF, P_IS_FINITE };

typedef struct cwise_op {
  const char *name;
  int kind;
  int dm; /* tfd_dm_unary or tfd_dm_binary */
  tfd_kernel_setup_fn cpu;
} cwise_op;

static const cwise_op ops[] = {
    {"Add", K_BINARY, TFD_DM_ADD, tfd_setup_cwise},
    {"AddV2", K_BINARY, TFD_DM_ADD, tfd_setup_cwise},
    {"Sub", K_BINARY, TFD_DM_SUB, tfd_setup_cwise},
    {"Mul", K_BINARY, TFD_DM_MUL, tfd_setup_cwise},
    {"RealDiv", K_BINARY, TFD_DM_DIV, tfd_setup_cwise},
    {"Maximum", K_BINARY, TFD_DM_MAXIMUM, tfd_setup_cwise},
    {"Minimum", K_BINARY, TFD_DM_MINIMUM, tfd_setup_cwise},
    {"Pow", K_BINARY, TFD_DM_POW, tfd_setup_logic},
    {"SquaredDifference", K_BINARY, TFD_DM_SQUARED_DIFFERENCE, tfd_setup_logic},
    {"FloorDiv", K_BINARY, TFD_DM_FLOOR_DIV, tfd_setup_logic},
    {"FloorMod", K_BINARY, TFD_DM_FLOOR_MOD, tfd_setup_logic},
    {"Neg", K_UNARY, TFD_DM_NEG, tfd_setup_cwise},
    {"Abs", K_UNARY, TFD_DM_ABS, tfd_setup_cwise},
    {"Square", K_UNARY, TFD_DM_SQUARE, tfd_setup_cwise},
    {"Exp", K_UNARY, TFD_DM_EXP, tfd_setup_cwise},
    {"Log", K_UNARY, TFD_DM_LOG, tfd_setup_cwise},
    {"Sqrt", K_UNARY, TFD_DM_SQRT, tfd_setup_cwise},
    {"Rsqrt", K_UNARY, TFD_DM_RSQRT, tfd_setup_logic},
    {"Reciprocal", K_UNARY, TFD_DM_RECIPROCAL, tfd_setup_logic},
    {"Relu", K_UNARY, TFD_DM_RELU, tfd_setup_cwise},
    {"Relu6", K_UNARY, TFD_DM_RELU6, tfd_setup_cwise},
    {"Elu", K_UNARY, TFD_DM_ELU, tfd_setup_cwise},
    {"Selu", K_UNARY, TFD_DM_SELU, tfd_setup_logic},
    {"Softplus", K_UNARY, TFD_DM_SOFTPLUS, tfd_setup_logic},
    {"LeakyRelu", K_UNARY, TFD_DM_LEAKY_RELU, tfd_setup_cwise},
    {"Sigmoid", K_UNARY, TFD_DM_SIGMOID, tfd_setup_cwise},
    {"Tanh", K_UNARY, TFD_DM_TANH, tfd_setup_cwise},
    {"LogicalNot", K_UNARY, TFD_DM_LOGICAL_NOT, tfd_setup_logic},
    {"Equal", K_COMPARE, TFD_DM_EQUAL, tfd_setup_logic},
    {"NotEqual", K_COMPARE, TFD_DM_NOT_EQUAL, tfd_setup_logic},
    {"Less", K_COMPARE, TFD_DM_LESS, tfd_setup_logic},
    {"LessEqual", K_COMPARE, TFD_DM_LESS_EQUAL, tfd_setup_logic},
    {"Greater", K_COMPARE, TFD_DM_GREATER, tfd_setup_logic},
    {"GreaterEqual", K_COMPARE, TFD_DM_GREATER_EQUAL, tfd_setup_logic},
    {"LogicalAnd", K_LOGIC, TFD_DM_LOGICAL_AND, tfd_setup_logic},
    {"LogicalOr", K_LOGIC, TFD_DM_LOGICAL_OR, tfd_setup_logic},
    {"Select", K_SELECT, 0, tfd_setup_logic},
    {"SelectV2", K_SELECT_V2, 0, tfd_setup_logic},
    {"AddN", K_ADD_N, 0, tfd_setup_logic},
    {"BiasAdd", K_BIAS_ADD, TFD_DM_ADD, tfd_setup_cwise},
    {"Softmax", K_SOFTMAX, 0, tfd_setup_cwise},
    {"Prelu", K_PRELU, TFD_DM_PRELU, NULL},
    {"Cast", K_CAST, 0, tfd_setup_basic},
    {"Floor", K_UNARY, TFD_DM_FLOOR, tfd_setup_logic},
    {"Ceil", K_UNARY, TFD_DM_CEIL, tfd_setup_logic},
    {"Sin", K_UNARY, TFD_DM_SIN, tfd_setup_logic},
    {"Cos", K_UNARY, TFD_DM_COS, tfd_setup_logic},
    {"Atan2", K_MATH_BINARY, TFD_DM_ATAN2, tfd_setup_logic},
    /* issue 26's math family (k_math.c) */
    {"Acos", K_UNARY, TFD_DM_ACOS, tfd_setup_math},
    {"Acosh", K_UNARY, TFD_DM_ACOSH, tfd_setup_math},
    {"Asin", K_UNARY, TFD_DM_ASIN, tfd_setup_math},
    {"Asinh", K_UNARY, TFD_DM_ASINH, tfd_setup_math},
    {"Atan", K_UNARY, TFD_DM_ATAN, tfd_setup_math},
    {"Atanh", K_UNARY, TFD_DM_ATANH, tfd_setup_math},
    {"Cosh", K_UNARY, TFD_DM_COSH, tfd_setup_math},
    {"Sinh", K_UNARY, TFD_DM_SINH, tfd_setup_math},
    {"Tan", K_UNARY, TFD_DM_TAN, tfd_setup_math},
    {"Erf", K_UNARY, TFD_DM_ERF, tfd_setup_math},
    {"Expm1", K_UNARY, TFD_DM_EXPM1, tfd_setup_math},
    {"Log1p", K_UNARY, TFD_DM_LOG1P, tfd_setup_math},
    {"Round", K_UNARY, TFD_DM_ROUND, tfd_setup_math},
    {"Sign", K_UNARY, TFD_DM_SIGN, tfd_setup_math},
    {"IsNan", K_PREDICATE, P_IS_NAN, tfd_setup_math},
    {"IsInf", K_PREDICATE, P_IS_INF, tfd_setup_math},
    {"IsFinite", K_PREDICATE, P_IS_FINITE, tfd_setup_math},
    {"Div", K_MATH_BINARY, TFD_DM_DIV, tfd_setup_math},
    {"DivNoNan", K_MATH_BINARY, TFD_DM_DIV_NO_NAN, tfd_setup_math},
    {"Mod", K_MATH_BINARY, TFD_DM_MOD, tfd_setup_math},
    {"BitwiseAnd", K_MATH_BINARY, TFD_DM_BITWISE_AND, tfd_setup_math},
    {"ClipByValue", K_CLIP, 0, tfd_setup_math},
    {"LogSoftmax", K_LOG_SOFTMAX, 0, tfd_setup_math},
};

#define OP(k) (&ops[(k)->dk_op])

/* An output shaped like input i, written over it when nobody else reads it (the math reads each
 * element before writing it), else new. */
static tfd_tensor *output_over(tfd_kernel_context *c, const tfd_kernel *k, int i, tfd_dtype dt, const tfd_shape *s) {
  tfd_tensor *t = tfd_dk_lives_on_device(c->device, dt) ? tfd_kernel_forward_input(c, i, dt, s->dims, s->ndims)
                                                                       : NULL;
  return t ? t : tfd_dk_alloc(c, k, dt, s->dims, s->ndims);
}

/* ---- unary ---- */
/* int64 Relu and Relu6 (the math's unary takes integers for NEG, ABS and SQUARE): max(x, 0), then
 * min(., 6), as binary ops against scalars. */
static bool int_relu(tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m, const tfd_tensor *x, tfd_tensor *y) {
  int64_t zero = 0, six = 6, n = tfd_tensor_numel(x);
  tfd_tensor *z = tfd_dk_scalar(c, k, m, TFD_INT64, &zero), *s6 = NULL;
  bool ok = z != NULL;
  int64_t strides[2][TFD_MAX_DIMS] = {{1}, {0}};
  tfd_dm_walk w;
  tfd_dk_walk(&w, 1, &n, 2, strides, NULL);
  tfd_status st = TFD_STATUS_INIT;
  if (ok)
    ok = tfd_dk_ok(k, c, m->binary(c->device, TFD_DM_MAXIMUM, TFD_INT64, tfd_tensor_const_data(x), tfd_tensor_const_data(z),
                                   tfd_tensor_data(y), &w, &st), &st);
  if (ok && OP(k)->dm == TFD_DM_RELU6) {
    ok = (s6 = tfd_dk_scalar(c, k, m, TFD_INT64, &six)) != NULL &&
         tfd_dk_ok(k, c, m->binary(c->device, TFD_DM_MINIMUM, TFD_INT64, tfd_tensor_const_data(y),
                                   tfd_tensor_const_data(s6), tfd_tensor_data(y), &w, &st), &st);
  }
  tfd_tensor_unref(z);
  tfd_tensor_unref(s6);
  return ok;
}

static void k_unary(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m) return;
  tfd_tensor *x = c->inputs[0];
  tfd_dtype dt = tfd_tensor_dtype(x);
  int op = OP(k)->dm;
  bool is_float = dt == TFD_FLOAT32 || dt == TFD_FLOAT64;
  bool ok = op == TFD_DM_LOGICAL_NOT ? dt == TFD_BOOL
            : is_float               ? true
            : dt == TFD_INT64        ? op == TFD_DM_NEG || op == TFD_DM_ABS || op == TFD_DM_SQUARE || op == TFD_DM_RELU ||
                                    op == TFD_DM_RELU6 || op == TFD_DM_SIGN || op == TFD_DM_ROUND
                                     : false;
  if (!ok) {
    tfd_kernel_fail(c, k, TFD_UNIMPLEMENTED, "no kernel for dtype %s", tfd_dtype_name(dt));
    return;
  }
  tfd_shape s;
  tfd_shape_of_tensor(x, &s);
  tfd_tensor *y = output_over(c, k, 0, dt, &s);
  if (!y) return;
  int64_t n = tfd_tensor_numel(x);
  tfd_status st = TFD_STATUS_INIT;
  if (n == 0) {
    ok = true;
  } else if (dt == TFD_INT64 && (op == TFD_DM_RELU || op == TFD_DM_RELU6)) {
    ok = int_relu(k, c, m, x, y);
  } else if (dt == TFD_FLOAT64 && op == TFD_DM_LEAKY_RELU) {
    ok = tfd_dk_leaky_relu_f64(k, c, m, x, y, k->alpha);
  } else {
    ok = tfd_dk_ok(k, c, m->unary(c->device, op, dt, tfd_tensor_const_data(x), tfd_tensor_data(y), n, (float)k->alpha, &st),
                   &st);
  }
  if (ok) c->outputs[0] = y;
  else tfd_tensor_unref(y);
}

/* ---- binary, comparisons, logic ---- */
/* y = op(a, b) broadcast into out; a or b written over when it is the output's shape. */
static void run_binary(tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m, int op, int ia, int ib,
                       const tfd_shape *sa, const tfd_shape *sb, const tfd_shape *out, tfd_dtype out_dt) {
  tfd_tensor *a = c->inputs[ia], *b = c->inputs[ib];
  tfd_dtype dt = tfd_tensor_dtype(a);
  bool same_a = sa->ndims == out->ndims, same_b = sb->ndims == out->ndims;
  for (int d = 0; d < out->ndims; d++) {
    same_a = same_a && sa->dims[d] == out->dims[d];
    same_b = same_b && sb->dims[d] == out->dims[d];
  }
  tfd_tensor *y = NULL;
  if (tfd_dk_lives_on_device(c->device, out_dt)) {
    if (same_a) y = tfd_kernel_forward_input(c, ia, out_dt, out->dims, out->ndims);
    if (!y && same_b) y = tfd_kernel_forward_input(c, ib, out_dt, out->dims, out->ndims);
  }
  if (!y && !(y = tfd_dk_alloc(c, k, out_dt, out->dims, out->ndims))) return;
  int64_t strides[2][TFD_MAX_DIMS];
  tfd_dk_broadcast_strides(sa, out, strides[0]);
  tfd_dk_broadcast_strides(sb, out, strides[1]);
  tfd_dm_walk w;
  tfd_status st = TFD_STATUS_INIT;
  if (tfd_dk_walk(&w, out->ndims, out->dims, 2, strides, NULL) > 0 &&
      !tfd_dk_ok(k, c, m->binary(c->device, op, dt, tfd_tensor_const_data(a), tfd_tensor_const_data(b), tfd_tensor_data(y),
                                 &w, &st), &st)) {
    tfd_tensor_unref(y);
    return;
  }
  c->outputs[0] = y;
}

static void k_binary(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m || !tfd_cwise_same_dtypes(c, k, 0, 2)) return;
  const cwise_op *o = OP(k);
  tfd_tensor *a = c->inputs[0], *b = c->inputs[1];
  tfd_dtype dt = tfd_tensor_dtype(a);
  bool numbers = dt == TFD_FLOAT32 || dt == TFD_FLOAT64 || dt == TFD_INT64;
  bool ok = o->kind == K_LOGIC     ? dt == TFD_BOOL
            : o->kind == K_COMPARE ? numbers || (dt == TFD_BOOL && (o->dm == TFD_DM_EQUAL || o->dm == TFD_DM_NOT_EQUAL))
            : o->dm == TFD_DM_DIV  ? dt == TFD_FLOAT32 || dt == TFD_FLOAT64
                                   : numbers;
  if (!ok) {
    tfd_kernel_fail(c, k, TFD_UNIMPLEMENTED, "no kernel for dtype %s", tfd_dtype_name(dt));
    return;
  }
  tfd_shape sa, sb, out;
  tfd_shape_of_tensor(a, &sa);
  tfd_shape_of_tensor(b, &sb);
  tfd_dtype out_dt = o->kind == K_COMPARE || o->kind == K_LOGIC ? TFD_BOOL : dt;
  bool lenient = o->kind == K_COMPARE && (o->dm == TFD_DM_EQUAL || o->dm == TFD_DM_NOT_EQUAL) && !k->keep_dims, all_differ;
  if (!tfd_compare_broadcast(c, k, lenient, &sa, &sb, &out, &all_differ)) return;
  if (all_differ) {
    unsigned char v = o->dm == TFD_DM_NOT_EQUAL;
    c->outputs[0] = tfd_dk_scalar(c, k, m, TFD_BOOL, &v);
    return;
  }
  /* Integer FloorDiv/FloorMod by zero and Pow to a negative power are in device memory here: the
   * math gives 0 for them, as TensorFlow's GPU kernels do not check either (int32, on the host, is
   * checked by the CPU kernel). */
  run_binary(k, c, m, o->dm, 0, 1, &sa, &sb, &out, out_dt);
}

static void k_bias_add(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m) return;
  tfd_tensor *v = c->inputs[0], *b = c->inputs[1];
  if (!tfd_bias_add_check(c, k)) return;
  tfd_shape sv, sb;
  tfd_shape_of_tensor(v, &sv);
  tfd_shape_of_tensor(b, &sb);
  run_binary(k, c, m, TFD_DM_ADD, 0, 1, &sv, &sb, &sv, tfd_tensor_dtype(v));
}

static void k_prelu(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m) return;
  tfd_tensor *x = c->inputs[0], *a = c->inputs[1];
  int64_t dims[TFD_MAX_DIMS], na;
  int nd;
  if (!tfd_prelu_check(c, k, dims, &nd, &na)) return;
  tfd_shape sx, sa;
  tfd_shape_of_tensor(x, &sx);
  tfd_shape_of_tensor(a, &sa);
  if (sa.ndims > sx.ndims) { /* alpha's extra leading dimensions are 1s (checked): drop them */
    int drop = sa.ndims - sx.ndims;
    for (int d = 0; d < sx.ndims; d++) sa.dims[d] = sa.dims[d + drop];
    sa.ndims = sx.ndims;
  }
  run_binary(k, c, m, TFD_DM_PRELU, 0, 1, &sx, &sa, &sx, TFD_FLOAT32);
}

/* ---- k_math.c's binary ops ---- */
/* Whether the host copy of an integer divisor holds a zero (the CPU kernel refuses those). */
static bool divisor_has_zero(tfd_kernel *k, tfd_kernel_context *c, bool *zero) {
  tfd_tensor *h = tfd_kernel_host_input(c, k, 1);
  if (!h) return false;
  const int64_t *p = tfd_tensor_const_data(h);
  int64_t n = tfd_tensor_numel(h);
  int z = 0;
  for (int64_t i = 0; i < n; i++) z |= p[i] == 0;
  tfd_tensor_unref(h);
  *zero = z != 0;
  return true;
}

static void k_math_binary(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m || !tfd_cwise_same_dtypes(c, k, 0, 2)) return;
  int op = OP(k)->dm;
  tfd_dtype dt = tfd_tensor_dtype(c->inputs[0]);
  bool is_float = dt == TFD_FLOAT32 || dt == TFD_FLOAT64;
  bool ok = op == TFD_DM_DIV_NO_NAN || op == TFD_DM_ATAN2 ? is_float : op == TFD_DM_BITWISE_AND ? dt == TFD_INT64 : is_float || dt == TFD_INT64;
  if (!ok) {
    tfd_kernel_fail(c, k, TFD_UNIMPLEMENTED, "no kernel for dtype %s", tfd_dtype_name(dt));
    return;
  }
  tfd_shape sa, sb, out;
  tfd_shape_of_tensor(c->inputs[0], &sa);
  tfd_shape_of_tensor(c->inputs[1], &sb);
  if (!tfd_cwise_broadcast(c, k, &sa, &sb, &out)) return;
  /* An integer divisor is read on the host, so that a zero is refused as the CPU kernel refuses it
   * (the math would give 0). */
  if (dt == TFD_INT64 && (op == TFD_DM_DIV || op == TFD_DM_MOD) && tfd_shape_numel(&out) > 0) {
    bool zero = false;
    if (!divisor_has_zero(k, c, &zero)) return;
    if (zero) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Integer division by zero");
      return;
    }
  }
  run_binary(k, c, m, op, 0, 1, &sa, &sb, &out, dt);
}

/* ---- IsNan, IsInf, IsFinite ---- */
/* IsNan is x != x; IsInf |x| == inf and IsFinite |x| < inf (false for NaN), against a scalar inf. */
static void k_predicate(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m) return;
  tfd_tensor *x = c->inputs[0];
  tfd_dtype dt = tfd_tensor_dtype(x);
  if (dt != TFD_FLOAT32 && dt != TFD_FLOAT64) {
    tfd_kernel_fail(c, k, TFD_UNIMPLEMENTED, "no kernel for dtype %s", tfd_dtype_name(dt));
    return;
  }
  tfd_shape s;
  tfd_shape_of_tensor(x, &s);
  tfd_tensor *y = tfd_dk_alloc(c, k, TFD_BOOL, s.dims, s.ndims);
  if (!y) return;
  int64_t n = tfd_tensor_numel(x);
  if (n == 0) {
    c->outputs[0] = y;
    return;
  }
  int p = OP(k)->dm;
  tfd_tensor *abs = NULL, *inf = NULL;
  bool ok = true;
  tfd_status st = TFD_STATUS_INIT;
  int64_t strides[2][TFD_MAX_DIMS] = {{1}, {1}};
  if (p != P_IS_NAN) {
    float inf32 = INFINITY;
    double inf64 = INFINITY;
    strides[1][0] = 0;
    ok = (abs = tfd_dk_alloc(c, k, dt, s.dims, s.ndims)) != NULL &&
         (inf = tfd_dk_scalar(c, k, m, dt, dt == TFD_FLOAT32 ? (const void *)&inf32 : (const void *)&inf64)) != NULL &&
         tfd_dk_ok(k, c, m->unary(c->device, TFD_DM_ABS, dt, tfd_tensor_const_data(x), tfd_tensor_data(abs), n, 0, &st),
                   &st);
  }
  tfd_dm_walk w;
  tfd_dk_walk(&w, 1, &n, 2, strides, NULL);
  if (ok) {
    const void *a = p == P_IS_NAN ? tfd_tensor_const_data(x) : tfd_tensor_const_data(abs);
    const void *b = p == P_IS_NAN ? a : tfd_tensor_const_data(inf);
    int op = p == P_IS_NAN ? TFD_DM_NOT_EQUAL : p == P_IS_INF ? TFD_DM_EQUAL : TFD_DM_LESS;
    ok = tfd_dk_ok(k, c, m->binary(c->device, op, dt, a, b, tfd_tensor_data(y), &w, &st), &st);
  }
  tfd_tensor_unref(abs);
  tfd_tensor_unref(inf);
  if (ok) c->outputs[0] = y;
  else tfd_tensor_unref(y);
}

/* ---- ClipByValue: max(min(x, hi), lo) with std::min/std::max's comparisons, as the CPU kernel ---- */
static void k_clip(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m || !tfd_cwise_same_dtypes(c, k, 0, 3)) return;
  tfd_dtype dt = tfd_tensor_dtype(c->inputs[0]);
  if (!tfd_dk_arith_dtype(dt)) {
    tfd_kernel_fail(c, k, TFD_UNIMPLEMENTED, "no kernel for dtype %s", tfd_dtype_name(dt));
    return;
  }
  tfd_shape s[3];
  if (!tfd_clip_shapes(c, k, s)) return;
  bool ok = true;
  tfd_tensor *y = tfd_dk_alloc(c, k, dt, s[0].dims, s[0].ndims);
  if (!y) return;
  int64_t n = tfd_tensor_numel(y);
  tfd_status st = TFD_STATUS_INIT;
  ok = true;
  for (int pass = 0; ok && n > 0 && pass < 2; pass++) { /* y = min(x, hi), then y = max(y, lo) */
    int64_t strides[2][TFD_MAX_DIMS] = {{1}, {s[2 - pass].ndims == 0 ? 0 : 1}};
    tfd_dm_walk w;
    tfd_dk_walk(&w, 1, &n, 2, strides, NULL);
    const void *a = pass == 0 ? tfd_tensor_const_data(c->inputs[0]) : tfd_tensor_const_data(y);
    ok = tfd_dk_ok(k, c, m->binary(c->device, pass == 0 ? TFD_DM_CLIP_MIN : TFD_DM_CLIP_MAX, dt, a,
                                   tfd_tensor_const_data(c->inputs[2 - pass]), tfd_tensor_data(y), &w, &st), &st);
  }
  if (ok) c->outputs[0] = y;
  else tfd_tensor_unref(y);
}

/* ---- Select, SelectV2 ---- */
static void k_select(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_device_math *m = tfd_dk_math(k, c);
  tfd_shape s[3], out;
  if (!m || !tfd_select_check(c, k, OP(k)->kind == K_SELECT_V2, s, &out)) return;
  tfd_dtype dt = tfd_tensor_dtype(c->inputs[1]);
  size_t es = tfd_dtype_size(dt);
  tfd_tensor *y = tfd_dk_alloc(c, k, dt, out.dims, out.ndims);
  if (!y) return;
  int64_t strides[3][TFD_MAX_DIMS];
  for (int i = 0; i < 3; i++) tfd_dk_broadcast_strides(&s[i], &out, strides[i]);
  tfd_dm_walk w;
  tfd_status st = TFD_STATUS_INIT;
  if (tfd_dk_walk(&w, out.ndims, out.dims, 3, strides, NULL) > 0 &&
      !tfd_dk_ok(k, c, m->select(c->device, es, tfd_tensor_const_data(c->inputs[0]), tfd_tensor_const_data(c->inputs[1]),
                                 tfd_tensor_const_data(c->inputs[2]), tfd_tensor_data(y), &w, &st), &st)) {
    tfd_tensor_unref(y);
    return;
  }
  c->outputs[0] = y;
}

/* ---- AddN ---- */
static void k_add_n(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m || !tfd_cwise_same_dtypes(c, k, 0, c->num_inputs)) return;
  tfd_tensor *first = c->inputs[0];
  tfd_dtype dt = tfd_tensor_dtype(first);
  if (!tfd_dk_arith_dtype(dt)) {
    tfd_kernel_fail(c, k, TFD_UNIMPLEMENTED, "no kernel for dtype %s", tfd_dtype_name(dt));
    return;
  }
  if (!tfd_add_n_check(c, k)) return;
  tfd_shape s;
  tfd_shape_of_tensor(first, &s);
  tfd_tensor *y = tfd_dk_alloc(c, k, dt, s.dims, s.ndims);
  const void **in = y ? malloc((size_t)c->num_inputs * sizeof *in) : NULL;
  if (y && !in) tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory");
  if (!in) {
    tfd_tensor_unref(y);
    return;
  }
  for (int i = 0; i < c->num_inputs; i++) in[i] = tfd_tensor_const_data(c->inputs[i]);
  tfd_status st = TFD_STATUS_INIT;
  int64_t n = tfd_tensor_numel(y);
  bool ok = n == 0 || tfd_dk_ok(k, c, m->add_n(c->device, dt, (const void *const *)in, c->num_inputs, tfd_tensor_data(y),
                                               n, &st), &st);
  free(in);
  if (ok) c->outputs[0] = y;
  else tfd_tensor_unref(y);
}

/* ---- Softmax over the last dimension ---- */
static void k_softmax(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m) return;
  tfd_tensor *x = c->inputs[0];
  int nd = tfd_tensor_ndims(x);
  bool as_log = OP(k)->kind == K_LOG_SOFTMAX;
  if (as_log && nd < 1) { /* k_math.c's text */
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "logits must have >= 1 dimension, got []");
    return;
  }
  if (!as_log && !tfd_softmax_check(c, k)) return;
  tfd_shape s;
  tfd_shape_of_tensor(x, &s);
  tfd_tensor *y = tfd_dk_alloc(c, k, tfd_tensor_dtype(x), s.dims, s.ndims);
  if (!y) return;
  int64_t cols = tfd_tensor_dim(x, nd - 1), rows = cols ? tfd_tensor_numel(x) / cols : 0;
  tfd_status st = TFD_STATUS_INIT;
  if (rows > 0 && !tfd_dk_ok(k, c, m->softmax(c->device, tfd_tensor_dtype(x), tfd_tensor_const_data(x), rows, cols, as_log,
                                               tfd_tensor_data(y), &st), &st)) {
    tfd_tensor_unref(y);
    return;
  }
  c->outputs[0] = y;
}

/* ---- Cast ---- */
static void k_cast(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m) return;
  tfd_tensor *x = c->inputs[0];
  tfd_dtype from = tfd_tensor_dtype(x), to = k->dst;
  if (from == to) {
    c->outputs[0] = tfd_tensor_ref(x);
    return;
  }
  tfd_shape s;
  tfd_shape_of_tensor(x, &s);
  /* A dtype that lives on the host (int32) is cast on the device, then copied out. */
  bool via_device = !tfd_dk_lives_on_device(c->device, to);
  tfd_tensor *y = via_device ? tfd_dk_alloc_device(c, k, to, s.dims, s.ndims) : tfd_dk_alloc(c, k, to, s.dims, s.ndims);
  if (!y) return;
  tfd_status st = TFD_STATUS_INIT;
  int64_t n = tfd_tensor_numel(x);
  if (n > 0 &&
      !tfd_dk_ok(k, c, m->cast(c->device, from, to, tfd_tensor_const_data(x), tfd_tensor_data(y), n, &st), &st)) {
    tfd_tensor_unref(y);
    return;
  }
  if (via_device) {
    tfd_tensor *h = tfd_dk_to_home(c, k, y);
    tfd_tensor_unref(y);
    y = h;
  }
  c->outputs[0] = y;
}

/* ---- FakeQuantWithMinMaxArgs/Vars: the CPU kernel's float32 arithmetic, step by step, as a chain of
 * the math's entries over the output: fminf(x, nmax) as CLIP_MIN(nmax, x) (a NaN gives nmax, as
 * fminf does), fmaxf(., nmin) as CLIP_MAX(nmin, .), then - nmin, * inv (Vars: / scale), + 0.5,
 * floor, * scale, + nmin. The nudged range comes from the CPU kernel's code (cwise_logic.h). ---- */
static bool scalar_first(const tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m, tfd_dm_binary op,
                         const tfd_tensor *s, const void *x, void *y, int64_t n) {
  int64_t strides[2][TFD_MAX_DIMS] = {{0}, {1}};
  tfd_dm_walk w;
  if (tfd_dk_walk(&w, 1, &n, 2, strides, NULL) == 0) return true;
  tfd_status st = TFD_STATUS_INIT;
  return tfd_dk_ok(k, c, m->binary(c->device, op, TFD_FLOAT32, tfd_tensor_const_data(s), x, y, &w, &st), &st);
}

static void k_fake_quant(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m) return;
  bool vars = c->num_inputs == 3;
  tfd_tensor *x = c->inputs[0], *lo = NULL, *hi = NULL, *sc[5] = {NULL};
  bool ok = !vars || ((lo = tfd_kernel_host_input(c, k, 1)) && (hi = tfd_kernel_host_input(c, k, 2)));
  tfd_fake_quant_params r;
  ok = ok && tfd_fake_quant_range(c, k, lo, hi, &r);
  int nd = tfd_tensor_ndims(x);
  int64_t n = tfd_tensor_numel(x), dims[TFD_MAX_DIMS];
  for (int d = 0; d < nd; d++) dims[d] = tfd_tensor_dim(x, d);
  tfd_tensor *y = ok ? tfd_dk_alloc(c, k, TFD_FLOAT32, dims, nd) : NULL;
  tfd_status st = TFD_STATUS_INIT;
  ok = y != NULL;
  if (ok && n > 0 && r.zero) {
    float zero = 0.0f;
    ok = tfd_dk_ok(k, c, m->fill(c->device, sizeof zero, &zero, tfd_tensor_data(y), n, &st), &st);
  } else if (ok && n > 0) {
    const float v[5] = {r.nmax, r.nmin, vars ? r.scale : r.inv, 0.5f, r.scale};
    for (int i = 0; ok && i < 5; i++) ok = (sc[i] = tfd_dk_scalar(c, k, m, TFD_FLOAT32, &v[i])) != NULL;
    void *o = tfd_tensor_data(y);
    ok = ok && scalar_first(k, c, m, TFD_DM_CLIP_MIN, sc[0], tfd_tensor_const_data(x), o, n) &&
         scalar_first(k, c, m, TFD_DM_CLIP_MAX, sc[1], o, o, n) &&
         tfd_dk_binary_flat(k, c, m, TFD_DM_SUB, TFD_FLOAT32, o, tfd_tensor_const_data(sc[1]), true, o, n) &&
         tfd_dk_binary_flat(k, c, m, vars ? TFD_DM_DIV : TFD_DM_MUL, TFD_FLOAT32, o, tfd_tensor_const_data(sc[2]), true, o,
                            n) &&
         tfd_dk_binary_flat(k, c, m, TFD_DM_ADD, TFD_FLOAT32, o, tfd_tensor_const_data(sc[3]), true, o, n) &&
         tfd_dk_ok(k, c, m->unary(c->device, TFD_DM_FLOOR, TFD_FLOAT32, o, o, n, 0.0f, &st), &st) &&
         tfd_dk_binary_flat(k, c, m, TFD_DM_MUL, TFD_FLOAT32, o, tfd_tensor_const_data(sc[4]), true, o, n) &&
         tfd_dk_binary_flat(k, c, m, TFD_DM_ADD, TFD_FLOAT32, o, tfd_tensor_const_data(sc[1]), true, o, n);
  }
  tfd_tensor_unref(lo), tfd_tensor_unref(hi);
  for (int i = 0; i < 5; i++) tfd_tensor_unref(sc[i]);
  if (ok) c->outputs[0] = y;
  else tfd_tensor_unref(y);
}

tfd_code tfd_dk_setup_fake_quant(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  return tfd_dk_setup_either(k, init, tfd_setup_fake_quant, true, k_fake_quant, st);
}

/* ---- setup ---- */
/* Whether the math runs op on T, making out (else the CPU kernel runs on the host). */
static bool on_device(const cwise_op *o, tfd_dtype T, tfd_dtype out) {
  switch (o->kind) {
    case K_LOGIC: return true;
    case K_SELECT:
    case K_SELECT_V2: return T != TFD_INT32;
    case K_CAST: return T != TFD_INT32 && T != TFD_COMPLEX64 && out != TFD_COMPLEX64;
    case K_COMPARE: return tfd_dk_arith_dtype(T) || T == TFD_BOOL;
    case K_PRELU: return true;
    case K_UNARY: return o->dm == TFD_DM_LOGICAL_NOT || tfd_dk_arith_dtype(T);
    case K_PREDICATE:
    case K_LOG_SOFTMAX: return T == TFD_FLOAT32 || T == TFD_FLOAT64;
    default: return tfd_dk_arith_dtype(T);
  }
}

tfd_code tfd_dk_setup_cwise(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  const char *name = init->op->name;
  size_t i = 0;
  while (i < sizeof ops / sizeof ops[0] && strcmp(ops[i].name, name) != 0) i++;
  if (i == sizeof ops / sizeof ops[0]) return tfd_status_setf(st, TFD_INTERNAL, "no elementwise device kernel for %s", name);
  const cwise_op *o = &ops[i];
  static const char *const complex_arith[] = {"Add", "AddV2", "Sub", "Mul", "RealDiv", "Neg"};
  for (size_t j = 0; k->T == TFD_COMPLEX64 && j < sizeof complex_arith / sizeof *complex_arith; j++)
    if (strcmp(name, complex_arith[j]) == 0) return tfd_dk_setup_spectral(k, init, st); /* dk_spectral.c */
  k->dk_op = (int)i;
  if (!on_device(o, k->T, init->out_types[0])) return tfd_dk_setup_on_host(k, init, o->cpu, st);
  if (o->cpu && o->cpu(k, init, st) != TFD_OK) return tfd_status_code(st);
  switch (o->kind) {
    case K_UNARY: k->compute = k_unary; break;
    case K_BINARY:
    case K_COMPARE:
    case K_LOGIC: k->compute = k_binary; break;
    case K_SELECT:
    case K_SELECT_V2: k->compute = k_select; break;
    case K_ADD_N: k->compute = k_add_n; break;
    case K_BIAS_ADD: k->compute = k_bias_add; break;
    case K_SOFTMAX:
    case K_LOG_SOFTMAX: k->compute = k_softmax; break;
    case K_MATH_BINARY: k->compute = k_math_binary; break;
    case K_PREDICATE: k->compute = k_predicate; break;
    case K_CLIP: k->compute = k_clip; break;
    case K_PRELU: k->compute = k_prelu; break;
    default: k->compute = k_cast; break;
  }
  return TFD_OK;
}
