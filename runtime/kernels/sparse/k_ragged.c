/* Ragged tensors' ops, as TensorFlow's CPU kernels. RaggedGather (ragged_gather_op.cc) gathers rows of
 * a ragged tensor given as nested row splits and flat values; its outputs are the gathered splits and
 * values. RaggedRange (ragged_range_op.cc) makes one range per row, as row_splits and the values.
 * RaggedTensorToTensor (ragged_tensor_to_tensor_op.cc and util/ragged_to_dense_util.cc) writes a
 * ragged tensor, given by its flat values and one row partition per ragged dimension, into a dense
 * tensor of the requested shape, cut where a row is longer and padded with the default value where
 * it is shorter; it reads the ROW_SPLITS and VALUE_ROWIDS partitions, the first dimension given by a
 * FIRST_DIM_SIZE or a ROW_SPLITS partition, and refuses ROW_LENGTHS, ROW_STARTS, ROW_LIMITS,
 * UNIFORM_ROW_LENGTH and VALUE_ROWIDS-first with the texts TensorFlow's kernel refuses them with.
 * Errors are TensorFlow's texts; checks TensorFlow leaves out where its kernel would read out of
 * bounds are added with texts of their own. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/checked.h"
#include "../kernel.h"
#include "../kernel_shared.h"
#include "ragged_logic.h"

/* ---- RaggedRange ---- */

/* Row sizes of ranges over T (TensorFlow's RangeOp arithmetic): integers by exact division, floats by
 * ceil(|(limit - start) / delta|). -1: the size is past int64's range. */
static int64_t range_size_int(int64_t start, int64_t limit, int64_t delta) {
  if ((delta > 0 && limit < start) || (delta < 0 && limit > start)) return 0;
  uint64_t span = delta > 0 ? (uint64_t)limit - (uint64_t)start : (uint64_t)start - (uint64_t)limit;
  uint64_t step = delta > 0 ? (uint64_t)delta : (uint64_t)0 - (uint64_t)delta;
  uint64_t n = span / step + (span % step != 0);
  return n > (uint64_t)INT64_MAX ? -1 : (int64_t)n;
}

static int64_t range_size_float(double start, double limit, double delta) {
  if ((delta > 0 && limit < start) || (delta < 0 && limit > start)) return 0;
  double n = ceil(fabs((limit - start) / delta));
  return !(n <= 9.2233720368547748e18) ? -1 : (int64_t)n;
}

static void k_ragged_range(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *in[3] = {c->inputs[0], c->inputs[1], c->inputs[2]};
  static const char *const names[3] = {"starts", "limits", "deltas"};
  tfd_dtype dt = tfd_tensor_dtype(in[0]), splits_dt = k->dst;
  for (int i = 0; i < 3; i++)
    if (tfd_tensor_ndims(in[i]) > 1) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "%s must be a scalar or vector", names[i]);
      return;
    }
  int64_t nrows = -1;
  for (int i = 0; i < 3; i++) {
    if (tfd_tensor_ndims(in[i]) == 0) continue;
    if (nrows >= 0 && tfd_tensor_dim(in[i], 0) != nrows) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "starts, limits, and deltas must have the same shape");
      return;
    }
    nrows = tfd_tensor_dim(in[i], 0);
  }
  if (nrows < 0) nrows = 1;
  int64_t nsplits = nrows + 1;
  tfd_tensor *splits = tfd_kernel_alloc(c, k, splits_dt, &nsplits, 1);
  if (!splits) return;
  int64_t *rows = malloc((size_t)nsplits * sizeof *rows);
  if (!rows) {
    tfd_tensor_unref(splits);
    tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory for %lld rows", (long long)nrows);
    return;
  }
  const void *p[3] = {tfd_tensor_const_data(in[0]), tfd_tensor_const_data(in[1]), tfd_tensor_const_data(in[2])};
  bool scalar[3] = {tfd_tensor_ndims(in[0]) == 0, tfd_tensor_ndims(in[1]) == 0, tfd_tensor_ndims(in[2]) == 0};
#define AT(i, row, type) (((const type *)p[i])[scalar[i] ? 0 : (row)])
  int64_t limit = splits_dt == TFD_INT32 ? INT32_MAX : INT64_MAX;
  rows[0] = 0;
  for (int64_t r = 0; r < nrows; r++) {
    int64_t size;
    bool zero;
    switch (dt) {
      case TFD_FLOAT32:
        zero = AT(2, r, float) == 0;
        size = zero ? 0 : range_size_float(AT(0, r, float), AT(1, r, float), AT(2, r, float));
        break;
      case TFD_FLOAT64:
        zero = AT(2, r, double) == 0;
        size = zero ? 0 : range_size_float(AT(0, r, double), AT(1, r, double), AT(2, r, double));
        break;
      case TFD_INT32:
        zero = AT(2, r, int32_t) == 0;
        size = zero ? 0 : range_size_int(AT(0, r, int32_t), AT(1, r, int32_t), AT(2, r, int32_t));
        break;
      default:
        zero = AT(2, r, int64_t) == 0;
        size = zero ? 0 : range_size_int(AT(0, r, int64_t), AT(1, r, int64_t), AT(2, r, int64_t));
        break;
    }
    if (zero) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Requires delta != 0");
      goto fail;
    }
    if (size < 0) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Requires ((limit - start) / delta) <= %lld", (long long)INT64_MAX);
      goto fail;
    }
    if (size > limit - rows[r]) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                      "The total range size overflowed. Consider using int64 instead of int32 for row_splits_dtype.");
      goto fail;
    }
    rows[r + 1] = rows[r] + size;
  }
  for (int64_t r = 0; r < nsplits; r++) {
    if (splits_dt == TFD_INT32) ((int32_t *)tfd_tensor_data(splits))[r] = (int32_t)rows[r];
    else ((int64_t *)tfd_tensor_data(splits))[r] = rows[r];
  }
  int64_t nvals = rows[nrows];
  tfd_tensor *vals = tfd_kernel_alloc(c, k, dt, &nvals, 1);
  if (!vals) goto fail;
  void *out = tfd_tensor_data(vals);
  int64_t at = 0;
  for (int64_t r = 0; r < nrows; r++) {
    int64_t n = rows[r + 1] - rows[r];
    switch (dt) {
      case TFD_FLOAT32: {
        float v = AT(0, r, float), d = AT(2, r, float);
        for (int64_t i = 0; i < n; i++, v += d) ((float *)out)[at++] = v;
        break;
      }
      case TFD_FLOAT64: {
        double v = AT(0, r, double), d = AT(2, r, double);
        for (int64_t i = 0; i < n; i++, v += d) ((double *)out)[at++] = v;
        break;
      }
      case TFD_INT32: { /* the step after the last value may pass the type's range: add unsigned */
        uint32_t v = (uint32_t)AT(0, r, int32_t), d = (uint32_t)AT(2, r, int32_t);
        for (int64_t i = 0; i < n; i++, v += d) ((int32_t *)out)[at++] = (int32_t)v;
        break;
      }
      default: {
        uint64_t v = (uint64_t)AT(0, r, int64_t), d = (uint64_t)AT(2, r, int64_t);
        for (int64_t i = 0; i < n; i++, v += d) ((int64_t *)out)[at++] = (int64_t)v;
        break;
      }
    }
  }
#undef AT
  free(rows);
  c->outputs[0] = splits;
  c->outputs[1] = vals;
  return;
fail:
  free(rows);
  tfd_tensor_unref(splits);
}

/* ---- RaggedTensorToTensor ---- */

enum { RP_FIRST_DIM_SIZE, RP_VALUE_ROWIDS, RP_ROW_LENGTHS, RP_ROW_SPLITS, RP_ROW_LIMITS, RP_ROW_STARTS,
       RP_UNIFORM_ROW_LENGTH, RP_COUNT };
static const char *const rp_names[RP_COUNT] = {"FIRST_DIM_SIZE", "VALUE_ROWIDS",  "ROW_LENGTHS",       "ROW_SPLITS",
                                               "ROW_LIMITS",     "ROW_STARTS",    "UNIFORM_ROW_LENGTH"};

typedef struct {
  int ntypes;
  int types[TFD_MAX_DIMS + 1];
} r2t_params;

/* Partition tensor of dimension d (the relation of d and d + 1), and its type. */
static const tfd_tensor *partition(tfd_tensor *const *in, const r2t_params *p, int d, int *type) {
  int i = p->types[0] == RP_FIRST_DIM_SIZE ? d + 1 : d;
  *type = p->types[i];
  return in[3 + i];
}

static int64_t max_width(const tfd_tensor *t, int type) {
  int64_t n = tfd_tensor_numel(t), best = 0;
  if (type == RP_ROW_SPLITS) {
    for (int64_t i = 0; i + 1 < n; i++) {
      int64_t w = tfd_tensor_get_index(t, i + 1) - tfd_tensor_get_index(t, i);
      if (w > best) best = w;
    }
    return best;
  }
  if (n == 0) return 0;
  int64_t first = 0, v = tfd_tensor_get_index(t, 0);
  for (int64_t i = 1; i < n; i++)
    if (tfd_tensor_get_index(t, i) != v) {
      v = tfd_tensor_get_index(t, i);
      if (i - first > best) best = i - first;
      first = i;
    }
  return n - first > best ? n - first : best;
}

/* The shape text TensorFlow's TensorShape::DebugString gives a partial shape (-1 as "?"). */
static const char *partial_text(char *buf, size_t cap, const int64_t *dims, int nd, bool known) {
  if (!known) {
    snprintf(buf, cap, "<unknown>");
    return buf;
  }
  size_t n = (size_t)snprintf(buf, cap, "[");
  for (int i = 0; i < nd && n < cap; i++)
    n += (size_t)(dims[i] < 0 ? snprintf(buf + n, cap - n, "%s?", i ? "," : "")
                              : snprintf(buf + n, cap - n, "%s%lld", i ? "," : "", (long long)dims[i]));
  if (n < cap) snprintf(buf + n, cap - n, "]");
  return buf;
}

/* An array of n output positions; NULL when n is past what memory can hold (no size_t wrap) or
 * malloc fails. */
static int64_t *positions(int64_t n) {
  if (n > INT64_MAX / (int64_t)sizeof(int64_t)) return NULL;
  return malloc((size_t)(n ? n : 1) * sizeof(int64_t));
}

/* Output positions of the next level's elements from the parent level's (TensorFlow's
 * CalculateOutputIndexRowSplit / ValueRowID); *out is malloc'ed, *nout its length. */
static bool next_index(tfd_kernel *k, tfd_kernel_context *c, const tfd_tensor *t, int type, const int64_t *parent,
                       int64_t nparent, int64_t mult, int64_t size, int64_t **out, int64_t *nout) {
  int64_t n = tfd_tensor_numel(t);
  *out = NULL;
  *nout = 0;
  if (type == RP_ROW_SPLITS) {
    if (n - 1 > nparent) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Row partition size is greater than output size: %lld > %lld",
                      (long long)(n - 1), (long long)nparent);
      return false;
    }
    /* The count TensorFlow pushes before it compares it with the last split, worked out first so that
     * bad splits cannot make it allocate without bound. */
    int64_t total = 0;
    for (int64_t i = 0; i + 1 < n; i++) {
      int64_t len = tfd_tensor_get_index(t, i + 1) - tfd_tensor_get_index(t, i);
      if (len > 0 && !tfd_checked_add(total, len, &total)) total = -1;
      if (total < 0) break;
    }
    if (n > 0 && total != tfd_tensor_get_index(t, n - 1)) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Invalid row split size.");
      return false;
    }
    int64_t *r = positions(total);
    if (!r) goto oom;
    int64_t at = 0;
    for (int64_t i = 0; i + 1 < n; i++) {
      int64_t len = tfd_tensor_get_index(t, i + 1) - tfd_tensor_get_index(t, i);
      if (len <= 0) continue;
      int64_t real = parent[i] == -1 ? 0 : len < size ? len : size, pos = parent[i];
      for (int64_t j = 0; j < real; j++, pos += mult) r[at++] = pos;
      for (int64_t j = real; j < len; j++) r[at++] = -1;
    }
    *out = r;
    *nout = total;
    return true;
  }
  int64_t *r = positions(n);
  if (!r) goto oom;
  int64_t column = 0, row = 0, pos = 0;
  for (int64_t i = 0; i < n; i++) {
    int64_t id = tfd_tensor_get_index(t, i);
    if (i == 0 || id != row) {
      if (id >= nparent || id < 0) {
        free(r);
        if (id < 0) tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "value_rowids[%lld] = %lld is negative", (long long)i, (long long)id);
        else
          tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Got %s=%lld which is not less than %lld",
                          i == 0 ? "current_value_rowid" : "next_value_rowid", (long long)id, (long long)nparent);
        return false;
      }
      column = 0;
      row = id;
      pos = parent[id];
    } else if (pos >= 0) {
      pos = ++column < size ? pos + mult : -1;
    }
    r[i] = pos;
  }
  *out = r;
  *nout = n;
  return true;
oom:
  tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory for the output positions");
  return false;
}

bool tfd_ragged_to_tensor_plan_make(tfd_kernel *k, tfd_kernel_context *c, tfd_tensor *const *in, tfd_ragged_to_tensor_plan *pl) {
  memset(pl, 0, sizeof *pl);
  const r2t_params *p = k->state;
  tfd_tensor *shape_t = in[0], *vals = in[1], *def = in[2], *first = in[3];
  int ragged = p->types[0] == RP_FIRST_DIM_SIZE ? p->ntypes - 1 : p->ntypes;
  char a[TFD_SHAPE_TEXT_CAP], b[TFD_SHAPE_TEXT_CAP];
  if (tfd_tensor_numel(first) == 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Invalid first partition input. Tensor requires at least one element.");
    return false;
  }
  for (int i = 0; i < p->ntypes; i++)
    if (!tfd_kernel_check_index(c, k, in[3 + i], "row_partition_tensors")) return false;
  int64_t first_dim;
  if (p->types[0] == RP_FIRST_DIM_SIZE) {
    first_dim = tfd_tensor_get_index(first, 0);
    if (first_dim < 0) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "FIRST_DIM_SIZE must be non-negative, got %lld", (long long)first_dim);
      return false;
    }
  } else if (p->types[0] == RP_ROW_SPLITS) {
    first_dim = tfd_tensor_dim(first, 0) - 1;
  } else if (p->types[0] == RP_VALUE_ROWIDS) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Cannot handle VALUE_ROWIDS in first dimension.");
    return false;
  } else {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Cannot handle type %s", rp_names[p->types[0]]);
    return false;
  }
  /* ValidateDefaultValueShape: default_value's dims against flat_values' from dimension 1, aligned left. */
  int vnd = tfd_tensor_ndims(vals), dnd = tfd_tensor_ndims(def);
  int64_t vdims[TFD_MAX_DIMS], ddims[TFD_MAX_DIMS];
  for (int d = 0; d < vnd; d++) vdims[d] = tfd_tensor_dim(vals, d);
  for (int d = 0; d < dnd; d++) ddims[d] = tfd_tensor_dim(def, d);
  if (dnd >= vnd) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                    "default_value.shape=%s and rt_input.flat_values.shape=%s are incompatible: default_value.rank = %d  "
                    "must be less than rt_input.flat_values.rank = %d",
                    tfd_shape_text(a, sizeof a, ddims, dnd), tfd_shape_text(b, sizeof b, vdims, vnd), dnd, vnd);
    return false;
  }
  for (int i = 0; i < dnd && i < vnd - 1; i++)
    if (ddims[i] != 1 && ddims[i] != vdims[i + 1]) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                      "default_value.shape=%s and rt_input.flat_values.shape=%s are incompatible: default_value.shape[%d] "
                      "= %lld but rt_input.flat_values.shape[%d] = %lld",
                      tfd_shape_text(a, sizeof a, ddims, dnd), tfd_shape_text(b, sizeof b, vdims, vnd), i - dnd,
                      (long long)ddims[i], i - dnd, (long long)vdims[i + 1]);
      return false;
    }
  /* The requested shape: a vector (-1 for a size to work out) or a scalar -1 (any rank). */
  int snd = -1;
  int64_t sdims[TFD_MAX_DIMS];
  if (!tfd_kernel_check_index(c, k, shape_t, "shape")) return false;
  if (tfd_tensor_ndims(shape_t) == 0) {
    if (tfd_tensor_get_index(shape_t, 0) != -1) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "The only valid scalar shape tensor is the fully unknown shape specified as -1.");
      return false;
    }
  } else if (tfd_tensor_ndims(shape_t) == 1 && tfd_tensor_numel(shape_t) <= TFD_MAX_DIMS) {
    snd = (int)tfd_tensor_numel(shape_t);
    for (int d = 0; d < snd; d++) {
      sdims[d] = tfd_tensor_get_index(shape_t, d);
      if (sdims[d] < -1) {
        tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Dimension %lld must be >= -1", (long long)sdims[d]);
        return false;
      }
    }
  } else {
    tfd_tensor_shape_text(a, sizeof a, shape_t, 0);
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "shape must be a vector of at most %d sizes or the scalar -1, got shape %s",
                    TFD_MAX_DIMS, a);
    return false;
  }
  /* CombineRaggedTensorToTensorShapes */
  int ond = ragged + vnd;
  if (ond > TFD_MAX_DIMS) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "the output would have more than %d dimensions", TFD_MAX_DIMS);
    return false;
  }
  int64_t size[TFD_MAX_DIMS];
  if (snd < 0) {
    for (int d = 0; d < ond; d++) size[d] = -1;
  } else {
    if (snd != ond) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                      "rt_input.shape and shape=%s are incompatible: rt_input.rank = %d but shape.rank = %d",
                      partial_text(a, sizeof a, sdims, snd, true), ond, snd);
      return false;
    }
    memcpy(size, sdims, (size_t)snd * sizeof *size);
  }
  for (int i = 1; i < vnd; i++) {
    int64_t *o = &size[ond - vnd + i];
    if (*o >= 0 && *o != vdims[i]) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                      "rt_input.shape and shape=%s are incompatible: rt_input.shape[%d] = %lld but shape[%d] = %lld",
                      partial_text(a, sizeof a, sdims, snd, snd >= 0), i + ragged, (long long)vdims[i], i + ragged,
                      (long long)*o);
      return false;
    }
    *o = vdims[i];
  }
  if (size[0] < 0) size[0] = first_dim;
  for (int i = 1; i <= ragged; i++)
    if (size[i] < 0) {
      int type;
      const tfd_tensor *t = partition(in, p, i - 1, &type);
      if (type != RP_ROW_SPLITS && type != RP_VALUE_ROWIDS) {
        tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Cannot handle partition type %s", rp_names[type]);
        return false;
      }
      size[i] = max_width(t, type);
    }
  /* multiplier[i]: output elements one step along dimension i moves (in value elements). */
  int64_t mult[TFD_MAX_DIMS], total = 1;
  for (int d = 0; d < ond; d++)
    if (!tfd_checked_mul(total, size[d], &total)) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Encountered overflow when multiplying %lld with %lld, result: -1",
                      (long long)total, (long long)size[d]);
      return false;
    }
  mult[ragged] = 1;
  for (int i = ragged - 1; i >= 0; i--) mult[i] = mult[i + 1] * size[i + 1];
  pl->nd = ond;
  memcpy(pl->dims, size, (size_t)ond * sizeof *size);
  pl->total = total;
  if (total == 0) return true;
  int64_t *index = positions(first_dim), nindex = first_dim;
  if (!index) {
    tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory for the output positions");
    return false;
  }
  for (int64_t i = 0; i < first_dim; i++) index[i] = i < size[0] ? i * mult[0] : -1;
  for (int i = 1; i <= ragged; i++) {
    int type;
    const tfd_tensor *t = partition(in, p, i - 1, &type);
    if (type != RP_ROW_SPLITS && type != RP_VALUE_ROWIDS) {
      free(index);
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Unsupported partition type:%s", rp_names[type]);
      return false;
    }
    int64_t *next, nnext;
    bool ok = next_index(k, c, t, type, index, nindex, mult[i], size[i], &next, &nnext);
    free(index);
    if (!ok) return false;
    index = next;
    nindex = nnext;
  }
  /* TensorFlow reads one value per position without asking whether there is one. */
  if (nindex != (vnd > 0 ? vdims[0] : 1)) {
    free(index);
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "the row partitions describe %lld values but flat_values has %lld",
                    (long long)nindex, (long long)(vnd > 0 ? vdims[0] : 1));
    return false;
  }
  /* SetOutput: the default, broadcast to one value's shape (right-aligned), in every cell; then the values. */
  size_t esz = tfd_dtype_size(tfd_tensor_dtype(vals));
  int end = ond - ragged - 1; /* a value's dims: size[ragged + 1 ..] */
  int64_t elem = 1;
  for (int d = ragged + 1; d < ond; d++) elem *= size[d]; /* a factor of total, which is not 0 */
  const char *dv = tfd_tensor_const_data(def);
  int64_t dnum = tfd_tensor_numel(def);
  for (int d = 0; d < dnd; d++) {
    int64_t want = size[ond - dnd + d];
    if (dnum != 1 && dnum != elem && ddims[d] != 1 && ddims[d] != want) {
      free(index);
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Error broadcasting default_value");
      return false;
    }
  }
  char *cell = malloc((size_t)elem * esz + 1);
  if (!cell) {
    free(index);
    tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory for the default value");
    return false;
  }
  for (int64_t e = 0; e < elem; e++) {
    int64_t from = 0;
    if (dnum == elem) from = e;
    else if (dnum != 1) {
      int64_t rest = e, stride = 1;
      for (int d = end - 1, dd = dnd - 1; d >= 0; d--, dd--) {
        int64_t n = size[ragged + 1 + d], at = rest % n;
        rest /= n;
        if (dd >= 0) {
          if (ddims[dd] != 1) from += at * stride;
          stride *= ddims[dd];
        }
      }
    }
    memcpy(cell + (size_t)e * esz, dv + (size_t)from * esz, esz);
  }
  pl->cell_elems = elem;
  pl->cells = total / elem;
  pl->index = index;
  pl->nindex = nindex;
  pl->cell = cell;
  return true;
}

void tfd_ragged_to_tensor_plan_free(tfd_ragged_to_tensor_plan *p) {
  free(p->index);
  free(p->cell);
}

static void k_ragged_to_tensor(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_ragged_to_tensor_plan p;
  if (!tfd_ragged_to_tensor_plan_make(k, c, c->inputs, &p)) return;
  tfd_tensor *vals = c->inputs[1];
  tfd_tensor *o = tfd_kernel_alloc(c, k, tfd_tensor_dtype(vals), p.dims, p.nd);
  if (o && p.total > 0) {
    size_t cell = (size_t)p.cell_elems * tfd_dtype_size(tfd_tensor_dtype(vals));
    char *dst = tfd_tensor_data(o);
    const char *src = tfd_tensor_const_data(vals);
    for (int64_t i = 0; i < p.cells; i++) memcpy(dst + (size_t)i * cell, p.cell, cell);
    for (int64_t i = 0; i < p.nindex; i++)
      if (p.index[i] >= 0) memcpy(dst + (size_t)p.index[i] * cell, src + (size_t)i * cell, cell);
  }
  tfd_ragged_to_tensor_plan_free(&p);
  if (o) c->outputs[0] = o;
}

/* ---- RaggedGather ---- */

/* A growing int64 vector; false when memory ran out. */
typedef struct {
  int64_t *v;
  int64_t n, cap;
} i64vec;

static bool push(i64vec *a, int64_t x) {
  if (a->n == a->cap) {
    int64_t cap = a->cap ? a->cap * 2 : 16;
    int64_t *more = realloc(a->v, (size_t)cap * sizeof *more);
    if (!more) return false;
    a->v = more;
    a->cap = cap;
  }
  a->v[a->n++] = x;
  return true;
}

bool tfd_ragged_gather_plan_make(tfd_kernel *k, tfd_kernel_context *c, tfd_tensor *const *in, tfd_ragged_gather_plan *p) {
  memset(p, 0, sizeof *p);
  int prr = (int)k->index, nout = c->num_outputs;
  tfd_tensor *vals = in[prr], *ix = in[prr + 1];
  char at[TFD_SHAPE_TEXT_CAP];
  for (int d = 0; d < prr; d++)
    if (!tfd_kernel_check_index(c, k, in[d], "params_nested_splits")) return false;
  if (!tfd_kernel_check_index(c, k, ix, "indices")) return false;
  int ind = tfd_tensor_ndims(ix), nsplits = ind - 1 + prr;
  if (nsplits != nout - 1) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                    "OUTPUT_RAGGED_RANK is %d but indices.rank - 1 + PARAMS_RAGGED_RANK is %d", nout - 1, nsplits);
    return false;
  }
  int64_t nparams = tfd_tensor_numel(in[0]) - 1, n = tfd_tensor_numel(ix);
  for (int64_t i = 0; i < n; i++) {
    int64_t v = tfd_tensor_get_index(ix, i);
    if (v < 0 || v >= nparams) {
      if (ind == 0) at[0] = 0;
      else if (ind == 1) snprintf(at, sizeof at, "[%lld]", (long long)i);
      else {
        char coords[TFD_SHAPE_TEXT_CAP];
        snprintf(at, sizeof at, "[%s]", tfd_index_coords(ix, i, ind, coords, sizeof coords));
      }
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "indices%s = %lld is not in [0, %lld)", at, (long long)v,
                      (long long)nparams);
      return false;
    }
  }
  if (tfd_tensor_ndims(vals) == 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "params.rank must be nonzero");
    return false;
  }
  int64_t nvals = tfd_tensor_dim(vals, 0);
  /* ValidateSplits; an inner splits vector may point at most at the last row of the next one (TensorFlow
   * allows one past it and then reads past the end). */
  for (int d = 0; d < prr; d++) {
    const tfd_tensor *sp = in[d];
    int64_t len = tfd_tensor_numel(sp), last = d == prr - 1 ? nvals : tfd_tensor_numel(in[d + 1]) - 1;
    const char *bad = NULL;
    if (len == 0) bad = "Ragged splits may not be empty";
    else if (tfd_tensor_get_index(sp, 0) < 0) bad = "Ragged splits must be non-negative";
    else if (tfd_tensor_get_index(sp, len - 1) > last) bad = "Ragged splits must not point past values";
    for (int64_t i = 1; !bad && i < len; i++)
      if (tfd_tensor_get_index(sp, i - 1) > tfd_tensor_get_index(sp, i)) bad = "Ragged splits must be sorted";
    if (bad) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "%s", bad);
      return false;
    }
  }
  i64vec out[TFD_MAX_OP_OUTPUTS] = {{0}}, slices = {0};
  bool ok = true;
  for (int d = 0; d < nsplits && ok; d++) ok = push(&out[d], 0);
  /* The splits of indices' own dimensions: range(rows + 1) * row_length. */
  int64_t rows = 1;
  for (int d = 0; d + 1 < ind && ok; d++) {
    rows *= tfd_tensor_dim(ix, d);
    int64_t len = tfd_tensor_dim(ix, d + 1);
    for (int64_t i = 1; i <= rows && ok; i++) ok = push(&out[d], i * len);
  }
  for (int64_t i = 0; i < n && ok; i++) {
    int64_t start = tfd_tensor_get_index(ix, i), limit = start + 1;
    for (int d = 0; d < prr && ok; d++) {
      const tfd_tensor *sp = in[d];
      int od = d + ind - 1;
      if (od >= 0) {
        int64_t delta = out[od].v[out[od].n - 1] - tfd_tensor_get_index(sp, start);
        for (int64_t j = start; j < limit && ok; j++) ok = push(&out[od], tfd_tensor_get_index(sp, j + 1) + delta);
      }
      start = tfd_tensor_get_index(sp, start);
      limit = tfd_tensor_get_index(sp, limit);
    }
    if (ok && limit != start) {
      ok = push(&slices, start) && push(&slices, limit);
      p->total += limit - start;
    }
  }
  p->nsplits = nsplits;
  for (int d = 0; d < nsplits; d++) p->splits[d] = out[d].v, p->nsplit[d] = out[d].n;
  p->slices = slices.v, p->nslices = slices.n;
  if (!ok) {
    tfd_ragged_gather_plan_free(p);
    tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory gathering %lld rows", (long long)n);
  }
  return ok;
}

void tfd_ragged_gather_plan_free(tfd_ragged_gather_plan *p) {
  for (int d = 0; d < p->nsplits; d++) free(p->splits[d]);
  free(p->slices);
  memset(p, 0, sizeof *p);
}

/* Output i of RaggedGather: the splits vectors as Tsplits tensors, then the values. */
static void k_ragged_gather(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_ragged_gather_plan p;
  if (!tfd_ragged_gather_plan_make(k, c, c->inputs, &p)) return;
  tfd_tensor *vals = c->inputs[k->index], *made[TFD_MAX_OP_OUTPUTS] = {0};
  tfd_dtype splits_dt = tfd_tensor_dtype(c->inputs[0]);
  bool ok = true;
  for (int d = 0; d < p.nsplits && ok; d++) {
    ok = (made[d] = tfd_kernel_alloc(c, k, splits_dt, &p.nsplit[d], 1)) != NULL;
    for (int64_t i = 0; ok && i < p.nsplit[d]; i++) {
      if (splits_dt == TFD_INT32) ((int32_t *)tfd_tensor_data(made[d]))[i] = (int32_t)p.splits[d][i];
      else ((int64_t *)tfd_tensor_data(made[d]))[i] = p.splits[d][i];
    }
  }
  int vnd = tfd_tensor_ndims(vals);
  int64_t dims[TFD_MAX_DIMS];
  for (int d = 0; d < vnd; d++) dims[d] = tfd_tensor_dim(vals, d);
  dims[0] = p.total;
  ok = ok && (made[p.nsplits] = tfd_kernel_alloc(c, k, tfd_tensor_dtype(vals), dims, vnd)) != NULL;
  if (ok) {
    size_t row = (size_t)tfd_dims_product(vals, 1, vnd) * tfd_dtype_size(tfd_tensor_dtype(vals));
    char *dst = tfd_tensor_data(made[p.nsplits]);
    const char *src = tfd_tensor_const_data(vals);
    for (int64_t s = 0; s + 1 < p.nslices; s += 2) {
      size_t bytes = (size_t)(p.slices[s + 1] - p.slices[s]) * row;
      if (bytes) memcpy(dst, src + (size_t)p.slices[s] * row, bytes);
      dst += bytes;
    }
  }
  for (int d = 0; d <= p.nsplits; d++) {
    if (ok) c->outputs[d] = made[d];
    else tfd_tensor_unref(made[d]);
  }
  tfd_ragged_gather_plan_free(&p);
}

static void cleanup_r2t(tfd_kernel *k) { free(k->state); }

tfd_code tfd_setup_ragged(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  const char *op = init->op->name;
  if (strcmp(op, "RaggedRange") == 0) {
    k->dst = tfd_attr_dtype(init->node, "Tsplits", TFD_INT64);
    if (k->dst != TFD_INT32 && k->dst != TFD_INT64)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Tsplits must be int32 or int64, got %s", tfd_dtype_name(k->dst));
    k->compute = k_ragged_range;
    return TFD_OK;
  }
  if (strcmp(op, "RaggedGather") == 0) {
    int64_t prr = tfd_attr_int(init->node, "PARAMS_RAGGED_RANK", 0);
    if (prr < 1 || prr > TFD_MAX_OP_OUTPUTS)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "PARAMS_RAGGED_RANK must be from 1 to %d, got %lld",
                             TFD_MAX_OP_OUTPUTS, (long long)prr);
    if (init->num_inputs != prr + 2)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "PARAMS_RAGGED_RANK is %lld but %d inputs are given", (long long)prr,
                             init->num_inputs);
    k->index = prr;
    k->compute = k_ragged_gather;
    return TFD_OK;
  }
  const tfd_attr_value *types = tfd_node_def_attr(init->node, "row_partition_types");
  if (!types || types->type != TFD_ATTR_LIST_STRING || types->list_len < 1)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "No row_partition_types given.");
  if (types->list_len > TFD_MAX_DIMS)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "at most %d row_partition_types are supported", TFD_MAX_DIMS);
  if ((int)types->list_len != init->num_inputs - 3)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "%d row_partition_types but %d row_partition_tensors",
                           (int)types->list_len, init->num_inputs - 3);
  r2t_params *p = calloc(1, sizeof *p);
  if (!p) return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  p->ntypes = (int)types->list_len;
  for (int i = 0; i < p->ntypes; i++) {
    int t = 0;
    while (t < RP_COUNT && strcmp(types->list_s[i], rp_names[t]) != 0) t++;
    if (t == RP_COUNT) {
      tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Unknown string for partition info type: %s", types->list_s[i]);
      free(p);
      return TFD_INVALID_ARGUMENT;
    }
    p->types[i] = t;
  }
  k->state = p;
  k->cleanup = cleanup_r2t;
  k->compute = k_ragged_to_tensor;
  return TFD_OK;
}
