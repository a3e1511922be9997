/* TensorList kernels (TensorFlow's list_kernels.h/.cc): lists of tensors held in scalar variants.
 *
 * A list is a tfd_variant holding references to its element tensors (NULL for an element not set
 * yet), its element dtype, a partially known element shape and an optional maximum length. Lists
 * are copy on write, as TensorFlow's: a kernel that changes one (SetItem, PushBack, PopBack) does so
 * in place only when it holds the sole reference to the input handle tensor, its buffer and the list
 * (an exclusive input the executor forwards); otherwise it makes a new list sharing the elements.
 * Elements are never written: a list's element tensor is shared with whoever reads it. Checks and
 * error texts are TensorFlow's, with tfdev's dtype names. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/status_internal.h"
#include "../../core/tensor_internal.h"
#include "../../core/variant.h"
#include "../device_kernel.h"
#include "../kernel.h"
#include "../kernel_shared.h"

/* A list longer than this is refused (RESOURCE_EXHAUSTED) rather than allocated: a fuzzed or
 * mistaken num_elements would otherwise reserve gigabytes of element slots (and TensorListFromTensor
 * of a [2^30, 0] tensor a view per row). */
#define MAX_LIST_ELEMENTS ((int64_t)1 << 20)

typedef struct tensor_list {
  tfd_variant base;
  tfd_dtype element_dtype;
  tfd_shape element_shape; /* ndims -1: unknown rank */
  int64_t max_num_elements; /* -1: unbounded */
  int64_t n, cap;
  tfd_tensor **items; /* n entries; NULL: not set */
} tensor_list;

static void list_destroy(tfd_variant *v) {
  tensor_list *l = (tensor_list *)v;
  for (int64_t i = 0; i < l->n; i++) tfd_tensor_unref(l->items[i]);
  free(l->items);
  free(l);
}

static const tfd_variant_ops list_ops = {"tensorflow::TensorList", list_destroy};

/* Room for at least `want` elements. */
static bool list_reserve(tensor_list *l, int64_t want) {
  if (want <= l->cap) return true;
  int64_t cap = l->cap ? l->cap : 4;
  while (cap < want) cap *= 2;
  tfd_tensor **items = realloc(l->items, (size_t)cap * sizeof *items);
  if (!items) return false;
  l->items = items;
  l->cap = cap;
  return true;
}

static tensor_list *list_new(tfd_dtype dt, const tfd_shape *shape, int64_t n) {
  tensor_list *l = calloc(1, sizeof *l);
  if (!l) return NULL;
  tfd_variant_init(&l->base, &list_ops);
  l->element_dtype = dt;
  l->element_shape = *shape;
  l->max_num_elements = -1;
  if (n > 0 && !(l->items = calloc((size_t)n, sizeof *l->items))) {
    free(l);
    return NULL;
  }
  l->n = l->cap = n;
  return l;
}

/* A new list sharing l's elements (a reference each). */
static tensor_list *list_copy(const tensor_list *l) {
  tensor_list *c = list_new(l->element_dtype, &l->element_shape, l->n);
  if (!c) return NULL;
  c->max_num_elements = l->max_num_elements;
  for (int64_t i = 0; i < l->n; i++) c->items[i] = tfd_tensor_ref(l->items[i]);
  return c;
}

static const char *shape_str(const tfd_shape *s, char *buf, size_t cap) { return tfd_shape_string(s, buf, cap); }

/* TensorShapeFromTensor: an int32/int64 vector (-1: an unknown size), or the scalar -1 (unknown rank). */
static bool shape_from_host(tfd_kernel_context *c, const tfd_kernel *k, const tfd_tensor *t, tfd_shape *out);

/* An element_shape input (int32 or int64, wherever it lives). */
static bool shape_from_tensor(tfd_kernel_context *c, const tfd_kernel *k, const tfd_tensor *t, tfd_shape *out) {
  tfd_tensor *h = tfd_kernel_host_copy(c, k, t);
  bool ok = h && shape_from_host(c, k, h, out);
  tfd_tensor_unref(h);
  return ok;
}

static bool shape_from_host(tfd_kernel_context *c, const tfd_kernel *k, const tfd_tensor *t, tfd_shape *out) {
  tfd_dtype dt = tfd_tensor_dtype(t);
  if (dt != TFD_INT32 && dt != TFD_INT64) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Expected an int32 or int64 shape tensor; found %s", tfd_dtype_name(dt));
    return false;
  }
  if (tfd_tensor_ndims(t) == 0) {
    if (tfd_tensor_get_index(t, 0) == -1) {
      out->ndims = -1;
      return true;
    }
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                    "The only valid scalar shape tensor is the fully unknown shape specified as -1.");
    return false;
  }
  if (tfd_tensor_ndims(t) != 1 || tfd_tensor_numel(t) > TFD_MAX_DIMS) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "element_shape must be a vector of at most %d sizes, got %" PRId64 " values",
                    TFD_MAX_DIMS, tfd_tensor_numel(t));
    return false;
  }
  out->ndims = (int)tfd_tensor_numel(t);
  for (int d = 0; d < out->ndims; d++) {
    int64_t v = tfd_tensor_get_index(t, d);
    if (v < -1) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Dimension %" PRId64 " must be >= -1", v);
      return false;
    }
    out->dims[d] = v;
  }
  return true;
}

/* PartialTensorShape::IsCompatibleWith. */
static bool compatible(const tfd_shape *a, const tfd_shape *b) {
  if (a->ndims < 0 || b->ndims < 0) return true;
  if (a->ndims != b->ndims) return false;
  for (int d = 0; d < a->ndims; d++)
    if (a->dims[d] >= 0 && b->dims[d] >= 0 && a->dims[d] != b->dims[d]) return false;
  return true;
}

/* PartialTensorShape::MergeWith: a and b filled in from each other, or an error. */
static bool merge(tfd_kernel_context *c, const tfd_kernel *k, const tfd_shape *a, const tfd_shape *b, tfd_shape *out) {
  if (!compatible(a, b)) {
    char sa[96], sb[96];
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Incompatible shapes during merge: %s vs. %s", shape_str(a, sa, sizeof sa),
                    shape_str(b, sb, sizeof sb));
    return false;
  }
  if (a->ndims < 0) {
    *out = *b;
    return true;
  }
  tfd_shape m = *a;
  for (int d = 0; b->ndims >= 0 && d < m.ndims; d++)
    if (m.dims[d] < 0) m.dims[d] = b->dims[d];
  *out = m;
  return true;
}

static bool fully_defined(const tfd_shape *s) { return tfd_shape_is_known(s); }

/* GetInputList: input i is a scalar variant holding a list. */
static tensor_list *input_list(tfd_kernel_context *c, const tfd_kernel *k, int i) {
  const tfd_tensor *t = c->inputs[i];
  if (tfd_tensor_dtype(t) != TFD_VARIANT || tfd_tensor_ndims(t) != 0) {
    char buf[96];
    tfd_shape s;
    tfd_shape_of_tensor(t, &s);
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Input list must be a scalar saw: %s", shape_str(&s, buf, sizeof buf));
    return NULL;
  }
  tfd_variant *v = tfd_tensor_variant_at(t, 0);
  if (!v || v->ops != &list_ops) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Input handle is not a list. Saw: '%s'", v ? v->ops->type_name : "<empty>");
    return NULL;
  }
  return (tensor_list *)v;
}

static bool same_dtype(tfd_kernel_context *c, const tfd_kernel *k, const tensor_list *l) {
  if (k->dst == l->element_dtype) return true;
  tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Invalid data types; op elements %s but list elements %s",
                  tfd_dtype_name(k->dst), tfd_dtype_name(l->element_dtype));
  return false;
}

/* A new scalar variant output holding l (its reference moves into the tensor). */
static tfd_tensor *list_output(tfd_kernel_context *c, const tfd_kernel *k, tensor_list *l) {
  if (!l) {
    tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory making a TensorList");
    return NULL;
  }
  tfd_tensor *t = tfd_kernel_alloc_home(c, k, TFD_VARIANT, NULL, 0);
  if (!t) {
    tfd_variant_unref(&l->base);
    return NULL;
  }
  tfd_tensor_set_variant_at(t, 0, &l->base);
  return t;
}

/* ForwardInputOrCreateNewList: the list of input 0 to change, in a tensor set as output 0. In place
 * when nobody else can see the handle, its buffer or the list; else a copy sharing the elements. */
static tensor_list *writable_list(tfd_kernel_context *c, const tfd_kernel *k, tensor_list *in) {
  tfd_tensor *t = tfd_kernel_forward_input(c, 0, TFD_VARIANT, NULL, 0);
  if (t && tfd_variant_is_unique(&in->base)) {
    c->outputs[0] = t;
    return in;
  }
  tensor_list *copy = list_copy(in);
  if (t && copy) { /* the handle is ours but the list is shared: give the handle its own list */
    tfd_tensor_set_variant_at(t, 0, &copy->base);
    c->outputs[0] = t;
    return copy;
  }
  tfd_tensor_unref(t);
  if (!(c->outputs[0] = list_output(c, k, copy))) return NULL;
  return copy;
}

static bool check_count(tfd_kernel_context *c, const tfd_kernel *k, int64_t n) {
  if (n <= MAX_LIST_ELEMENTS) return true;
  tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "a list of %" PRId64 " elements is over tfdev's limit of %" PRId64, n,
                  MAX_LIST_ELEMENTS);
  return false;
}

static bool scalar_int32(tfd_kernel_context *c, const tfd_kernel *k, const tfd_tensor *t, const char *fmt) {
  if (tfd_tensor_ndims(t) == 0 && tfd_tensor_dtype(t) == TFD_INT32) return true;
  char buf[96];
  tfd_shape s;
  tfd_shape_of_tensor(t, &s);
  tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, fmt, shape_str(&s, buf, sizeof buf));
  return false;
}

static void k_reserve(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_shape shape;
  if (!shape_from_tensor(c, k, c->inputs[0], &shape)) return;
  bool empty = strcmp(k->op->name, "EmptyTensorList") == 0;
  if (!scalar_int32(c, k, c->inputs[1],
                    empty ? "max_num_elements expected to be a scalar but got shape: %s"
                          : "The num_elements to reserve must be a tensor size 1, but got %s"))
    return;
  int32_t n = *(const int32_t *)tfd_tensor_const_data(c->inputs[1]);
  if (!empty && n < 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "The num_elements to reserve must be a non negative number, but got %d", n);
    return;
  }
  if (!empty && !check_count(c, k, n)) return;
  tensor_list *l = list_new(k->dst, &shape, empty ? 0 : n);
  if (l && empty) l->max_num_elements = n;
  c->outputs[0] = list_output(c, k, l);
}

/* Whether t (its shape into *ts) is at least a vector whose rows fit the list's element shape, as
 * TensorListFromTensor and TensorListScatter check it; reports TensorFlow's text when not. */
static bool rows_fit(tfd_kernel_context *c, tfd_kernel *k, const tfd_tensor *t, const tfd_shape *shape, tfd_shape *ts) {
  tfd_shape_of_tensor(t, ts);
  char sa[96], sb[96];
  if (ts->ndims == 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Tensor must be at least a vector, but saw shape: %s",
                    shape_str(ts, sa, sizeof sa));
    return false;
  }
  tfd_shape es = {.ndims = ts->ndims - 1};
  for (int d = 1; d < ts->ndims; d++) es.dims[d - 1] = ts->dims[d];
  if (!compatible(shape, &es)) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Specified a list with shape %s from a tensor with shape %s",
                    shape_str(shape, sa, sizeof sa), shape_str(&es, sb, sizeof sb));
    return false;
  }
  return true;
}

static void k_from_tensor(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_shape shape;
  if (!shape_from_tensor(c, k, c->inputs[1], &shape)) return;
  tfd_tensor *t = c->inputs[0];
  tfd_shape ts;
  if (!rows_fit(c, k, t, &shape, &ts)) return;
  if (!check_count(c, k, ts.dims[0])) return;
  tensor_list *l = list_new(tfd_tensor_dtype(t), &shape, ts.dims[0]);
  for (int64_t i = 0; l && i < ts.dims[0]; i++) {
    tfd_status tmp = TFD_STATUS_INIT;
    /* A view of row i: elements are never written, so they may share the input's buffer. */
    l->items[i] = tfd_tensor_make_slice(t, i, &tmp);
    if (!l->items[i]) {
      tfd_kernel_fail(c, k, tfd_status_code(&tmp), "%s", tfd_status_message(&tmp));
      tfd_status_clear(&tmp);
      tfd_variant_unref(&l->base);
      return;
    }
  }
  c->outputs[0] = list_output(c, k, l);
}

/* A zero tensor of shape s for an element never set, where s (merged with the set elements' shapes
 * when not fully known) is fully known; NULL with the error `what` otherwise. */
static tfd_tensor *zeros_for(tfd_kernel_context *c, const tfd_kernel *k, const tensor_list *l, tfd_shape s, bool merge_items,
                             const char *what) {
  for (int64_t i = 0; merge_items && !fully_defined(&s) && i < l->n; i++) {
    if (!l->items[i]) continue;
    tfd_shape is;
    tfd_shape_of_tensor(l->items[i], &is);
    if (!merge(c, k, &s, &is, &s)) return NULL;
  }
  if (!fully_defined(&s)) {
    char buf[96];
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, what, shape_str(&s, buf, sizeof buf));
    return NULL;
  }
  tfd_tensor *z = tfd_kernel_alloc_home(c, k, l->element_dtype, s.dims, s.ndims);
  if (z && !tfd_kernel_put_elems(c, k, z, 0, NULL, 0, tfd_tensor_numel(z))) {
    tfd_tensor_unref(z);
    return NULL;
  }
  return z;
}

/* GetElementShapeFromInput: the element_shape input merged with the list's. */
static bool element_shape(tfd_kernel_context *c, const tfd_kernel *k, const tensor_list *l, int i, tfd_shape *out) {
  tfd_shape s;
  return shape_from_tensor(c, k, c->inputs[i], &s) && merge(c, k, &s, &l->element_shape, out);
}

static bool index_input(tfd_kernel_context *c, const tfd_kernel *k, int i, int32_t *out) {
  if (!scalar_int32(c, k, c->inputs[i], "index must be an int32 scalar, got shape %s")) return false;
  *out = *(const int32_t *)tfd_tensor_const_data(c->inputs[i]);
  return true;
}

static void k_get_item(tfd_kernel *k, tfd_kernel_context *c) {
  tensor_list *l = input_list(c, k, 0);
  int32_t index;
  if (!l || !same_dtype(c, k, l) || !index_input(c, k, 1, &index)) return;
  if (index < 0 || index >= l->n) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Trying to access element %d in a list with %" PRId64 " elements.", index,
                    l->n);
    return;
  }
  if (l->items[index]) {
    c->outputs[0] = tfd_kernel_item_home(c, k, l->items[index]);
    return;
  }
  tfd_shape s;
  if (!element_shape(c, k, l, 2, &s)) return;
  c->outputs[0] = zeros_for(c, k, l, s, true,
                            "Trying to read an uninitialized tensor but element_shape is not fully defined: %s and no "
                            "list element is set.");
}

static void k_set_item(tfd_kernel *k, tfd_kernel_context *c) {
  tensor_list *l = input_list(c, k, 0);
  int32_t index;
  if (!l || !same_dtype(c, k, l) || !index_input(c, k, 1, &index)) return;
  bool resize = k->keep_dims; /* resize_if_index_out_of_bounds */
  if (index < 0 || (index >= l->n && !resize)) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Trying to modify element %d in a list with %" PRId64 " elements.", index,
                    l->n);
    return;
  }
  const tfd_tensor *item = c->inputs[2];
  tfd_shape is;
  tfd_shape_of_tensor(item, &is);
  if (!compatible(&l->element_shape, &is)) {
    char sa[96], sb[96];
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                    "Tried to set a tensor with incompatible shape at a list index. Item element shape: %s list shape: %s",
                    shape_str(&is, sa, sizeof sa), shape_str(&l->element_shape, sb, sizeof sb));
    return;
  }
  if (index >= l->n && !check_count(c, k, (int64_t)index + 1)) return;
  tensor_list *out = writable_list(c, k, l);
  if (!out) return;
  if (index >= out->n) { /* resize_if_index_out_of_bounds: unset elements up to the new one */
    if (!list_reserve(out, (int64_t)index + 1)) {
      tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory growing a TensorList");
      return;
    }
    for (int64_t i = out->n; i <= index; i++) out->items[i] = NULL;
    out->n = (int64_t)index + 1;
  }
  tfd_tensor *old = out->items[index];
  out->items[index] = tfd_tensor_ref(c->inputs[2]);
  tfd_tensor_unref(old);
}

static void k_push_back(tfd_kernel *k, tfd_kernel_context *c) {
  tensor_list *l = input_list(c, k, 0);
  if (!l) return;
  const tfd_tensor *item = c->inputs[1];
  tfd_shape is;
  tfd_shape_of_tensor(item, &is);
  if (!compatible(&l->element_shape, &is)) {
    char sa[96], sb[96];
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                    "Tried to append a tensor with incompatible shape to a list. Op element shape: %s list shape: %s",
                    shape_str(&is, sa, sizeof sa), shape_str(&l->element_shape, sb, sizeof sb));
    return;
  }
  if (!same_dtype(c, k, l)) return;
  if (l->max_num_elements != -1 && l->n >= l->max_num_elements) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                    "Tried to push item into a full list list size: %" PRId64 " max_num_elements: %" PRId64, l->n,
                    l->max_num_elements);
    return;
  }
  if (!check_count(c, k, l->n + 1)) return;
  tensor_list *out = writable_list(c, k, l);
  if (!out) return;
  if (!list_reserve(out, out->n + 1)) {
    tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory growing a TensorList");
    return;
  }
  out->items[out->n++] = tfd_tensor_ref(c->inputs[1]);
}

static void k_pop_back(tfd_kernel *k, tfd_kernel_context *c) {
  tensor_list *l = input_list(c, k, 0);
  if (!l || !same_dtype(c, k, l)) return;
  if (l->n == 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Trying to pop from an empty list.");
    return;
  }
  tfd_tensor *last = l->items[l->n - 1] ? tfd_kernel_item_home(c, k, l->items[l->n - 1]) : NULL;
  if (l->items[l->n - 1] && !last) return;
  if (!last) {
    tfd_shape s;
    if (!element_shape(c, k, l, 1, &s)) return;
    last = zeros_for(c, k, l, s, false, "Trying to read an uninitialized tensor but element_shape is not fully defined.%s");
    if (!last) return;
  }
  tensor_list *out = writable_list(c, k, l);
  if (!out) {
    tfd_tensor_unref(last);
    return;
  }
  tfd_tensor_unref(out->items[--out->n]);
  c->outputs[1] = last;
}

/* An element's shape must be the resolved element shape s before its bytes are copied: lists made
 * by TensorListSplit (TensorFlow checks only the trailing dims there) can hold elements whose
 * leading size differs from a fully known element_shape. */
static bool item_is(tfd_kernel_context *c, const tfd_kernel *k, const tfd_tensor *t, const tfd_shape *s) {
  tfd_shape is;
  tfd_shape_of_tensor(t, &is);
  bool same = is.ndims == s->ndims;
  for (int d = 0; same && d < s->ndims; d++) same = is.dims[d] == s->dims[d];
  if (same) return true;
  char sa[96], sb[96];
  tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Tensor with invalid shape in list. List element shape shape: %s and tensor shape: %s",
                  shape_str(s, sa, sizeof sa), shape_str(&is, sb, sizeof sb));
  return false;
}

static bool check_rank_plus_one(tfd_kernel_context *c, const tfd_kernel *k, const tfd_shape *s) {
  if (s->ndims + 1 <= TFD_MAX_DIMS) return true;
  tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "stacking elements of rank %d would pass tfdev's maximum rank %d", s->ndims,
                  TFD_MAX_DIMS);
  return false;
}

static void k_stack(tfd_kernel *k, tfd_kernel_context *c) {
  tensor_list *l = input_list(c, k, 0);
  if (!l || !same_dtype(c, k, l)) return;
  if (k->index != -1 && l->n != k->index) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                    "Operation expected a list with %" PRId64 " elements but got a list with %" PRId64 " elements.",
                    k->index, l->n);
    return;
  }
  tfd_shape s;
  if (!element_shape(c, k, l, 1, &s)) return;
  char buf[96];
  if (!fully_defined(&s) && l->n == 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                    "Tried to stack elements of an empty list with non-fully-defined element_shape: %s",
                    shape_str(&s, buf, sizeof buf));
    return;
  }
  if (!fully_defined(&l->element_shape))
    for (int64_t i = 0; i < l->n; i++) {
      if (!l->items[i]) continue;
      tfd_shape is;
      tfd_shape_of_tensor(l->items[i], &is);
      if (!merge(c, k, &s, &is, &s)) return;
    }
  if (!fully_defined(&s)) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                    "Tried to stack list which only contains uninitialized tensors and has a non-fully-defined "
                    "element_shape: %s",
                    shape_str(&s, buf, sizeof buf));
    return;
  }
  if (s.ndims + 1 > TFD_MAX_DIMS) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "stacking elements of rank %d would pass tfdev's maximum rank %d", s.ndims,
                    TFD_MAX_DIMS);
    return;
  }
  for (int64_t i = 0; i < l->n; i++)
    if (l->items[i] && !item_is(c, k, l->items[i], &s)) return;
  int64_t dims[TFD_MAX_DIMS];
  dims[0] = l->n;
  for (int d = 0; d < s.ndims; d++) dims[d + 1] = s.dims[d];
  tfd_tensor *out = tfd_kernel_alloc_home(c, k, l->element_dtype, dims, s.ndims + 1);
  if (!out) return;
  int64_t each = tfd_shape_numel(&s); /* merged above: every set element's size */
  for (int64_t i = 0; i < l->n; i++)
    if (!tfd_kernel_put_elems(c, k, out, i * each, l->items[i], 0, each)) {
      tfd_tensor_unref(out);
      return;
    }
  c->outputs[0] = out;
}

static void k_length(tfd_kernel *k, tfd_kernel_context *c) {
  tensor_list *l = input_list(c, k, 0);
  if (!l) return;
  tfd_tensor *out = tfd_kernel_alloc_home(c, k, TFD_INT32, NULL, 0); /* host memory on any device */
  if (!out) return;
  *(int32_t *)tfd_tensor_data(out) = (int32_t)l->n;
  c->outputs[0] = out;
}

static void k_element_shape(tfd_kernel *k, tfd_kernel_context *c) {
  tensor_list *l = input_list(c, k, 0);
  if (!l) return;
  const tfd_shape *s = &l->element_shape;
  int64_t n = s->ndims;
  tfd_status st = TFD_STATUS_INIT;
  tfd_tensor *out = tfd_tensor_make(NULL, k->dst, &n, s->ndims < 0 ? 0 : 1, &st);
  if (!out) {
    tfd_kernel_fail(c, k, tfd_status_code(&st), "%s", tfd_status_message(&st));
    tfd_status_clear(&st);
    return;
  }
  for (int64_t d = 0; d < (s->ndims < 0 ? 1 : n); d++) {
    int64_t v = s->ndims < 0 ? -1 : s->dims[d];
    if (k->dst == TFD_INT32) ((int32_t *)tfd_tensor_data(out))[d] = (int32_t)v;
    else ((int64_t *)tfd_tensor_data(out))[d] = v;
  }
  c->outputs[0] = tfd_kernel_host_to_home(c, k, out);
}

static void k_gather(tfd_kernel *k, tfd_kernel_context *c) {
  tensor_list *l = input_list(c, k, 0);
  if (!l || !same_dtype(c, k, l)) return;
  const tfd_tensor *indices = c->inputs[1];
  const int32_t *idx = tfd_tensor_const_data(indices);
  int64_t n = tfd_tensor_numel(indices);
  tfd_shape s;
  if (!element_shape(c, k, l, 2, &s)) return;
  char buf[96];
  if (!fully_defined(&s) && n == 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Tried to gather 0-elements from a list with non-fully-defined shape: %s",
                    shape_str(&s, buf, sizeof buf));
    return;
  }
  for (int64_t j = 0; j < n; j++)
    if (idx[j] < 0 || idx[j] >= l->n) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Index %d out o range; list only has %" PRId64 " elements.", idx[j], l->n);
      return;
    }
  if (!fully_defined(&l->element_shape))
    for (int64_t j = 0; j < n; j++) {
      if (!l->items[idx[j]]) continue;
      tfd_shape is;
      tfd_shape_of_tensor(l->items[idx[j]], &is);
      if (!merge(c, k, &s, &is, &s)) return;
    }
  if (!fully_defined(&s)) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                    "Tried to gather uninitialized tensors from a list with non-fully-defined element_shape: %s",
                    shape_str(&s, buf, sizeof buf));
    return;
  }
  if (!check_rank_plus_one(c, k, &s)) return;
  int64_t dims[TFD_MAX_DIMS];
  dims[0] = n;
  for (int d = 0; d < s.ndims; d++) dims[d + 1] = s.dims[d];
  int64_t each = tfd_shape_numel(&s);
  for (int64_t j = 0; j < n; j++)
    if (l->items[idx[j]] && !item_is(c, k, l->items[idx[j]], &s)) return;
  tfd_tensor *out = tfd_kernel_alloc_home(c, k, l->element_dtype, dims, s.ndims + 1);
  if (!out) return;
  for (int64_t j = 0; j < n; j++)
    if (!tfd_kernel_put_elems(c, k, out, j * each, l->items[idx[j]], 0, each)) {
      tfd_tensor_unref(out);
      return;
    }
  c->outputs[0] = out;
}

/* TensorListScatter (num_elements input absent: -1) and TensorListScatterV2. */
static void k_scatter(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_shape shape;
  if (!shape_from_tensor(c, k, c->inputs[2], &shape)) return;
  int32_t num = -1;
  if (c->num_inputs >= 4) {
    if (!scalar_int32(c, k, c->inputs[3], "num_elements must be an int32 scalar, got shape %s")) return;
    num = *(const int32_t *)tfd_tensor_const_data(c->inputs[3]);
  }
  if (num < -1) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "TensorListScatter expects num_elements >= -1, found: %d", num);
    return;
  }
  tfd_tensor *t = c->inputs[0];
  tfd_shape ts;
  if (!rows_fit(c, k, t, &shape, &ts)) return;
  const int32_t *idx = tfd_tensor_const_data(c->inputs[1]);
  int64_t n = tfd_tensor_numel(c->inputs[1]);
  if (n != ts.dims[0]) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Invalid number of rows in input tensor. Expected: %" PRId64 " Actual: %" PRId64,
                    n, ts.dims[0]);
    return;
  }
  int64_t highest = -1;
  for (int64_t j = 0; j < n; j++) {
    if (idx[j] < 0) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Indices in TensorListScatter must all be non-negative.");
      return;
    }
    if (num != -1 && idx[j] >= num) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "TensorListScatter: Trying to scatter at index %d in list with size %d",
                      idx[j], num);
      return;
    }
    if (idx[j] > highest) highest = idx[j];
  }
  int64_t size = highest + 1 > num ? highest + 1 : num;
  if (!check_count(c, k, size)) return;
  tensor_list *l = list_new(tfd_tensor_dtype(t), &shape, size);
  for (int64_t j = 0; l && j < n; j++) {
    tfd_status tmp = TFD_STATUS_INIT;
    tfd_tensor *row = tfd_tensor_make_slice(t, j, &tmp);
    if (!row) {
      tfd_kernel_fail(c, k, tfd_status_code(&tmp), "%s", tfd_status_message(&tmp));
      tfd_status_clear(&tmp);
      tfd_variant_unref(&l->base);
      return;
    }
    tfd_tensor_unref(l->items[idx[j]]); /* a repeated index: the last row wins, as TensorFlow's */
    l->items[idx[j]] = row;
  }
  c->outputs[0] = list_output(c, k, l);
}

static void k_scatter_into(tfd_kernel *k, tfd_kernel_context *c) {
  tensor_list *l = input_list(c, k, 0);
  if (!l) return;
  tfd_tensor *t = c->inputs[1];
  const tfd_tensor *indices = c->inputs[2];
  char sa[96], sb[96];
  if (tfd_tensor_dtype(t) != l->element_dtype) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Invalid data types; input tensor type: %s list element_type: %s",
                    tfd_dtype_name(tfd_tensor_dtype(t)), tfd_dtype_name(l->element_dtype));
    return;
  }
  tfd_shape ts, is;
  tfd_shape_of_tensor(t, &ts);
  tfd_shape_of_tensor(indices, &is);
  if (ts.ndims == 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Tensor must be at least a vector, but saw shape: %s",
                    shape_str(&ts, sa, sizeof sa));
    return;
  }
  if (is.ndims != 1) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Expected indices to be a vector, but received shape: %s",
                    shape_str(&is, sa, sizeof sa));
    return;
  }
  if (is.dims[0] != ts.dims[0]) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Expected len(indices) == tensor.shape[0], but saw: %" PRId64 " vs. %" PRId64,
                    is.dims[0], ts.dims[0]);
    return;
  }
  /* Checks TensorFlow leaves out (its kernel would index out of its vector or keep an element of
   * another shape): a negative index, and rows that do not fit the list's element_shape. */
  tfd_shape es = {.ndims = ts.ndims - 1};
  for (int d = 1; d < ts.ndims; d++) es.dims[d - 1] = ts.dims[d];
  if (!compatible(&l->element_shape, &es)) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                    "Tried to scatter tensors with incompatible shape into a list. Item element shape: %s list shape: %s",
                    shape_str(&es, sa, sizeof sa), shape_str(&l->element_shape, sb, sizeof sb));
    return;
  }
  const int32_t *idx = tfd_tensor_const_data(indices);
  int64_t highest = -1;
  for (int64_t j = 0; j < is.dims[0]; j++) {
    if (idx[j] < 0) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Indices in TensorListScatter must all be non-negative.");
      return;
    }
    if (idx[j] > highest) highest = idx[j];
  }
  if (!check_count(c, k, highest + 1)) return;
  tensor_list *out = writable_list(c, k, l);
  if (!out) return;
  if (highest + 1 > out->n) {
    if (!list_reserve(out, highest + 1)) {
      tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory growing a TensorList");
      return;
    }
    for (int64_t i = out->n; i <= highest; i++) out->items[i] = NULL;
    out->n = highest + 1;
  }
  for (int64_t j = 0; j < is.dims[0]; j++) {
    tfd_status tmp = TFD_STATUS_INIT;
    tfd_tensor *row = tfd_tensor_make_slice(t, j, &tmp);
    if (!row) {
      tfd_kernel_fail(c, k, tfd_status_code(&tmp), "%s", tfd_status_message(&tmp));
      tfd_status_clear(&tmp);
      return;
    }
    tfd_tensor_unref(out->items[idx[j]]);
    out->items[idx[j]] = row;
  }
}

static void k_resize(tfd_kernel *k, tfd_kernel_context *c) {
  tensor_list *l = input_list(c, k, 0);
  if (!l || !scalar_int32(c, k, c->inputs[1], "size must be an int32 scalar, got shape %s")) return;
  int32_t size = *(const int32_t *)tfd_tensor_const_data(c->inputs[1]);
  if (size < 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "TensorListSlice expects size to be non-negative. Got: %d", size);
    return;
  }
  if (!check_count(c, k, size)) return;
  tensor_list *out = writable_list(c, k, l);
  if (!out) return;
  if (!list_reserve(out, size)) {
    tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory growing a TensorList");
    return;
  }
  for (int64_t i = size; i < out->n; i++) tfd_tensor_unref(out->items[i]);
  for (int64_t i = out->n; i < size; i++) out->items[i] = NULL;
  out->n = size;
}

static void split_from(tfd_kernel *k, tfd_kernel_context *c, const tfd_shape *shape_p, const tfd_shape *ts_p,
                       const tfd_shape *rest_p, const tfd_shape *ls_p, const int64_t *len);

static void k_split(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_shape shape;
  if (!shape_from_tensor(c, k, c->inputs[1], &shape)) return;
  char sa[96], sb[96];
  if (shape.ndims == 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "TensorListSplit requires element_shape to be at least of rank 1, but saw: %s",
                    shape_str(&shape, sa, sizeof sa));
    return;
  }
  const tfd_tensor *t = c->inputs[0];
  tfd_shape ts;
  tfd_shape_of_tensor(t, &ts);
  if (ts.ndims == 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Tensor must be at least a vector, but saw shape: %s",
                    shape_str(&ts, sa, sizeof sa));
    return;
  }
  tfd_shape rest_t = {.ndims = ts.ndims - 1}, rest_e = {.ndims = -1};
  for (int d = 1; d < ts.ndims; d++) rest_t.dims[d - 1] = ts.dims[d];
  if (shape.ndims > 0) {
    rest_e.ndims = shape.ndims - 1;
    for (int d = 1; d < shape.ndims; d++) rest_e.dims[d - 1] = shape.dims[d];
  }
  if (!compatible(&rest_e, &rest_t)) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "tensor shape %s is not compatible with element_shape %s",
                    shape_str(&ts, sa, sizeof sa), shape_str(&shape, sb, sizeof sb));
    return;
  }
  tfd_shape ls;
  tfd_shape_of_tensor(c->inputs[2], &ls);
  if (ls.ndims != 1) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Expected lengths to be a vector, received shape: %s",
                    shape_str(&ls, sa, sizeof sa));
    return;
  }
  tfd_tensor *lengths = tfd_kernel_host_copy(c, k, c->inputs[2]); /* int64: a GPU's memory */
  if (!lengths) return;
  split_from(k, c, &shape, &ts, &rest_t, &ls, tfd_tensor_const_data(lengths));
  tfd_tensor_unref(lengths);
}

/* The rest of TensorListSplit, with the lengths read on the host. */
static void split_from(tfd_kernel *k, tfd_kernel_context *c, const tfd_shape *shape_p, const tfd_shape *ts_p,
                       const tfd_shape *rest_p, const tfd_shape *ls_p, const int64_t *len) {
  tfd_shape shape = *shape_p, ts = *ts_p, rest_t = *rest_p, ls = *ls_p;
  tfd_tensor *t = c->inputs[0];
  int64_t start = 0, end = 0;
  for (int64_t i = 0; i < ls.dims[0]; i++) {
    if (len[i] < 0) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Invalid value in lengths: %" PRId64, len[i]);
      return;
    }
    end = start + len[i];
    if (end > ts.dims[0]) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Attempting to slice [%" PRId64 ", %" PRId64 "] from tensor with length %" PRId64,
                      start, end, ts.dims[0]);
      return;
    }
    start = end;
  }
  if (end != ts.dims[0]) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Unused values in tensor. Length of tensor: %" PRId64 " Values used: %" PRId64,
                    ts.dims[0], end);
    return;
  }
  if (!check_count(c, k, ls.dims[0])) return;
  tensor_list *l = list_new(tfd_tensor_dtype(t), &shape, ls.dims[0]);
  if (!l) {
    c->outputs[0] = list_output(c, k, NULL);
    return;
  }
  int64_t row = tfd_shape_numel(&rest_t), from = 0;
  int64_t dims[TFD_MAX_DIMS];
  for (int d = 1; d < ts.ndims; d++) dims[d] = ts.dims[d];
  for (int64_t i = 0; i < ls.dims[0]; i++) {
    dims[0] = len[i];
    tfd_tensor *piece = tfd_kernel_alloc_home(c, k, tfd_tensor_dtype(t), dims, ts.ndims);
    if (!piece || !tfd_kernel_put_elems(c, k, piece, 0, t, from, len[i] * row)) {
      tfd_tensor_unref(piece);
      tfd_variant_unref(&l->base);
      return;
    }
    from += len[i] * row;
    l->items[i] = piece;
  }
  c->outputs[0] = list_output(c, k, l);
}

/* TensorListConcat (element_shape attr in k->state; no leading_dims) and TensorListConcatV2. */
static void k_concat(tfd_kernel *k, tfd_kernel_context *c) {
  tensor_list *l = input_list(c, k, 0);
  if (!l || !same_dtype(c, k, l)) return;
  bool v2 = c->num_inputs > 1;
  int64_t first = -1;
  tfd_shape rest = {.ndims = -1};
  char buf[96];
  if (v2) {
    tfd_shape es;
    if (!element_shape(c, k, l, 1, &es)) return;
    if (es.ndims == 0) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Concat requires elements to be at least vectors, found scalars instead.");
      return;
    }
    if (es.ndims > 0) {
      first = es.dims[0];
      rest.ndims = es.ndims - 1;
      for (int d = 1; d < es.ndims; d++) rest.dims[d - 1] = es.dims[d];
    }
  } else {
    const tfd_shape *attr = k->state;
    if (attr && attr->ndims > 0) {
      rest.ndims = attr->ndims - 1;
      for (int d = 1; d < attr->ndims; d++) rest.dims[d - 1] = attr->dims[d];
    } else if (attr && attr->ndims == 0) {
      rest.ndims = 0; /* TensorFlow takes dims [1:] of a scalar shape: none */
    }
  }
  if (l->n == 0 && !fully_defined(&rest)) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                    "All except the first dimension must be fully defined when concating an empty tensor list. element_shape: %s",
                    shape_str(&rest, buf, sizeof buf));
    return;
  }
  for (int64_t i = 0; i < l->n; i++) /* TensorFlow checks this only below; an element is copied by its bytes */
    if (l->items[i] && tfd_tensor_ndims(l->items[i]) == 0) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Concat saw a scalar shape at index %" PRId64 " but requires at least vectors.",
                      i);
      return;
    }
  if (!fully_defined(&l->element_shape)) {
    bool check_dim = first == -1;
    int64_t inferred = first;
    for (int64_t i = 0; i < l->n; i++) {
      const tfd_tensor *t = l->items[i];
      if (!t) continue;
      tfd_shape ts, tr;
      tfd_shape_of_tensor(t, &ts);
      tr.ndims = ts.ndims - 1;
      for (int d = 1; d < ts.ndims; d++) tr.dims[d - 1] = ts.dims[d];
      if (!merge(c, k, &rest, &tr, &rest)) return;
      if (first != -1 && first != ts.dims[0]) {
        tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                        "First entry of element_shape input does not match the first dim of list element at index: %" PRId64
                        " Expected: %" PRId64 " Actual: %" PRId64,
                        i, first, ts.dims[0]);
        return;
      }
      if (check_dim) {
        if (inferred == -1) inferred = ts.dims[0];
        else if (inferred != ts.dims[0]) {
          inferred = -1;
          check_dim = false;
        }
      }
    }
    first = inferred;
  }
  if (!fully_defined(&rest)) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                    "Trying to concat list with only uninitialized tensors but element_shape_except_first_dim_ is not fully "
                    "defined: %s",
                    shape_str(&rest, buf, sizeof buf));
    return;
  }
  int64_t nlead = v2 ? tfd_tensor_numel(c->inputs[2]) : 0;
  tfd_tensor *lead_t = v2 ? tfd_kernel_host_copy(c, k, c->inputs[2]) : NULL; /* int64: a GPU's memory */
  if (v2 && !lead_t) return;
  const int64_t *lead = lead_t ? tfd_tensor_const_data(lead_t) : NULL;
  int64_t n = l->n;
  tfd_status st = TFD_STATUS_INIT;
  tfd_tensor *lengths = tfd_tensor_make(NULL, TFD_INT64, &n, 1, &st); /* made on the host, then moved */
  if (!lengths) {
    tfd_kernel_fail(c, k, tfd_status_code(&st), "%s", tfd_status_message(&st));
    tfd_status_clear(&st);
    tfd_tensor_unref(lead_t);
    return;
  }
  int64_t *lens = tfd_tensor_data(lengths);
  int64_t total = 0;
  for (int64_t i = 0; i < l->n; i++) {
    int64_t dim;
    if (l->items[i]) dim = tfd_tensor_dim(l->items[i], 0);
    else if ((!v2 || i >= nlead) && first != -1) dim = first;
    else if (!v2) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                      "Concating lists with uninitialized tensors is not supported in this version of TensorListConcat. "
                      "Consider updating your GraphDef to run the newer version.");
      tfd_tensor_unref(lengths);
      tfd_tensor_unref(lead_t);
      return;
    } else if (i >= nlead) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                      "List contains uninitialized tensor at index %" PRId64 " but leading_dims has only %" PRId64 " elements.", i,
                      nlead);
      tfd_tensor_unref(lengths);
      tfd_tensor_unref(lead_t);
      return;
    } else dim = lead[i];
    if (dim < 0) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "leading_dims[%" PRId64 "] is %" PRId64 "; a length must be at least 0", i, dim);
      tfd_tensor_unref(lengths);
      tfd_tensor_unref(lead_t);
      return;
    }
    lens[i] = dim;
    total += dim;
  }
  /* Every set element must have the trailing dims the output has (copied by its bytes below). */
  for (int64_t i = 0; i < l->n; i++) {
    if (!l->items[i]) continue;
    tfd_shape want = {.ndims = rest.ndims + 1};
    want.dims[0] = lens[i];
    for (int d = 0; d < rest.ndims; d++) want.dims[d + 1] = rest.dims[d];
    if (!item_is(c, k, l->items[i], &want)) {
      tfd_tensor_unref(lengths);
      tfd_tensor_unref(lead_t);
      return;
    }
  }
  int64_t dims[TFD_MAX_DIMS];
  dims[0] = total;
  for (int d = 0; d < rest.ndims; d++) dims[d + 1] = rest.dims[d];
  tfd_tensor_unref(lead_t);
  tfd_tensor *out = tfd_kernel_alloc_home(c, k, l->element_dtype, dims, rest.ndims + 1);
  int64_t row = tfd_shape_numel(&rest), at = 0;
  for (int64_t i = 0; out && i < l->n; at += lens[i] * row, i++)
    if (!tfd_kernel_put_elems(c, k, out, at, l->items[i], 0, lens[i] * row)) {
      tfd_tensor_unref(out);
      out = NULL;
    }
  if (out && (lengths = tfd_kernel_host_to_home(c, k, lengths)) != NULL) {
    c->outputs[0] = out;
    c->outputs[1] = lengths;
    return;
  }
  tfd_tensor_unref(out);
  tfd_tensor_unref(lengths);
}

static void concat_cleanup(tfd_kernel *k) { free(k->state); }

tfd_code tfd_setup_tensor_list(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  const char *op = init->op->name;
  k->dst = tfd_attr_dtype(init->node, strcmp(op, "TensorListElementShape") == 0 ? "shape_type" : "element_dtype", 0);
  if (strcmp(op, "TensorListReserve") == 0 || strcmp(op, "EmptyTensorList") == 0) k->compute = k_reserve;
  else if (strcmp(op, "TensorListFromTensor") == 0) k->compute = k_from_tensor;
  else if (strcmp(op, "TensorListGetItem") == 0) k->compute = k_get_item;
  else if (strcmp(op, "TensorListSetItem") == 0) {
    k->compute = k_set_item;
    k->keep_dims = tfd_attr_bool(init->node, "resize_if_index_out_of_bounds", false);
  } else if (strcmp(op, "TensorListPushBack") == 0) k->compute = k_push_back;
  else if (strcmp(op, "TensorListPopBack") == 0) k->compute = k_pop_back;
  else if (strcmp(op, "TensorListStack") == 0) {
    k->compute = k_stack;
    k->index = tfd_attr_int(init->node, "num_elements", -1);
  } else if (strcmp(op, "TensorListLength") == 0) k->compute = k_length;
  else if (strcmp(op, "TensorListElementShape") == 0) k->compute = k_element_shape;
  else if (strcmp(op, "TensorListGather") == 0) k->compute = k_gather;
  else if (strcmp(op, "TensorListScatter") == 0 || strcmp(op, "TensorListScatterV2") == 0) k->compute = k_scatter;
  else if (strcmp(op, "TensorListScatterIntoExistingList") == 0) k->compute = k_scatter_into;
  else if (strcmp(op, "TensorListResize") == 0) k->compute = k_resize;
  else if (strcmp(op, "TensorListSplit") == 0) k->compute = k_split;
  else if (strcmp(op, "TensorListConcatV2") == 0) k->compute = k_concat;
  else if (strcmp(op, "TensorListConcat") == 0) {
    const tfd_attr_value *es = tfd_node_def_attr(init->node, "element_shape");
    tfd_shape *shape = malloc(sizeof *shape);
    if (!shape) return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
    shape->ndims = -1;
    if (es && es->type == TFD_ATTR_SHAPE) *shape = es->shape;
    k->state = shape;
    k->cleanup = concat_cleanup;
    k->compute = k_concat;
  }
  else return tfd_status_setf(st, TFD_INTERNAL, "no TensorList kernel for %s", op);
  return TFD_OK;
}
