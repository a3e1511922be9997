/* TruncatedNormal, RandomUniformInt and Multinomial, as TensorFlow's CPU kernels define them and with
 * their error texts, drawn from the counter-based streams RandomUniform and RandomStandardNormal use
 * (device_math_elem.h): a seeded graph draws the same values in every session and thread split, and
 * each run reserves a block of the counter so concurrent steps get disjoint draws. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../device_math_elem.h"
#include "../kernel.h"
#include "../kernel_shared.h"
#include "../array/shape_logic.h"

/* The stream of element i of a run that reserved counter block `base` (device_math_elem.h's). */
static uint64_t element_seed(const tfd_kernel *k, uint64_t base, int64_t i) { return tfd_dm_element_seed(k->seed, base, i); }

static void k_truncated_normal(tfd_kernel *k, tfd_kernel_context *c) {
  int64_t dims[TFD_MAX_DIMS];
  int nd;
  if (!tfd_random_shape(c, k, dims, &nd)) return;
  tfd_tensor *out = tfd_kernel_alloc(c, k, k->dst, dims, nd);
  if (!out) return;
  int64_t n = tfd_tensor_numel(out);
  uint64_t base = atomic_fetch_add(&k->counter, (uint64_t)n);
  for (int64_t i = 0; i < n; i++) {
    double v = tfd_dm_truncated_normal(k->seed, base, i, k->dst == TFD_FLOAT32);
    if (k->dst == TFD_FLOAT32) ((float *)tfd_tensor_data(out))[i] = (float)v;
    else ((double *)tfd_tensor_data(out))[i] = v;
  }
  c->outputs[0] = out;
}

bool tfd_uniform_int_args(tfd_kernel_context *c, const tfd_kernel *k, int64_t *dims, int *nd, int64_t *bound) {
  char text[TFD_MAX_DIMS * 21 + 3];
  if (!tfd_random_shape(c, k, dims, nd)) return false;
  static const char *const what[] = {"minval", "maxval"};
  for (int b = 0; b < 2; b++) {
    tfd_tensor *t = c->inputs[1 + b];
    if (tfd_tensor_ndims(t) != 0) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "%s must be 0-D, got shape %s", what[b],
                      tfd_tensor_shape_text(text, sizeof text, t, 0));
      return false;
    }
    if (tfd_tensor_dtype(t) != k->dst) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "%s is %s but Tout is %s", what[b], tfd_dtype_name(tfd_tensor_dtype(t)),
                      tfd_dtype_name(k->dst));
      return false;
    }
    tfd_tensor *h = tfd_kernel_host_input(c, k, 1 + b);
    if (!h) return false;
    bound[b] = tfd_tensor_get_index(h, 0);
    tfd_tensor_unref(h);
  }
  int64_t n = 1;
  for (int d = 0; d < *nd; d++) n *= dims[d];
  /* TensorFlow checks the bounds only when there is something to draw. */
  if (n > 0 && bound[0] >= bound[1]) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Need minval < maxval: %lld >= %lld", (long long)bound[0],
                    (long long)bound[1]);
    return false;
  }
  return true;
}

static void k_random_uniform_int(tfd_kernel *k, tfd_kernel_context *c) {
  int64_t dims[TFD_MAX_DIMS], bound[2], n = 1;
  int nd;
  if (!tfd_uniform_int_args(c, k, dims, &nd, bound)) return;
  for (int d = 0; d < nd; d++) n *= dims[d];
  tfd_tensor *out = tfd_kernel_alloc(c, k, k->dst, dims, nd);
  if (!out) return;
  uint64_t base = atomic_fetch_add(&k->counter, (uint64_t)n);
  uint64_t range = (uint64_t)bound[1] - (uint64_t)bound[0];
  for (int64_t i = 0; i < n; i++) {
    int64_t v = tfd_dm_uniform_int(k->seed, base, i, bound[0], range);
    if (k->dst == TFD_INT64)
      ((int64_t *)tfd_tensor_data(out))[i] = v;
    else
      ((int32_t *)tfd_tensor_data(out))[i] = (int32_t)v;
  }
  c->outputs[0] = out;
}

static double logit_at(const tfd_tensor *t, int64_t i) {
  const void *p = tfd_tensor_const_data(t);
  switch (tfd_tensor_dtype(t)) {
    case TFD_FLOAT64:
      return ((const double *)p)[i];
    case TFD_INT32:
      return ((const int32_t *)p)[i];
    case TFD_INT64:
      return (double)((const int64_t *)p)[i];
    default:
      return ((const float *)p)[i];
  }
}

/* shape_logic.h */
bool tfd_multinomial_check(tfd_kernel_context *c, const tfd_kernel *k, int64_t *samples_out) {
  tfd_tensor *logits = c->inputs[0], *ns = c->inputs[1];
  char text[TFD_MAX_DIMS * 21 + 3];
  if (tfd_tensor_ndims(logits) != 2) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "logits should be a matrix, got shape %s",
                    tfd_tensor_shape_text(text, sizeof text, logits, 0));
    return false;
  }
  if (tfd_tensor_ndims(ns) != 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "num_samples should be a scalar, got shape %s",
                    tfd_tensor_shape_text(text, sizeof text, ns, 0));
    return false;
  }
  if (tfd_tensor_dtype(ns) != TFD_INT32) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "num_samples must be int32, got %s", tfd_dtype_name(tfd_tensor_dtype(ns)));
    return false;
  }
  tfd_tensor *nh = tfd_kernel_host_input(c, k, 1);
  if (!nh) return false;
  int64_t samples = tfd_tensor_get_index(nh, 0);
  tfd_tensor_unref(nh);
  if (samples < 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "num_samples should be nonnegative, got %lld", (long long)samples);
    return false;
  }
  int64_t rows = tfd_tensor_dim(logits, 0), classes = tfd_tensor_dim(logits, 1);
  if (rows > INT_MAX) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "batch_size should fit in int, got %lld", (long long)rows);
    return false;
  }
  if (classes > INT_MAX) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "num_classes should fit in int, got %lld", (long long)classes);
    return false;
  }
  if (classes <= 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "num_classes should be positive, got %lld", (long long)classes);
    return false;
  }
  *samples_out = samples;
  return true;
}

static void k_multinomial(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *logits = c->inputs[0];
  int64_t samples;
  if (!tfd_multinomial_check(c, k, &samples)) return;
  int64_t rows = tfd_tensor_dim(logits, 0), classes = tfd_tensor_dim(logits, 1);
  int64_t dims[2] = {rows, samples};
  tfd_tensor *out = tfd_kernel_alloc(c, k, k->dst, dims, 2);
  if (!out) return;
  int64_t total = rows * samples;
  if (total == 0) {
    c->outputs[0] = out;
    return;
  }
  double *cdf = malloc((size_t)classes * sizeof *cdf);
  if (!cdf) {
    tfd_tensor_unref(out);
    tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory");
    return;
  }
  uint64_t base = atomic_fetch_add(&k->counter, (uint64_t)total);
  for (int64_t r = 0; r < rows; r++) {
    /* As TensorFlow: exp(logit - max) over the finite logits (an infinite or NaN one has no mass). */
    double mx = -INFINITY, run = 0;
    for (int64_t j = 0; j < classes; j++) {
      double v = logit_at(logits, r * classes + j);
      if (isfinite(v) && v > mx) mx = v;
    }
    for (int64_t j = 0; j < classes; j++) {
      double v = logit_at(logits, r * classes + j);
      if (isfinite(v)) run += exp(v - mx);
      cdf[j] = run;
    }
    for (int64_t s = 0; s < samples; s++) {
      double u = tfd_dm_unit(element_seed(k, base, r * samples + s), 0) * run;
      int64_t lo = 0, hi = classes - 1; /* the first class whose running mass exceeds u */
      while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (cdf[mid] <= u)
          lo = mid + 1;
        else
          hi = mid;
      }
      if (k->dst == TFD_INT64)
        ((int64_t *)tfd_tensor_data(out))[r * samples + s] = lo;
      else
        ((int32_t *)tfd_tensor_data(out))[r * samples + s] = (int32_t)lo;
    }
  }
  free(cdf);
  c->outputs[0] = out;
}

tfd_code tfd_setup_random_ext(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  const char *op = init->op->name;
  uint64_t seed = (uint64_t)tfd_attr_int(init->node, "seed", 0), seed2 = (uint64_t)tfd_attr_int(init->node, "seed2", 0);
  /* As k_random.c: both seeds 0 means "nondeterministic". */
  k->seed = seed || seed2 ? tfd_dm_mix(seed * 0x100000001b3ull ^ tfd_dm_mix(seed2)) : tfd_new_incarnation();
  atomic_init(&k->counter, 0);
  const char *attr = "dtype";
  if (strcmp(op, "TruncatedNormal") == 0) {
    k->dst = tfd_attr_dtype(init->node, "dtype", TFD_FLOAT32);
    k->compute = k_truncated_normal;
    if (k->dst == TFD_FLOAT32 || k->dst == TFD_FLOAT64) return TFD_OK;
  } else {
    bool multi = strcmp(op, "Multinomial") == 0;
    attr = multi ? "output_dtype" : "Tout";
    k->dst = tfd_attr_dtype(init->node, attr, multi ? TFD_INT64 : TFD_INT32);
    k->compute = multi ? k_multinomial : k_random_uniform_int;
    if (k->dst == TFD_INT32 || k->dst == TFD_INT64) return TFD_OK;
  }
  return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): %s %s is not supported", tfd_node_def_name(init->node),
                         op, attr, tfd_dtype_name(k->dst));
}
