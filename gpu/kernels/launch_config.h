/* The launch arithmetic of the CUDA kernels, kept apart from CUDA so the CPU suite tests it
 * (launch_config_test.c): grid sizes for grid-stride loops over counts up to 2^62, and how a
 * reduction over [outer, n, inner] is tiled and split into passes. Plain C, also compiled as C++. */
#ifndef TFDEV_GPU_KERNELS_LAUNCH_CONFIG_H
#define TFDEV_GPU_KERNELS_LAUNCH_CONFIG_H

#include <stdint.h>

/* Threads per block of every grid-stride kernel. */
#define TFD_CUDA_THREADS 256
/* Grid-stride grids stop at this many blocks per SM: 8 blocks of 256 threads fill an SM (2048
 * threads), so a few waves keep every SM busy and each thread loops over the rest. */
#define TFD_CUDA_BLOCKS_PER_SM 8
/* The grid limit of gridDim.x (2^31 - 1), never reached with the cap above but checked. */
#define TFD_CUDA_MAX_GRID 2147483647LL

static inline int64_t tfd_cuda_max_blocks(int64_t sm_count) {
  int64_t b = (sm_count > 0 ? sm_count : 1) * TFD_CUDA_BLOCKS_PER_SM;
  return b < TFD_CUDA_MAX_GRID ? b : TFD_CUDA_MAX_GRID;
}

/* Blocks for `work` items handled `per_block` at a time per pass of a grid-stride loop: enough to
 * cover them once, at most max_blocks, at least 1 (0 for no work). Overflow-free for any int64. */
static inline int64_t tfd_cuda_blocks(int64_t work, int64_t per_block, int64_t max_blocks) {
  if (work <= 0) return 0;
  if (per_block < 1) per_block = 1;
  int64_t b = (work - 1) / per_block + 1;
  if (max_blocks < 1) max_blocks = 1;
  return b < max_blocks ? b : max_blocks;
}

/* A reduction of x [outer, n, inner] over n, by blocks of bx * by = 256 threads: bx (a power of two
 * up to 32) neighbouring inner positions, by threads along n, combined by a shared-memory tree.
 * Loads stay coalesced whatever inner is: with inner 1 a warp reads 32 neighbours along n. When
 * outer * qblocks tiles leave SMs idle and n is long, n is cut into `chunks` pieces of `chunk`
 * (first pass into a workspace [outer, chunks, inner] of partial results, second pass over the
 * chunks), so no thread walks a long axis alone. */
typedef struct tfd_reduce_plan {
  int bx, by;
  int64_t qblocks; /* ceil(inner / bx) */
  int64_t chunks;  /* >= 1; 1 is a single pass */
  int64_t chunk;   /* ceil(n / chunks) (0 when n is 0) */
  int64_t tiles;   /* blocks of work in the first pass: outer * qblocks * chunks */
} tfd_reduce_plan;

/* Each thread of a split reduction takes at least this many elements of n. */
#define TFD_REDUCE_MIN_PER_THREAD 8

/* target_blocks: blocks that keep the device busy (e.g. 4 per SM); split: whether n may be cut. */
static inline tfd_reduce_plan tfd_reduce_plan_make(int64_t outer, int64_t n, int64_t inner, int64_t target_blocks,
                                                   int split) {
  tfd_reduce_plan p;
  int bx = 1;
  while (bx < 32 && bx < inner) bx *= 2;
  p.bx = bx;
  p.by = TFD_CUDA_THREADS / bx;
  p.qblocks = inner > 0 ? (inner - 1) / bx + 1 : 0;
  p.chunks = 1;
  int64_t tiles = outer * p.qblocks; /* <= outer * inner: no overflow */
  int64_t min_chunk = (int64_t)p.by * TFD_REDUCE_MIN_PER_THREAD;
  if (split && tiles > 0 && tiles < target_blocks && n > 2 * min_chunk) {
    int64_t want = (target_blocks - 1) / tiles + 1;
    int64_t most = n / min_chunk; /* >= 2 here */
    p.chunks = want < most ? want : most;
  }
  p.chunk = n > 0 ? (n - 1) / p.chunks + 1 : 0;
  if (p.chunk > 0) p.chunks = (n - 1) / p.chunk + 1; /* no empty piece */
  p.tiles = tiles * p.chunks;
  return p;
}

/* Bytes of the workspace a split plan needs for accumulators of acc_bytes each (0: single pass). */
static inline int64_t tfd_reduce_plan_workspace(const tfd_reduce_plan *p, int64_t outer, int64_t inner,
                                                int64_t acc_bytes) {
  return p->chunks > 1 ? outer * p->chunks * inner * acc_bytes : 0;
}

/* TopKV2 selects by k passes over a row while k is at most this; past it, rows are sorted. */
#define TFD_TOPK_SELECT_MAX 32

/* The power of two >= n (n >= 1, at most 2^62), which bitonic sorting pads a row to. */
static inline int64_t tfd_pow2_at_least(int64_t n) {
  int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

/* Softmax rows of at most this many columns go one warp per row; longer rows one block per row. */
#define TFD_SOFTMAX_WARP_COLS 1024

#endif
