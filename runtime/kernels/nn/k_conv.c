/* Convolutions and their neighbours, NHWC, float32: Conv2D and _FusedConv2D (im2col + OpenBLAS
 * sgemm, then bias, Prelu or an activation applied to each block while it is in cache),
 * DepthwiseConv2dNative and _FusedDepthwiseConv2dNative (the same fusions), MaxPool and AvgPool,
 * Pad and PadV2, and Prelu.
 *
 * Windows follow TensorFlow's rules (tensorflow/core/framework/kernel_shape_util.cc): VALID
 * output = ceil((in - (k - 1) * dilation) / stride); SAME output = ceil(in / stride), padded by
 * max((out - 1) * stride + (k - 1) * dilation + 1 - in, 0) split with the smaller half before;
 * EXPLICIT takes explicit_paddings. Pooling windows skip the padding (a max over real values, an
 * average over the values counted). */
#include <cblas.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/checked.h"
#include "../../core/status_internal.h"
#include "activation.h"
#include "conv_generic.h"
#include "conv_logic.h"
#include "../math/cwise_logic.h"
#include "../array/shape_logic.h"
#include "dnnl_conv.h"
#include "pointwise_conv.h"
#include "window.h"
#include "../kernel.h"
#include "../vector_clones.h"

void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);

enum { OP_CONV, OP_DEPTHWISE, OP_MAXPOOL, OP_AVGPOOL, OP_PAD, OP_PRELU };

typedef struct conv_params {
  int op;
  tfd_window_attrs win;
  int64_t ksize[2];
  bool bias, prelu;        /* _FusedConv2D: input 2 is the bias; Prelu's alpha follows it */
  bool batch_norm;         /* fused FusedBatchNorm: inputs 2..5 are scale, offset, mean, variance */
  bool add;                /* fused [BiasAdd, Add]: input 3 is added to the output, element by element */
  double epsilon;
  tfd_activation act;
  double alpha;
  tfd_dnnl_conv *dnnl; /* oneDNN, when built in: filters packed once when constant */
  bool filter_constant;
  /* Pointwise layers (pointwise_conv.h): the constant filter packed at the first run. */
  pthread_mutex_t pw_mu;
  tfd_pointwise *pw;
  const float *pw_filter; /* the filter pw was packed from */
} conv_params;

/* ---- Conv2D ---- */
typedef struct conv_job {
  const conv_params *p;
  const float *x, *f, *bias, *alpha;
  float *y;
  int64_t n, h, w, c, kh, kw, o, oh, ow, pad_t, pad_l;
  int64_t alpha_n; /* Prelu alpha elements: broadcast over the output's last dims */
  const float *bn; /* fused batch norm: o multipliers then o shifts (owned by the kernel call) */
  const float *addend; /* fused Add: as many values as the output */
} conv_job;

static void epilogue(const conv_job *j, int64_t r0, int64_t rows);

/* Under a step's deadline (tfd_kernel_deadline), a convolution's parts ask between them whether to stop,
 * each part about this many flops (2-4 ms on one core; on one thread a 3x3 64 -> 64 convolution of
 * 128x128 took the same time in such parts as in one call), so that the step ends near its deadline
 * rather than a whole layer after it; the first part to see the deadline (or a cancellation) stops
 * the others. Without a deadline nothing is asked and the work is split as it always was. */
#define PART_FLOPS ((int64_t)1 << 27)

typedef struct stop_watch {
  tfd_kernel_context *c; /* NULL: not watched */
  atomic_bool stopped;
} stop_watch;

static void watch_init(stop_watch *w, tfd_kernel_context *c) {
  w->c = tfd_kernel_deadline(c) ? c : NULL;
  atomic_init(&w->stopped, false);
}

static bool watch_stop(stop_watch *w) {
  if (!w->c) return false;
  if (atomic_load_explicit(&w->stopped, memory_order_relaxed)) return true;
  if (!tfd_kernel_should_stop(w->c)) return false;
  atomic_store_explicit(&w->stopped, true, memory_order_relaxed);
  return true;
}

/* Rows [r0, r1) of the output (each row is one output pixel of one image). */
static void conv_rows(const conv_job *j, int64_t r0, int64_t r1, float *cols) {
  int64_t kdim = j->kh * j->kw * j->c;
  bool pointwise = j->kh == 1 && j->kw == 1 && j->p->win.stride[0] == 1 && j->p->win.stride[1] == 1 && j->pad_t == 0 &&
                   j->pad_l == 0 && j->oh == j->h && j->ow == j->w;
  const float *a = j->x + r0 * j->c;
  if (!pointwise) {
    for (int64_t r = r0; r < r1; r++) {
      int64_t b = r / (j->oh * j->ow), rem = r % (j->oh * j->ow), oy = rem / j->ow, ox = rem % j->ow;
      float *dst = cols + (r - r0) * kdim;
      for (int64_t ky = 0; ky < j->kh; ky++) {
        int64_t iy = oy * j->p->win.stride[0] + ky * j->p->win.dilation[0] - j->pad_t;
        for (int64_t kx = 0; kx < j->kw; kx++) {
          int64_t ix = ox * j->p->win.stride[1] + kx * j->p->win.dilation[1] - j->pad_l;
          float *d = dst + (ky * j->kw + kx) * j->c;
          if (iy < 0 || iy >= j->h || ix < 0 || ix >= j->w) memset(d, 0, (size_t)j->c * sizeof *d);
          else memcpy(d, j->x + ((b * j->h + iy) * j->w + ix) * j->c, (size_t)j->c * sizeof *d);
        }
      }
    }
    a = cols;
  }
  float *y = j->y + r0 * j->o;
  int64_t rows = r1 - r0;
  bool accumulate = j->addend == j->y; /* the output is the addend's buffer: add onto it */
  if (j->bias && accumulate)
    for (int64_t r = 0; r < rows; r++)
      for (int64_t i = 0; i < j->o; i++) y[r * j->o + i] += j->bias[i];
  else if (j->bias)
    for (int64_t r = 0; r < rows; r++) memcpy(y + r * j->o, j->bias, (size_t)j->o * sizeof *y);
  float beta = j->bias || accumulate ? 1.0f : 0.0f;
  if (rows == 1) /* one output pixel (a head over a 3x3 map): sgemm with one row is far slower */
    cblas_sgemv(CblasRowMajor, CblasTrans, (int)kdim, (int)j->o, 1.0f, j->f, (int)j->o, a, 1, beta, y, 1);
  else
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, (int)j->o, (int)kdim, 1.0f, a, (int)kdim, j->f,
                (int)j->o, beta, y, (int)j->o);
  epilogue(j, r0, rows);
}

/* What follows the convolution and bias over output rows [r0, r0 + rows), in place: the batch
 * norm, the addend (unless the output was made in the addend's buffer), then Prelu or the
 * activation. Prelu's alpha spans whole rows (tfd_prelu_alpha_size), or is one value. */
static void epilogue(const conv_job *j, int64_t r0, int64_t rows) {
  float *y = j->y + r0 * j->o;
  if (j->bn)
    for (int64_t r = 0; r < rows; r++)
      for (int64_t i = 0; i < j->o; i++) y[r * j->o + i] = y[r * j->o + i] * j->bn[i] + j->bn[j->o + i];
  if (j->addend && j->addend != j->y) {
    const float *a = j->addend + r0 * j->o;
    for (int64_t i = 0; i < rows * j->o; i++) y[i] += a[i];
  }
  if (j->p->prelu && j->alpha_n == 1) {
    tfd_activation_f32(TFD_ACT_LEAKY_RELU, y, y, rows * j->o, j->alpha[0]);
  } else if (j->p->prelu) {
    tfd_prelu_f32(y, y, j->alpha, j->alpha_n, (r0 * j->o) % j->alpha_n, rows * j->o);
  } else if (j->p->act) {
    tfd_activation_f32(j->p->act, y, y, rows * j->o, (float)j->p->alpha);
  }
}

static void epilogue_range(int64_t b, int64_t e, void *arg) { epilogue(arg, b, e - b); }

/* After oneDNN: the batch norm and Prelu it was not given. It applied the rest, the addend included,
 * so the epilogue must not add the addend again when the output is not the addend's own buffer. */
static void dnnl_epilogue(tfd_kernel_context *c, const conv_job *j, int64_t rows) {
  if (!j->bn && !j->p->prelu) return;
  conv_job rest = *j;
  rest.addend = NULL;
  tfd_threadpool_parallel_for(c->intra_pool, rows, 2 * j->o, epilogue_range, &rest);
}

/* Output rows per block: the im2col buffer of a block stays near 1 MiB. */
static int64_t block_rows(int64_t kdim) {
  int64_t rows = ((int64_t)1 << 18) / (kdim > 0 ? kdim : 1);
  return rows < 16 ? 16 : rows;
}

typedef struct conv_shared {
  const conv_job *j;
  int64_t rows, per;
  bool failed;
  stop_watch *watch;
} conv_shared;

static void conv_range(int64_t b, int64_t e, void *arg) {
  conv_shared *s = arg;
  int64_t kdim = s->j->kh * s->j->kw * s->j->c;
  float *cols = malloc((size_t)(s->per * kdim) * sizeof *cols + 64);
  if (!cols) {
    s->failed = true;
    return;
  }
  for (int64_t blk = b; blk < e && !watch_stop(s->watch); blk++) { /* a block: about 1 MiB of patches */
    int64_t r0 = blk * s->per, r1 = r0 + s->per < s->rows ? r0 + s->per : s->rows;
    conv_rows(s->j, r0, r1, cols);
  }
  free(cols);
}

/* A 1x1 window with stride 1 and no padding: the output is the input's pixels times the filter. */
static bool pointwise_shape(const conv_job *j) {
  return j->kh == 1 && j->kw == 1 && j->p->win.stride[0] == 1 && j->p->win.stride[1] == 1 && j->pad_t == 0 &&
         j->pad_l == 0 && j->oh == j->h && j->ow == j->w;
}

typedef struct pointwise_job {
  const tfd_pointwise *pw;
  const conv_job *j;
  tfd_pointwise_epilogue e;
  stop_watch *watch;
  int64_t part_blocks; /* blocks between two looks at the deadline, when watched */
} pointwise_job;

static void pointwise_range(int64_t b, int64_t e, void *arg) {
  pointwise_job *q = arg;
  int64_t rows = q->j->n * q->j->oh * q->j->ow;
  int64_t step = q->watch->c ? q->part_blocks : e - b;
  for (int64_t b0 = b; b0 < e && !watch_stop(q->watch); b0 += step) {
    int64_t e0 = e - b0 < step ? e : b0 + step, r1 = e0 * TFD_POINTWISE_BLOCK_ROWS;
    tfd_pointwise_run(q->pw, q->j->x, b0 * TFD_POINTWISE_BLOCK_ROWS, r1 < rows ? r1 : rows, &q->e, q->j->y);
  }
}

/* Runs a pointwise layer on pointwise_conv.c's kernel, its whole epilogue included; false (nothing
 * reported) when the layer is not pointwise, has no Prelu or batch norm, has output channels in
 * other than whole 16-float vectors, the CPU lacks AVX-512 or Prelu's alpha is not per channel, so
 * the caller's other paths run. A constant filter is packed once.
 *
 * Why only then (Zen 4, one thread, one fused node, in-place residual add, median us):
 *   layer                 [BiasAdd, Add, Prelu]        [BiasAdd, Add, Relu]
 *                         this kernel  oneDNN+pass     this kernel  oneDNN (all post-ops)
 *   96x96x16 -> 16          68.4         76.2            67.3         65.4
 *   48x48x32 -> 32          57.2         60.9            57.3         54.8
 *   16x16x96 -> 96          46.4         49.9            46.9         45.9
 *   12x12x128 -> 128        45.1         47.3            45.6         44.4
 *   128x128x24 -> 24       411.5        308.1           380.7        285.6
 * What oneDNN 2.6 fuses (bias, a sum, Relu) it runs 2-5% faster; Prelu and the batch norm it cannot
 * fuse, and its second pass over the output costs more than this kernel loses. With 24 channels a
 * third of this kernel's lanes would be masked off. */
static bool try_pointwise(tfd_kernel_context *c, conv_params *cache, const conv_job *j, stop_watch *watch) {
  const conv_params *p = j->p; /* the fusion being run (conv_add_broadcast runs a reduced one) */
  if (!pointwise_shape(j) || !(p->prelu || j->bn) || j->o % 16 != 0 || !tfd_pointwise_available()) return false;
  if (p->prelu && j->alpha_n != 1 && j->alpha_n != j->o) return false;
  tfd_pointwise *pw = NULL, *own = NULL;
  if (cache->filter_constant) {
    pthread_mutex_lock(&cache->pw_mu);
    if (!cache->pw && (cache->pw = tfd_pointwise_pack(j->f, j->c, j->o))) cache->pw_filter = j->f;
    if (cache->pw_filter == j->f) pw = cache->pw; /* else another filter: packed for this call alone */
    pthread_mutex_unlock(&cache->pw_mu);
  }
  if (!pw) pw = own = tfd_pointwise_pack(j->f, j->c, j->o);
  if (!pw) return false;
  int64_t block_flops = 2 * TFD_POINTWISE_BLOCK_ROWS * j->c * j->o;
  pointwise_job q = {pw, j, {j->bias, NULL, NULL, j->addend, NULL, p->act, (float)p->alpha}, watch,
                     PART_FLOPS / block_flops > 1 ? PART_FLOPS / block_flops : 1};
  if (j->bn) q.e.scale = j->bn, q.e.shift = j->bn + j->o, q.e.bias = NULL;
  if (p->prelu && j->alpha_n == 1) q.e.act = TFD_ACT_LEAKY_RELU, q.e.alpha = j->alpha[0];
  else if (p->prelu) q.e.prelu = j->alpha;
  int64_t rows = j->n * j->oh * j->ow, blocks = (rows + TFD_POINTWISE_BLOCK_ROWS - 1) / TFD_POINTWISE_BLOCK_ROWS;
  tfd_threadpool_parallel_for(c->intra_pool, blocks, block_flops, pointwise_range, &q);
  tfd_pointwise_free(own);
  return true;
}

/* The output rows [oy0, oy1) of one image as a convolution of their own: the input rows they read,
 * and the padding above and below what the image has. False when the band reads no input row (all
 * padding), which oneDNN cannot describe. */
static bool band_shape(const tfd_dnnl_conv_shape *s, int64_t oy0, int64_t oy1, tfd_dnnl_conv_shape *band, int64_t *in0) {
  int64_t lo = oy0 * s->stride[0] - s->pad_before[0];
  int64_t hi = (oy1 - 1) * s->stride[0] + (s->kh - 1) * s->dilation[0] - s->pad_before[0] + 1; /* past the last */
  *band = *s;
  band->n = 1;
  band->oh = oy1 - oy0;
  band->pad_before[0] = lo < 0 ? -lo : 0;
  band->pad_after[0] = hi > s->h ? hi - s->h : 0;
  *in0 = lo < 0 ? 0 : lo;
  band->h = (hi < s->h ? hi : s->h) - *in0;
  return band->h >= 1;
}

/* Runs the convolution on oneDNN; false (nothing reported) when it cannot, so the caller's own
 * path runs instead. Under a deadline a large one runs image by image, in bands of output rows of
 * about PART_FLOPS (at most three shapes of band an image: oneDNN's cache of a node holds four),
 * and stops between them when the watch says so (*stopped; the caller reports it). A band that fails
 * after others have written the output fails the kernel: the output may hold a residual add already. */
static bool try_dnnl(tfd_kernel_context *c, const conv_params *p, const conv_job *j, tfd_kernel *k, bool *stopped) {
  tfd_dnnl_conv_shape s = {j->n, j->h, j->w, j->c, j->kh, j->kw, j->o, j->oh, j->ow,
                           {p->win.stride[0], p->win.stride[1]}, {p->win.dilation[0], p->win.dilation[1]}, {j->pad_t, j->pad_l},
                           {tfd_window_pad_after(&p->win, 0, j->h, j->kh, j->oh, j->pad_t),
                            tfd_window_pad_after(&p->win, 1, j->w, j->kw, j->ow, j->pad_l)}};
  tfd_status st = TFD_STATUS_INIT;
  int threads = c->intra_pool ? tfd_threadpool_num_threads(c->intra_pool) : 1;
  /* A tiny layer runs on one thread: waking a second cost more than it saved on every layer under
   * a megaflop whose filter is small (3x3x128 -> 128 1x1: 2.3 us on one thread, 4.1 on two), while
   * a large filter streams faster on two even when the flops are few (3x3x32 -> 1404: 50 against 21). */
  int64_t in_per_out = p->op == OP_DEPTHWISE ? 1 : j->c;
  int64_t flops = 2 * j->n * j->oh * j->ow * j->o * j->kh * j->kw * in_per_out;
  if (flops < ((int64_t)1 << 20) && j->kh * j->kw * in_per_out * j->o * (int64_t)sizeof(float) < ((int64_t)256 << 10))
    threads = 1;
  int64_t band = j->oh;
  bool deadline = tfd_kernel_deadline(c) != 0;
  if (deadline && flops > 2 * PART_FLOPS) {
    int64_t row_flops = flops / (j->n * j->oh);
    band = row_flops > 0 && PART_FLOPS / row_flops < j->oh ? PART_FLOPS / row_flops : j->oh;
    if (band < 1) band = 1;
    tfd_dnnl_conv_shape b;
    int64_t in0;
    for (int64_t oy = 0; oy < j->oh && band < j->oh; oy += band)
      if (!band_shape(&s, oy, oy + band < j->oh ? oy + band : j->oh, &b, &in0)) band = j->oh;
  }
  if (band == j->oh && (!deadline || j->n == 1 || flops <= 2 * PART_FLOPS)) {
    tfd_code code = tfd_dnnl_conv_run(p->dnnl, &s, j->x, j->f, j->bias, j->addend, j->y, threads, &st);
    tfd_status_clear(&st);
    return code == TFD_OK;
  }
  bool first = true;
  for (int64_t i = 0; i < j->n; i++)
    for (int64_t oy = 0; oy < j->oh; oy += band) {
      if (tfd_kernel_should_stop(c)) {
        *stopped = true;
        return true;
      }
      tfd_dnnl_conv_shape b;
      int64_t in0;
      band_shape(&s, oy, oy + band < j->oh ? oy + band : j->oh, &b, &in0);
      size_t out_at = (size_t)((i * j->oh + oy) * j->ow * j->o);
      tfd_code code = tfd_dnnl_conv_run(p->dnnl, &b, j->x + (i * j->h + in0) * j->w * j->c, j->f, j->bias,
                                        j->addend ? j->addend + out_at : NULL, j->y + out_at, threads, &st);
      if (code != TFD_OK && !first) tfd_kernel_fail(c, k, code, "oneDNN convolution: %s", tfd_status_message(&st));
      tfd_status_clear(&st);
      if (code != TFD_OK) return !first;
      first = false;
    }
  return true;
}

/* Whether the plain (unfused) op's input or filter is not float32: k_conv_generic.c then runs it,
 * or names the dtypes it refuses. The fused ops stay float32 (tfd_conv_check_nhwc refuses the rest). */
static bool generic_dtype(const tfd_kernel *k, const tfd_tensor *x, const tfd_tensor *f) {
  return !tfd_conv_op_fused(k->op->name) &&
         (tfd_tensor_dtype(x) != TFD_FLOAT32 || (f && tfd_tensor_dtype(f) != TFD_FLOAT32));
}

/* The fused arguments of _FusedConv2D and _FusedDepthwiseConv2dNative, checked (conv_logic.h), then
 * pointed to: the bias, the batch norm's factors, Prelu's alpha, the addend. */
static bool fused_args(tfd_kernel_context *c, tfd_kernel *k, conv_job *j) {
  const conv_params *p = k->state;
  tfd_conv_fusion f = {p->bias, p->add, p->batch_norm, p->prelu, p->epsilon, p->act};
  int64_t out[4] = {j->n, j->oh, j->ow, j->o};
  if (!tfd_conv_check_fused(c, k, &f, out, &j->alpha_n)) return false;
  if (p->bias) j->bias = tfd_tensor_const_data(c->inputs[2]);
  if (p->batch_norm) {
    /* y = (conv - mean) * scale / sqrt(variance + epsilon) + offset, as one multiply and one add. */
    float *bn = malloc((size_t)(2 * j->o) * sizeof *bn + 1);
    if (!bn) {
      tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory");
      return false;
    }
    const float *scale = tfd_tensor_const_data(c->inputs[2]), *offset = tfd_tensor_const_data(c->inputs[3]),
                *mean = tfd_tensor_const_data(c->inputs[4]), *var = tfd_tensor_const_data(c->inputs[5]);
    for (int64_t i = 0; i < j->o; i++) {
      bn[i] = scale[i] / sqrtf(var[i] + (float)p->epsilon);
      bn[j->o + i] = offset[i] - mean[i] * bn[i];
    }
    j->bn = bn;
  }
  if (p->prelu) j->alpha = tfd_tensor_const_data(c->inputs[c->num_inputs - 1]); /* alpha comes last */
  if (p->add) j->addend = tfd_tensor_const_data(c->inputs[3]);
  return true;
}

static void conv_run(tfd_kernel *k, tfd_kernel_context *c, const conv_params *p, conv_job *j);

/* A fused Add whose operand only broadcasts against the convolution's output (the remapper fuses
 * adds whose shapes agree up to unknown dimensions, which may turn out 1 on one side): the
 * convolution and bias into a temporary, then act(temporary + operand) (or Prelu) broadcast as
 * AddV2 does, into an output of the broadcast shape. Rare, so it takes the plain path. */
static void conv_add_broadcast(tfd_kernel *k, tfd_kernel_context *c, const conv_params *p, conv_job *j) {
  tfd_tensor *a = c->inputs[3];
  tfd_shape sc = {.ndims = 4, .dims = {j->n, j->oh, j->ow, j->o}}, sa, so;
  if (!tfd_conv_addend_broadcast(c, k, &sc, &sa, &so)) return;
  conv_params q = *p;
  q.add = false, q.prelu = false, q.act = TFD_ACT_NONE, q.dnnl = NULL;
  conv_job t = *j;
  t.p = &q, t.addend = NULL;
  tfd_tensor *conv = tfd_kernel_alloc(c, k, TFD_FLOAT32, sc.dims, 4);
  tfd_tensor *y = conv ? tfd_kernel_alloc(c, k, TFD_FLOAT32, so.dims, 4) : NULL;
  if (y) {
    t.y = tfd_tensor_data(conv);
    conv_run(k, c, &q, &t);
    int64_t ad[4] = {1, 1, 1, 1}, cst[4], ast[4], sc_ = 1, sa_ = 1;
    for (int d = 0; d < sa.ndims; d++) ad[4 - sa.ndims + d] = sa.dims[d];
    for (int d = 3; d >= 0; d--) { /* element strides, 0 along broadcast dimensions */
      cst[d] = sc.dims[d] == 1 ? 0 : sc_;
      ast[d] = ad[d] == 1 ? 0 : sa_;
      sc_ *= sc.dims[d];
      sa_ *= ad[d];
    }
    const float *cv = t.y, *av = tfd_tensor_const_data(a);
    float *o = tfd_tensor_data(y);
    for (int64_t i0 = 0; i0 < so.dims[0]; i0++)
      for (int64_t i1 = 0; i1 < so.dims[1]; i1++)
        for (int64_t i2 = 0; i2 < so.dims[2]; i2++)
          for (int64_t i3 = 0; i3 < so.dims[3]; i3++)
            *o++ = cv[i0 * cst[0] + i1 * cst[1] + i2 * cst[2] + i3 * cst[3]] +
                   av[i0 * ast[0] + i1 * ast[1] + i2 * ast[2] + i3 * ast[3]];
    float *yd = tfd_tensor_data(y);
    int64_t na = 0;
    if (!p->prelu) {
      tfd_activation_f32(p->act, yd, yd, tfd_tensor_numel(y), (float)p->alpha);
    } else if (tfd_prelu_alpha_size(c, k, c->inputs[c->num_inputs - 1], so.dims, 4, &na)) {
      const float *al = tfd_tensor_const_data(c->inputs[c->num_inputs - 1]);
      if (na == 1) tfd_activation_f32(TFD_ACT_LEAKY_RELU, yd, yd, tfd_tensor_numel(y), al[0]);
      else tfd_prelu_f32(yd, yd, al, na, 0, tfd_tensor_numel(y));
    }
    if (tfd_status_code(c->status) == TFD_OK) c->outputs[0] = y;
    else tfd_tensor_unref(y);
  }
  tfd_tensor_unref(conv);
}

/* The output of a convolution whose inputs fused_args checked; j->bn, if any, is the caller's. */
static void conv2d_compute(tfd_kernel *k, tfd_kernel_context *c, const conv_params *p, conv_job *j) {
  int64_t dims[4] = {j->n, j->oh, j->ow, j->o};
  if (p->add && !tfd_conv_addend_fits(c, dims)) {
    conv_add_broadcast(k, c, p, j);
    return;
  }
  /* A residual add writes into its addend's buffer when nothing else reads it: no copy. */
  tfd_tensor *y = p->add ? tfd_kernel_forward_or_alloc(c, k, 3, TFD_FLOAT32, dims, 4)
                         : tfd_kernel_alloc(c, k, TFD_FLOAT32, dims, 4);
  if (!y) return;
  c->outputs[0] = y;
  j->y = tfd_tensor_data(y);
  conv_run(k, c, p, j);
}

/* Convolution, bias and epilogue into j->y (already sized). */
static void conv_run(tfd_kernel *k, tfd_kernel_context *c, const conv_params *p, conv_job *j) {
  int64_t rows = j->n * j->oh * j->ow;
  if (rows == 0 || j->o == 0) return;
  stop_watch watch;
  watch_init(&watch, c);
  bool stopped = false;
  if (j->c > 0 && try_pointwise(c, (conv_params *)k->state, j, &watch)) {
    if (atomic_load(&watch.stopped)) tfd_kernel_fail_stopped(c);
    return;
  }
  /* oneDNN pads output channels to a block of 16: with fewer than 8 (a detection head's 2 or 6
   * scores) OpenBLAS on the patches was faster in every layer measured (16x16x96 -> 2: 4.1 against
   * 7.0 us with bias and Relu; 8x8x96 -> 6: 2.3 against 2.6; 3x3x32 -> 1: 0.9 against 1.4). */
  if (p->dnnl && j->o >= 8 && rows > 1 && j->kh * j->kw * j->c > 0 && try_dnnl(c, p, j, k, &stopped)) {
    if (stopped) tfd_kernel_fail_stopped(c);
    else if (tfd_status_code(c->status) == TFD_OK) dnnl_epilogue(c, j, rows);
    return;
  }
  if (j->kh * j->kw * j->c == 0) {
    /* An empty window: the bias alone (or zeros), then the activation. */
    for (int64_t r = 0; r < rows; r++)
      for (int64_t i = 0; i < j->o; i++) j->y[r * j->o + i] = j->bias ? j->bias[i] : 0;
    epilogue(j, 0, rows);
    return;
  }
  if (openblas_get_num_threads() != 1) openblas_set_num_threads(1); /* blocks run on the intra-op pool */
  conv_shared s = {j, rows, block_rows(j->kh * j->kw * j->c), false, &watch};
  /* Room for the rows there are: a small layer's 1 MiB of patches would be a fresh mmap every run. */
  if (s.per > rows) s.per = rows;
  int64_t blocks = (rows + s.per - 1) / s.per;
  int64_t threads = c->intra_pool ? tfd_threadpool_num_threads(c->intra_pool) : 1;
  if (blocks < 2 * threads && rows >= 32 * threads) { /* enough blocks to share */
    s.per = (rows + 2 * threads - 1) / (2 * threads);
    blocks = (rows + s.per - 1) / s.per;
  }
  tfd_threadpool_parallel_for(c->intra_pool, blocks, INT64_MAX / (blocks + 1), conv_range, &s);
  if (s.failed) tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory for the convolution's patches");
  else if (atomic_load(&watch.stopped)) tfd_kernel_fail_stopped(c);
}

/* A job over x (and filter f, unless pooling) with g's geometry; its fused operands still unset. */
static conv_job job_of(const conv_params *p, const tfd_conv_dims *g, const tfd_tensor *x, const tfd_tensor *f) {
  return (conv_job){p, tfd_tensor_const_data(x), f ? tfd_tensor_const_data(f) : NULL, NULL, NULL, NULL,
                    g->n, g->h, g->w, g->c, g->kh, g->kw, g->o, g->oh, g->ow, g->pad_t, g->pad_l, 1, NULL, NULL};
}

static void k_conv2d(tfd_kernel *k, tfd_kernel_context *c) {
  const conv_params *p = k->state;
  tfd_tensor *x = c->inputs[0], *f = c->inputs[1];
  if (generic_dtype(k, x, f)) {
    tfd_conv_generic_run(k, c, TFD_CONV_GENERIC_CONV2D, &p->win, NULL);
    return;
  }
  tfd_conv_dims g;
  if (!tfd_conv_check_nhwc(c, k, x, "input") || !tfd_conv_check_nhwc(c, k, f, "filter") ||
      !tfd_conv_geometry(c, k, &p->win, false, &g))
    return;
  conv_job j = job_of(p, &g, x, f);
  if (!fused_args(c, k, &j)) return;
  conv2d_compute(k, c, p, &j);
  free((void *)j.bn);
}

/* ---- DepthwiseConv2dNative ---- */
typedef struct depthwise_job {
  const conv_job *j;
  stop_watch *watch;
  int64_t part_rows; /* rows between two looks at the deadline, when watched */
} depthwise_job;

static void depthwise_range(int64_t b, int64_t e, void *arg) {
  depthwise_job *dj = arg;
  const conv_job *j = dj->j;
  int64_t m = j->o / j->c; /* channel multiplier */
  for (int64_t r = b; r < e; r++) {
    if (dj->watch->c && (r - b) % dj->part_rows == 0 && watch_stop(dj->watch)) return;
    int64_t n = r / j->oh, oy = r % j->oh;
    for (int64_t ox = 0; ox < j->ow; ox++) {
      float *out = j->y + ((n * j->oh + oy) * j->ow + ox) * j->o;
      if (j->bias) memcpy(out, j->bias, (size_t)j->o * sizeof *out);
      else memset(out, 0, (size_t)j->o * sizeof *out);
      for (int64_t ky = 0; ky < j->kh; ky++) {
        int64_t iy = oy * j->p->win.stride[0] + ky * j->p->win.dilation[0] - j->pad_t;
        if (iy < 0 || iy >= j->h) continue;
        for (int64_t kx = 0; kx < j->kw; kx++) {
          int64_t ix = ox * j->p->win.stride[1] + kx * j->p->win.dilation[1] - j->pad_l;
          if (ix < 0 || ix >= j->w) continue;
          const float *in = j->x + ((n * j->h + iy) * j->w + ix) * j->c;
          const float *f = j->f + (ky * j->kw + kx) * j->o;
          if (m == 1)
            for (int64_t ch = 0; ch < j->c; ch++) out[ch] += in[ch] * f[ch];
          else
            for (int64_t ch = 0; ch < j->c; ch++)
              for (int64_t q = 0; q < m; q++) out[ch * m + q] += in[ch] * f[ch * m + q];
        }
      }
    }
    epilogue(j, r * j->ow, j->ow); /* _FusedDepthwiseConv2dNative's Prelu or activation */
  }
}

static void k_depthwise(tfd_kernel *k, tfd_kernel_context *c) {
  const conv_params *p = k->state;
  tfd_tensor *x = c->inputs[0], *f = c->inputs[1];
  if (generic_dtype(k, x, f)) {
    tfd_conv_generic_run(k, c, TFD_CONV_GENERIC_DEPTHWISE, &p->win, NULL);
    return;
  }
  tfd_conv_dims g;
  if (!tfd_conv_check_nhwc(c, k, x, "input") || !tfd_conv_check_nhwc(c, k, f, "filter") ||
      !tfd_conv_geometry(c, k, &p->win, true, &g))
    return;
  conv_job j = job_of(p, &g, x, f);
  if (!fused_args(c, k, &j)) return;
  int64_t dims[4] = {j.n, j.oh, j.ow, j.o};
  tfd_tensor *y = tfd_kernel_alloc(c, k, TFD_FLOAT32, dims, 4);
  if (!y) return;
  c->outputs[0] = y;
  j.y = tfd_tensor_data(y);
  int64_t rows = j.n * j.oh;
  if (rows == 0 || j.ow == 0 || j.o == 0) return;
  bool stopped = false;
  if (p->dnnl && j.kh * j.kw > 0 && try_dnnl(c, p, &j, k, &stopped)) {
    if (stopped) tfd_kernel_fail_stopped(c);
    else if (tfd_status_code(c->status) == TFD_OK) dnnl_epilogue(c, &j, j.n * j.oh * j.ow);
    return;
  }
  stop_watch watch;
  watch_init(&watch, c);
  int64_t row_flops = j.ow * j.o * j.kh * j.kw * 2;
  depthwise_job dj = {&j, &watch, row_flops > 0 && PART_FLOPS / row_flops > 1 ? PART_FLOPS / row_flops : 1};
  tfd_threadpool_parallel_for(c->intra_pool, rows, row_flops, depthwise_range, &dj);
  if (atomic_load(&watch.stopped)) tfd_kernel_fail_stopped(c);
}

/* ---- MaxPool, AvgPool ---- */
/* A window's channels 16 at a time, in a vector register (GCC's vector extension: one AVX-512
 * operation, two AVX2 or four SSE ones, per pool_range clone), stored once per output pixel. A loop
 * over the channels that read and wrote the output at each window position cost more in set-up than
 * the 16 maxima did: MaxPool 96x96x16 -> 48x48x16 took 26 us. */
#define POOL_CHUNK 16
typedef float f32x16 __attribute__((vector_size(64), aligned(4))); /* aligned(4): loads may be unaligned */
typedef int32_t i32x16 __attribute__((vector_size(64), aligned(4)));

/* v > acc ? v : acc, as the scalar loop: NaN never wins. A macro: a function returning a 64-byte
 * vector would have a different ABI in each clone. */
#define MAX16(acc, v) ((f32x16)((((i32x16)(v)) & ((v) > (acc))) | (((i32x16)(acc)) & ~((v) > (acc)))))

static inline void pool_chunk(const conv_job *j, bool max, int64_t n, int64_t y0, int64_t y1, int64_t x0, int64_t x1,
                              int64_t ch, int64_t len, float *out) {
  if (len == POOL_CHUNK) {
    f32x16 acc = (f32x16){0} + (max ? -FLT_MAX : 0);
    for (int64_t iy = y0; iy < y1; iy++)
      for (int64_t ix = x0; ix < x1; ix++) {
        f32x16 v = *(const f32x16 *)(j->x + ((n * j->h + iy) * j->w + ix) * j->c + ch);
        acc = max ? MAX16(acc, v) : acc + v;
      }
    *(f32x16 *)out = acc;
    return;
  }
  float acc[POOL_CHUNK];
  for (int64_t i = 0; i < len; i++) acc[i] = max ? -FLT_MAX : 0;
  for (int64_t iy = y0; iy < y1; iy++)
    for (int64_t ix = x0; ix < x1; ix++) {
      const float *in = j->x + ((n * j->h + iy) * j->w + ix) * j->c + ch;
      for (int64_t i = 0; i < len; i++) acc[i] = max ? (in[i] > acc[i] ? in[i] : acc[i]) : acc[i] + in[i];
    }
  for (int64_t i = 0; i < len; i++) out[i] = acc[i];
}

/* MaxPool 2x2 with stride 2 over output pixels [ox0, ox1) of a row whose windows lie inside the image,
 * 16 channels at a time: the shortcut of MediaPipe's downsampling blocks (96x96x16 -> 48x48x16 in
 * facemesh), where the general loop's per-pixel window set-up cost more than the four maxima. r0 and
 * r1 are the two input rows at the row's first pixel; same results as pool_chunk (NaN never wins). */
static inline __attribute__((always_inline)) void max2x2_run(const float *r0, const float *r1, int64_t c, int64_t ox0,
                                                             int64_t ox1, float *out) {
  const f32x16 lowest = (f32x16){0} - FLT_MAX;
  for (int64_t ox = ox0; ox < ox1; ox++) {
    const float *a = r0 + 2 * ox * c, *b = r1 + 2 * ox * c;
    float *o = out + ox * c;
    for (int64_t ch = 0; ch < c; ch += POOL_CHUNK) {
      f32x16 acc = MAX16(lowest, *(const f32x16 *)(a + ch));
      acc = MAX16(acc, *(const f32x16 *)(a + c + ch));
      acc = MAX16(acc, *(const f32x16 *)(b + ch));
      *(f32x16 *)(o + ch) = MAX16(acc, *(const f32x16 *)(b + c + ch));
    }
  }
}

TFD_VECTOR_CLONES static void pool_range(int64_t b, int64_t e, void *arg) {
  const conv_job *j = arg;
  bool max = j->p->op == OP_MAXPOOL;
  bool two_by_two = max && j->kh == 2 && j->kw == 2 && j->p->win.stride[0] == 2 && j->p->win.stride[1] == 2 &&
                    j->pad_l == 0 && j->c % POOL_CHUNK == 0;
  for (int64_t r = b; r < e; r++) {
    int64_t n = r / j->oh, oy = r % j->oh;
    int64_t y0 = oy * j->p->win.stride[0] - j->pad_t, y1 = y0 + j->kh;
    int64_t ox = 0;
    if (two_by_two && y0 >= 0 && y1 <= j->h) {
      int64_t inside = j->w / 2 < j->ow ? j->w / 2 : j->ow; /* windows [2 ox, 2 ox + 1] within the row */
      const float *row0 = j->x + ((n * j->h + y0) * j->w) * j->c;
      max2x2_run(row0, row0 + j->w * j->c, j->c, 0, inside, j->y + (n * j->oh + oy) * j->ow * j->c);
      ox = inside;
    }
    if (y0 < 0) y0 = 0;
    if (y1 > j->h) y1 = j->h;
    for (; ox < j->ow; ox++) {
      int64_t x0 = ox * j->p->win.stride[1] - j->pad_l, x1 = x0 + j->kw;
      if (x0 < 0) x0 = 0;
      if (x1 > j->w) x1 = j->w;
      float *out = j->y + ((n * j->oh + oy) * j->ow + ox) * j->c;
      for (int64_t ch = 0; ch < j->c; ch += POOL_CHUNK)
        pool_chunk(j, max, n, y0, y1, x0, x1, ch, j->c - ch < POOL_CHUNK ? j->c - ch : POOL_CHUNK, out + ch);
      if (!max) {
        float count = (float)((y1 - y0) * (x1 - x0));
        for (int64_t ch = 0; ch < j->c; ch++) out[ch] = count > 0 ? out[ch] / count : 0;
      }
    }
  }
}

static void k_pool(tfd_kernel *k, tfd_kernel_context *c) {
  const conv_params *p = k->state;
  tfd_tensor *x = c->inputs[0];
  if (generic_dtype(k, x, NULL)) {
    tfd_conv_generic_run(k, c, p->op == OP_MAXPOOL ? TFD_CONV_GENERIC_MAXPOOL : TFD_CONV_GENERIC_AVGPOOL, &p->win, p->ksize);
    return;
  }
  tfd_conv_dims g;
  if (!tfd_conv_check_nhwc(c, k, x, "input") || !tfd_pool_geometry(c, k, &p->win, p->ksize, &g)) return;
  conv_job j = job_of(p, &g, x, NULL);
  int64_t dims[4] = {j.n, j.oh, j.ow, j.c};
  tfd_tensor *y = tfd_kernel_alloc(c, k, TFD_FLOAT32, dims, 4);
  if (!y) return;
  c->outputs[0] = y;
  j.y = tfd_tensor_data(y);
  if (j.n * j.oh == 0 || j.ow == 0 || j.c == 0) return;
  tfd_threadpool_parallel_for(c->intra_pool, j.n * j.oh, j.ow * j.c * j.kh * j.kw, pool_range, &j);
}

/* ---- Pad, PadV2 ---- */
typedef struct pad_job {
  const char *x;
  char *y;
  size_t es;
  int nd;
  int64_t xdims[TFD_MAX_DIMS], ydims[TFD_MAX_DIMS], before[TFD_MAX_DIMS];
  char fill[16];
  bool zero_fill; /* every byte of fill is 0: rows are memset */
} pad_job;

/* count elements of the fill value from dst on. */
static void pad_fill(const pad_job *j, char *dst, int64_t count) {
  if (j->zero_fill) {
    memset(dst, 0, (size_t)count * j->es);
  } else if (count > 0) {
    memcpy(dst, j->fill, j->es);
    for (int64_t done = 1; done < count; done *= 2) /* doubling copies */
      memcpy(dst + done * (int64_t)j->es, dst, (size_t)((done < count - done ? done : count - done) * (int64_t)j->es));
  }
}

/* Output rows [b, e) (a row: the last dimension), each written once: fill, the input row, fill. */
static void pad_range(int64_t b, int64_t e, void *arg) {
  const pad_job *j = arg;
  int last = j->nd - 1;
  int64_t es = (int64_t)j->es, width = j->ydims[last], idx[TFD_MAX_DIMS] = {0};
  for (int64_t rem = b, d = last - 1; d >= 0; d--) { /* b's position among the outer dimensions */
    idx[d] = rem % j->ydims[d];
    rem /= j->ydims[d];
  }
  for (int64_t r = b; r < e; r++) {
    char *row = j->y + r * width * es;
    int64_t in_row = 0;
    bool inside = true;
    for (int d = 0; d < last && inside; d++) {
      int64_t i = idx[d] - j->before[d];
      inside = i >= 0 && i < j->xdims[d];
      in_row = in_row * j->xdims[d] + i;
    }
    if (inside && j->xdims[last] > 0) {
      int64_t lo = j->before[last], n = j->xdims[last];
      pad_fill(j, row, lo);
      memcpy(row + lo * es, j->x + in_row * n * es, (size_t)(n * es));
      pad_fill(j, row + (lo + n) * es, width - lo - n);
    } else {
      pad_fill(j, row, width);
    }
    for (int d = last - 1; d >= 0; d--) { /* the next row */
      if (++idx[d] < j->ydims[d]) break;
      idx[d] = 0;
    }
  }
}

/* Padding of the last dimension alone (a channel pad: MobileNet-style shortcuts widen 16 channels to
 * 32) with 4-byte elements: rows of n values become rows of lo fill, n values, hi fill, in 16-value
 * vectors. pad_range's general walk cost 25 us on facemesh's 48x48x16 -> 48x48x32, mostly a
 * memcpy and two memsets per 64-byte row. */
typedef struct channel_pad {
  const uint32_t *x; /* any 4-byte dtype: values are moved as bits */
  uint32_t *y;
  int64_t n, lo, width;
  uint32_t fill;
} channel_pad;

TFD_VECTOR_CLONES static void channel_pad_range(int64_t b, int64_t e, void *arg) {
  const channel_pad *p = arg;
  int64_t n = p->n, lo = p->lo, width = p->width;
  for (int64_t r = b; r < e; r++) {
    const uint32_t *in = p->x + r * n;
    uint32_t *out = p->y + r * width;
    int64_t i = 0;
    for (; i < lo; i++) out[i] = p->fill;
    int64_t k = 0;
    for (; k + POOL_CHUNK <= n; k += POOL_CHUNK) *(i32x16 *)(out + lo + k) = *(const i32x16 *)(in + k);
    for (; k < n; k++) out[lo + k] = in[k];
    for (i = lo + n; i < width; i++) out[i] = p->fill;
  }
}

static void k_pad(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *x = c->inputs[0];
  int nd = tfd_tensor_ndims(x);
  int64_t before[TFD_MAX_DIMS], dims[TFD_MAX_DIMS];
  if (!tfd_pad_shape(c, k, before, dims)) return;
  size_t es = tfd_dtype_size(tfd_tensor_dtype(x));
  char fill[16] = {0};
  if (c->num_inputs > 2) memcpy(fill, tfd_tensor_const_data(c->inputs[2]), es);
  tfd_tensor *y = tfd_kernel_alloc(c, k, tfd_tensor_dtype(x), dims, nd);
  if (!y) return;
  c->outputs[0] = y;
  if (tfd_tensor_numel(y) == 0) return;
  pad_job j = {tfd_tensor_const_data(x), tfd_tensor_data(y), es, nd, {0}, {0}, {0}, {0}, true};
  memcpy(j.fill, fill, sizeof fill);
  for (size_t b = 0; b < es; b++) j.zero_fill = j.zero_fill && fill[b] == 0;
  for (int d = 0; d < nd; d++) j.xdims[d] = tfd_tensor_dim(x, d), j.ydims[d] = dims[d], j.before[d] = before[d];
  if (nd == 0) {
    memcpy(j.y, j.x, es);
    return;
  }
  int64_t rows = tfd_tensor_numel(y) / dims[nd - 1];
  bool last_only = es == 4;
  for (int d = 0; d < nd - 1 && last_only; d++) last_only = dims[d] == j.xdims[d];
  if (last_only) {
    channel_pad cp = {(const uint32_t *)(const void *)j.x, (uint32_t *)(void *)j.y, j.xdims[nd - 1], before[nd - 1],
                      dims[nd - 1], 0};
    memcpy(&cp.fill, fill, sizeof cp.fill);
    tfd_threadpool_parallel_for(c->intra_pool, rows, dims[nd - 1] + 1, channel_pad_range, &cp);
    return;
  }
  tfd_threadpool_parallel_for(c->intra_pool, rows, dims[nd - 1] * (int64_t)es / 4 + 1, pad_range, &j);
}

/* ---- Prelu: x > 0 ? x : alpha * x, alpha over the trailing dimensions (see tfd_prelu_alpha_size) ---- */
static void k_prelu(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *x = c->inputs[0], *a = c->inputs[1];
  int nd;
  int64_t dims[TFD_MAX_DIMS], na;
  if (!tfd_prelu_check(c, k, dims, &nd, &na)) return;
  tfd_tensor *y = tfd_kernel_forward_or_alloc(c, k, 0, TFD_FLOAT32, dims, nd);
  if (!y) return;
  c->outputs[0] = y;
  const float *in = tfd_tensor_const_data(x), *al = tfd_tensor_const_data(a);
  float *o = tfd_tensor_data(y);
  int64_t n = tfd_tensor_numel(x);
  if (na == 1) {
    tfd_activation_f32(TFD_ACT_LEAKY_RELU, o, in, n, al[0]);
    return;
  }
  tfd_prelu_f32(o, in, al, na, 0, n);
}

/* ---- setup ---- */
static void conv_cleanup(tfd_kernel *k) {
  conv_params *p = k->state;
  if (p) {
    tfd_dnnl_conv_free(p->dnnl);
    tfd_pointwise_free(p->pw);
    pthread_mutex_destroy(&p->pw_mu);
  }
  free(k->state);
  k->state = NULL;
}

tfd_code tfd_setup_conv(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  const tfd_node_def *node = init->node;
  const char *op = init->op->name;
  conv_params *p = calloc(1, sizeof *p);
  if (!p) return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  pthread_mutex_init(&p->pw_mu, NULL);
  k->state = p;
  k->cleanup = conv_cleanup;
  p->op = strstr(op, "DepthwiseConv2dNative") ? OP_DEPTHWISE /* and _FusedDepthwiseConv2dNative */
          : strcmp(op, "MaxPool") == 0             ? OP_MAXPOOL
          : strcmp(op, "AvgPool") == 0             ? OP_AVGPOOL
          : strncmp(op, "Pad", 3) == 0             ? OP_PAD
          : strcmp(op, "Prelu") == 0               ? OP_PRELU
                                                   : OP_CONV;
  if (p->op == OP_PAD || p->op == OP_PRELU) {
    k->compute = p->op == OP_PAD ? k_pad : k_prelu;
    return TFD_OK;
  }
  tfd_conv_attrs a;
  if (tfd_conv_attrs_read(node, op, init->num_inputs, &a, st) != TFD_OK) return tfd_status_code(st);
  p->win = a.win;
  p->ksize[0] = a.ksize[0], p->ksize[1] = a.ksize[1];
  p->bias = a.f.bias, p->add = a.f.add, p->batch_norm = a.f.batch_norm, p->prelu = a.f.prelu;
  p->epsilon = a.f.epsilon, p->act = a.f.act, p->alpha = a.alpha;
  if (p->op == OP_MAXPOOL || p->op == OP_AVGPOOL) {
    k->compute = k_pool;
    return TFD_OK;
  }
  bool constant = p->filter_constant = tfd_attr_bool(node, TFD_WEIGHTS_CONSTANT_ATTR, false);
  if (p->op == OP_DEPTHWISE) {
    p->dnnl = tfd_dnnl_conv_new(true, p->bias, p->prelu ? TFD_ACT_NONE : p->act, (float)p->alpha, constant, false);
    k->compute = k_depthwise;
    return TFD_OK;
  }
  /* oneDNN 2.6 makes no fast convolution with a Prelu post-op, so Prelu and the batch norm (and the
   * activation after them) run in this file's epilogue, on rows oneDNN just wrote. */
  p->dnnl = tfd_dnnl_conv_new(false, p->bias, p->prelu || p->batch_norm ? TFD_ACT_NONE : p->act, (float)p->alpha, constant,
                              p->add);
  k->compute = k_conv2d;
  return TFD_OK;
}
