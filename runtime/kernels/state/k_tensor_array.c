/* TensorFlow 1's TensorArrays (the V3 ops of data_flow_ops.cc): an array of tensors that a while
 * loop writes one iteration at a time and reads back whole.
 *
 * As in TensorFlow, a TensorArray lives in its step: TensorArrayV3 makes it in the device's resource
 * manager under the step's container (tfd_step_container), which the session removes when the step
 * ends, and hands out a resource handle naming it. The float "flow" scalars the ops pass along carry
 * no data: they only order the ops that touch one array. Writes may come from parallel iterations,
 * so every access takes the array's lock. Texts are TensorFlow's (tensor_array.h, tensor_array_ops.cc). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/tensor_internal.h"
#include "../../core/status_internal.h"
#include "../kernel.h"
#include "../kernel_shared.h"

#define TYPE_NAME "TensorArray"

typedef struct tensor_array {
  pthread_mutex_t mu;
  tfd_dtype dtype;
  tfd_shape element_shape; /* ndims -1: unknown; a size -1: unknown */
  bool dynamic_size, clear_after_read, closed;
  int64_t size;
  tfd_tensor **elems; /* size entries; NULL: not written (or cleared) */
  bool *cleared;      /* read once and dropped (clear_after_read) */
  char name[sizeof(((tfd_resource_handle *)0)->name)];
} tensor_array;

enum { TA_CREATE, TA_WRITE, TA_READ, TA_GATHER, TA_SCATTER, TA_SIZE, TA_CLOSE, TA_CONCAT, TA_SPLIT };

static void ta_destroy(void *p) {
  tensor_array *a = p;
  for (int64_t i = 0; i < a->size; i++) tfd_tensor_unref(a->elems[i]);
  free(a->elems);
  free(a->cleared);
  pthread_mutex_destroy(&a->mu);
  free(a);
}

/* Grows the array to n entries (new ones unwritten). */
static bool resize(tensor_array *a, int64_t n) {
  if (n <= a->size) return true;
  tfd_tensor **e = realloc(a->elems, (size_t)n * sizeof *e);
  if (e) a->elems = e;
  bool *c = e ? realloc(a->cleared, (size_t)n * sizeof *c) : NULL;
  if (!c) return false;
  a->cleared = c;
  for (int64_t i = a->size; i < n; i++) a->elems[i] = NULL, a->cleared[i] = false;
  a->size = n;
  return true;
}

static void k_create(tfd_kernel *k, tfd_kernel_context *c) {
  if (!c->session_state) {
    tfd_kernel_fail(c, k, TFD_FAILED_PRECONDITION, "a TensorArray lives in a session's step: it cannot run eagerly");
    return;
  }
  if (!tfd_kernel_check_scalar(c, k, c->inputs[0], "size")) return;
  int32_t size = *(const int32_t *)tfd_tensor_const_data(c->inputs[0]);
  if (size < 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Size should be >= 0.");
    return;
  }
  tensor_array *a = calloc(1, sizeof *a);
  tfd_status tmp = TFD_STATUS_INIT;
  tfd_resource *r = NULL;
  if (a && resize(a, size)) tfd_resource_new(TYPE_NAME, a, ta_destroy, &r, &tmp);
  if (!r) {
    if (a) free(a->elems), free(a->cleared);
    free(a);
    tfd_status_clear(&tmp);
    tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory making a TensorArray of %d elements", (int)size);
    return;
  }
  pthread_mutex_init(&a->mu, NULL);
  a->dtype = k->dst;
  a->element_shape = *(const tfd_shape *)k->state;
  a->dynamic_size = k->ta;
  a->clear_after_read = k->tb;
  unsigned long long serial = atomic_fetch_add(&k->counter, 1);
  snprintf(a->name, sizeof a->name, "%s_%llu", k->key, serial);
  tfd_tensor *handle = tfd_kernel_alloc_home(c, k, TFD_RESOURCE, NULL, 0);
  tfd_tensor *flow = handle ? tfd_kernel_alloc_home(c, k, TFD_FLOAT32, NULL, 0) : NULL;
  tfd_code code = flow && tfd_kernel_put_elems(c, k, flow, 0, NULL, 0, 1) ? TFD_OK : TFD_RESOURCE_EXHAUSTED;
  if (code == TFD_OK) {
    tfd_resource_handle *h = tfd_tensor_data(handle);
    memset(h, 0, sizeof *h);
    tfd_step_container(c->step_id, h->container, sizeof h->container);
    snprintf(h->name, sizeof h->name, "%s", a->name);
    code = tfd_resource_mgr_create(c->rm, h->container, h->name, r, &tmp);
    if (code != TFD_OK) tfd_kernel_fail(c, k, code, "%s", tfd_status_message(&tmp));
    tfd_status_clear(&tmp);
  }
  tfd_resource_unref(r);
  if (code != TFD_OK) {
    tfd_tensor_unref(handle);
    tfd_tensor_unref(flow);
    return;
  }
  c->outputs[0] = handle;
  c->outputs[1] = flow;
}

/* The array input 0 names, locked: a new reference in *res, NULL with the error reported. */
static tensor_array *lock_array(tfd_kernel *k, tfd_kernel_context *c, tfd_resource **res) {
  if (!tfd_kernel_check_scalar(c, k, c->inputs[0], "the TensorArray handle")) return NULL;
  const tfd_resource_handle *h = tfd_tensor_const_data(c->inputs[0]);
  tfd_status tmp = TFD_STATUS_INIT;
  *res = tfd_resource_mgr_lookup(c->rm, h->container, TYPE_NAME, h->name, &tmp);
  tfd_status_clear(&tmp);
  if (!*res) {
    tfd_kernel_fail(c, k, TFD_NOT_FOUND, "Container %s does not exist. (Could not find resource: %s/%s)", h->container,
                    h->container, h->name);
    return NULL;
  }
  tensor_array *a = tfd_resource_data(*res);
  pthread_mutex_lock(&a->mu);
  if (a->closed) {
    pthread_mutex_unlock(&a->mu);
    tfd_resource_unref(*res);
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "TensorArray %s has already been closed.", h->name);
    return NULL;
  }
  return a;
}

static void unlock_array(tensor_array *a, tfd_resource *r) {
  pthread_mutex_unlock(&a->mu);
  tfd_resource_unref(r);
}

/* A flow output: a float32 zero in the memory float32 lives in on the device. */
static bool flow_out(tfd_kernel *k, tfd_kernel_context *c, int i) {
  tfd_tensor *flow = tfd_kernel_alloc_home(c, k, TFD_FLOAT32, NULL, 0);
  if (!flow || !tfd_kernel_put_elems(c, k, flow, 0, NULL, 0, 1)) {
    tfd_tensor_unref(flow);
    return false;
  }
  c->outputs[i] = flow;
  return true;
}

/* Writes value at index (locked): TensorFlow's checks of index, dtype, shape and a second write. */
static bool write_at(tfd_kernel *k, tfd_kernel_context *c, tensor_array *a, int64_t index, tfd_tensor *value) {
  char s1[TFD_SHAPE_TEXT_CAP], s2[TFD_SHAPE_TEXT_CAP];
  if (tfd_tensor_dtype(value) != a->dtype) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "TensorArray dtype is %s but Op is trying to write dtype %s ",
                    tfd_dtype_name(a->dtype), tfd_dtype_name(tfd_tensor_dtype(value)));
    return false;
  }
  if (index < 0 || (index >= a->size && !a->dynamic_size)) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Tried to write to index %lld but array is not resizeable and size is: %lld",
                    (long long)index, (long long)a->size);
    return false;
  }
  bool fits = a->element_shape.ndims < 0 || a->element_shape.ndims == tfd_tensor_ndims(value);
  for (int d = 0; fits && d < a->element_shape.ndims; d++)
    fits = a->element_shape.dims[d] < 0 || a->element_shape.dims[d] == tfd_tensor_dim(value, d);
  if (!fits) {
    tfd_tensor_shape_text(s1, sizeof s1, value, 0);
    tfd_shape_text(s2, sizeof s2, a->element_shape.dims, a->element_shape.ndims);
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                    "Could not write to TensorArray index %lld because the value shape is %s which is incompatible with "
                    "the TensorArray's inferred element shape: %s (consider setting infer_shape=False).",
                    (long long)index, s1, s2);
    return false;
  }
  if (!resize(a, index + 1)) {
    tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory growing TensorArray %s", a->name);
    return false;
  }
  if (a->elems[index] || a->cleared[index]) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Could not write to TensorArray index %lld because it has already been %s.",
                    (long long)index, a->elems[index] ? "written to" : "read");
    return false;
  }
  /* The first write fixes the shape of every later one (TensorFlow's identical element shapes when
   * the array was made without one). */
  if (a->element_shape.ndims < 0 || a->element_shape.ndims != tfd_tensor_ndims(value)) {
    a->element_shape.ndims = tfd_tensor_ndims(value);
    for (int d = 0; d < a->element_shape.ndims; d++) a->element_shape.dims[d] = -1;
  }
  a->elems[index] = tfd_tensor_ref(value);
  return true;
}

/* A new reference to element index (locked), or zeros of a fully known element shape where it was
 * never written; NULL with the error reported. Clears it when the array clears after reads. */
static tfd_tensor *read_at(tfd_kernel *k, tfd_kernel_context *c, tensor_array *a, int64_t index) {
  if (index < 0 || index >= a->size) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Tried to read from index %lld but array size is: %lld", (long long)index,
                    (long long)a->size);
    return NULL;
  }
  if (a->cleared[index]) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                    "Could not read index %lld twice because it was cleared after a previous read (perhaps try setting "
                    "clear_after_read = false?).",
                    (long long)index);
    return NULL;
  }
  tfd_tensor *t = a->elems[index];
  if (t) {
    if (a->clear_after_read)
      a->elems[index] = NULL, a->cleared[index] = true;
    else
      tfd_tensor_ref(t);
    return t;
  }
  bool known = a->element_shape.ndims >= 0;
  for (int d = 0; known && d < a->element_shape.ndims; d++) known = a->element_shape.dims[d] >= 0;
  if (!known) {
    char s[TFD_SHAPE_TEXT_CAP];
    tfd_shape_text(s, sizeof s, a->element_shape.dims, a->element_shape.ndims);
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                    "Could not read from TensorArray index %lld.  Furthermore, the element shape is not fully defined: "
                    "%s.  It is possible you are working with a resizeable TensorArray and stop_gradients is not "
                    "allowing the gradients to be written.  If you set the full element_shape property on the forward "
                    "TensorArray, the proper all-zeros tensor will be returned instead of incurring this error.",
                    (long long)index, s);
    return NULL;
  }
  t = tfd_kernel_alloc_home(c, k, a->dtype, a->element_shape.dims, a->element_shape.ndims);
  if (t && !tfd_kernel_put_elems(c, k, t, 0, NULL, 0, tfd_tensor_numel(t))) tfd_tensor_unref(t), t = NULL;
  return t;
}

static bool check_dtype(tfd_kernel *k, tfd_kernel_context *c, const tensor_array *a) {
  if (a->dtype == k->dst) return true;
  tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "TensorArray dtype is %s but Op requested dtype %s.", tfd_dtype_name(a->dtype),
                  tfd_dtype_name(k->dst));
  return false;
}

/* Stacks parts (n tensors, the same shape: TensorFlow's text when not) along a new axis 0, or, for
 * concat, joins them along axis 0; NULL with the error reported. */
static tfd_tensor *join(tfd_kernel *k, tfd_kernel_context *c, tensor_array *a, tfd_tensor **parts, int64_t n, bool concat) {
  char s1[TFD_SHAPE_TEXT_CAP], s2[TFD_SHAPE_TEXT_CAP];
  int64_t dims[TFD_MAX_DIMS];
  int nd;
  if (n == 0) {
    bool known = a->element_shape.ndims >= 0;
    for (int d = 0; known && d < a->element_shape.ndims; d++) known = a->element_shape.dims[d] >= 0;
    if (!known || (concat && a->element_shape.ndims < 1)) {
      tfd_shape_text(s1, sizeof s1, a->element_shape.dims, a->element_shape.ndims);
      tfd_kernel_fail(c, k, TFD_UNIMPLEMENTED,
                      "TensorArray has size zero, but element shape %s is not fully defined. Currently only static "
                      "shapes are supported when packing zero-size TensorArrays.",
                      s1);
      return NULL;
    }
    nd = a->element_shape.ndims + (concat ? 0 : 1);
    dims[0] = 0;
    for (int d = concat ? 1 : 0; d < a->element_shape.ndims; d++) dims[d + (concat ? 0 : 1)] = a->element_shape.dims[d];
    return tfd_kernel_alloc_home(c, k, a->dtype, dims, nd);
  }
  int from = concat ? 1 : 0, rank = tfd_tensor_ndims(parts[0]);
  int64_t rows = 0;
  for (int64_t i = 0; i < n; i++) {
    if (concat && tfd_tensor_ndims(parts[i]) == 0) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                      "Concat saw a scalar shape at index %lld but requires at least vectors.  Did you mean to call stack "
                      "instead?",
                      (long long)i);
      return NULL;
    }
    bool same = tfd_tensor_ndims(parts[i]) == rank;
    for (int d = from; same && d < rank; d++) same = tfd_tensor_dim(parts[i], d) == tfd_tensor_dim(parts[0], d);
    if (!same) {
      tfd_tensor_shape_text(s1, sizeof s1, parts[0], from);
      tfd_tensor_shape_text(s2, sizeof s2, parts[i], from);
      const char *except = concat ? "(excepting dimension 0) " : "";
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                      "TensorArray has inconsistent shapes.  Index 0 has %sshape: %s but index %lld has %sshape: %s", except,
                      s1, (long long)i, except, s2);
      return NULL;
    }
    rows += concat ? tfd_tensor_dim(parts[i], 0) : 1;
  }
  nd = concat ? rank : rank + 1;
  dims[0] = rows;
  for (int d = from; d < rank; d++) dims[d + (concat ? 0 : 1)] = tfd_tensor_dim(parts[0], d);
  tfd_tensor *out = tfd_kernel_alloc_home(c, k, a->dtype, dims, nd);
  for (int64_t i = 0, at = 0; out && i < n; at += tfd_tensor_numel(parts[i]), i++)
    if (!tfd_kernel_put_elems(c, k, out, at, parts[i], 0, tfd_tensor_numel(parts[i]))) tfd_tensor_unref(out), out = NULL;
  return out;
}

/* An int32 vector input i (indices, lengths as int64): its values on the host; NULL with the error. */
static tfd_tensor *vector_input(tfd_kernel *k, tfd_kernel_context *c, int i, const char *what) {
  tfd_tensor *t = c->inputs[i];
  if (tfd_tensor_ndims(t) != 1) {
    char s[TFD_SHAPE_TEXT_CAP];
    tfd_tensor_shape_text(s, sizeof s, t, 0);
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Expected %s to be a vector, received shape: %s", what, s);
    return NULL;
  }
  return tfd_kernel_host_input(c, k, i);
}

static void k_tensor_array(tfd_kernel *k, tfd_kernel_context *c) {
  if (k->code == TA_CREATE) {
    k_create(k, c);
    return;
  }
  tfd_resource *r = NULL;
  tensor_array *a = NULL;
  tfd_tensor *idx = NULL;
  if ((k->code == TA_GATHER || k->code == TA_SCATTER) && !(idx = vector_input(k, c, 1, "indices"))) return;
  if (k->code == TA_SPLIT && !(idx = vector_input(k, c, 2, "lengths"))) return;
  if (!(a = lock_array(k, c, &r))) {
    tfd_tensor_unref(idx);
    return;
  }
  switch (k->code) {
    case TA_WRITE:
      if (tfd_kernel_check_scalar(c, k, c->inputs[1], "index") &&
          write_at(k, c, a, *(const int32_t *)tfd_tensor_const_data(c->inputs[1]), c->inputs[2]))
        flow_out(k, c, 0);
      break;
    case TA_READ:
      if (check_dtype(k, c, a) && tfd_kernel_check_scalar(c, k, c->inputs[1], "index")) {
        tfd_tensor *t = read_at(k, c, a, *(const int32_t *)tfd_tensor_const_data(c->inputs[1]));
        c->outputs[0] = t ? tfd_kernel_item_home(c, k, t) : NULL;
        tfd_tensor_unref(t);
      }
      break;
    case TA_SIZE: {
      tfd_tensor *size = tfd_kernel_alloc_home(c, k, TFD_INT32, NULL, 0);
      if (size) *(int32_t *)tfd_tensor_data(size) = (int32_t)a->size;
      c->outputs[0] = size;
      break;
    }
    case TA_CLOSE:
      for (int64_t i = 0; i < a->size; i++) tfd_tensor_unref(a->elems[i]), a->elems[i] = NULL;
      a->closed = true;
      break;
    case TA_GATHER:
    case TA_CONCAT: {
      if (!check_dtype(k, c, a)) break;
      int64_t n = k->code == TA_GATHER ? tfd_tensor_numel(idx) : a->size;
      tfd_tensor **parts = calloc(n ? (size_t)n : 1, sizeof *parts);
      bool ok = parts != NULL;
      if (!ok) tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory gathering TensorArray %s", a->name);
      for (int64_t i = 0; ok && i < n; i++)
        ok = (parts[i] = read_at(k, c, a, k->code == TA_GATHER ? tfd_tensor_get_index(idx, i) : i)) != NULL;
      tfd_tensor *out = ok ? join(k, c, a, parts, n, k->code == TA_CONCAT) : NULL;
      if (out && k->code == TA_CONCAT) {
        tfd_status st = TFD_STATUS_INIT;
        tfd_tensor *lengths = tfd_tensor_make(NULL, TFD_INT64, &n, 1, &st); /* made on the host, then moved */
        if (!lengths) tfd_kernel_fail(c, k, tfd_status_code(&st), "%s", tfd_status_message(&st)), tfd_status_clear(&st);
        for (int64_t i = 0; lengths && i < n; i++) ((int64_t *)tfd_tensor_data(lengths))[i] = tfd_tensor_dim(parts[i], 0);
        if ((lengths = tfd_kernel_host_to_home(c, k, lengths)) != NULL)
          c->outputs[1] = lengths;
        else
          tfd_tensor_unref(out), out = NULL;
      }
      c->outputs[0] = out;
      for (int64_t i = 0; parts && i < n; i++) tfd_tensor_unref(parts[i]);
      free(parts);
      break;
    }
    case TA_SCATTER:
    case TA_SPLIT: {
      tfd_tensor *value = c->inputs[k->code == TA_SCATTER ? 2 : 1];
      int64_t n = tfd_tensor_numel(idx), rows = tfd_tensor_ndims(value) > 0 ? tfd_tensor_dim(value, 0) : -1, sum = 0;
      char s[TFD_SHAPE_TEXT_CAP];
      tfd_tensor_shape_text(s, sizeof s, value, 0);
      for (int64_t i = 0; k->code == TA_SPLIT && i < n; i++) sum += tfd_tensor_get_index(idx, i);
      if (rows < 0) {
        tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Expected value to be at least a vector, but received shape: %s", s);
      } else if (k->code == TA_SCATTER && rows != n) {
        tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Expected len(indices) == values.shape[0], but saw: %lld vs. %lld",
                        (long long)n, (long long)rows);
      } else if (k->code == TA_SPLIT && sum != rows) {
        tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                        "Expected sum of lengths to be equal to values.shape[0], but sum of lengths is %lld and value's "
                        "shape is: %s",
                        (long long)sum, s);
      } else if (k->code == TA_SPLIT && !a->dynamic_size && n != a->size) {
        tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                        "TensorArray's size is not equal to the size of lengths (%lld vs. %lld), and the TensorArray is "
                        "not marked as dynamically resizeable",
                        (long long)a->size, (long long)n);
      } else {
        int64_t at = 0, row_elems = rows ? tfd_tensor_numel(value) / rows : 0;
        bool ok = true;
        for (int64_t i = 0; ok && i < n; i++) {
          int64_t len = k->code == TA_SPLIT ? tfd_tensor_get_index(idx, i) : 1;
          int64_t dims[TFD_MAX_DIMS];
          int nd = tfd_tensor_ndims(value) - (k->code == TA_SCATTER ? 1 : 0);
          for (int d = 0; d < nd; d++) dims[d] = tfd_tensor_dim(value, k->code == TA_SCATTER ? d + 1 : d);
          if (k->code == TA_SPLIT) dims[0] = len;
          tfd_tensor *piece = tfd_kernel_alloc_home(c, k, tfd_tensor_dtype(value), dims, nd);
          ok = piece && tfd_kernel_put_elems(c, k, piece, 0, value, at * row_elems, len * row_elems);
          at += len;
          if (ok) ok = write_at(k, c, a, k->code == TA_SPLIT ? i : tfd_tensor_get_index(idx, i), piece);
          tfd_tensor_unref(piece);
        }
        if (ok) flow_out(k, c, 0);
      }
      break;
    }
    default:
      break;
  }
  unlock_array(a, r);
  tfd_tensor_unref(idx);
}

static void ta_cleanup(tfd_kernel *k) {
  free(k->state);
  k->state = NULL;
}

tfd_code tfd_setup_tensor_array(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  static const char *const ops[] = {"TensorArrayV3",       "TensorArrayWriteV3",   "TensorArrayReadV3",
                                    "TensorArrayGatherV3", "TensorArrayScatterV3", "TensorArraySizeV3",
                                    "TensorArrayCloseV3",  "TensorArrayConcatV3",  "TensorArraySplitV3"};
  k->code = -1;
  for (int i = 0; i < (int)(sizeof ops / sizeof *ops); i++)
    if (strcmp(init->op->name, ops[i]) == 0) k->code = i;
  if (k->code < 0) return tfd_status_setf(st, TFD_INTERNAL, "no TensorArray kernel for %s", init->op->name);
  k->dst = tfd_attr_dtype(init->node, "dtype", 0);
  k->compute = k_tensor_array;
  if (k->code != TA_CREATE) return TFD_OK;
  tfd_shape *shape = calloc(1, sizeof *shape);
  const tfd_attr_value *es = tfd_node_def_attr(init->node, "element_shape");
  const char *name = tfd_attr_string(init->node, "tensor_array_name", "");
  k->key = strdup(*name ? name : tfd_node_def_name(init->node));
  if (!shape || !k->key) {
    free(shape);
    return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  }
  shape->ndims = -1;
  if (es && es->type == TFD_ATTR_SHAPE) *shape = es->shape;
  k->state = shape;
  k->cleanup = ta_cleanup;
  k->ta = tfd_attr_bool(init->node, "dynamic_size", false);
  k->tb = tfd_attr_bool(init->node, "clear_after_read", true);
  return TFD_OK;
}
