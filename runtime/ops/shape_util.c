/* Shapes: known or partly known dimensions, broadcasting, NHWC window attributes, and the plan of a
 * StridedSlice, shared by the shape functions and the kernels (op_registry.h declares them). */
#include <stdio.h>
#include <string.h>

#include "../core/checked.h"
#include "../core/status_internal.h"
#include "op_registry.h"

bool tfd_shape_is_known(const tfd_shape *s) {
  if (s->ndims < 0) return false;
  for (int i = 0; i < s->ndims; i++)
    if (s->dims[i] < 0) return false;
  return true;
}

int64_t tfd_shape_numel(const tfd_shape *s) {
  if (!tfd_shape_is_known(s)) return -1;
  int64_t n = 1;
  for (int i = 0; i < s->ndims; i++)
    if (!tfd_checked_mul(n, s->dims[i], &n)) return -1; /* no tensor can have this shape */
  return n;
}

bool tfd_shape_equal(const tfd_shape *a, const tfd_shape *b) {
  if (a->ndims != b->ndims) return false;
  for (int d = 0; d < a->ndims; d++)
    if (a->dims[d] != b->dims[d]) return false;
  return true;
}

void tfd_shape_of_tensor(const tfd_tensor *t, tfd_shape *out) {
  out->ndims = tfd_tensor_ndims(t);
  for (int i = 0; i < out->ndims; i++) out->dims[i] = tfd_tensor_dim(t, i);
}

const char *tfd_shape_string(const tfd_shape *s, char *buf, size_t cap) {
  if (s->ndims < 0) {
    snprintf(buf, cap, "<unknown>");
    return buf;
  }
  size_t n = (size_t)snprintf(buf, cap, "[");
  for (int i = 0; i < s->ndims && n < cap; i++) {
    if (s->dims[i] < 0)
      n += (size_t)snprintf(buf + n, cap - n, "%s?", i ? "," : "");
    else
      n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? "," : "", (long long)s->dims[i]);
  }
  if (n < cap) snprintf(buf + n, cap - n, "]");
  return buf;
}

tfd_code tfd_broadcast_shapes(const tfd_shape *a, const tfd_shape *b, tfd_shape *out, tfd_status *status) {
  if (a->ndims < 0 || b->ndims < 0) {
    out->ndims = -1;
    return TFD_OK;
  }
  int n = a->ndims > b->ndims ? a->ndims : b->ndims;
  out->ndims = n;
  for (int i = 0; i < n; i++) {
    int ia = a->ndims - n + i, ib = b->ndims - n + i;
    int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
    if (da == 1)
      out->dims[i] = db;
    else if (db == 1)
      out->dims[i] = da;
    else if (da < 0 || db < 0)
      out->dims[i] = da < 0 ? db : da; /* unknown: trust the known one */
    else if (da == db)
      out->dims[i] = da;
    else {
      char sa[96], sb[96];
      return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "Incompatible shapes: %s vs. %s",
                             tfd_shape_string(a, sa, sizeof sa), tfd_shape_string(b, sb, sizeof sb));
    }
  }
  return TFD_OK;
}

int64_t tfd_tensor_get_index(const tfd_tensor *t, int64_t i) {
  const void *d = tfd_tensor_const_data(t);
  switch (tfd_tensor_dtype(t)) {
    case TFD_INT64:
      return ((const int64_t *)d)[i];
    case TFD_INT32:
      return ((const int32_t *)d)[i];
    default:
      return 0; /* inference and kernels refuse non-index dtypes before reading */
  }
}

/* Attr [1, h, w, 1] list `name` into out (default dflt when absent); false when malformed. */
bool tfd_spatial_attr(const tfd_node_def *node, const char *name, int64_t dflt, int64_t out[2]) {
  const tfd_attr_value *v = tfd_node_def_attr(node, name);
  if (!v || v->type != TFD_ATTR_LIST_INT || v->list_len == 0) {
    out[0] = out[1] = dflt;
    return true;
  }
  if (v->list_len != 4 || v->list_i[0] != 1 || v->list_i[3] != 1 || v->list_i[1] < 1 || v->list_i[2] < 1) return false;
  out[0] = v->list_i[1];
  out[1] = v->list_i[2];
  return true;
}

/* StridedSlice's index spec, as TensorFlow's ValidateStridedSliceOp reads it: the sparse spec (one entry per
 * begin/end/strides element, with ellipsis and new axes) made dense (one entry per input dimension), then
 * clamped per dimension. Unknown input sizes (-1) give unknown result sizes and skip the bounds checks. */
#define SS_MAX_SPARSE 32

enum { SS_NEW_AXIS = -1, SS_SHRINK = -2 };

tfd_code tfd_strided_slice_plan_make(const tfd_shape *in, const tfd_tensor *bt, const tfd_tensor *et,
                                     const tfd_tensor *st, const tfd_strided_slice_masks *masks,
                                     tfd_strided_slice_plan *p, tfd_status *status) {
  int nd = in->ndims;
  int64_t ns = tfd_tensor_numel(bt);
  tfd_dtype it = tfd_tensor_dtype(bt);
  if (!(TFD_TYPES_INDEX & (1u << it)) || tfd_tensor_ndims(bt) != 1 || tfd_tensor_ndims(et) != 1 ||
      tfd_tensor_ndims(st) != 1 || tfd_tensor_numel(et) != ns || tfd_tensor_numel(st) != ns ||
      tfd_tensor_dtype(et) != it || tfd_tensor_dtype(st) != it)
    return tfd_status_setf(status, TFD_INVALID_ARGUMENT,
                           "Expected begin, end, and strides to be 1D equal size int32 or int64 tensors of one dtype");
  if (ns >= SS_MAX_SPARSE)
    return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "begin has %lld entries; at most %d are supported",
                           (long long)ns, SS_MAX_SPARSE - 1);
  uint64_t ellipsis_mask = masks->ellipsis & ((1ull << ns) - 1); /* bits past the spec mean nothing */
  if (ellipsis_mask & (ellipsis_mask - 1))
    return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "Multiple ellipses in slice spec not allowed");
  int sparse = (int)ns, new_after_ellipsis = 0;
  bool seen_ellipsis = false;
  for (int i = 0; i < sparse; i++) {
    if (seen_ellipsis && (masks->new_axis >> i & 1)) new_after_ellipsis++;
    if (ellipsis_mask >> i & 1) seen_ellipsis = true;
  }
  if (!seen_ellipsis) ellipsis_mask |= 1ull << sparse++;
  int64_t dbegin[TFD_MAX_DIMS], dend[TFD_MAX_DIMS], dstride[TFD_MAX_DIMS];
  bool dbm[TFD_MAX_DIMS] = {0}, dem[TFD_MAX_DIMS] = {0}, dshrink[TFD_MAX_DIMS] = {0};
  int gather[SS_MAX_SPARSE + TFD_MAX_DIMS], ngather = 0, full = 0;
  for (int i = 0; i < sparse; i++) {
    if (ellipsis_mask >> i & 1) {
      int next = nd - (sparse - i) + 1 + new_after_ellipsis;
      if (next > nd) next = nd;
      for (; full < next; full++) {
        dbegin[full] = dend[full] = 0;
        dstride[full] = 1;
        dbm[full] = dem[full] = true;
        gather[ngather++] = full;
      }
    } else if (masks->new_axis >> i & 1) {
      gather[ngather++] = SS_NEW_AXIS;
    } else {
      if (full >= nd)
        return tfd_status_setf(status, TFD_INVALID_ARGUMENT,
                               "Index out of range using input dim %d; input has only %d dims", full, nd);
      dbegin[full] = tfd_tensor_get_index(bt, i);
      dend[full] = tfd_tensor_get_index(et, i);
      dstride[full] = tfd_tensor_get_index(st, i);
      dbm[full] = masks->begin >> i & 1;
      dem[full] = masks->end >> i & 1;
      dshrink[full] = masks->shrink >> i & 1;
      gather[ngather++] = dshrink[full] ? SS_SHRINK : full;
      full++;
    }
  }
  for (; full < nd; full++) { /* dimensions the spec leaves out are taken whole */
    dbegin[full] = dend[full] = 0;
    dstride[full] = 1;
    dbm[full] = dem[full] = true;
  }
  p->ndims = nd;
  for (int d = 0; d < nd; d++) {
    int64_t dim = in->dims[d], stride = dstride[d];
    if (stride == 0) return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "strides[%d] must be non-zero", d);
    p->stride[d] = stride;
    if (dshrink[d]) {
      if (stride <= 0)
        return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "only stride 1 allowed on non-range indexing.");
      int64_t b = dbegin[d] < 0 && dim >= 0 ? dim + dbegin[d] : dbegin[d];
      if (dim >= 0 && (b < 0 || b >= dim))
        return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "slice index %lld of dimension %d out of bounds.",
                               (long long)dbegin[d], d);
      p->begin[d] = b;
      p->stride[d] = 1;
      p->dims[d] = 1;
      continue;
    }
    if (dim < 0) {
      p->begin[d] = 0;
      p->dims[d] = -1;
      continue;
    }
    int64_t lo = stride > 0 ? 0 : -1, hi = stride > 0 ? dim : dim - 1, be[2] = {dbegin[d], dend[d]};
    bool masked[2] = {dbm[d], dem[d]};
    for (int e = 0; e < 2; e++) {
      if (masked[e]) {
        be[e] = (stride > 0) == (e == 0) ? lo : hi;
      } else {
        int64_t x = be[e] < 0 ? (be[e] < -dim ? -1 - dim : be[e]) + dim : be[e]; /* no overflow for huge negatives */
        be[e] = x < lo ? lo : x > hi ? hi : x;
      }
    }
    p->begin[d] = be[0];
    int64_t len = be[1] - be[0]; /* both in [-1, dim]: no overflow */
    if (len == 0 || (len < 0) != (stride < 0))
      p->dims[d] = 0;
    else if (stride == INT64_MIN)
      p->dims[d] = 1; /* |len| < |stride| */
    else
      p->dims[d] = len / stride + (len % stride != 0);
  }
  p->final.ndims = 0;
  for (int i = 0; i < ngather; i++) {
    if (gather[i] == SS_SHRINK) continue;
    if (p->final.ndims == TFD_MAX_DIMS)
      return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "the result would have more than %d dimensions",
                             TFD_MAX_DIMS);
    p->final.dims[p->final.ndims++] = gather[i] == SS_NEW_AXIS ? 1 : p->dims[gather[i]];
  }
  return TFD_OK;
}

void tfd_strided_slice_masks_of(const tfd_node_def *node, tfd_strided_slice_masks *m) {
  static const char *const names[5] = {"begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"};
  uint64_t *f[5] = {&m->begin, &m->end, &m->ellipsis, &m->new_axis, &m->shrink};
  for (int i = 0; i < 5; i++) {
    const tfd_attr_value *v = tfd_node_def_attr(node, names[i]);
    *f[i] = v && v->type == TFD_ATTR_INT ? (uint64_t)v->i : 0;
  }
}
