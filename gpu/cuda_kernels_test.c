/* The GPU suite's test of the CUDA device math (gpu/kernels/; scripts/test --gpu, ctest label "gpu"):
 * every entry of device_math.h run on a GPU device on random data and checked against the same
 * computation done here on the host with device_math_elem.h's per-element code (and plain loops for
 * products, convolutions, reductions), within bounds per dtype: exact for integers, copies and
 * selections; a few ulps for float elementwise math; sums bounded by their length and magnitude.
 * Edge shapes: 0 elements (nothing queued, NULL pointers accepted), 1 element, walks of 0 dimensions,
 * broadcasts, transposes and reversed strides, split reductions, both top_k paths, asymmetric SAME
 * convolutions, tiny and large products, and, where the device has the memory, more than 2^31
 * elements (the 64-bit index paths). Errors: dtypes an entry does not take are UNIMPLEMENTED naming
 * them. TFDEV_GPU_TEST_QUICK=1 (what scripts/test sets under compute-sanitizer) leaves out the
 * largest cases; TFDEV_GPU_TEST_PROBE=1 only says whether it would run (exit 0) or skip. Exits 77
 * with a SKIP line on a machine without a GPU. */
#include <cuda_runtime_api.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/kernels/index_math.h"
#include "runtime/core/allocator_internal.h"
#include "runtime/core/half.h"
#include "runtime/device/device_internal.h"
#include "runtime/kernels/device_math_elem.h"
#include "runtime/testing/harness.h"

static tfd_backend_info info;
static tfd_factory_registry *reg;
static tfd_device_list *devs;
static tfd_device *gpu;
static const tfd_device_math *m;
static bool quick;

/* ---- setup ---- */
static const char *no_gpu(void) {
  static char why[600];
  tfd_backend_load("cuda", &info, NULL);
  if (!info.loaded || info.num_devices == 0) {
    snprintf(why, sizeof why, "CUDA kernels: no GPU here (%s)", info.why ? info.why : "backend not loaded");
    return why;
  }
  reg = tfd_factory_registry_new();
  tfd_session_options *o = tfd_session_options_new();
  tfd_session_options_set_device_count(o, "GPU", 1, NULL);
  /* Regions as needed rather than all the memory at the first allocation: cuBLAS and cuDNN take
   * their own device memory beside the allocator's. */
  tfd_session_options_set_gpu_allow_growth(o, true);
  devs = tfd_device_list_new();
  tfd_status *st = tfd_status_new();
  if (tfd_backend_register_factories("cuda", reg, st) != TFD_OK ||
      tfd_factory_registry_add_devices(reg, o, TFD_LOCAL_NAME_PREFIX, NULL, devs, st) != TFD_OK ||
      tfd_device_list_size(devs) < 2) {
    /* a GPU the backend found but could not open is a failure, not a reason to skip */
    fprintf(stderr, "FAIL CUDA kernels: could not make a GPU device: %s\n", tfd_status_message(st));
    exit(1);
  }
  tfd_status_free(st);
  tfd_session_options_free(o);
  gpu = tfd_device_list_get(devs, 1);
  m = gpu->math;
  quick = getenv("TFDEV_GPU_TEST_QUICK") != NULL;
  if (getenv("TFDEV_GPU_TEST_PROBE")) exit(0); /* scripts/test asks only whether there is a GPU */
  return NULL;
}

/* ---- device memory (0 bytes asks for 1, so every buffer has an address) ---- */
static void *dnew(size_t bytes) {
  tfd_status *st = tfd_status_new();
  if (bytes == 0) bytes = 1;
  void *p = tfd_allocator_allocate(tfd_device_get_allocator(gpu), 256, bytes, st);
  if (!p) fprintf(stderr, "device allocation of %zu bytes failed: %s\n", bytes, tfd_status_message(st));
  tfd_status_free(st);
  return p;
}

static void dfree(void *p, size_t bytes) {
  if (p) tfd_allocator_deallocate(tfd_device_get_allocator(gpu), p, bytes ? bytes : 1);
}

/* Everything queued on the device is done (its streams, then the whole device for cudaMemcpy's). */
static void drain(void) {
  CHECK_INT(tfd_device_sync(gpu, NULL), TFD_OK);
  CHECK(cudaDeviceSynchronize() == cudaSuccess);
}

static void *up(const void *host, size_t bytes) {
  void *d = dnew(bytes);
  if (d && bytes) CHECK(cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice) == cudaSuccess);
  CHECK(cudaDeviceSynchronize() == cudaSuccess); /* the copy landed before kernels on our stream read it */
  return d;
}

static void down(void *host, const void *d, size_t bytes) {
  drain();
  if (bytes) CHECK(cudaMemcpy(host, d, bytes, cudaMemcpyDeviceToHost) == cudaSuccess);
}

/* Runs an entry and checks it returned OK, printing its message otherwise. */
#define RUN(call)                                                                                       \
  do {                                                                                                  \
    tfd_status *st_ = tfd_status_new();                                                                 \
    tfd_device *d = gpu;                                                                                \
    tfd_code c_ = (call);                                                                               \
    if (c_ != TFD_OK) fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, tfd_status_message(st_)); \
    CHECK_INT(c_, TFD_OK);                                                                              \
    tfd_status_free(st_);                                                                               \
  } while (0)
#define ST st_

/* ---- random data ---- */
static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint64_t next_u64(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}
static double uniform(double lo, double hi) { return lo + (hi - lo) * (double)(next_u64() >> 11) / 9007199254740992.0; }

static void fill_random(void *p, tfd_dtype dt, int64_t n, double lo, double hi) {
  for (int64_t i = 0; i < n; i++) {
    double v = uniform(lo, hi);
    switch (dt) {
      case TFD_FLOAT32: ((float *)p)[i] = (float)v; break;
      case TFD_FLOAT64: ((double *)p)[i] = v; break;
      case TFD_INT32: ((int32_t *)p)[i] = (int32_t)(uint32_t)(int64_t)floor(v); break; /* wraps past 2^31 */
      case TFD_INT64: ((int64_t *)p)[i] = (int64_t)floor(v); break;
      case TFD_UINT8:
      case TFD_BOOL: ((uint8_t *)p)[i] = (uint8_t)((int64_t)floor(v) & (dt == TFD_BOOL ? 1 : 255)); break;
      case TFD_FLOAT16: ((uint16_t *)p)[i] = tfd_float_to_half((float)v); break;
      default: break;
    }
  }
}

static double get(const void *p, tfd_dtype dt, int64_t i) { return tfd_dm_get_f(p, dt, i); }

/* got == want within atol + rtol * |want|; NaN matches NaN, infinities match themselves. */
static bool close_to(double got, double want, double atol, double rtol) {
  if (want != want) return got != got;
  if (isinf(want)) return got == want;
  return fabs(got - want) <= atol + rtol * fabs(want);
}

static double rtol_of(tfd_dtype dt) { return dt == TFD_FLOAT32 ? 1e-5 : dt == TFD_FLOAT64 ? 1e-12 : 0; }
/* Below the normal range results may differ by a subnormal step or two: an absolute floor. */
static double atol_of(tfd_dtype dt) { return dt == TFD_FLOAT32 ? 1e-37 : dt == TFD_FLOAT64 ? 1e-306 : 0; }

/* Counts and reports (the first few) mismatches of got against want over n elements. */
static int compare(const char *what, const void *got, const void *want, tfd_dtype dt, int64_t n, double atol,
                   double rtol) {
  int bad = 0;
  for (int64_t i = 0; i < n; i++) {
    double g = get(got, dt, i), w = get(want, dt, i);
    bool ok = dt == TFD_FLOAT32 || dt == TFD_FLOAT64 || dt == TFD_FLOAT16
                  ? close_to(g, w, atol, rtol)
                  : tfd_dm_get_i(got, dt, i) == tfd_dm_get_i(want, dt, i);
    if (!ok && ++bad <= 5) fprintf(stderr, "  %s: element %lld: got %.9g, want %.9g\n", what, (long long)i, g, w);
  }
  if (bad) fprintf(stderr, "  %s: %d of %lld elements differ\n", what, bad, (long long)n);
  return bad;
}

static size_t esize(tfd_dtype dt) { return tfd_dtype_size(dt); }

/* ---- elementwise ---- */
static void test_unary(void) {
  tfd_dtype floats[] = {TFD_FLOAT32, TFD_FLOAT64};
  int64_t sizes[] = {0, 1, 1000, (1 << 20) + 3};
  for (size_t s = 0; s < 4; s++) {
    int64_t n = sizes[s];
    for (int f = 0; f < 2; f++) {
      tfd_dtype dt = floats[f];
      size_t bytes = (size_t)n * esize(dt);
      void *hx = malloc(bytes + 8), *hy = malloc(bytes + 8), *want = malloc(bytes + 8);
      for (int op = 0; op < TFD_DM_UNARY_COUNT; op++) {
        if (op == TFD_DM_LOGICAL_NOT) continue;
        bool positive = op == TFD_DM_LOG || op == TFD_DM_SQRT || op == TFD_DM_RSQRT;
        fill_random(hx, dt, n, positive ? 0.01 : -20, 20);
        float alpha = 0.2f;
        for (int64_t i = 0; i < n; i++) {
          if (dt == TFD_FLOAT32) ((float *)want)[i] = tfd_dm_unary_f32(op, ((float *)hx)[i], alpha);
          else ((double *)want)[i] = tfd_dm_unary_f64(op, ((double *)hx)[i], (double)alpha);
        }
        void *x = up(hx, bytes), *y = dnew(bytes ? bytes : 1);
        RUN(m->unary(d, (tfd_dm_unary)op, dt, x, y, n, alpha, ST));
        down(hy, y, bytes);
        char what[64];
        snprintf(what, sizeof what, "unary %d %s n=%lld", op, tfd_dtype_name(dt), (long long)n);
        CHECK_INT(compare(what, hy, want, dt, n, atol_of(dt), rtol_of(dt)), 0);
        /* in place */
        RUN(m->unary(d, (tfd_dm_unary)op, dt, x, x, n, alpha, ST));
        down(hy, x, bytes);
        CHECK_INT(compare(what, hy, want, dt, n, atol_of(dt), rtol_of(dt)), 0);
        dfree(x, bytes ? bytes : 1);
        dfree(y, bytes ? bytes : 1);
      }
      free(hx);
      free(hy);
      free(want);
    }
    /* integers: NEG, ABS, SQUARE wrap; bool: LOGICAL_NOT */
    tfd_dtype ints[] = {TFD_INT32, TFD_INT64, TFD_BOOL};
    for (int t = 0; t < 3; t++) {
      tfd_dtype dt = ints[t];
      size_t bytes = (size_t)n * esize(dt);
      void *hx = malloc(bytes + 8), *hy = malloc(bytes + 8), *want = malloc(bytes + 8);
      fill_random(hx, dt, n, dt == TFD_BOOL ? 0 : -3e9, dt == TFD_BOOL ? 2 : 3e9);
      if (n > 1 && dt == TFD_INT32) ((int32_t *)hx)[0] = INT32_MIN;
      if (n > 1 && dt == TFD_INT64) ((int64_t *)hx)[0] = INT64_MIN;
      int ops[] = {TFD_DM_NEG, TFD_DM_ABS, TFD_DM_SQUARE};
      for (int k = 0; k < (dt == TFD_BOOL ? 1 : 3); k++) {
        int op = dt == TFD_BOOL ? TFD_DM_LOGICAL_NOT : ops[k];
        for (int64_t i = 0; i < n; i++) {
          if (dt == TFD_INT32) ((int32_t *)want)[i] = tfd_dm_unary_i32(op, ((int32_t *)hx)[i]);
          else if (dt == TFD_INT64) ((int64_t *)want)[i] = tfd_dm_unary_i64(op, ((int64_t *)hx)[i]);
          else ((uint8_t *)want)[i] = ((uint8_t *)hx)[i] == 0;
        }
        void *x = up(hx, bytes), *y = dnew(bytes ? bytes : 1);
        RUN(m->unary(d, (tfd_dm_unary)op, dt, x, y, n, 0, ST));
        down(hy, y, bytes);
        CHECK_INT(compare("unary (integers, bool)", hy, want, dt, n, 0, 0), 0);
        dfree(x, bytes ? bytes : 1);
        dfree(y, bytes ? bytes : 1);
      }
      free(hx);
      free(hy);
      free(want);
    }
  }
  /* 0 elements: nothing is queued, so NULL pointers are fine */
  RUN(m->unary(d, TFD_DM_EXP, TFD_FLOAT32, NULL, NULL, 0, 0, ST));
}

/* A walk over `dims` (nd) with operand strides and offsets; strides NULL: contiguous. */
static tfd_dm_walk make_walk(int nd, const int64_t *dims, const int64_t *s0, const int64_t *s1, const int64_t *s2,
                             int64_t o0, int64_t o1, int64_t o2) {
  tfd_dm_walk w;
  memset(&w, 0, sizeof w);
  w.nd = nd;
  const int64_t *s[3] = {s0, s1, s2};
  for (int d = 0; d < nd; d++) w.dims[d] = dims[d];
  for (int op = 0; op < 3; op++) {
    int64_t c = 1;
    for (int d = nd - 1; d >= 0; d--) {
      w.strides[op][d] = s[op] ? s[op][d] : c;
      c *= dims[d];
    }
  }
  w.offsets[0] = o0, w.offsets[1] = o1, w.offsets[2] = o2;
  return w;
}

/* The elements an operand spans under w: its largest offset + 1 (operands are laid out from 0). */
static int64_t span_of(const tfd_dm_walk *w, int op) {
  int64_t hi = w->offsets[op];
  for (int d = 0; d < w->nd; d++)
    if (w->strides[op][d] > 0) hi += (w->dims[d] - 1) * w->strides[op][d];
  return hi + 1;
}

static double binary_ref(int op, tfd_dtype dt, const void *a, int64_t ia, const void *b, int64_t ib, void *y, int64_t i,
                         tfd_dtype yt) {
  if (tfd_dm_is_comparison(op)) {
    unsigned char r = 0;
    switch (dt) {
      case TFD_FLOAT32: r = TFD_DM_COMPARE(op, ((const float *)a)[ia], ((const float *)b)[ib]); break;
      case TFD_FLOAT64: r = TFD_DM_COMPARE(op, ((const double *)a)[ia], ((const double *)b)[ib]); break;
      case TFD_INT32: r = TFD_DM_COMPARE(op, ((const int32_t *)a)[ia], ((const int32_t *)b)[ib]); break;
      case TFD_INT64: r = TFD_DM_COMPARE(op, ((const int64_t *)a)[ia], ((const int64_t *)b)[ib]); break;
      default: r = TFD_DM_COMPARE(op, ((const uint8_t *)a)[ia], ((const uint8_t *)b)[ib]); break;
    }
    ((uint8_t *)y)[i] = r;
    return r;
  }
  (void)yt;
  switch (dt) {
    case TFD_FLOAT32: return ((float *)y)[i] = tfd_dm_binary_f32(op, ((const float *)a)[ia], ((const float *)b)[ib]);
    case TFD_FLOAT64: return ((double *)y)[i] = tfd_dm_binary_f64(op, ((const double *)a)[ia], ((const double *)b)[ib]);
    case TFD_INT32: return ((int32_t *)y)[i] = tfd_dm_binary_i32(op, ((const int32_t *)a)[ia], ((const int32_t *)b)[ib]);
    default: return (double)(((int64_t *)y)[i] = tfd_dm_binary_i64(op, ((const int64_t *)a)[ia], ((const int64_t *)b)[ib]));
  }
}

static void run_binary_case(int op, tfd_dtype dt, const tfd_dm_walk *w, const char *shape) {
  tfd_dtype yt = tfd_dm_is_comparison(op) ? TFD_BOOL : dt;
  int64_t n = tfd_dm_walk_count(w), na = span_of(w, 0), nb = span_of(w, 1);
  size_t ab = (size_t)na * esize(dt), bb = (size_t)nb * esize(dt), yb = (size_t)n * esize(yt);
  void *ha = malloc(ab), *hb = malloc(bb), *hy = malloc(yb + 1), *want = malloc(yb + 1);
  bool logic = op == TFD_DM_LOGICAL_AND || op == TFD_DM_LOGICAL_OR;
  double lo = dt == TFD_BOOL ? 0 : logic ? 0 : -50, hi = dt == TFD_BOOL ? 2 : 50;
  fill_random(ha, dt, na, lo, hi);
  fill_random(hb, dt, nb, lo, hi);
  /* no division by zero for integers (the device kernel refuses those on the host) and equal values for comparisons */
  for (int64_t i = 0; i < nb; i++)
    if ((dt == TFD_INT32 || dt == TFD_INT64) && tfd_dm_get_i(hb, dt, i) == 0) tfd_dm_put(hb, dt, i, &(int64_t){3}, TFD_INT64, 0);
  if (na > 2 && nb > 2) memcpy((char *)ha + esize(dt), (char *)hb + esize(dt), esize(dt));
  if (op == TFD_DM_POW && (dt == TFD_FLOAT32 || dt == TFD_FLOAT64)) fill_random(ha, dt, na, 0.1, 4);
  if (op == TFD_DM_POW && (dt == TFD_INT32 || dt == TFD_INT64)) fill_random(hb, dt, nb, 0, 9);
  for (int64_t i = 0; i < n; i++)
    binary_ref(op, dt, ha, tfd_dm_walk_offset(w, 0, i), hb, tfd_dm_walk_offset(w, 1, i), want, i, yt);
  void *a = up(ha, ab), *b = up(hb, bb), *y = dnew(yb ? yb : 1);
  RUN(m->binary(d, (tfd_dm_binary)op, dt, a, b, y, w, ST));
  down(hy, y, yb);
  char what[96];
  snprintf(what, sizeof what, "binary %d %s %s", op, tfd_dtype_name(dt), shape);
  CHECK_INT(compare(what, hy, want, yt, n, atol_of(dt), op == TFD_DM_POW ? 1e-5 : rtol_of(dt) / 10), 0);
  dfree(a, ab);
  dfree(b, bb);
  dfree(y, yb ? yb : 1);
  free(ha);
  free(hb);
  free(hy);
  free(want);
}

static void test_binary(void) {
  int64_t d1[] = {100003}, d2[] = {37, 61}, d3[] = {3, 5, 7};
  int64_t bcast[] = {0}, rows[] = {0, 1}, trans[] = {1, 37}, rev[] = {-1}, r3[] = {35, -7, 1};
  struct {
    const char *name;
    tfd_dm_walk w;
  } walks[] = {
      {"contiguous", make_walk(1, d1, NULL, NULL, NULL, 0, 0, 0)},
      {"scalar b", make_walk(1, d1, NULL, bcast, NULL, 0, 0, 0)},
      {"reversed a", make_walk(1, d1, rev, NULL, NULL, 100002, 0, 0)},
      {"row broadcast", make_walk(2, d2, NULL, rows, NULL, 0, 0, 0)},
      {"transposed a", make_walk(2, d2, trans, NULL, NULL, 0, 0, 0)},
      {"3-d reversed middle", make_walk(3, d3, r3, NULL, NULL, 6 * 7, 0, 0)},
      {"one element (nd 0)", make_walk(0, d1, NULL, NULL, NULL, 3, 1, 0)},
  };
  tfd_dtype dts[] = {TFD_FLOAT32, TFD_FLOAT64, TFD_INT32, TFD_INT64};
  for (size_t k = 0; k < sizeof walks / sizeof walks[0]; k++)
    for (int t = 0; t < 4; t++)
      for (int op = 0; op < TFD_DM_BINARY_COUNT; op++) {
        if (op == TFD_DM_LOGICAL_AND || op == TFD_DM_LOGICAL_OR) continue;
        if (quick && k > 0 && op > TFD_DM_MUL && !tfd_dm_is_comparison(op)) continue;
        run_binary_case(op, dts[t], &walks[k].w, walks[k].name);
      }
  int bool_ops[] = {TFD_DM_EQUAL, TFD_DM_NOT_EQUAL, TFD_DM_LOGICAL_AND, TFD_DM_LOGICAL_OR};
  for (size_t k = 0; k < sizeof walks / sizeof walks[0]; k++)
    for (int i = 0; i < 4; i++) run_binary_case(bool_ops[i], TFD_BOOL, &walks[k].w, walks[k].name);
  /* an empty walk queues nothing */
  int64_t empty[] = {4, 0};
  tfd_dm_walk w = make_walk(2, empty, NULL, NULL, NULL, 0, 0, 0);
  RUN(m->binary(d, TFD_DM_ADD, TFD_FLOAT32, NULL, NULL, NULL, &w, ST));
}

static void test_select(void) {
  int64_t dims[] = {129, 33}, cond_rows[] = {1, 0}, b_scalar[] = {0, 0};
  tfd_dm_walk walks[] = {make_walk(2, dims, NULL, NULL, NULL, 0, 0, 0),
                         make_walk(2, dims, cond_rows, NULL, b_scalar, 0, 0, 0)};
  size_t sizes[] = {1, 2, 4, 8, 3};
  for (int k = 0; k < 2; k++)
    for (int s = 0; s < 5; s++) {
      tfd_dm_walk *w = &walks[k];
      size_t eb = sizes[s];
      int64_t n = tfd_dm_walk_count(w), nc = span_of(w, 0), na = span_of(w, 1), nb = span_of(w, 2);
      uint8_t *hc = malloc((size_t)nc), *ha = malloc((size_t)na * eb), *hb = malloc((size_t)nb * eb);
      uint8_t *hy = malloc((size_t)n * eb), *want = malloc((size_t)n * eb);
      fill_random(hc, TFD_BOOL, nc, 0, 2);
      fill_random(ha, TFD_UINT8, na * (int64_t)eb, 0, 256);
      fill_random(hb, TFD_UINT8, nb * (int64_t)eb, 0, 256);
      for (int64_t i = 0; i < n; i++) {
        int64_t oc = tfd_dm_walk_offset(w, 0, i), oa = tfd_dm_walk_offset(w, 1, i), ob = tfd_dm_walk_offset(w, 2, i);
        memcpy(want + i * (int64_t)eb, hc[oc] ? ha + oa * (int64_t)eb : hb + ob * (int64_t)eb, eb);
      }
      void *c = up(hc, (size_t)nc), *a = up(ha, (size_t)na * eb), *b = up(hb, (size_t)nb * eb), *y = dnew((size_t)n * eb);
      RUN(m->select(d, eb, c, a, b, y, w, ST));
      down(hy, y, (size_t)n * eb);
      CHECK(memcmp(hy, want, (size_t)n * eb) == 0);
      dfree(c, (size_t)nc);
      dfree(a, (size_t)na * eb);
      dfree(b, (size_t)nb * eb);
      dfree(y, (size_t)n * eb);
      free(hc), free(ha), free(hb), free(hy), free(want);
    }
}

static void test_cast(void) {
  tfd_dtype all[] = {TFD_FLOAT32, TFD_FLOAT64, TFD_INT32, TFD_INT64, TFD_BOOL, TFD_UINT8, TFD_FLOAT16};
  double specials[] = {0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 255.5, 256.0, -129.0, 3e9, -3e9, 1e20, -1e20,
                       65504.0, 70000.0, 6e-8, NAN, INFINITY, -INFINITY, 2147483647.0, 2147483648.0};
  int64_t ns = sizeof specials / sizeof specials[0], n = ns + 4000;
  for (int f = 0; f < 7; f++)
    for (int t = 0; t < 7; t++) {
      tfd_dtype from = all[f], to = all[t];
      void *hx = malloc((size_t)n * 8), *hy = malloc((size_t)n * 8), *want = malloc((size_t)n * 8);
      fill_random(hx, from, n, -1e5, 1e5);
      for (int64_t i = 0; i < ns; i++) tfd_dm_put(hx, from, i, &specials[i], TFD_FLOAT64, 0);
      for (int64_t i = 0; i < n; i++) tfd_dm_put(want, to, i, hx, from, i);
      void *x = up(hx, (size_t)n * esize(from)), *y = dnew((size_t)n * esize(to));
      RUN(m->cast(d, from, to, x, y, n, ST));
      down(hy, y, (size_t)n * esize(to));
      char what[64];
      snprintf(what, sizeof what, "cast %s -> %s", tfd_dtype_name(from), tfd_dtype_name(to));
      /* bit-exact but for NaN payloads: compare as values, exactly */
      CHECK_INT(compare(what, hy, want, to, n, 0, 0), 0);
      dfree(x, (size_t)n * esize(from));
      dfree(y, (size_t)n * esize(to));
      free(hx), free(hy), free(want);
    }
}

static void test_add_n(void) {
  tfd_dtype dts[] = {TFD_FLOAT32, TFD_FLOAT64, TFD_INT32, TFD_INT64};
  int counts[] = {1, 2, 5, 16, 17, 40};
  int64_t n = 10007;
  for (int t = 0; t < 4; t++)
    for (int c = 0; c < 6; c++)
      for (int alias = 0; alias < 2; alias++) {
        tfd_dtype dt = dts[t];
        int k = counts[c];
        size_t bytes = (size_t)n * esize(dt);
        void **hin = calloc((size_t)k, sizeof *hin), **din = calloc((size_t)k, sizeof *din);
        void *want = malloc(bytes), *hy = malloc(bytes);
        for (int j = 0; j < k; j++) {
          hin[j] = malloc(bytes);
          fill_random(hin[j], dt, n, -1000, 1000);
          din[j] = up(hin[j], bytes);
        }
        for (int64_t i = 0; i < n; i++) { /* left to right, as the kernel sums */
          double acc = get(hin[0], dt, i);
          int64_t iacc = tfd_dm_get_i(hin[0], dt, i);
          for (int j = 1; j < k; j++) {
            if (dt == TFD_FLOAT32) acc = (float)((float)acc + ((float *)hin[j])[i]);
            else if (dt == TFD_FLOAT64) acc += ((double *)hin[j])[i];
            else iacc = dt == TFD_INT32 ? tfd_dm_binary_i32(TFD_DM_ADD, (int32_t)iacc, ((int32_t *)hin[j])[i])
                                        : tfd_dm_binary_i64(TFD_DM_ADD, iacc, ((int64_t *)hin[j])[i]);
          }
          if (dt == TFD_FLOAT32 || dt == TFD_FLOAT64) tfd_dm_put(want, dt, i, &acc, TFD_FLOAT64, 0);
          else tfd_dm_put(want, dt, i, &iacc, TFD_INT64, 0);
        }
        /* alias: the output is the last input (past the first launch's 16 when k > 16) */
        void *y = alias ? din[k - 1] : dnew(bytes);
        RUN(m->add_n(d, dt, (const void *const *)din, k, y, n, ST));
        down(hy, y, bytes);
        char what[64];
        snprintf(what, sizeof what, "add_n %s x%d%s", tfd_dtype_name(dt), k, alias ? " into an input" : "");
        CHECK_INT(compare(what, hy, want, dt, n, 1e-300, dt == TFD_FLOAT32 ? 1e-6 : 1e-14), 0);
        if (!alias) dfree(y, bytes);
        for (int j = 0; j < k; j++) {
          dfree(din[j], bytes);
          free(hin[j]);
        }
        free(hin), free(din), free(want), free(hy);
      }
}

/* ---- data movement ---- */
static void test_copy_walk(void) {
  int64_t dims[] = {41, 23}, trans[] = {1, 41}, into[] = {46, 1}, rev[] = {-23, -1};
  struct {
    const char *name;
    tfd_dm_walk w;
  } walks[] = {
      {"dense", make_walk(2, dims, NULL, NULL, NULL, 0, 0, 0)},
      {"transpose", make_walk(2, dims, trans, NULL, NULL, 0, 0, 0)},
      {"into columns 5.. of a wider output (concat)", make_walk(2, dims, NULL, into, NULL, 0, 5, 0)},
      {"reversed both axes", make_walk(2, dims, rev, NULL, NULL, 41 * 23 - 1, 0, 0)},
      {"one element", make_walk(0, dims, NULL, NULL, NULL, 7, 2, 0)},
  };
  size_t sizes[] = {1, 2, 4, 8, 16, 3, 12};
  for (size_t k = 0; k < sizeof walks / sizeof walks[0]; k++)
    for (int s = 0; s < 7; s++) {
      tfd_dm_walk *w = &walks[k].w;
      size_t eb = sizes[s];
      int64_t n = tfd_dm_walk_count(w), nx = span_of(w, 0), ny = span_of(w, 1);
      uint8_t *hx = malloc((size_t)nx * eb), *hy = malloc((size_t)ny * eb), *want = malloc((size_t)ny * eb);
      fill_random(hx, TFD_UINT8, nx * (int64_t)eb, 0, 256);
      fill_random(want, TFD_UINT8, ny * (int64_t)eb, 0, 256); /* what the copy must leave alone */
      void *x = up(hx, (size_t)nx * eb), *y = up(want, (size_t)ny * eb);
      for (int64_t i = 0; i < n; i++)
        memcpy(want + tfd_dm_walk_offset(w, 1, i) * (int64_t)eb, hx + tfd_dm_walk_offset(w, 0, i) * (int64_t)eb, eb);
      RUN(m->copy_walk(d, eb, x, y, w, ST));
      down(hy, y, (size_t)ny * eb);
      if (memcmp(hy, want, (size_t)ny * eb) != 0) fprintf(stderr, "  copy_walk %s, %zu-byte elements\n", walks[k].name, eb);
      CHECK(memcmp(hy, want, (size_t)ny * eb) == 0);
      dfree(x, (size_t)nx * eb);
      dfree(y, (size_t)ny * eb);
      free(hx), free(hy), free(want);
    }
}

static void test_fill_range(void) {
  size_t sizes[] = {1, 2, 4, 8, 16, 3};
  int64_t n = 100001;
  for (int s = 0; s < 6; s++)
    for (int zero = 0; zero < 2; zero++) {
      size_t eb = sizes[s];
      uint8_t value[16], *hy = malloc((size_t)n * eb);
      for (size_t k = 0; k < eb; k++) value[k] = zero ? 0 : (uint8_t)(17 * k + 3);
      void *y = dnew((size_t)n * eb);
      RUN(m->fill(d, eb, value, y, n, ST));
      down(hy, y, (size_t)n * eb);
      bool ok = true;
      for (int64_t i = 0; i < n && ok; i++) ok = memcmp(hy + i * (int64_t)eb, value, eb) == 0;
      CHECK(ok);
      dfree(y, (size_t)n * eb);
      free(hy);
    }
  tfd_dtype dts[] = {TFD_FLOAT32, TFD_FLOAT64, TFD_INT32, TFD_INT64};
  for (int t = 0; t < 4; t++) {
    tfd_dtype dt = dts[t];
    double start = dt == TFD_FLOAT32 || dt == TFD_FLOAT64 ? -3.25 : -1000, delta = dt == TFD_FLOAT32 || dt == TFD_FLOAT64 ? 0.125 : 7;
    void *hy = malloc((size_t)n * 8), *want = malloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++) {
      if (dt == TFD_FLOAT32) ((float *)want)[i] = (float)(start + (double)i * delta);
      else if (dt == TFD_FLOAT64) ((double *)want)[i] = start + (double)i * delta;
      else if (dt == TFD_INT32) ((int32_t *)want)[i] = (int32_t)(-1000 + i * 7);
      else ((int64_t *)want)[i] = -1000 + i * 7;
    }
    void *y = dnew((size_t)n * esize(dt));
    RUN(m->range(d, dt, start, delta, y, n, ST));
    down(hy, y, (size_t)n * esize(dt));
    CHECK_INT(compare("range", hy, want, dt, n, 0, 0), 0);
    dfree(y, (size_t)n * esize(dt));
    free(hy), free(want);
  }
}

static int64_t prod(const int64_t *d, int nd) {
  int64_t n = 1;
  for (int i = 0; i < nd; i++) n *= d[i];
  return n;
}

static void test_tile_mirror_pad(void) {
  int64_t in2[] = {3, 5}, out2[] = {7, 10}, in3[] = {2, 3, 4}, out3[] = {4, 3, 8};
  struct {
    int nd;
    const int64_t *in, *out;
  } tiles[] = {{2, in2, out2}, {3, in3, out3}};
  for (int c = 0; c < 2; c++)
    for (int s = 0; s < 3; s++) {
      size_t eb = (size_t)(s == 0 ? 1 : s == 1 ? 4 : 16);
      int nd = tiles[c].nd;
      int64_t nin = prod(tiles[c].in, nd), nout = prod(tiles[c].out, nd);
      uint8_t *hx = malloc((size_t)nin * eb), *hy = malloc((size_t)nout * eb), *want = malloc((size_t)nout * eb);
      fill_random(hx, TFD_UINT8, nin * (int64_t)eb, 0, 256);
      for (int64_t i = 0; i < nout; i++) {
        int64_t r = i, off = 0, stride = 1;
        for (int dd = nd - 1; dd >= 0; dd--) {
          off += (r % tiles[c].out[dd] % tiles[c].in[dd]) * stride;
          r /= tiles[c].out[dd];
          stride *= tiles[c].in[dd];
        }
        memcpy(want + i * (int64_t)eb, hx + off * (int64_t)eb, eb);
      }
      void *x = up(hx, (size_t)nin * eb), *y = dnew((size_t)nout * eb);
      RUN(m->tile(d, eb, x, tiles[c].in, tiles[c].out, nd, y, ST));
      down(hy, y, (size_t)nout * eb);
      CHECK(memcmp(hy, want, (size_t)nout * eb) == 0);
      dfree(x, (size_t)nin * eb);
      dfree(y, (size_t)nout * eb);
      free(hx), free(hy), free(want);
    }
  /* MirrorPad [3, 4]: REFLECT pads up to size - 1 on each side, SYMMETRIC up to size */
  int64_t in[] = {3, 4};
  for (int sym = 0; sym < 2; sym++) {
    int64_t b[2] = {2, 3}, a[2] = {sym ? 3 : 2, sym ? 4 : 3};
    int64_t out[2] = {in[0] + b[0] + a[0], in[1] + b[1] + a[1]};
    float hx[12], hy[128], want[128];
    for (int i = 0; i < 12; i++) hx[i] = (float)i;
    for (int64_t i = 0; i < out[0]; i++)
      for (int64_t j = 0; j < out[1]; j++) {
        int64_t pi = i - b[0], pj = j - b[1];
        int64_t si = pi < 0 ? (sym ? -pi - 1 : -pi) : pi >= in[0] ? (sym ? 2 * in[0] - 1 - pi : 2 * in[0] - 2 - pi) : pi;
        int64_t sj = pj < 0 ? (sym ? -pj - 1 : -pj) : pj >= in[1] ? (sym ? 2 * in[1] - 1 - pj : 2 * in[1] - 2 - pj) : pj;
        want[i * out[1] + j] = hx[si * in[1] + sj];
      }
    size_t yb = (size_t)(out[0] * out[1]) * 4;
    void *x = up(hx, sizeof hx), *y = dnew(yb);
    RUN(m->mirror_pad(d, 4, x, in, 2, b, sym, y, out, ST));
    down(hy, y, yb);
    CHECK(memcmp(hy, want, yb) == 0);
    dfree(x, sizeof hx);
    dfree(y, yb);
  }
}

static void test_gather(void) {
  size_t inner_sizes[] = {4, 12, 16, 3, 1024};
  for (int is = 0; is < 5; is++)
    for (int it = 0; it < 2; it++) {
      tfd_dtype idt = it ? TFD_INT64 : TFD_INT32;
      int64_t batches = 2, outer = 3, limit = 50, per = 17;
      size_t inner = inner_sizes[is];
      int64_t xrows = batches * outer * limit, yrows = batches * outer * per, nidx = batches * per;
      uint8_t *hx = malloc((size_t)xrows * inner), *hy = malloc((size_t)yrows * inner), *want = malloc((size_t)yrows * inner);
      int64_t *idx = malloc((size_t)nidx * 8);
      fill_random(hx, TFD_UINT8, xrows * (int64_t)inner, 0, 256);
      for (int64_t i = 0; i < nidx; i++) idx[i] = (int64_t)uniform(-3, (double)limit + 3); /* some out of range */
      void *hidx = malloc((size_t)nidx * 8);
      for (int64_t i = 0; i < nidx; i++) tfd_dm_put(hidx, idt, i, &idx[i], TFD_INT64, 0);
      for (int64_t b = 0; b < batches; b++)
        for (int64_t r = 0; r < outer; r++)
          for (int64_t i = 0; i < per; i++) {
            int64_t k = idx[b * per + i];
            uint8_t *dst = want + ((b * outer + r) * per + i) * (int64_t)inner;
            if (k < 0 || k >= limit) memset(dst, 0, inner);
            else memcpy(dst, hx + ((b * outer + r) * limit + k) * (int64_t)inner, inner);
          }
      void *x = up(hx, (size_t)xrows * inner), *di = up(hidx, (size_t)nidx * esize(idt)), *y = dnew((size_t)yrows * inner);
      RUN(m->gather(d, x, di, idt, batches, outer, limit, per, inner, y, ST));
      down(hy, y, (size_t)yrows * inner);
      CHECK(memcmp(hy, want, (size_t)yrows * inner) == 0);
      dfree(x, (size_t)xrows * inner);
      dfree(di, (size_t)nidx * esize(idt));
      dfree(y, (size_t)yrows * inner);
      free(hx), free(hy), free(want), free(idx), free(hidx);
    }
  /* GatherNd: params [4, 5, 6] floats, indices of depth 1, 2 and 3 */
  int64_t xd[] = {4, 5, 6};
  float hx[120];
  for (int i = 0; i < 120; i++) hx[i] = (float)i + 0.5f;
  void *x = up(hx, sizeof hx);
  for (int depth = 1; depth <= 3; depth++) {
    int64_t count = 9, slice = depth == 1 ? 30 : depth == 2 ? 6 : 1;
    int64_t hidx[27];
    float hy[9 * 30], want[9 * 30];
    for (int64_t r = 0; r < count; r++) {
      int64_t off = 0;
      bool inside = true;
      for (int j = 0; j < depth; j++) {
        int64_t k = (int64_t)uniform(-1, (double)xd[j] + 1);
        hidx[r * depth + j] = k;
        inside = inside && k >= 0 && k < xd[j];
        off = off * xd[j] + k;
      }
      for (int64_t e = 0; e < slice; e++) want[r * slice + e] = inside ? hx[off * slice + e] : 0.0f;
    }
    void *di = up(hidx, (size_t)(count * depth) * 8), *y = dnew((size_t)(count * slice) * 4);
    RUN(m->gather_nd(d, x, xd, 3, di, TFD_INT64, count, depth, (size_t)slice * 4, y, ST));
    down(hy, y, (size_t)(count * slice) * 4);
    CHECK(memcmp(hy, want, (size_t)(count * slice) * 4) == 0);
    dfree(di, (size_t)(count * depth) * 8);
    dfree(y, (size_t)(count * slice) * 4);
  }
  dfree(x, sizeof hx);
}

/* ---- reductions ---- */
static void reduce_ref(int op, tfd_dtype dt, const void *x, int64_t outer, int64_t n, int64_t inner, void *want,
                       double *bound) {
  for (int64_t o = 0; o < outer; o++)
    for (int64_t q = 0; q < inner; q++) {
      double acc = op == TFD_DM_PROD ? 1 : op == TFD_DM_MAX ? -INFINITY : op == TFD_DM_MIN ? INFINITY : 0, mag = 0;
      int64_t iacc = op == TFD_DM_PROD ? 1 : op == TFD_DM_MAX ? (dt == TFD_INT32 ? INT32_MIN : INT64_MIN)
                     : op == TFD_DM_MIN ? (dt == TFD_INT32 ? INT32_MAX : INT64_MAX) : 0;
      for (int64_t i = 0; i < n; i++) {
        int64_t at = (o * n + i) * inner + q;
        if (dt == TFD_FLOAT32 || dt == TFD_FLOAT64) {
          double v = get(x, dt, at);
          if (i == 0 && v != v && (op == TFD_DM_MAX || op == TFD_DM_MIN)) {
            acc = v;
            break;
          }
          if (op == TFD_DM_MAX) acc = v > acc ? v : acc;
          else if (op == TFD_DM_MIN) acc = v < acc ? v : acc;
          else if (op == TFD_DM_PROD) acc *= v;
          else acc += v;
          mag += fabs(v);
        } else {
          int64_t v = tfd_dm_get_i(x, dt, at);
          if (op == TFD_DM_MAX) iacc = v > iacc ? v : iacc;
          else if (op == TFD_DM_MIN) iacc = v < iacc ? v : iacc;
          else if (op == TFD_DM_PROD) iacc = (int64_t)((uint64_t)iacc * (uint64_t)v);
          else iacc = (int64_t)((uint64_t)iacc + (uint64_t)v);
        }
      }
      if (op == TFD_DM_MEAN) acc /= (double)n, mag /= n > 0 ? (double)n : 1;
      int64_t at = o * inner + q;
      if (dt == TFD_FLOAT32 || dt == TFD_FLOAT64) tfd_dm_put(want, dt, at, &acc, TFD_FLOAT64, 0);
      else tfd_dm_put(want, dt, at, &iacc, TFD_INT64, 0); /* int32 wraps modulo 2^32 as the kernel's */
      bound[at] = mag;
    }
}

static void run_reduce_case(int op, tfd_dtype dt, int64_t outer, int64_t n, int64_t inner, bool nan_first,
                            bool nan_later) {
  int64_t nx = outer * n * inner, ny = outer * inner;
  size_t xb = (size_t)nx * esize(dt), yb = (size_t)ny * esize(dt);
  void *hx = malloc(xb + 8), *hy = malloc(yb + 8), *want = malloc(yb + 8);
  double *bound = malloc((size_t)(ny + 1) * sizeof *bound);
  bool prod = op == TFD_DM_PROD;
  fill_random(hx, dt, nx, prod ? 0.5 : -100, prod ? 1.5 : 100);
  if (nan_first && n > 0)
    for (int64_t o = 0; o < outer; o++) tfd_dm_put(hx, dt, o * n * inner, &(double){NAN}, TFD_FLOAT64, 0);
  if (nan_later && n > 2)
    for (int64_t o = 0; o < outer; o++) tfd_dm_put(hx, dt, (o * n + n / 2) * inner, &(double){NAN}, TFD_FLOAT64, 0);
  reduce_ref(op, dt, hx, outer, n, inner, want, bound);
  void *x = up(hx, xb), *y = dnew(yb);
  RUN(m->reduce(d, (tfd_dm_reduce)op, dt, x, outer, n, inner, y, ST));
  down(hy, y, yb);
  int bad = 0;
  double eps = dt == TFD_FLOAT32 ? 1.2e-7 : 2.3e-16;
  for (int64_t i = 0; i < ny; i++) {
    double g = get(hy, dt, i), w = get(want, dt, i);
    bool ok;
    if (dt == TFD_INT32 || dt == TFD_INT64) ok = tfd_dm_get_i(hy, dt, i) == tfd_dm_get_i(want, dt, i);
    else if (op == TFD_DM_MAX || op == TFD_DM_MIN) ok = close_to(g, w, 0, 0);
    else if (prod) ok = close_to(g, w, 0, 4 * eps * (double)(n + 1));
    else /* the result's rounding, and the sum's in any order (accumulated in double either way) */
      ok = close_to(g, w, 2 * 2.3e-16 * (double)(n + 1) * bound[i] + atol_of(dt), 2 * eps);
    if (!ok && ++bad <= 5)
      fprintf(stderr, "  reduce %d %s [%lld, %lld, %lld] at %lld: got %.10g, want %.10g\n", op, tfd_dtype_name(dt),
              (long long)outer, (long long)n, (long long)inner, (long long)i, g, w);
  }
  CHECK_INT(bad, 0);
  dfree(x, xb);
  dfree(y, yb);
  free(hx), free(hy), free(want), free(bound);
}

static void test_reduce(void) {
  int64_t shapes[][3] = {{1, 1, 1}, {3, 0, 2}, {7, 1000, 1}, {1, 3000000, 1}, {4, 333, 3},
                         {2, 129, 1000}, {1, 100000, 5}, {1000, 17, 1}, {5, 1, 7}, {1, 70000, 64}};
  tfd_dtype dts[] = {TFD_FLOAT32, TFD_FLOAT64, TFD_INT32, TFD_INT64};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
    for (int t = 0; t < 4; t++)
      for (int op = 0; op < TFD_DM_REDUCE_COUNT; op++) {
        if (op == TFD_DM_MEAN && (dts[t] == TFD_INT32 || dts[t] == TFD_INT64)) continue;
        if (op == TFD_DM_PROD && shapes[s][1] > 1000 && (dts[t] == TFD_FLOAT32 || dts[t] == TFD_FLOAT64)) continue;
        run_reduce_case(op, dts[t], shapes[s][0], shapes[s][1], shapes[s][2], false, false);
      }
  /* NaN, as the CPU's sequential loop: a NaN first element wins Max/Min, a later one never does */
  for (int op = TFD_DM_MAX; op <= TFD_DM_MIN; op++) {
    run_reduce_case(op, TFD_FLOAT32, 3, 1000, 1, true, false);
    run_reduce_case(op, TFD_FLOAT32, 3, 1000, 1, false, true);
    run_reduce_case(op, TFD_FLOAT64, 1, 2000000, 1, true, true);
    run_reduce_case(op, TFD_FLOAT64, 1, 2000000, 1, false, true);
  }
  run_reduce_case(TFD_DM_SUM, TFD_FLOAT32, 2, 5000, 3, false, true); /* sums propagate NaN */
  RUN(m->reduce(d, TFD_DM_SUM, TFD_FLOAT32, NULL, 0, 5, 3, NULL, ST));
}

static void run_arg_case(bool is_min, tfd_dtype dt, tfd_dtype out, int64_t outer, int64_t n, int64_t inner, int nan) {
  int64_t nx = outer * n * inner, ny = outer * inner;
  size_t xb = (size_t)nx * esize(dt);
  void *hx = malloc(xb), *hy = malloc((size_t)ny * 8), *want = malloc((size_t)ny * 8);
  fill_random(hx, dt, nx, -20, 20); /* few distinct integers: many ties */
  for (int64_t o = 0; o < outer && nan; o++)
    for (int64_t q = 0; q < inner; q++)
      tfd_dm_put(hx, dt, (o * n + (nan == 1 ? 0 : n / 3)) * inner + q, &(double){NAN}, TFD_FLOAT64, 0);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t q = 0; q < inner; q++) {
      int64_t best = 0;
      for (int64_t i = 1; i < n; i++) { /* k_gather.c's loop */
        double v = get(hx, dt, (o * n + i) * inner + q), b = get(hx, dt, (o * n + best) * inner + q);
        if (dt == TFD_INT64) {
          int64_t vi = tfd_dm_get_i(hx, dt, (o * n + i) * inner + q), bi = tfd_dm_get_i(hx, dt, (o * n + best) * inner + q);
          if (is_min ? vi < bi : vi > bi) best = i;
        } else if (is_min ? v < b : v > b) {
          best = i;
        }
      }
      tfd_dm_put(want, out, o * inner + q, &best, TFD_INT64, 0);
    }
  void *x = up(hx, xb), *y = dnew((size_t)ny * esize(out));
  RUN(m->arg_reduce(d, is_min, dt, x, outer, n, inner, out, y, ST));
  down(hy, y, (size_t)ny * esize(out));
  char what[80];
  snprintf(what, sizeof what, "arg_reduce %s %s [%lld, %lld, %lld]", is_min ? "min" : "max", tfd_dtype_name(dt),
           (long long)outer, (long long)n, (long long)inner);
  CHECK_INT(compare(what, hy, want, out, ny, 0, 0), 0);
  dfree(x, xb);
  dfree(y, (size_t)ny * esize(out));
  free(hx), free(hy), free(want);
}

static void test_arg_reduce(void) {
  int64_t shapes[][3] = {{1, 1, 1}, {5, 1000, 1}, {1, 4000000, 1}, {3, 77, 5}, {2, 300, 100}, {1, 200000, 2}};
  tfd_dtype dts[] = {TFD_FLOAT32, TFD_FLOAT64, TFD_INT32, TFD_INT64};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
    for (int t = 0; t < 4; t++)
      for (int is_min = 0; is_min < 2; is_min++)
        run_arg_case(is_min, dts[t], t % 2 ? TFD_INT64 : TFD_INT32, shapes[s][0], shapes[s][1], shapes[s][2], 0);
  for (int nan = 1; nan <= 2; nan++) {
    run_arg_case(false, TFD_FLOAT32, TFD_INT64, 4, 1000, 3, nan);
    run_arg_case(true, TFD_FLOAT64, TFD_INT32, 1, 3000000, 1, nan);
  }
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* LowerBound/UpperBound: sorted rows of few distinct values (ties), values past both ends. */
static void run_search_case(bool upper, tfd_dtype dt, tfd_dtype out, int64_t rows, int64_t n, int64_t mv) {
  size_t es = esize(dt);
  double *row = malloc((size_t)(n > 0 ? n : 1) * sizeof *row);
  void *hs = malloc((size_t)(rows * n + 1) * es), *hv = malloc((size_t)(rows * mv + 1) * es);
  void *hy = malloc((size_t)(rows * mv + 1) * 8), *want = malloc((size_t)(rows * mv + 1) * 8);
  fill_random(hv, dt, rows * mv, -25, 25);
  for (int64_t r = 0; r < rows; r++) {
    for (int64_t j = 0; j < n; j++) row[j] = (double)(int64_t)uniform(-20, 20);
    qsort(row, (size_t)n, sizeof *row, cmp_double);
    for (int64_t j = 0; j < n; j++) tfd_dm_put(hs, dt, r * n + j, &row[j], TFD_FLOAT64, 0);
    for (int64_t j = 0; j < mv; j++) {
      double x = get(hv, dt, r * mv + j);
      int64_t lo = 0, hi = n;
      while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        double e = get(hs, dt, r * n + mid);
        if (upper ? !(x < e) : e < x) lo = mid + 1;
        else hi = mid;
      }
      tfd_dm_put(want, out, r * mv + j, &lo, TFD_INT64, 0);
    }
  }
  void *s = up(hs, (size_t)(rows * n + 1) * es), *v = up(hv, (size_t)(rows * mv + 1) * es);
  void *y = dnew((size_t)(rows * mv + 1) * esize(out));
  RUN(m->search_sorted(d, upper, dt, s, v, rows, n, mv, out, y, ST));
  down(hy, y, (size_t)(rows * mv + 1) * esize(out));
  char what[80];
  snprintf(what, sizeof what, "search_sorted %s %s [%lld, %lld] x %lld", upper ? "upper" : "lower", tfd_dtype_name(dt),
           (long long)rows, (long long)n, (long long)mv);
  CHECK_INT(compare(what, hy, want, out, rows * mv, 0, 0), 0);
  dfree(s, (size_t)(rows * n + 1) * es);
  dfree(v, (size_t)(rows * mv + 1) * es);
  dfree(y, (size_t)(rows * mv + 1) * esize(out));
  free(row), free(hs), free(hv), free(hy), free(want);
}

static void test_search_sorted(void) {
  int64_t shapes[][3] = {{1, 1, 1}, {3, 0, 4}, {2, 1000, 5000}, {100, 7, 33}, {1, 100000, 1000}};
  tfd_dtype dts[] = {TFD_FLOAT32, TFD_FLOAT64, TFD_INT64};
  for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++)
    for (int t = 0; t < 3; t++)
      for (int upper = 0; upper < 2; upper++)
        run_search_case(upper, dts[t], t % 2 ? TFD_INT64 : TFD_INT32, shapes[sh][0], shapes[sh][1], shapes[sh][2]);
}

/* Dilation2D (filter) and MaxPoolWithArgmax (argmax) against k_dilation.c's loop on the host. */
static void run_window_case(bool dilation, int64_t n, int64_t h, int64_t w, int64_t ch, int64_t kh, int64_t kw, int64_t s,
                            int64_t r, int64_t pad) {
  int64_t oh = (h + 2 * pad - ((kh - 1) * r + 1)) / s + 1, ow = (w + 2 * pad - ((kw - 1) * r + 1)) / s + 1;
  int64_t nx = n * h * w * ch, nf = kh * kw * ch, ny = n * oh * ow * ch;
  float *hx = malloc((size_t)nx * 4), *hf = malloc((size_t)(nf + 1) * 4), *hy = malloc((size_t)ny * 4);
  float *want = malloc((size_t)ny * 4);
  int64_t *ha = malloc((size_t)ny * 8), *wa = malloc((size_t)ny * 8);
  for (int64_t i = 0; i < nx; i++) hx[i] = (float)(int64_t)uniform(-8, 8); /* ties */
  for (int64_t i = 0; i < nf; i++) hf[i] = (float)uniform(-2, 2);
  for (int64_t b = 0; b < n; b++)
    for (int64_t oy = 0; oy < oh; oy++)
      for (int64_t ox = 0; ox < ow; ox++)
        for (int64_t c = 0; c < ch; c++) {
          float best = -FLT_MAX;
          int64_t where = -1;
          for (int64_t i = 0; i < kh; i++)
            for (int64_t j = 0; j < kw; j++) {
              int64_t iy = oy * s - pad + i * r, ix = ox * s - pad + j * r;
              if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
              int64_t flat = ((b * h + iy) * w + ix) * ch + c;
              float v = hx[flat];
              if (dilation) {
                v += hf[(i * kw + j) * ch + c];
                if (v > best) best = v;
              } else if (where < 0 || v > best) {
                best = v, where = flat - b * h * w * ch;
              }
            }
          int64_t at = ((b * oh + oy) * ow + ox) * ch + c;
          want[at] = best, wa[at] = where;
        }
  void *x = up(hx, (size_t)nx * 4), *f = up(hf, (size_t)(nf + 1) * 4), *y = dnew((size_t)ny * 4), *a = dnew((size_t)ny * 8);
  tfd_dm_window_max q = {.dtype = TFD_FLOAT32, .x = x, .filter = dilation ? f : NULL, .y = y, .argmax = dilation ? NULL : a,
                         .n = n, .h = h, .w = w, .c = ch, .kh = kh, .kw = kw, .oh = oh, .ow = ow, .stride = {s, s},
                         .rate = {r, r}, .pad_before = {pad, pad}};
  RUN(m->window_max(d, &q, ST));
  down(hy, y, (size_t)ny * 4);
  CHECK_INT(compare(dilation ? "window_max dilation" : "window_max argmax", hy, want, TFD_FLOAT32, ny, 0, 0), 0);
  if (!dilation) {
    down(ha, a, (size_t)ny * 8);
    CHECK_INT(compare("window_max argmax indices", ha, wa, TFD_INT64, ny, 0, 0), 0);
  }
  dfree(x, (size_t)nx * 4), dfree(f, (size_t)(nf + 1) * 4), dfree(y, (size_t)ny * 4), dfree(a, (size_t)ny * 8);
  free(hx), free(hf), free(hy), free(want), free(ha), free(wa);
}

static void test_window_max(void) {
  for (int dil = 0; dil < 2; dil++) {
    run_window_case(dil, 2, 9, 11, 5, 3, 3, 1, 1, 1);
    run_window_case(dil, 1, 64, 64, 32, 2, 3, 2, 1, 0);
    if (dil) run_window_case(dil, 3, 20, 17, 4, 3, 2, 1, 2, 2);
  }
}

/* CropAndResize against k_crop_and_resize.c's loop on the host (float32 image; bilinear and nearest). */
static void run_crop_case(bool nearest, int64_t ch, int64_t cw) {
  const int64_t batch = 2, h = 13, w = 11, depth = 3, n = 4;
  const float boxes[16] = {0, 0, 1, 1, 0.2f, 0.9f, 0.7f, 0.1f, -0.3f, 0.1f, 1.4f, 0.6f, 0.5f, 0.5f, 0.5f, 0.5f};
  const int32_t ind[4] = {1, 0, 1, 0};
  int64_t nx = batch * h * w * depth, ny = n * ch * cw * depth;
  float *hx = malloc((size_t)nx * 4), *hy = malloc((size_t)ny * 4), *want = malloc((size_t)ny * 4);
  fill_random(hx, TFD_FLOAT32, nx, -5, 5);
  for (int64_t b = 0; b < n; b++)
    for (int64_t y = 0; y < ch; y++)
      for (int64_t x = 0; x < cw; x++)
        for (int64_t dd = 0; dd < depth; dd++) {
          const float y1 = boxes[b * 4], x1 = boxes[b * 4 + 1], y2 = boxes[b * 4 + 2], x2 = boxes[b * 4 + 3];
          const float hs = ch > 1 ? (y2 - y1) * (float)(h - 1) / (float)(ch - 1) : 0;
          const float ws = cw > 1 ? (x2 - x1) * (float)(w - 1) / (float)(cw - 1) : 0;
          const float in_y = ch > 1 ? y1 * (float)(h - 1) + (float)y * hs : 0.5f * (y1 + y2) * (float)(h - 1);
          const float in_x = cw > 1 ? x1 * (float)(w - 1) + (float)x * ws : 0.5f * (x1 + x2) * (float)(w - 1);
          const int64_t base = ind[b] * h * w * depth;
          float v = -1.5f;
          if (!(in_y < 0 || in_y > (float)(h - 1) || in_x < 0 || in_x > (float)(w - 1))) {
            if (nearest) {
              v = hx[base + ((int64_t)roundf(in_y) * w + (int64_t)roundf(in_x)) * depth + dd];
            } else {
              int64_t t = (int64_t)floorf(in_y), bo = (int64_t)ceilf(in_y), l = (int64_t)floorf(in_x), r = (int64_t)ceilf(in_x);
              float yl = in_y - (float)t, xl = in_x - (float)l;
              float tl = hx[base + (t * w + l) * depth + dd], tr = hx[base + (t * w + r) * depth + dd];
              float bl = hx[base + (bo * w + l) * depth + dd], br = hx[base + (bo * w + r) * depth + dd];
              float top = tl + (tr - tl) * xl, bottom = bl + (br - bl) * xl;
              v = top + (bottom - top) * yl;
            }
          }
          want[((b * ch + y) * cw + x) * depth + dd] = v;
        }
  void *x = up(hx, (size_t)nx * 4), *bx = up(boxes, sizeof boxes), *bi = up(ind, sizeof ind), *y = dnew((size_t)ny * 4);
  tfd_dm_crop q = {.dtype = TFD_FLOAT32, .image = x, .boxes = bx, .box_ind = bi, .y = y, .n = n, .h = h, .w = w,
                   .depth = depth, .crop_h = ch, .crop_w = cw, .nearest = nearest, .extrapolation = -1.5f};
  RUN(m->crop_and_resize(d, &q, ST));
  down(hy, y, (size_t)ny * 4);
  CHECK_INT(compare(nearest ? "crop_and_resize nearest" : "crop_and_resize bilinear", hy, want, TFD_FLOAT32, ny, 1e-6, 1e-5), 0);
  dfree(x, (size_t)nx * 4), dfree(bx, sizeof boxes), dfree(bi, sizeof ind), dfree(y, (size_t)ny * 4);
  free(hx), free(hy), free(want);
}

static void test_crop_and_resize(void) {
  for (int nearest = 0; nearest < 2; nearest++) {
    run_crop_case(nearest, 7, 5);
    run_crop_case(nearest, 1, 1);
    run_crop_case(nearest, 1, 9);
  }
}

/* Multinomial against k_random_ext.c's loop on the host (a draw could move only where CUDA's exp and
 * glibc's differ in the last bit right at a class boundary). */
static void test_multinomial(void) {
  const int64_t rows = 5, classes = 37, samples = 2000;
  float *hl = malloc((size_t)(rows * classes) * 4);
  int64_t *hy = malloc((size_t)(rows * samples) * 8), *want = malloc((size_t)(rows * samples) * 8);
  fill_random(hl, TFD_FLOAT32, rows * classes, -4, 4);
  hl[3] = -INFINITY, hl[40] = NAN;
  for (int64_t r = 0; r < rows; r++) {
    double mx = -INFINITY, run = 0, cdf[37];
    for (int64_t j = 0; j < classes; j++)
      if (isfinite(hl[r * classes + j]) && hl[r * classes + j] > mx) mx = hl[r * classes + j];
    for (int64_t j = 0; j < classes; j++) {
      if (isfinite(hl[r * classes + j])) run += exp(hl[r * classes + j] - mx);
      cdf[j] = run;
    }
    for (int64_t s = 0; s < samples; s++) {
      double u = tfd_dm_unit(tfd_dm_element_seed(42, 1000, r * samples + s), 0) * run;
      int64_t pick = classes - 1;
      for (int64_t j = 0; j < classes; j++)
        if (cdf[j] > u) {
          pick = j;
          break;
        }
      want[r * samples + s] = pick;
    }
  }
  void *l = up(hl, (size_t)(rows * classes) * 4), *y = dnew((size_t)(rows * samples) * 8);
  RUN(m->multinomial(d, TFD_FLOAT32, l, rows, classes, samples, 42, 1000, TFD_INT64, y, ST));
  down(hy, y, (size_t)(rows * samples) * 8);
  CHECK_INT(compare("multinomial", hy, want, TFD_INT64, rows * samples, 0, 0), 0);
  dfree(l, (size_t)(rows * classes) * 4), dfree(y, (size_t)(rows * samples) * 8);
  free(hl), free(hy), free(want);
}

static void test_softmax(void) {
  int64_t shapes[][2] = {{1, 1}, {5, 10}, {3, 1000}, {1, 1024}, {2, 5000}, {1000, 7}, {4, 100000}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
    for (int f = 0; f < 2; f++)
      for (int lg = 0; lg < 2; lg++) {
        tfd_dtype dt = f ? TFD_FLOAT64 : TFD_FLOAT32;
        int64_t rows = shapes[s][0], cols = shapes[s][1], n = rows * cols;
        size_t bytes = (size_t)n * esize(dt);
        void *hx = malloc(bytes), *hy = malloc(bytes), *want = malloc(bytes);
        fill_random(hx, dt, n, -30, 30);
        for (int64_t r = 0; r < rows; r++) {
          double mx = -INFINITY, sum = 0;
          for (int64_t c = 0; c < cols; c++) mx = fmax(mx, get(hx, dt, r * cols + c));
          for (int64_t c = 0; c < cols; c++) sum += exp(get(hx, dt, r * cols + c) - mx);
          for (int64_t c = 0; c < cols; c++) {
            double v = get(hx, dt, r * cols + c) - mx;
            double o = lg ? v - log(sum) : exp(v) / sum;
            tfd_dm_put(want, dt, r * cols + c, &o, TFD_FLOAT64, 0);
          }
        }
        void *x = up(hx, bytes), *y = dnew(bytes);
        RUN(m->softmax(d, dt, x, rows, cols, lg, y, ST));
        down(hy, y, bytes);
        char what[64];
        snprintf(what, sizeof what, "%ssoftmax %s [%lld, %lld]", lg ? "log" : "", tfd_dtype_name(dt), (long long)rows,
                 (long long)cols);
        double rt = dt == TFD_FLOAT32 ? 2e-5 : 1e-12;
        CHECK_INT(compare(what, hy, want, dt, n, lg ? rt * 30 : 1e-30, rt), 0);
        dfree(x, bytes);
        dfree(y, bytes);
        free(hx), free(hy), free(want);
      }
}

/* TopKV2's order over the indices of one row (tfd_topk_before_*, k_gather.c's comparator). */
static tfd_dtype topk_dt;
static const void *topk_row;
static int topk_cmp(const void *pa, const void *pb) {
  int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
  if (a == b) return 0;
  bool first = topk_dt == TFD_INT32 || topk_dt == TFD_INT64
                   ? tfd_topk_before_i(tfd_dm_get_i(topk_row, topk_dt, a), a, tfd_dm_get_i(topk_row, topk_dt, b), b)
                   : tfd_topk_before_f(get(topk_row, topk_dt, a), a, get(topk_row, topk_dt, b), b);
  return first ? -1 : 1;
}

static void run_top_k_case(tfd_dtype dt, tfd_dtype it, int64_t rows, int64_t cols, int64_t k, bool ties, bool nans) {
  size_t eb = esize(dt);
  int64_t nx = rows * cols, ny = rows * k;
  void *hx = malloc((size_t)nx * eb), *hv = malloc((size_t)ny * eb + 8), *hi = malloc((size_t)ny * 8 + 8);
  void *wv = malloc((size_t)ny * eb + 8), *wi = malloc((size_t)ny * 8 + 8);
  int64_t *order = malloc((size_t)cols * sizeof *order);
  fill_random(hx, dt, nx, ties ? -4 : -1e6, ties ? 4 : 1e6);
  if (ties && (dt == TFD_FLOAT32 || dt == TFD_FLOAT64)) /* a few distinct values */
    for (int64_t i = 0; i < nx; i++) {
      double v = floor(get(hx, dt, i));
      tfd_dm_put(hx, dt, i, &v, TFD_FLOAT64, 0);
    }
  if (nans && (dt == TFD_FLOAT32 || dt == TFD_FLOAT64))
    for (int64_t i = 3; i < nx; i += 97) tfd_dm_put(hx, dt, i, &(double){NAN}, TFD_FLOAT64, 0);
  topk_dt = dt;
  for (int64_t r = 0; r < rows; r++) {
    topk_row = (const char *)hx + r * cols * (int64_t)eb;
    for (int64_t j = 0; j < cols; j++) order[j] = j;
    qsort(order, (size_t)cols, sizeof *order, topk_cmp);
    for (int64_t j = 0; j < k; j++) {
      memcpy((char *)wv + (r * k + j) * (int64_t)eb, (const char *)topk_row + order[j] * (int64_t)eb, eb);
      tfd_dm_put(wi, it, r * k + j, &order[j], TFD_INT64, 0);
    }
  }
  void *x = up(hx, (size_t)nx * eb), *v = dnew((size_t)ny * eb + 1), *ix = dnew((size_t)ny * esize(it) + 1);
  RUN(m->top_k(d, dt, x, rows, cols, k, v, it, ix, ST));
  down(hv, v, (size_t)ny * eb);
  down(hi, ix, (size_t)ny * esize(it));
  char what[96];
  snprintf(what, sizeof what, "top_k %s [%lld, %lld] k %lld%s%s", tfd_dtype_name(dt), (long long)rows, (long long)cols,
           (long long)k, ties ? " ties" : "", nans ? " NaN" : "");
  CHECK_INT(compare(what, hv, wv, dt, ny, 0, 0), 0);
  CHECK_INT(compare(what, hi, wi, it, ny, 0, 0), 0);
  dfree(x, (size_t)nx * eb), dfree(v, (size_t)ny * eb + 1), dfree(ix, (size_t)ny * esize(it) + 1);
  free(hx), free(hv), free(hi), free(wv), free(wi), free(order);
}

static void test_top_k(void) {
  int64_t shapes[][3] = {{1, 1, 1}, {3, 10, 3}, {5, 1000, 32}, {2, 1000, 33}, {1, 5000, 1000},
                         {4, 100, 100}, {7, 64, 5}, {1, 100000, 8}, {300, 50, 50}};
  tfd_dtype dts[] = {TFD_FLOAT32, TFD_FLOAT64, TFD_INT32, TFD_INT64};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
    for (int t = 0; t < 4; t++)
      for (int variant = 0; variant < 3; variant++)
        run_top_k_case(dts[t], t % 2 ? TFD_INT32 : TFD_INT64, shapes[s][0], shapes[s][1], shapes[s][2], variant == 1,
                       variant == 2);
  RUN(m->top_k(d, TFD_FLOAT32, NULL, 0, 10, 3, NULL, TFD_INT32, NULL, ST));
}

/* ---- products ---- */
static void matmul_ref(const tfd_dm_matmul *p, const void *ha, const void *hb, const void *hbias, void *want,
                       double *bound) {
  for (int64_t b = 0; b < p->batch; b++) {
    int64_t oa = p->a_offsets ? p->a_offsets[b] : b * p->m * p->k, ob = p->b_offsets ? p->b_offsets[b] : b * p->k * p->n;
    for (int64_t i = 0; i < p->m; i++)
      for (int64_t j = 0; j < p->n; j++) {
        double acc = 0, mag = 0;
        for (int64_t k = 0; k < p->k; k++) {
          double a = get(ha, p->dtype, oa + (p->transpose_a ? k * p->m + i : i * p->k + k));
          double bb = get(hb, p->dtype, ob + (p->transpose_b ? j * p->k + k : k * p->n + j));
          acc += a * bb;
          mag += fabs(a * bb);
        }
        if (hbias) acc += get(hbias, p->dtype, j), mag += fabs(get(hbias, p->dtype, j));
        int64_t at = (b * p->m + i) * p->n + j;
        if (p->dtype == TFD_FLOAT32) {
          int op = p->act == TFD_ACT_NONE ? -1 : p->act == TFD_ACT_RELU ? TFD_DM_RELU : p->act == TFD_ACT_RELU6 ? TFD_DM_RELU6
                   : p->act == TFD_ACT_ELU ? TFD_DM_ELU : p->act == TFD_ACT_LEAKY_RELU ? TFD_DM_LEAKY_RELU
                   : p->act == TFD_ACT_TANH ? TFD_DM_TANH : TFD_DM_SIGMOID;
          ((float *)want)[at] = op < 0 ? (float)acc : tfd_dm_unary_f32(op, (float)acc, p->alpha);
        } else {
          int op = p->act == TFD_ACT_NONE ? -1 : p->act == TFD_ACT_RELU ? TFD_DM_RELU : p->act == TFD_ACT_RELU6 ? TFD_DM_RELU6
                   : p->act == TFD_ACT_ELU ? TFD_DM_ELU : p->act == TFD_ACT_LEAKY_RELU ? TFD_DM_LEAKY_RELU
                   : p->act == TFD_ACT_TANH ? TFD_DM_TANH : TFD_DM_SIGMOID;
          ((double *)want)[at] = op < 0 ? acc : tfd_dm_unary_f64(op, acc, p->alpha);
        }
        bound[at] = mag;
      }
  }
}

static void run_matmul_case(tfd_dtype dt, int64_t batch, int64_t m_, int64_t n, int64_t k, bool ta, bool tb,
                            bool with_bias, tfd_activation act, const int64_t *a_off, const int64_t *b_off,
                            int64_t a_mats, int64_t b_mats) {
  tfd_dm_matmul p;
  memset(&p, 0, sizeof p);
  p.dtype = dt, p.m = m_, p.n = n, p.k = k, p.batch = batch, p.transpose_a = ta, p.transpose_b = tb;
  p.act = act, p.alpha = 0.1f, p.a_offsets = a_off, p.b_offsets = b_off;
  int64_t na = a_mats * m_ * k, nb = b_mats * k * n, nc = batch * m_ * n;
  size_t eb = esize(dt);
  void *ha = malloc((size_t)na * eb + 8), *hb = malloc((size_t)nb * eb + 8), *hbias = malloc((size_t)n * eb + 8);
  void *hc = malloc((size_t)nc * eb + 8), *want = malloc((size_t)nc * eb + 8);
  double *bound = malloc((size_t)(nc + 1) * sizeof *bound);
  fill_random(ha, dt, na, -1, 1);
  fill_random(hb, dt, nb, -1, 1);
  fill_random(hbias, dt, n, -1, 1);
  matmul_ref(&p, ha, hb, with_bias ? hbias : NULL, want, bound);
  void *a = up(ha, (size_t)na * eb), *b = up(hb, (size_t)nb * eb), *bias = up(hbias, (size_t)n * eb);
  void *c = dnew((size_t)nc * eb + 1);
  p.a = a, p.b = b, p.c = c, p.bias = with_bias ? bias : NULL;
  RUN(m->matmul(d, &p, ST));
  down(hc, c, (size_t)nc * eb);
  double eps = dt == TFD_FLOAT32 ? 1.2e-7 : 2.3e-16;
  int bad = 0;
  for (int64_t i = 0; i < nc; i++) {
    double g = get(hc, dt, i), w = get(want, dt, i);
    /* the sum's rounding (any order) through an activation whose slope is at most 1 */
    if (!close_to(g, w, 2 * eps * (double)(k + 2) * bound[i] + 1e-30, 4 * eps) && ++bad <= 5)
      fprintf(stderr, "  matmul %s b%lld [%lld x %lld x %lld] ta%d tb%d bias%d act%d at %lld: got %.9g want %.9g\n",
              tfd_dtype_name(dt), (long long)batch, (long long)m_, (long long)k, (long long)n, ta, tb, with_bias, act,
              (long long)i, g, w);
  }
  CHECK_INT(bad, 0);
  dfree(a, (size_t)na * eb), dfree(b, (size_t)nb * eb), dfree(bias, (size_t)n * eb), dfree(c, (size_t)nc * eb + 1);
  free(ha), free(hb), free(hbias), free(hc), free(want), free(bound);
}

static void test_matmul(void) {
  tfd_dtype dts[] = {TFD_FLOAT32, TFD_FLOAT64};
  for (int t = 0; t < 2; t++)
    for (int ta = 0; ta < 2; ta++)
      for (int tb = 0; tb < 2; tb++) {
        run_matmul_case(dts[t], 1, 1, 1, 1, ta, tb, false, TFD_ACT_NONE, NULL, NULL, 1, 1);
        run_matmul_case(dts[t], 1, 3, 5, 7, ta, tb, false, TFD_ACT_NONE, NULL, NULL, 1, 1);
        run_matmul_case(dts[t], 3, 65, 33, 129, ta, tb, false, TFD_ACT_NONE, NULL, NULL, 3, 3);
        run_matmul_case(dts[t], 1, 1, 1000, 513, ta, tb, true, TFD_ACT_RELU, NULL, NULL, 1, 1);
      }
  /* _FusedMatMul's epilogues: bias with every activation */
  for (int act = 0; act < TFD_ACT_COUNT; act++) {
    run_matmul_case(TFD_FLOAT32, 1, 17, 31, 64, false, false, true, (tfd_activation)act, NULL, NULL, 1, 1);
    run_matmul_case(TFD_FLOAT32, 1, 17, 31, 64, false, true, false, (tfd_activation)act, NULL, NULL, 1, 1);
  }
  /* broadcasts: one B for every batch (offsets 0: strided with stride 0), and uneven offsets
   * (BatchMatMulV2's [2, 3] x [3] batches: pointer arrays) */
  int64_t zero[4] = {0, 0, 0, 0};
  run_matmul_case(TFD_FLOAT32, 4, 8, 9, 10, false, false, false, TFD_ACT_NONE, NULL, zero, 4, 1);
  int64_t mk = 8 * 10, kn = 10 * 9, a_off[6], b_off[6];
  for (int b = 0; b < 6; b++) a_off[b] = b * mk, b_off[b] = (b % 3) * kn;
  run_matmul_case(TFD_FLOAT32, 6, 8, 9, 10, false, true, false, TFD_ACT_NONE, a_off, b_off, 6, 3);
  run_matmul_case(TFD_FLOAT64, 6, 8, 9, 10, true, false, false, TFD_ACT_NONE, a_off, b_off, 6, 3);
  /* an empty sum: C = act(bias) */
  run_matmul_case(TFD_FLOAT32, 2, 4, 5, 0, false, false, true, TFD_ACT_SIGMOID, NULL, NULL, 2, 2);
  /* large */
  if (!quick) run_matmul_case(TFD_FLOAT32, 1, 1024, 1024, 1024, false, false, true, TFD_ACT_RELU, NULL, NULL, 1, 1);
  tfd_dm_matmul p;
  memset(&p, 0, sizeof p);
  p.dtype = TFD_FLOAT32;
  RUN(m->matmul(d, &p, ST)); /* every size 0 */
}

/* ---- convolutions ---- */
typedef struct conv_case {
  int64_t n, h, w, c, k, o, stride, dilation;
  bool same, depthwise, backprop;
} conv_case;

static void conv_dims(const conv_case *cc, tfd_dm_conv *p) {
  memset(p, 0, sizeof *p);
  p->n = cc->n, p->h = cc->h, p->w = cc->w, p->c = cc->c, p->kh = p->kw = cc->k, p->o = cc->o;
  p->stride[0] = p->stride[1] = cc->stride;
  p->dilation[0] = p->dilation[1] = cc->dilation;
  p->depthwise = cc->depthwise;
  p->backprop_input = cc->backprop;
  int64_t eff = (cc->k - 1) * cc->dilation + 1;
  for (int dd = 0; dd < 2; dd++) {
    int64_t in = dd ? cc->w : cc->h, out, total;
    if (cc->same) {
      out = (in + cc->stride - 1) / cc->stride;
      total = (out - 1) * cc->stride + eff - in;
      if (total < 0) total = 0;
      p->pad_before[dd] = total / 2;
      p->pad_after[dd] = total - total / 2;
    } else {
      out = in >= eff ? (in - eff) / cc->stride + 1 : 0;
    }
    if (dd) p->ow = out;
    else p->oh = out;
  }
}

/* The convolution (or its input gradient) in double, by its definition. */
static void conv_ref(const tfd_dm_conv *p, tfd_dtype dt, const void *hx, const void *hf, double *out, double *bound) {
  int64_t mult = p->depthwise ? p->o / p->c : 0;
  if (!p->backprop_input) {
    for (int64_t b = 0; b < p->n; b++)
      for (int64_t oy = 0; oy < p->oh; oy++)
        for (int64_t ox = 0; ox < p->ow; ox++)
          for (int64_t oc = 0; oc < p->o; oc++) {
            double acc = 0, mag = 0;
            for (int64_t ky = 0; ky < p->kh; ky++)
              for (int64_t kx = 0; kx < p->kw; kx++) {
                int64_t iy = oy * p->stride[0] - p->pad_before[0] + ky * p->dilation[0];
                int64_t ix = ox * p->stride[1] - p->pad_before[1] + kx * p->dilation[1];
                if (iy < 0 || iy >= p->h || ix < 0 || ix >= p->w) continue;
                for (int64_t ic = 0; ic < p->c; ic++) {
                  double f;
                  if (p->depthwise) {
                    if (ic != oc / mult) continue;
                    f = get(hf, dt, ((ky * p->kw + kx) * p->c + ic) * mult + oc % mult);
                  } else {
                    f = get(hf, dt, ((ky * p->kw + kx) * p->c + ic) * p->o + oc);
                  }
                  double v = get(hx, dt, ((b * p->h + iy) * p->w + ix) * p->c + ic) * f;
                  acc += v, mag += fabs(v);
                }
              }
            int64_t at = ((b * p->oh + oy) * p->ow + ox) * p->o + oc;
            out[at] = acc, bound[at] = mag;
          }
    return;
  }
  int64_t total = p->n * p->h * p->w * p->c;
  for (int64_t i = 0; i < total; i++) out[i] = bound[i] = 0;
  for (int64_t b = 0; b < p->n; b++) /* scatter each output gradient back through the window */
    for (int64_t oy = 0; oy < p->oh; oy++)
      for (int64_t ox = 0; ox < p->ow; ox++)
        for (int64_t oc = 0; oc < p->o; oc++) {
          double g = get(hx, dt, ((b * p->oh + oy) * p->ow + ox) * p->o + oc);
          for (int64_t ky = 0; ky < p->kh; ky++)
            for (int64_t kx = 0; kx < p->kw; kx++) {
              int64_t iy = oy * p->stride[0] - p->pad_before[0] + ky * p->dilation[0];
              int64_t ix = ox * p->stride[1] - p->pad_before[1] + kx * p->dilation[1];
              if (iy < 0 || iy >= p->h || ix < 0 || ix >= p->w) continue;
              for (int64_t ic = 0; ic < p->c; ic++) {
                double f;
                if (p->depthwise) {
                  if (ic != oc / mult) continue;
                  f = get(hf, dt, ((ky * p->kw + kx) * p->c + ic) * mult + oc % mult);
                } else {
                  f = get(hf, dt, ((ky * p->kw + kx) * p->c + ic) * p->o + oc);
                }
                int64_t at = ((b * p->h + iy) * p->w + ix) * p->c + ic;
                out[at] += g * f, bound[at] += fabs(g * f);
              }
            }
        }
}

/* epilogue: 0 none, 1 bias + relu, 2 scale/shift + addend + relu6, 3 bias + addend that is y itself +
 * leaky relu, 4 prelu */
static void run_conv_case(tfd_dtype dt, const conv_case *cc, int epi) {
  tfd_dm_conv p;
  conv_dims(cc, &p);
  p.dtype = dt;
  size_t eb = esize(dt);
  int64_t mult = cc->depthwise ? cc->o / cc->c : 0;
  int64_t nin = p.backprop_input ? p.n * p.oh * p.ow * p.o : p.n * p.h * p.w * p.c;
  int64_t nout = p.backprop_input ? p.n * p.h * p.w * p.c : p.n * p.oh * p.ow * p.o;
  int64_t nf = p.kh * p.kw * p.c * (cc->depthwise ? mult : p.o);
  void *hx = malloc((size_t)nin * eb + 8), *hf = malloc((size_t)nf * eb + 8), *hy = malloc((size_t)nout * eb + 8);
  void *hv = malloc((size_t)(p.o + 1) * eb * 3), *hadd = malloc((size_t)nout * eb + 8);
  double *ref = malloc((size_t)(nout + 1) * sizeof *ref), *bound = malloc((size_t)(nout + 1) * sizeof *bound);
  fill_random(hx, dt, nin, -1, 1);
  fill_random(hf, dt, nf, -1, 1);
  fill_random(hv, dt, 3 * (p.o + 1), -1, 1);
  fill_random(hadd, dt, nout, -1, 1);
  conv_ref(&p, dt, hx, hf, ref, bound);
  const char *hbias = (const char *)hv, *hshift = hbias + (size_t)(p.o + 1) * eb, *hscale = hshift + (size_t)(p.o + 1) * eb;
  void *x = up(hx, (size_t)nin * eb), *f = up(hf, (size_t)nf * eb), *v = up(hv, (size_t)(p.o + 1) * eb * 3);
  void *y = epi == 3 ? up(hadd, (size_t)nout * eb) : dnew((size_t)nout * eb + 1);
  void *add = epi == 2 ? up(hadd, (size_t)nout * eb) : NULL;
  const char *dbias = v, *dshift = dbias + (size_t)(p.o + 1) * eb, *dscale = dshift + (size_t)(p.o + 1) * eb;
  p.x = x, p.filter = f, p.y = y;
  int64_t prelu_n = p.ow * p.o;
  void *hprelu = malloc((size_t)prelu_n * eb), *prelu = NULL;
  fill_random(hprelu, dt, prelu_n, 0, 0.5);
  if (!p.backprop_input) {
    if (epi == 1 || epi == 3) p.bias = dbias;
    if (epi == 2) p.scale = dscale, p.shift = dshift, p.addend = add;
    if (epi == 3) p.addend = y;
    if (epi == 4) prelu = up(hprelu, (size_t)prelu_n * eb), p.prelu = prelu, p.prelu_n = prelu_n;
    p.act = epi == 1 ? TFD_ACT_RELU : epi == 2 ? TFD_ACT_RELU6 : epi == 3 ? TFD_ACT_LEAKY_RELU : TFD_ACT_NONE;
    p.alpha = 0.2f;
    for (int64_t i = 0; i < nout; i++) { /* k_conv.c's order, as the kernel: bias, scale and shift, addend, act */
      int64_t ch = i % p.o;
      double r = ref[i];
      if (p.bias) r += get(hbias, dt, ch), bound[i] += 1;
      if (p.scale) r = r * get(hscale, dt, ch) + get(hshift, dt, ch), bound[i] = bound[i] * fabs(get(hscale, dt, ch)) + 1;
      if (p.addend) r += get(hadd, dt, i), bound[i] += 1;
      if (p.prelu) r = r > 0 ? r : get(hprelu, dt, i % prelu_n) * r;
      else if (p.act == TFD_ACT_RELU) r = r > 0 ? r : 0;
      else if (p.act == TFD_ACT_RELU6) r = r > 0 ? (r < 6 ? r : 6) : 0;
      else if (p.act == TFD_ACT_LEAKY_RELU) r = r > 0 ? r : (double)p.alpha * r; /* the float attr, as TF casts it */
      ref[i] = r;
    }
  }
  RUN(m->conv2d(d, &p, ST));
  down(hy, y, (size_t)nout * eb);
  double eps = dt == TFD_FLOAT32 ? 1.2e-7 : 2.3e-16;
  int64_t len = p.kh * p.kw * p.c + 4;
  int bad = 0;
  for (int64_t i = 0; i < nout; i++) {
    double g = get(hy, dt, i);
    if (!close_to(g, ref[i], 2 * eps * (double)len * bound[i] + 1e-30, 4 * eps) && ++bad <= 5)
      fprintf(stderr,
              "  conv2d %s n%lld %lldx%lldx%lld k%lld o%lld s%lld d%lld %s%s%s epi%d at %lld: got %.9g want %.9g\n",
              tfd_dtype_name(dt), (long long)cc->n, (long long)cc->h, (long long)cc->w, (long long)cc->c,
              (long long)cc->k, (long long)cc->o, (long long)cc->stride, (long long)cc->dilation,
              cc->same ? "SAME" : "VALID", cc->depthwise ? " depthwise" : "", cc->backprop ? " backprop" : "", epi,
              (long long)i, g, ref[i]);
  }
  CHECK_INT(bad, 0);
  dfree(x, (size_t)nin * eb), dfree(f, (size_t)nf * eb), dfree(v, (size_t)(p.o + 1) * eb * 3);
  dfree(y, epi == 3 ? (size_t)nout * eb : (size_t)nout * eb + 1);
  if (add) dfree(add, (size_t)nout * eb);
  if (prelu) dfree(prelu, (size_t)prelu_n * eb);
  free(hx), free(hf), free(hy), free(hv), free(hadd), free(ref), free(bound), free(hprelu);
}

static void test_conv2d(void) {
  conv_case cases[] = {
      {1, 1, 1, 1, 1, 1, 1, 1, true, false, false},     /* one element */
      {2, 9, 11, 3, 3, 8, 1, 1, true, false, false},    /* SAME, symmetric */
      {2, 10, 12, 4, 3, 5, 2, 1, true, false, false},   /* SAME stride 2: 0 before, 1 after */
      {1, 10, 10, 3, 4, 2, 1, 1, true, false, false},   /* even kernel: 1 before, 2 after */
      {2, 13, 7, 5, 3, 6, 2, 1, false, false, false},   /* VALID */
      {1, 16, 16, 4, 3, 4, 1, 2, true, false, false},   /* dilation 2 */
      {2, 9, 9, 6, 3, 6, 1, 1, true, true, false},      /* depthwise */
      {1, 12, 12, 4, 3, 8, 2, 1, true, true, false},    /* depthwise multiplier 2, stride 2 */
      {1, 32, 32, 16, 1, 32, 1, 1, true, false, false}, /* pointwise */
      {2, 10, 12, 4, 3, 5, 2, 1, true, false, true},    /* backprop input, SAME stride 2 */
      {1, 9, 9, 3, 3, 4, 1, 1, false, false, true},     /* backprop input, VALID */
      {1, 12, 12, 4, 3, 8, 2, 1, true, true, true},     /* depthwise backprop input */
      {1, 4, 4, 0, 3, 3, 1, 1, true, false, false},     /* no input channels: zeros and the epilogue */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    for (int f = 0; f < 2; f++)
      for (int epi = 0; epi < (cases[i].backprop ? 1 : 5); epi++) {
        if (quick && epi > 1) continue;
        run_conv_case(f ? TFD_FLOAT64 : TFD_FLOAT32, &cases[i], epi);
      }
  if (!quick) {
    conv_case big = {8, 56, 56, 64, 3, 64, 1, 1, true, false, false};
    run_conv_case(TFD_FLOAT32, &big, 1);
  }
}

/* ---- images ---- */
static void test_pool(void) {
  tfd_dtype dts[] = {TFD_FLOAT32, TFD_FLOAT64, TFD_FLOAT16, TFD_INT32, TFD_INT64, TFD_UINT8};
  for (int t = 0; t < 6; t++)
    for (int mx = 0; mx < 2; mx++) {
      tfd_dtype dt = dts[t];
      if (!mx && (dt == TFD_INT32 || dt == TFD_INT64 || dt == TFD_UINT8)) continue;
      tfd_dm_pool p;
      memset(&p, 0, sizeof p);
      p.dtype = dt, p.max = mx, p.n = 2, p.h = 11, p.w = 10, p.c = 5, p.kh = 3, p.kw = 3;
      p.stride[0] = p.stride[1] = 2, p.pad_before[0] = 1, p.pad_before[1] = 0;
      p.oh = 6, p.ow = 5;
      int64_t nx = p.n * p.h * p.w * p.c, ny = p.n * p.oh * p.ow * p.c;
      size_t eb = esize(dt);
      void *hx = malloc((size_t)nx * eb), *hy = malloc((size_t)ny * eb), *want = malloc((size_t)ny * eb);
      fill_random(hx, dt, nx, dt == TFD_UINT8 ? 0 : -100, dt == TFD_UINT8 ? 256 : 100);
      for (int64_t b = 0; b < p.n; b++)
        for (int64_t oy = 0; oy < p.oh; oy++)
          for (int64_t ox = 0; ox < p.ow; ox++)
            for (int64_t ch = 0; ch < p.c; ch++) {
              int64_t y0, y1, x0, x1;
              tfd_window(oy, 2, 1, 3, p.h, &y0, &y1);
              tfd_window(ox, 2, 0, 3, p.w, &x0, &x1);
              double acc = mx ? -INFINITY : 0;
              int64_t iacc = INT64_MIN;
              for (int64_t iy = y0; iy < y1; iy++)
                for (int64_t ix = x0; ix < x1; ix++) {
                  int64_t at = ((b * p.h + iy) * p.w + ix) * p.c + ch;
                  double v = get(hx, dt, at);
                  acc = mx ? (v > acc ? v : acc) : acc + v;
                  iacc = tfd_dm_get_i(hx, dt, at) > iacc ? tfd_dm_get_i(hx, dt, at) : iacc;
                }
              if (!mx) acc /= (double)((y1 - y0) * (x1 - x0));
              int64_t at = ((b * p.oh + oy) * p.ow + ox) * p.c + ch;
              if (dt == TFD_INT32 || dt == TFD_INT64 || dt == TFD_UINT8) tfd_dm_put(want, dt, at, &iacc, TFD_INT64, 0);
              else tfd_dm_put(want, dt, at, &acc, TFD_FLOAT64, 0);
            }
      void *x = up(hx, (size_t)nx * eb), *y = dnew((size_t)ny * eb);
      p.x = x, p.y = y;
      RUN(m->pool(d, &p, ST));
      down(hy, y, (size_t)ny * eb);
      char what[64];
      snprintf(what, sizeof what, "%s pool %s", mx ? "max" : "avg", tfd_dtype_name(dt));
      /* An average sums up to 9 terms of up to 100 in magnitude: its rounding error is bounded by
       * 8 eps * 100, not by the (possibly cancelled) result. */
      double atol = dt == TFD_FLOAT32 ? 8 * 1.2e-7 * 100 : dt == TFD_FLOAT64 ? 8 * 2.3e-16 * 100 : 1e-30;
      CHECK_INT(compare(what, hy, want, dt, ny, atol, dt == TFD_FLOAT16 ? 1e-3 : dt == TFD_FLOAT32 ? 1e-6 : 1e-14), 0);
      dfree(x, (size_t)nx * eb), dfree(y, (size_t)ny * eb);
      free(hx), free(hy), free(want);
    }
}

static void test_resize(void) {
  tfd_dtype dts[] = {TFD_FLOAT32, TFD_FLOAT64, TFD_INT32, TFD_INT64, TFD_UINT8, TFD_FLOAT16};
  int64_t sizes[][4] = {{5, 7, 10, 14}, {8, 8, 3, 5}, {1, 1, 4, 4}, {6, 9, 6, 9}};
  for (int t = 0; t < 6; t++)
    for (int s = 0; s < 4; s++)
      for (int mode = 0; mode < 3; mode++)
        for (int bil = 0; bil < 2; bil++) {
          tfd_dtype dt = dts[t], ot = bil ? TFD_FLOAT32 : dt;
          tfd_dm_resize p;
          memset(&p, 0, sizeof p);
          p.in_dtype = dt, p.out_dtype = ot, p.bilinear = bil, p.align_corners = mode == 1, p.half_pixel_centers = mode == 2;
          p.n = 2, p.h = sizes[s][0], p.w = sizes[s][1], p.c = 3, p.oh = sizes[s][2], p.ow = sizes[s][3];
          int64_t nx = p.n * p.h * p.w * p.c, ny = p.n * p.oh * p.ow * p.c;
          void *hx = malloc((size_t)nx * esize(dt)), *hy = malloc((size_t)ny * esize(ot)), *want = malloc((size_t)ny * esize(ot));
          fill_random(hx, dt, nx, 0, 200);
          float sy = tfd_dm_resize_scale(p.h, p.oh, p.align_corners), sx = tfd_dm_resize_scale(p.w, p.ow, p.align_corners);
          for (int64_t b = 0; b < p.n; b++)
            for (int64_t oy = 0; oy < p.oh; oy++)
              for (int64_t ox = 0; ox < p.ow; ox++)
                for (int64_t ch = 0; ch < p.c; ch++) {
                  int64_t at = ((b * p.oh + oy) * p.ow + ox) * p.c + ch;
                  if (bil) {
                    int64_t ylo, yhi, xlo, xhi;
                    float fy, fx;
                    tfd_dm_bilinear_index(oy, p.h, sy, p.half_pixel_centers, &ylo, &yhi, &fy);
                    tfd_dm_bilinear_index(ox, p.w, sx, p.half_pixel_centers, &xlo, &xhi, &fx);
                    float tl = (float)get(hx, dt, ((b * p.h + ylo) * p.w + xlo) * p.c + ch);
                    float tr = (float)get(hx, dt, ((b * p.h + ylo) * p.w + xhi) * p.c + ch);
                    float bl = (float)get(hx, dt, ((b * p.h + yhi) * p.w + xlo) * p.c + ch);
                    float br = (float)get(hx, dt, ((b * p.h + yhi) * p.w + xhi) * p.c + ch);
                    float top = tl + (tr - tl) * fx, bot = bl + (br - bl) * fx;
                    ((float *)want)[at] = top + (bot - top) * fy;
                  } else {
                    int64_t iy = tfd_dm_nearest_index(oy, p.h, sy, p.align_corners, p.half_pixel_centers);
                    int64_t ix = tfd_dm_nearest_index(ox, p.w, sx, p.align_corners, p.half_pixel_centers);
                    memcpy((char *)want + at * (int64_t)esize(ot), (char *)hx + (((b * p.h + iy) * p.w + ix) * p.c + ch) * (int64_t)esize(dt),
                           esize(dt));
                  }
                }
          void *x = up(hx, (size_t)nx * esize(dt)), *y = dnew((size_t)ny * esize(ot));
          p.x = x, p.y = y;
          RUN(m->resize(d, &p, ST));
          down(hy, y, (size_t)ny * esize(ot));
          char what[64];
          snprintf(what, sizeof what, "resize %s %s mode %d", bil ? "bilinear" : "nearest", tfd_dtype_name(dt), mode);
          CHECK_INT(compare(what, hy, want, ot, ny, 1e-4, 1e-6), 0); /* FMA contraction may move the last bit */
          dfree(x, (size_t)nx * esize(dt)), dfree(y, (size_t)ny * esize(ot));
          free(hx), free(hy), free(want);
        }
}

/* ---- random ---- */
static void test_random(void) {
  int64_t n = 1000003;
  for (int f = 0; f < 2; f++)
    for (int normal = 0; normal < 2; normal++) {
      tfd_dtype dt = f ? TFD_FLOAT64 : TFD_FLOAT32;
      void *hy = malloc((size_t)n * 8), *want = malloc((size_t)n * 8);
      uint64_t seed = 0x1234567887654321ull, counter = 77;
      for (int64_t i = 0; i < n; i++) { /* k_random.c's conversion */
        double v = tfd_dm_random(normal, seed, counter, (uint64_t)i);
        if (dt == TFD_FLOAT32) ((float *)want)[i] = normal ? (float)v : tfd_dm_uniform_f32(v);
        else ((double *)want)[i] = v;
      }
      void *y = dnew((size_t)n * esize(dt));
      RUN(m->random(d, normal, dt, seed, counter, y, n, ST));
      down(hy, y, (size_t)n * esize(dt));
      /* uniform draws are integer arithmetic and one product: exact; normal ones go through log,
       * sqrt and cos, CUDA's against libm's */
      CHECK_INT(compare(normal ? "random normal" : "random uniform", hy, want, dt, n, 1e-12,
                        normal ? (dt == TFD_FLOAT32 ? 1.2e-7 : 1e-13) : 0),
                0);
      dfree(y, (size_t)n * esize(dt));
      free(hy), free(want);
    }
}

/* ---- errors and the largest sizes ---- */
static void test_errors(void) {
  tfd_status *st = tfd_status_new();
  CHECK_INT(m->unary(gpu, TFD_DM_EXP, TFD_INT32, NULL, NULL, 4, 0, st), TFD_UNIMPLEMENTED);
  CHECK_CONTAINS(tfd_status_message(st), "int32");
  CHECK_INT(m->reduce(gpu, TFD_DM_MEAN, TFD_INT64, NULL, 1, 4, 1, NULL, st), TFD_UNIMPLEMENTED);
  CHECK_CONTAINS(tfd_status_message(st), "int64");
  tfd_dm_matmul p;
  memset(&p, 0, sizeof p);
  p.dtype = TFD_INT32, p.m = p.n = p.k = p.batch = 1;
  CHECK_INT(m->matmul(gpu, &p, st), TFD_UNIMPLEMENTED);
  CHECK_CONTAINS(tfd_status_message(st), "GPU:0");
  CHECK_INT(m->top_k(gpu, TFD_FLOAT32, NULL, 1, 3, 4, NULL, TFD_INT32, NULL, st), TFD_INVALID_ARGUMENT);
  tfd_dm_conv c;
  memset(&c, 0, sizeof c);
  c.dtype = TFD_FLOAT32, c.n = 1, c.h = c.w = 5, c.c = 1, c.kh = c.kw = 3, c.o = 1, c.oh = c.ow = 4; /* 3 is right */
  c.stride[0] = c.stride[1] = c.dilation[0] = c.dilation[1] = 1;
  CHECK_INT(m->conv2d(gpu, &c, st), TFD_INVALID_ARGUMENT);
  CHECK_CONTAINS(tfd_status_message(st), "height: output 4");
  tfd_status_free(st);
}

static void test_past_2_31_elements(void) {
  int64_t n = ((int64_t)1 << 31) + 4099;
  tfd_allocator_stats stats;
  tfd_allocator_get_stats(tfd_device_get_allocator(gpu), &stats);
  if (quick || stats.bytes_limit - stats.bytes_in_use < ((int64_t)6 << 30)) {
    printf("  (past 2^31 elements: left out, %s)\n", quick ? "quick run" : "less than 6 GiB for the device's allocator");
    return;
  }
  /* LogicalNot over n bools; And with a broadcast scalar over a 2-D walk of n (the 64-bit walk path) */
  uint8_t *h = malloc((size_t)n), *back = malloc((size_t)n);
  for (int64_t i = 0; i < n; i++) h[i] = (uint8_t)((i * 2654435761u >> 7) & 1);
  void *x = up(h, (size_t)n), *y = dnew((size_t)n);
  RUN(m->unary(d, TFD_DM_LOGICAL_NOT, TFD_BOOL, x, y, n, 0, ST));
  down(back, y, (size_t)n);
  int64_t bad = 0;
  for (int64_t i = 0; i < n; i++) bad += back[i] != (h[i] == 0);
  CHECK_INT(bad, 0);
  uint8_t one = 1;
  void *s = up(&one, 1);
  int64_t dims[2] = {4099, n / 4099}, sb[2] = {0, 0};
  tfd_dm_walk w = make_walk(2, dims, NULL, sb, NULL, 0, 0, 0);
  int64_t count = dims[0] * dims[1];
  RUN(m->binary(d, TFD_DM_LOGICAL_AND, TFD_BOOL, x, s, y, &w, ST));
  down(back, y, (size_t)count);
  bad = 0;
  for (int64_t i = 0; i < count; i++) bad += back[i] != (h[i] != 0);
  CHECK_INT(bad, 0);
  /* a fill of all of it, read back through a Max over its 8-byte words */
  uint8_t v = 1;
  RUN(m->fill(d, 1, &v, y, n, ST));
  void *sum = dnew(8);
  int64_t got = 0;
  RUN(m->reduce(d, TFD_DM_MAX, TFD_INT64, y, 1, n / 8, 1, sum, ST)); /* 8-byte words of ones */
  down(&got, sum, 8);
  CHECK_INT(got, 0x0101010101010101ll);
  dfree(sum, 8);
  dfree(s, 1);
  dfree(x, (size_t)n);
  dfree(y, (size_t)n);
  free(h), free(back);
}

/* ---- step graphs: capture, launch with new inputs, memory kept, copies out refused ---- */
static void test_step_graphs(void) {
  const tfd_device_math *dm = gpu->math;
  CHECK(dm->capture_begin && dm->capture_end && dm->graph_launch && dm->graph_free);
  if (!dm->capture_begin) return;
  /* three 4x4 products whose A matrices sit unevenly in x (cuBLAS's pointer arrays), then Neg */
  float hx[64], hb[16], out[48];
  for (int i = 0; i < 64; i++) hx[i] = (float)(i % 9) - 4;
  for (int i = 0; i < 16; i++) hb[i] = (float)(i % 5) * 0.5f;
  void *x = up(hx, sizeof hx), *b = up(hb, sizeof hb), *y = dnew(sizeof out);
  static const int64_t a_off[3] = {0, 32, 16}, b_off[3] = {0, 0, 0};
  tfd_dm_matmul mm = {.dtype = TFD_FLOAT32, .a = x, .b = b, .m = 4, .n = 4, .k = 4, .batch = 3,
                      .a_offsets = a_off, .b_offsets = b_off};
  CHECK_INT(cudaMemset(y, 0, sizeof out), cudaSuccess);
  /* warm-up: library handles and algorithm choices are made outside the capture, as the runtime does */
  void *t = dnew(sizeof out);
  mm.c = t;
  RUN(d->math->matmul(d, &mm, ST));
  drain();
  void *graph = NULL;
  RUN(d->math->capture_begin(d, ST));
  {
    tfd_status *st = tfd_status_new();
    CHECK_INT(dm->capture_begin(gpu, st), TFD_FAILED_PRECONDITION); /* one capture per thread */
    CHECK_STATUS(st, TFD_FAILED_PRECONDITION, "already");
    /* a copy out would read bytes not computed yet */
    tfd_allocator *a = tfd_device_get_allocator(gpu);
    float h[4];
    CHECK_INT(a->device_memory->to_host(a, h, x, sizeof h, st), TFD_FAILED_PRECONDITION);
    CHECK_STATUS(st, TFD_FAILED_PRECONDITION, "records a CUDA graph");
    tfd_status_free(st);
  }
  RUN(d->math->matmul(d, &mm, ST));
  RUN(d->math->unary(d, TFD_DM_NEG, TFD_FLOAT32, t, y, 48, 0, ST));
  dfree(t, sizeof out); /* kept for the graph: nothing else may get it meanwhile */
  void *other = dnew(sizeof out);
  CHECK(other != t);
  RUN(d->math->capture_end(d, false, &graph, ST));
  CHECK(graph != NULL);
  float got[48];
  down(got, y, sizeof got);
  for (int i = 0; i < 48; i++) CHECK(got[i] == 0); /* recorded, not run */
  for (int round = 0; round < 3 && graph; round++) {
    for (int i = 0; i < 64; i++) hx[i] = (float)((i * (round + 3)) % 11) - 5;
    CHECK_INT(cudaMemcpy(x, hx, sizeof hx, cudaMemcpyHostToDevice), cudaSuccess);
    RUN(d->math->graph_launch(d, graph, ST));
    down(got, y, sizeof got);
    for (int bt = 0; bt < 3; bt++)
      for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++) {
          float want = 0;
          for (int k = 0; k < 4; k++) want += hx[a_off[bt] + r * 4 + k] * hb[k * 4 + c];
          CHECK(fabsf(got[bt * 16 + r * 4 + c] + want) <= 1e-4f);
        }
  }
  if (graph) dm->graph_free(gpu, graph);
  dfree(other, sizeof out);
  /* abandoned: no graph, and the thread can capture again */
  RUN(d->math->capture_begin(d, ST));
  RUN(d->math->unary(d, TFD_DM_NEG, TFD_FLOAT32, y, y, 48, 0, ST));
  graph = (void *)1;
  RUN(d->math->capture_end(d, true, &graph, ST));
  CHECK(graph == NULL);
  {
    tfd_status *st = tfd_status_new();
    CHECK_INT(dm->capture_end(gpu, false, &graph, st), TFD_FAILED_PRECONDITION);
    CHECK_STATUS(st, TFD_FAILED_PRECONDITION, "not recording");
    tfd_status_free(st);
  }
  dfree(x, sizeof hx);
  dfree(b, sizeof hb);
  dfree(y, sizeof out);
}

static const tfd_test tests[] = {
    {"unary: every op and dtype, in place, 0 to 2^20 elements", test_unary},
    {"binary: every op and dtype over contiguous, broadcast, transposed, reversed, 0-d walks", test_binary},
    {"select: element sizes 1 to 8 and odd, broadcast condition", test_select},
    {"cast: every pair of dtypes, NaN, infinities, saturation", test_cast},
    {"add_n: 1 to 40 inputs, output aliasing an input", test_add_n},
    {"copy_walk: dense, transposed, into a wider output, reversed, odd element sizes", test_copy_walk},
    {"fill and range", test_fill_range},
    {"tile and mirror_pad", test_tile_mirror_pad},
    {"gather (rows of 3 to 1024 bytes, indices out of range) and gather_nd", test_gather},
    {"reduce: every op and dtype, rows, columns, split axes, NaN rules", test_reduce},
    {"arg_reduce: ties, NaN rules, split axes", test_arg_reduce},
    {"search_sorted: lower and upper bounds, ties, values past either end", test_search_sorted},
    {"window_max: Dilation2D and MaxPoolWithArgmax windows, ties, padding, rates", test_window_max},
    {"crop_and_resize: bilinear and nearest, flipped and outside boxes, one-pixel crops", test_crop_and_resize},
    {"multinomial: seeded draws against the CPU's loop, -inf and NaN logits", test_multinomial},
    {"softmax and log softmax: warp and block rows", test_softmax},
    {"top_k: selection and sorting paths, ties, NaN", test_top_k},
    {"matmul: transposes, batches, broadcasts, every epilogue, empty sums", test_matmul},
    {"conv2d: SAME (asymmetric), VALID, dilation, depthwise, epilogues, backprop input", test_conv2d},
    {"pool: max and average, padding, dtypes", test_pool},
    {"resize: bilinear and nearest, every coordinate mode and dtype", test_resize},
    {"random: the CPU's streams", test_random},
    {"errors name the dtype and the device", test_errors},
    {"past 2^31 elements", test_past_2_31_elements},
    {"step graphs: capture, replay with new inputs, kept memory, copies out refused", test_step_graphs},
};

TFD_TEST_MAIN_UNLESS(tests, no_gpu)
