/* oneDNN matmul primitives with packed weights, cached per shape (see dnnl_matmul.h).
 *
 * Debian's oneDNN runs its parallel regions on OpenMP: the calling thread's
 * omp_set_num_threads bounds the team, so a kernel asks for no more threads
 * than its device's intra-op pool has. */
#include "dnnl_matmul.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/status_internal.h"

#ifndef TFDEV_WITH_ONEDNN

tfd_dnnl_matmul *tfd_dnnl_matmul_new(bool transpose_a, bool transpose_b, bool bias, tfd_activation act, float alpha) {
  (void)transpose_a, (void)transpose_b, (void)bias, (void)act, (void)alpha;
  return NULL;
}
void tfd_dnnl_matmul_free(tfd_dnnl_matmul *p) { (void)p; }
tfd_code tfd_dnnl_matmul_run(tfd_dnnl_matmul *p, const float *A, const float *B, const float *bias, float *C, int64_t m,
                             int64_t n, int64_t k, int threads, tfd_status *st) {
  (void)p, (void)A, (void)B, (void)bias, (void)C, (void)m, (void)n, (void)k, (void)threads;
  return tfd_status_setf(st, TFD_UNIMPLEMENTED, "tfdev was built without oneDNN");
}

#else

#include <dnnl.h>
#include "../dnnl_common.h"
#include <omp.h>

typedef struct shape_entry {
  int64_t m, n, k;
  int threads;    /* oneDNN splits the work when the primitive is made: the count is part of the key */
  const float *B; /* the weights this entry packed */
  uint64_t used;  /* tick of the last run, for eviction */
  dnnl_primitive_t prim;
  dnnl_memory_t src, weights, bias, dst;
} shape_entry;

struct tfd_dnnl_matmul {
  bool ta, tb, has_bias;
  tfd_activation act;
  float alpha;
  tfd_dnnl_base base;
  shape_entry entries[TFD_DNNL_CACHED_SHAPES];
  int num_entries;
};

static void entry_clear(shape_entry *e) {
  if (e->prim) dnnl_primitive_destroy(e->prim);
  if (e->src) dnnl_memory_destroy(e->src);
  if (e->weights) dnnl_memory_destroy(e->weights);
  if (e->bias) dnnl_memory_destroy(e->bias);
  if (e->dst) dnnl_memory_destroy(e->dst);
  *e = (shape_entry){0};
}

tfd_dnnl_matmul *tfd_dnnl_matmul_new(bool transpose_a, bool transpose_b, bool bias, tfd_activation act, float alpha) {
  tfd_dnnl_matmul *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  *p = (tfd_dnnl_matmul){.ta = transpose_a, .tb = transpose_b, .has_bias = bias, .act = act, .alpha = alpha};
  if (!tfd_dnnl_base_init(&p->base)) {
    free(p);
    return NULL;
  }
  return p;
}

void tfd_dnnl_matmul_free(tfd_dnnl_matmul *p) {
  if (!p) return;
  for (int i = 0; i < p->num_entries; i++) entry_clear(&p->entries[i]);
  tfd_dnnl_base_destroy(&p->base);
  free(p);
}

/* An m x n row-major matrix, or its transpose stored n x m. */
static dnnl_status_t matrix_md(dnnl_memory_desc_t *md, int64_t rows, int64_t cols, bool transposed) {
  dnnl_dims_t dims = {rows, cols}, strides = {transposed ? 1 : cols, transposed ? rows : 1};
  return dnnl_memory_desc_init_by_strides(md, 2, dims, dnnl_f32, strides);
}

/* The primitive for one shape, and the weights reordered into its layout. */
static dnnl_status_t entry_make(tfd_dnnl_matmul *p, shape_entry *e, const float *B, int64_t m, int64_t n, int64_t k,
                                int threads) {
  dnnl_memory_desc_t src_md, w_plain, w_any, bias_md, dst_md;
  dnnl_dims_t w_dims = {k, n}, bias_dims = {1, n};
  dnnl_primitive_attr_t attr = NULL;
  dnnl_post_ops_t po = NULL;
  dnnl_primitive_desc_t pd = NULL, reorder_pd = NULL;
  dnnl_primitive_t reorder = NULL;
  dnnl_memory_t w_user = NULL;
  dnnl_matmul_desc_t desc;
  dnnl_status_t s;
  *e = (shape_entry){.m = m, .n = n, .k = k, .threads = threads, .B = B};
#define TRY(call)                        \
  if ((s = (call)) != dnnl_success) goto done
  TRY(matrix_md(&src_md, m, k, p->ta));
  TRY(matrix_md(&w_plain, k, n, p->tb));
  TRY(dnnl_memory_desc_init_by_tag(&w_any, 2, w_dims, dnnl_f32, dnnl_format_tag_any));
  TRY(dnnl_memory_desc_init_by_tag(&bias_md, 2, bias_dims, dnnl_f32, dnnl_ab));
  TRY(matrix_md(&dst_md, m, n, false));
  TRY(dnnl_matmul_desc_init(&desc, &src_md, &w_any, p->has_bias ? &bias_md : NULL, &dst_md));
  TRY(dnnl_primitive_attr_create(&attr));
  if (p->act) {
    TRY(dnnl_post_ops_create(&po));
    TRY(tfd_dnnl_append_activation(po, p->act, p->alpha));
    TRY(dnnl_primitive_attr_set_post_ops(attr, po));
  }
  TRY(dnnl_primitive_desc_create(&pd, &desc, attr, p->base.engine, NULL));
  TRY(tfd_dnnl_refuse_reference(pd)); /* its reference implementations are not for speed */
  const dnnl_memory_desc_t *w_packed = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
  TRY(dnnl_primitive_create(&e->prim, pd));
  TRY(dnnl_memory_create(&e->weights, w_packed, p->base.engine, DNNL_MEMORY_ALLOCATE));
  TRY(dnnl_memory_create(&w_user, &w_plain, p->base.engine, (void *)B));
  TRY(dnnl_reorder_primitive_desc_create(&reorder_pd, &w_plain, p->base.engine, w_packed, p->base.engine, NULL));
  TRY(dnnl_primitive_create(&reorder, reorder_pd));
  dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, w_user}, {DNNL_ARG_TO, e->weights}};
  TRY(dnnl_primitive_execute(reorder, p->base.stream, 2, args));
  TRY(dnnl_stream_wait(p->base.stream));
  TRY(dnnl_memory_create(&e->src, &src_md, p->base.engine, DNNL_MEMORY_NONE));
  TRY(dnnl_memory_create(&e->dst, &dst_md, p->base.engine, DNNL_MEMORY_NONE));
  if (p->has_bias) TRY(dnnl_memory_create(&e->bias, &bias_md, p->base.engine, DNNL_MEMORY_NONE));
#undef TRY
done:
  if (reorder) dnnl_primitive_destroy(reorder);
  if (reorder_pd) dnnl_primitive_desc_destroy(reorder_pd);
  if (w_user) dnnl_memory_destroy(w_user);
  if (pd) dnnl_primitive_desc_destroy(pd);
  if (po) dnnl_post_ops_destroy(po);
  if (attr) dnnl_primitive_attr_destroy(attr);
  if (s != dnnl_success) entry_clear(e);
  return s;
}

static shape_entry *find_entry(tfd_dnnl_matmul *p, const float *B, int64_t m, int64_t n, int64_t k, int threads,
                               dnnl_status_t *s) {
  for (int i = 0; i < p->num_entries; i++) {
    shape_entry *x = &p->entries[i];
    if (x->m == m && x->n == n && x->k == k && x->threads == threads && x->B == B) return x;
  }
  int i = tfd_dnnl_slot_for_new(p->entries, sizeof *p->entries, offsetof(shape_entry, used), &p->num_entries);
  shape_entry *e = &p->entries[i];
  entry_clear(e);
  if ((*s = entry_make(p, e, B, m, n, k, threads)) == dnnl_success) return e;
  tfd_dnnl_slot_drop(p->entries, sizeof *p->entries, i, &p->num_entries);
  return NULL;
}

tfd_code tfd_dnnl_matmul_run(tfd_dnnl_matmul *p, const float *A, const float *B, const float *bias, float *C, int64_t m,
                             int64_t n, int64_t k, int threads, tfd_status *st) {
  dnnl_status_t s = dnnl_success;
  if (threads < 1) threads = 1;
  /* Before the primitive is made, not only before it runs: oneDNN reads the count then. */
  omp_set_num_threads(threads);
  pthread_mutex_lock(&p->base.mu);
  shape_entry *e = find_entry(p, B, m, n, k, threads, &s);
  if (e) {
    e->used = ++p->base.tick;
    dnnl_memory_set_data_handle(e->src, (void *)A);
    dnnl_memory_set_data_handle(e->dst, C);
    if (e->bias) dnnl_memory_set_data_handle(e->bias, (void *)bias);
    dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, e->src}, {DNNL_ARG_WEIGHTS, e->weights}, {DNNL_ARG_DST, e->dst},
                               {DNNL_ARG_BIAS, e->bias}};
    s = dnnl_primitive_execute(e->prim, p->base.stream, e->bias ? 4 : 3, args);
    if (s == dnnl_success) s = dnnl_stream_wait(p->base.stream);
  }
  pthread_mutex_unlock(&p->base.mu);
  if (s == dnnl_success) return TFD_OK;
  if (s == dnnl_out_of_memory)
    return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "oneDNN matmul [%lld,%lld]x[%lld,%lld]: out of memory",
                           (long long)m, (long long)k, (long long)k, (long long)n);
  return tfd_status_setf(st, TFD_INTERNAL, "oneDNN matmul [%lld,%lld]x[%lld,%lld] failed with dnnl_status %d",
                         (long long)m, (long long)k, (long long)k, (long long)n, (int)s);
}

#endif
