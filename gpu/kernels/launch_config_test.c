/* The CUDA kernels' launch arithmetic (launch_config.h) and index helpers (index_math.h) on the CPU:
 * grid sizes for counts up to 2^40 and beyond, reduction plans (every element covered once, splits
 * only where they help, workspace sizes), and the helpers against the CPU kernels' own formulas:
 * walks over several operands, MirrorPad, resize sources, pooling windows, TopKV2's and ArgMax's
 * orders, filter layouts. */
#include <math.h>
#include <stdlib.h>

#include "gpu/kernels/index_math.h"
#include "gpu/kernels/launch_config.h"
#include "runtime/kernels/device_math_elem.h"
#include "runtime/testing/harness.h"

static void test_grid_sizes(void) {
  int64_t max = tfd_cuda_max_blocks(132); /* an H100's SMs */
  CHECK_INT(max, 132 * TFD_CUDA_BLOCKS_PER_SM);
  CHECK_INT(tfd_cuda_max_blocks(0), TFD_CUDA_BLOCKS_PER_SM);
  CHECK_INT(tfd_cuda_max_blocks((int64_t)1 << 40), TFD_CUDA_MAX_GRID);
  CHECK_INT(tfd_cuda_blocks(0, 256, max), 0);
  CHECK_INT(tfd_cuda_blocks(-5, 256, max), 0);
  CHECK_INT(tfd_cuda_blocks(1, 256, max), 1);
  CHECK_INT(tfd_cuda_blocks(256, 256, max), 1);
  CHECK_INT(tfd_cuda_blocks(257, 256, max), 2);
  CHECK_INT(tfd_cuda_blocks(1000, 0, max), max < 1000 ? max : 1000); /* per_block 0 counts as 1 */
  for (int e = 0; e <= 62; e++) {
    int64_t n = (int64_t)1 << e, per = 256 * 4;
    int64_t b = tfd_cuda_blocks(n, per, max);
    CHECK(b >= 1 && b <= max);
    /* a grid-stride loop of b blocks covers n: the number of passes is finite and positive */
    int64_t step = b * per, passes = (n - 1) / step + 1;
    CHECK(passes >= 1 && passes <= n);
    if (n <= per * max) CHECK_INT(b, (n - 1) / per + 1);
  }
  CHECK_INT(tfd_cuda_blocks(INT64_MAX, 1, TFD_CUDA_MAX_GRID), TFD_CUDA_MAX_GRID);
}

/* Every (o, i, q) of a plan is read by exactly one (tile, thread) of the first pass. */
static void check_plan_covers(int64_t outer, int64_t n, int64_t inner, const tfd_reduce_plan *p) {
  CHECK_INT(p->bx * p->by, TFD_CUDA_THREADS);
  CHECK(p->bx >= 1 && p->bx <= 32 && (p->bx & (p->bx - 1)) == 0);
  CHECK_INT(p->qblocks, (inner - 1) / p->bx + 1);
  CHECK(p->chunks >= 1);
  CHECK(p->chunk * p->chunks >= n);
  CHECK(p->chunk * (p->chunks - 1) < n || n == 0); /* no empty chunk */
  CHECK_INT(p->tiles, outer * p->qblocks * p->chunks);
  if (outer * n * inner > 4096) return; /* the exhaustive count below is for small shapes */
  int *seen = calloc((size_t)(outer * n * inner + 1), sizeof *seen);
  for (int64_t tile = 0; tile < p->tiles; tile++) {
    int64_t g = tile % p->chunks, rest = tile / p->chunks, qb = rest % p->qblocks, o = rest / p->qblocks;
    for (int ty = 0; ty < p->by; ty++)
      for (int tx = 0; tx < p->bx; tx++) {
        int64_t q = qb * p->bx + tx;
        if (q >= inner) continue;
        int64_t lo = g * p->chunk, hi = lo + p->chunk < n ? lo + p->chunk : n;
        for (int64_t i = lo + ty; i < hi; i += p->by) seen[(o * n + i) * inner + q]++;
      }
  }
  for (int64_t e = 0; e < outer * n * inner; e++) CHECK_INT(seen[e], 1);
  free(seen);
}

static void test_reduce_plans(void) {
  int64_t target = 66 * 4;
  int64_t shapes[][3] = {{1, 1, 1},    {1, 0, 5},     {3, 0, 1},   {1, 1000, 1}, {7, 13, 1},  {1, 100000, 1},
                         {4, 33, 3},   {2, 17, 32},   {1, 5, 1000}, {1000, 5, 1}, {1, 4096, 2}, {5, 1, 7},
                         {2, 3000, 1}, {1, 250000, 3}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    int64_t outer = shapes[s][0], n = shapes[s][1], inner = shapes[s][2];
    tfd_reduce_plan p = tfd_reduce_plan_make(outer, n, inner, target, 1);
    check_plan_covers(outer, n, inner, &p);
    tfd_reduce_plan single = tfd_reduce_plan_make(outer, n, inner, target, 0);
    CHECK_INT(single.chunks, 1);
    check_plan_covers(outer, n, inner, &single);
  }
  /* a full reduction of 64M: split into about `target` chunks of at least 8 elements a thread */
  tfd_reduce_plan p = tfd_reduce_plan_make(1, (int64_t)64 << 20, 1, target, 1);
  CHECK_INT(p.bx, 1);
  CHECK_INT(p.by, 256);
  CHECK(p.chunks > 1 && p.chunks <= target);
  CHECK(p.chunk >= 256 * TFD_REDUCE_MIN_PER_THREAD);
  CHECK_INT(tfd_reduce_plan_workspace(&p, 1, 1, 8), p.chunks * 8);
  /* enough rows already: one pass, no workspace */
  p = tfd_reduce_plan_make(100000, 1000, 1, target, 1);
  CHECK_INT(p.chunks, 1);
  CHECK_INT(tfd_reduce_plan_workspace(&p, 100000, 1, 8), 0);
  /* columns of a wide matrix: 32 lanes across, 8 along n */
  p = tfd_reduce_plan_make(1, 1024, 4096, target, 1);
  CHECK_INT(p.bx, 32);
  CHECK_INT(p.by, 8);
  CHECK_INT(p.qblocks, 128);
  /* a short axis is never split, however few the tiles */
  p = tfd_reduce_plan_make(1, 100, 1, target, 1);
  CHECK_INT(p.chunks, 1);
  /* 2^40 elements in one row: chunk counts and sizes stay in range */
  p = tfd_reduce_plan_make(1, (int64_t)1 << 40, 1, target, 1);
  CHECK(p.chunks == target);
  CHECK(p.chunk * p.chunks >= (int64_t)1 << 40);
  CHECK_INT(tfd_pow2_at_least(1), 1);
  CHECK_INT(tfd_pow2_at_least(1000), 1024);
  CHECK_INT(tfd_pow2_at_least(1024), 1024);
}

static void test_walk_offsets(void) {
  tfd_dm_walk w;
  memset(&w, 0, sizeof w);
  w.nd = 3;
  int64_t dims[3] = {2, 3, 4};
  memcpy(w.dims, dims, sizeof dims);
  int64_t s0[3] = {12, 4, 1}, s1[3] = {0, 1, 0}, s2[3] = {-1, 8, -2}; /* contiguous, broadcast, reversed */
  memcpy(w.strides[0], s0, sizeof s0);
  memcpy(w.strides[1], s1, sizeof s1);
  memcpy(w.strides[2], s2, sizeof s2);
  w.offsets[0] = 5, w.offsets[1] = 0, w.offsets[2] = 40;
  for (int64_t i = 0; i < tfd_dm_walk_count(&w); i++) {
    int64_t off[3];
    tfd_walk_offsets(&w, 3, i, off);
    for (int op = 0; op < 3; op++) CHECK_INT(off[op], tfd_dm_walk_offset(&w, op, i));
  }
  w.nd = 0; /* one element */
  int64_t off[2];
  tfd_walk_offsets(&w, 2, 0, off);
  CHECK_INT(off[0], 5);
  CHECK_INT(off[1], 0);
}

static void test_mirror_index(void) {
  /* [a b c d]: REFLECT pads "c b | a b c d | c b", SYMMETRIC "b a | a b c d | d c" */
  int64_t reflect[] = {2, 1, 0, 1, 2, 3, 2, 1}, symmetric[] = {1, 0, 0, 1, 2, 3, 3, 2};
  for (int j = 0; j < 8; j++) {
    CHECK_INT(tfd_mirror_index(j - 2, 4, false), reflect[j]);
    CHECK_INT(tfd_mirror_index(j - 2, 4, true), symmetric[j]);
  }
  CHECK_INT(tfd_mirror_index(0, 1, true), 0);
  CHECK_INT(tfd_mirror_index(-1, 1, true), 0);
  CHECK_INT(tfd_mirror_index(1, 1, true), 0);
}

/* k_image.c's bilinear_indices and nearest_index, copied: the helpers must agree bit for bit. */
static void test_windows(void) {
  int64_t lo, hi;
  tfd_window(0, 2, 1, 3, 10, &lo, &hi); /* starts in the padding */
  CHECK_INT(lo, 0);
  CHECK_INT(hi, 2);
  tfd_window(4, 2, 1, 3, 10, &lo, &hi); /* ends past the image */
  CHECK_INT(lo, 7);
  CHECK_INT(hi, 10);
  tfd_window(3, 1, 0, 2, 10, &lo, &hi);
  CHECK_INT(lo, 3);
  CHECK_INT(hi, 5);
}

static void test_selection_orders(void) {
  /* TopKV2: NaN first, then larger, then the lower index */
  CHECK(tfd_topk_before_f(NAN, 5, 1e30, 0));
  CHECK(!tfd_topk_before_f(1e30, 0, NAN, 5));
  CHECK(tfd_topk_before_f(NAN, 1, NAN, 2));
  CHECK(tfd_topk_before_f(3.0, 9, 2.0, 0));
  CHECK(tfd_topk_before_f(2.0, 1, 2.0, 4));
  CHECK(!tfd_topk_before_f(2.0, 4, 2.0, 1));
  CHECK(tfd_topk_before_f(-0.0, 0, 0.0, 1) && !tfd_topk_before_f(0.0, 1, -0.0, 0)); /* equal values: by index */
  CHECK(tfd_topk_before_i(INT64_MIN + 1, 0, INT64_MIN, 0));
  CHECK(tfd_topk_before_i(5, 3, 5, 4));
  CHECK(tfd_topk_before_i(6, 9, 5, 0));
  /* ArgMax / ArgMin: better values win, ties keep the lower index, none yet always loses */
  CHECK(tfd_arg_beats(false, 1.0, 7, 0.0, 0));
  CHECK(tfd_arg_beats(false, -5.0, 9, 0.0, -1));
  CHECK(!tfd_arg_beats(false, 1.0, 7, 1.0, 3));
  CHECK(tfd_arg_beats(false, 1.0, 3, 1.0, 7));
  CHECK(tfd_arg_beats(true, -1.0, 8, 0.0, 0));
  CHECK(!tfd_arg_beats(true, 1.0, 0, 0.0, 8));
  CHECK(tfd_arg_beats_i(false, 4, 2, 3, 0));
  CHECK(!tfd_arg_beats_i(true, 4, 2, 3, 0));
}

static void test_filter_layouts(void) {
  /* HWIO [2, 3, 4, 5] into OHWI [5, 2, 3, 4]: each element lands once, where it should */
  int64_t kh = 2, kw = 3, c = 4, o = 5, n = kh * kw * c * o;
  int *hit = calloc((size_t)n, sizeof *hit);
  for (int64_t oc = 0; oc < o; oc++)
    for (int64_t y = 0; y < kh; y++)
      for (int64_t x = 0; x < kw; x++)
        for (int64_t ci = 0; ci < c; ci++) {
          int64_t src = tfd_hwio_index(oc, y, x, ci, kw, c, o, false);
          CHECK_INT(src, ((y * kw + x) * c + ci) * o + oc);
          hit[src]++;
        }
  for (int64_t i = 0; i < n; i++) CHECK_INT(hit[i], 1);
  /* depthwise [2, 3, 4, m = 2]: output channel ch * m + q from input channel ch */
  memset(hit, 0, (size_t)n * sizeof *hit);
  int64_t m = 2, od = c * m;
  for (int64_t oc = 0; oc < od; oc++)
    for (int64_t y = 0; y < kh; y++)
      for (int64_t x = 0; x < kw; x++) {
        int64_t src = tfd_hwio_index(oc, y, x, 0, kw, c, od, true);
        CHECK_INT(src, ((y * kw + x) * c + oc / m) * m + oc % m);
        hit[src]++;
      }
  for (int64_t i = 0; i < kh * kw * c * m; i++) CHECK_INT(hit[i], 1);
  free(hit);
}

static const tfd_test tests[] = {
    {"grid sizes for counts up to 2^62", test_grid_sizes},
    {"reduction plans cover every element once; splits and workspaces", test_reduce_plans},
    {"walk offsets of several operands at once", test_walk_offsets},
    {"MirrorPad reflections", test_mirror_index},
    {"pooling windows clipped to the image", test_windows},
    {"TopKV2 and ArgMax orders", test_selection_orders},
    {"HWIO filters into cuDNN's OHWI, depthwise too", test_filter_layouts},
};

TFD_TEST_MAIN(tests)
