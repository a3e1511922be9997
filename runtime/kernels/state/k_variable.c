/* Resource variables: VarHandleOp names a variable in the device's ResourceMgr; ReadVariableOp,
 * AssignVariableOp and AssignAddVariableOp read and replace its value under the variable's lock. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/status_internal.h"
#include "../kernel.h"
#include "../kernel_shared.h"

typedef struct variable {
  pthread_mutex_t mu;
  tfd_tensor *value; /* NULL until first assigned */
} variable;

static void variable_destroy(void *p) {
  variable *v = p;
  tfd_tensor_unref(v->value);
  pthread_mutex_destroy(&v->mu);
  free(v);
}

static void k_var_handle(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *out = tfd_kernel_alloc(c, k, TFD_RESOURCE, NULL, 0);
  if (!out) return;
  tfd_resource_handle *h = tfd_tensor_data(out);
  *h = k->handle;
  if (!h->container[0]) snprintf(h->container, sizeof h->container, "%s", tfd_resource_mgr_default_container(c->rm));
  c->outputs[0] = out;
}

/* The variable a handle names: a new reference, created when `create`. */
static variable *find_var(tfd_kernel *k, tfd_kernel_context *c, tfd_resource **res, bool create) {
  if (!tfd_kernel_check_scalar(c, k, c->inputs[0], "the resource handle")) return NULL;
  const tfd_resource_handle *h = tfd_tensor_const_data(c->inputs[0]);
  tfd_status tmp = TFD_STATUS_INIT;
  for (int attempt = 0; attempt < 2; attempt++) {
    *res = tfd_resource_mgr_lookup(c->rm, h->container, "Var", h->name, &tmp);
    if (*res) return tfd_resource_data(*res);
    tfd_status_clear(&tmp);
    if (!create) break;
    variable *v = calloc(1, sizeof *v);
    tfd_resource *r = NULL;
    if (v) tfd_resource_new("Var", v, variable_destroy, &r, &tmp);
    if (!r) {
      free(v);
      tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory creating variable '%s'", h->name);
      return NULL;
    }
    pthread_mutex_init(&v->mu, NULL);
    tfd_code code = tfd_resource_mgr_create(c->rm, h->container, h->name, r, &tmp);
    tfd_status_clear(&tmp);
    if (code == TFD_OK) {
      *res = r;
      return v;
    }
    tfd_resource_unref(r); /* lost a race with another creator: look again */
  }
  tfd_kernel_fail(c, k, TFD_FAILED_PRECONDITION,
                  "Error while reading resource variable %s from Container: %s. This could mean that the variable was "
                  "uninitialized.",
                  h->name, h->container);
  return NULL;
}

static void k_read(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_resource *r;
  variable *v = find_var(k, c, &r, false);
  if (!v) return;
  pthread_mutex_lock(&v->mu);
  tfd_tensor *t = tfd_tensor_ref(v->value);
  pthread_mutex_unlock(&v->mu);
  tfd_resource_unref(r);
  const tfd_resource_handle *h = tfd_tensor_const_data(c->inputs[0]);
  if (!t) {
    tfd_kernel_fail(c, k, TFD_FAILED_PRECONDITION, "variable %s/%s is uninitialized", h->container, h->name);
  } else if (tfd_tensor_dtype(t) != k->dst) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "variable %s holds %s, read as %s", h->name,
                    tfd_dtype_name(tfd_tensor_dtype(t)), tfd_dtype_name(k->dst));
    tfd_tensor_unref(t);
  } else {
    c->outputs[0] = t; /* tensors are never written in place, so sharing is safe */
  }
}

static void k_assign(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_resource *r;
  variable *v = find_var(k, c, &r, true);
  if (!v) return;
  pthread_mutex_lock(&v->mu);
  tfd_tensor *old = v->value;
  v->value = tfd_tensor_ref(c->inputs[1]);
  pthread_mutex_unlock(&v->mu);
  tfd_tensor_unref(old);
  tfd_resource_unref(r);
}

static bool same_shape(const tfd_tensor *a, const tfd_tensor *b) {
  if (tfd_tensor_ndims(a) != tfd_tensor_ndims(b)) return false;
  for (int i = 0; i < tfd_tensor_ndims(a); i++)
    if (tfd_tensor_dim(a, i) != tfd_tensor_dim(b, i)) return false;
  return true;
}

#define ADD_INTO(T)                                              \
  for (int64_t i = 0; i < n; i++) ((T *)dst)[i] = ((const T *)x)[i] + ((const T *)y)[i];

/* old + delta on the host (the CPU kernel's sum). */
static tfd_tensor *host_add(tfd_kernel *k, tfd_kernel_context *c, tfd_tensor *old, tfd_tensor *delta) {
  tfd_tensor *sum = tfd_kernel_alloc_like(c, k, tfd_tensor_dtype(old), old);
  if (!sum) return NULL;
  const void *x = tfd_tensor_const_data(old), *y = tfd_tensor_const_data(delta);
  void *dst = tfd_tensor_data(sum);
  int64_t n = tfd_tensor_numel(sum);
  switch (tfd_tensor_dtype(sum)) {
    case TFD_FLOAT32: ADD_INTO(float) break;
    case TFD_FLOAT64: ADD_INTO(double) break;
    case TFD_INT32: ADD_INTO(int32_t) break;
    case TFD_INT64: ADD_INTO(int64_t) break;
    default: break;
  }
  return sum;
}

static void k_assign_add(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_resource *r;
  variable *v = find_var(k, c, &r, false);
  if (!v) return;
  tfd_tensor *delta = c->inputs[1];
  const tfd_variable_adder *adder = k->dk_params; /* a device kernel's sum, in the variable's memory */
  pthread_mutex_lock(&v->mu);
  tfd_tensor *old = v->value, *sum = NULL;
  if (!old) {
    tfd_kernel_fail(c, k, TFD_FAILED_PRECONDITION, "variable is uninitialized");
  } else if (!same_shape(old, delta) || tfd_tensor_dtype(old) != tfd_tensor_dtype(delta)) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "value's dtype or shape does not match the variable's");
  } else {
    sum = adder ? adder->add(k, c, old, delta) : host_add(k, c, old, delta);
  }
  if (sum) v->value = sum;
  pthread_mutex_unlock(&v->mu);
  if (sum) tfd_tensor_unref(old);
  tfd_resource_unref(r);
}

tfd_code tfd_setup_variable(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  const char *op = init->op->name;
  const tfd_node_def *n = init->node;
  k->dst = tfd_attr_dtype(n, "dtype", 0);
  if (strcmp(op, "VarHandleOp") == 0) {
    const char *container = tfd_attr_string(n, "container", "");
    const char *name = tfd_attr_string(n, "shared_name", "");
    if (!*name) name = tfd_node_def_name(n);
    if (strlen(container) >= sizeof k->handle.container || strlen(name) >= sizeof k->handle.name)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s': container or variable name is too long",
                             tfd_node_def_name(n));
    strcpy(k->handle.container, container);
    strcpy(k->handle.name, name);
    k->compute = k_var_handle;
  } else if (strcmp(op, "ReadVariableOp") == 0) {
    k->compute = k_read;
  } else if (strcmp(op, "AssignVariableOp") == 0) {
    k->compute = k_assign;
  } else {
    k->compute = k_assign_add;
  }
  return TFD_OK;
}

/* ---- session tensors: GetSessionHandle, GetSessionTensor, DeleteSessionTensor ---- */
#include "../../framework/session_state.h"

static bool need_state(tfd_kernel *k, tfd_kernel_context *c) {
  if (c->session_state) return true;
  tfd_kernel_fail(c, k, TFD_FAILED_PRECONDITION, "session tensors need a session (not available when run eagerly)");
  return false;
}

static void k_get_handle(tfd_kernel *k, tfd_kernel_context *c) {
  if (!need_state(k, c)) return;
  int64_t h = tfd_session_state_add(c->session_state, c->inputs[0]);
  if (h < 0) {
    tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory keeping a session tensor");
    return;
  }
  tfd_tensor *out = tfd_kernel_alloc(c, k, TFD_INT64, NULL, 0);
  if (out) *(int64_t *)tfd_tensor_data(out) = h;
  c->outputs[0] = out;
}

static void k_get_tensor(tfd_kernel *k, tfd_kernel_context *c) {
  if (!need_state(k, c) || !tfd_kernel_check_scalar(c, k, c->inputs[0], "the session handle")) return;
  tfd_status tmp = TFD_STATUS_INIT;
  tfd_tensor *t = tfd_session_state_get(c->session_state, *(const int64_t *)tfd_tensor_const_data(c->inputs[0]), &tmp);
  if (!t) {
    tfd_kernel_fail(c, k, tfd_status_code(&tmp), "%s", tfd_status_message(&tmp));
  } else if (tfd_tensor_dtype(t) != k->dst) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "the session tensor is %s, not %s", tfd_dtype_name(tfd_tensor_dtype(t)),
                    tfd_dtype_name(k->dst));
    tfd_tensor_unref(t);
  } else {
    c->outputs[0] = t;
  }
  tfd_status_clear(&tmp);
}

static void k_delete_tensor(tfd_kernel *k, tfd_kernel_context *c) {
  if (!need_state(k, c) || !tfd_kernel_check_scalar(c, k, c->inputs[0], "the session handle")) return;
  tfd_status tmp = TFD_STATUS_INIT;
  if (tfd_session_state_delete(c->session_state, *(const int64_t *)tfd_tensor_const_data(c->inputs[0]), &tmp) != TFD_OK)
    tfd_kernel_fail(c, k, tfd_status_code(&tmp), "%s", tfd_status_message(&tmp));
  tfd_status_clear(&tmp);
}

tfd_code tfd_setup_session_tensor(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  (void)st;
  const char *op = init->op->name;
  k->dst = tfd_attr_dtype(init->node, "dtype", 0);
  k->compute = strcmp(op, "GetSessionHandle") == 0 ? k_get_handle
               : strcmp(op, "GetSessionTensor") == 0 ? k_get_tensor
                                                       : k_delete_tensor;
  return TFD_OK;
}
