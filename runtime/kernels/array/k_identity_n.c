/* IdentityN, ShapeN and Print (ops that hand their inputs on, or describe them), and the FakeQuant
 * ops FakeQuantWithMinMaxArgs (min and max attrs) and FakeQuantWithMinMaxVars (min and max scalar
 * inputs), with TensorFlow's kernels' checks, texts and arithmetic (fake_quant_ops_functor.h's
 * Nudge: the range is moved so that 0.0 is one of the 2^num_bits levels). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/half.h"
#include "../math/cwise_logic.h"
#include "../kernel.h"

enum { K_IDENTITY_N, K_SHAPE_N, K_PRINT };

static void k_identity_n(tfd_kernel *k, tfd_kernel_context *c) {
  (void)k;
  for (int i = 0; i < c->num_inputs && i < c->num_outputs; i++) c->outputs[i] = tfd_tensor_ref(c->inputs[i]);
}

static void k_shape_n(tfd_kernel *k, tfd_kernel_context *c) {
  for (int i = 0; i < c->num_inputs && i < c->num_outputs; i++) {
    const tfd_tensor *in = c->inputs[i];
    int64_t nd = tfd_tensor_ndims(in);
    for (int d = 0; d < nd && k->dst == TFD_INT32; d++)
      if (tfd_tensor_dim(in, d) > INT32_MAX) {
        tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "ShapeN output type is 32-bit but shape inference yielded "
                                                    "too large a value for input %d", i);
        return;
      }
    tfd_tensor *out = tfd_kernel_alloc(c, k, k->dst, &nd, 1);
    if (!out) return;
    c->outputs[i] = out;
    for (int d = 0; d < nd; d++) {
      int64_t v = tfd_tensor_dim(in, d);
      if (k->dst == TFD_INT32) ((int32_t *)tfd_tensor_data(out))[d] = (int32_t)v;
      else ((int64_t *)tfd_tensor_data(out))[d] = v;
    }
  }
}

/* One element as TensorFlow's StrCat writes it: the shortest of 6 (float) or 15 (double)
 * significant digits that reads back the same, else 9 (17). */
static void append_element(char **buf, size_t *len, size_t *cap, const tfd_tensor *t, int64_t i) {
  char s[64];
  const void *d = tfd_tensor_const_data(t);
  switch (tfd_tensor_dtype(t)) {
  case TFD_FLOAT32: case TFD_FLOAT16: {
    float v = tfd_tensor_dtype(t) == TFD_FLOAT32 ? ((const float *)d)[i] : tfd_half_to_float(((const uint16_t *)d)[i]);
    snprintf(s, sizeof s, "%.6g", v);
    if (isnan(v)) snprintf(s, sizeof s, "nan");
    else if (strtof(s, NULL) != v) snprintf(s, sizeof s, "%.9g", v);
    break;
  }
  case TFD_FLOAT64: {
    double v = ((const double *)d)[i];
    snprintf(s, sizeof s, "%.15g", v);
    if (isnan(v)) snprintf(s, sizeof s, "nan");
    else if (strtod(s, NULL) != v) snprintf(s, sizeof s, "%.17g", v);
    break;
  }
  case TFD_INT32: snprintf(s, sizeof s, "%d", (int)((const int32_t *)d)[i]); break;
  case TFD_INT64: snprintf(s, sizeof s, "%lld", (long long)((const int64_t *)d)[i]); break;
  case TFD_UINT8: snprintf(s, sizeof s, "%u", (unsigned)((const uint8_t *)d)[i]); break;
  case TFD_BOOL: snprintf(s, sizeof s, "%d", ((const bool *)d)[i] ? 1 : 0); break;
  default: snprintf(s, sizeof s, "?"); break;
  }
  size_t n = strlen(s);
  if (*buf && *len + n + 1 <= *cap) {
    memcpy(*buf + *len, s, n + 1);
    *len += n;
  }
}

/* Tensor::SummarizeValue's PrintOneDim (its legacy, non-v2 form): the first `limit` values, a bracket
 * pair per row above the last dimension, "..." where a row is cut short. */
static void print_dim(char **buf, size_t *len, size_t *cap, const tfd_tensor *t, int dim, int64_t limit, int64_t *at) {
  if (*at >= limit) return;
  int nd = tfd_tensor_ndims(t);
  int64_t count = tfd_tensor_dim(t, dim);
  if (dim == nd - 1) {
    for (int64_t i = 0; i < count; i++) {
      if (*at >= limit) {
        if (dim != 0) *len += (size_t)snprintf(*buf + *len, *cap - *len, "...");
        return;
      }
      if (i > 0) (*buf)[(*len)++] = ' ';
      (*buf)[*len] = 0;
      append_element(buf, len, cap, t, (*at)++);
    }
    return;
  }
  for (int64_t i = 0; i < count; i++) {
    bool open = false;
    if (*at < limit) {
      (*buf)[(*len)++] = '[';
      open = true;
    }
    print_dim(buf, len, cap, t, dim + 1, limit, at);
    if (*at < limit || open) (*buf)[(*len)++] = ']';
  }
}

/* Print: input 0 passes on; the message and each data input's first `summarize` values go to stderr
 * as one line, message then "[values]" per data input (Tensor::SummarizeValue), the first first_n runs
 * (all when first_n < 0). */
static void k_print(tfd_kernel *k, tfd_kernel_context *c) {
  c->outputs[0] = tfd_tensor_ref(c->inputs[0]);
  if (k->index >= 0 && atomic_fetch_add(&k->counter, 1) >= (uint64_t)k->index) return;
  int64_t summarize = (int64_t)k->alpha;
  size_t cap = strlen(k->key) + 16, len = 0;
  for (int i = 1; i < c->num_inputs; i++) {
    int64_t n = tfd_tensor_numel(c->inputs[i]);
    if (summarize >= 0 && n > summarize) n = summarize;
    /* each value, its separator and the brackets and "..." of its rows */
    cap += (size_t)n * 40 + 8 * (size_t)(tfd_tensor_ndims(c->inputs[i]) + 1) + 8;
  }
  char *buf = malloc(cap);
  if (!buf) {
    tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory formatting the message");
    return;
  }
  len = (size_t)snprintf(buf, cap, "%s", k->key);
  for (int i = 1; i < c->num_inputs; i++) {
    const tfd_tensor *t = c->inputs[i];
    int64_t n = tfd_tensor_numel(t), lim = summarize >= 0 && n > summarize ? summarize : n, at = 0;
    buf[len++] = '[';
    if (tfd_tensor_ndims(t) == 0) {
      for (int64_t j = 0; j < lim; j++) {
        buf[len] = 0;
        append_element(&buf, &len, &cap, t, j);
      }
    } else {
      print_dim(&buf, &len, &cap, t, 0, lim, &at);
    }
    if (lim < n) len += (size_t)snprintf(buf + len, cap - len, "...");
    buf[len++] = ']';
  }
  buf[len] = 0;
  fprintf(stderr, "%s\n", buf);
  free(buf);
}

static void print_cleanup(tfd_kernel *k) {
  free(k->key);
  k->key = NULL;
}

tfd_code tfd_setup_identity_n(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  const char *op = init->op->name;
  if (strcmp(op, "IdentityN") == 0) {
    k->compute = k_identity_n;
  } else if (strcmp(op, "ShapeN") == 0) {
    k->dst = tfd_attr_dtype(init->node, "out_type", TFD_INT32);
    k->compute = k_shape_n;
  } else {
    const char *msg = tfd_attr_string(init->node, "message", "");
    k->key = malloc(strlen(msg) + 1);
    if (!k->key) return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory copying Print's message");
    strcpy(k->key, msg);
    k->index = tfd_attr_int(init->node, "first_n", -1);
    k->alpha = (double)tfd_attr_int(init->node, "summarize", 3);
    atomic_store(&k->counter, 0);
    k->cleanup = print_cleanup;
    k->compute = k_print;
  }
  return TFD_OK;
}

/* ---- FakeQuant ---- */

typedef struct fake_quant {
  float min, max; /* Args: the attrs */
  int quant_min, quant_max;
} fake_quant;

/* fake_quant_ops_functor.h's Nudge. */
static void nudge(float min, float max, int quant_min, int quant_max, float *nudged_min, float *nudged_max,
                  float *scale) {
  const float qmin = (float)quant_min, qmax = (float)quant_max;
  *scale = (max - min) / (qmax - qmin);
  const float zero_point_from_min = qmin - min / *scale;
  uint16_t zp;
  if (zero_point_from_min < qmin) zp = (uint16_t)quant_min;
  else if (zero_point_from_min > qmax) zp = (uint16_t)quant_max;
  else zp = (uint16_t)roundf(zero_point_from_min);
  *nudged_min = (qmin - zp) * *scale;
  *nudged_max = (qmax - zp) * *scale;
}

/* cwise_logic.h */
bool tfd_fake_quant_range(tfd_kernel_context *c, const tfd_kernel *k, const tfd_tensor *min_t, const tfd_tensor *max_t,
                          tfd_fake_quant_params *r) {
  const fake_quant *fq = k->state;
  r->vars = min_t != NULL;
  float min = fq->min, max = fq->max;
  if (r->vars) {
    const tfd_tensor *t[2] = {min_t, max_t};
    for (int i = 0; i < 2; i++)
      if (tfd_tensor_ndims(t[i]) != 0) {
        tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "`%s` must be rank 0 but is rank %d", i == 0 ? "min" : "max",
                        tfd_tensor_ndims(t[i]));
        return false;
      }
    min = *(const float *)tfd_tensor_const_data(min_t);
    max = *(const float *)tfd_tensor_const_data(max_t);
  }
  r->zero = r->vars && min == 0.0f && max == 0.0f; /* TensorFlow's Vars functor: nothing to quantize into */
  if (!r->zero) nudge(min, max, fq->quant_min, fq->quant_max, &r->nmin, &r->nmax, &r->scale);
  r->inv = r->zero ? 0.0f : 1.0f / r->scale;
  return true;
}

static void k_fake_quant(tfd_kernel *k, tfd_kernel_context *c) {
  bool vars = c->num_inputs == 3;
  tfd_fake_quant_params r;
  if (!tfd_fake_quant_range(c, k, vars ? c->inputs[1] : NULL, vars ? c->inputs[2] : NULL, &r)) return;
  tfd_tensor *in = c->inputs[0];
  int64_t dims[TFD_MAX_DIMS];
  for (int d = 0; d < tfd_tensor_ndims(in); d++) dims[d] = tfd_tensor_dim(in, d);
  tfd_tensor *out = tfd_kernel_forward_or_alloc(c, k, 0, TFD_FLOAT32, dims, tfd_tensor_ndims(in));
  if (!out) return;
  c->outputs[0] = out;
  int64_t n = tfd_tensor_numel(in);
  const float *x = tfd_tensor_const_data(in);
  float *y = tfd_tensor_data(out);
  if (r.zero) {
    for (int64_t i = 0; i < n; i++) y[i] = 0.0f;
    return;
  }
  float nmin = r.nmin, nmax = r.nmax, scale = r.scale, inv = r.inv;
  if (vars) {
    for (int64_t i = 0; i < n; i++) {
      float v = fmaxf(fminf(x[i], nmax), nmin) - nmin;
      y[i] = floorf(v / scale + 0.5f) * scale + nmin;
    }
  } else {
    for (int64_t i = 0; i < n; i++) {
      float v = fmaxf(fminf(x[i], nmax), nmin) - nmin;
      y[i] = floorf(v * inv + 0.5f) * scale + nmin;
    }
  }
}

static void fake_quant_cleanup(tfd_kernel *k) {
  free(k->state);
  k->state = NULL;
}

tfd_code tfd_setup_fake_quant(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  bool args = strcmp(init->op->name, "FakeQuantWithMinMaxArgs") == 0;
  float min = (float)tfd_attr_float(init->node, "min", -6.0), max = (float)tfd_attr_float(init->node, "max", 6.0);
  if (args && !(min < max))
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "min has to be smaller than max, was: %g >= %g", (double)min,
                           (double)max);
  int64_t bits = tfd_attr_int(init->node, "num_bits", 8);
  if (bits < 2 || bits > 16)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "num_bits must be between 2 and 16, inclusive");
  fake_quant *fq = malloc(sizeof *fq);
  if (!fq) return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory creating %s", init->op->name);
  fq->min = min;
  fq->max = max;
  fq->quant_min = tfd_attr_bool(init->node, "narrow_range", false) ? 1 : 0;
  fq->quant_max = (1 << bits) - 1;
  k->state = fq;
  k->cleanup = fake_quant_cleanup;
  k->compute = k_fake_quant;
  return TFD_OK;
}
