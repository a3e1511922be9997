/* oneDNN against XNNPACK on every distinct convolution layer of blazeface and facemesh, so that the
 * convolution kernel can pick a library per layer shape. Both run through tfdev's wrappers
 * (tfd_dnnl_conv_run, tfd_xnn_conv_run) as the kernel would call them: filter constant and packed
 * once, warm, with the epilogue the model's node has (depthwise: none; 1x1 and first-layer convs:
 * bias, with Relu where the model fuses it; Prelu and residual adds stay outside both). Per layer
 * the two libraries alternate rep by rep (and which goes first alternates too), so drift and
 * another process's load fall on both; medians of at least 51 reps. One table per thread count.
 *
 *   build/bin/tfdev_conv_libs [--reps N] [--threads "1 2"] [--only onednn|xnnpack]
 *
 * --only times one library alone (the other one's column is empty): at two threads the libraries
 * disturb each other through their idle workers (oneDNN's OpenMP team spins between runs), and
 * this shows each one's time without the other.
 *
 * Columns: microseconds per run (median), ratio = oneDNN / XNNPACK (above 1: XNNPACK faster), the
 * winner (a tie within 3%), and the largest difference between the two outputs relative to
 * max(1, max |output|) as a check that both computed the same thing. */
#include <math.h>
#include <oneapi/dnnl/dnnl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "runtime/core/status_internal.h"
#include "runtime/kernels/nn/dnnl_conv.h"
#include "scripts/bench/timing.h"
#include "scripts/bench/xnn_conv.h"

typedef struct layer {
  const char *model;
  bool dw;
  int64_t h, w, c, k, o, stride;
  bool same;
  bool bias;
  tfd_activation act;
} layer;

#define B true
#define N TFD_ACT_NONE
#define R TFD_ACT_RELU
/* The layer shapes of the issue, in model order; dw are 3x3 SAME without bias (the models'
 * DepthwiseConv2dNative nodes), convs carry their _FusedConv2D's BiasAdd (and Relu where fused). */
static const layer layers[] = {
    {"blazeface", false, 256, 256, 3, 5, 24, 2, true, B, R},
    {"blazeface", true, 128, 128, 24, 3, 24, 1, true, false, N},
    {"blazeface", false, 128, 128, 24, 1, 24, 1, false, B, N},
    {"blazeface", true, 128, 128, 24, 3, 24, 2, true, false, N},
    {"blazeface", false, 64, 64, 24, 1, 24, 1, false, B, N},
    {"blazeface", true, 64, 64, 24, 3, 24, 1, true, false, N},
    {"blazeface", true, 64, 64, 24, 3, 24, 2, true, false, N},
    {"blazeface", false, 32, 32, 24, 1, 48, 1, false, B, N},
    {"blazeface", true, 32, 32, 48, 3, 48, 1, true, false, N},
    {"blazeface", false, 32, 32, 48, 1, 48, 1, false, B, N},
    {"blazeface", true, 32, 32, 48, 3, 48, 2, true, false, N},
    {"blazeface", false, 16, 16, 48, 1, 96, 1, false, B, N},
    {"blazeface", true, 16, 16, 96, 3, 96, 1, true, false, N},
    {"blazeface", false, 16, 16, 96, 1, 96, 1, false, B, N},
    {"blazeface", false, 16, 16, 96, 1, 96, 1, false, B, R},
    {"blazeface", false, 16, 16, 96, 1, 2, 1, true, B, N},
    {"blazeface", false, 16, 16, 96, 1, 32, 1, true, B, N},
    {"blazeface", true, 16, 16, 96, 3, 96, 2, true, false, N},
    {"blazeface", false, 8, 8, 96, 1, 96, 1, true, B, N},
    {"blazeface", false, 8, 8, 96, 1, 6, 1, true, B, N},
    {"facemesh", false, 192, 192, 3, 3, 16, 2, true, B, N},
    {"facemesh", true, 96, 96, 16, 3, 16, 1, true, false, N},
    {"facemesh", false, 96, 96, 16, 1, 16, 1, false, B, N},
    {"facemesh", true, 96, 96, 16, 3, 16, 2, true, false, N},
    {"facemesh", false, 48, 48, 16, 1, 32, 1, false, B, N},
    {"facemesh", true, 48, 48, 32, 3, 32, 1, true, false, N},
    {"facemesh", false, 48, 48, 32, 1, 32, 1, false, B, N},
    {"facemesh", true, 48, 48, 32, 3, 32, 2, true, false, N},
    {"facemesh", false, 24, 24, 32, 1, 64, 1, false, B, N},
    {"facemesh", true, 24, 24, 64, 3, 64, 1, true, false, N},
    {"facemesh", false, 24, 24, 64, 1, 64, 1, false, B, N},
    {"facemesh", true, 24, 24, 64, 3, 64, 2, true, false, N},
    {"facemesh", false, 12, 12, 64, 1, 128, 1, false, B, N},
    {"facemesh", true, 12, 12, 128, 3, 128, 1, true, false, N},
    {"facemesh", false, 12, 12, 128, 1, 128, 1, false, B, N},
    {"facemesh", true, 12, 12, 128, 3, 128, 2, true, false, N},
    {"facemesh", false, 6, 6, 128, 1, 128, 1, false, B, N},
    {"facemesh", true, 6, 6, 128, 3, 128, 1, true, false, N},
    {"facemesh", true, 6, 6, 128, 3, 128, 2, true, false, N},
    {"facemesh", false, 3, 3, 128, 1, 128, 1, false, B, N},
    {"facemesh", true, 3, 3, 128, 3, 128, 1, true, false, N},
    {"facemesh", false, 3, 3, 128, 1, 32, 1, false, B, N},
    {"facemesh", true, 3, 3, 32, 3, 32, 1, true, false, N},
    {"facemesh", false, 3, 3, 32, 1, 32, 1, false, B, N},
    {"facemesh", false, 3, 3, 32, 3, 1, 3, false, B, N},
    {"facemesh", false, 3, 3, 32, 3, 266, 3, false, B, N},
    {"facemesh", false, 3, 3, 32, 3, 1404, 3, false, B, N},
};
#undef B
#undef N
#undef R

/* TensorFlow's SAME padding for one dimension. */
static void same_pad(int64_t in, int64_t k, int64_t stride, int64_t *out, int64_t *before, int64_t *after) {
  *out = (in + stride - 1) / stride;
  int64_t total = (*out - 1) * stride + k - in;
  if (total < 0) total = 0;
  *before = total / 2;
  *after = total - *before;
}

static tfd_dnnl_conv_shape shape_of(const layer *l) {
  tfd_dnnl_conv_shape s = {.n = 1, .h = l->h, .w = l->w, .c = l->c, .kh = l->k, .kw = l->k, .o = l->o,
                           .stride = {l->stride, l->stride}, .dilation = {1, 1}};
  if (l->same) {
    same_pad(l->h, l->k, l->stride, &s.oh, &s.pad_before[0], &s.pad_after[0]);
    same_pad(l->w, l->k, l->stride, &s.ow, &s.pad_before[1], &s.pad_after[1]);
  } else {
    s.oh = (l->h - l->k) / l->stride + 1;
    s.ow = (l->w - l->k) / l->stride + 1;
  }
  return s;
}

/* 64-byte aligned (as tfdev's allocator gives), filled from a fixed sequence in [-1, 1]. */
static float *filled(int64_t n, unsigned seed) {
  float *p = NULL;
  if (posix_memalign((void **)&p, 64, (size_t)n * sizeof *p) != 0) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  for (int64_t i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    p[i] = (float)((seed >> 9) % 2001) / 1000.0f - 1.0f;
  }
  return p;
}

static void print_cpu(void) {
  char line[256], name[128] = "unknown";
  FILE *f = fopen("/proc/cpuinfo", "r");
  while (f && fgets(line, sizeof line, f)) {
    char *v = strchr(line, ':');
    if (strncmp(line, "model name", 10) == 0 && v) {
      v++;
      v += strspn(v, " \t");
      v[strcspn(v, "\n")] = 0;
      snprintf(name, sizeof name, "%s", v);
      break;
    }
  }
  if (f) fclose(f);
  const dnnl_version_t *dv = dnnl_version();
  printf("CPU: %s, %ld cores online | oneDNN %d.%d.%d (ISA code 0x%x) | XNNPACK: the system's (Debian 12: git "
         "2022-02-16)\nOMP_WAIT_POLICY=%s GOMP_SPINCOUNT=%s\n",
         name, sysconf(_SC_NPROCESSORS_ONLN), dv->major, dv->minor, dv->patch, (unsigned)dnnl_get_effective_cpu_isa(),
         getenv("OMP_WAIT_POLICY") ? getenv("OMP_WAIT_POLICY") : "(unset)",
         getenv("GOMP_SPINCOUNT") ? getenv("GOMP_SPINCOUNT") : "(unset)");
}

typedef struct totals {
  double dnnl, xnn, best;
} totals;

static bool use_dnnl = true, use_xnn = true;

static void run_table(int threads, int min_reps, totals *t) {
  printf("\n%d thread%s: microseconds per run, medians (ratio = oneDNN / XNNPACK)\n", threads, threads > 1 ? "s" : "");
  printf("%-3s %-9s %-40s %9s %9s %6s  %-8s %s\n", "#", "model", "layer", "oneDNN", "XNNPACK", "ratio", "winner",
         "max diff");
  memset(t, 0, sizeof *t);
  for (size_t i = 0; i < sizeof layers / sizeof layers[0]; i++) {
    const layer *l = &layers[i];
    tfd_dnnl_conv_shape s = shape_of(l);
    int64_t nx = s.h * s.w * s.c, ny = s.oh * s.ow * s.o, nf = s.kh * s.kw * (l->dw ? s.o : s.c * s.o);
    float *x = filled(nx, 1 + (unsigned)i), *f = filled(nf, 100 + (unsigned)i), *b = filled(s.o, 200 + (unsigned)i);
    float *yd = filled(ny, 0), *yx = filled(ny, 0);
    char name[128];
    snprintf(name, sizeof name, "%s %lldx%lldx%lld %lldx%lldx%lldx%lld s%lld %s%s", l->dw ? "dw" : "conv",
             (long long)l->h, (long long)l->w, (long long)l->c, (long long)l->k, (long long)l->k, (long long)l->c,
             (long long)(l->dw ? 1 : l->o), (long long)l->stride, l->same ? "SAME" : "VALID",
             l->act == TFD_ACT_RELU ? " +b+relu" : l->bias ? " +b" : "");
    tfd_dnnl_conv *d = use_dnnl ? tfd_dnnl_conv_new(l->dw, l->bias, l->act, 0.0f, true, false) : NULL;
    tfd_xnn_conv *xn = use_xnn ? tfd_xnn_conv_new(l->dw, l->bias, l->act, true) : NULL;
    tfd_status st = TFD_STATUS_INIT;
    bool d_ok = d && tfd_dnnl_conv_run(d, &s, x, f, b, NULL, yd, threads, &st) == TFD_OK;
    if (!d_ok && use_dnnl) fprintf(stderr, "%s: oneDNN: %s\n", name, st.msg ? st.msg : "not built");
    tfd_status_clear(&st);
    bool x_ok = xn && tfd_xnn_conv_run(xn, &s, x, f, b, yx, threads, &st) == TFD_OK;
    if (!x_ok && use_xnn) fprintf(stderr, "%s: XNNPACK: %s\n", name, st.msg ? st.msg : "not built");
    tfd_status_clear(&st);
    double diff = NAN;
    if (d_ok && x_ok) {
      double err = 0, mag = 1;
      for (int64_t k = 0; k < ny; k++) {
        double e = fabs((double)yd[k] - yx[k]);
        if (!(e <= err)) err = e;
        if (fabs((double)yd[k]) > mag) mag = fabs((double)yd[k]);
      }
      diff = err / mag;
    }
    /* Warm-up (a few runs each) also sizes the reps: about 0.25 s per library, at least min_reps. */
    double t0 = now();
    for (int r = 0; r < 5; r++) {
      if (d_ok) tfd_dnnl_conv_run(d, &s, x, f, b, NULL, yd, threads, NULL);
      if (x_ok) tfd_xnn_conv_run(xn, &s, x, f, b, yx, threads, NULL);
    }
    double per = (now() - t0) / 10;
    int reps = per > 0 ? (int)(0.25 / per) : min_reps;
    if (reps < min_reps) reps = min_reps;
    if (reps > 2001) reps = 2001;
    reps |= 1;
    double *td = malloc((size_t)reps * sizeof *td), *tx = malloc((size_t)reps * sizeof *tx);
    for (int r = 0; r < reps; r++)
      for (int k = 0; k < 2; k++) {
        bool dnnl_turn = (k == 0) == (r % 2 == 0); /* even reps: oneDNN first; odd: XNNPACK first */
        double a = now();
        if (dnnl_turn && d_ok) tfd_dnnl_conv_run(d, &s, x, f, b, NULL, yd, threads, NULL);
        if (!dnnl_turn && x_ok) tfd_xnn_conv_run(xn, &s, x, f, b, yx, threads, NULL);
        (dnnl_turn ? td : tx)[r] = (now() - a) * 1e6;
      }
    double md = d_ok ? median(td, reps) : NAN, mx = x_ok ? median(tx, reps) : NAN, ratio = md / mx;
    const char *winner = !(ratio == ratio) ? "-" : ratio > 1.03 ? "XNNPACK" : ratio < 1 / 1.03 ? "oneDNN" : "tie";
    printf("%-3zu %-9s %-40s %9.1f %9.1f %6.2f  %-8s %.1e\n", i + 1, l->model, name, md, mx, ratio, winner, diff);
    fflush(stdout);
    t->dnnl += md;
    t->xnn += mx;
    t->best += md < mx || mx != mx ? md : mx;
    free(td), free(tx);
    tfd_dnnl_conv_free(d);
    tfd_xnn_conv_free(xn);
    free(x), free(f), free(b), free(yd), free(yx);
  }
  printf("sum of medians: oneDNN %.0f us, XNNPACK %.0f us, faster of the two per layer %.0f us\n", t->dnnl, t->xnn,
         t->best);
}

int main(int argc, char **argv) {
  int min_reps = 51;
  const char *thread_list = "1 2";
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) min_reps = atoi(argv[++i]);
    else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) thread_list = argv[++i];
    else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc && strcmp(argv[i + 1], "onednn") == 0)
      use_xnn = false, i++;
    else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc && strcmp(argv[i + 1], "xnnpack") == 0)
      use_dnnl = false, i++;
    else {
      fprintf(stderr, "usage: %s [--reps N (at least 51)] [--threads \"1 2\"] [--only onednn|xnnpack]\n", argv[0]);
      return 2;
    }
  }
  if (min_reps < 51) min_reps = 51;
  print_cpu();
  printf("each layer: filters constant (packed once), warm; %s; >= %d reps\n",
         use_dnnl && use_xnn ? "the two libraries alternate rep by rep" : use_dnnl ? "oneDNN alone" : "XNNPACK alone",
         min_reps);
  const char *p = thread_list;
  char *end;
  for (long threads; (threads = strtol(p, &end, 10)) > 0 && end != p; p = end) {
    totals t;
    run_table((int)threads, min_reps, &t);
  }
  return 0;
}
