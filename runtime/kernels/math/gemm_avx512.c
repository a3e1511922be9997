/* The AVX-512 float32 GEMM behind MatMul's one-thread constant-weight path (see gemm_avx512.h).
 *
 * Shape of the work (Goto/BLIS blocking, with the operands' roles turned for row-major C):
 * - B is packed once: k blocks of at most KC rows; within a block, panels of NR = 48 columns (the
 *   last one narrower, in whole vectors), each stored step-major: the 48 values of row p together,
 *   zero-padded. A tile streams one panel from L2 at 192 bytes per k step.
 * - A is packed per call, per k block, for up to MC rows at a time: panels of MR = 8 rows stored
 *   step-major with stride 8 (A[0..8)[p] together), by an 8 x 16 in-register transpose. The tile
 *   then broadcasts A[i][p] from a constant offset of one pointer. Reading A where it lies (a
 *   run-time row stride, a register per row) measured 2-5% slower in the loop than this layout,
 *   and a copy that keeps rows apart (16-float chunks) 6% slower; the transpose costs 0.23 cycles
 *   a float from L2, 2-4% of the call at n = 512 (A comes from L3 in the MLP).
 * - Loops: row groups of MC rows, then k blocks (the group's packed A in L2, its C rows too between
 *   blocks), then B panels, then the group's tiles: each B panel is used by all the group's tiles
 *   in a row, and the tiles prefetch the next panel into L2 (2 lines per 4 k steps), because the
 *   weights come from L3 run to run (the MLP's 2.6 MB do not stay in a 2 MB L2). That prefetch
 *   took [64,784]x[784,512] from 167 to 180 GFLOPS with the weights evicted; without it the first
 *   tile on each panel waits for L3. (k blocks outside the row groups measured the same.)
 * - The tile (assembly, below) holds 8 x 3 zmm accumulators: per k step 3 loads of B, 8
 *   broadcasts of A, 24 FMAs. The first k block starts from the bias (or zero), later ones add C;
 *   the last clamps for Relu/Relu6 in registers, and other activations run through
 *   tfd_activation_f32 over the finished tile's rows. Column tails are masked on C and bias.
 *
 * Variants measured on this machine (Sapphire Rapids class Xeon under KVM, one core; the FMA peak
 * measured 215-225 GFLOPS; GFLOPS of the tile loop alone, weights streaming from L2):
 *   MR x NR    8x48 198   9x48 198   6x64 188-195   5x80 191-196   4x96 185-188   12x32 185-192
 *              14x32 185 (the 28-accumulator shape: 16 loads per 28 FMAs)
 *   unroll     1: 185, 2: 197, 4: 198, 8: 193 (9x48)
 *   KC         400 (784 = 2 x 392, 512 = 2 x 256) beat 512 by ~1.5% on [64,512]x[512,512] and tied
 *              elsewhere; one block of 784 lost 6% (the A panel and the B stream crowd L1)
 *   MC         64 and 128 tied, all rows (256) lost 3% on [256,512]x[512,512]
 * With the weights in L2 the whole call reaches ~180 GFLOPS; with them in L3, 170-180 (the first
 * panel and the first A pack wait for L3: 3-6% of a 64-row call).
 * Prefetching the next pack's A rows, the C tile, or B into L1 did not measure faster.
 *
 * Global state: one CPU-feature flag, written once under pthread_once (cpu_once), read after. */
#include "gemm_avx512.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
#define TFD_GEMM_X86 1
#endif

#ifdef TFD_GEMM_X86
#include <immintrin.h>

#define MR 8         /* rows of A per tile, and the packed A's stride */
#define NV 3         /* zmm vectors of B per k step */
#define NR (16 * NV) /* columns per B panel */
#ifndef TFD_GEMM_KC
#define TFD_GEMM_KC 400 /* most k rows per block: k is split into equal blocks of at most this */
#endif
#define KC TFD_GEMM_KC
#define KPAD ((KC + 15) / 16 * 16) /* a packed A panel's steps: the transpose writes 16 at a time */
#define MC 64                      /* rows of A packed and swept over one B panel together */
#define PF_LINES 2                 /* lines of the next B panel each tile prefetches per 4 k steps */

/* Compiled for AVX-512 whatever the build's flags; run only where tfd_gemm_available. */
#define AVX512 __attribute__((target("avx512f,fma")))

static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;
static bool cpu_has_avx512; /* written once by detect_cpu under cpu_once */

static void detect_cpu(void) {
  __builtin_cpu_init();
  /* libgcc's check includes the OS saving zmm state (XCR0), not only the CPUID bit. */
  cpu_has_avx512 = __builtin_cpu_supports("avx512f");
}

bool tfd_gemm_available(void) {
  pthread_once(&cpu_once, detect_cpu);
  return cpu_has_avx512;
}

struct tfd_gemm_packed {
  int64_t k, n;
  int64_t kc;   /* rows per k block (the last may have fewer) */
  int64_t npad; /* packed columns: the panels' widths summed */
  float *data;  /* [k block][panel][p][panel width], 64-byte aligned */
};

int64_t tfd_gemm_packed_k(const tfd_gemm_packed *p) { return p->k; }
int64_t tfd_gemm_packed_n(const tfd_gemm_packed *p) { return p->n; }

void tfd_gemm_packed_free(tfd_gemm_packed *p) {
  if (!p) return;
  free(p->data);
  free(p);
}

/* Width of the panel starting at column j: NR, or the tail rounded up to whole vectors. */
static int64_t panel_width(int64_t n, int64_t j) {
  int64_t w = n - j < NR ? n - j : NR;
  return (w + 15) / 16 * 16;
}

tfd_gemm_packed *tfd_gemm_pack(const float *B, int64_t k, int64_t n, bool transpose_b) {
  if (!tfd_gemm_available() || k < 1 || n < 1 || k > INT32_MAX || n > INT32_MAX) return NULL;
  tfd_gemm_packed *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  int64_t blocks = (k + KC - 1) / KC;
  p->k = k;
  p->n = n;
  p->kc = (k + blocks - 1) / blocks;
  p->npad = (n - 1) / NR * NR + panel_width(n, (n - 1) / NR * NR);
  size_t bytes = (size_t)(k * p->npad) * sizeof(float);
  p->data = aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (!p->data) {
    free(p);
    return NULL;
  }
  float *d = p->data;
  for (int64_t p0 = 0; p0 < k; p0 += p->kc) {
    int64_t len = k - p0 < p->kc ? k - p0 : p->kc;
    for (int64_t j = 0; j < n; j += NR) {
      int64_t w = panel_width(n, j), valid = n - j < w ? n - j : w;
      for (int64_t q = 0; q < len; q++, d += w) {
        for (int64_t c = 0; c < valid; c++) d[c] = transpose_b ? B[(j + c) * k + p0 + q] : B[(p0 + q) * n + j + c];
        for (int64_t c = valid; c < w; c++) d[c] = 0.0f;
      }
    }
  }
  return p;
}

/* Tile flags. */
enum { BIAS = 1, ACCUMULATE = 2, RELU = 4, RELU6 = 8 };

/* The tile, in assembly: given the same loop in intrinsics, GCC 12 rotates registers through extra
 * moves and the whole call reached 165 GFLOPS; written out, the loop runs at ~198 (about 90% of the
 * FMA peak: with the A broadcasts taken out it reaches the peak, so they are what it pays).
 * Registers: the accumulator of row r, vector v is zmm(3r+v) (zmm0-23); B's vectors of the current
 * k step are zmm29-31; A's broadcasts alternate between zmm27 and zmm28. One template serves every
 * tile size: mr (rows) and nv (vectors) are assembler constants, and .if leaves out the rows and
 * vectors a tile does not have. The k loop is unrolled 4 times and 64-byte aligned (unaligned,
 * the same loop measured up to 6% slower in some placements). */
#define T_IF(cond, text) ".if " cond "\n" text ".endif\n"
/* Row r of k step u: broadcast A[r][p + u] into zmm t, then one FMA per B vector. */
#define T_FMA_ROW(u, r, t, a0, a1, a2)                                                        \
  T_IF(#r " < %c[mr]", "vbroadcastss ((" #u "*8+" #r ")*4)(%[ap]), %%zmm" #t "\n"             \
                       "vfmadd231ps %%zmm29, %%zmm" #t ", %%zmm" #a0 "\n"                     \
                       T_IF("1 < %c[nv]", "vfmadd231ps %%zmm30, %%zmm" #t ", %%zmm" #a1 "\n") \
                       T_IF("2 < %c[nv]", "vfmadd231ps %%zmm31, %%zmm" #t ", %%zmm" #a2 "\n"))
#define T_STEP(u)                                                                                \
  "vmovaps (" #u "*64*%c[nv])(%[bp]), %%zmm29\n"                                                 \
  T_IF("1 < %c[nv]", "vmovaps (" #u "*64*%c[nv]+64)(%[bp]), %%zmm30\n")                         \
  T_IF("2 < %c[nv]", "vmovaps (" #u "*64*%c[nv]+128)(%[bp]), %%zmm31\n")                        \
  T_FMA_ROW(u, 0, 27, 0, 1, 2) T_FMA_ROW(u, 1, 28, 3, 4, 5) T_FMA_ROW(u, 2, 27, 6, 7, 8)         \
  T_FMA_ROW(u, 3, 28, 9, 10, 11) T_FMA_ROW(u, 4, 27, 12, 13, 14) T_FMA_ROW(u, 5, 28, 15, 16, 17) \
  T_FMA_ROW(u, 6, 27, 18, 19, 20) T_FMA_ROW(u, 7, 28, 21, 22, 23)
/* op(r, v, accumulator, mask) for each of the tile's rows r and vectors v; the mask ("{%k1}", the
 * column tail's) goes on the last vector only. */
#define T_VEC(r, v, acc, op) \
  T_IF(#r " < %c[mr] && " #v " < %c[nv]", \
       ".if " #v " == %c[nv] - 1\n" op(r, v, acc, "%{%%k1%}") ".else\n" op(r, v, acc, "") ".endif\n")
#define T_ROW(r, a0, a1, a2, op) T_VEC(r, 0, a0, op) T_VEC(r, 1, a1, op) T_VEC(r, 2, a2, op)
#define T_ALL(op)                                                                           \
  T_ROW(0, 0, 1, 2, op) T_ROW(1, 3, 4, 5, op) T_ROW(2, 6, 7, 8, op) T_ROW(3, 9, 10, 11, op) \
  T_ROW(4, 12, 13, 14, op) T_ROW(5, 15, 16, 17, op) T_ROW(6, 18, 19, 20, op) T_ROW(7, 21, 22, 23, op)
/* Ops that walk C (pointer cp, row stride ldc bytes) step to the next row after the last vector. */
#define T_NEXT_ROW(v) ".if " #v " == %c[nv] - 1\nadd %[ldc], %[cp]\n.endif\n"
#define B_REG_0 "29"
#define B_REG_1 "30"
#define B_REG_2 "31"
#define OP_BIAS(r, v, acc, m) "vmovaps %%zmm" B_REG_##v ", %%zmm" #acc "\n"
#define OP_ZERO(r, v, acc, m) "vpxord %%zmm" #acc ", %%zmm" #acc ", %%zmm" #acc "\n"
#define OP_ADD_C(r, v, acc, m) "vaddps (" #v "*64)(%[cp]), %%zmm" #acc ", %%zmm" #acc m "\n" T_NEXT_ROW(v)
/* max(0, x) and min(6, x) with x as the second source: vmaxps/vminps return the second source when
 * either is NaN, so NaN stays NaN, as activation.c's Relu and TensorFlow's keep it. */
#define OP_RELU(r, v, acc, m) "vmaxps %%zmm" #acc ", %%zmm27, %%zmm" #acc "\n"
#define OP_MIN6(r, v, acc, m) "vminps %%zmm" #acc ", %%zmm28, %%zmm" #acc "\n"
#define OP_STORE(r, v, acc, m) "vmovups %%zmm" #acc ", (" #v "*64)(%[cp])" m "\n" T_NEXT_ROW(v)

/* tile_<nv>_<mr>: C[0..mr)[0..16*nv) (the last vector under `mask`) over kc steps of packed A (ap)
 * and a packed B panel (bp). flags: BIAS starts from bias (else from zero), ACCUMULATE adds C's
 * values (the later k blocks), RELU / RELU|RELU6 clamp before the store. Meanwhile it prefetches
 * PF_LINES lines from pf on per 4 k steps. */
#define TILE_FN(NVV, MRV)                                                                                        \
  __attribute__((aligned(64))) static AVX512 void tile_##NVV##_##MRV(int64_t kc, const float *ap, const float *bp, \
                                                                     float *c, int64_t ldc, const float *bias,   \
                                                                     unsigned flags, unsigned mask,              \
                                                                     const char *pf) {                           \
    static const float six = 6.0f;                                                                              \
    int64_t cnt;                                                                                                \
    float *cp;                                                                                                  \
    __asm__ volatile(                                                                                           \
        "kmovw %k[mask], %%k1\n"                                                                                \
        "testl $1, %k[flags]\n"                                                                                 \
        "jz 1f\n"                                                                                               \
        ".if %c[nv] == 1\nvmovups (%[bias]), %%zmm29%{%%k1%}%{z%}\n.else\nvmovups (%[bias]), %%zmm29\n.endif\n" \
        T_IF("%c[nv] == 2", "vmovups 64(%[bias]), %%zmm30%{%%k1%}%{z%}\n")                                     \
        T_IF("%c[nv] == 3", "vmovups 64(%[bias]), %%zmm30\nvmovups 128(%[bias]), %%zmm31%{%%k1%}%{z%}\n")      \
        T_ALL(OP_BIAS)                                                                                          \
        "jmp 2f\n"                                                                                              \
        "1:\n" T_ALL(OP_ZERO)                                                                                   \
        "2:\n"                                                                                                  \
        "mov %[kc], %[cnt]\n"                                                                                   \
        "shr $2, %[cnt]\n"                                                                                      \
        "jz 4f\n"                                                                                               \
        ".p2align 6\n"                                                                                          \
        "3:\n" T_STEP(0) T_STEP(1) T_STEP(2) T_STEP(3)                                                          \
        "prefetcht1 (%[pf])\n"                                                                                  \
        "prefetcht1 64(%[pf])\n"                                                                                \
        "add $128, %[ap]\n"                                                                                     \
        "add $(256*%c[nv]), %[bp]\n"                                                                            \
        "add $(64*%c[pfl]), %[pf]\n"                                                                            \
        "dec %[cnt]\n"                                                                                          \
        "jnz 3b\n"                                                                                              \
        "4:\n"                                                                                                  \
        "mov %[kc], %[cnt]\n"                                                                                   \
        "and $3, %[cnt]\n"                                                                                      \
        "jz 6f\n"                                                                                               \
        "5:\n" T_STEP(0)                                                                                        \
        "add $32, %[ap]\n"                                                                                      \
        "add $(64*%c[nv]), %[bp]\n"                                                                             \
        "dec %[cnt]\n"                                                                                          \
        "jnz 5b\n"                                                                                              \
        "6:\n"                                                                                                  \
        "testl $2, %k[flags]\n"                                                                                 \
        "jz 7f\n"                                                                                               \
        "mov %[c], %[cp]\n" T_ALL(OP_ADD_C)                                                                     \
        "7:\n"                                                                                                  \
        "testl $12, %k[flags]\n"                                                                                \
        "jz 8f\n"                                                                                               \
        "vpxord %%zmm27, %%zmm27, %%zmm27\n" T_ALL(OP_RELU)                                                     \
        "testl $8, %k[flags]\n"                                                                                 \
        "jz 8f\n"                                                                                               \
        "vbroadcastss %[six], %%zmm28\n" T_ALL(OP_MIN6)                                                         \
        "8:\n"                                                                                                  \
        "mov %[c], %[cp]\n" T_ALL(OP_STORE)                                                                     \
        : [ap] "+r"(ap), [bp] "+r"(bp), [pf] "+r"(pf), [cnt] "=&r"(cnt), [cp] "=&r"(cp)                         \
        : [kc] "r"(kc), [c] "r"(c), [ldc] "r"(ldc * (int64_t)sizeof(float)), [bias] "r"(bias),                 \
          [flags] "r"(flags), [mask] "r"(mask), [six] "m"(six), [mr] "i"(MRV), [nv] "i"(NVV),                  \
          [pfl] "i"(PF_LINES)                                                                                   \
        : "cc", "memory", "k1", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",   \
          "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "xmm18", "xmm19", "xmm20",     \
          "xmm21", "xmm22", "xmm23", "xmm24", "xmm25", "xmm26", "xmm27", "xmm28", "xmm29", "xmm30", "xmm31");    \
  }
#define TILE_FNS(nv) \
  TILE_FN(nv, 1) TILE_FN(nv, 2) TILE_FN(nv, 3) TILE_FN(nv, 4) TILE_FN(nv, 5) TILE_FN(nv, 6) TILE_FN(nv, 7) TILE_FN(nv, 8)
TILE_FNS(1)
TILE_FNS(2)
TILE_FNS(3)

typedef void (*tile_fn)(int64_t kc, const float *ap, const float *bp, float *c, int64_t ldc, const float *bias,
                        unsigned flags, unsigned mask, const char *pf);
#define TILE_ROW(nv)                                                                                        \
  {NULL, tile_##nv##_1, tile_##nv##_2, tile_##nv##_3, tile_##nv##_4, tile_##nv##_5, tile_##nv##_6, tile_##nv##_7, \
   tile_##nv##_8}
static const tile_fn tiles[NV + 1][MR + 1] = {{NULL}, TILE_ROW(1), TILE_ROW(2), TILE_ROW(3)};

/* A[0..mr)[0..kc) (row stride lda, mr <= 8) into buf p-major with stride 8: buf[p * 8 + i] = A[i][p],
 * kc rounded up to 16 (zeros past kc; rows past mr repeat the last row and are never read). An 8 x 16
 * transpose per 16 steps: 32 shuffles for 128 floats (a scalar copy measured ~1.4 cycles a float,
 * 13 us of a 64-row product with n = 10). */
static AVX512 void pack_a(float *restrict buf, const float *restrict A, int64_t lda, int64_t mr, int64_t kc) {
  const float *row[8];
  for (int i = 0; i < 8; i++) row[i] = A + (i < mr ? i : mr - 1) * lda;
  for (int64_t p = 0; p < kc; p += 16, buf += 128) {
    __mmask16 m = kc - p >= 16 ? 0xffff : (__mmask16)((1u << (kc - p)) - 1);
    __m512 r[8], t[8], u[8];
    for (int i = 0; i < 8; i++) r[i] = _mm512_maskz_loadu_ps(m, row[i] + p);

    /* Per 128-bit lane L: t = rows (2i, 2i+1) interleaved, u[j] / u[4+j] = column 4L+j of rows 0-3 / 4-7. */
    for (int i = 0; i < 4; i++) {
      t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
      t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int h = 0; h < 2; h++) {
      __m512d a = _mm512_castps_pd(t[4 * h]), b = _mm512_castps_pd(t[4 * h + 2]);
      __m512d c = _mm512_castps_pd(t[4 * h + 1]), d = _mm512_castps_pd(t[4 * h + 3]);
      u[4 * h] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, b));
      u[4 * h + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, b));
      u[4 * h + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(c, d));
      u[4 * h + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(c, d));
    }
    /* lo[j] = columns j, 4+j (rows 0-3), j, 4+j (rows 4-7); hi[j] the same for 8+j, 12+j. */
    __m512 lo[4], hi[4];
    for (int j = 0; j < 4; j++) {
      lo[j] = _mm512_shuffle_f32x4(u[j], u[4 + j], _MM_SHUFFLE(1, 0, 1, 0));
      hi[j] = _mm512_shuffle_f32x4(u[j], u[4 + j], _MM_SHUFFLE(3, 2, 3, 2));
    }
    /* Output vector q holds steps 2q and 2q+1, rows 0-7 each. */
    _mm512_store_ps(buf + 0, _mm512_shuffle_f32x4(lo[0], lo[1], _MM_SHUFFLE(2, 0, 2, 0)));
    _mm512_store_ps(buf + 16, _mm512_shuffle_f32x4(lo[2], lo[3], _MM_SHUFFLE(2, 0, 2, 0)));
    _mm512_store_ps(buf + 32, _mm512_shuffle_f32x4(lo[0], lo[1], _MM_SHUFFLE(3, 1, 3, 1)));
    _mm512_store_ps(buf + 48, _mm512_shuffle_f32x4(lo[2], lo[3], _MM_SHUFFLE(3, 1, 3, 1)));
    _mm512_store_ps(buf + 64, _mm512_shuffle_f32x4(hi[0], hi[1], _MM_SHUFFLE(2, 0, 2, 0)));
    _mm512_store_ps(buf + 80, _mm512_shuffle_f32x4(hi[2], hi[3], _MM_SHUFFLE(2, 0, 2, 0)));
    _mm512_store_ps(buf + 96, _mm512_shuffle_f32x4(hi[0], hi[1], _MM_SHUFFLE(3, 1, 3, 1)));
    _mm512_store_ps(buf + 112, _mm512_shuffle_f32x4(hi[2], hi[3], _MM_SHUFFLE(3, 1, 3, 1)));
  }
}


/* The bytes of the B panel the tiles should prefetch while panel j of this k block and row group
 * runs: the next panel; after the last, this block's first again (the next row group starts
 * there), or the next block's first. Sets *bytes. */
static const float *next_panel(const tfd_gemm_packed *p, int64_t p0, int64_t len, int64_t j, bool more,
                               int64_t *bytes) {
  const int64_t n = p->n;
  const float *block = p->data + p0 * p->npad;
  if (j + NR < n) {
    *bytes = len * panel_width(n, j + NR) * (int64_t)sizeof(float);
    return block + len * (j + NR);
  }
  if (!more) {
    *bytes = len * panel_width(n, 0) * (int64_t)sizeof(float);
    return block;
  }
  /* The next k block's first panel, or (after the last block) the first block's, where the next
   * row group starts. */
  int64_t p1 = p0 + len < p->k ? p0 + len : 0, len2 = p->k - p1 < p->kc ? p->k - p1 : p->kc;
  *bytes = len2 * panel_width(n, 0) * (int64_t)sizeof(float);
  return p->data + p1 * p->npad;
}

static AVX512 void run_avx512(const tfd_gemm_packed *p, const float *A, int64_t lda, int64_t m, const float *bias,
                              tfd_activation act, float alpha, float *C, int64_t ldc) {
  const int64_t k = p->k, n = p->n, panels = (m + MR - 1) / MR;
  /* The packed row group. Where the heap has no room, one panel on the stack at a time. */
  float one_panel[MR * KPAD] __attribute__((aligned(64)));
  int64_t group = MC / MR < panels ? MC / MR : panels;
  float *abuf = group > 1 ? aligned_alloc(64, (size_t)(group * MR * KPAD) * sizeof(float)) : NULL;
  if (!abuf) abuf = one_panel, group = 1;
  unsigned act_flags = act == TFD_ACT_RELU ? RELU : act == TFD_ACT_RELU6 ? RELU | RELU6 : 0;
  bool act_after = act != TFD_ACT_NONE && !act_flags;
  for (int64_t g0 = 0; g0 < panels; g0 += group) {
    int64_t g1 = g0 + group < panels ? g0 + group : panels;
    for (int64_t p0 = 0; p0 < k; p0 += p->kc) {
      int64_t len = k - p0 < p->kc ? k - p0 : p->kc;
      bool last = p0 + len == k;
      const float *block = p->data + p0 * p->npad;
      unsigned flags = (p0 == 0 ? (bias ? BIAS : 0) : ACCUMULATE) | (last ? act_flags : 0);
      /* Row panels of equal height (20 rows: 7, 7, 6 rather than 8, 8, 4): panel ip starts at row
       * ip * m / panels. */
      for (int64_t ip = g0; ip < g1; ip++) {
        int64_t i0 = ip * m / panels, mr = (ip + 1) * m / panels - i0;
        pack_a(abuf + (ip - g0) * MR * KPAD, A + i0 * lda + p0, lda, mr, len);
      }
      for (int64_t j = 0; j < n; j += NR) {
        int64_t w = panel_width(n, j), valid = n - j < w ? n - j : w, next_bytes;
        unsigned mask = valid % 16 ? (1u << (valid % 16)) - 1 : 0xffff;
        const float *bp = block + len * j;
        const char *next = (const char *)next_panel(p, p0, len, j, !last || g1 < panels, &next_bytes);
        /* Each tile prefetches its own stretch of the next panel (wrapping when the group has
         * more tiles than the panel needs). */
        int64_t stretch = len / 4 * 64 * PF_LINES;
        for (int64_t ip = g0; ip < g1; ip++) {
          int64_t i0 = ip * m / panels, mr = (ip + 1) * m / panels - i0;
          float *c = C + i0 * ldc + j;
          const char *pf = next + (ip - g0) * stretch % next_bytes;
          tiles[w / 16][mr](len, abuf + (ip - g0) * MR * KPAD, bp, c, ldc, bias ? bias + j : NULL, flags, mask, pf);
          if (act_after && last)
            for (int64_t i = 0; i < mr; i++) tfd_activation_f32(act, c + i * ldc, c + i * ldc, valid, alpha);
        }
      }
    }
  }
  if (abuf != one_panel) free(abuf);
}

void tfd_gemm_run(const tfd_gemm_packed *p, const float *A, int64_t lda, int64_t m, const float *bias,
                  tfd_activation act, float alpha, float *C, int64_t ldc) {
  if (!p || m < 1) return;
  run_avx512(p, A, lda, m, bias, act, alpha, C, ldc);
}

#else /* not x86-64 with GCC or Clang: the kernel is not available */

bool tfd_gemm_available(void) { return false; }
tfd_gemm_packed *tfd_gemm_pack(const float *B, int64_t k, int64_t n, bool transpose_b) {
  (void)B, (void)k, (void)n, (void)transpose_b;
  return NULL;
}
void tfd_gemm_packed_free(tfd_gemm_packed *p) { (void)p; }
int64_t tfd_gemm_packed_k(const tfd_gemm_packed *p) {
  (void)p;
  return 0;
}
int64_t tfd_gemm_packed_n(const tfd_gemm_packed *p) {
  (void)p;
  return 0;
}
void tfd_gemm_run(const tfd_gemm_packed *p, const float *A, int64_t lda, int64_t m, const float *bias,
                  tfd_activation act, float alpha, float *C, int64_t ldc) {
  (void)p, (void)A, (void)lda, (void)m, (void)bias, (void)act, (void)alpha, (void)C, (void)ldc;
}

#endif
