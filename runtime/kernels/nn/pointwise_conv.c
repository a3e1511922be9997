/* The pointwise convolution with its epilogue in registers (see pointwise_conv.h).
 *
 * Shape of the work: the filter is packed once into panels of at most 48 columns (64 when o is a
 * multiple of 64), each stored k-major, zero-padded to whole 16-float vectors. Output rows go in
 * blocks of 96; within a block each panel sweeps the block's rows in tiles of MR rows x NV vectors:
 * per input channel k, NV loads of the panel, MR broadcasts of x[row][k] read where the rows lie
 * (no packing: c is small, 16-128 in the models, and the MR rows sit in L1), MR x NV FMAs. Then the
 * epilogue on the accumulators, and one masked store per vector.
 *
 * Tiles: 8 x {1, 2, 3} and 6 x 4 (24 accumulators at most, 8 or more independent chains to cover the
 * FMA latency at two FMAs a cycle). The sums start from the bias; the epilogue follows TensorFlow's
 * order with as few operations per stored vector as it can (a layer of 16 channels does only 16 FMAs
 * per vector, so each one counts): Prelu is a compare and a masked multiply, x < 0 ? a * x : x, which
 * differs from activation.c's relu(x) + a * min(0, x) only in the sign of a zero. */
#include "pointwise_conv.h"

#include <stdlib.h>
#include <string.h>

#include "../math/gemm_avx512.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TFD_POINTWISE_X86 1
#endif

#define MAX_MR 8
#define MAX_NV 4

typedef struct panel {
  int64_t col, cols; /* first output column, valid columns */
  int nv, mr;        /* vectors per k step, rows per tile */
  size_t offset;     /* floats from the start of the packed data */
} panel;

struct tfd_pointwise {
  int64_t c, o;
  int num_panels;
  panel *panels;
  float *w; /* 64-byte aligned */
};

/* AVX-512F is what the kernel needs, the same check as the GEMM's. */
bool tfd_pointwise_available(void) { return tfd_gemm_available(); }

void tfd_pointwise_free(tfd_pointwise *p) {
  if (!p) return;
  free(p->panels);
  free(p->w);
  free(p);
}

tfd_pointwise *tfd_pointwise_pack(const float *filter, int64_t c, int64_t o) {
  if (!tfd_pointwise_available() || !filter || c < 1 || o < 1 || c > INT32_MAX || o > INT32_MAX) return NULL;
  tfd_pointwise *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->c = c;
  p->o = o;
  /* 64-wide panels (6 x 4 tiles) when they divide o, else 48 (8 x 3) with a narrower last one. */
  int64_t width = o % 64 == 0 ? 64 : 48;
  p->num_panels = (int)((o + width - 1) / width);
  p->panels = calloc((size_t)p->num_panels, sizeof *p->panels);
  size_t floats = 0;
  for (int i = 0; p->panels && i < p->num_panels; i++) {
    panel *q = &p->panels[i];
    q->col = i * width;
    q->cols = o - q->col < width ? o - q->col : width;
    q->nv = (int)((q->cols + 15) / 16);
    q->mr = q->nv == 4 ? 6 : 8;
    q->offset = floats;
    floats += (size_t)c * 16 * (size_t)q->nv;
  }
  p->w = p->panels ? aligned_alloc(64, (floats * sizeof(float) + 63) / 64 * 64) : NULL;
  if (!p->w) {
    tfd_pointwise_free(p);
    return NULL;
  }
  for (int i = 0; i < p->num_panels; i++) {
    const panel *q = &p->panels[i];
    float *d = p->w + q->offset;
    for (int64_t k = 0; k < c; k++, d += 16 * q->nv) {
      memcpy(d, filter + k * o + q->col, (size_t)q->cols * sizeof *d);
      memset(d + q->cols, 0, (size_t)(16 * q->nv - q->cols) * sizeof *d);
    }
  }
  return p;
}

#ifdef TFD_POINTWISE_X86
#include <immintrin.h>

#define AVX512 __attribute__((target("avx512f,fma")))
#define INLINE inline __attribute__((always_inline))

/* One tile: rows [r, r + mr) (when not full, rows past `last` repeat row `last` and are not stored),
 * columns [col, col + cols) of the output, from panel w (16 * nv floats per k). mr, nv and full are
 * constants in each caller, so the loops unroll, the accumulators live in registers and a full tile
 * has no clamping. The epilogue is copied into locals first: the compiler could not otherwise keep
 * its fields in registers across the stores. */
static INLINE AVX512 void tile(const float *x, int64_t c, int64_t r, int64_t last, const float *w, int mr, int nv,
                               int64_t col, int64_t cols, const tfd_pointwise_epilogue *ep, int64_t o, float *y,
                               bool full) {
  const tfd_pointwise_epilogue e = *ep;
  __m512 acc[MAX_MR][MAX_NV];
  const float *xr[MAX_MR];
  int64_t yo[MAX_MR]; /* each row's offset into y and the addend */
  _Pragma("GCC unroll 8") for (int i = 0; i < mr; i++) {
    int64_t row = full || r + i <= last ? r + i : last;
    xr[i] = x + row * c;
    yo[i] = row * o + col;
  }
  __mmask16 mask[MAX_NV];
  __m512 start[MAX_NV];
  _Pragma("GCC unroll 4") for (int v = 0; v < nv; v++) {
    int64_t left = cols - 16 * v;
    mask[v] = left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1);
    /* The bias is where the sums start (one add less per stored vector; the pad lanes load zero). */
    start[v] = e.bias && !e.scale ? _mm512_maskz_loadu_ps(mask[v], e.bias + col + 16 * v) : _mm512_setzero_ps();
  }
  _Pragma("GCC unroll 8") for (int i = 0; i < mr; i++) {
    _Pragma("GCC unroll 4") for (int v = 0; v < nv; v++) acc[i][v] = start[v];
  }
  for (int64_t k = 0; k < c; k++, w += 16 * nv) {
    __m512 b[MAX_NV];
    _Pragma("GCC unroll 4") for (int v = 0; v < nv; v++) b[v] = _mm512_load_ps(w + 16 * v);
    _Pragma("GCC unroll 8") for (int i = 0; i < mr; i++) {
      __m512 a = _mm512_set1_ps(xr[i][k]);
      _Pragma("GCC unroll 4") for (int v = 0; v < nv; v++) acc[i][v] = _mm512_fmadd_ps(a, b[v], acc[i][v]);
    }
  }
  __m512 mul[MAX_NV], add[MAX_NV], slope[MAX_NV];
  const __m512 zero = _mm512_setzero_ps(), six = _mm512_set1_ps(6.0f);
  _Pragma("GCC unroll 4") for (int v = 0; v < nv; v++) {
    mul[v] = e.scale ? _mm512_maskz_loadu_ps(mask[v], e.scale + col + 16 * v) : zero;
    add[v] = e.scale ? _mm512_maskz_loadu_ps(mask[v], e.shift + col + 16 * v) : zero;
    slope[v] = e.prelu ? _mm512_maskz_loadu_ps(mask[v], e.prelu + col + 16 * v) : _mm512_set1_ps(e.alpha);
  }
  bool prelu = e.prelu || e.act == TFD_ACT_LEAKY_RELU;
  _Pragma("GCC unroll 8") for (int i = 0; i < mr; i++) {
    _Pragma("GCC unroll 4") for (int v = 0; v < nv; v++) {
      __m512 t = acc[i][v];
      if (e.scale) t = _mm512_add_ps(_mm512_mul_ps(t, mul[v]), add[v]);
      if (e.addend) t = _mm512_add_ps(t, _mm512_maskz_loadu_ps(mask[v], e.addend + yo[i] + 16 * v));
      if (prelu) { /* x < 0 ? a * x : x, two operations: NaN compares false and stays NaN */
        t = _mm512_mask_mul_ps(t, _mm512_cmp_ps_mask(t, zero, _CMP_LT_OQ), t, slope[v]);
      } else if (e.act == TFD_ACT_RELU) {
        t = _mm512_max_ps(zero, t); /* NaN stays NaN: maxps gives the right operand */
      } else if (e.act == TFD_ACT_RELU6) {
        t = _mm512_min_ps(six, _mm512_max_ps(zero, t));
      }
      if (full || r + i <= last) _mm512_mask_storeu_ps(y + yo[i] + 16 * v, mask[v], t);
    }
  }
  if (!e.prelu && (e.act == TFD_ACT_ELU || e.act == TFD_ACT_TANH || e.act == TFD_ACT_SIGMOID))
    for (int i = 0; i < mr && (full || r + i <= last); i++) tfd_activation_f32(e.act, y + yo[i], y + yo[i], cols, e.alpha);
}

/* Every tile of rows [r, last] in one call: full tiles first (their row offsets stay in registers
 * from one tile to the next; a tile of c = 16 is only 16 k steps, so per-tile set-up counted), then
 * the last, partial one. */
#define STRIP(MR, NV)                                                                                                \
  static AVX512 void strip_##MR##x##NV(const float *x, int64_t c, int64_t r, int64_t last, const float *w,            \
                                       int64_t col, int64_t cols, const tfd_pointwise_epilogue *e, int64_t o,         \
                                       float *y) {                                                                    \
    for (; r + MR - 1 <= last; r += MR) tile(x, c, r, last, w, MR, NV, col, cols, e, o, y, true);                   \
    if (r <= last) tile(x, c, r, last, w, MR, NV, col, cols, e, o, y, false);                                        \
  }
STRIP(8, 1)
STRIP(8, 2)
STRIP(8, 3)
STRIP(6, 4)

typedef void (*tile_fn)(const float *, int64_t, int64_t, int64_t, const float *, int64_t, int64_t,
                        const tfd_pointwise_epilogue *, int64_t, float *);

void tfd_pointwise_run(const tfd_pointwise *p, const float *x, int64_t r0, int64_t r1, const tfd_pointwise_epilogue *e,
                       float *y) {
  static const tile_fn strips[MAX_NV + 1] = {NULL, strip_8x1, strip_8x2, strip_8x3, strip_6x4};
  if (!p) return;
  for (int64_t b = r0; b < r1; b += TFD_POINTWISE_BLOCK_ROWS) {
    int64_t last = (b + TFD_POINTWISE_BLOCK_ROWS < r1 ? b + TFD_POINTWISE_BLOCK_ROWS : r1) - 1;
    for (int i = 0; i < p->num_panels; i++) {
      const panel *q = &p->panels[i];
      strips[q->nv](x, p->c, b, last, p->w + q->offset, q->col, q->cols, e, p->o, y);
    }
  }
}

#else

void tfd_pointwise_run(const tfd_pointwise *p, const float *x, int64_t r0, int64_t r1, const tfd_pointwise_epilogue *e,
                       float *y) {
  (void)p, (void)x, (void)r0, (void)r1, (void)e, (void)y; /* never packed off x86-64: nothing to run */
}

#endif
