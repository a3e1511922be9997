/* Einsum (TensorFlow's einsum_op_impl.h, CPU), float32, float64, int32, int64: as TensorFlow does it,
 * each operand is reduced (labels in it alone and not in the output summed, repeated labels'
 * generalised diagonal taken) and laid out [broadcast..., batch..., free, contract], one batch matrix
 * product contracts the two (cblas_sgemm/dgemm per matrix as BatchMatMulV2, tfd_int_matmul for
 * integers, with its broadcast batch strides through tfd_batch_matmul_offsets), and the result
 * [broadcast..., batch..., free0, free1] is permuted (and inflated for repeated output labels) into
 * the output. An operand already in that layout (or with free and contract swapped, which the product
 * takes transposed) is read in place, so ij,jk->ik, bij,bjk->bik and bhqd,bhkd->bhqk copy nothing and
 * cost what MatMul/BatchMatMulV2 cost; a result already in the output's order is written there. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../framework/einsum_spec.h"
#include "einsum_logic.h"
#include "../kernel.h"
#include "matmul_logic.h"

void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);

enum { T_BCAST, T_BATCH, T_FREE, T_CONTRACT, T_REDUCE };

/* dst[dst_off(keep idx)] = sum over the summed indices of src[src_off(keep idx, sum idx)]: the one
 * strided walk behind reduction, diagonals, transposition and inflation. */
typedef tfd_einsum_walk walk;

#define WALK(T, ACC)                                                                       \
  static void walk_##T(const walk *w, const T *src, T *dst) {                              \
    int64_t ki[TFD_EINSUM_MAX_AXES] = {0}, si[TFD_EINSUM_MAX_AXES];                                                      \
    int64_t ktotal = 1, stotal = 1;                                                        \
    for (int d = 0; d < w->nk; d++) ktotal *= w->ksize[d];                                 \
    for (int d = 0; d < w->ns; d++) stotal *= w->ssize[d];                                 \
    int64_t so = 0, dof = 0;                                                               \
    for (int64_t e = 0; e < ktotal; e++) {                                                 \
      ACC acc = 0;                                                                         \
      int64_t s = 0;                                                                       \
      for (int d = 0; d < w->ns; d++) si[d] = 0;                                           \
      for (int64_t r = 0; r < stotal; r++) {                                               \
        acc += (ACC)src[so + s];                                                           \
        for (int d = w->ns - 1; d >= 0; d--) {                                             \
          s += w->ssrc[d];                                                                 \
          if (++si[d] < w->ssize[d]) break;                                                \
          s -= w->ssrc[d] * w->ssize[d];                                                   \
          si[d] = 0;                                                                       \
        }                                                                                  \
      }                                                                                    \
      dst[dof] = (T)acc;                                                                   \
      for (int d = w->nk - 1; d >= 0; d--) {                                               \
        so += w->ksrc[d];                                                                  \
        dof += w->kdst[d];                                                                 \
        if (++ki[d] < w->ksize[d]) break;                                                  \
        so -= w->ksrc[d] * w->ksize[d];                                                    \
        dof -= w->kdst[d] * w->ksize[d];                                                   \
        ki[d] = 0;                                                                         \
      }                                                                                    \
    }                                                                                      \
  }
WALK(float, float)
WALK(double, double)
WALK(int32_t, uint32_t)
WALK(int64_t, uint64_t)

static void run_walk(tfd_dtype dt, const walk *w, const void *src, void *dst) {
  for (int d = 0; d < w->nk; d++)
    if (w->ksize[d] == 0) return;
  int last = w->nk - 1;
  if (w->ns == 0 && last > 0 && w->ksrc[last] == 1 && w->kdst[last] == 1) {
    /* A transpose that keeps the innermost dimension: whole rows at a time. */
    size_t es = tfd_dtype_size(dt), row = (size_t)w->ksize[last] * es;
    int64_t ki[TFD_EINSUM_MAX_AXES] = {0}, rows = 1, so = 0, dof = 0;
    for (int d = 0; d < last; d++) rows *= w->ksize[d];
    for (int64_t r = 0; r < rows; r++) {
      memcpy((char *)dst + dof * (int64_t)es, (const char *)src + so * (int64_t)es, row);
      for (int d = last - 1; d >= 0; d--) {
        so += w->ksrc[d];
        dof += w->kdst[d];
        if (++ki[d] < w->ksize[d]) break;
        so -= w->ksrc[d] * w->ksize[d];
        dof -= w->kdst[d] * w->ksize[d];
        ki[d] = 0;
      }
    }
    return;
  }
  switch (dt) {
  case TFD_FLOAT32: walk_float(w, src, dst); break;
  case TFD_FLOAT64: walk_double(w, src, dst); break;
  case TFD_INT32: walk_int32_t(w, src, dst); break;
  default: walk_int64_t(w, src, dst); break;
  }
}

static void shape_string(const tfd_tensor *t, char *buf, size_t cap) {
  size_t n = (size_t)snprintf(buf, cap, "[");
  for (int d = 0; d < tfd_tensor_ndims(t) && n < cap; d++)
    n += (size_t)snprintf(buf + n, cap - n, "%s%lld", d ? "," : "", (long long)tfd_tensor_dim(t, d));
  if (n < cap) snprintf(buf + n, cap - n, "]");
}

static void dims_string(const int64_t *d, int n, char *buf, size_t cap) {
  size_t len = (size_t)snprintf(buf, cap, "[");
  for (int i = 0; i < n && len < cap; i++) len += (size_t)snprintf(buf + len, cap - len, "%s%lld", i ? "," : "", (long long)d[i]);
  if (len < cap) snprintf(buf + len, cap - len, "]");
}

/* One operand after ProcessDimensions: its labels by axis (broadcast labels right-aligned after the
 * named ones), and where its reduced form lives. */
typedef struct operand {
  int rank, labels[TFD_MAX_DIMS];
  const char *data; /* the reduced operand: the input itself or `owned` */
  char *owned;
  bool trans;       /* laid out [..., contract, free] */
  int nbatch_own;   /* its broadcast dims + batch labels, as laid out */
  int64_t bdims[TFD_MAX_DIMS + TFD_EINSUM_MAX_LABELS];
  int own_label[TFD_MAX_DIMS + TFD_EINSUM_MAX_LABELS];
  int64_t F, C;
} operand;

/* einsum_logic.h */
void tfd_einsum_run(tfd_kernel *k, tfd_kernel_context *c, tfd_einsum_exec *ex) {
  const tfd_einsum_spec *sp = k->state;
  tfd_tensor *out = NULL;
  bool ok = false;
  char s1[160], s2[160];
  if (c->num_inputs != sp->num_inputs) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Expected %d inputs but got: %d", sp->num_inputs, c->num_inputs);
    return;
  }
  const int N = sp->num_distinct;
  int64_t size[TFD_EINSUM_MAX_AXES];
  for (int l = 0; l < TFD_EINSUM_MAX_AXES; l++) size[l] = -1;
  int nb[2] = {0, 0}, max_nb = 0;
  operand op[2];
  memset(op, 0, sizeof op);
  /* ProcessDimensions: ranks, each named label's one size. */
  for (int i = 0; i < sp->num_inputs; i++) {
    const tfd_tensor *t = c->inputs[i];
    int r = tfd_tensor_ndims(t), named = sp->num_labels[i];
    if (sp->ellipsis[i] < 0 && r != named) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Expected input %d to have rank %d but got: %d", i, named, r);
      return;
    }
    if (sp->ellipsis[i] >= 0 && r < named) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Expected input %d to have rank at least %d but got: %d", i, named, r);
      return;
    }
    nb[i] = r - named;
    if (nb[i] > max_nb) max_nb = nb[i];
    for (int j = 0; j < named; j++) {
      int axis = sp->ellipsis[i] >= 0 && j >= sp->ellipsis[i] ? j + nb[i] : j, l = sp->labels[i][j];
      int64_t d = tfd_tensor_dim(t, axis);
      if (size[l] >= 0 && size[l] != d) {
        shape_string(t, s1, sizeof s1);
        tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Expected dimension %lld at axis %d of the input shaped %s but got dimension %lld",
                        (long long)size[l], axis, s1, (long long)d);
        return;
      }
      size[l] = d;
    }
  }
  if (sp->out_ellipsis < 0 && max_nb > 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                    "Output contains %d broadcasting dimension(s) but no ellipsis (...) was found in the output subscripts.",
                    max_nb);
    return;
  }
  /* Label types; broadcast label N + b is output broadcast dim b (right-aligned across inputs). */
  int type[TFD_EINSUM_MAX_AXES], in_count[2][TFD_EINSUM_MAX_AXES] = {{0}}, out_count[TFD_EINSUM_MAX_AXES] = {0};
  for (int i = 0; i < sp->num_inputs; i++) {
    const tfd_tensor *t = c->inputs[i];
    op[i].rank = tfd_tensor_ndims(t);
    for (int a = 0, j = 0; a < op[i].rank; a++) {
      bool in_ell = sp->ellipsis[i] >= 0 && a >= sp->ellipsis[i] && a < sp->ellipsis[i] + nb[i];
      int l = in_ell ? N + (max_nb - nb[i]) + (a - sp->ellipsis[i]) : sp->labels[i][j++];
      op[i].labels[a] = l;
      in_count[i][l]++;
    }
  }
  int out_labels[TFD_EINSUM_MAX_AXES], out_rank = 0;
  for (int j = 0; j <= sp->num_out; j++) {
    if (j == sp->out_ellipsis)
      for (int b = 0; b < max_nb; b++) out_labels[out_rank++] = N + b;
    if (j < sp->num_out) out_labels[out_rank++] = sp->out[j];
  }
  if (out_rank > TFD_MAX_DIMS) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "output rank %d exceeds %d", out_rank, TFD_MAX_DIMS);
    return;
  }
  for (int j = 0; j < out_rank; j++) out_count[out_labels[j]]++;
  for (int l = 0; l < N; l++) {
    bool removed = out_count[l] == 0, unique = sp->num_inputs == 1 || in_count[0][l] == 0 || in_count[1][l] == 0;
    type[l] = !removed && !unique ? T_BATCH : !removed ? T_FREE : !unique ? T_CONTRACT : T_REDUCE;
  }
  /* Broadcast sizes: each operand's, and the output's (equal, or 1 against anything). */
  int64_t bsize[TFD_MAX_DIMS];
  bool bcast_ok = true;
  for (int b = 0; b < max_nb; b++) {
    type[N + b] = T_BCAST;
    bsize[b] = 1;
    for (int i = 0; i < sp->num_inputs; i++) {
      int a = b - (max_nb - nb[i]);
      if (a < 0) continue;
      int64_t d = tfd_tensor_dim(c->inputs[i], sp->ellipsis[i] + a);
      if (d != 1 && bsize[b] != 1 && d != bsize[b]) bcast_ok = false;
      if (d != 1) bsize[b] = d;
    }
    size[N + b] = bsize[b];
  }
  tfd_dtype dt = tfd_tensor_dtype(c->inputs[0]);
  size_t es = tfd_dtype_size(dt);
  /* Reduce each operand to [own broadcast..., batch..., F, C] (or [..., C, F]). */
  for (int i = 0; i < sp->num_inputs; i++) {
    operand *o = &op[i];
    const tfd_tensor *t = c->inputs[i];
    int64_t stride[TFD_EINSUM_MAX_AXES] = {0}, st = 1;
    int64_t lstride[TFD_EINSUM_MAX_AXES] = {0};
    for (int a = o->rank - 1; a >= 0; a--) {
      stride[a] = st;
      st *= tfd_tensor_dim(t, a);
      lstride[o->labels[a]] += stride[a];
    }
    int order[TFD_EINSUM_MAX_AXES], no = 0;
    bool plain = true;
    int want_types[4] = {T_BCAST, T_BATCH, T_FREE, T_CONTRACT};
    o->F = o->C = 1;
    for (int w = 0; w < 4; w++)
      for (int l = 0; l < N + max_nb; l++)
        if (type[l] == want_types[w] && in_count[i][l] > 0) {
          order[no++] = l;
          if (in_count[i][l] > 1) plain = false;
          if (type[l] == T_FREE) o->F *= size[l];
          if (type[l] == T_CONTRACT) o->C *= size[l];
          if (type[l] == T_BCAST || type[l] == T_BATCH) {
            o->own_label[o->nbatch_own] = l;
            o->bdims[o->nbatch_own++] = type[l] == T_BCAST ? tfd_tensor_dim(t, sp->ellipsis[i] + (l - N) - (max_nb - nb[i])) : size[l];
          }
        }
    for (int l = 0; l < N; l++)
      if (type[l] == T_REDUCE && in_count[i][l] > 0) plain = false;
    /* In place when the input's axes are `order` (or order with free and contract swapped). */
    if (plain && no == o->rank) {
      bool same = true, swapped = true;
      int sw[TFD_EINSUM_MAX_AXES], ns = 0;
      for (int j = 0; j < no; j++)
        if (type[order[j]] == T_BCAST || type[order[j]] == T_BATCH) sw[ns++] = order[j];
      for (int j = 0; j < no; j++)
        if (type[order[j]] == T_CONTRACT) sw[ns++] = order[j];
      for (int j = 0; j < no; j++)
        if (type[order[j]] == T_FREE) sw[ns++] = order[j];
      for (int a = 0; a < o->rank; a++) {
        same &= o->labels[a] == order[a];
        swapped &= o->labels[a] == sw[a];
      }
      if (same || swapped) {
        o->data = tfd_tensor_const_data(t);
        o->trans = !same;
        continue;
      }
    }
    int64_t total = 1;
    walk w;
    memset(&w, 0, sizeof w);
    for (int j = 0; j < no; j++) {
      int64_t sz = type[order[j]] == T_BCAST ? o->bdims[j] : size[order[j]];
      w.ksize[w.nk] = sz;
      w.ksrc[w.nk++] = lstride[order[j]];
      total *= sz;
    }
    int64_t ds = 1;
    for (int d = w.nk - 1; d >= 0; d--) {
      w.kdst[d] = ds;
      ds *= w.ksize[d];
    }
    for (int l = 0; l < N; l++)
      if (type[l] == T_REDUCE && in_count[i][l] > 0) {
        w.ssize[w.ns] = size[l];
        w.ssrc[w.ns++] = lstride[l];
      }
    if (!(o->owned = ex->temp(ex, total > 0 ? (size_t)total * es : 1))) goto done;
    if (total > 0 && !ex->walk(ex, dt, &w, tfd_tensor_const_data(t), o->owned, true)) goto done;
    o->data = o->owned;
    o->trans = false;
  }
  /* The result's labels: broadcast, batch, free of operand 0, free of operand 1. */
  int res_labels[TFD_EINSUM_MAX_AXES], nres = 0, nbatch = 0;
  for (int b = 0; b < max_nb; b++) res_labels[nres++] = N + b;
  for (int l = 0; l < N; l++)
    if (type[l] == T_BATCH) res_labels[nres++] = l;
  nbatch = nres;
  for (int i = 0; i < sp->num_inputs; i++)
    for (int l = 0; l < N; l++)
      if (type[l] == T_FREE && in_count[i][l] > 0) res_labels[nres++] = l;
  if (!bcast_ok) {
    int64_t d0[TFD_EINSUM_MAX_AXES], d1[TFD_EINSUM_MAX_AXES];
    int n0 = 0, n1 = 0;
    for (int j = 0; j < op[0].nbatch_own; j++) d0[n0++] = op[0].bdims[j];
    d0[n0++] = op[0].trans ? op[0].C : op[0].F;
    d0[n0++] = op[0].trans ? op[0].F : op[0].C;
    for (int j = 0; j < op[1].nbatch_own; j++) d1[n1++] = op[1].bdims[j];
    d1[n1++] = op[1].trans ? op[1].C : op[1].F;
    d1[n1++] = op[1].trans ? op[1].F : op[1].C;
    dims_string(d0, n0, s1, sizeof s1);
    dims_string(d1, n1, s2, sizeof s2);
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Invalid broadcasting dimensions: %s vs. %s", s1, s2);
    goto done;
  }
  int64_t odims[TFD_MAX_DIMS];
  for (int j = 0; j < out_rank; j++) odims[j] = size[out_labels[j]];
  out = ex->output(ex, dt, odims, out_rank);
  if (!out) goto done;
  bool direct = out_rank == nres;
  for (int j = 0; direct && j < nres; j++) direct = out_labels[j] == res_labels[j];
  int64_t rtotal = 1;
  for (int j = 0; j < nres; j++) rtotal *= size[res_labels[j]];
  char *res = NULL;
  if (tfd_tensor_numel(out) == 0) {
    ok = true;
    goto done;
  }
  if (sp->num_inputs == 1 && direct) { /* the reduced operand is the output */
    if (ex->copy(ex, tfd_tensor_data(out), op[0].data, (size_t)rtotal * es)) ok = true;
    goto done;
  }
  res = direct ? tfd_tensor_data(out) : ex->temp(ex, rtotal > 0 ? (size_t)rtotal * es : 1);
  if (!res) goto done;
  if (sp->num_inputs == 1) {
    if (!ex->copy(ex, res, op[0].data, (size_t)rtotal * es)) goto done;
  } else {
    /* One batch product: batch dims = broadcast then batch labels, each operand's stride per dim. */
    tfd_batch_matmul_shape s;
    memset(&s, 0, sizeof s);
    s.nb = nbatch;
    s.m = op[0].F;
    s.n = op[1].F;
    s.k = op[0].C;
    for (int i = 0; i < 2; i++) {
      int64_t st = op[i].F * op[i].C;
      int64_t *strides = i == 0 ? s.x_strides : s.y_strides;
      for (int d = nbatch - 1; d >= 0; d--) {
        int l = res_labels[d], at = -1;
        for (int j = 0; j < op[i].nbatch_own; j++)
          if (op[i].own_label[j] == l) at = j;
        if (at < 0 || op[i].bdims[at] == 1) strides[d] = 0;
        else strides[d] = st;
        if (at >= 0) st *= op[i].bdims[at];
      }
    }
    int64_t batches = 1;
    for (int d = 0; d < nbatch; d++) {
      s.dims[d] = size[res_labels[d]];
      batches *= s.dims[d];
    }
    int64_t mat = s.m * s.n;
    bool ta = op[0].trans, tb = !op[1].trans; /* operand 1 is [N, K] unless swapped */
    if (s.k == 0) {
      if (!ex->zero(ex, res, (size_t)rtotal * es)) goto done;
    } else if (mat > 0 && !ex->matmul(ex, dt, &s, batches, ta, tb, op[0].data, op[1].data, res)) {
      goto done;
    }
  }
  if (!direct) {
    /* Permute (and inflate: repeated output labels take the diagonal, zeros elsewhere). */
    int64_t ostride[TFD_MAX_DIMS], st = 1;
    for (int j = out_rank - 1; j >= 0; j--) {
      ostride[j] = st;
      st *= odims[j];
    }
    walk w;
    memset(&w, 0, sizeof w);
    int64_t rs = 1;
    for (int j = nres - 1; j >= 0; j--) {
      w.ksize[j] = size[res_labels[j]];
      w.ksrc[j] = rs;
      rs *= w.ksize[j];
      for (int a = 0; a < out_rank; a++)
        if (out_labels[a] == res_labels[j]) w.kdst[j] += ostride[a];
    }
    w.nk = nres;
    bool inflate = false;
    for (int j = 0; j < out_rank; j++) inflate |= out_count[out_labels[j]] > 1;
    if (inflate && !ex->zero(ex, tfd_tensor_data(out), tfd_tensor_byte_size(out))) goto done;
    if (!ex->walk(ex, dt, &w, res, tfd_tensor_data(out), false)) goto done;
  }
  ok = true;
done:
  if (ok && out) c->outputs[0] = out;
  else tfd_tensor_unref(out);
  ex->release(ex);
}

/* ---- the CPU's executor: malloc'd temporaries, run_walk, cblas (tfd_int_matmul for integers) ---- */
typedef struct cpu_exec {
  tfd_einsum_exec ex;
  void *temps[4];
  int ntemps;
} cpu_exec;

static void *cpu_temp(tfd_einsum_exec *ex, size_t bytes) {
  cpu_exec *e = (cpu_exec *)ex;
  void *p = e->ntemps < 4 ? malloc(bytes) : NULL;
  if (!p) tfd_kernel_fail(ex->c, ex->k, TFD_RESOURCE_EXHAUSTED, "out of memory for a %zu-byte temporary", bytes);
  else e->temps[e->ntemps++] = p;
  return p;
}
static tfd_tensor *cpu_output(tfd_einsum_exec *ex, tfd_dtype dt, const int64_t *dims, int nd) {
  return tfd_kernel_alloc(ex->c, ex->k, dt, dims, nd);
}
static bool cpu_walk(tfd_einsum_exec *ex, tfd_dtype dt, const tfd_einsum_walk *w, const void *src, void *dst, bool dense) {
  (void)ex, (void)dense;
  run_walk(dt, w, src, dst);
  return true;
}
static bool cpu_copy(tfd_einsum_exec *ex, void *dst, const void *src, size_t bytes) {
  (void)ex;
  if (bytes) memcpy(dst, src, bytes);
  return true;
}
static bool cpu_zero(tfd_einsum_exec *ex, void *dst, size_t bytes) {
  (void)ex;
  if (bytes) memset(dst, 0, bytes);
  return true;
}
static bool cpu_matmul(tfd_einsum_exec *ex, tfd_dtype dt, const tfd_batch_matmul_shape *s, int64_t batches, bool ta, bool tb,
                       const void *a, const void *b, void *c) {
  size_t es = tfd_dtype_size(dt);
  int threads = ex->c->intra_pool ? tfd_threadpool_num_threads(ex->c->intra_pool) : 1;
  if (dt != TFD_INT32 && dt != TFD_INT64 && openblas_get_num_threads() != threads) openblas_set_num_threads(threads);
  int64_t lda = ta ? s->m : s->k, ldb = tb ? s->k : s->n, mat = s->m * s->n;
  for (int64_t bt = 0; bt < batches; bt++) {
    int64_t ox, oy;
    tfd_batch_matmul_offsets(s, bt, &ox, &oy);
    const char *A = (const char *)a + ox * (int64_t)es, *B = (const char *)b + oy * (int64_t)es;
    char *C = (char *)c + bt * mat * (int64_t)es;
    if (dt == TFD_FLOAT32)
      cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)s->m, (int)s->n,
                  (int)s->k, 1.0f, (const float *)A, (int)lda, (const float *)B, (int)ldb, 0.0f, (float *)C, (int)s->n);
    else if (dt == TFD_FLOAT64)
      cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)s->m, (int)s->n,
                  (int)s->k, 1.0, (const double *)A, (int)lda, (const double *)B, (int)ldb, 0.0, (double *)C, (int)s->n);
    else tfd_int_matmul(dt, A, lda, ta, B, ldb, tb, C, s->m, s->n, s->k);
  }
  return true;
}
static void cpu_release(tfd_einsum_exec *ex) {
  cpu_exec *e = (cpu_exec *)ex;
  for (int i = 0; i < e->ntemps; i++) free(e->temps[i]);
  e->ntemps = 0;
}

static void k_einsum(tfd_kernel *k, tfd_kernel_context *c) {
  cpu_exec e = {{cpu_temp, cpu_output, cpu_walk, cpu_copy, cpu_zero, cpu_matmul, cpu_release, k, c, NULL}, {NULL}, 0};
  tfd_einsum_run(k, c, &e.ex);
}

static void einsum_cleanup(tfd_kernel *k) {
  free(k->state);
  k->state = NULL;
}

tfd_code tfd_setup_einsum(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  const char *eq = tfd_attr_string(init->node, "equation", "");
  tfd_einsum_spec *sp = malloc(sizeof *sp);
  if (!sp) return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory parsing the equation");
  char err[320];
  if (!tfd_einsum_parse(eq, sp, err, sizeof err)) {
    free(sp);
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "%s", err);
  }
  for (int j = 0; j < sp->num_out; j++) {
    bool seen = false;
    for (int i = 0; i < sp->num_inputs; i++)
      for (int a = 0; a < sp->num_labels[i]; a++) seen |= sp->labels[i][a] == sp->out[j];
    if (!seen) {
      tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                      "Einsum output subscripts for equation '%s' has label '%c' which is not present in the input "
                      "subscripts",
                      eq, sp->chars[sp->out[j]]);
      free(sp);
      return TFD_INVALID_ARGUMENT;
    }
  }
  k->state = sp;
  k->cleanup = einsum_cleanup;
  k->compute = k_einsum;
  return TFD_OK;
}
