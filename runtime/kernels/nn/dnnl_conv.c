/* oneDNN convolutions with packed filters, cached per shape (see dnnl_conv.h). Memory
 * descriptors are built from strides, so TensorFlow's NHWC activations and HWIO filters are
 * described as they lie in memory, with no copies; oneDNN's dilation counts the gaps (TF - 1). */
#include "dnnl_conv.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/status_internal.h"

#ifndef TFDEV_WITH_ONEDNN

tfd_dnnl_conv *tfd_dnnl_conv_new(bool depthwise, bool bias, tfd_activation act, float alpha, bool filter_constant,
                                 bool add) {
  (void)depthwise, (void)bias, (void)act, (void)alpha, (void)filter_constant, (void)add;
  return NULL;
}
void tfd_dnnl_conv_free(tfd_dnnl_conv *p) { (void)p; }
tfd_code tfd_dnnl_conv_run(tfd_dnnl_conv *p, const tfd_dnnl_conv_shape *s, const float *x, const float *filter,
                           const float *bias, const float *addend, float *y, int threads, tfd_status *st) {
  (void)p, (void)s, (void)x, (void)filter, (void)bias, (void)addend, (void)y, (void)threads;
  return tfd_status_setf(st, TFD_UNIMPLEMENTED, "tfdev was built without oneDNN");
}

#else

#include <dnnl.h>
#include "../dnnl_common.h"
#include <omp.h>

typedef struct conv_entry {
  tfd_dnnl_conv_shape shape;
  int threads;
  const float *filter; /* the filter the packed weights came from (constant filters) */
  uint64_t used;
  dnnl_primitive_t prim, reorder;
  dnnl_memory_t src, weights_user, weights, bias, dst;
} conv_entry;

struct tfd_dnnl_conv {
  bool depthwise, has_bias, filter_constant, add;
  tfd_activation act;
  float alpha;
  tfd_dnnl_base base;
  conv_entry entries[TFD_DNNL_CACHED_SHAPES];
  int num_entries;
};

static void entry_clear(conv_entry *e) {
  if (e->prim) dnnl_primitive_destroy(e->prim);
  if (e->reorder) dnnl_primitive_destroy(e->reorder);
  dnnl_memory_t mems[] = {e->src, e->weights_user, e->weights, e->bias, e->dst};
  for (size_t i = 0; i < sizeof mems / sizeof mems[0]; i++)
    if (mems[i]) dnnl_memory_destroy(mems[i]);
  memset(e, 0, sizeof *e);
}

tfd_dnnl_conv *tfd_dnnl_conv_new(bool depthwise, bool bias, tfd_activation act, float alpha, bool filter_constant,
                                 bool add) {
  tfd_dnnl_conv *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  *p = (tfd_dnnl_conv){.depthwise = depthwise, .has_bias = bias, .filter_constant = filter_constant,
                       .add = add, .act = act, .alpha = alpha};
  if (!tfd_dnnl_base_init(&p->base)) {
    free(p);
    return NULL;
  }
  return p;
}

void tfd_dnnl_conv_free(tfd_dnnl_conv *p) {
  if (!p) return;
  for (int i = 0; i < p->num_entries; i++) entry_clear(&p->entries[i]);
  tfd_dnnl_base_destroy(&p->base);
  free(p);
}

static dnnl_status_t entry_make(tfd_dnnl_conv *p, conv_entry *e, const tfd_dnnl_conv_shape *s, const float *filter,
                                int threads) {
  dnnl_memory_desc_t src_md, dst_md, w_user, w_any, bias_md;
  dnnl_primitive_attr_t attr = NULL;
  dnnl_post_ops_t po = NULL;
  dnnl_primitive_desc_t pd = NULL, rpd = NULL;
  dnnl_convolution_desc_t desc;
  dnnl_status_t st;
  memset(e, 0, sizeof *e);
  e->shape = *s;
  e->threads = threads;
  e->filter = filter;
  /* NHWC activations: logical (n, c, h, w). */
  dnnl_dims_t sd = {s->n, s->c, s->h, s->w}, ss = {s->h * s->w * s->c, 1, s->w * s->c, s->c};
  dnnl_dims_t dd = {s->n, s->o, s->oh, s->ow}, ds = {s->oh * s->ow * s->o, 1, s->ow * s->o, s->o};
  dnnl_dims_t bd = {s->o};
  dnnl_dims_t strides = {s->stride[0], s->stride[1]}, dil = {s->dilation[0] - 1, s->dilation[1] - 1};
  dnnl_dims_t pl = {s->pad_before[0], s->pad_before[1]}, pr = {s->pad_after[0], s->pad_after[1]};
#define TRY(call)                       \
  if ((st = (call)) != dnnl_success) goto done
  TRY(dnnl_memory_desc_init_by_strides(&src_md, 4, sd, dnnl_f32, ss));
  TRY(dnnl_memory_desc_init_by_strides(&dst_md, 4, dd, dnnl_f32, ds));
  TRY(dnnl_memory_desc_init_by_tag(&bias_md, 1, bd, dnnl_f32, dnnl_a));
  if (p->depthwise) {
    /* TF [kh, kw, c, m]; oneDNN groups (g = c, o = m, i = 1, kh, kw). */
    int64_t m = s->o / s->c;
    dnnl_dims_t wd = {s->c, m, 1, s->kh, s->kw}, ws = {m, 1, 1, s->kw * s->c * m, s->c * m};
    TRY(dnnl_memory_desc_init_by_strides(&w_user, 5, wd, dnnl_f32, ws));
    TRY(dnnl_memory_desc_init_by_tag(&w_any, 5, wd, dnnl_f32, dnnl_format_tag_any));
  } else {
    /* TF [kh, kw, i, o]; oneDNN (o, i, kh, kw). */
    dnnl_dims_t wd = {s->o, s->c, s->kh, s->kw}, ws = {1, s->o, s->kw * s->c * s->o, s->c * s->o};
    TRY(dnnl_memory_desc_init_by_strides(&w_user, 4, wd, dnnl_f32, ws));
    TRY(dnnl_memory_desc_init_by_tag(&w_any, 4, wd, dnnl_f32, dnnl_format_tag_any));
  }
  TRY(dnnl_dilated_convolution_forward_desc_init(&desc, dnnl_forward_inference, dnnl_convolution_direct, &src_md,
                                                 &w_any, p->has_bias ? &bias_md : NULL, &dst_md, strides, dil, pl, pr));
  TRY(dnnl_primitive_attr_create(&attr));
  if (p->act || p->add) {
    TRY(dnnl_post_ops_create(&po));
    if (p->add) TRY(dnnl_post_ops_append_sum(po, 1.0f)); /* dst (holding the addend) += conv + bias */
    TRY(tfd_dnnl_append_activation(po, p->act, p->alpha));
    TRY(dnnl_primitive_attr_set_post_ops(attr, po));
  }
  TRY(dnnl_primitive_desc_create(&pd, &desc, attr, p->base.engine, NULL));
  TRY(tfd_dnnl_refuse_reference(pd)); /* its reference implementations are not for speed */
  const dnnl_memory_desc_t *w_packed = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
  TRY(dnnl_primitive_create(&e->prim, pd));
  TRY(dnnl_memory_create(&e->weights, w_packed, p->base.engine, DNNL_MEMORY_ALLOCATE));
  TRY(dnnl_memory_create(&e->weights_user, &w_user, p->base.engine, DNNL_MEMORY_NONE));
  TRY(dnnl_reorder_primitive_desc_create(&rpd, &w_user, p->base.engine, w_packed, p->base.engine, NULL));
  TRY(dnnl_primitive_create(&e->reorder, rpd));
  TRY(dnnl_memory_create(&e->src, &src_md, p->base.engine, DNNL_MEMORY_NONE));
  TRY(dnnl_memory_create(&e->dst, &dst_md, p->base.engine, DNNL_MEMORY_NONE));
  if (p->has_bias) TRY(dnnl_memory_create(&e->bias, &bias_md, p->base.engine, DNNL_MEMORY_NONE));
#undef TRY
done:
  if (rpd) dnnl_primitive_desc_destroy(rpd);
  if (pd) dnnl_primitive_desc_destroy(pd);
  if (po) dnnl_post_ops_destroy(po);
  if (attr) dnnl_primitive_attr_destroy(attr);
  if (st != dnnl_success) entry_clear(e);
  return st;
}

static bool same_shape(const tfd_dnnl_conv_shape *a, const tfd_dnnl_conv_shape *b) { return memcmp(a, b, sizeof *a) == 0; }

/* The entry for this shape; *fresh when it was just made (its weights not packed yet). */
static conv_entry *find_entry(tfd_dnnl_conv *p, const tfd_dnnl_conv_shape *s, const float *filter, int threads,
                              bool *fresh, dnnl_status_t *st) {
  *fresh = false;
  for (int i = 0; i < p->num_entries; i++) {
    conv_entry *x = &p->entries[i];
    if (x->threads == threads && same_shape(&x->shape, s) && (!p->filter_constant || x->filter == filter)) return x;
  }
  int i = tfd_dnnl_slot_for_new(p->entries, sizeof *p->entries, offsetof(conv_entry, used), &p->num_entries);
  conv_entry *e = &p->entries[i];
  entry_clear(e);
  if ((*st = entry_make(p, e, s, filter, threads)) == dnnl_success) {
    *fresh = true;
    return e;
  }
  tfd_dnnl_slot_drop(p->entries, sizeof *p->entries, i, &p->num_entries);
  return NULL;
}

tfd_code tfd_dnnl_conv_run(tfd_dnnl_conv *p, const tfd_dnnl_conv_shape *s, const float *x, const float *filter,
                           const float *bias, const float *addend, float *y, int threads, tfd_status *status) {
  if (threads < 1) threads = 1;
  omp_set_num_threads(threads);
  dnnl_status_t st = dnnl_success;
  bool fresh;
  pthread_mutex_lock(&p->base.mu);
  conv_entry *e = find_entry(p, s, filter, threads, &fresh, &st);
  if (e) {
    e->used = ++p->base.tick;
    if (fresh || !p->filter_constant) { /* pack the filter: once for a constant one */
      dnnl_memory_set_data_handle(e->weights_user, (void *)filter);
      dnnl_exec_arg_t ra[2] = {{DNNL_ARG_FROM, e->weights_user}, {DNNL_ARG_TO, e->weights}};
      st = dnnl_primitive_execute(e->reorder, p->base.stream, 2, ra);
    }
    if (st == dnnl_success) {
      if (p->add && addend != y) memcpy(y, addend, (size_t)(s->n * s->oh * s->ow * s->o) * sizeof *y);
      dnnl_memory_set_data_handle(e->src, (void *)x);
      dnnl_memory_set_data_handle(e->dst, y);
      dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, e->src}, {DNNL_ARG_WEIGHTS, e->weights}, {DNNL_ARG_DST, e->dst}};
      int nargs = 3;
      if (e->bias) {
        dnnl_memory_set_data_handle(e->bias, (void *)bias);
        args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, e->bias};
      }
      st = dnnl_primitive_execute(e->prim, p->base.stream, nargs, args);
    }
    if (st == dnnl_success) st = dnnl_stream_wait(p->base.stream);
  }
  pthread_mutex_unlock(&p->base.mu);
  if (st == dnnl_success) return TFD_OK;
  return tfd_status_setf(status, st == dnnl_out_of_memory ? TFD_RESOURCE_EXHAUSTED : TFD_INTERNAL,
                         "oneDNN convolution failed with dnnl_status %d", (int)st);
}

#endif
