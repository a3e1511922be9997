/* Conv2D, _FusedConv2D, DepthwiseConv2dNative and Conv2DBackpropInput on CUDA GPUs (device_math.h's
 * conv2d entry) through cuDNN 9's legacy convolution API, NHWC throughout.
 *
 * TensorFlow's HWIO filter is rewritten into cuDNN's NHWC filter layout [o, kh, kw, c/g] by one
 * small kernel. A filter the optimiser marked constant (a Const's output) is rewritten once, on its
 * kernel's first call, into device memory the kernel keeps (tfd_dm_conv.packed_filter), as the CPU
 * kernels pack constant weights once; any other filter, on every call, into a workspace. The address
 * of a filter alone could not say it is unchanged: the allocator hands freed memory out again.
 * Asymmetric padding (conv_plan.h) copies the input
 * into a zero-padded workspace (forward) or computes the gradient into one and crops it (backprop).
 * Depthwise filters are grouped convolutions (c groups). Batches too large for cuDNN's ints go in
 * chunks of images.
 *
 * The algorithm is cuDNN's heuristic ranking (cudnnGet*Algorithm_v7), tried in order on the first
 * call of a shape, the first that cuDNN accepts kept in the device's cache (key: every size,
 * padding, stride, dilation, group count and dtype); shapes cuDNN takes no algorithm for run the
 * direct kernel (epilogue.cu), and the cache says so too. Math is FMA only (no TF32 tensor cores),
 * and the FFT and Winograd algorithms are left out (their transforms lose digits that a direct sum
 * keeps), so float32 results stay within float32 rounding of the CPU's. _FusedConv2D's epilogue (bias or scale and
 * shift, the addend, Prelu or an activation) is one kernel after the convolution; when the addend is
 * y itself, the convolution goes to a workspace first.
 *
 * Built without cuDNN (not found at configure time), every convolution is UNIMPLEMENTED. */
#include <stdlib.h>
#include <string.h>

#include "../../runtime/core/log.h"
#include "conv_plan.h"
#include "cuda_kernels.h"

#ifndef TFDEV_HAVE_CUDNN

void tfd_cuda_conv_release(tfd_cuda_kernels *k) { (void)k; }

void tfd_cuda_conv_release_packed(struct tfd_device *d, void *packed) { (void)d, (void)packed; }

tfd_code tfd_cuda_conv2d(struct tfd_device *d, const tfd_dm_conv *p, tfd_status *st) {
  int64_t count = p->backprop_input ? p->n * p->h * p->w * p->c : p->n * p->oh * p->ow * p->o;
  if (count <= 0) return TFD_OK;
  return tfd_status_setf(st, TFD_UNIMPLEMENTED,
                         "%s: cuda conv2d: this CUDA backend was built without cuDNN (convolutions need it)",
                         d && d->name ? d->name : "GPU");
}

#else

#include <cudnn.h>

#include "cuda_libs.h"

/* cuDNN, opened by ensure_handle before any other call of this file reaches it. */
#define CUDNN tfd_cuda_dnn_load(NULL, 0)

#define CONV_CACHE_ENTRIES 256

enum { KEY_CONV_FORWARD = 2, KEY_CONV_BACKWARD_DATA = 3 };
enum { CHOICE_CUDNN = 1, CHOICE_DIRECT = 2 };

typedef struct conv_choice {
  int kind; /* CHOICE_CUDNN or CHOICE_DIRECT */
  int algo; /* cudnnConvolutionFwdAlgo_t or cudnnConvolutionBwdDataAlgo_t */
  size_t workspace;
} conv_choice;

void tfd_cuda_conv_release(tfd_cuda_kernels *k) {
  if (k->dnn) CUDNN->cudnnDestroy((cudnnHandle_t)k->dnn);
  tfd_algo_cache_free(k->conv_algos);
  k->dnn = NULL;
  k->conv_algos = NULL;
}

static tfd_code dnn_failed(const tfd_cuda_call *c, const char *what, cudnnStatus_t s, tfd_status *st) {
  return tfd_cuda_failf(c, TFD_INTERNAL, st, "%s failed: %s", what, CUDNN->cudnnGetErrorString(s));
}

/* With dnn_mu held. */
static tfd_code ensure_handle(const tfd_cuda_call *c, tfd_status *st) {
  tfd_cuda_kernels *k = c->k;
  char why[512];
  if (!tfd_cuda_dnn_load(why, sizeof why))
    return tfd_cuda_failf(c, TFD_FAILED_PRECONDITION, st, "convolutions on a GPU need cuDNN: %s", why);
  if (!k->dnn) {
    cudnnHandle_t h = NULL;
    cudnnStatus_t s = CUDNN->cudnnCreate(&h);
    if (s != CUDNN_STATUS_SUCCESS) return dnn_failed(c, "cudnnCreate", s, st);
    if ((s = CUDNN->cudnnSetStream(h, c->l.stream)) != CUDNN_STATUS_SUCCESS) {
      CUDNN->cudnnDestroy(h);
      return dnn_failed(c, "cudnnSetStream", s, st);
    }
    k->dnn = h;
  }
  if (!k->conv_algos && !(k->conv_algos = tfd_algo_cache_new(CONV_CACHE_ENTRIES, sizeof(conv_choice))))
    return tfd_cuda_failf(c, TFD_RESOURCE_EXHAUSTED, st, "out of memory for the cuDNN algorithm cache");
  /* The call's stream, every call: it is a capture stream while this thread records a CUDA graph. */
  cudnnStatus_t s = CUDNN->cudnnSetStream((cudnnHandle_t)k->dnn, c->l.stream);
  return s == CUDNN_STATUS_SUCCESS ? TFD_OK : dnn_failed(c, "cudnnSetStream", s, st);
}

/* The descriptors of one chunk of nb images. */
typedef struct descs {
  cudnnTensorDescriptor_t x, y; /* forward's input and output; backprop: dx and dy */
  cudnnFilterDescriptor_t w;
  cudnnConvolutionDescriptor_t conv;
} descs;

static void descs_free(descs *ds) {
  if (ds->conv) CUDNN->cudnnDestroyConvolutionDescriptor(ds->conv);
  if (ds->w) CUDNN->cudnnDestroyFilterDescriptor(ds->w);
  if (ds->y) CUDNN->cudnnDestroyTensorDescriptor(ds->y);
  if (ds->x) CUDNN->cudnnDestroyTensorDescriptor(ds->x);
  memset(ds, 0, sizeof *ds);
}

static tfd_code descs_make(const tfd_cuda_call *c, const tfd_dm_conv *p, const tfd_conv_plan *plan, int64_t nb,
                           descs *ds, tfd_status *st) {
  memset(ds, 0, sizeof *ds);
  cudnnDataType_t dt = p->dtype == TFD_FLOAT64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  cudnnStatus_t s = CUDNN_STATUS_SUCCESS;
  const char *what = "";
#define DNN(call, name)                 \
  if (s == CUDNN_STATUS_SUCCESS) {      \
    what = (name);                      \
    s = (call);                         \
  }
  DNN(CUDNN->cudnnCreateTensorDescriptor(&ds->x), "cudnnCreateTensorDescriptor");
  DNN(CUDNN->cudnnCreateTensorDescriptor(&ds->y), "cudnnCreateTensorDescriptor");
  DNN(CUDNN->cudnnCreateFilterDescriptor(&ds->w), "cudnnCreateFilterDescriptor");
  DNN(CUDNN->cudnnCreateConvolutionDescriptor(&ds->conv), "cudnnCreateConvolutionDescriptor");
  DNN(CUDNN->cudnnSetTensor4dDescriptor(ds->x, CUDNN_TENSOR_NHWC, dt, (int)nb, (int)p->c, (int)plan->hp, (int)plan->wp),
      "cudnnSetTensor4dDescriptor(input)");
  DNN(CUDNN->cudnnSetTensor4dDescriptor(ds->y, CUDNN_TENSOR_NHWC, dt, (int)nb, (int)p->o, (int)p->oh, (int)p->ow),
      "cudnnSetTensor4dDescriptor(output)");
  DNN(CUDNN->cudnnSetFilter4dDescriptor(ds->w, dt, CUDNN_TENSOR_NHWC, (int)p->o, (int)plan->cg, (int)p->kh, (int)p->kw),
      "cudnnSetFilter4dDescriptor");
  DNN(CUDNN->cudnnSetConvolution2dDescriptor(ds->conv, (int)plan->pad[0], (int)plan->pad[1], (int)p->stride[0],
                                      (int)p->stride[1], (int)p->dilation[0], (int)p->dilation[1],
                                      CUDNN_CROSS_CORRELATION, dt),
      "cudnnSetConvolution2dDescriptor");
  DNN(CUDNN->cudnnSetConvolutionGroupCount(ds->conv, (int)plan->groups), "cudnnSetConvolutionGroupCount");
  DNN(CUDNN->cudnnSetConvolutionMathType(ds->conv, CUDNN_FMA_MATH), "cudnnSetConvolutionMathType");
  int on = 0, oc = 0, oh = 0, ow = 0;
  DNN(CUDNN->cudnnGetConvolution2dForwardOutputDim(ds->conv, ds->x, ds->w, &on, &oc, &oh, &ow),
      "cudnnGetConvolution2dForwardOutputDim");
#undef DNN
  if (s != CUDNN_STATUS_SUCCESS) {
    descs_free(ds);
    return dnn_failed(c, what, s, st);
  }
  if (on != nb || oc != p->o || oh != p->oh || ow != p->ow) {
    descs_free(ds);
    return tfd_cuda_failf(c, TFD_INTERNAL, st, "cuDNN makes [%d, %d, %d, %d] of this convolution, not [%lld, %lld, %lld, %lld]",
                          on, oh, ow, oc, (long long)nb, (long long)p->oh, (long long)p->ow, (long long)p->o);
  }
  return TFD_OK;
}

static void make_key(tfd_algo_key *key, const tfd_dm_conv *p, const tfd_conv_plan *plan, int64_t nb) {
  tfd_algo_key_init(key, p->backprop_input ? KEY_CONV_BACKWARD_DATA : KEY_CONV_FORWARD);
  int64_t words[] = {p->dtype,      nb,           plan->hp,     plan->wp,      p->c,           p->o,
                     p->oh,         p->ow,        p->kh,        p->kw,         plan->pad[0],   plan->pad[1],
                     p->stride[0],  p->stride[1], p->dilation[0], p->dilation[1], plan->groups};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) tfd_algo_key_add(key, words[i]);
}

/* A status of a convolution call that means "not this algorithm here", so the next one is tried. */
static bool refused(cudnnStatus_t s) {
  return CUDNN_STATUS_CATEGORY(s) == CUDNN_STATUS_NOT_SUPPORTED || CUDNN_STATUS_CATEGORY(s) == CUDNN_STATUS_BAD_PARAM;
}

/* One cuDNN call of algorithm algo with its workspace (allocated here). */
static cudnnStatus_t run_algo(const tfd_cuda_call *c, const tfd_dm_conv *p, const descs *ds, int algo, size_t ws_bytes,
                              const void *in, const void *filter, void *out, bool *no_memory, tfd_status *st) {
  *no_memory = false;
  void *ws = NULL;
  if (ws_bytes && !(ws = tfd_cuda_workspace(c, ws_bytes, st))) {
    *no_memory = true;
    return CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED;
  }
  static const float one_f = 1.0f, zero_f = 0.0f;
  static const double one_d = 1.0, zero_d = 0.0;
  bool f64 = p->dtype == TFD_FLOAT64;
  const void *one = f64 ? (const void *)&one_d : (const void *)&one_f, *zero = f64 ? (const void *)&zero_d : (const void *)&zero_f;
  cudnnHandle_t h = (cudnnHandle_t)c->k->dnn;
  cudnnStatus_t s =
      p->backprop_input
          ? CUDNN->cudnnConvolutionBackwardData(h, one, ds->w, filter, ds->y, in, ds->conv, (cudnnConvolutionBwdDataAlgo_t)algo,
                                         ws, ws_bytes, zero, ds->x, out)
          : CUDNN->cudnnConvolutionForward(h, one, ds->x, in, ds->w, filter, ds->conv, (cudnnConvolutionFwdAlgo_t)algo, ws,
                                    ws_bytes, zero, ds->y, out);
  tfd_cuda_workspace_free(c, ws, ws_bytes);
  return s;
}

/* The first run of a shape: cuDNN's ranking tried in order. *choice is what worked (or DIRECT). */
static tfd_code pick_and_run(const tfd_cuda_call *c, const tfd_dm_conv *p, const descs *ds, const void *in,
                             const void *filter, void *out, conv_choice *choice, tfd_status *st) {
  cudnnHandle_t h = (cudnnHandle_t)c->k->dnn;
  int algos[16], returned = 0, n = 0;
  cudnnStatus_t s;
  if (p->backprop_input) {
    cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    s = CUDNN->cudnnGetConvolutionBackwardDataAlgorithm_v7(h, ds->w, ds->y, ds->conv, ds->x, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
                                                    &returned, perf);
    for (int i = 0; s == CUDNN_STATUS_SUCCESS && i < returned && n < 16; i++)
      if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].algo != CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT &&
          perf[i].algo != CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING &&
          perf[i].algo != CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD &&
          perf[i].algo != CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED)
        algos[n++] = (int)perf[i].algo;
  } else {
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    s = CUDNN->cudnnGetConvolutionForwardAlgorithm_v7(h, ds->x, ds->w, ds->conv, ds->y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                               &returned, perf);
    for (int i = 0; s == CUDNN_STATUS_SUCCESS && i < returned && n < 16; i++)
      if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].algo != CUDNN_CONVOLUTION_FWD_ALGO_FFT &&
          perf[i].algo != CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING && perf[i].algo != CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD &&
          perf[i].algo != CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED)
        algos[n++] = (int)perf[i].algo;
  }
  if (s != CUDNN_STATUS_SUCCESS && !refused(s))
    return dnn_failed(c, p->backprop_input ? "cudnnGetConvolutionBackwardDataAlgorithm_v7"
                                           : "cudnnGetConvolutionForwardAlgorithm_v7",
                      s, st);
  for (int i = 0; i < n; i++) {
    size_t bytes = 0;
    s = p->backprop_input
            ? CUDNN->cudnnGetConvolutionBackwardDataWorkspaceSize(h, ds->w, ds->y, ds->conv, ds->x,
                                                           (cudnnConvolutionBwdDataAlgo_t)algos[i], &bytes)
            : CUDNN->cudnnGetConvolutionForwardWorkspaceSize(h, ds->x, ds->w, ds->conv, ds->y,
                                                      (cudnnConvolutionFwdAlgo_t)algos[i], &bytes);
    if (s != CUDNN_STATUS_SUCCESS) continue;
    bool no_memory; /* a workspace larger than what is free: try the next algorithm (no status to set) */
    s = run_algo(c, p, ds, algos[i], bytes, in, filter, out, &no_memory, NULL);
    if (no_memory || refused(s)) continue;
    if (s != CUDNN_STATUS_SUCCESS)
      return dnn_failed(c, p->backprop_input ? "cudnnConvolutionBackwardData" : "cudnnConvolutionForward", s, st);
    choice->kind = CHOICE_CUDNN;
    choice->algo = algos[i];
    choice->workspace = bytes;
    tfd_log(TFD_LOG_DEBUG, "%s: conv2d%s [%lld, %lld, %lld, %lld] x [%lld, %lld] -> %lld: cuDNN algorithm %d, %zu bytes of workspace",
            c->ctx->name, p->backprop_input ? " (backprop input)" : "", (long long)p->n, (long long)p->h, (long long)p->w,
            (long long)p->c, (long long)p->kh, (long long)p->kw, (long long)p->o, algos[i], bytes);
    return TFD_OK;
  }
  choice->kind = CHOICE_DIRECT;
  tfd_log(TFD_LOG_WARNING,
          "%s: conv2d%s [%lld, %lld, %lld, %lld] x [%lld, %lld] -> %lld (%s): cuDNN offers no algorithm with FMA math and "
          "no FFT or Winograd (of %d ranked); the direct kernel runs it, slowly",
          c->ctx->name, p->backprop_input ? " (backprop input)" : "", (long long)p->n, (long long)p->h, (long long)p->w,
          (long long)p->c, (long long)p->kh, (long long)p->kw, (long long)p->o, tfd_cuda_dtype_name(p->dtype), returned);
  return TFD_OK;
}

static bool overlap(const void *a, const void *b, size_t bytes) {
  uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
  return x < y + bytes && y < x + bytes;
}

/* The direct kernel on images [b0, b0 + nb) of p, from `in` (the chunk's input, unpadded) into out. */
static cudaError_t direct_chunk(const tfd_cuda_call *c, const tfd_dm_conv *p, int64_t b0, int64_t nb, void *out) {
  tfd_dm_conv q = *p;
  size_t eb = tfd_cuda_dtype_size(p->dtype);
  int64_t in_image = p->backprop_input ? p->oh * p->ow * p->o : p->h * p->w * p->c;
  int64_t out_image = p->backprop_input ? p->h * p->w * p->c : p->oh * p->ow * p->o;
  q.n = nb;
  q.x = (const char *)p->x + b0 * in_image * (int64_t)eb;
  q.y = (char *)out + b0 * out_image * (int64_t)eb;
  return tfd_cuda_conv_direct(&c->l, &q);
}

/* A constant filter in cuDNN's layout, kept in its kernel's slot (tfd_dm_conv.packed_filter). */
typedef struct packed_filter {
  void *data; /* device memory, from the device's allocator */
  size_t bytes;
  tfd_allocator *allocator;
} packed_filter;

/* The filter in cuDNN's layout [o, kh, kw, c/g] for this call (under dnn_mu): the kernel's packed
 * copy of its constant filter when it has one; else rewritten by one kernel, into a copy the kernel
 * keeps when its filter is constant (not while recording a step graph: recorded, the rewrite would
 * only run when the graph is launched, and a recording that fails is never launched) or into *ws, a
 * workspace the caller frees. NULL with st set when memory or the launch fails. */
static const void *dnn_filter(const tfd_cuda_call *c, const tfd_dm_conv *p, size_t bytes, void **ws, tfd_status *st) {
  packed_filter *pf = p->packed_filter ? *p->packed_filter : NULL;
  if (pf && pf->bytes == bytes) return pf->data; /* the values of a constant do not change */
  bool keep = p->packed_filter && !pf && !tfd_gpu_ctx_capturing(c->ctx);
  if (keep && !(pf = calloc(1, sizeof *pf))) keep = false;
  void *dst = keep ? tfd_cuda_workspace(c, bytes, st) : (*ws = tfd_cuda_workspace(c, bytes, st));
  if (!dst) {
    if (keep) free(pf);
    return NULL;
  }
  cudaError_t err = tfd_cuda_filter_to_ohwi(&c->l, p->dtype, p->filter, p->kh, p->kw, p->c, p->o, p->depthwise, dst);
  if (err != cudaSuccess) { /* nothing kept; *ws, when used, is the caller's to free */
    if (keep) {
      tfd_cuda_workspace_free(c, dst, bytes);
      free(pf);
    }
    tfd_cuda_fail(c, "filter layout kernel launch", err, st);
    return NULL;
  }
  if (keep) {
    *pf = (packed_filter){dst, bytes, c->g->allocator};
    *p->packed_filter = pf;
  }
  return dst;
}

void tfd_cuda_conv_release_packed(struct tfd_device *d, void *packed) {
  (void)d;
  packed_filter *pf = packed;
  tfd_allocator_deallocate(pf->allocator, pf->data, pf->bytes);
  free(pf);
}

tfd_code tfd_cuda_conv2d(struct tfd_device *d, const tfd_dm_conv *p, tfd_status *st) {
  if (p->dtype != TFD_FLOAT32 && p->dtype != TFD_FLOAT64) return tfd_cuda_unimplemented(d, "conv2d", p->dtype, st);
  tfd_conv_plan plan;
  char why[256];
  if (!tfd_conv_plan_make(p, &plan, why, sizeof why))
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "%s: cuda conv2d: %s", d && d->name ? d->name : "GPU", why);
  bool back = p->backprop_input;
  int64_t in_image = back ? p->oh * p->ow * p->o : p->h * p->w * p->c;
  int64_t out_image = back ? p->h * p->w * p->c : p->oh * p->ow * p->o;
  int64_t count = p->n * out_image;
  if (count == 0) return TFD_OK;
  tfd_cuda_call c;
  if (tfd_cuda_begin(d, back ? "conv2d (backprop input)" : "conv2d", p->dtype, count, &c, st) != TFD_OK)
    return TFD_INTERNAL;
  size_t eb = tfd_cuda_dtype_size(p->dtype), out_bytes = (size_t)count * eb;
  bool epilogue = !back && (p->bias || p->scale || p->shift || p->addend || p->prelu || p->act != TFD_ACT_NONE);
  /* Where the convolution itself goes: y, unless the epilogue still has to read an addend there. */
  bool to_workspace = epilogue && p->addend && overlap(p->addend, p->y, out_bytes);
  void *out = p->y, *result_ws = NULL, *filter_ws = NULL, *pad_ws = NULL;
  size_t filter_bytes = (size_t)plan.filter_elems * eb, pad_bytes = 0;
  tfd_code code = TFD_OK;
  cudaError_t err = cudaSuccess;
  if (to_workspace && !(out = result_ws = tfd_cuda_workspace(&c, out_bytes, st))) return TFD_RESOURCE_EXHAUSTED;

  if (plan.empty_sum || p->o == 0 || in_image == 0) { /* nothing to sum over: zeros */
    err = cudaMemsetAsync(out, 0, out_bytes, c.l.stream);
    if (err != cudaSuccess) code = tfd_cuda_fail(&c, "cudaMemsetAsync", err, st);
  } else if (!plan.use_cudnn) {
    err = direct_chunk(&c, p, 0, p->n, out);
    if (err != cudaSuccess) code = tfd_cuda_fail(&c, "direct convolution kernel launch", err, st);
  } else {
    pthread_mutex_lock(&c.k->dnn_mu);
    code = ensure_handle(&c, st);
    const void *filter_dnn = NULL; /* cuDNN's filter layout, made for the first chunk cuDNN runs */
    /* The padded image buffer: forward's input, backprop's gradient before the crop; chunk_n images. */
    int64_t padded_image = plan.hp * plan.wp * p->c;
    for (int64_t b0 = 0; b0 < p->n && code == TFD_OK; b0 += plan.chunk_n) {
      int64_t nb = p->n - b0 < plan.chunk_n ? p->n - b0 : plan.chunk_n;
      const char *in = (const char *)p->x + b0 * in_image * (int64_t)eb;
      char *dst = (char *)out + b0 * out_image * (int64_t)eb;
      const void *conv_in = in;
      void *conv_out = dst;
      tfd_algo_key key;
      make_key(&key, p, &plan, nb);
      conv_choice choice;
      bool known = tfd_algo_cache_get(c.k->conv_algos, &key, &choice);
      if (known && choice.kind == CHOICE_DIRECT) {
        /* The direct kernel reads TensorFlow's filter and the unpadded input itself: none of what
         * only cuDNN needs (its filter layout, the padded copy, descriptors) is made for it. */
        err = direct_chunk(&c, p, b0, nb, out);
        if (err != cudaSuccess) code = tfd_cuda_fail(&c, "direct convolution kernel launch", err, st);
        continue;
      }
      if (!filter_dnn && !(filter_dnn = dnn_filter(&c, p, filter_bytes, &filter_ws, st))) {
        code = tfd_status_code(st) != TFD_OK ? tfd_status_code(st) : TFD_INTERNAL;
        break;
      }
      if (plan.explicit_pad && !pad_ws) {
        pad_bytes = (size_t)(plan.chunk_n * padded_image) * eb;
        if (!(pad_ws = tfd_cuda_workspace(&c, pad_bytes, st))) {
          code = TFD_RESOURCE_EXHAUSTED;
          break;
        }
      }
      if (plan.explicit_pad && !back) {
        err = tfd_cuda_pad_nhwc(&c.l, eb, in, nb, p->h, p->w, p->c, plan.extra_before[0], plan.extra_after[0],
                                plan.extra_before[1], plan.extra_after[1], pad_ws);
        if (err != cudaSuccess) {
          code = tfd_cuda_fail(&c, "padding kernel launch", err, st);
          break;
        }
        conv_in = pad_ws;
      } else if (plan.explicit_pad) {
        conv_out = pad_ws;
      }
      descs ds;
      if ((code = descs_make(&c, p, &plan, nb, &ds, st)) != TFD_OK) break;
      bool ran = false;
      if (!known) {
        memset(&choice, 0, sizeof choice);
        code = pick_and_run(&c, p, &ds, conv_in, filter_dnn, conv_out, &choice, st);
        if (code == TFD_OK) tfd_algo_cache_put(c.k->conv_algos, &key, &choice);
        ran = code == TFD_OK && choice.kind == CHOICE_CUDNN;
      }
      if (code == TFD_OK && !ran && choice.kind == CHOICE_CUDNN) {
        bool no_memory;
        cudnnStatus_t s = run_algo(&c, p, &ds, choice.algo, choice.workspace, conv_in, filter_dnn, conv_out, &no_memory, st);
        if (no_memory) code = TFD_RESOURCE_EXHAUSTED;
        else if (s != CUDNN_STATUS_SUCCESS)
          code = dnn_failed(&c, back ? "cudnnConvolutionBackwardData" : "cudnnConvolutionForward", s, st);
        ran = code == TFD_OK;
      }
      descs_free(&ds);
      if (code != TFD_OK) break;
      if (!ran) { /* cuDNN has no algorithm for this shape: the direct kernel, from the unpadded input */
        err = direct_chunk(&c, p, b0, nb, out);
        if (err != cudaSuccess) code = tfd_cuda_fail(&c, "direct convolution kernel launch", err, st);
        continue;
      }
      if (plan.explicit_pad && back) {
        err = tfd_cuda_crop_nhwc(&c.l, eb, pad_ws, nb, plan.hp, plan.wp, p->c, plan.extra_before[0],
                                 plan.extra_before[1], p->h, p->w, dst);
        if (err != cudaSuccess) code = tfd_cuda_fail(&c, "crop kernel launch", err, st);
      }
    }
    pthread_mutex_unlock(&c.k->dnn_mu);
  }
  if (code == TFD_OK && epilogue) {
    tfd_cuda_epilogue e = {p->dtype, out,     p->y,     count,   p->o,     p->bias, p->scale,
                           p->shift, p->addend, p->prelu, p->prelu_n, p->act, p->alpha};
    err = tfd_cuda_conv_epilogue(&c.l, &e);
    if (err != cudaSuccess) code = tfd_cuda_fail(&c, "convolution epilogue kernel launch", err, st);
  }
  /* Queued work owns these now; the allocator reuses them only after it, in stream order. */
  tfd_cuda_workspace_free(&c, pad_ws, pad_bytes);
  tfd_cuda_workspace_free(&c, filter_ws, filter_bytes);
  tfd_cuda_workspace_free(&c, result_ws, out_bytes);
  return code;
}

#endif
