/* kernel_shared.h: host logic that kernels of every family use, on the CPU and on devices. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/status_internal.h"
#include "../core/tensor_internal.h"
#include "device_kernel.h"
#include "kernel_shared.h"

bool tfd_kernel_read_axis(tfd_kernel_context *c, const tfd_kernel *k, int i, int rank, const char *what, int64_t *axis) {
  const tfd_tensor *t = c->inputs[i];
  if (!tfd_kernel_check_index(c, k, t, what)) return false;
  if (tfd_tensor_numel(t) != 1 || tfd_tensor_ndims(t) > 1) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "%s must be a scalar, got a tensor of rank %d with %lld elements", what,
                    tfd_tensor_ndims(t), (long long)tfd_tensor_numel(t));
    return false;
  }
  tfd_tensor *h = tfd_kernel_host_input(c, k, i);
  if (!h) return false;
  int64_t a = tfd_tensor_get_index(h, 0);
  tfd_tensor_unref(h);
  if (a < -rank || a >= rank) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "%s %lld is out of range [%d, %d)", what, (long long)a, -rank, rank);
    return false;
  }
  *axis = a < 0 ? a + rank : a;
  return true;
}

int64_t tfd_dims_product(const tfd_tensor *t, int from, int to) {
  int64_t n = 1;
  for (int d = from; d < to; d++) n *= tfd_tensor_dim(t, d);
  return n;
}

const char *tfd_index_coords(const tfd_tensor *t, int64_t i, int upto, char *buf, size_t cap) {
  int64_t c[TFD_MAX_DIMS];
  for (int d = upto - 1; d >= 0; d--) {
    int64_t dim = tfd_tensor_dim(t, d);
    c[d] = dim ? i % dim : 0;
    i = dim ? i / dim : 0;
  }
  size_t n = 0;
  buf[0] = 0;
  for (int d = 0; d < upto && n < cap; d++) n += (size_t)snprintf(buf + n, cap - n, "%s%lld", d ? "," : "", (long long)c[d]);
  return buf;
}

void tfd_step_container(int64_t step_id, char *buf, size_t cap) { snprintf(buf, cap, "__per_step_%lld", (long long)step_id); }

const char *tfd_shape_text(char *buf, size_t cap, const int64_t *dims, int nd) {
  if (nd < 0) {
    snprintf(buf, cap, "<unknown>");
    return buf;
  }
  size_t at = (size_t)snprintf(buf, cap, "[");
  for (int i = 0; i < nd && at < cap; i++)
    at += (size_t)snprintf(buf + at, cap - at, "%s%lld", i ? "," : "", (long long)dims[i]);
  if (at < cap) snprintf(buf + at, cap - at, "]");
  return buf;
}

const char *tfd_tensor_shape_text(char *buf, size_t cap, const tfd_tensor *t, int from) {
  int64_t d[TFD_MAX_DIMS];
  int nd = tfd_tensor_ndims(t) - from;
  for (int i = 0; i < nd; i++) d[i] = tfd_tensor_dim(t, i + from);
  return tfd_shape_text(buf, cap, d, nd < 0 ? 0 : nd);
}

tfd_tensor **tfd_concat_v1_inputs(tfd_kernel_context *c, const tfd_kernel *k, tfd_tensor **buf, int cap) {
  tfd_tensor **in = c->num_inputs <= cap ? buf : malloc((size_t)c->num_inputs * sizeof *in);
  if (!in) {
    tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory");
    return NULL;
  }
  for (int i = 1; i < c->num_inputs; i++) in[i - 1] = c->inputs[i];
  in[c->num_inputs - 1] = c->inputs[0];
  return in;
}

bool tfd_kernel_on_gpu(const tfd_kernel_context *c) { return tfd_dk_lives_on_device(c->device, TFD_FLOAT32); }

tfd_tensor *tfd_kernel_alloc_home(tfd_kernel_context *c, const tfd_kernel *k, tfd_dtype dt, const int64_t *dims, int nd) {
  return tfd_kernel_on_gpu(c) ? tfd_dk_alloc(c, k, dt, dims, nd) : tfd_kernel_alloc(c, k, dt, dims, nd);
}

tfd_tensor *tfd_kernel_host_copy(tfd_kernel_context *c, const tfd_kernel *k, const tfd_tensor *t) {
  if (tfd_tensor_in_host_memory(t)) return tfd_tensor_ref((tfd_tensor *)t);
  tfd_status st = TFD_STATUS_INIT;
  tfd_tensor *h = tfd_tensor_copy_to((tfd_tensor *)t, NULL, &st);
  if (!h) {
    tfd_kernel_fail(c, k, tfd_status_code(&st), "%s", tfd_status_message(&st));
    tfd_status_clear(&st);
  }
  return h;
}

tfd_tensor *tfd_kernel_item_home(tfd_kernel_context *c, const tfd_kernel *k, tfd_tensor *t) {
  return tfd_kernel_on_gpu(c) ? tfd_dk_to_home(c, k, t) : tfd_kernel_host_copy(c, k, t);
}

tfd_tensor *tfd_kernel_host_to_home(tfd_kernel_context *c, const tfd_kernel *k, tfd_tensor *t) {
  if (!t || !tfd_kernel_on_gpu(c)) return t;
  tfd_tensor *h = tfd_dk_to_home(c, k, t);
  tfd_tensor_unref(t);
  return h;
}

bool tfd_kernel_put_elems(tfd_kernel_context *c, const tfd_kernel *k, tfd_tensor *dst, int64_t at, tfd_tensor *src,
                          int64_t from, int64_t n) {
  if (n == 0) return true;
  size_t es = tfd_dtype_size(tfd_tensor_dtype(dst));
  char *d = (char *)tfd_tensor_data(dst) + (size_t)at * es;
  bool host = tfd_tensor_in_host_memory(dst);
  tfd_tensor *s = !src ? NULL : host ? tfd_kernel_host_copy(c, k, src) : tfd_dk_to_home(c, k, src);
  if (src && !s) return false;
  bool ok = true;
  if (host) {
    if (s) memcpy(d, (const char *)tfd_tensor_const_data(s) + (size_t)from * es, (size_t)n * es);
    else memset(d, 0, (size_t)n * es);
  } else {
    const tfd_device_math *m = tfd_dk_math(k, c);
    tfd_status st = TFD_STATUS_INIT;
    static const char zero[16];
    ok = m && (s ? tfd_dk_copy_flat(k, c, m, es, (const char *)tfd_tensor_const_data(s) + (size_t)from * es, 1, d, n)
                 : tfd_dk_ok(k, c, m->fill(c->device, es, zero, d, n, &st), &st));
  }
  tfd_tensor_unref(s);
  return ok;
}
