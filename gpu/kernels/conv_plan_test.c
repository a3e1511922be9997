/* How convolutions are put to cuDNN (conv_plan.c), on the CPU: TensorFlow's SAME padding split into
 * cuDNN's symmetric part and an explicit rest for the shapes models have, VALID and explicit
 * paddings, dilations, depthwise groups, batches cut to fit cuDNN's ints, and the inconsistent sizes
 * it refuses. Padding and output sizes are checked against TensorFlow's formulas computed here. */
#include "gpu/kernels/conv_plan.h"
#include "runtime/testing/harness.h"

/* TensorFlow's SAME: output ceil(in / stride), total padding split with the extra after. */
static void same(int64_t in, int64_t k, int64_t stride, int64_t dilation, int64_t *out, int64_t *before,
                 int64_t *after) {
  int64_t eff = (k - 1) * dilation + 1;
  *out = (in + stride - 1) / stride;
  int64_t total = (*out - 1) * stride + eff - in;
  if (total < 0) total = 0;
  *before = total / 2;
  *after = total - *before;
}

static tfd_dm_conv conv_same(int64_t n, int64_t h, int64_t w, int64_t c, int64_t k, int64_t o, int64_t stride,
                             int64_t dilation) {
  tfd_dm_conv p;
  memset(&p, 0, sizeof p);
  p.dtype = TFD_FLOAT32;
  p.n = n, p.h = h, p.w = w, p.c = c, p.kh = k, p.kw = k, p.o = o;
  p.stride[0] = p.stride[1] = stride;
  p.dilation[0] = p.dilation[1] = dilation;
  same(h, k, stride, dilation, &p.oh, &p.pad_before[0], &p.pad_after[0]);
  same(w, k, stride, dilation, &p.ow, &p.pad_before[1], &p.pad_after[1]);
  return p;
}

/* The image cuDNN sees, padded symmetrically by plan.pad, gives the same output size, and the
 * explicit rows put the image where TensorFlow's padding does. */
static void check_equivalent(const tfd_dm_conv *p, const tfd_conv_plan *plan) {
  for (int d = 0; d < 2; d++) {
    int64_t in = d ? p->w : p->h, padded = d ? plan->wp : plan->hp, k = d ? p->kw : p->kh, out = d ? p->ow : p->oh;
    CHECK_INT(plan->extra_before[d] + plan->pad[d], p->pad_before[d]);
    CHECK_INT(plan->extra_after[d] + plan->pad[d], p->pad_after[d]);
    CHECK(plan->extra_before[d] == 0 || plan->extra_after[d] == 0);
    CHECK_INT(padded, in + plan->extra_before[d] + plan->extra_after[d]);
    int64_t eff = (k - 1) * p->dilation[d] + 1;
    CHECK_INT((padded + 2 * plan->pad[d] - eff) / p->stride[d] + 1, out);
  }
}

static void test_same_padding_of_common_layers(void) {
  struct {
    int64_t h, k, stride, dilation;
    bool explicit_pad;
  } cases[] = {
      {224, 3, 2, 1, true},  /* 0 before, 1 after: the common stride-2 case */
      {224, 3, 1, 1, false}, /* 1 and 1 */
      {112, 1, 1, 1, false}, /* pointwise: none */
      {7, 7, 1, 1, false},   /* 3 and 3 */
      {225, 3, 2, 1, false}, /* odd size: 1 and 1 */
      {10, 4, 1, 1, true},   /* even kernel: 1 before, 2 after */
      {32, 3, 1, 2, false},  /* dilation 2: effective 5, 2 and 2 */
      {33, 3, 2, 2, false},  /* dilation with stride: total 4, 2 and 2 */
      {64, 5, 2, 1, true},   /* total 3: 1 and 2 */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tfd_dm_conv p = conv_same(2, cases[i].h, cases[i].h, 8, cases[i].k, 16, cases[i].stride, cases[i].dilation);
    tfd_conv_plan plan;
    char why[256] = "";
    CHECK(tfd_conv_plan_make(&p, &plan, why, sizeof why));
    if (why[0]) fprintf(stderr, "case %zu: %s\n", i, why);
    CHECK(plan.explicit_pad == cases[i].explicit_pad);
    check_equivalent(&p, &plan);
    CHECK_INT(plan.groups, 1);
    CHECK_INT(plan.cg, 8);
    CHECK_INT(plan.chunk_n, 2);
    CHECK(plan.use_cudnn);
    CHECK_INT(plan.filter_elems, 16 * cases[i].k * cases[i].k * 8);
  }
  /* the stride-2 case in detail */
  tfd_dm_conv p = conv_same(1, 224, 224, 3, 3, 32, 2, 1);
  tfd_conv_plan plan;
  CHECK(tfd_conv_plan_make(&p, &plan, NULL, 0));
  CHECK_INT(p.oh, 112);
  CHECK_INT(plan.pad[0], 0);
  CHECK_INT(plan.extra_before[0], 0);
  CHECK_INT(plan.extra_after[0], 1);
  CHECK_INT(plan.hp, 225);
}

static void test_explicit_and_valid(void) {
  tfd_dm_conv p = conv_same(1, 20, 30, 4, 3, 4, 1, 1);
  p.pad_before[0] = 3, p.pad_after[0] = 1; /* EXPLICIT, more before than after */
  p.pad_before[1] = 0, p.pad_after[1] = 0; /* VALID along the width */
  p.oh = 20 + 4 - 3 + 1;
  p.ow = 30 - 3 + 1;
  tfd_conv_plan plan;
  CHECK(tfd_conv_plan_make(&p, &plan, NULL, 0));
  CHECK(plan.explicit_pad);
  CHECK_INT(plan.pad[0], 1);
  CHECK_INT(plan.extra_before[0], 2);
  CHECK_INT(plan.extra_after[0], 0);
  CHECK_INT(plan.pad[1], 0);
  CHECK_INT(plan.wp, 30);
  check_equivalent(&p, &plan);
  /* VALID with a stride that leaves rows over: floor */
  tfd_dm_conv v = conv_same(1, 10, 10, 1, 3, 1, 4, 1);
  v.pad_before[0] = v.pad_after[0] = v.pad_before[1] = v.pad_after[1] = 0;
  v.oh = v.ow = (10 - 3) / 4 + 1;
  CHECK(tfd_conv_plan_make(&v, &plan, NULL, 0));
  CHECK(!plan.explicit_pad);
  check_equivalent(&v, &plan);
}

static void test_depthwise_groups(void) {
  tfd_dm_conv p = conv_same(1, 16, 16, 12, 3, 24, 1, 1); /* multiplier 2 */
  p.depthwise = true;
  tfd_conv_plan plan;
  CHECK(tfd_conv_plan_make(&p, &plan, NULL, 0));
  CHECK_INT(plan.groups, 12);
  CHECK_INT(plan.cg, 1);
  CHECK_INT(plan.filter_elems, 24 * 9);
  p.o = 25; /* not a multiple of c */
  char why[256];
  CHECK(!tfd_conv_plan_make(&p, &plan, why, sizeof why));
  CHECK_CONTAINS(why, "multiple");
}

static void test_batches_cut_to_fit_ints(void) {
  /* 512x512x64 images: 16M elements each, so 127 fit under 2^31 */
  tfd_dm_conv p = conv_same(1000, 512, 512, 64, 3, 64, 1, 1);
  tfd_conv_plan plan;
  CHECK(tfd_conv_plan_make(&p, &plan, NULL, 0));
  CHECK(plan.use_cudnn);
  CHECK_INT(plan.chunk_n, INT32_MAX / (512 * 512 * 64));
  CHECK(plan.chunk_n * 512 * 512 * 64 <= INT32_MAX);
  /* the larger of input and output decides: a 4x upsampling output */
  tfd_dm_conv q = conv_same(1000, 256, 256, 3, 3, 192, 1, 1);
  CHECK(tfd_conv_plan_make(&q, &plan, NULL, 0));
  CHECK_INT(plan.chunk_n, INT32_MAX / (256 * 256 * 192));
  q.n = 100; /* fewer than fit: one call */
  CHECK(tfd_conv_plan_make(&q, &plan, NULL, 0));
  CHECK_INT(plan.chunk_n, 100);
  /* one image beyond the ints: no cuDNN (the direct kernel runs) */
  tfd_dm_conv big = conv_same(1, 1 << 16, 1 << 16, 1, 1, 1, 1, 1);
  CHECK(tfd_conv_plan_make(&big, &plan, NULL, 0));
  CHECK(!plan.use_cudnn);
  /* backprop uses the same sizes: its gradient is the forward's input */
  tfd_dm_conv b = conv_same(3, 64, 64, 8, 3, 8, 2, 1);
  b.backprop_input = true;
  CHECK(tfd_conv_plan_make(&b, &plan, NULL, 0));
  CHECK(plan.explicit_pad);
  CHECK_INT(plan.chunk_n, 3);
}

static void test_refuses_inconsistent_sizes(void) {
  char why[256];
  tfd_conv_plan plan;
  tfd_dm_conv p = conv_same(1, 16, 16, 4, 3, 4, 1, 1);
  p.oh = 15;
  CHECK(!tfd_conv_plan_make(&p, &plan, why, sizeof why));
  CHECK_CONTAINS(why, "height: output 15");
  p = conv_same(1, 16, 16, 4, 3, 4, 1, 1);
  p.stride[1] = 0;
  CHECK(!tfd_conv_plan_make(&p, &plan, why, sizeof why));
  CHECK_CONTAINS(why, "stride");
  p = conv_same(1, 16, 16, 4, 3, 4, 1, 1);
  p.pad_after[0] = -1;
  CHECK(!tfd_conv_plan_make(&p, &plan, why, sizeof why));
  /* an input smaller than the window (VALID): no output rows, which is consistent */
  p = conv_same(1, 2, 2, 4, 3, 4, 1, 1);
  p.pad_before[0] = p.pad_after[0] = p.pad_before[1] = p.pad_after[1] = 0;
  p.oh = p.ow = 0;
  CHECK(tfd_conv_plan_make(&p, &plan, why, sizeof why));
  /* no input channels: an empty sum */
  p = conv_same(1, 4, 4, 0, 3, 4, 1, 1);
  CHECK(tfd_conv_plan_make(&p, &plan, why, sizeof why));
  CHECK(plan.empty_sum);
}

static const tfd_test tests[] = {
    {"SAME padding of common layers: symmetric part and explicit rest", test_same_padding_of_common_layers},
    {"explicit and VALID paddings", test_explicit_and_valid},
    {"depthwise filters are groups of one channel", test_depthwise_groups},
    {"batches cut so every cuDNN tensor fits its ints", test_batches_cut_to_fit_ints},
    {"inconsistent sizes refused with the reason", test_refuses_inconsistent_sizes},
};

TFD_TEST_MAIN(tests)
