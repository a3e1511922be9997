/* Unit tests for the BFC allocator's bookkeeping (gpu/bfc_allocator.c) over host memory:
 * fits, splits, coalescing, growth, refusals, a random workload checked against a reference
 * model, threads, and bad frees; and the device-memory plumbing the CUDA module relies on
 * (copies carried as the allocator's device_memory, the context accessor, the allocator
 * owning its provider's context), with fake copies over host memory since CI has no GPU. TFDEV_STRESS_ITERS scales the random runs (1000, the
 * default, means 100k steps); under valgrind (TFDEV_UNDER_VALGRIND) they are shorter. */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "gpu/bfc_allocator.h"
#include "runtime/core/allocator_internal.h"
#include "runtime/core/tensor_internal.h"
#include "runtime/testing/harness.h"

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)

/* ---- a region provider over aligned_alloc that records what it hands out ---- */
enum { MAX_REGIONS = 64, MAX_ASKED = 256 };

typedef struct test_provider {
  size_t max_bytes; /* refuse anything larger (0: no cap) */
  bool fail_all;    /* refuse everything */
  bool misalign;    /* hand out memory 64 bytes off a 256-byte boundary */
  int calls, refusals, bad_frees;
  size_t asked[MAX_ASKED]; /* sizes of the regions handed out, in order */
  int num_asked;
  struct {
    char *base, *raw;
    size_t size;
  } live[MAX_REGIONS];
  int num_live;
} test_provider;

static void *tp_alloc(void *ctx, size_t bytes) {
  test_provider *tp = ctx;
  tp->calls++;
  if (tp->fail_all || (tp->max_bytes && bytes > tp->max_bytes) || tp->num_live == MAX_REGIONS) {
    tp->refusals++;
    return NULL;
  }
  char *raw = aligned_alloc(256, bytes + (tp->misalign ? 256 : 0));
  if (!raw) {
    tp->refusals++;
    return NULL;
  }
  char *p = raw + (tp->misalign ? 64 : 0);
  tp->live[tp->num_live].base = p;
  tp->live[tp->num_live].raw = raw;
  tp->live[tp->num_live].size = bytes;
  tp->num_live++;
  if (tp->num_asked < MAX_ASKED) tp->asked[tp->num_asked++] = bytes;
  return p;
}

static void tp_free(void *ctx, void *p, size_t bytes) {
  test_provider *tp = ctx;
  for (int i = 0; i < tp->num_live; i++) {
    if (tp->live[i].base != p) continue;
    if (tp->live[i].size != bytes) tp->bad_frees++;
    free(tp->live[i].raw);
    tp->live[i] = tp->live[--tp->num_live];
    return;
  }
  tp->bad_frees++;
}

/* Whether [p, p + n) lies inside one region the provider handed out. */
static bool tp_contains(const test_provider *tp, const void *p, size_t n) {
  uintptr_t x = (uintptr_t)p;
  for (int i = 0; i < tp->num_live; i++) {
    uintptr_t b = (uintptr_t)tp->live[i].base;
    if (x >= b && x - b <= tp->live[i].size && n <= tp->live[i].size - (x - b)) return true;
  }
  return false;
}

static size_t tp_largest_region(const test_provider *tp) {
  size_t m = 0;
  for (int i = 0; i < tp->num_live; i++)
    if (tp->live[i].size > m) m = tp->live[i].size;
  return m;
}

static tfd_allocator *make(test_provider *tp, const char *name, int64_t limit, bool growth) {
  tfd_bfc_region_provider rp = {tp_alloc, tp_free, tp, NULL};
  tfd_bfc_options o = {.memory_limit = limit, .allow_growth = growth};
  tfd_status *st = tfd_status_new();
  tfd_allocator *a = tfd_bfc_allocator_new(name, &rp, &o, st);
  CHECK(a != NULL);
  CHECK_INT(tfd_status_code(st), TFD_OK);
  tfd_status_free(st);
  return a;
}

#define CHECK_BFC(a)                                                  \
  do {                                                                \
    char why_[512];                                                   \
    bool ok_ = tfd_bfc_allocator_check((a), why_, sizeof why_);       \
    if (!ok_) fprintf(stderr, "consistency check: %s\n", why_);       \
    CHECK(ok_);                                                       \
  } while (0)

static tfd_allocator_stats stats(tfd_allocator *a) {
  tfd_allocator_stats s;
  tfd_allocator_get_stats(a, &s);
  return s;
}

static tfd_bfc_stats bstats(tfd_allocator *a) {
  tfd_bfc_stats s;
  CHECK(tfd_bfc_allocator_stats(a, &s));
  return s;
}

static void *alloc(tfd_allocator *a, size_t n) {
  tfd_status *st = tfd_status_new();
  void *p = tfd_allocator_allocate(a, 64, n, st);
  if (!p) fprintf(stderr, "allocating %zu: %s\n", n, tfd_status_message(st));
  CHECK(p != NULL);
  CHECK_INT(tfd_status_code(st), TFD_OK);
  tfd_status_free(st);
  CHECK_BFC(a);
  return p;
}

static void release(tfd_allocator *a, void *p) {
  tfd_allocator_deallocate(a, p, 0);
  CHECK_BFC(a);
}

/* ---- 1. basics ---- */
static void test_basics(void) {
  test_provider tp = {0};
  tfd_allocator *a = make(&tp, "GPU_0_bfc", (int64_t)MIB, false);
  CHECK(tfd_is_bfc_allocator(a));
  CHECK_STR(tfd_allocator_name(a), "GPU_0_bfc");
  CHECK_INT(bstats(a).num_regions, 0); /* nothing is reserved before the first allocation */
  CHECK_INT(tp.calls, 0);

  char *p = alloc(a, 1);
  CHECK_INT((uintptr_t)p % 256, 0);
  CHECK_INT(tfd_bfc_allocator_allocated_size(a, p), 256);
  CHECK_INT(tfd_bfc_allocator_requested_size(a, p), 1);
  tfd_allocator_stats s = stats(a);
  CHECK_INT(s.num_allocs, 1);
  CHECK_INT(s.bytes_in_use, 256);
  CHECK_INT(s.peak_bytes_in_use, 256);
  CHECK_INT(s.largest_alloc_size, 256);
  CHECK_INT(s.bytes_limit, MIB);
  CHECK_INT(s.num_refused, 0);
  CHECK_INT(s.bytes_cached, MIB - 256);
  tfd_bfc_stats b = bstats(a);
  CHECK_INT(b.num_regions, 1); /* without growth: one region of the whole limit */
  CHECK_INT(b.bytes_reserved, MIB);
  CHECK_INT(b.largest_free_block, MIB - 256);
  CHECK(b.fragmentation == 0.0);
  CHECK(p == tp.live[0].base);

  char *q = alloc(a, 257); /* 512 bytes, right after p: the lowest address that fits */
  CHECK(q == p + 256);
  CHECK_INT(tfd_bfc_allocator_allocated_size(a, q), 512);
  memset(q, 0xab, 257);
  CHECK_INT(stats(a).bytes_in_use, 768);

  /* 0 bytes: a unique 256-byte chunk, counted as such */
  char *z = alloc(a, 0);
  CHECK(z != NULL && z != p && z != q);
  CHECK(z == q + 512);
  CHECK_INT(tfd_bfc_allocator_allocated_size(a, z), 256);
  CHECK_INT(tfd_bfc_allocator_requested_size(a, z), 0);
  char *z2 = alloc(a, 0);
  CHECK(z2 != z);
  release(a, z2);
  s = stats(a);
  CHECK_INT(s.bytes_in_use, 1024);
  CHECK_INT(s.num_allocs, 4);
  CHECK_INT(s.peak_bytes_in_use, 1280);
  CHECK_INT(s.largest_alloc_size, 512);

  /* alignments: up to 256 fine (every pointer is 256-aligned), above it refused */
  tfd_status *st = tfd_status_new();
  char *w = tfd_allocator_allocate(a, 256, 300, st);
  CHECK(w != NULL && (uintptr_t)w % 256 == 0);
  CHECK_INT(tfd_bfc_allocator_allocated_size(a, w), 512);
  release(a, w);
  CHECK(tfd_allocator_allocate(a, 512, 300, st) == NULL);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "alignment 512");
  CHECK(tfd_allocator_allocate(a, 24, 300, st) == NULL);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "GPU_0_bfc");
  CHECK_INT(stats(a).num_refused, 0); /* bad arguments are not refusals */

  release(a, q);
  CHECK_INT(stats(a).bytes_in_use, 512);
  CHECK_INT(tfd_bfc_allocator_allocated_size(a, q), 0);
  release(a, p);
  release(a, z);
  s = stats(a);
  CHECK_INT(s.bytes_in_use, 0);
  CHECK_INT(s.bytes_cached, MIB);
  CHECK_INT(s.peak_bytes_in_use, 1536);
  CHECK_INT(s.num_allocs, 5);
  b = bstats(a);
  CHECK_INT(b.largest_free_block, MIB); /* everything merged back into one chunk */
  CHECK_INT(b.free_bytes, MIB);

  /* the whole region in one allocation */
  char *all = alloc(a, MIB);
  CHECK(all == p);
  CHECK_INT(bstats(a).largest_free_block, 0);
  release(a, all);
  CHECK_INT(tp.num_asked, 1);
  tfd_allocator_unref(a);
  CHECK_INT(tp.num_live, 0); /* destruction gave the region back */
  CHECK_INT(tp.bad_frees, 0);
  tfd_status_free(st);
}

static void test_constructor_and_kind_checks(void) {
  test_provider tp = {0};
  tfd_bfc_region_provider rp = {tp_alloc, tp_free, &tp, NULL};
  tfd_status *st = tfd_status_new();
  tfd_bfc_options o = {.memory_limit = 0};
  CHECK(tfd_bfc_allocator_new("GPU_9_bfc", &rp, &o, st) == NULL);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "Allocator (GPU_9_bfc): memory_limit must be > 0, got 0");
  o.memory_limit = -5;
  CHECK(tfd_bfc_allocator_new("GPU_9_bfc", &rp, &o, st) == NULL);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "got -5");
  o.memory_limit = 1 << 20;
  CHECK(tfd_bfc_allocator_new("GPU_9_bfc", NULL, &o, st) == NULL);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "region provider");
  tfd_bfc_region_provider half = {tp_alloc, NULL, &tp, NULL};
  CHECK(tfd_bfc_allocator_new("GPU_9_bfc", &half, &o, st) == NULL);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "GPU_9_bfc");
  CHECK(tfd_bfc_allocator_new("GPU_9_bfc", &rp, NULL, st) == NULL);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "memory_limit");
  tfd_allocator *d = tfd_bfc_allocator_new(NULL, &rp, &o, st);
  CHECK_STR(tfd_allocator_name(d), "bfc");
  tfd_allocator_unref(d);

  /* the BFC-only calls refuse other allocators */
  tfd_allocator *cpu = tfd_cpu_allocator_new("cpu", 0);
  tfd_bfc_stats b;
  b.num_regions = 7;
  CHECK(!tfd_is_bfc_allocator(cpu));
  CHECK(!tfd_bfc_allocator_stats(cpu, &b));
  CHECK_INT(b.num_regions, 0);
  char why[64];
  CHECK(!tfd_bfc_allocator_check(cpu, why, sizeof why));
  CHECK_CONTAINS(why, "not a BFC allocator");
  CHECK_INT(tfd_bfc_allocator_allocated_size(cpu, why), 0);
  tfd_allocator_unref(cpu);
  CHECK_INT(tp.calls, 0);
  tfd_status_free(st);
}

/* ---- 2. best fit ---- */
static void test_best_fit(void) {
  test_provider tp = {0};
  tfd_allocator *a = make(&tp, "GPU_0_bfc", (int64_t)MIB, false);
  char *keep = alloc(a, 4096);
  char *s1 = alloc(a, 2048); /* bin 3 */
  char *g1 = alloc(a, 256);
  char *s2 = alloc(a, 1024); /* bin 2 */
  char *g2 = alloc(a, 256);
  char *s3 = alloc(a, 3072); /* bin 3 */
  char *g3 = alloc(a, 256);
  char *t1 = alloc(a, 2048);
  char *g4 = alloc(a, 256);
  CHECK(s1 == keep + 4096 && s2 == g1 + 256 && s3 == g2 + 256 && t1 == g3 + 256);
  release(a, s3);
  release(a, s1);
  release(a, s2);
  CHECK_INT(bstats(a).num_regions, 1);

  /* 1536 fits s1 (2048), s3 (3072) and the tail: the smallest, s1, whole (not worth splitting) */
  char *x = alloc(a, 1500);
  CHECK(x == s1);
  CHECK_INT(tfd_bfc_allocator_allocated_size(a, x), 2048);
  CHECK_INT(stats(a).bytes_in_use, 4096 + 2048 + 3 * 256 + 2048 + 256);
  /* 2560 now fits s3 and the tail: s3 */
  char *y = alloc(a, 2500);
  CHECK(y == s3);
  CHECK_INT(tfd_bfc_allocator_allocated_size(a, y), 3072);
  /* 512 takes s2 (1024), split: the other half stays free for the next 512 */
  char *u = alloc(a, 512);
  CHECK(u == s2);
  CHECK_INT(tfd_bfc_allocator_allocated_size(a, u), 512);
  char *v = alloc(a, 400);
  CHECK(v == s2 + 512);

  /* ties go to the lower address, whatever order the chunks were freed in */
  release(a, t1);
  release(a, x); /* s1: 2048 bytes at a lower address than t1 */
  char *lo = alloc(a, 2048);
  CHECK(lo == s1);
  char *hi = alloc(a, 2048);
  CHECK(hi == t1);

  /* a chunk much larger than the request is split: the tail */
  char *big = alloc(a, 10000);
  CHECK(big == g4 + 256);
  CHECK_INT(tfd_bfc_allocator_allocated_size(a, big), 10240);

  char *all[] = {keep, g1, g2, g3, g4, y, u, v, lo, hi, big};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) release(a, all[i]);
  CHECK_INT(stats(a).bytes_in_use, 0);
  CHECK_INT(bstats(a).largest_free_block, MIB);
  tfd_allocator_unref(a);
  CHECK_INT(tp.num_live, 0);
}

/* ---- 3. coalescing ---- */
static void test_coalescing(void) {
  test_provider tp = {0};
  tfd_status *st = tfd_status_new();
  /* without growth: the merged block is needed, nothing else could serve it */
  tfd_allocator *a = make(&tp, "GPU_0_bfc", (int64_t)MIB, false);
  char *A = alloc(a, 256 * KIB), *B = alloc(a, 256 * KIB), *C = alloc(a, 256 * KIB), *D = alloc(a, 256 * KIB);
  CHECK(B == A + 256 * KIB && C == B + 256 * KIB && D == C + 256 * KIB);
  CHECK_INT(bstats(a).largest_free_block, 0);
  release(a, A);
  release(a, C);
  CHECK_INT(bstats(a).largest_free_block, 256 * KIB);
  CHECK(tfd_allocator_allocate(a, 64, 768 * KIB, st) == NULL);
  CHECK_STATUS(st, TFD_RESOURCE_EXHAUSTED, "largest free block 256.00KiB");
  release(a, B); /* merges with both neighbours */
  tfd_bfc_stats b = bstats(a);
  CHECK_INT(b.largest_free_block, 768 * KIB);
  CHECK(b.fragmentation == 0.0);
  char *abc = alloc(a, 768 * KIB);
  CHECK(abc == A);
  release(a, abc);
  release(a, D); /* merges with its left neighbour only */
  CHECK_INT(bstats(a).largest_free_block, MIB);
  tfd_allocator_unref(a);

  /* with growth: the merged block is used instead of a new region */
  a = make(&tp, "GPU_1_bfc", (int64_t)(16 * MIB), true);
  A = alloc(a, 512 * KIB), B = alloc(a, 512 * KIB), C = alloc(a, 512 * KIB), D = alloc(a, 512 * KIB);
  b = bstats(a);
  CHECK_INT(b.num_regions, 1);
  CHECK_INT(b.bytes_reserved, 2 * MIB);
  release(a, A);
  release(a, C);
  release(a, B);
  abc = alloc(a, 1536 * KIB);
  CHECK(abc == A);
  b = bstats(a);
  CHECK_INT(b.num_regions, 1);
  CHECK_INT(b.bytes_reserved, 2 * MIB);
  release(a, abc);
  release(a, D);
  tfd_allocator_unref(a);
  CHECK_INT(tp.num_live, 0);
  tfd_status_free(st);
}

/* ---- 4. fragmentation ---- */
static void test_fragmentation(void) {
  test_provider tp = {0};
  tfd_status *st = tfd_status_new();
  tfd_allocator *a = make(&tp, "GPU_0_bfc", (int64_t)MIB, false);
  char *blocks[64];
  for (int i = 0; i < 64; i++) blocks[i] = alloc(a, 16 * KIB);
  for (int i = 0; i < 64; i += 2) release(a, blocks[i]);
  tfd_bfc_stats b = bstats(a);
  CHECK_INT(b.largest_free_block, 16 * KIB);
  CHECK_INT(b.free_bytes, 512 * KIB);
  CHECK(b.fragmentation > 0.968 && b.fragmentation < 0.969); /* 1 - 16/512 */
  tfd_allocator_stats before = stats(a);

  CHECK(tfd_allocator_allocate(a, 64, 64 * KIB, st) == NULL);
  CHECK_INT(tfd_status_code(st), TFD_RESOURCE_EXHAUSTED);
  const char *m = tfd_status_message(st);
  CHECK_CONTAINS(m, "Allocator (GPU_0_bfc) ran out of memory trying to allocate 64.00KiB (65536 bytes, rounded to "
                    "65536)");
  CHECK_CONTAINS(m, "512.00KiB in use of 1.00MiB limit");
  CHECK_CONTAINS(m, "largest free block 16.00KiB");
  CHECK_CONTAINS(m, "no room under the limit");
  tfd_status_reset(st);
  CHECK(tfd_allocator_allocate(a, 64, 65436, st) == NULL);
  CHECK_STATUS(st, TFD_RESOURCE_EXHAUSTED, "(65436 bytes, rounded to 65536)");
  CHECK_BFC(a);
  tfd_allocator_stats after = stats(a);
  CHECK_INT(after.num_refused, 2);
  CHECK_INT(after.num_allocs, before.num_allocs);
  CHECK_INT(after.bytes_in_use, before.bytes_in_use);
  CHECK_INT(bstats(a).num_regions, 1);

  /* free 1, 3, 5: chunks 0..6 merge into 112 KiB, which serves the request */
  for (int i = 1; i <= 5; i += 2) release(a, blocks[i]);
  CHECK_INT(bstats(a).largest_free_block, 112 * KIB);
  char *p = alloc(a, 64 * KIB);
  CHECK(p == blocks[0]);
  release(a, p);
  for (int i = 7; i < 64; i += 2) release(a, blocks[i]);
  CHECK_INT(stats(a).bytes_in_use, 0);
  tfd_allocator_unref(a);
  tfd_status_free(st);
}

/* ---- 5. growth, limits, a refusing provider ---- */
static void test_growth(void) {
  test_provider tp = {0};
  tfd_status *st = tfd_status_new();
  tfd_allocator *a = make(&tp, "GPU_0_bfc", (int64_t)(64 * MIB), true);
  char *p[16];
  int n = 0;
  p[n++] = alloc(a, MIB);
  CHECK_INT(bstats(a).num_regions, 1);
  CHECK_INT(bstats(a).bytes_reserved, 2 * MIB);
  p[n++] = alloc(a, MIB);
  CHECK_INT(bstats(a).num_regions, 1);
  p[n++] = alloc(a, MIB);
  CHECK_INT(bstats(a).num_regions, 2);
  CHECK_INT(bstats(a).bytes_reserved, 6 * MIB);
  for (int i = 0; i < 3; i++) p[n++] = alloc(a, MIB);
  CHECK_INT(bstats(a).num_regions, 2);
  p[n++] = alloc(a, MIB);
  CHECK_INT(bstats(a).num_regions, 3);
  CHECK_INT(bstats(a).bytes_reserved, 14 * MIB);
  /* 20 MiB: the next size (16 MiB) doubles until it fits; 12 MiB of slack is not worth a split */
  p[n++] = alloc(a, 20 * MIB);
  CHECK_INT(bstats(a).bytes_reserved, 46 * MIB);
  CHECK_INT(tfd_bfc_allocator_allocated_size(a, p[n - 1]), 32 * MIB);
  /* 16 MiB: 32 MiB would pass the limit, so the region is what is left */
  p[n++] = alloc(a, 16 * MIB);
  CHECK_INT(tfd_bfc_allocator_allocated_size(a, p[n - 1]), 18 * MIB);
  tfd_bfc_stats b = bstats(a);
  CHECK_INT(b.num_regions, 5);
  CHECK_INT(b.bytes_reserved, 64 * MIB);
  CHECK_INT(tp.num_asked, 5);
  size_t want[] = {2 * MIB, 4 * MIB, 8 * MIB, 32 * MIB, 18 * MIB};
  for (int i = 0; i < 5 && i < tp.num_asked; i++) CHECK_INT(tp.asked[i], want[i]);
  /* reserved is at the limit: what does not fit in a free chunk is refused */
  p[n++] = alloc(a, 7 * MIB); /* the 8 MiB region's free 7 MiB */
  CHECK_INT(stats(a).bytes_in_use, 64 * MIB);
  CHECK(tfd_allocator_allocate(a, 64, 13 * MIB, st) == NULL);
  CHECK_INT(tfd_status_code(st), TFD_RESOURCE_EXHAUSTED);
  CHECK_CONTAINS(tfd_status_message(st), "13.00MiB (13631488 bytes, rounded to 13631488); 64.00MiB in use of "
                                         "64.00MiB limit, 64.00MiB reserved in 5 regions, largest free block 0B");
  tfd_status_reset(st);
  CHECK_INT(stats(a).num_refused, 1);
  CHECK_INT(bstats(a).bytes_reserved, 64 * MIB);

  /* trim gives back regions with nothing in use only */
  release(a, p[8]); /* the 16 MiB one: its 18 MiB region is now empty */
  tfd_allocator_trim(a);
  CHECK_BFC(a);
  b = bstats(a);
  CHECK_INT(b.num_regions, 4);
  CHECK_INT(b.bytes_reserved, 46 * MIB);
  CHECK_INT(tp.num_live, 4);
  for (int i = 0; i < n; i++)
    if (i != 8) release(a, p[i]);
  tfd_allocator_trim(a);
  CHECK_BFC(a);
  CHECK_INT(bstats(a).num_regions, 0);
  CHECK_INT(tp.num_live, 0);
  char *again = alloc(a, MIB); /* and grows again afterwards */
  CHECK_INT(bstats(a).num_regions, 1);
  release(a, again);
  tfd_allocator_unref(a);
  CHECK_INT(tp.bad_frees, 0);

  /* a limit under 2 MiB with growth: one region of the limit */
  test_provider small = {0};
  a = make(&small, "GPU_1_bfc", (int64_t)(MIB + 100), true);
  char *s = alloc(a, 10);
  CHECK_INT(small.asked[0], MIB); /* the limit rounded down to 256 bytes */
  CHECK(tfd_allocator_allocate(a, 64, MIB, st) == NULL);
  CHECK_STATUS(st, TFD_RESOURCE_EXHAUSTED, "GPU_1_bfc");
  release(a, s);
  tfd_allocator_unref(a);

  /* without growth: one region of the whole limit, never a second */
  test_provider one = {0};
  a = make(&one, "GPU_2_bfc", (int64_t)(10 * MIB + 100), false);
  char *q[10];
  for (int i = 0; i < 10; i++) q[i] = alloc(a, MIB);
  CHECK_INT(one.num_asked, 1);
  CHECK_INT(one.asked[0], 10 * MIB);
  CHECK(tfd_allocator_allocate(a, 64, 1, st) == NULL);
  CHECK_STATUS(st, TFD_RESOURCE_EXHAUSTED, "trying to allocate 1B (1 bytes, rounded to 256)");
  CHECK_INT(bstats(a).num_regions, 1);
  for (int i = 0; i < 10; i++) release(a, q[i]);
  tfd_allocator_unref(a);
  tfd_status_free(st);
}

static void test_refusing_provider(void) {
  tfd_status *st = tfd_status_new();
  /* The provider refuses over 10 MiB: the first region steps down by 10% until it fits. */
  test_provider tp = {.max_bytes = 10 * MIB};
  tfd_allocator *a = make(&tp, "GPU_0_bfc", (int64_t)(64 * MIB), false);
  char *p[16];
  int n = 0;
  p[n++] = alloc(a, MIB);
  tfd_bfc_stats b = bstats(a);
  CHECK_INT(b.num_regions, 1);
  CHECK(b.bytes_reserved > (int64_t)(9 * MIB) && b.bytes_reserved <= (int64_t)(10 * MIB));
  CHECK_INT(b.bytes_reserved % 256, 0);
  CHECK_INT(tp.refusals, 18); /* 64 MiB * 0.9^k > 10 MiB for k < 18 */
  /* fill the region; the next region is refused (the step-down happens once, as in TensorFlow) */
  void *last = NULL;
  while (n < 16 && (last = tfd_allocator_allocate(a, 64, MIB, st)) != NULL) p[n++] = last;
  CHECK(last == NULL);
  CHECK_INT(n, 9);
  CHECK_STATUS(st, TFD_RESOURCE_EXHAUSTED, "the region provider refused");
  CHECK_BFC(a);
  CHECK_INT(bstats(a).num_regions, 1);
  CHECK_INT(stats(a).num_refused, 1);
  CHECK_INT(stats(a).bytes_in_use, bstats(a).bytes_reserved); /* the ninth took the rest, not worth splitting */
  for (int i = 0; i < n; i++) release(a, p[i]);
  tfd_allocator_unref(a);
  CHECK_INT(tp.num_live, 0);

  /* A provider that refuses everything: clean failures, nothing held, and the step-down
   * ends even where 90% of a size rounds back up to it (2304 -> 2073.6 -> 2304). */
  test_provider none = {.fail_all = true};
  a = make(&none, "GPU_1_bfc", 2560, false);
  CHECK(tfd_allocator_allocate(a, 64, 1, st) == NULL);
  CHECK_STATUS(st, TFD_RESOURCE_EXHAUSTED, "Allocator (GPU_1_bfc) ran out of memory");
  CHECK_BFC(a);
  CHECK_INT(bstats(a).num_regions, 0);
  CHECK_INT(none.calls, 10); /* 2560, 2304, 2048, ..., 256 bytes */
  int calls = none.calls;
  CHECK(tfd_allocator_allocate(a, 64, 1, st) == NULL); /* no second step-down */
  CHECK_STATUS(st, TFD_RESOURCE_EXHAUSTED, "the region provider refused 2560 bytes");
  CHECK_INT(none.calls, calls + 1);
  none.fail_all = false; /* the device has memory again */
  char *q = alloc(a, 1);
  CHECK_INT(bstats(a).bytes_reserved, 2560);
  release(a, q);
  CHECK_INT(stats(a).num_refused, 2);
  tfd_allocator_unref(a);
  CHECK_INT(none.num_live, 0);

  /* A provider breaking the alignment contract: refused as an internal error, memory returned. */
  test_provider crooked = {.misalign = true};
  a = make(&crooked, "GPU_2_bfc", (int64_t)MIB, false);
  CHECK(tfd_allocator_allocate(a, 64, 1, st) == NULL);
  CHECK_STATUS(st, TFD_INTERNAL, "not 256-byte aligned");
  CHECK_INT(crooked.num_live, 0);
  CHECK_BFC(a);
  tfd_allocator_unref(a);
  tfd_status_free(st);
}

/* ---- 6. a random workload against a reference model ---- */
static uint64_t rng_next(uint64_t *s) { /* xorshift64* */
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 0x2545F4914F6CDD1DULL;
}

static size_t random_size(uint64_t *s) {
  uint64_t r = rng_next(s);
  unsigned pick = (unsigned)(r % 1000);
  if (pick < 5) return 0;
  if (pick < 10) return (size_t)(1 + (rng_next(s) % (8 * MIB))); /* large: up to 8 MiB */
  if (pick < 100) return (size_t)(64 * KIB + rng_next(s) % (MIB - 64 * KIB + 1));
  /* log-uniform from 1 byte to 64 KiB */
  int bits = (int)(rng_next(s) % 16);
  return (size_t)(1 + rng_next(s) % ((uint64_t)2 << bits));
}

/* The bytes a block holds, derived from its seed; large blocks are filled at both ends and
 * in a stripe every 4 KiB, which is where a neighbour's overlap would show. */
static uint8_t pattern(uint64_t seed, size_t i) { return (uint8_t)((seed >> (i % 7 * 8)) ^ (i * 131) ^ (i >> 9)); }

static size_t next_filled(size_t n, size_t i) {
  if (n <= 4096 || i < 2048 || i >= n - 2048 || i % 4096 < 64) return i;
  size_t stripe = (i / 4096 + 1) * 4096;
  return stripe < n - 2048 ? stripe : n - 2048;
}

static void fill(uint8_t *p, size_t n, uint64_t seed) {
  for (size_t i = next_filled(n, 0); i < n; i = next_filled(n, i + 1)) p[i] = pattern(seed, i);
}

static bool intact(const uint8_t *p, size_t n, uint64_t seed) {
  for (size_t i = next_filled(n, 0); i < n; i = next_filled(n, i + 1))
    if (p[i] != pattern(seed, i)) return false;
  return true;
}

static int stress_scale(int base) {
  const char *env = getenv("TFDEV_STRESS_ITERS");
  int n = env ? atoi(env) : 0;
  if (n > 0) return (int)((int64_t)base * n / 1000 > 0 ? (int64_t)base * n / 1000 : 1);
  return getenv("TFDEV_UNDER_VALGRIND") ? base / 20 : base;
}

typedef struct live_block {
  uint8_t *p;
  size_t size, allocated;
  uint64_t seed;
} live_block;

enum { MAX_LIVE = 512 };

static void random_run(bool growth, int64_t limit, int steps, uint64_t seed) {
  test_provider tp = {0};
  tfd_allocator *a = make(&tp, growth ? "GPU_grow_bfc" : "GPU_fixed_bfc", limit, growth);
  tfd_status *st = tfd_status_new();
  live_block *live = calloc(MAX_LIVE, sizeof *live);
  int nlive = 0, failures = 0, bad = 0;
  int64_t successes = 0, sum = 0;
  uint64_t s = seed;
  for (int step = 0; step < steps && bad < 5; step++) {
    int before = tfd_test_failed_checks;
    uint64_t r = rng_next(&s);
    bool do_alloc = nlive < 16 || (nlive < MAX_LIVE && r % 100 < 52);
    if (do_alloc) {
      size_t n = random_size(&s);
      size_t rounded = n ? (n + 255) / 256 * 256 : 256;
      uint8_t *p = tfd_allocator_allocate(a, 64, n, st);
      if (!p) {
        /* a refusal must be honest: no free chunk fits and no region may be added */
        CHECK_INT(tfd_status_code(st), TFD_RESOURCE_EXHAUSTED);
        CHECK_CONTAINS(tfd_status_message(st), "ran out of memory");
        tfd_bfc_stats b = bstats(a);
        CHECK(b.largest_free_block < (int64_t)rounded);
        CHECK(b.bytes_reserved + (int64_t)rounded > limit);
        tfd_status_reset(st);
        failures++;
      } else {
        successes++;
        size_t got = tfd_bfc_allocator_allocated_size(a, p);
        CHECK_INT((uintptr_t)p % 256, 0);
        CHECK_INT(tfd_bfc_allocator_requested_size(a, p), n);
        CHECK(got == rounded || (got < 2 * rounded && got - rounded < 128 * MIB));
        CHECK_INT(got % 256, 0);
        CHECK(tp_contains(&tp, p, got));
        for (int i = 0; i < nlive; i++) {
          bool apart = p + got <= live[i].p || live[i].p + live[i].allocated <= p;
          if (!apart) fprintf(stderr, "step %d: [%p, +%zu) overlaps [%p, +%zu)\n", step, (void *)p, got,
                              (void *)live[i].p, live[i].allocated);
          CHECK(apart);
        }
        live[nlive] = (live_block){p, n, got, rng_next(&s)};
        fill(p, n, live[nlive].seed);
        nlive++;
        sum += (int64_t)got;
      }
    } else {
      int i = (int)((r >> 32) % (uint64_t)nlive);
      CHECK(intact(live[i].p, live[i].size, live[i].seed));
      tfd_allocator_deallocate(a, live[i].p, live[i].size);
      CHECK_INT(tfd_bfc_allocator_allocated_size(a, live[i].p), 0);
      sum -= (int64_t)live[i].allocated;
      live[i] = live[--nlive];
    }
    tfd_allocator_stats as = stats(a);
    CHECK_INT(as.bytes_in_use, sum);
    CHECK(as.bytes_cached >= 0 && as.bytes_in_use + as.bytes_cached <= limit);
    CHECK_BFC(a);
    if (tfd_test_failed_checks != before) {
      fprintf(stderr, "random run (growth %d, seed %llu): step %d failed\n", growth, (unsigned long long)seed, step);
      bad++;
    }
  }
  tfd_allocator_stats as = stats(a);
  CHECK_INT(as.num_allocs, successes);
  CHECK_INT(as.num_refused, failures);
  CHECK(failures < steps / 4); /* the workload mostly fits */
  while (nlive > 0) {
    nlive--;
    CHECK(intact(live[nlive].p, live[nlive].size, live[nlive].seed));
    tfd_allocator_deallocate(a, live[nlive].p, live[nlive].size);
  }
  CHECK_BFC(a);
  as = stats(a);
  tfd_bfc_stats b = bstats(a);
  CHECK_INT(as.bytes_in_use, 0);
  CHECK(b.bytes_reserved <= limit);
  CHECK_INT(b.num_regions, tp.num_live);
  CHECK_INT(b.largest_free_block, tp_largest_region(&tp)); /* every region merged back into one chunk */
  CHECK_INT(b.num_bad_frees, 0);
  if (!growth) CHECK_INT(b.num_regions, 1);
  tfd_allocator_trim(a);
  CHECK_INT(tp.num_live, 0);
  tfd_allocator_unref(a);
  CHECK_INT(tp.bad_frees, 0);
  printf("     random (growth %d): %d steps, %" PRId64 " allocations, %d refused, peak %" PRId64 " bytes\n", growth,
         steps, successes, failures, as.peak_bytes_in_use);
  free(live);
  tfd_status_free(st);
}

static void test_random_workload(void) {
  int steps = stress_scale(100000);
  random_run(true, (int64_t)(96 * MIB), steps, 0x9e3779b97f4a7c15ULL);
  random_run(false, (int64_t)(48 * MIB), steps / 4, 12345);
}

/* ---- 7. threads ---- */
typedef struct worker {
  tfd_allocator *a;
  int steps;
  uint64_t seed;
  int64_t allocs, refused, corrupt;
} worker;

static void *work(void *arg) {
  worker *w = arg;
  tfd_status *st = tfd_status_new();
  live_block live[64];
  int nlive = 0;
  uint64_t s = w->seed;
  for (int step = 0; step < w->steps; step++) {
    uint64_t r = rng_next(&s);
    if (nlive < 64 && (nlive == 0 || r % 2)) {
      size_t n = (size_t)(1 + rng_next(&s) % ((uint64_t)2 << (rng_next(&s) % 18)));
      uint8_t *p = tfd_allocator_allocate(w->a, 64, n, st);
      if (!p) {
        w->refused++;
        tfd_status_reset(st);
        continue;
      }
      w->allocs++;
      live[nlive] = (live_block){p, n, 0, rng_next(&s)};
      fill(p, n, live[nlive].seed);
      nlive++;
    } else {
      int i = (int)((r >> 32) % (uint64_t)nlive);
      if (!intact(live[i].p, live[i].size, live[i].seed)) w->corrupt++;
      tfd_allocator_deallocate(w->a, live[i].p, live[i].size);
      live[i] = live[--nlive];
    }
  }
  while (nlive > 0) {
    nlive--;
    if (!intact(live[nlive].p, live[nlive].size, live[nlive].seed)) w->corrupt++;
    tfd_allocator_deallocate(w->a, live[nlive].p, live[nlive].size);
  }
  tfd_status_free(st);
  return NULL;
}

static void test_threads(void) {
  test_provider tp = {0};
  tfd_allocator *a = make(&tp, "GPU_0_bfc", (int64_t)(64 * MIB), true);
  enum { THREADS = 4 };
  worker w[THREADS];
  pthread_t t[THREADS];
  int steps = stress_scale(20000);
  for (int i = 0; i < THREADS; i++) {
    w[i] = (worker){a, steps, 1000u + (uint64_t)i * 7919u, 0, 0, 0};
    CHECK_INT(pthread_create(&t[i], NULL, work, &w[i]), 0);
  }
  /* the checker and the statistics, meanwhile, from this thread */
  for (int i = 0; i < 20; i++) {
    CHECK_BFC(a);
    tfd_bfc_stats b = bstats(a);
    CHECK(b.bytes_reserved <= (int64_t)(64 * MIB));
    nanosleep(&(struct timespec){0, 2000000}, NULL);
  }
  int64_t allocs = 0, refused = 0;
  for (int i = 0; i < THREADS; i++) {
    pthread_join(t[i], NULL);
    allocs += w[i].allocs;
    refused += w[i].refused;
    CHECK_INT(w[i].corrupt, 0);
  }
  CHECK_BFC(a);
  tfd_allocator_stats s = stats(a);
  CHECK_INT(s.bytes_in_use, 0);
  CHECK_INT(s.num_allocs, allocs);
  CHECK_INT(s.num_refused, refused);
  CHECK(s.peak_bytes_in_use > 0 && s.peak_bytes_in_use <= 64 * (int64_t)MIB);
  tfd_bfc_stats b = bstats(a);
  CHECK_INT(b.free_bytes, b.bytes_reserved);
  CHECK_INT(b.largest_free_block, tp_largest_region(&tp));
  tfd_allocator_unref(a);
  CHECK_INT(tp.num_live, 0);
}

/* ---- 8. bad frees ---- */
static void test_bad_free(void) {
  test_provider tp = {0};
  tfd_allocator *a = make(&tp, "GPU_0_bfc", (int64_t)MIB, false);
  char *p = alloc(a, 1000), *q = alloc(a, 1000);
  tfd_allocator_stats before = stats(a);
  int on_stack;
  void *heap = malloc(64);
  fprintf(stderr, "(four deallocation reports expected below)\n");
  tfd_allocator_deallocate(a, &on_stack, 4);  /* not from this allocator */
  tfd_allocator_deallocate(a, heap, 64);      /* likewise */
  tfd_allocator_deallocate(a, p + 256, 1000); /* inside a chunk in use */
  CHECK_BFC(a);
  tfd_allocator_stats mid = stats(a);
  CHECK_INT(mid.bytes_in_use, before.bytes_in_use);
  CHECK_INT(tfd_bfc_allocator_allocated_size(a, p), 1024);
  release(a, p);
  tfd_allocator_deallocate(a, p, 1000); /* a double free */
  CHECK_BFC(a);
  CHECK_INT(bstats(a).num_bad_frees, 4);
  CHECK_INT(stats(a).bytes_in_use, 1024);
  /* p's chunk is free exactly once: it is handed out once */
  char *r = alloc(a, 1000), *s = alloc(a, 1000);
  CHECK(r == p);
  CHECK(s != p && s != q);
  release(a, r);
  release(a, s);
  release(a, q);
  CHECK_INT(stats(a).bytes_in_use, 0);
  CHECK_INT(bstats(a).largest_free_block, MIB);
  free(heap);
  tfd_allocator_unref(a);
  CHECK_INT(tp.num_live, 0);
}

/* Destroying with blocks still out returns every region (and leaks nothing, under ASan). */
static void test_destroy_with_live_blocks(void) {
  test_provider tp = {0};
  tfd_allocator *a = make(&tp, "GPU_0_bfc", (int64_t)(32 * MIB), true);
  for (int i = 0; i < 10; i++) (void)alloc(a, MIB);
  CHECK(tp.num_live > 1);
  tfd_allocator_trim(a); /* nothing wholly free: nothing returned */
  CHECK_INT(bstats(a).num_regions, tp.num_live);
  tfd_allocator_unref(a);
  CHECK_INT(tp.num_live, 0);
  CHECK_INT(tp.bad_frees, 0);
}

/* ---- 9. device memory: fake copies over host memory ---- */
/* A fake device: its "memory" is host memory holding every byte XORed with 0x5a, so a
 * round trip only comes out right when the runtime moved the bytes through the copies and
 * never read or wrote the buffers itself. from_host keeps release pending, as a stream
 * still reading src would, until the test completes it. */
typedef struct fake_device {
  test_provider tp; /* first: the region provider's ctx is the fake device */
  int to_host_calls, from_host_calls, releases_of_ctx;
  int live_regions_at_release; /* what the allocator still held when it released ctx */
  bool fail_copies;
  void (*pending_fn)(void *);
  void *pending_arg;
  int pending_released;
} fake_device;

static void fake_copy(void *dst, const void *src, size_t bytes) {
  const unsigned char *s = src;
  unsigned char *d = dst;
  for (size_t i = 0; i < bytes; i++) d[i] = s[i] ^ 0x5a;
}

static tfd_code fake_to_host(tfd_allocator *a, void *dst, const void *src, size_t bytes, tfd_status *st) {
  fake_device *fd = tfd_bfc_allocator_context(a);
  fd->to_host_calls++;
  if (fd->fail_copies) return tfd_status_setf(st, TFD_INTERNAL, "fake device: to_host refused");
  fake_copy(dst, src, bytes);
  return TFD_OK;
}

static tfd_code fake_from_host(tfd_allocator *a, void *dst, const void *src, size_t bytes, void (*done)(void *),
                               void *arg, tfd_status *st) {
  fake_device *fd = tfd_bfc_allocator_context(a);
  fd->from_host_calls++;
  if (fd->fail_copies) {
    done(arg); /* the contract: released on failure too */
    return tfd_status_setf(st, TFD_INTERNAL, "fake device: from_host refused");
  }
  fake_copy(dst, src, bytes);
  CHECK(fd->pending_fn == NULL);
  fd->pending_fn = done;
  fd->pending_arg = arg;
  return TFD_OK;
}

static void fake_complete(fake_device *fd) { /* the "stream" passes the copy */
  if (!fd->pending_fn) return;
  void (*fn)(void *) = fd->pending_fn;
  fd->pending_fn = NULL;
  fn(fd->pending_arg);
  fd->pending_released++;
}

static void fake_release_ctx(void *ctx) {
  fake_device *fd = ctx;
  fd->releases_of_ctx++;
  fd->live_regions_at_release = fd->tp.num_live;
}

static const tfd_device_memory_ops fake_ops = {fake_to_host, fake_from_host};

static void test_device_memory_plumbing(void) {
  tfd_status *st = tfd_status_new();
  fake_device fd = {0};
  tfd_bfc_region_provider rp = {tp_alloc, tp_free, &fd, fake_release_ctx};
  tfd_bfc_options o = {.memory_limit = (int64_t)MIB, .device_memory = &fake_ops};
  tfd_allocator *a = tfd_bfc_allocator_new("GPU_0_bfc", &rp, &o, st);
  CHECK(a != NULL);
  if (!a) goto out;
  CHECK(a->device_memory == &fake_ops);
  CHECK(tfd_bfc_allocator_context(a) == &fd);
  CHECK(tfd_bfc_allocator_context(NULL) == NULL);

  /* host -> device -> host through the copies */
  float v[5] = {1.5f, -2, 3, 1e-3f, 42};
  int64_t dims[] = {5};
  tfd_tensor *h = NULL;
  tfd_tensor_from_bytes(NULL, TFD_FLOAT32, dims, 1, v, sizeof v, &h, st);
  tfd_tensor *d = tfd_tensor_copy_to(h, a, st);
  CHECK(d != NULL);
  if (!d) goto out;
  CHECK(!tfd_tensor_on_host(d));
  CHECK_INT(fd.from_host_calls, 1);
  CHECK(fd.pending_fn != NULL); /* the device still holds the source */
  tfd_tensor_unref(h);          /* ... so dropping ours must not free it: ASan would see */
  fake_complete(&fd);
  CHECK_INT(tfd_bfc_allocator_requested_size(a, tfd_tensor_const_data(d)), sizeof v);
  tfd_tensor *same = tfd_tensor_copy_to(d, a, st); /* already there: no copy */
  CHECK(same == d);
  tfd_tensor_unref(same);
  tfd_tensor *back = tfd_tensor_copy_to(d, NULL, st);
  CHECK(back && tfd_tensor_on_host(back));
  CHECK_INT(fd.to_host_calls, 1);
  if (back) CHECK(memcmp(tfd_tensor_const_data(back), v, sizeof v) == 0);
  tfd_tensor_unref(back);
  /* from_bytes straight into device memory goes through the host and the copy */
  tfd_tensor *d2 = NULL;
  tfd_tensor_from_bytes(a, TFD_FLOAT32, dims, 1, v, sizeof v, &d2, st);
  CHECK(d2 && !tfd_tensor_on_host(d2));
  fake_complete(&fd);
  back = d2 ? tfd_tensor_copy_to(d2, NULL, st) : NULL;
  if (back) CHECK(memcmp(tfd_tensor_const_data(back), v, sizeof v) == 0);
  tfd_tensor_unref(back);
  tfd_tensor_unref(d2);
  /* zero bytes: no copy at all */
  int64_t none[] = {0};
  tfd_tensor *e = NULL;
  tfd_tensor_new(NULL, TFD_FLOAT32, none, 1, &e, st);
  tfd_tensor *de = tfd_tensor_copy_to(e, a, st);
  CHECK(de != NULL);
  CHECK_INT(fd.from_host_calls, 2);
  tfd_tensor_unref(de);

  /* failing copies: NULL with the device's status, the source released all the same */
  fd.fail_copies = true;
  tfd_tensor *h2 = NULL;
  tfd_tensor_from_bytes(NULL, TFD_FLOAT32, dims, 1, v, sizeof v, &h2, NULL);
  CHECK(tfd_tensor_copy_to(h2, a, st) == NULL);
  CHECK_STATUS(st, TFD_INTERNAL, "from_host refused");
  CHECK(tfd_tensor_copy_to(d, NULL, st) == NULL);
  CHECK_STATUS(st, TFD_INTERNAL, "to_host refused");
  fd.fail_copies = false;
  tfd_tensor_unref(h2);
  tfd_tensor_unref(e);
  CHECK_INT(stats(a).bytes_in_use, (int64_t)tfd_bfc_allocator_allocated_size(a, tfd_tensor_const_data(d)));

  /* ownership: the tensor outlives our reference to the allocator, which keeps the context */
  tfd_allocator_unref(a);
  CHECK_INT(fd.releases_of_ctx, 0);
  tfd_tensor_unref(d); /* the last reference: the regions go back, then the context */
  CHECK_INT(fd.releases_of_ctx, 1);
  CHECK_INT(fd.live_regions_at_release, 0);
  CHECK_INT(fd.pending_released, 2);

  /* copies missing a direction are refused, and a refused allocator leaves ctx to the caller */
  fake_device other = {0};
  tfd_bfc_region_provider orp = {tp_alloc, tp_free, &other, fake_release_ctx};
  tfd_device_memory_ops half = {fake_to_host, NULL};
  tfd_bfc_options ho = {.memory_limit = (int64_t)MIB, .device_memory = &half};
  CHECK(tfd_bfc_allocator_new("GPU_1_bfc", &orp, &ho, st) == NULL);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "GPU_1_bfc");
  CHECK_INT(other.releases_of_ctx, 0);
  /* without release the caller keeps ctx, as before */
  tfd_bfc_region_provider borrowed = {tp_alloc, tp_free, &other, NULL};
  tfd_allocator *b = tfd_bfc_allocator_new("GPU_1_bfc", &borrowed, &o, st);
  CHECK(b != NULL);
  if (b) tfd_allocator_unref(b);
  CHECK_INT(other.releases_of_ctx, 0);
out:
  tfd_status_free(st);
}

/* ---- 13. a hold hook (a CUDA graph being recorded) puts frees off until release ---- */
typedef struct holder {
  bool holding;
  int held;
  void *ptr[4];
  size_t size[4];
} holder;

static bool hold_it(void *ctx, tfd_allocator *a, void *ptr, size_t size) {
  holder *h = ctx;
  (void)a;
  if (!h->holding || h->held == 4) return false;
  h->ptr[h->held] = ptr, h->size[h->held++] = size;
  return true;
}

static void test_hold(void) {
  test_provider tp = {0};
  holder h = {0};
  tfd_bfc_region_provider rp = {tp_alloc, tp_free, &tp, NULL};
  tfd_bfc_options o = {.memory_limit = (int64_t)MIB, .hold = hold_it, .hold_ctx = &h};
  tfd_status *st = tfd_status_new();
  tfd_allocator *a = tfd_bfc_allocator_new("GPU_0_bfc", &rp, &o, st);
  CHECK(a != NULL);
  if (!a) goto out;
  void *p = alloc(a, 4096);
  release(a, p); /* not holding: back at once, and the same chunk comes out again */
  CHECK_INT(stats(a).bytes_in_use, 0);
  void *q = alloc(a, 4096);
  CHECK(q == p);
  h.holding = true;
  release(a, q); /* held: still in use, and never handed out again meanwhile */
  CHECK_INT(h.held, 1);
  CHECK(h.ptr[0] == q);
  CHECK_INT(stats(a).bytes_in_use, 4096);
  void *r = alloc(a, 4096);
  CHECK(r != q);
  h.holding = false;
  release(a, r);
  tfd_bfc_allocator_release(a, h.ptr[0], h.size[0]);
  CHECK_INT(stats(a).bytes_in_use, 0);
  CHECK_BFC(a);
  tfd_allocator_unref(a);
out:
  tfd_status_free(st);
}

static const tfd_test tests[] = {
    {"basics: rounding, alignment, zero bytes, stats", test_basics},
    {"constructor errors and kind checks", test_constructor_and_kind_checks},
    {"best fit, splits, ties by address", test_best_fit},
    {"coalescing", test_coalescing},
    {"fragmentation and refusal", test_fragmentation},
    {"growth, limits and trim", test_growth},
    {"refusing provider: step-down, clean failure", test_refusing_provider},
    {"random workload against a reference model", test_random_workload},
    {"threads", test_threads},
    {"bad frees are reported and ignored", test_bad_free},
    {"destroy with live blocks", test_destroy_with_live_blocks},
    {"device memory: copies, context, ownership", test_device_memory_plumbing},
    {"hold hook: frees put off until released", test_hold},
};

TFD_TEST_MAIN(tests)
