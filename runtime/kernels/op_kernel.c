/* What every kernel calls while it runs (TensorFlow's op_kernel.cc): failing with the node's name,
 * stopping on cancellation or a deadline, allocating or forwarding outputs, checking inputs, reading
 * attributes with defaults. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/allocator_internal.h"
#include "../core/status_internal.h"
#include "../core/tensor_internal.h"
#include "../framework/cancellation.h"
#include "kernel.h"

tfd_allocator *tfd_kernel_memory_for(tfd_device *d, tfd_dtype dt) {
  tfd_allocator *a = d->ops->get_allocator(d, (tfd_alloc_attrs){.on_host = false});
  if (a->device_memory && (dt == TFD_INT32 || dt == TFD_RESOURCE || dt == TFD_VARIANT || dt == TFD_STRING))
    return d->ops->get_allocator(d, (tfd_alloc_attrs){.on_host = true});
  return a;
}

void tfd_kernel_fail(tfd_kernel_context *c, const tfd_kernel *k, tfd_code code, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  tfd_status_setf(c->status, code, "node '%s' (%s): %s", k->name, k->op->name, msg);
}

bool tfd_kernel_should_stop(const tfd_kernel_context *c) {
  int64_t deadline = tfd_kernel_deadline(c);
  if (deadline > 0 && tfd_kernel_clock_micros() >= deadline) return true;
  return c->cancellation && tfd_cancellation_is_cancelled(c->cancellation);
}

void tfd_kernel_timeout_status(const tfd_kernel_context *c, tfd_status *st) {
  const tfd_deadline *d = c->deadline;
  tfd_status_setf(st, TFD_DEADLINE_EXCEEDED, "Timed out waiting for %s (%lld ms)", d && d->what ? d->what : "the step",
                  d ? (long long)d->timeout_ms : 0LL);
}

void tfd_kernel_fail_stopped(tfd_kernel_context *c) {
  const char *why = NULL;
  tfd_code code = c->cancellation ? tfd_cancellation_reason(c->cancellation, &why) : TFD_OK;
  /* Cancelled: the reason the step reports anyway. Else the deadline passed (the only other reason
   * to stop), and the step's own timeout text says so, as a waiter would have. */
  if (code != TFD_OK)
    tfd_status_setf(c->status, code, "%s", why);
  else
    tfd_kernel_timeout_status(c, c->status);
}

tfd_tensor *tfd_kernel_alloc(tfd_kernel_context *c, const tfd_kernel *k, tfd_dtype dt, const int64_t *dims, int ndims) {
  tfd_status tmp = TFD_STATUS_INIT;
  tfd_tensor *t = tfd_tensor_make(c->allocator, dt, dims, ndims, &tmp);
  if (!t) {
    tfd_kernel_fail(c, k, tfd_status_code(&tmp), "%s", tfd_status_message(&tmp));
    tfd_status_clear(&tmp);
  } else if (dt == TFD_STRING && k && k->borrows_elements) {
    tfd_tensor_borrow_elements(t);
  }
  return t;
}

tfd_tensor *tfd_kernel_forward_input(tfd_kernel_context *c, int i, tfd_dtype dt, const int64_t *dims, int ndims) {
  tfd_tensor *t = i < c->num_inputs ? c->inputs[i] : NULL;
  if (!c->owns_inputs || !t || tfd_tensor_dtype(t) != dt || tfd_tensor_ndims(t) != ndims) return NULL;
  for (int d = 0; d < ndims; d++)
    if (tfd_tensor_dim(t, d) != dims[d]) return NULL;
  for (int j = 0; j < c->num_inputs; j++) /* the same tensor read twice by this node */
    if (j != i && c->inputs[j] == t) return NULL;
  return tfd_tensor_is_exclusive(t) ? tfd_tensor_ref(t) : NULL;
}

tfd_tensor *tfd_kernel_forward_or_alloc(tfd_kernel_context *c, const tfd_kernel *k, int i, tfd_dtype dt,
                                        const int64_t *dims, int ndims) {
  /* A kernel writing string references into its input would drop none of those it overwrites. */
  tfd_tensor *t = dt == TFD_STRING ? NULL : tfd_kernel_forward_input(c, i, dt, dims, ndims);
  return t ? t : tfd_kernel_alloc(c, k, dt, dims, ndims);
}

tfd_tensor *tfd_kernel_alloc_like(tfd_kernel_context *c, const tfd_kernel *k, tfd_dtype dt, const tfd_tensor *like) {
  int64_t dims[TFD_MAX_DIMS];
  for (int i = 0; i < tfd_tensor_ndims(like); i++) dims[i] = tfd_tensor_dim(like, i);
  return tfd_kernel_alloc(c, k, dt, dims, tfd_tensor_ndims(like));
}

bool tfd_kernel_check_index(tfd_kernel_context *c, const tfd_kernel *k, const tfd_tensor *t, const char *what) {
  tfd_dtype dt = tfd_tensor_dtype(t);
  if (dt == TFD_INT32 || dt == TFD_INT64) return true;
  tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "%s must be int32 or int64, got %s", what, tfd_dtype_name(dt));
  return false;
}

bool tfd_kernel_check_scalar(tfd_kernel_context *c, const tfd_kernel *k, const tfd_tensor *t, const char *what) {
  if (tfd_tensor_ndims(t) == 0) return true;
  tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "%s must be a scalar, got a tensor of rank %d with %lld elements", what,
                  tfd_tensor_ndims(t), (long long)tfd_tensor_numel(t));
  return false;
}

bool tfd_attr_bool(const tfd_node_def *n, const char *name, bool dflt) {
  const tfd_attr_value *v = tfd_node_def_attr(n, name);
  return v && v->type == TFD_ATTR_BOOL ? v->b : dflt;
}

int64_t tfd_attr_int(const tfd_node_def *n, const char *name, int64_t dflt) {
  const tfd_attr_value *v = tfd_node_def_attr(n, name);
  return v && v->type == TFD_ATTR_INT ? v->i : dflt;
}

double tfd_attr_float(const tfd_node_def *n, const char *name, double dflt) {
  const tfd_attr_value *v = tfd_node_def_attr(n, name);
  return v && v->type == TFD_ATTR_FLOAT ? v->f : dflt;
}

tfd_dtype tfd_attr_dtype(const tfd_node_def *n, const char *name, tfd_dtype dflt) {
  const tfd_attr_value *v = tfd_node_def_attr(n, name);
  return v && v->type == TFD_ATTR_TYPE ? v->dtype : dflt;
}

const char *tfd_attr_string(const tfd_node_def *n, const char *name, const char *dflt) {
  const tfd_attr_value *v = tfd_node_def_attr(n, name);
  return v && v->type == TFD_ATTR_STRING ? v->s : dflt;
}
