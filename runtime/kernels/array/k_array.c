/* Graph utilities and array ops (issue 26's array family), as TensorFlow's CPU kernels: Rank,
 * StopGradient, Snapshot, EnsureShape, ReverseV2, Reverse, OneHot, LinSpace, Cumsum, Cumprod, All,
 * Any, BroadcastArgs and MatrixBandPart, with TensorFlow's checks and error texts. Data-movement
 * kernels copy whole contiguous runs with memcpy where the layout allows. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/half.h"
#include "../kernel.h"
#include "../kernel_shared.h"
#include "../math/reduce_logic.h"
#include "shape_logic.h"

#define TEXT_CAP TFD_SHAPE_TEXT_CAP

static void dims_of(const tfd_tensor *t, int64_t *d) {
  for (int i = 0; i < tfd_tensor_ndims(t); i++) d[i] = tfd_tensor_dim(t, i);
}

/* ---- Rank, StopGradient, Snapshot, EnsureShape ---- */
static void k_rank(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *o = tfd_kernel_alloc(c, k, TFD_INT32, NULL, 0);
  if (!o) return;
  *(int32_t *)tfd_tensor_data(o) = tfd_tensor_ndims(c->inputs[0]);
  c->outputs[0] = o;
}

static void k_forward(tfd_kernel *k, tfd_kernel_context *c) {
  (void)k;
  c->outputs[0] = tfd_tensor_ref(c->inputs[0]);
}

/* EnsureShape: k->state holds the expected dims (-1 unknown) and k->index the expected rank (-1: any). */
static void k_ensure_shape(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_tensor *in = c->inputs[0];
  const int64_t *want = k->state;
  bool ok = k->index < 0 || k->index == tfd_tensor_ndims(in);
  for (int i = 0; ok && k->index >= 0 && i < k->index; i++) ok = want[i] < 0 || want[i] == tfd_tensor_dim(in, i);
  if (!ok) {
    char have[TEXT_CAP], exp[TEXT_CAP];
    size_t at = 0;
    if (k->index < 0)
      snprintf(exp, sizeof exp, "<unknown>");
    else {
      at = (size_t)snprintf(exp, sizeof exp, "[");
      for (int i = 0; i < k->index && at < sizeof exp; i++)
        at += want[i] < 0 ? (size_t)snprintf(exp + at, sizeof exp - at, "%s?", i ? "," : "")
                          : (size_t)snprintf(exp + at, sizeof exp - at, "%s%lld", i ? "," : "", (long long)want[i]);
      if (at < sizeof exp) snprintf(exp + at, sizeof exp - at, "]");
    }
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Shape of tensor %s %s is not compatible with expected shape %s.",
                    k->key ? k->key : "", tfd_tensor_shape_text(have, sizeof have, in, 0), exp);
    return;
  }
  c->outputs[0] = tfd_tensor_ref(c->inputs[0]);
}

/* ---- ReverseV2 (axis list) and Reverse (bool per dim) ---- */
/* Copies in to out reversing the dims marked in rev: the trailing unreversed dims form one run. */
static void reverse_copy(const tfd_tensor *in, tfd_tensor *out, const bool *rev) {
  int nd = tfd_tensor_ndims(in);
  size_t esz = tfd_dtype_size(tfd_tensor_dtype(in));
  int64_t d[TFD_MAX_DIMS];
  dims_of(in, d);
  int inner = nd; /* dims [inner, nd) are copied as one run */
  while (inner > 0 && !rev[inner - 1]) inner--;
  int64_t run = 1;
  for (int i = inner; i < nd; i++) run *= d[i];
  size_t run_bytes = (size_t)run * esz;
  const char *src = tfd_tensor_const_data(in);
  char *dst = tfd_tensor_data(out);
  int64_t outer = tfd_tensor_numel(in) / (run ? run : 1), idx[TFD_MAX_DIMS] = {0};
  if (tfd_tensor_numel(in) == 0) return;
  if (inner == 0) {
    memcpy(dst, src, run_bytes);
    return;
  }
  /* The last reversed dim (inner - 1) holds runs of run_bytes; reverse them row by row. */
  int64_t row_n = d[inner - 1];
  for (int64_t o = 0; o < outer; o += row_n) {
    int64_t src_off = 0;
    for (int i = 0; i < inner - 1; i++) src_off = src_off * d[i] + (rev[i] ? d[i] - 1 - idx[i] : idx[i]);
    src_off *= row_n;
    char *drow = dst + (size_t)o * run_bytes;
    const char *srow = src + (size_t)src_off * run_bytes;
    if (run_bytes == esz && esz == 4) {
      const uint32_t *s4 = (const uint32_t *)(const void *)srow;
      uint32_t *d4 = (uint32_t *)(void *)drow;
      for (int64_t j = 0; j < row_n; j++) d4[j] = s4[row_n - 1 - j];
    } else {
      for (int64_t j = 0; j < row_n; j++)
        memcpy(drow + (size_t)j * run_bytes, srow + (size_t)(row_n - 1 - j) * run_bytes, run_bytes);
    }
    for (int i = inner - 2; i >= 0; i--) {
      if (++idx[i] < d[i]) break;
      idx[i] = 0;
    }
  }
}

static void k_reverse(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_tensor *in = c->inputs[0], *axes = c->inputs[1];
  int nd = tfd_tensor_ndims(in);
  bool rev[TFD_MAX_DIMS] = {0};
  if (nd == 0) { /* TensorFlow passes a scalar through before looking at the axes */
    c->outputs[0] = tfd_tensor_ref(c->inputs[0]);
    return;
  }
  if (!tfd_reverse_dims(c, k, k->keep_dims, axes, nd, rev)) return;
  tfd_tensor *o = tfd_kernel_alloc_like(c, k, tfd_tensor_dtype(in), in);
  if (!o) return;
  reverse_copy(in, o, rev);
  c->outputs[0] = o;
}

/* ---- OneHot ---- */
static void k_one_hot(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_tensor *ix = c->inputs[0], *on = c->inputs[2], *off = c->inputs[3];
  int nd = tfd_tensor_ndims(ix), out_nd = nd + 1, ax;
  int64_t dims[TFD_MAX_DIMS], depth, prefix = 1, suffix = 1;
  if (!tfd_one_hot_shape(c, k, dims, &ax, &depth)) return;
  for (int i = 0; i < ax; i++) prefix *= tfd_tensor_dim(ix, i);
  for (int i = ax; i < nd; i++) suffix *= tfd_tensor_dim(ix, i);
  tfd_dtype dt = tfd_tensor_dtype(on);
  tfd_tensor *o = tfd_kernel_alloc(c, k, dt, dims, out_nd);
  if (!o) return;
  c->outputs[0] = o;
  int64_t total = tfd_tensor_numel(o);
  if (total == 0) return;
  size_t esz = tfd_dtype_size(dt);
  char *dst = tfd_tensor_data(o);
  const char *offv = tfd_tensor_const_data(off), *onv = tfd_tensor_const_data(on);
  memcpy(dst, offv, esz); /* off_value everywhere, by doubling copies */
  for (int64_t have = 1; have < total; have *= 2)
    memcpy(dst + (size_t)have * esz, dst, (size_t)(have * 2 <= total ? have : total - have) * esz);
  tfd_dtype it = tfd_tensor_dtype(ix);
  const void *iv = tfd_tensor_const_data(ix);
  for (int64_t p = 0; p < prefix; p++)
    for (int64_t s = 0; s < suffix; s++) {
      int64_t i = p * suffix + s, v;
      if (it == TFD_UINT8)
        v = ((const uint8_t *)iv)[i];
      else if (it == TFD_INT32)
        v = ((const int32_t *)iv)[i];
      else
        v = ((const int64_t *)iv)[i];
      if (v < 0 || v >= depth) continue;
      char *at = dst + (size_t)((p * depth + v) * suffix + s) * esz;
      switch (esz) { /* constant sizes: the compiler stores instead of calling memcpy per element */
        case 1:
          memcpy(at, onv, 1);
          break;
        case 2:
          memcpy(at, onv, 2);
          break;
        case 4:
          memcpy(at, onv, 4);
          break;
        default:
          memcpy(at, onv, 8);
          break;
      }
    }
}

/* ---- LinSpace ---- */
static bool scalar_input(tfd_kernel *k, tfd_kernel_context *c, int i, const char *what) {
  char text[TEXT_CAP];
  if (tfd_tensor_ndims(c->inputs[i]) == 0) return true;
  tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "%s must be a scalar, not shape %s", what,
                  tfd_tensor_shape_text(text, sizeof text, c->inputs[i], 0));
  return false;
}

static void k_lin_space(tfd_kernel *k, tfd_kernel_context *c) {
  if (!scalar_input(k, c, 0, "start") || !scalar_input(k, c, 1, "stop") || !scalar_input(k, c, 2, "num") ||
      !tfd_kernel_check_index(c, k, c->inputs[2], "num"))
    return;
  int64_t num = tfd_tensor_get_index(c->inputs[2], 0);
  if (num <= 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Requires num > 0: %lld", (long long)num);
    return;
  }
  tfd_dtype dt = tfd_tensor_dtype(c->inputs[0]);
  tfd_tensor *o = tfd_kernel_alloc(c, k, dt, &num, 1);
  if (!o) return;
  if (dt == TFD_FLOAT64) {
    double start = *(const double *)tfd_tensor_const_data(c->inputs[0]),
           stop = *(const double *)tfd_tensor_const_data(c->inputs[1]);
    double *y = tfd_tensor_data(o), step = num > 1 ? (stop - start) / (double)(num - 1) : 0;
    for (int64_t i = 0; i < num; i++) y[i] = start + step * (double)i;
    if (num > 1) y[num - 1] = stop;
  } else {
    float start = *(const float *)tfd_tensor_const_data(c->inputs[0]),
          stop = *(const float *)tfd_tensor_const_data(c->inputs[1]);
    float *y = tfd_tensor_data(o), step = num > 1 ? (stop - start) / (float)(num - 1) : 0;
    for (int64_t i = 0; i < num; i++) y[i] = start + step * (float)i;
    if (num > 1) y[num - 1] = stop;
  }
  c->outputs[0] = o;
}

/* ---- Cumsum, Cumprod ---- */
#define SCAN(T, LOAD, STORE, ACC)                                              \
  do {                                                                         \
    const T *x = tfd_tensor_const_data(in);                                    \
    T *y = tfd_tensor_data(o);                                                 \
    for (int64_t p = 0; p < outer; p++)                                        \
      for (int64_t s = 0; s < inner; s++) {                                    \
        ACC acc = prod ? (ACC)1 : (ACC)0;                                      \
        for (int64_t j0 = 0; j0 < n; j0++) {                                   \
          int64_t j = reverse ? n - 1 - j0 : j0, at = (p * n + j) * inner + s; \
          ACC v = (ACC)LOAD(x[at]);                                            \
          if (exclusive) {                                                     \
            y[at] = STORE(acc);                                                \
            acc = prod ? (ACC)(acc * v) : (ACC)(acc + v);                      \
          } else {                                                             \
            acc = prod ? (ACC)(acc * v) : (ACC)(acc + v);                      \
            y[at] = STORE(acc);                                                \
          }                                                                    \
        }                                                                      \
      }                                                                        \
  } while (0)
#define AS_IS(v) (v)
#define WRAP_I32(v) ((int32_t)(uint32_t)(v))
#define WRAP_I64(v) ((int64_t)(v))

static void k_scan(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_tensor *in = c->inputs[0];
  int nd = tfd_tensor_ndims(in);
  int64_t axis;
  if (!tfd_scan_axis(c, k, &axis)) return;
  tfd_dtype dt = tfd_tensor_dtype(in);
  tfd_tensor *o = tfd_kernel_alloc_like(c, k, dt, in);
  if (!o) return;
  c->outputs[0] = o;
  if (tfd_tensor_numel(in) == 0) return;
  int64_t outer = 1, inner = 1, n = tfd_tensor_dim(in, (int)axis);
  for (int i = 0; i < axis; i++) outer *= tfd_tensor_dim(in, i);
  for (int i = (int)axis + 1; i < nd; i++) inner *= tfd_tensor_dim(in, i);
  bool prod = k->code != 0, exclusive = k->ta, reverse = k->tb;
  switch (dt) {
    case TFD_FLOAT32:
      SCAN(float, AS_IS, AS_IS, float);
      break;
    case TFD_FLOAT64:
      SCAN(double, AS_IS, AS_IS, double);
      break;
    case TFD_INT32:
      SCAN(int32_t, AS_IS, WRAP_I32, uint32_t);
      break; /* wraps as TensorFlow's (Eigen) does */
    case TFD_INT64:
      SCAN(int64_t, AS_IS, WRAP_I64, uint64_t);
      break;
    case TFD_UINT8:
      SCAN(uint8_t, AS_IS, AS_IS, uint8_t);
      break;
    case TFD_FLOAT16:
      SCAN(uint16_t, tfd_half_to_float, tfd_float_to_half, float);
      break;
    default:
      c->outputs[0] = NULL;
      tfd_tensor_unref(o);
      tfd_kernel_fail(c, k, TFD_UNIMPLEMENTED, "no kernel for dtype %s", tfd_dtype_name(dt));
  }
}

/* ---- All, Any: Sum's reduction rules over bools ---- */
static void k_all_any(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *in = c->inputs[0];
  int nd = tfd_tensor_ndims(in), ond;
  bool reduce[TFD_MAX_DIMS];
  int64_t odims[TFD_MAX_DIMS], count;
  if (!tfd_reduce_shape(c, k, false, reduce, odims, &ond, &count)) return;
  tfd_tensor *o = tfd_kernel_alloc(c, k, TFD_BOOL, odims, ond);
  if (!o) return;
  c->outputs[0] = o;
  bool all = k->code == 0;
  uint8_t *y = tfd_tensor_data(o);
  int64_t n_out = tfd_tensor_numel(o);
  if (n_out == 0) return;
  memset(y, all ? 1 : 0, (size_t)n_out);
  int64_t ostride[TFD_MAX_DIMS], s = 1, idx[TFD_MAX_DIMS] = {0};
  for (int d = nd - 1; d >= 0; d--) {
    ostride[d] = reduce[d] ? 0 : s;
    if (!reduce[d]) s *= tfd_tensor_dim(in, d);
  }
  const uint8_t *x = tfd_tensor_const_data(in);
  for (int64_t i = 0, n = tfd_tensor_numel(in); i < n; i++) {
    int64_t at = 0;
    for (int d = 0; d < nd; d++) at += idx[d] * ostride[d];
    if (all)
      y[at] &= x[i] != 0;
    else
      y[at] |= x[i] != 0;
    for (int d = nd - 1; d >= 0; d--) {
      if (++idx[d] < tfd_tensor_dim(in, d)) break;
      idx[d] = 0;
    }
  }
}

/* ---- BroadcastArgs ---- */
static void k_broadcast_args(tfd_kernel *k, tfd_kernel_context *c) {
  char text[TEXT_CAP];
  for (int i = 0; i < 2; i++) {
    if (!tfd_kernel_check_index(c, k, c->inputs[i], i ? "s1" : "s0")) return;
    if (tfd_tensor_ndims(c->inputs[i]) != 1) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "In[%d] must be a vector.%s", i,
                      tfd_tensor_shape_text(text, sizeof text, c->inputs[i], 0));
      return;
    }
  }
  const tfd_tensor *a = c->inputs[0], *b = c->inputs[1];
  int64_t na = tfd_tensor_numel(a), nb = tfd_tensor_numel(b), n = na > nb ? na : nb;
  int64_t *out = malloc((size_t)(n ? n : 1) * sizeof *out);
  if (!out) {
    tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory");
    return;
  }
  for (int64_t i = 0; i < n; i++) {
    int64_t ia = na - n + i, ib = nb - n + i;
    int64_t da = ia >= 0 ? tfd_tensor_get_index(a, ia) : 1, db = ib >= 0 ? tfd_tensor_get_index(b, ib) : 1;
    if (da == db || db == 1)
      out[i] = da;
    else if (da == 1)
      out[i] = db;
    else {
      char sa[512], sb[512];
      size_t pa = 0, pb = 0;
      for (int64_t j = 0; j < na && pa < sizeof sa; j++)
        pa += (size_t)snprintf(sa + pa, sizeof sa - pa, "%s%lld", j ? "," : "", (long long)tfd_tensor_get_index(a, j));
      for (int64_t j = 0; j < nb && pb < sizeof sb; j++)
        pb += (size_t)snprintf(sb + pb, sizeof sb - pb, "%s%lld", j ? "," : "", (long long)tfd_tensor_get_index(b, j));
      if (!na) sa[0] = '\0';
      if (!nb) sb[0] = '\0';
      free(out);
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Incompatible shapes: [%s] vs. [%s]", sa, sb);
      return;
    }
  }
  tfd_dtype dt = tfd_tensor_dtype(a);
  tfd_tensor *o = tfd_kernel_alloc(c, k, dt, &n, 1);
  if (o) {
    for (int64_t i = 0; i < n; i++) {
      if (dt == TFD_INT32)
        ((int32_t *)tfd_tensor_data(o))[i] = (int32_t)out[i];
      else
        ((int64_t *)tfd_tensor_data(o))[i] = out[i];
    }
    c->outputs[0] = o;
  }
  free(out);
}

/* ---- MatrixBandPart ---- */
static void k_band_part(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_tensor *in = c->inputs[0], *lo_t = c->inputs[1], *hi_t = c->inputs[2];
  int nd = tfd_tensor_ndims(in);
  int64_t lo, hi;
  if (!tfd_band_part_bounds(c, k, in, lo_t, hi_t, &lo, &hi)) return;
  int64_t m = tfd_tensor_dim(in, nd - 2), n = tfd_tensor_dim(in, nd - 1);
  tfd_dtype dt = tfd_tensor_dtype(in);
  tfd_tensor *o = tfd_kernel_alloc_like(c, k, dt, in);
  if (!o) return;
  c->outputs[0] = o;
  int64_t total = tfd_tensor_numel(in);
  if (total == 0) return;
  size_t esz = tfd_dtype_size(dt);
  const char *src = tfd_tensor_const_data(in);
  char *dst = tfd_tensor_data(o);
  memset(dst, 0, (size_t)total * esz); /* zero of every dtype tfdev has is all-zero bytes */
  int64_t batches = total / (m * n);
  for (int64_t b = 0; b < batches; b++)
    for (int64_t i = 0; i < m; i++) {
      /* Row i keeps columns [i - lo, i + hi], clipped to the row: one run. */
      int64_t first = lo < 0 ? 0 : i - lo < 0 ? 0 : i - lo, last = hi < 0 ? n : i + hi + 1 > n ? n : i + hi + 1;
      if (last <= first) continue;
      size_t at = (size_t)((b * m + i) * n + first) * esz;
      memcpy(dst + at, src + at, (size_t)(last - first) * esz);
    }
}

static void free_state(tfd_kernel *k) {
  free(k->state);
  k->state = NULL;
}

tfd_code tfd_setup_array(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  const char *op = init->op->name;
  if (strcmp(op, "Rank") == 0)
    k->compute = k_rank;
  else if (strcmp(op, "StopGradient") == 0 || strcmp(op, "Snapshot") == 0)
    k->compute = k_forward;
  else if (strcmp(op, "EnsureShape") == 0) {
    const tfd_attr_value *s = tfd_node_def_attr(init->node, "shape");
    k->index = -1;
    if (s && s->type == TFD_ATTR_SHAPE && s->shape.ndims >= 0) {
      k->index = s->shape.ndims;
      k->state = malloc(sizeof(int64_t) * (size_t)(s->shape.ndims ? s->shape.ndims : 1));
      if (!k->state) return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
      memcpy(k->state, s->shape.dims, sizeof(int64_t) * (size_t)s->shape.ndims);
      k->cleanup = free_state;
    }
    const char *in0 = tfd_node_def_num_inputs(init->node) > 0 ? tfd_node_def_input(init->node, 0) : NULL;
    if (in0) {
      k->key = strdup(in0);
      if (!k->key) return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
    }
    k->compute = k_ensure_shape;
  } else if (strcmp(op, "ReverseV2") == 0 || strcmp(op, "Reverse") == 0) {
    k->keep_dims = strcmp(op, "Reverse") == 0;
    k->compute = k_reverse;
  } else if (strcmp(op, "OneHot") == 0) {
    k->index = tfd_attr_int(init->node, "axis", -1);
    k->compute = k_one_hot;
  } else if (strcmp(op, "LinSpace") == 0)
    k->compute = k_lin_space;
  else if (strcmp(op, "Cumsum") == 0 || strcmp(op, "Cumprod") == 0) {
    k->code = strcmp(op, "Cumprod") == 0;
    k->ta = tfd_attr_bool(init->node, "exclusive", false);
    k->tb = tfd_attr_bool(init->node, "reverse", false);
    k->compute = k_scan;
  } else if (strcmp(op, "All") == 0 || strcmp(op, "Any") == 0) {
    k->code = strcmp(op, "Any") == 0;
    k->keep_dims = tfd_attr_bool(init->node, "keep_dims", false);
    k->compute = k_all_any;
  } else if (strcmp(op, "BroadcastArgs") == 0)
    k->compute = k_broadcast_args;
  else
    k->compute = k_band_part;
  return TFD_OK;
}
