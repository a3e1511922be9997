/* The host work every device kernel shares (device_kernel.h): the device's math, outputs in the
 * memory their dtype lives in, moves between memories, walks, and the host fallback. */
#include <stdlib.h>
#include <string.h>

#include "../core/allocator_internal.h"
#include "../core/tensor_internal.h"
#include "device_kernel.h"
#include "kernel_shared.h"

const tfd_device_math *tfd_dk_math(const tfd_kernel *k, tfd_kernel_context *c) {
  if (c->device->math) return c->device->math;
  tfd_kernel_fail(c, k, TFD_INTERNAL, "device %s has no device math (its backend only moves data)",
                  tfd_device_name(c->device));
  return NULL;
}

bool tfd_dk_ok(const tfd_kernel *k, tfd_kernel_context *c, tfd_code code, tfd_status *st) {
  if (code == TFD_OK) return true;
  tfd_kernel_fail(c, k, code, "%s", tfd_status_message(st)[0] ? tfd_status_message(st) : "device math failed");
  tfd_status_clear(st);
  return false;
}

static tfd_allocator *host_allocator(tfd_device *d) { return d->ops->get_allocator(d, (tfd_alloc_attrs){.on_host = true}); }

/* A tensor from allocator a, the error reported against the node. */
static tfd_tensor *new_in(tfd_kernel_context *c, const tfd_kernel *k, tfd_allocator *a, tfd_dtype dt, const int64_t *dims,
                          int nd) {
  tfd_status tmp = TFD_STATUS_INIT;
  tfd_tensor *t = tfd_tensor_make(a, dt, dims, nd, &tmp);
  if (!t) tfd_dk_ok(k, c, tfd_status_code(&tmp), &tmp);
  return t;
}

tfd_tensor *tfd_dk_alloc(tfd_kernel_context *c, const tfd_kernel *k, tfd_dtype dt, const int64_t *dims, int nd) {
  tfd_allocator *a = tfd_kernel_memory_for(c->device, dt);
  /* Device memory comes through the context's allocator, which a traced step wraps to count it. */
  if (a->device_memory) return tfd_kernel_alloc(c, k, dt, dims, nd);
  return new_in(c, k, a, dt, dims, nd);
}

tfd_tensor *tfd_dk_alloc_device(tfd_kernel_context *c, const tfd_kernel *k, tfd_dtype dt, const int64_t *dims, int nd) {
  return tfd_kernel_alloc(c, k, dt, dims, nd);
}

tfd_tensor *tfd_dk_scalar(tfd_kernel_context *c, const tfd_kernel *k, const tfd_device_math *m, tfd_dtype dt,
                          const void *value) {
  tfd_tensor *t = tfd_dk_alloc_device(c, k, dt, NULL, 0);
  if (!t) return NULL;
  tfd_status st = TFD_STATUS_INIT;
  if (!tfd_dk_ok(k, c, m->fill(c->device, tfd_dtype_size(dt), value, tfd_tensor_data(t), 1, &st), &st)) {
    tfd_tensor_unref(t);
    return NULL;
  }
  return t;
}

bool tfd_dk_binary_flat(const tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m, tfd_dm_binary op, tfd_dtype dtype,
                        const void *a, const void *b, bool b_scalar, void *y, int64_t n) {
  int64_t strides[2][TFD_MAX_DIMS] = {{1}, {b_scalar ? 0 : 1}};
  tfd_dm_walk w;
  if (tfd_dk_walk(&w, 1, &n, 2, strides, NULL) == 0) return true;
  tfd_status st = TFD_STATUS_INIT;
  return tfd_dk_ok(k, c, m->binary(c->device, op, dtype, a, b, y, &w, &st), &st);
}

bool tfd_dk_copy_flat(const tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m, size_t es, const void *x,
                      int64_t x_stride, void *y, int64_t n) {
  int64_t strides[2][TFD_MAX_DIMS] = {{x_stride}, {1}};
  tfd_dm_walk w;
  if (tfd_dk_walk(&w, 1, &n, 2, strides, NULL) == 0) return true;
  tfd_status st = TFD_STATUS_INIT;
  return tfd_dk_ok(k, c, m->copy_walk(c->device, es, x, y, &w, &st), &st);
}

bool tfd_dk_leaky_relu_f64(const tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m, const tfd_tensor *x,
                           tfd_tensor *y, double alpha) {
  int64_t n = tfd_tensor_numel(x);
  if (n == 0) return true;
  tfd_tensor *a = tfd_dk_scalar(c, k, m, TFD_FLOAT64, &alpha);
  if (!a) return false;
  bool ok = tfd_dk_binary_flat(k, c, m, TFD_DM_PRELU, TFD_FLOAT64, tfd_tensor_const_data(x), tfd_tensor_const_data(a), true,
                               tfd_tensor_data(y), n);
  tfd_tensor_unref(a);
  return ok;
}

tfd_tensor *tfd_dk_move(tfd_kernel_context *c, const tfd_kernel *k, tfd_tensor *t, tfd_allocator *to) {
  tfd_status tmp = TFD_STATUS_INIT;
  tfd_tensor *r = tfd_tensor_copy_to(t, to, &tmp);
  if (!r)
    tfd_kernel_fail(c, k, tfd_status_code(&tmp), "moving data to or from %s: %s", tfd_device_name(c->device),
                    tfd_status_message(&tmp));
  tfd_status_clear(&tmp);
  return r;
}

tfd_tensor *tfd_kernel_host_input(tfd_kernel_context *c, const tfd_kernel *k, int i) {
  tfd_tensor *t = c->inputs[i];
  return tfd_tensor_on_host(t) ? tfd_tensor_ref(t) : tfd_dk_move(c, k, t, NULL);
}

tfd_tensor *tfd_dk_to_home(tfd_kernel_context *c, const tfd_kernel *k, tfd_tensor *t) {
  return tfd_dk_move(c, k, t, tfd_kernel_memory_for(c->device, tfd_tensor_dtype(t)));
}

tfd_tensor *tfd_dk_int64s_to_device(tfd_kernel_context *c, const tfd_kernel *k, const int64_t *v, int64_t n) {
  tfd_tensor *h = tfd_tensor_make(NULL, TFD_INT64, &n, 1, NULL);
  if (!h) {
    tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory for %lld int64 indices", (long long)n);
    return NULL;
  }
  if (n) memcpy(tfd_tensor_data(h), v, (size_t)n * sizeof *v);
  tfd_tensor *d = tfd_dk_to_device(c, k, h);
  tfd_tensor_unref(h);
  return d;
}

tfd_tensor *tfd_dk_to_device(tfd_kernel_context *c, const tfd_kernel *k, tfd_tensor *t) {
  return tfd_dk_move(c, k, t, c->device->ops->get_allocator(c->device, (tfd_alloc_attrs){.on_host = false}));
}

/* ---- the host fallback ---- */
/* Runs the CPU kernel (k->host_compute) with the inputs of k->host_inputs on the host; when
 * `staged`, on the host's allocator too, its outputs then moved to the memory their dtypes live in. */
static void run_on_host(tfd_kernel *k, tfd_kernel_context *c, bool staged) {
  int n = c->num_inputs;
  tfd_tensor **in = n ? calloc((size_t)n, sizeof *in) : NULL, *out[TFD_MAX_OP_OUTPUTS] = {0};
  if (n && !in) {
    tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory");
    return;
  }
  bool ok = true;
  for (int i = 0; i < n && ok; i++) {
    bool to_host = k->host_inputs == UINT32_MAX || (i < 32 && (k->host_inputs & (1u << i))); /* all: any count */
    in[i] = to_host ? tfd_kernel_host_input(c, k, i) : tfd_tensor_ref(c->inputs[i]);
    ok = in[i] != NULL;
  }
  if (ok) {
    tfd_kernel_context hc = *c;
    hc.inputs = in;
    hc.owns_inputs = false;
    if (staged) {
      hc.outputs = out;
      hc.allocator = host_allocator(c->device);
    }
    k->host_compute(k, &hc);
    for (int o = 0; staged && o < c->num_outputs && tfd_status_code(c->status) == TFD_OK; o++)
      if (out[o] && !(c->outputs[o] = tfd_dk_to_home(c, k, out[o]))) break;
  }
  if (tfd_status_code(c->status) != TFD_OK)
    for (int o = 0; staged && o < c->num_outputs; o++) {
      tfd_tensor_unref(c->outputs[o]);
      c->outputs[o] = NULL;
    }
  for (int i = 0; i < n; i++) tfd_tensor_unref(in[i]);
  for (int o = 0; o < TFD_MAX_OP_OUTPUTS; o++) tfd_tensor_unref(out[o]);
  free(in);
}

static void staged_compute(tfd_kernel *k, tfd_kernel_context *c) { run_on_host(k, c, true); }
void tfd_dk_run_on_host(tfd_kernel *k, tfd_kernel_context *c) { run_on_host(k, c, true); }
static void host_inputs_compute(tfd_kernel *k, tfd_kernel_context *c) { run_on_host(k, c, false); }

tfd_code tfd_dk_setup_on_host(tfd_kernel *k, const tfd_kernel_init *init, tfd_kernel_setup_fn cpu_setup,
                              tfd_status *st) {
  if (cpu_setup(k, init, st) != TFD_OK) return tfd_status_code(st);
  k->host_compute = k->compute;
  k->host_inputs = UINT32_MAX;
  k->compute = staged_compute;
  return TFD_OK;
}

tfd_code tfd_dk_setup_either(tfd_kernel *k, const tfd_kernel_init *init, tfd_kernel_setup_fn cpu_setup, bool on_device,
                             void (*compute)(tfd_kernel *, tfd_kernel_context *), tfd_status *st) {
  if (!on_device) return tfd_dk_setup_on_host(k, init, cpu_setup, st);
  if (cpu_setup(k, init, st) != TFD_OK) return tfd_status_code(st);
  k->host_compute = k->compute; /* for tfd_dk_run_on_host */
  k->host_inputs = UINT32_MAX;
  k->compute = compute;
  return TFD_OK;
}

tfd_code tfd_dk_setup_host_inputs(tfd_kernel *k, const tfd_kernel_init *init, tfd_kernel_setup_fn cpu_setup,
                                  uint32_t mask, tfd_status *st) {
  if (cpu_setup(k, init, st) != TFD_OK) return tfd_status_code(st);
  k->host_compute = k->compute;
  k->host_inputs = mask;
  k->compute = host_inputs_compute;
  return TFD_OK;
}

/* ---- walks ---- */
int64_t tfd_dk_walk(tfd_dm_walk *w, int nd, const int64_t *dims, int nops, const int64_t strides[][TFD_MAX_DIMS],
                    const int64_t *offsets) {
  memset(w, 0, sizeof *w);
  for (int op = 0; op < nops; op++) w->offsets[op] = offsets ? offsets[op] : 0;
  int64_t count = 1;
  for (int d = 0; d < nd; d++)
    if (dims[d] == 0) return 0;
  for (int d = 0; d < nd; d++) count *= dims[d]; /* the output exists: its element count fits */
  int m = 0;
  for (int d = 0; d < nd; d++) {
    if (dims[d] == 1) continue;
    bool merge = m > 0;
    for (int op = 0; op < nops && merge; op++) merge = w->strides[op][m - 1] == strides[op][d] * dims[d];
    if (merge) {
      w->dims[m - 1] *= dims[d];
      for (int op = 0; op < nops; op++) w->strides[op][m - 1] = strides[op][d];
      continue;
    }
    w->dims[m] = dims[d];
    for (int op = 0; op < nops; op++) w->strides[op][m] = strides[op][d];
    m++;
  }
  w->nd = m;
  return count;
}

void tfd_dk_strides(int nd, const int64_t *dims, int64_t *strides) {
  int64_t s = 1;
  for (int d = nd - 1; d >= 0; d--) {
    strides[d] = s;
    s *= dims[d];
  }
}

void tfd_dk_broadcast_strides(const tfd_shape *s, const tfd_shape *out, int64_t *strides) {
  int64_t stride = 1;
  for (int d = out->ndims - 1; d >= 0; d--) {
    int sd = d - (out->ndims - s->ndims);
    int64_t size = sd >= 0 ? s->dims[sd] : 1;
    strides[d] = size == 1 ? 0 : stride;
    stride *= size;
  }
}

bool tfd_dk_arith_dtype(tfd_dtype dt) { return dt == TFD_FLOAT32 || dt == TFD_FLOAT64 || dt == TFD_INT64; }

bool tfd_dk_lives_on_device(tfd_device *d, tfd_dtype dt) { return tfd_kernel_memory_for(d, dt)->device_memory != NULL; }
