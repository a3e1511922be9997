/* Fuzzes tensor creation from a dtype, a shape and raw bytes
 * (include/tfdev/tensor.h). Input layout:
 *   byte 0      dtype: below 0xC0 one of the six real dtypes, else a value
 *               outside the enum (-8 .. 55, 0 and the gaps included)
 *   byte 1      rank: 0xFF is -1, else byte % 12 (ranks above 8 included)
 *   rank dims   one byte each: below 0xE0 a small size (byte & 15), else a
 *               special: -1, INT64_MIN, INT64_MAX, 2^31, 2^32, 2^62, 0,
 *               a 2-byte or an 8-byte little-endian value that follows
 *   1 byte      mode: bit 0 pads/cuts the data to exactly the tensor's byte
 *               size (so creation mostly succeeds), bits 1..7 pick slice
 *               indices and a reshape
 *   the rest    the tensor's bytes
 * Each shape goes through tfd_tensor_from_bytes and tfd_tensor_new, with the
 * system allocator and with a CPU allocator limited to 1 MiB; every success
 * is sliced, reshaped and measured, and must agree with the shape it was
 * made from (byte size == numel * dtype size, ...). abort() otherwise. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfdev/allocator.h"
#include "tfdev/tensor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                   \
  do {                                                                                                \
    if (!(cond)) {                                                                                    \
      fprintf(stderr, "fuzz_tensor_bytes: invariant failed at line %d: %s\n", __LINE__, #cond);       \
      abort();                                                                                        \
    }                                                                                                 \
  } while (0)

/* The allocator's limit, and the largest tensor the system allocator is
 * asked for (bigger shapes are the harness's choice, not a finding). */
#define LIMIT ((int64_t)1 << 20)
/* Largest byte buffer the harness builds when padding the data. */
#define MAX_PAD ((size_t)1 << 16)

typedef struct reader {
  const uint8_t *p, *end;
} reader;

static uint8_t u8(reader *r) { return r->p < r->end ? *r->p++ : 0; }

static uint64_t le(reader *r, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; i++) v |= (uint64_t)u8(r) << (8 * i);
  return v;
}

static tfd_dtype decode_dtype(uint8_t b) {
  static const tfd_dtype real[] = {TFD_FLOAT32, TFD_FLOAT64, TFD_INT32, TFD_INT64, TFD_BOOL, TFD_RESOURCE};
  return b < 0xC0 ? real[b % 6] : (tfd_dtype)((int)b - 0xC0 - 8);
}

static int64_t decode_dim(reader *r) {
  uint8_t b = u8(r);
  if (b < 0xE0) return b & 15;
  switch (b & 7) {
    case 0: return -1;
    case 1: return INT64_MIN;
    case 2: return INT64_MAX;
    case 3: return (int64_t)1 << 31;
    case 4: return (int64_t)1 << 32;
    case 5: return (int64_t)1 << 62;
    case 6: return (int64_t)le(r, 2);
    default: return (int64_t)le(r, 8);
  }
}

/* What a correct implementation must compute: element count and byte size,
 * or -1 when the shape is invalid or overflows. */
static int64_t expected_numel(tfd_dtype dt, const int64_t *dims, int rank, int64_t *bytes) {
  size_t es = tfd_dtype_size(dt);
  if (es == 0 || rank < 0 || rank > TFD_MAX_DIMS) return -1;
  int64_t n = 1;
  for (int i = 0; i < rank; i++)
    if (dims[i] < 0 || __builtin_mul_overflow(n, dims[i], &n)) return -1;
  if (__builtin_mul_overflow(n, (int64_t)es, bytes)) return -1;
  return n;
}

/* Reads and writes every byte, so a buffer smaller than byte_size shows up under ASan. */
static void touch(tfd_tensor *t) {
  size_t n = tfd_tensor_byte_size(t);
  unsigned char *d = tfd_tensor_data(t);
  unsigned sum = 0;
  for (size_t i = 0; i < n; i++) sum += d[i];
  /* Resource handles hold strings, and variant and string elements are references the tensor owns:
   * none takes raw bytes. */
  tfd_dtype dt = tfd_tensor_dtype(t);
  if (dt != TFD_RESOURCE && dt != TFD_VARIANT && dt != TFD_STRING) memset(d, (int)(sum & 1), n);
  for (int64_t i = 0; dt == TFD_STRING && i < tfd_tensor_numel(t); i++) { /* fresh tensors hold empty strings */
    size_t len = 1;
    CHECK(tfd_tensor_string_at(t, i, &len) != NULL && len == 0);
  }
}

static void check_shape(tfd_tensor *t, tfd_dtype dt, const int64_t *dims, int rank, int64_t numel) {
  CHECK(tfd_tensor_dtype(t) == dt);
  CHECK(tfd_tensor_ndims(t) == rank);
  for (int i = 0; i < rank; i++) CHECK(tfd_tensor_dim(t, i) == dims[i]);
  CHECK(tfd_tensor_dim(t, -1) == -1 && tfd_tensor_dim(t, rank) == -1);
  CHECK(tfd_tensor_numel(t) == numel);
  CHECK(tfd_tensor_byte_size(t) == (size_t)numel * tfd_dtype_size(dt));
}

/* Slices and reshapes of a tensor that was made correctly. */
static void exercise(tfd_tensor *t, uint8_t mode, tfd_status *st) {
  int rank = tfd_tensor_ndims(t);
  int64_t numel = tfd_tensor_numel(t);
  size_t es = tfd_dtype_size(tfd_tensor_dtype(t));
  touch(t);

  int64_t d0 = rank > 0 ? tfd_tensor_dim(t, 0) : 0;
  const int64_t indices[] = {0, -1, d0 - 1, d0, INT64_MAX, INT64_MIN, (int64_t)(mode >> 1)};
  for (size_t i = 0; i < sizeof indices / sizeof indices[0]; i++) {
    int64_t ix = indices[i];
    tfd_tensor *s = NULL;
    tfd_tensor_slice(t, ix, &s, st);
    CHECK((s != NULL) == (rank > 0 && ix >= 0 && ix < d0));
    if (!s) continue;
    CHECK(tfd_tensor_ndims(s) == rank - 1);
    CHECK(tfd_tensor_numel(s) * d0 == numel);
    CHECK(tfd_tensor_byte_size(s) == (size_t)tfd_tensor_numel(s) * es);
    CHECK(tfd_tensor_buffer_refcount(t) >= 2);
    if (tfd_tensor_byte_size(s))
      CHECK((const char *)tfd_tensor_const_data(s) ==
            (const char *)tfd_tensor_const_data(t) + (size_t)ix * tfd_tensor_byte_size(s));
    touch(s);
    /* A slice of a slice, while the parent goes first. */
    tfd_tensor *s2 = NULL;
    tfd_tensor_slice(s, 0, &s2, st);
    tfd_tensor_unref(s);
    if (s2) touch(s2);
    tfd_tensor_unref(s2);
  }

  /* Reshapes: flat, flat with a unit dimension, a split of the first
   * dimension, and shapes that cannot fit. */
  int64_t shapes[5][TFD_MAX_DIMS + 1];
  int ranks[5];
  shapes[0][0] = numel, ranks[0] = 1;
  shapes[1][0] = 1, shapes[1][1] = numel, ranks[1] = 2;
  shapes[2][0] = numel + 1, ranks[2] = 1;
  shapes[3][0] = -numel, ranks[3] = 1;
  ranks[4] = (mode >> 1) % (TFD_MAX_DIMS + 2);
  for (int i = 0; i < ranks[4]; i++) shapes[4][i] = i == 0 ? numel : 1;
  for (int k = 0; k < 5; k++) {
    tfd_tensor *v = NULL;
    tfd_tensor_reshape(t, shapes[k], ranks[k], &v, st);
    int64_t bytes, want = expected_numel(tfd_tensor_dtype(t), shapes[k], ranks[k], &bytes);
    CHECK((v != NULL) == (want == numel));
    if (!v) continue;
    check_shape(v, tfd_tensor_dtype(t), shapes[k], ranks[k], numel);
    CHECK(tfd_tensor_const_data(v) == tfd_tensor_const_data(t));
    touch(v);
    tfd_tensor_unref(v);
  }
  CHECK(tfd_tensor_buffer_refcount(t) == 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  reader r = {data, data + size};
  tfd_dtype dt = decode_dtype(u8(&r));
  uint8_t rb = u8(&r);
  int rank = rb == 0xFF ? -1 : rb % 12;
  int64_t dims[16] = {0};
  for (int i = 0; i < rank; i++) dims[i] = decode_dim(&r);
  uint8_t mode = u8(&r);
  const uint8_t *bytes = r.p;
  size_t nbytes = (size_t)(r.end - r.p);

  int64_t want_bytes = 0, want = expected_numel(dt, dims, rank, &want_bytes);
  /* Mode bit 0: give exactly the byte size, repeating or cutting the input. */
  uint8_t *padded = NULL;
  if ((mode & 1) && want >= 0 && (uint64_t)want_bytes <= MAX_PAD) {
    padded = malloc(want_bytes ? (size_t)want_bytes : 1);
    if (!padded) return 0;
    for (size_t i = 0; i < (size_t)want_bytes; i++) padded[i] = nbytes ? bytes[i % nbytes] : 0;
    bytes = padded;
    nbytes = (size_t)want_bytes;
  }

  tfd_status *st = tfd_status_new();
  tfd_allocator *limited = tfd_cpu_allocator_new("fuzz", LIMIT);
  if (!st || !limited) abort();
  for (int which = 0; which < 2; which++) {
    tfd_allocator *a = which ? limited : NULL;
    /* The system allocator is only handed shapes the harness would make anyway. */
    int fits = want >= 0 && want_bytes <= LIMIT;
    int must_succeed = want >= 0 && (which == 0 || want_bytes <= LIMIT - 4096);

    tfd_tensor *t = NULL;
    tfd_tensor_from_bytes(a, dt, dims, rank, bytes, nbytes, &t, st);
    if (t) {
      CHECK(want >= 0 && (size_t)want_bytes == nbytes);
      check_shape(t, dt, dims, rank, want);
      if (dt != TFD_BOOL) CHECK(nbytes == 0 || memcmp(tfd_tensor_const_data(t), bytes, nbytes) == 0);
      else
        for (size_t i = 0; i < nbytes; i++) CHECK(((const uint8_t *)tfd_tensor_const_data(t))[i] == (bytes[i] != 0));
      exercise(t, mode, st);
      tfd_tensor_unref(t);
    } else {
      CHECK(tfd_status_code(st) != 0 && tfd_status_message(st)[0]);
      /* Refusing a well-formed small tensor whose bytes are all there is a bug, resources aside
       * (their handles must hold NUL-terminated strings), and variants and strings (never made from
       * bytes). */
      if (must_succeed && (size_t)want_bytes == nbytes && dt != TFD_RESOURCE && dt != TFD_VARIANT && dt != TFD_STRING)
        CHECK(!"from_bytes refused a valid tensor");
    }
    tfd_status_reset(st);

    if (which == 0 && !fits) continue;
    tfd_tensor_new(a, dt, dims, rank, &t, st);
    if (t) {
      CHECK(want >= 0);
      check_shape(t, dt, dims, rank, want);
      exercise(t, mode, st);
      tfd_tensor_unref(t);
    } else {
      CHECK(tfd_status_code(st) != 0 && tfd_status_message(st)[0]);
      if (must_succeed) CHECK(!"tensor_new refused a valid tensor");
    }
    tfd_status_reset(st);
  }

  /* Every block went back: nothing in use, and no more than the limit was ever in use. */
  tfd_allocator_stats stats;
  tfd_allocator_get_stats(limited, &stats);
  CHECK(stats.bytes_in_use == 0);
  CHECK(stats.peak_bytes_in_use <= LIMIT);
  tfd_allocator_unref(limited);
  tfd_status_free(st);
  free(padded);
  return 0;
}
