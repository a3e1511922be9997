/* Conv3D, MaxPool3D and AvgPool3D over NDHWC volumes, as TensorFlow's CPU kernels (conv_ops_3d.cc,
 * pooling_ops_3d.cc): their attribute checks and error texts, windows by TensorFlow's rule
 * (window.h's tfd_window_size_tf), float32, float64 and float16 (bfloat16 is not a tfdev dtype).
 *
 * Conv3D is im2col + GEMM: the output positions are cut into blocks of about 1 MiB of patches, each
 * block's patches [rows, kd*kh*kw*c] gathered (zeros where the window hangs over the padding) and
 * multiplied by the DHWIO filter, which already is the [kd*kh*kw*c, out_channels] matrix, with
 * OpenBLAS's cblas_sgemm (float32; float16 widened to float32 and rounded back, as Eigen computes
 * half) or cblas_dgemm (float64); blocks are shared over the intra-op pool. A 1x1x1 window with
 * stride 1 multiplies the input's rows themselves, no patches gathered. TensorFlow's CPU kernel takes no dilations above 1 (its
 * text), nor grouped filters.
 *
 * The pools are direct loops over the window of each output position, in double: MaxPool3D keeps
 * the largest (NaN never wins), AvgPool3D divides by the number of in-bounds elements as
 * Eigen's CuboidAvgPooling does. */
#include <cblas.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/checked.h"
#include "../../core/half.h"
#include "conv3d_logic.h"
#include "../kernel.h"
#include "window.h"

void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);

enum { OP_CONV3D, OP_MAXPOOL3D, OP_AVGPOOL3D };

typedef struct conv3d_params {
  int64_t ksize[3], stride[3], dilation[3]; /* planes, rows, cols */
  bool same;
} conv3d_params;

typedef struct job3 {
  int op;
  tfd_dtype dt;
  const void *x, *f; /* f: the filter (float16: widened to float32) */
  void *y;
  int64_t n, in[3], c, k[3], o, out[3], pad[3], stride[3];
  int64_t rows, per, kdim; /* output positions, per block, patch length */
  bool direct;              /* the input is its own patch matrix: a 1x1x1 window, stride 1 */
  atomic_bool failed;
} job3;

/* ---- attributes ---- */
static const tfd_attr_value *list_attr(const tfd_node_def *node, const char *name) {
  const tfd_attr_value *v = tfd_node_def_attr(node, name);
  return v && v->type == TFD_ATTR_LIST_INT ? v : NULL;
}

static void free_state(tfd_kernel *k) { free(k->state); }

static void k_conv3d(tfd_kernel *k, tfd_kernel_context *c);
static void k_pool3d(tfd_kernel *k, tfd_kernel_context *c);

tfd_code tfd_setup_conv3d(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  const char *op = init->op->name;
  bool conv = strcmp(op, "Conv3D") == 0;
  const tfd_node_def *node = init->node;
  const char *fmt = tfd_attr_string(node, "data_format", "NDHWC");
  if (strcmp(fmt, "NDHWC") != 0 && strcmp(fmt, "NCDHW") != 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Invalid data format");
  if (strcmp(fmt, "NDHWC") != 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           conv ? "CPU implementation of Conv3D currently only supports the NHWC tensor format."
                                : "Default Pooling3DOp only supports NDHWC on device type CPU");
  conv3d_params *p = calloc(1, sizeof *p);
  if (!p) return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  k->state = p;
  k->cleanup = free_state;
  const tfd_attr_value *s = list_attr(node, "strides"), *ks = list_attr(node, "ksize"), *d = list_attr(node, "dilations");
  if (conv) {
    if (!s || s->list_len != 5)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Sliding window strides field must specify 5 dimensions");
    if (s->list_i[0] != 1 || s->list_i[4] != 1)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                             "Current implementation does not yet support strides in the batch and depth dimensions.");
    if (s->list_i[1] < 1 || s->list_i[2] < 1 || s->list_i[3] < 1)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Spatial strides should be larger than 0.");
    if (d && d->list_len != 5)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Dilation rates field must specify 5 dimensions");
    if (d && (d->list_i[0] != 1 || d->list_i[4] != 1))
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                             "Current implementation does not yet support dilation rates in the batch and depth dimensions.");
    if (d && (d->list_i[1] < 1 || d->list_i[2] < 1 || d->list_i[3] < 1))
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Dilated rates should be larger than 0.");
  } else {
    if (!ks || ks->list_len != 5)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Sliding window ksize field must specify 5 dimensions");
    if (!s || s->list_len != 5)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Sliding window stride field must specify 5 dimensions");
    if (ks->list_i[0] != 1 || s->list_i[0] != 1)
      return tfd_status_setf(st, TFD_UNIMPLEMENTED, "Pooling is not yet supported on the batch dimension.");
    if (ks->list_i[4] != 1 || s->list_i[4] != 1)
      return tfd_status_setf(st, TFD_UNIMPLEMENTED, "Pooling is not yet supported on the depth dimension.");
    for (int i = 1; i < 4; i++)
      if (ks->list_i[i] < 1)
        return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Sliding window ksize for dimension %d was zero.", i);
  }
  for (int i = 0; i < 3; i++) {
    p->stride[i] = s->list_i[1 + i];
    p->dilation[i] = d ? d->list_i[1 + i] : 1;
    p->ksize[i] = ks ? ks->list_i[1 + i] : 0;
    if (p->stride[i] > INT32_MAX || p->dilation[i] > INT32_MAX || p->ksize[i] > INT32_MAX)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "%s: strides, dilations and ksize must fit in int32", op);
  }
  const char *padding = tfd_attr_string(node, "padding", "");
  p->same = strcmp(padding, "SAME") == 0;
  if (!p->same && strcmp(padding, "VALID") != 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "%s: padding must be SAME or VALID, got '%s'", op, padding);
  k->code = conv ? OP_CONV3D : strcmp(op, "MaxPool3D") == 0 ? OP_MAXPOOL3D : OP_AVGPOOL3D;
  k->compute = conv ? k_conv3d : k_pool3d;
  return TFD_OK;
}

/* The output volume's sizes and padding, TensorFlow's Get3dOutputSizeV2; false with the error set. */
static bool geometry(tfd_kernel *k, tfd_kernel_context *c, const conv3d_params *p, job3 *j) {
  for (int i = 0; i < 3; i++) {
    tfd_status *st = tfd_status_new();
    if (!st) {
      tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory");
      return false;
    }
    tfd_code code = tfd_window_size_tf(j->in[i], j->k[i], p->dilation[i], p->stride[i], p->same, &j->out[i], &j->pad[i], st);
    if (code != TFD_OK) tfd_kernel_fail(c, k, code, "%s", tfd_status_message(st));
    tfd_status_free(st);
    if (code != TFD_OK) return false;
    j->stride[i] = p->stride[i];
  }
  return true;
}

/* ---- element access ---- */
static inline double load(tfd_dtype dt, const void *p, int64_t i) {
  switch (dt) {
    case TFD_FLOAT32: return ((const float *)p)[i];
    case TFD_FLOAT64: return ((const double *)p)[i];
    default: return tfd_half_to_float(((const uint16_t *)p)[i]);
  }
}

static inline void store(tfd_dtype dt, void *p, int64_t i, double v) {
  switch (dt) {
    case TFD_FLOAT32: ((float *)p)[i] = (float)v; break;
    case TFD_FLOAT64: ((double *)p)[i] = v; break;
    default: ((uint16_t *)p)[i] = tfd_float_to_half((float)v); break;
  }
}

/* ---- pools ---- */
/* Output rows [r0, r1) (a row: one batch, plane and output row); acc and cnt hold c values. */
static void pool_range(int64_t r0, int64_t r1, void *arg) {
  job3 *j = arg;
  double *acc = malloc((size_t)j->c * sizeof *acc);
  if (!acc) {
    atomic_store(&j->failed, true);
    return;
  }
  bool max = j->op == OP_MAXPOOL3D;
  for (int64_t r = r0; r < r1; r++) {
    int64_t b = r / (j->out[0] * j->out[1]), oz = r / j->out[1] % j->out[0], oy = r % j->out[1];
    int64_t z0 = oz * j->stride[0] - j->pad[0], y0 = oy * j->stride[1] - j->pad[1];
    int64_t za = z0 < 0 ? 0 : z0, zb = z0 + j->k[0] < j->in[0] ? z0 + j->k[0] : j->in[0];
    int64_t ya = y0 < 0 ? 0 : y0, yb = y0 + j->k[1] < j->in[1] ? y0 + j->k[1] : j->in[1];
    for (int64_t ox = 0; ox < j->out[2]; ox++) {
      int64_t x0 = ox * j->stride[2] - j->pad[2];
      int64_t xa = x0 < 0 ? 0 : x0, xb = x0 + j->k[2] < j->in[2] ? x0 + j->k[2] : j->in[2];
      for (int64_t ch = 0; ch < j->c; ch++) acc[ch] = max ? -INFINITY : 0;
      bool any = false;
      for (int64_t z = za; z < zb; z++)
        for (int64_t y = ya; y < yb; y++)
          for (int64_t x = xa; x < xb; x++) {
            int64_t at = (((b * j->in[0] + z) * j->in[1] + y) * j->in[2] + x) * j->c;
            any = true;
            for (int64_t ch = 0; ch < j->c; ch++) {
              double v = load(j->dt, j->x, at + ch);
              if (!max) acc[ch] += v;
              else if (v > acc[ch]) acc[ch] = v;
            }
          }
      double count = (double)((zb - za) * (yb - ya) * (xb - xa));
      int64_t out_at = ((b * j->out[0] + oz) * j->out[1] + oy) * j->out[2] * j->c + ox * j->c;
      for (int64_t ch = 0; ch < j->c; ch++) {
        double v = acc[ch];
        if (max && !any) v = 0;
        else if (!max) v = any ? v / count : 0;
        store(j->dt, j->y, out_at + ch, v);
      }
    }
  }
  free(acc);
}

static job3 *new_job(tfd_kernel *k, tfd_kernel_context *c) {
  job3 *j = calloc(1, sizeof *j);
  if (!j) tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory");
  else atomic_init(&j->failed, false);
  return j;
}

/* The volume's sizes into s (TensorFlow's checks first): false with the kernel failed. */
static bool pool3d_shape(tfd_kernel_context *c, tfd_kernel *k, job3 *j) {
  const conv3d_params *p = k->state;
  tfd_tensor *x = c->inputs[0];
  if (tfd_tensor_ndims(x) != 5) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "tensor_in must be 5-dimensional");
    return false;
  }
  j->op = k->code, j->dt = tfd_tensor_dtype(x);
  j->n = tfd_tensor_dim(x, 0), j->c = tfd_tensor_dim(x, 4);
  for (int i = 0; i < 3; i++) j->in[i] = tfd_tensor_dim(x, 1 + i), j->k[i] = p->ksize[i];
  return geometry(k, c, p, j);
}

static void export_shape(const job3 *j, tfd_conv3d_dims *s) {
  s->max = j->op == OP_MAXPOOL3D;
  s->n = j->n, s->c = j->c, s->o = j->o;
  for (int i = 0; i < 3; i++) s->in[i] = j->in[i], s->k[i] = j->k[i], s->out[i] = j->out[i], s->pad[i] = j->pad[i],
                              s->stride[i] = j->stride[i];
}

bool tfd_pool3d_shape(tfd_kernel_context *c, tfd_kernel *k, tfd_conv3d_dims *s) {
  job3 j = {0};
  if (!pool3d_shape(c, k, &j)) return false;
  export_shape(&j, s);
  return true;
}

static void k_pool3d(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *x = c->inputs[0];
  job3 *j = new_job(k, c);
  if (!j) return;
  if (pool3d_shape(c, k, j)) {
    int64_t dims[5] = {j->n, j->out[0], j->out[1], j->out[2], j->c};
    tfd_tensor *y = tfd_kernel_alloc(c, k, j->dt, dims, 5);
    if (y) {
      c->outputs[0] = y;
      if (tfd_tensor_numel(y) > 0) {
        j->x = tfd_tensor_const_data(x), j->y = tfd_tensor_data(y);
        int64_t rows = j->n * j->out[0] * j->out[1];
        int64_t cost = 1, most = INT64_MAX / (rows + 1);
        int64_t factors[5] = {j->out[2], j->c, j->k[0], j->k[1], j->k[2]};
        for (int i = 0; i < 5; i++)
          if (!tfd_checked_mul(cost, factors[i] > 0 ? factors[i] : 1, &cost) || cost > most) cost = most;
        tfd_threadpool_parallel_for(c->intra_pool, rows, cost, pool_range, j);
        if (atomic_load(&j->failed)) tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory for the accumulators");
      }
    }
  }
  free(j);
}

/* ---- Conv3D ---- */
/* The patches of output positions [r0, r1) into cols (rows of kdim, float or double by esz). */
static void gather(const job3 *j, int64_t r0, int64_t r1, void *cols) {
  size_t esz = j->dt == TFD_FLOAT64 ? 8 : 4;
  char *dst = cols;
  size_t run = (size_t)j->c * esz;
  for (int64_t r = r0; r < r1; r++) {
    int64_t ox = r % j->out[2], oy = r / j->out[2] % j->out[1], oz = r / (j->out[2] * j->out[1]) % j->out[0];
    int64_t b = r / (j->out[2] * j->out[1] * j->out[0]);
    int64_t z0 = oz * j->stride[0] - j->pad[0], y0 = oy * j->stride[1] - j->pad[1], x0 = ox * j->stride[2] - j->pad[2];
    for (int64_t kz = 0; kz < j->k[0]; kz++)
      for (int64_t ky = 0; ky < j->k[1]; ky++)
        for (int64_t kx = 0; kx < j->k[2]; kx++, dst += run) {
          int64_t z = z0 + kz, y = y0 + ky, x = x0 + kx;
          if (z < 0 || z >= j->in[0] || y < 0 || y >= j->in[1] || x < 0 || x >= j->in[2]) {
            memset(dst, 0, run);
            continue;
          }
          int64_t at = (((b * j->in[0] + z) * j->in[1] + y) * j->in[2] + x) * j->c;
          if (j->dt == TFD_FLOAT16) {
            const uint16_t *src = (const uint16_t *)j->x + at;
            float *d = (float *)dst;
            for (int64_t ch = 0; ch < j->c; ch++) d[ch] = tfd_half_to_float(src[ch]);
          } else {
            memcpy(dst, (const char *)j->x + (size_t)at * esz, run);
          }
        }
  }
}

/* Blocks [b, e) of j->per output positions: gather, multiply, store. */
static void conv_range(int64_t b, int64_t e, void *arg) {
  job3 *j = arg;
  bool dbl = j->dt == TFD_FLOAT64, half = j->dt == TFD_FLOAT16;
  size_t esz = dbl ? 8 : 4;
  void *cols = j->direct ? NULL : malloc((size_t)(j->per * j->kdim) * esz);
  float *tmp = half ? malloc((size_t)(j->per * j->o) * sizeof *tmp) : NULL;
  if ((!j->direct && !cols) || (half && !tmp)) {
    atomic_store(&j->failed, true);
    free(cols);
    free(tmp);
    return;
  }
  for (int64_t blk = b; blk < e; blk++) {
    int64_t r0 = blk * j->per, r1 = r0 + j->per < j->rows ? r0 + j->per : j->rows;
    int m = (int)(r1 - r0), n = (int)j->o, kd = (int)j->kdim;
    const void *a = cols;
    if (j->direct) a = (const char *)j->x + (size_t)(r0 * j->kdim) * esz;
    else gather(j, r0, r1, cols);
    if (dbl)
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, kd, 1.0, a, kd, j->f, n, 0.0,
                  (double *)j->y + r0 * j->o, n);
    else
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, kd, 1.0f, a, kd, j->f, n, 0.0f,
                  half ? tmp : (float *)j->y + r0 * j->o, n);
    if (half)
      for (int64_t i = 0; i < (int64_t)m * n; i++) ((uint16_t *)j->y)[r0 * j->o + i] = tfd_float_to_half(tmp[i]);
  }
  free(cols);
  free(tmp);
}

/* Conv3D's checks before the output exists, and its volume's sizes. */
static bool conv3d_shape(tfd_kernel_context *c, tfd_kernel *k, job3 *j) {
  const conv3d_params *p = k->state;
  tfd_tensor *x = c->inputs[0], *f = c->inputs[1];
  if (tfd_tensor_ndims(x) != 5) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "input must be 5-dimensional");
    return false;
  }
  if (tfd_tensor_ndims(f) != 5) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "filter must be 5-dimensional");
    return false;
  }
  if (tfd_tensor_dtype(f) != tfd_tensor_dtype(x)) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "filter is %s but input is %s", tfd_dtype_name(tfd_tensor_dtype(f)),
                    tfd_dtype_name(tfd_tensor_dtype(x)));
    return false;
  }
  int64_t in_depth = tfd_tensor_dim(x, 4), f_depth = tfd_tensor_dim(f, 3);
  if (f_depth == 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "filter_depth must be non-zero");
    return false;
  }
  if (in_depth % f_depth != 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Input depth must be evenly divisible by filter depth: %lld vs %lld",
                    (long long)in_depth, (long long)f_depth);
    return false;
  }
  if (tfd_tensor_numel(f) == 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "filter must not have zero elements (i.e. all dimensions must be non-zero)");
    return false;
  }
  j->op = OP_CONV3D, j->dt = tfd_tensor_dtype(x);
  j->n = tfd_tensor_dim(x, 0), j->c = in_depth, j->o = tfd_tensor_dim(f, 4);
  for (int i = 0; i < 3; i++) j->in[i] = tfd_tensor_dim(x, 1 + i), j->k[i] = tfd_tensor_dim(f, i);
  return geometry(k, c, p, j);
}

/* The checks TensorFlow makes once the (non-empty) output exists. */
static bool conv3d_ready(tfd_kernel_context *c, tfd_kernel *k) {
  const conv3d_params *p = k->state;
  int64_t in_depth = tfd_tensor_dim(c->inputs[0], 4), f_depth = tfd_tensor_dim(c->inputs[1], 3);
  if (p->dilation[0] != 1 || p->dilation[1] != 1 || p->dilation[2] != 1) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "CPU implementation of Conv3D currently only supports dilated rates of 1.");
    return false;
  }
  if (f_depth != in_depth) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Number of channels in filter (%lld) must match last dimension of input (%lld)",
                    (long long)f_depth, (long long)in_depth);
    return false;
  }
  return true;
}

bool tfd_conv3d_shape(tfd_kernel_context *c, tfd_kernel *k, tfd_conv3d_dims *s) {
  job3 j = {0};
  if (!conv3d_shape(c, k, &j)) return false;
  export_shape(&j, s);
  return true;
}

bool tfd_conv3d_ready(tfd_kernel_context *c, tfd_kernel *k) { return conv3d_ready(c, k); }

static void k_conv3d(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *f = c->inputs[1];
  job3 *j = new_job(k, c);
  if (!j) return;
  tfd_tensor *y = NULL;
  float *wide = NULL;
  if (conv3d_shape(c, k, j)) {
    int64_t dims[5] = {j->n, j->out[0], j->out[1], j->out[2], j->o};
    y = tfd_kernel_alloc(c, k, j->dt, dims, 5);
  }
  if (!y) goto done;
  c->outputs[0] = y;
  if (tfd_tensor_numel(y) == 0 || !conv3d_ready(c, k)) goto done;
  tfd_tensor *x = c->inputs[0];
  j->kdim = tfd_tensor_numel(f) / j->o; /* kd * kh * kw * c: the filter exists, so it counts */
  j->rows = tfd_tensor_numel(y) / j->o;
  if (j->kdim > INT32_MAX / 8 || j->o > INT32_MAX) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Conv3D: a patch of %lld values is too large", (long long)j->kdim);
    goto done;
  }
  j->x = tfd_tensor_const_data(x), j->f = tfd_tensor_const_data(f), j->y = tfd_tensor_data(y);
  if (j->dt == TFD_FLOAT16) {
    int64_t nf = tfd_tensor_numel(f);
    wide = malloc((size_t)nf * sizeof *wide);
    if (!wide) {
      tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory");
      goto done;
    }
    const uint16_t *h = j->f;
    for (int64_t i = 0; i < nf; i++) wide[i] = tfd_half_to_float(h[i]);
    j->f = wide;
  }
  if (openblas_get_num_threads() != 1) openblas_set_num_threads(1); /* blocks run on the intra-op pool */
  size_t esz = j->dt == TFD_FLOAT64 ? 8 : 4;
  /* SAME and VALID pad nothing around a 1x1x1 window with stride 1 (float16 still widens its patches). */
  j->direct = j->k[0] == 1 && j->k[1] == 1 && j->k[2] == 1 && j->stride[0] == 1 && j->stride[1] == 1 &&
              j->stride[2] == 1 && j->dt != TFD_FLOAT16;
  j->per = (int64_t)(((size_t)1 << 20) / ((size_t)j->kdim * esz));
  if (j->per < 1) j->per = 1;
  if (j->per > j->rows) j->per = j->rows;
  int64_t threads = c->intra_pool ? tfd_threadpool_num_threads(c->intra_pool) : 1;
  int64_t blocks = (j->rows + j->per - 1) / j->per;
  if (blocks < 2 * threads && j->rows >= 32 * threads) { /* enough blocks to share */
    j->per = (j->rows + 2 * threads - 1) / (2 * threads);
    blocks = (j->rows + j->per - 1) / j->per;
  }
  tfd_threadpool_parallel_for(c->intra_pool, blocks, INT64_MAX / (blocks + 1), conv_range, j);
  if (atomic_load(&j->failed)) tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory for the convolution's patches");
done:
  free(wide);
  free(j);
}
