/* Tensors: dtype, shape and a reference-counted aligned buffer shared by views.
 *
 * A new tensor is one block: its header, its buffer's header and, at the
 * next 64-byte boundary, its data, from the allocator's block interface (or
 * aligned_alloc without an allocator), so making one costs one allocation,
 * which a warm CPU allocator serves from the thread's cache. The block lives
 * as long as the buffer: views made from the tensor have headers of their
 * own and keep the buffer, so the first tensor's header may outlive its
 * last reference, unused, until the buffer goes. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allocator_internal.h"
#include "api_args.h"
#include "checked.h"
#include "dtype_name.h"
#include "refcount.h"
#include "status_internal.h"
#include "tensor_internal.h"
#include "tfdev/tensor.h"
#include "tstring.h"
#include "variant.h"

typedef struct tfd_buffer {
  tfd_refcount refs;
  bool in_block;            /* data and headers are one block (see above) */
  bool variant;             /* the elements are tfd_variant references (variants, strings), dropped with the buffer */
  bool borrowed;            /* ... not yet taken: a kernel is copying them in (tfd_tensor_borrow_elements) */
  tfd_allocator *allocator; /* NULL: system memory */
  void *data;
  size_t size;
} tfd_buffer;

struct tfd_tensor {
  tfd_refcount refs;
  tfd_dtype dtype;
  int ndims;
  bool in_block; /* this header is in its buffer's block: freed with the buffer */
  int64_t dims[TFD_MAX_DIMS];
  int64_t numel;
  tfd_buffer *buf;
  size_t offset; /* bytes into buf->data, for views */
};

/* The headers at the start of a block; the data follows at BLOCK_HEADER. */
typedef struct tensor_block {
  tfd_tensor t;
  tfd_buffer b;
} tensor_block;
#define BLOCK_HEADER \
  ((sizeof(tensor_block) + TFD_TENSOR_ALIGNMENT - 1) / TFD_TENSOR_ALIGNMENT * TFD_TENSOR_ALIGNMENT)

/* Drops a reference; true when it was the last. A count of 1 is ours alone:
 * nobody else can take another, so the last reference skips the atomic
 * read-modify-write. */
static bool drop_ref(tfd_refcount *r) { return tfd_refcount_get(r) == 1 || tfd_refcount_dec(r); }

const char *tfd_dtype_name(tfd_dtype dt) { return tfd_dtype_name_inline(dt); }

tfd_dtype tfd_dtype_from_name(const char *name) {
  static const tfd_dtype all[] = {TFD_FLOAT32, TFD_FLOAT64, TFD_INT32,    TFD_INT64,   TFD_BOOL,      TFD_UINT8,
                                  TFD_FLOAT16, TFD_STRING,  TFD_RESOURCE, TFD_VARIANT, TFD_COMPLEX64};
  /* TensorFlow's DataType enum names, as GraphDefs in protobuf's text and JSON forms write them. */
  static const char *const tf_names[] = {"DT_FLOAT",  "DT_DOUBLE",   "DT_INT32",   "DT_INT64",
                                         "DT_BOOL",   "DT_UINT8",    "DT_HALF",    "DT_STRING",
                                         "DT_RESOURCE", "DT_VARIANT", "DT_COMPLEX64"};
  if (!name) return 0;
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    if (strcmp(name, tfd_dtype_name(all[i])) == 0 || strcmp(name, tf_names[i]) == 0) return all[i];
  return 0;
}

size_t tfd_dtype_size(tfd_dtype dt) {
  switch (dt) {
    case TFD_FLOAT32: return 4;
    case TFD_FLOAT64: return 8;
    case TFD_INT32: return 4;
    case TFD_INT64: return 8;
    case TFD_BOOL: return 1;
    case TFD_UINT8: return 1;
    case TFD_FLOAT16: return 2;
    case TFD_COMPLEX64: return 8;
    case TFD_RESOURCE: return sizeof(tfd_resource_handle);
    case TFD_STRING:
    case TFD_VARIANT: return sizeof(tfd_variant *);
  }
  return 0;
}

/* Dtypes whose elements are references to objects (variant.h, tstring.h): zeroed when made, dropped
 * with the buffer, and kept in host memory. */
static bool holds_refs(tfd_dtype dt) { return dt == TFD_VARIANT || dt == TFD_STRING; }
/* Dtypes the host reads element by element: never in device memory. */
static bool host_only(tfd_dtype dt) { return dt == TFD_RESOURCE || holds_refs(dt); }

static void buffer_unref(tfd_buffer *b) {
  if (!drop_ref(&b->refs)) return;
  if (__builtin_expect(b->variant && !b->borrowed, 0)) { /* each element holds a reference (zeroed ones none) */
    tfd_variant **v = b->data;
    for (size_t i = 0; i < b->size / sizeof *v; i++) tfd_variant_unref(v[i]);
  }
  if (b->in_block) {
    void *block = (char *)b->data - BLOCK_HEADER;
    tfd_allocator *a = b->allocator;
    if (a) {
      tfd_allocator_deallocate_block(a, block, BLOCK_HEADER, b->size); /* the last live block may free a */
    } else {
      free(block);
    }
    return;
  }
  if (b->allocator) {
    tfd_allocator_deallocate(b->allocator, b->data, b->size);
    tfd_allocator_unref(b->allocator);
  } else {
    free(b->data);
  }
  free(b);
}

/* The largest byte size a tensor may have: sizes stay representable as
 * int64 (what step stats and allocator stats count in) and as size_t. */
#define MAX_TENSOR_BYTES (INT64_MAX < SIZE_MAX ? (int64_t)INT64_MAX : (int64_t)SIZE_MAX)

/* Checks dtype and shape; computes the element count, and checks the byte
 * size, without overflow (elements can be bigger than 8 bytes: resources). */
static tfd_code check_shape(tfd_dtype dtype, const int64_t *dims, int ndims, int64_t *numel, tfd_status *status) {
  size_t es = tfd_dtype_size(dtype);
  if (es == 0) return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "invalid dtype %d", (int)dtype);
  if (ndims < 0 || ndims > TFD_MAX_DIMS)
    return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "rank %d is outside [0, %d]", ndims, TFD_MAX_DIMS);
  if (ndims > 0 && !dims) return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "rank %d given without dimensions", ndims);
  int64_t n = 1, bytes;
  for (int i = 0; i < ndims; i++) {
    if (dims[i] < 0)
      return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "dimension %d is negative (%" PRId64 ")", i, dims[i]);
    if (!tfd_checked_mul(n, dims[i], &n))
      return tfd_status_setf(status, TFD_INVALID_ARGUMENT,
                             "shape is too large: the element count overflows at dimension %d (%" PRId64 ")", i,
                             dims[i]);
  }
  if (!tfd_checked_mul(n, (int64_t)es, &bytes) || bytes > MAX_TENSOR_BYTES)
    return tfd_status_setf(status, TFD_INVALID_ARGUMENT,
                           "shape is too large: %" PRId64 " elements of %s (%zu bytes each) overflow the byte size", n,
                           tfd_dtype_name(dtype), es);
  *numel = n;
  return TFD_OK;
}

static void init_tensor(tfd_tensor *t, tfd_dtype dtype, const int64_t *dims, int ndims, int64_t numel,
                        tfd_buffer *b) {
  tfd_refcount_init(&t->refs);
  t->dtype = dtype;
  t->ndims = ndims;
  t->in_block = false;
  for (int i = 0; i < ndims; i++) t->dims[i] = dims[i];
  t->numel = numel;
  t->buf = b;
  t->offset = 0;
}

/* A tensor whose header and data are separate allocations: allocators without blocks. */
static tfd_tensor *new_separate(tfd_allocator *allocator, tfd_dtype dtype, const int64_t *dims, int ndims,
                                int64_t numel, size_t size, tfd_status *status) {
  if (host_only(dtype) && allocator->device_memory) { /* read by the host */
    tfd_status_setf(status, TFD_INVALID_ARGUMENT, "%s tensors live in host memory, not in %s", tfd_dtype_name(dtype),
                    allocator->name);
    return NULL;
  }
  tfd_tensor *t = calloc(1, sizeof *t);
  tfd_buffer *b = calloc(1, sizeof *b);
  if (!t || !b) {
    tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory allocating a %zu-byte tensor", size);
    goto fail;
  }
  b->data = tfd_allocator_allocate(allocator, TFD_TENSOR_ALIGNMENT, size, status);
  if (!b->data) goto fail;
  b->allocator = tfd_allocator_ref(allocator);
  if (host_only(dtype) && size) memset(b->data, 0, size);
  b->variant = holds_refs(dtype);
  tfd_refcount_init(&b->refs);
  b->size = size;
  init_tensor(t, dtype, dims, ndims, numel, b);
  return t;
fail:
  free(t);
  free(b);
  return NULL;
}

tfd_tensor *tfd_tensor_make(tfd_allocator *allocator, tfd_dtype dtype, const int64_t *dims, int ndims,
                           tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_array(status, "tfd_tensor_new", "dims", dims, "ndims", ndims)) return NULL;
  int64_t numel;
  if (check_shape(dtype, dims, ndims, &numel, status) != TFD_OK) return NULL;
  size_t size = (size_t)numel * tfd_dtype_size(dtype);
  tensor_block *block;
  if (allocator && tfd_allocator_has_blocks(allocator)) {
    block = tfd_allocator_allocate_block(allocator, BLOCK_HEADER, size, status);
    if (!block) return NULL;
  } else if (!allocator) {
    /* Round up: aligned_alloc wants a multiple of the alignment. */
    size_t rounded = (size + TFD_TENSOR_ALIGNMENT - 1) / TFD_TENSOR_ALIGNMENT * TFD_TENSOR_ALIGNMENT;
    block = rounded <= SIZE_MAX - BLOCK_HEADER ? aligned_alloc(TFD_TENSOR_ALIGNMENT, BLOCK_HEADER + rounded) : NULL;
    if (!block) {
      tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory allocating a %zu-byte tensor", size);
      return NULL;
    }
  } else {
    return new_separate(allocator, dtype, dims, ndims, numel, size, status);
  }
  tfd_tensor *t = &block->t;
  tfd_buffer *b = &block->b;
  tfd_refcount_init(&b->refs);
  b->in_block = true;
  b->allocator = allocator; /* live blocks keep their allocator alive (allocator_internal.h) */
  b->data = (char *)block + BLOCK_HEADER;
  b->size = size;
  /* Resource handles are read as strings and variant elements as references: never hand out garbage. */
  if (host_only(dtype) && size) memset(b->data, 0, size);
  b->variant = holds_refs(dtype);
  b->borrowed = false;
  init_tensor(t, dtype, dims, ndims, numel, b);
  t->in_block = true;
  return t;
}

tfd_code tfd_tensor_new(tfd_allocator *allocator, tfd_dtype dtype, const int64_t *dims, int ndims, tfd_tensor **out,
                        tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_tensor_new", "out", out)) return TFD_INVALID_ARGUMENT;
  tfd_status local = TFD_STATUS_INIT;
  *out = tfd_tensor_make(allocator, dtype, dims, ndims, &local);
  return tfd_status_move(status, &local);
}

tfd_tensor *tfd_tensor_make_from_bytes(tfd_allocator *allocator, tfd_dtype dtype, const int64_t *dims, int ndims,
                                  const void *data, size_t nbytes, tfd_status *status) {
  tfd_status_reset(status);
  static const char fn[] = "tfd_tensor_from_bytes";
  if (tfd_arg_array(status, fn, "dims", dims, "ndims", ndims)) return NULL;
  if (nbytes && !data) {
    tfd_status_setf(status, TFD_INVALID_ARGUMENT, "%s: data is NULL but nbytes is %zu", fn, nbytes);
    return NULL;
  }
  int64_t numel;
  if (check_shape(dtype, dims, ndims, &numel, status) != TFD_OK) return NULL;
  size_t want = (size_t)numel * tfd_dtype_size(dtype);
  if (nbytes != want) {
    tfd_status_setf(status, TFD_INVALID_ARGUMENT, "%zu bytes given for %s %s tensor of %" PRId64 " elements (%zu bytes)",
                    nbytes, tfd_article(tfd_dtype_name(dtype)), tfd_dtype_name(dtype), numel, want);
    return NULL;
  }
  if (nbytes && !data) {
    tfd_status_setf(status, TFD_INVALID_ARGUMENT, "%zu bytes announced but no data given", nbytes);
    return NULL;
  }
  if (dtype == TFD_VARIANT) { /* bytes cannot hold a reference to a runtime object */
    tfd_status_setf(status, TFD_INVALID_ARGUMENT, "variant tensors cannot be made from bytes: only kernels make them");
    return NULL;
  }
  if (dtype == TFD_STRING) {
    tfd_status_setf(status, TFD_INVALID_ARGUMENT,
                    "string tensors cannot be made from bytes: make one with tfd_tensor_new and set its elements "
                    "with tfd_tensor_set_string");
    return NULL;
  }
  if (dtype == TFD_RESOURCE) {
    /* Each handle's container and name must be strings that end inside their fields. */
    const tfd_resource_handle *h = data;
    for (int64_t i = 0; i < numel; i++)
      if (!memchr(h[i].container, 0, sizeof h[i].container) || !memchr(h[i].name, 0, sizeof h[i].name)) {
        tfd_status_setf(status, TFD_INVALID_ARGUMENT,
                        "resource handle %" PRId64 " is malformed: its container or name is not NUL-terminated", i);
        return NULL;
      }
  }
  if (allocator && allocator->device_memory) { /* the bytes go to the host first, then to the device */
    tfd_tensor *host = tfd_tensor_make_from_bytes(NULL, dtype, dims, ndims, data, nbytes, status);
    tfd_tensor *t = host ? tfd_tensor_copy_to(host, allocator, status) : NULL;
    tfd_tensor_unref(host);
    return t;
  }
  tfd_tensor *t = tfd_tensor_make(allocator, dtype, dims, ndims, status);
  if (t && nbytes) memcpy(tfd_tensor_data(t), data, nbytes);
  if (t && dtype == TFD_BOOL) {
    /* Normalise so every bool byte is 0 or 1, whatever the bytes said. */
    unsigned char *p = tfd_tensor_data(t);
    for (size_t i = 0; i < nbytes; i++) p[i] = p[i] != 0;
  }
  return t;
}

tfd_code tfd_tensor_from_bytes(tfd_allocator *allocator, tfd_dtype dtype, const int64_t *dims, int ndims, const void *data,
                               size_t nbytes, tfd_tensor **out, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_tensor_from_bytes", "out", out)) return TFD_INVALID_ARGUMENT;
  tfd_status local = TFD_STATUS_INIT;
  *out = tfd_tensor_make_from_bytes(allocator, dtype, dims, ndims, data, nbytes, &local);
  return tfd_status_move(status, &local);
}

/* A new tensor header sharing t's buffer (dtype, buffer and offset copied,
 * field by field: t's refcount may be changing on another thread). */
static tfd_tensor *new_view(const tfd_tensor *t, tfd_status *status) {
  tfd_tensor *v = calloc(1, sizeof *v);
  if (!v) {
    tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory making a tensor view");
    return NULL;
  }
  tfd_refcount_init(&v->refs);
  v->dtype = t->dtype;
  v->numel = t->numel;
  v->buf = t->buf;
  v->offset = t->offset;
  tfd_refcount_inc(&t->buf->refs);
  return v;
}

tfd_tensor *tfd_tensor_make_slice(tfd_tensor *t, int64_t index, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_tensor_slice", "t", t)) return NULL;
  if (t->ndims == 0) {
    tfd_status_setf(status, TFD_OUT_OF_RANGE, "cannot index a scalar tensor");
    return NULL;
  }
  if (index < 0 || index >= t->dims[0]) {
    tfd_status_setf(status, TFD_OUT_OF_RANGE, "index %" PRId64 " is out of range for dimension 0 of size %" PRId64,
                    index, t->dims[0]);
    return NULL;
  }
  tfd_tensor *v = new_view(t, status);
  if (!v) return NULL;
  v->ndims = t->ndims - 1;
  v->numel = 1;
  for (int i = 0; i < v->ndims; i++) {
    v->dims[i] = t->dims[i + 1];
    v->numel *= v->dims[i];
  }
  v->offset = t->offset + (size_t)index * (size_t)v->numel * tfd_dtype_size(t->dtype);
  return v;
}

tfd_code tfd_tensor_slice(tfd_tensor *t, int64_t index, tfd_tensor **out, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_tensor_slice", "out", out)) return TFD_INVALID_ARGUMENT;
  tfd_status local = TFD_STATUS_INIT;
  *out = tfd_tensor_make_slice(t, index, &local);
  return tfd_status_move(status, &local);
}

tfd_tensor *tfd_tensor_make_reshape(tfd_tensor *t, const int64_t *dims, int ndims, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_tensor_reshape", "t", t) ||
      tfd_arg_array(status, "tfd_tensor_reshape", "dims", dims, "ndims", ndims))
    return NULL;
  int64_t numel;
  if (check_shape(t->dtype, dims, ndims, &numel, status) != TFD_OK) return NULL;
  if (numel != t->numel) {
    tfd_status_setf(status, TFD_INVALID_ARGUMENT, "cannot reshape %" PRId64 " elements into %" PRId64, t->numel, numel);
    return NULL;
  }
  tfd_tensor *v = new_view(t, status);
  if (!v) return NULL;
  v->ndims = ndims;
  for (int i = 0; i < ndims; i++) v->dims[i] = dims[i];
  return v;
}

tfd_code tfd_tensor_reshape(tfd_tensor *t, const int64_t *dims, int ndims, tfd_tensor **out, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_tensor_reshape", "out", out)) return TFD_INVALID_ARGUMENT;
  tfd_status local = TFD_STATUS_INIT;
  *out = tfd_tensor_make_reshape(t, dims, ndims, &local);
  return tfd_status_move(status, &local);
}

tfd_tensor *tfd_tensor_ref(tfd_tensor *t) {
  if (t) tfd_refcount_inc(&t->refs);
  return t;
}

void tfd_tensor_ref_n(tfd_tensor *t, int n) {
  if (t && n > 0) atomic_fetch_add_explicit(&t->refs.n, n, memory_order_relaxed);
}

void tfd_tensor_unref(tfd_tensor *t) {
  if (!t || !drop_ref(&t->refs)) return;
  tfd_buffer *b = t->buf;
  if (!t->in_block) free(t); /* a header in the block goes with the buffer */
  buffer_unref(b);
}

tfd_dtype tfd_tensor_dtype(const tfd_tensor *t) { return t->dtype; }
int tfd_tensor_ndims(const tfd_tensor *t) { return t->ndims; }
int64_t tfd_tensor_dim(const tfd_tensor *t, int i) { return i >= 0 && i < t->ndims ? t->dims[i] : -1; }
int64_t tfd_tensor_numel(const tfd_tensor *t) { return t->numel; }
bool tfd_tensor_on_host(const tfd_tensor *t) { return !t->buf->allocator || !t->buf->allocator->device_memory; }

static void unref_tensor(void *t) { tfd_tensor_unref(t); }

bool tfd_tensor_in_host_memory(const tfd_tensor *t) {
  return !t->buf->allocator || !t->buf->allocator->device_memory;
}

tfd_code tfd_tensor_copy_host_into(tfd_tensor *src, tfd_tensor *dst, tfd_status *st) {
  size_t bytes = tfd_tensor_byte_size(src);
  if (holds_refs(src->dtype) || holds_refs(dst->dtype))
    return tfd_status_setf(st, TFD_FAILED_PRECONDITION, "copying a tensor into another: %s tensors are not bytes",
                           tfd_dtype_name(holds_refs(src->dtype) ? src->dtype : dst->dtype));
  if (!tfd_tensor_in_host_memory(src) || bytes != tfd_tensor_byte_size(dst))
    return tfd_status_setf(st, TFD_FAILED_PRECONDITION,
                           "copying a tensor into another: the source must be in host memory and the sizes equal "
                           "(%zu and %zu bytes)",
                           bytes, tfd_tensor_byte_size(dst));
  if (bytes == 0) return TFD_OK;
  tfd_allocator *to = dst->buf->allocator;
  if (tfd_tensor_in_host_memory(dst)) {
    memmove(tfd_tensor_data(dst), tfd_tensor_const_data(src), bytes);
    return TFD_OK;
  }
  return to->device_memory->from_host(to, tfd_tensor_data(dst), tfd_tensor_const_data(src), bytes, unref_tensor,
                                      tfd_tensor_ref(src), st);
}

tfd_tensor *tfd_tensor_copy_to(tfd_tensor *t, tfd_allocator *allocator, tfd_status *st) {
  tfd_allocator *from = t->buf->allocator;
  const tfd_device_memory_ops *src = from ? from->device_memory : NULL;
  const tfd_device_memory_ops *dst = allocator ? allocator->device_memory : NULL;
  if ((!src && !dst) || (src && from == allocator)) return tfd_tensor_ref(t);
  tfd_tensor *out = tfd_tensor_make(allocator, t->dtype, t->dims, t->ndims, st);
  size_t bytes = tfd_tensor_byte_size(t);
  if (!out || bytes == 0) return out;
  tfd_tensor *host = t;
  if (src) { /* device to host, then (between two devices' memories) on to the other device */
    host = dst ? tfd_tensor_make(NULL, t->dtype, t->dims, t->ndims, st) : out;
    if (!host || src->to_host(from, tfd_tensor_data(host), tfd_tensor_const_data(t), bytes, st) != TFD_OK) {
      if (host != out) tfd_tensor_unref(host);
      tfd_tensor_unref(out);
      return NULL;
    }
    if (!dst) return out;
  }
  /* On to the device, which holds its own reference to the host tensor until the bytes have moved. */
  tfd_code code = tfd_tensor_copy_host_into(host, out, st);
  if (host != t) tfd_tensor_unref(host);
  if (code != TFD_OK) {
    tfd_tensor_unref(out);
    return NULL;
  }
  return out;
}

size_t tfd_tensor_byte_size(const tfd_tensor *t) { return (size_t)t->numel * tfd_dtype_size(t->dtype); }
void *tfd_tensor_data(tfd_tensor *t) { return (char *)t->buf->data + t->offset; }
const void *tfd_tensor_const_data(const tfd_tensor *t) { return (const char *)t->buf->data + t->offset; }
int tfd_tensor_buffer_refcount(const tfd_tensor *t) { return tfd_refcount_get(&t->buf->refs); }

/* Acquire loads: another holder's reads of the elements happen before its release of its reference. */
bool tfd_tensor_is_exclusive(const tfd_tensor *t) {
  return tfd_refcount_get(&t->refs) == 1 && tfd_refcount_get(&t->buf->refs) == 1;
}

/* ---- writing in place ---- */
/* "float32 [2,3]" into buf, for errors that name two tensors. */
static const char *describe(const tfd_tensor *t, char *buf, size_t cap) {
  int n = snprintf(buf, cap, "%s [", tfd_dtype_name(t->dtype));
  for (int i = 0; i < t->ndims && n > 0 && (size_t)n < cap; i++)
    n += snprintf(buf + n, cap - (size_t)n, "%s%" PRId64, i ? "," : "", t->dims[i]);
  if (n > 0 && (size_t)n < cap) snprintf(buf + n, cap - (size_t)n, "]");
  return buf;
}

/* Whether the caller may write t's elements: a step fed t holds a reference to it until the step
 * ends, so a shared buffer is exactly what must not change under someone. */
static tfd_code check_writable(tfd_tensor *t, const char *what, bool bytes, tfd_status *st) {
  if (!t) return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "%s: no tensor given", what);
  if (t->dtype == TFD_RESOURCE || t->dtype == TFD_VARIANT || (t->dtype == TFD_STRING && bytes))
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "%s: %s tensors cannot be written %s", what,
                           tfd_dtype_name(t->dtype), t->dtype == TFD_STRING ? "from bytes" : "in place");
  if (!tfd_tensor_on_host(t))
    return tfd_status_setf(st, TFD_FAILED_PRECONDITION, "%s: the tensor is in device memory, not on the host", what);
  if (!tfd_tensor_is_exclusive(t))
    return tfd_status_setf(st, TFD_FAILED_PRECONDITION,
                           "%s: tensor is in use by a running step or shares its buffer (%d holders of the buffer, "
                           "%d of the tensor); it cannot be written in place",
                           what, tfd_refcount_get(&t->buf->refs), tfd_refcount_get(&t->refs));
  return TFD_OK;
}

tfd_code tfd_tensor_copy_from(tfd_tensor *t, const tfd_tensor *src, tfd_status *st) {
  tfd_status_reset(st);
  if (tfd_arg_required(st, "tfd_tensor_copy_from", "t", t) || tfd_arg_required(st, "tfd_tensor_copy_from", "src", src))
    return TFD_INVALID_ARGUMENT;
  if (src == t) return TFD_OK;
  if (t && (t->dtype != src->dtype || t->numel != src->numel)) {
    char a[160], b[160];
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "copy_from: the destination is %s (%" PRId64 " elements) and the source %s (%" PRId64
                           " elements): they need the same dtype and element count",
                           describe(t, a, sizeof a), t->numel, describe(src, b, sizeof b), src->numel);
  }
  if (check_writable(t, "copy_from", false, st) != TFD_OK) return tfd_status_code(st);
  if (!tfd_tensor_on_host(src))
    return tfd_status_setf(st, TFD_FAILED_PRECONDITION, "copy_from: the source is in device memory, not on the host");
  if (t->dtype == TFD_STRING) { /* the strings are immutable: share them */
    for (int64_t i = 0; i < t->numel; i++) tfd_tensor_set_variant_at(t, i, tfd_variant_ref(tfd_tensor_variant_at(src, i)));
    return TFD_OK;
  }
  /* Distinct buffers: t's is exclusive, so src cannot share it. */
  memcpy(tfd_tensor_data(t), tfd_tensor_const_data(src), tfd_tensor_byte_size(t));
  return TFD_OK;
}

tfd_code tfd_tensor_copy_from_bytes(tfd_tensor *t, const void *data, size_t nbytes, tfd_status *st) {
  tfd_status_reset(st);
  if (tfd_arg_required(st, "tfd_tensor_copy_from_bytes", "t", t)) return TFD_INVALID_ARGUMENT;
  if (nbytes && !data)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "tfd_tensor_copy_from_bytes: data is NULL but nbytes is %zu", nbytes);
  if (t && nbytes != tfd_tensor_byte_size(t)) {
    char a[160];
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "copy_from: the destination is %s (%zu bytes) and the source %zu bytes of data",
                           describe(t, a, sizeof a), tfd_tensor_byte_size(t), nbytes);
  }
  if (check_writable(t, "copy_from", true, st) != TFD_OK) return tfd_status_code(st);
  if (nbytes && !data) return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "copy_from: %zu bytes announced but no data given", nbytes);
  if (nbytes) memcpy(tfd_tensor_data(t), data, nbytes);
  if (t->dtype == TFD_BOOL) {
    unsigned char *p = tfd_tensor_data(t);
    for (size_t i = 0; i < nbytes; i++) p[i] = p[i] != 0;
  }
  return TFD_OK;
}

tfd_code tfd_tensor_fill(tfd_tensor *t, const void *element, tfd_status *st) {
  tfd_status_reset(st);
  if (tfd_arg_required(st, "tfd_tensor_fill", "t", t) || tfd_arg_required(st, "tfd_tensor_fill", "element", element))
    return TFD_INVALID_ARGUMENT;
  if (check_writable(t, "fill", true, st) != TFD_OK) return tfd_status_code(st);
  if (!element) return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "fill: no value given");
  size_t size = tfd_dtype_size(t->dtype);
  unsigned char *p = tfd_tensor_data(t);
  unsigned char v[8];
  memcpy(v, element, size);
  if (t->dtype == TFD_BOOL) v[0] = v[0] != 0;
  bool bytewise = true; /* zeros, bools, uint8: one memset */
  for (size_t k = 1; k < size; k++) bytewise &= v[k] == v[0];
  if (bytewise) {
    memset(p, v[0], tfd_tensor_byte_size(t));
    return TFD_OK;
  }
  for (int64_t i = 0; i < t->numel; i++) memcpy(p + (size_t)i * size, v, size);
  return TFD_OK;
}

/* ---- string tensors ---- */
const char *tfd_tensor_string_at(const tfd_tensor *t, int64_t i, size_t *len) {
  size_t n = 0;
  const char *s = t && t->dtype == TFD_STRING && i >= 0 && i < t->numel ? tfd_tensor_str(t, i, &n) : NULL;
  if (len) *len = n;
  return s;
}

tfd_code tfd_tensor_set_string(tfd_tensor *t, int64_t i, const void *bytes, size_t len, tfd_status *st) {
  tfd_status_reset(st);
  static const char fn[] = "tfd_tensor_set_string";
  if (tfd_arg_required(st, fn, "t", t)) return TFD_INVALID_ARGUMENT;
  if (len && !bytes) return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "%s: bytes is NULL but len is %zu", fn, len);
  if (t->dtype != TFD_STRING)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "%s: the tensor is %s, not string", fn, tfd_dtype_name(t->dtype));
  if (i < 0 || i >= t->numel)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "%s: element %" PRId64 " is outside [0, %" PRId64 ")", fn, i,
                           t->numel);
  if (check_writable(t, fn, false, st) != TFD_OK) return tfd_status_code(st);
  tfd_tensor_adopt_elements(t); /* a custom kernel's output that a wrapper would adopt: own what it holds first */
  if (!tfd_tensor_set_str(t, i, bytes, len))
    return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "%s: out of memory copying a %zu-byte string", fn, len);
  return TFD_OK;
}

size_t tfd_tensor_string_bytes(const tfd_tensor *t) {
  size_t total = 0, n;
  if (t && t->dtype == TFD_STRING)
    for (int64_t i = 0; i < t->numel; i++) total += (tfd_tensor_str(t, i, &n), n);
  return total;
}

void tfd_tensor_borrow_elements(tfd_tensor *t) {
  if (t->buf->variant) t->buf->borrowed = true;
}

void tfd_tensor_adopt_elements(tfd_tensor *t) {
  tfd_buffer *b = t->buf;
  if (!b->borrowed) return;
  tfd_variant **v = b->data;
  for (size_t i = 0; i < b->size / sizeof *v; i++) tfd_variant_ref(v[i]);
  b->borrowed = false;
}
