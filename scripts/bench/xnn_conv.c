/* XNNPACK convolutions with packed filters, cached per shape (see xnn_conv.h). XNNPACK takes
 * TensorFlow's NHWC activations as they lie; its regular convolution wants the filter as OHWI, so
 * TensorFlow's HWIO filter is transposed into a scratch buffer before packing, while its depthwise
 * layout ([kh][kw][c * m], XNN_FLAG_DEPTHWISE_CONVOLUTION) is TensorFlow's [kh, kw, c, m] as is.
 * Dilations and padding mean the same in both (1: no dilation; explicit pads before and after).
 *
 * Written against Debian 12's XNNPACK (git 2022-02-16) and pthreadpool (git 2021-05-07). */
#include "xnn_conv.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/core/status_internal.h"

#ifndef TFDEV_WITH_XNNPACK

tfd_xnn_conv *tfd_xnn_conv_new(bool depthwise, bool bias, tfd_activation act, bool filter_constant) {
  (void)depthwise, (void)bias, (void)act, (void)filter_constant;
  return NULL;
}
void tfd_xnn_conv_free(tfd_xnn_conv *p) { (void)p; }
tfd_code tfd_xnn_conv_run(tfd_xnn_conv *p, const tfd_xnn_conv_shape *s, const float *x, const float *filter,
                          const float *bias, float *y, int threads, tfd_status *st) {
  (void)p, (void)s, (void)x, (void)filter, (void)bias, (void)y, (void)threads;
  return tfd_status_setf(st, TFD_UNIMPLEMENTED, "tfdev was built without XNNPACK");
}

#else

#include <math.h>
#include <pthreadpool.h>
#include <xnnpack.h>

#define CACHED_SHAPES 4
/* The smallest page size of the targets we build for: a read that stays within one 4 KiB-aligned
 * block that holds a byte of the caller's buffer cannot fault, whatever the real page size. */
#define SAFE_BLOCK 4096u

/* xnn_initialize fills XNNPACK's process-wide table of micro-kernels for this CPU. It is called
 * once per process (pthread_once) and never undone: the table is the library's own global state,
 * shared by every tfd_xnn_conv, and xnn_deinitialize would pull it from under objects still alive.
 * This and the status it left are the only global state of this file. */
static pthread_once_t xnn_once = PTHREAD_ONCE_INIT;
static enum xnn_status xnn_init_status = xnn_status_uninitialized;

static void xnn_init_once(void) { xnn_init_status = xnn_initialize(NULL); }

/* One packed operator of a constant filter. */
typedef struct xnn_entry {
  tfd_xnn_conv_shape shape;
  const float *filter; /* the address the packed weights came from */
  float *bias;         /* owned: a copy of the o biases packed into op (NULL without bias) */
  uint64_t used;
  xnn_operator_t op; /* owned: xnn_delete_operator */
} xnn_entry;

struct tfd_xnn_conv {
  bool depthwise, has_bias, filter_constant;
  float out_min, out_max; /* the activation, as XNNPACK's output clamp */
  pthread_mutex_t mu;     /* serialises runs: an XNNPACK operator and a pthreadpool run one job at a time */
  pthreadpool_t pool;     /* owned, made on the first run with threads > 1; NULL until then */
  int pool_threads;
  /* Owned scratch. filter_t: a regular filter transposed to OHWI, kept between runs only for a
   * filter that is not constant (it is transposed on every run then). x_pad: the input copied with
   * XNN_EXTRA_BYTES after it, for inputs whose end lies near a page end (see needs_padding). */
  float *filter_t, *x_pad;
  size_t filter_t_cap, x_pad_cap; /* in bytes */
  xnn_entry entries[CACHED_SHAPES];
  int num_entries;
  uint64_t tick;
};

tfd_xnn_conv *tfd_xnn_conv_new(bool depthwise, bool bias, tfd_activation act, bool filter_constant) {
  float lo, hi;
  switch (act) {
  case TFD_ACT_NONE: lo = -INFINITY, hi = INFINITY; break;
  case TFD_ACT_RELU: lo = 0.0f, hi = INFINITY; break;
  case TFD_ACT_RELU6: lo = 0.0f, hi = 6.0f; break;
  default: return NULL; /* XNNPACK's operators fuse a clamp and nothing else */
  }
  if (pthread_once(&xnn_once, xnn_init_once) != 0 || xnn_init_status != xnn_status_success) return NULL;
  tfd_xnn_conv *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->depthwise = depthwise;
  p->has_bias = bias;
  p->filter_constant = filter_constant;
  p->out_min = lo;
  p->out_max = hi;
  if (pthread_mutex_init(&p->mu, NULL) != 0) {
    free(p);
    return NULL;
  }
  return p;
}

static void entry_clear(xnn_entry *e) {
  if (e->op) xnn_delete_operator(e->op);
  free(e->bias);
  memset(e, 0, sizeof *e);
}

void tfd_xnn_conv_free(tfd_xnn_conv *p) {
  if (!p) return;
  for (int i = 0; i < p->num_entries; i++) entry_clear(&p->entries[i]);
  if (p->pool) pthreadpool_destroy(p->pool); /* joins its workers */
  free(p->filter_t);
  free(p->x_pad);
  pthread_mutex_destroy(&p->mu);
  free(p);
}

/* Grows an owned scratch buffer to at least `bytes`; false (the old one kept) when out of memory. */
static bool reserve(float **buf, size_t *cap, size_t bytes) {
  if (*cap >= bytes) return true;
  float *b = malloc(bytes);
  if (!b) return false;
  free(*buf);
  *buf = b;
  *cap = bytes;
  return true;
}

/* a * b into *r; false on overflow. */
static bool mul_ok(uint64_t a, uint64_t b, uint64_t *r) { return !__builtin_mul_overflow(a, b, r); }

/* Why XNNPACK cannot run s as given (NULL: it can): every count must fit its uint32_t parameters
 * and the output size must be the one XNNPACK derives, or it would write outside y. */
static const char *bad_geometry(const tfd_xnn_conv_shape *s, bool depthwise, size_t *x_elems, size_t *y_elems) {
  const int64_t dims[] = {s->h, s->w, s->c, s->kh, s->kw, s->o, s->oh, s->ow, s->stride[0], s->stride[1],
                          s->dilation[0], s->dilation[1]};
  for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
    if (dims[i] < 1 || dims[i] > INT32_MAX) return "a size, stride or dilation is not in [1, 2^31)";
  if (s->n < 0 || s->n > INT32_MAX) return "the batch is not in [0, 2^31)";
  for (int d = 0; d < 2; d++)
    if (s->pad_before[d] < 0 || s->pad_before[d] > INT32_MAX || s->pad_after[d] < 0 || s->pad_after[d] > INT32_MAX)
      return "a padding is not in [0, 2^31)";
  if (depthwise && s->o % s->c != 0) return "depthwise output channels are not a multiple of the input channels";
  const int64_t in[2] = {s->h, s->w}, k[2] = {s->kh, s->kw}, out[2] = {s->oh, s->ow};
  for (int d = 0; d < 2; d++) {
    int64_t padded = in[d] + s->pad_before[d] + s->pad_after[d], span = (k[d] - 1) * s->dilation[d] + 1;
    if (padded < span || (padded - span) / s->stride[d] + 1 != out[d])
      return "the output size does not follow from the input, filter, strides, dilations and padding";
  }
  uint64_t a, b;
  if (!mul_ok((uint64_t)s->n, (uint64_t)(s->h * s->w), &a) || !mul_ok(a, (uint64_t)s->c, &a) ||
      !mul_ok(a, sizeof(float), &b) || b > SIZE_MAX - XNN_EXTRA_BYTES ||
      !mul_ok((uint64_t)s->n, (uint64_t)(s->oh * s->ow), &a) || !mul_ok(a, (uint64_t)s->o, &a) ||
      !mul_ok(a, sizeof(float), &b) || !mul_ok((uint64_t)(s->kh * s->kw), (uint64_t)s->c, &a) ||
      !mul_ok(a, (uint64_t)s->o, &a) || !mul_ok(a, sizeof(float), &b))
    return "a tensor is too large";
  *x_elems = (size_t)(s->n * s->h * s->w * s->c);
  *y_elems = (size_t)(s->n * s->oh * s->ow * s->o);
  return NULL;
}

/* Whether reading XNN_EXTRA_BYTES past the `bytes` at x could touch a block that holds none of x
 * (and so an unmapped page). Otherwise the over-read stays where x's last byte is mapped: it cannot
 * fault, and XNNPACK discards the lanes it read there. */
static bool needs_padding(const float *x, size_t bytes) {
  uintptr_t last = (uintptr_t)x + bytes - 1;
  return last / SAFE_BLOCK != (last + XNN_EXTRA_BYTES) / SAFE_BLOCK;
}

/* A new operator with filter and bias packed; its caller owns it. */
static enum xnn_status make_op(tfd_xnn_conv *p, const tfd_xnn_conv_shape *s, const float *filter, const float *bias,
                               xnn_operator_t *op) {
  /* XNN_FLAG_YIELD_WORKERS: pthreadpool's workers otherwise spin for 10^6 pause instructions (tens
   * of milliseconds) after every run, taking a core from whatever the executor runs next. */
  uint32_t flags = XNN_FLAG_YIELD_WORKERS, groups;
  size_t group_in, group_out;
  const float *kernel = filter;
  if (p->depthwise) {
    flags |= XNN_FLAG_DEPTHWISE_CONVOLUTION;
    groups = (uint32_t)s->c, group_in = 1, group_out = (size_t)(s->o / s->c);
  } else {
    groups = 1, group_in = (size_t)s->c, group_out = (size_t)s->o;
    size_t khw = (size_t)(s->kh * s->kw), c = (size_t)s->c, o = (size_t)s->o;
    if (!reserve(&p->filter_t, &p->filter_t_cap, khw * c * o * sizeof(float))) return xnn_status_out_of_memory;
    /* HWIO [k][i][o] -> OHWI [o][k][i]: reads stride o, writes contiguous. */
    for (size_t oc = 0; oc < o; oc++)
      for (size_t kk = 0; kk < khw; kk++) {
        const float *src = filter + kk * c * o + oc;
        float *dst = p->filter_t + (oc * khw + kk) * c;
        for (size_t i = 0; i < c; i++) dst[i] = src[i * o];
      }
    kernel = p->filter_t;
  }
  enum xnn_status st = xnn_create_convolution2d_nhwc_f32(
      (uint32_t)s->pad_before[0], (uint32_t)s->pad_after[1], (uint32_t)s->pad_after[0], (uint32_t)s->pad_before[1],
      (uint32_t)s->kh, (uint32_t)s->kw, (uint32_t)s->stride[0], (uint32_t)s->stride[1], (uint32_t)s->dilation[0],
      (uint32_t)s->dilation[1], groups, group_in, group_out, (size_t)s->c /* input pixel stride */,
      (size_t)s->o /* output pixel stride */, kernel, p->has_bias ? bias : NULL, p->out_min, p->out_max, flags, op);
  /* XNNPACK copied what it needs; a constant filter's transpose is not needed again. */
  if (p->filter_constant) {
    free(p->filter_t);
    p->filter_t = NULL;
    p->filter_t_cap = 0;
  }
  return st;
}

/* (Re)makes entry e for this shape, filter and bias. On failure e is left empty. */
static enum xnn_status entry_make(tfd_xnn_conv *p, xnn_entry *e, const tfd_xnn_conv_shape *s, const float *filter,
                                  const float *bias) {
  entry_clear(e);
  e->shape = *s;
  e->filter = filter;
  if (p->has_bias) {
    size_t bytes = (size_t)s->o * sizeof(float);
    if (!(e->bias = malloc(bytes))) return xnn_status_out_of_memory;
    memcpy(e->bias, bias, bytes);
  }
  enum xnn_status st = make_op(p, s, filter, bias, &e->op);
  if (st != xnn_status_success) {
    e->op = NULL; /* not made */
    entry_clear(e);
  }
  return st;
}

/* The operator for a constant filter: cached per (shape, filter address), repacked when the bias
 * differs from the packed copy, the least recently used entry replaced when all are taken. */
static xnn_operator_t cached_op(tfd_xnn_conv *p, const tfd_xnn_conv_shape *s, const float *filter, const float *bias,
                                enum xnn_status *st) {
  xnn_entry *e = NULL;
  for (int i = 0; i < p->num_entries && !e; i++)
    if (p->entries[i].filter == filter && memcmp(&p->entries[i].shape, s, sizeof *s) == 0) e = &p->entries[i];
  if (e && p->has_bias && memcmp(e->bias, bias, (size_t)s->o * sizeof(float)) != 0)
    *st = entry_make(p, e, s, filter, bias);
  if (!e) {
    if (p->num_entries < CACHED_SHAPES) {
      e = &p->entries[p->num_entries++];
    } else {
      e = &p->entries[0];
      for (int i = 1; i < CACHED_SHAPES; i++)
        if (p->entries[i].used < e->used) e = &p->entries[i];
    }
    *st = entry_make(p, e, s, filter, bias);
  }
  if (*st != xnn_status_success) { /* e is empty: move the last entry into its slot */
    *e = p->entries[--p->num_entries];
    memset(&p->entries[p->num_entries], 0, sizeof p->entries[p->num_entries]);
    return NULL;
  }
  e->used = ++p->tick;
  return e->op;
}

/* The pool for `threads` (NULL for one thread: XNNPACK then runs on the caller); false when it
 * could not be made. One pool is kept; a different count replaces it. */
static bool pool_for(tfd_xnn_conv *p, int threads, pthreadpool_t *pool) {
  *pool = NULL;
  if (threads <= 1) return true;
  if (p->pool && p->pool_threads != threads) {
    pthreadpool_destroy(p->pool);
    p->pool = NULL;
  }
  if (!p->pool) {
    /* threads - 1 workers: pthreadpool counts the thread that calls it as one of `threads`. */
    if (!(p->pool = pthreadpool_create((size_t)threads))) return false;
    p->pool_threads = threads;
  }
  *pool = p->pool;
  return true;
}

tfd_code tfd_xnn_conv_run(tfd_xnn_conv *p, const tfd_xnn_conv_shape *s, const float *x, const float *filter,
                          const float *bias, float *y, int threads, tfd_status *status) {
  size_t x_elems = 0, y_elems = 0;
  const char *bad = bad_geometry(s, p->depthwise, &x_elems, &y_elems);
  if (bad) return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "XNNPACK convolution: %s", bad);
  if (p->has_bias && !bias) return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "XNNPACK convolution: no bias given");
  if (y_elems == 0) return TFD_OK; /* an empty batch */
  if (threads < 1) threads = 1;
  enum xnn_status st = xnn_status_success;
  const char *stage = "setup";
  pthread_mutex_lock(&p->mu);
  pthreadpool_t pool;
  xnn_operator_t op = NULL;
  const float *input = x;
  if (!pool_for(p, threads, &pool)) {
    st = xnn_status_out_of_memory, stage = "making its thread pool";
  } else if (needs_padding(x, x_elems * sizeof(float))) {
    if (!reserve(&p->x_pad, &p->x_pad_cap, x_elems * sizeof(float) + XNN_EXTRA_BYTES)) {
      st = xnn_status_out_of_memory, stage = "padding the input";
    } else {
      memcpy(p->x_pad, x, x_elems * sizeof(float));
      memset((char *)p->x_pad + x_elems * sizeof(float), 0, XNN_EXTRA_BYTES);
      input = p->x_pad;
    }
  }
  if (st == xnn_status_success) {
    stage = "packing the filter";
    if (p->filter_constant) op = cached_op(p, s, filter, bias, &st);
    else st = make_op(p, s, filter, bias, &op);
  }
  if (st == xnn_status_success) {
    stage = "setup";
    st = xnn_setup_convolution2d_nhwc_f32(op, (size_t)s->n, (size_t)s->h, (size_t)s->w, input, y, pool);
  }
  if (st == xnn_status_success) {
    stage = "run";
    st = xnn_run_operator(op, pool);
  }
  if (!p->filter_constant && op) xnn_delete_operator(op); /* made for this run only */
  pthread_mutex_unlock(&p->mu);
  if (st == xnn_status_success) return TFD_OK;
  tfd_code code = TFD_INTERNAL;
  if (st == xnn_status_out_of_memory) code = TFD_RESOURCE_EXHAUSTED;
  else if (st == xnn_status_unsupported_parameter || st == xnn_status_unsupported_hardware) code = TFD_UNIMPLEMENTED;
  return tfd_status_setf(status, code, "XNNPACK convolution failed in %s with xnn_status %d", stage, (int)st);
}

#endif
