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
#include <stdlib.h>
#include <string.h>

#include "allocator_internal.h"
#include "checked.h"
#include "refcount.h"
#include "status_internal.h"
#include "tensor_internal.h"
#include "tfdev/tensor.h"

typedef struct tfd_buffer {
  tfd_refcount refs;
  bool in_block;            /* data and headers are one block (see above) */
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

const char *tfd_dtype_name(tfd_dtype dt) {
  switch (dt) {
    case TFD_FLOAT32: return "float32";
    case TFD_FLOAT64: return "float64";
    case TFD_INT32: return "int32";
    case TFD_INT64: return "int64";
    case TFD_BOOL: return "bool";
    case TFD_UINT8: return "uint8";
    case TFD_FLOAT16: return "float16";
    case TFD_RESOURCE: return "resource";
  }
  return NULL;
}

tfd_dtype tfd_dtype_from_name(const char *name) {
  static const tfd_dtype all[] = {TFD_FLOAT32, TFD_FLOAT64, TFD_INT32, TFD_INT64,
                                  TFD_BOOL,    TFD_UINT8,   TFD_FLOAT16, TFD_RESOURCE};
  /* TensorFlow's DataType enum names, as GraphDefs in protobuf's text and JSON forms write them. */
  static const char *const tf_names[] = {"DT_FLOAT", "DT_DOUBLE", "DT_INT32", "DT_INT64",
                                         "DT_BOOL",  "DT_UINT8",  "DT_HALF",  "DT_RESOURCE"};
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
    case TFD_RESOURCE: return sizeof(tfd_resource_handle);
  }
  return 0;
}

static void buffer_unref(tfd_buffer *b) {
  if (!drop_ref(&b->refs)) return;
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
  tfd_tensor *t = calloc(1, sizeof *t);
  tfd_buffer *b = calloc(1, sizeof *b);
  if (!t || !b) {
    tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory allocating a %zu-byte tensor", size);
    goto fail;
  }
  b->data = tfd_allocator_allocate(allocator, TFD_TENSOR_ALIGNMENT, size, status);
  if (!b->data) goto fail;
  b->allocator = tfd_allocator_ref(allocator);
  if (dtype == TFD_RESOURCE && size) memset(b->data, 0, size);
  tfd_refcount_init(&b->refs);
  b->size = size;
  init_tensor(t, dtype, dims, ndims, numel, b);
  return t;
fail:
  free(t);
  free(b);
  return NULL;
}

tfd_tensor *tfd_tensor_new(tfd_allocator *allocator, tfd_dtype dtype, const int64_t *dims, int ndims,
                           tfd_status *status) {
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
  /* Resource handles are read as strings: never hand out garbage bytes. */
  if (dtype == TFD_RESOURCE && size) memset(b->data, 0, size);
  init_tensor(t, dtype, dims, ndims, numel, b);
  t->in_block = true;
  return t;
}

tfd_tensor *tfd_tensor_from_bytes(tfd_allocator *allocator, tfd_dtype dtype, const int64_t *dims, int ndims,
                                  const void *data, size_t nbytes, tfd_status *status) {
  int64_t numel;
  if (check_shape(dtype, dims, ndims, &numel, status) != TFD_OK) return NULL;
  size_t want = (size_t)numel * tfd_dtype_size(dtype);
  if (nbytes != want) {
    tfd_status_setf(status, TFD_INVALID_ARGUMENT, "%zu bytes given for a %s tensor of %" PRId64 " elements (%zu bytes)",
                    nbytes, tfd_dtype_name(dtype), numel, want);
    return NULL;
  }
  if (nbytes && !data) {
    tfd_status_setf(status, TFD_INVALID_ARGUMENT, "%zu bytes announced but no data given", nbytes);
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
  tfd_tensor *t = tfd_tensor_new(allocator, dtype, dims, ndims, status);
  if (t && nbytes) memcpy(tfd_tensor_data(t), data, nbytes);
  if (t && dtype == TFD_BOOL) {
    /* Normalise so every bool byte is 0 or 1, whatever the bytes said. */
    unsigned char *p = tfd_tensor_data(t);
    for (size_t i = 0; i < nbytes; i++) p[i] = p[i] != 0;
  }
  return t;
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

tfd_tensor *tfd_tensor_slice(tfd_tensor *t, int64_t index, tfd_status *status) {
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

tfd_tensor *tfd_tensor_reshape(tfd_tensor *t, const int64_t *dims, int ndims, tfd_status *status) {
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
size_t tfd_tensor_byte_size(const tfd_tensor *t) { return (size_t)t->numel * tfd_dtype_size(t->dtype); }
void *tfd_tensor_data(tfd_tensor *t) { return (char *)t->buf->data + t->offset; }
const void *tfd_tensor_const_data(const tfd_tensor *t) { return (const char *)t->buf->data + t->offset; }
int tfd_tensor_buffer_refcount(const tfd_tensor *t) { return tfd_refcount_get(&t->buf->refs); }

/* Acquire loads: another holder's reads of the elements happen before its release of its reference. */
bool tfd_tensor_is_exclusive(const tfd_tensor *t) {
  return tfd_refcount_get(&t->refs) == 1 && tfd_refcount_get(&t->buf->refs) == 1;
}
