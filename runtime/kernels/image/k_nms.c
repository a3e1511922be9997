/* Non-maximum suppression, V2 to V5 (TensorFlow's non_max_suppression_op.cc): greedy selection of
 * boxes by descending score, dropping a candidate whose IoU with a selected box passes
 * iou_threshold, or (soft NMS, V5 with soft_nms_sigma > 0) decaying its score by
 * exp(-iou^2 / (2 sigma)) and putting it back.
 *
 * Candidates are those scoring above score_threshold; equal scores go lower box index first. A
 * candidate is compared only with the boxes selected since it was last looked at (TensorFlow's
 * suppress_begin_index). IoU is computed in float32 from the corners in either order; a box of no
 * area overlaps nothing. float16 inputs are computed in float32 and the scores rounded back. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/half.h"
#include "../../core/status_internal.h"
#include "../kernel.h"

typedef struct candidate {
  int box;
  float score;
  int suppress_begin;
} candidate;

/* Heap order: higher score first, then lower box index. */
static bool before(const candidate *a, const candidate *b) {
  return a->score > b->score || (a->score == b->score && a->box < b->box);
}

static void heap_push(candidate *h, int *n, candidate c) {
  int i = (*n)++;
  while (i > 0 && before(&c, &h[(i - 1) / 2])) {
    h[i] = h[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h[i] = c;
}

static candidate heap_pop(candidate *h, int *n) {
  candidate top = h[0], last = h[--*n];
  int i = 0;
  for (;;) {
    int l = 2 * i + 1, r = l + 1, m = i;
    const candidate *best = &last;
    if (l < *n && before(&h[l], best)) m = l, best = &h[l];
    if (r < *n && before(&h[r], best)) m = r;
    if (m == i) break;
    h[i] = h[m];
    i = m;
  }
  if (*n > 0) h[i] = last;
  return top;
}

static float iou(const float *b, int i, int j) {
  const float *p = b + 4 * (size_t)i, *q = b + 4 * (size_t)j;
  float ymin_i = fminf(p[0], p[2]), xmin_i = fminf(p[1], p[3]), ymax_i = fmaxf(p[0], p[2]), xmax_i = fmaxf(p[1], p[3]);
  float ymin_j = fminf(q[0], q[2]), xmin_j = fminf(q[1], q[3]), ymax_j = fmaxf(q[0], q[2]), xmax_j = fmaxf(q[1], q[3]);
  float area_i = (ymax_i - ymin_i) * (xmax_i - xmin_i), area_j = (ymax_j - ymin_j) * (xmax_j - xmin_j);
  if (area_i <= 0 || area_j <= 0) return 0.0f;
  float iy = fmaxf(fminf(ymax_i, ymax_j) - fmaxf(ymin_i, ymin_j), 0.0f);
  float ix = fmaxf(fminf(xmax_i, xmax_j) - fmaxf(xmin_i, xmin_j), 0.0f);
  float inter = iy * ix;
  return inter / (area_i + area_j - inter);
}

/* A float32 copy of a float32 or float16 tensor's elements (NULL when out of memory). */
static float *as_float(const tfd_tensor *t) {
  int64_t n = tfd_tensor_numel(t);
  float *f = malloc((size_t)(n ? n : 1) * sizeof *f);
  if (!f) return NULL;
  if (tfd_tensor_dtype(t) == TFD_FLOAT32) {
    if (n) memcpy(f, tfd_tensor_const_data(t), (size_t)n * sizeof *f);
  } else {
    const uint16_t *h = tfd_tensor_const_data(t);
    for (int64_t i = 0; i < n; i++) f[i] = tfd_half_to_float(h[i]);
  }
  return f;
}

static float scalar_float(const tfd_tensor *t) {
  return tfd_tensor_dtype(t) == TFD_FLOAT16 ? tfd_half_to_float(*(const uint16_t *)tfd_tensor_const_data(t))
                                            : *(const float *)tfd_tensor_const_data(t);
}

/* "max_output_size must be 0-D, got shape [2]" when input i is not a scalar. */
static bool need_scalar(tfd_kernel_context *c, const tfd_kernel *k, int i, const char *what) {
  if (tfd_tensor_ndims(c->inputs[i]) == 0) return true;
  char buf[96];
  tfd_shape s;
  tfd_shape_of_tensor(c->inputs[i], &s);
  tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "%s must be 0-D, got shape %s", what, tfd_shape_string(&s, buf, sizeof buf));
  return false;
}

static void k_nms(tfd_kernel *k, tfd_kernel_context *c) {
  int version = (int)k->code;
  const tfd_tensor *boxes = c->inputs[0], *scores = c->inputs[1];
  if (!need_scalar(c, k, 2, "max_output_size") || !need_scalar(c, k, 3, "iou_threshold") ||
      (version >= 3 && !need_scalar(c, k, 4, "score_threshold")) ||
      (version == 5 && !need_scalar(c, k, 5, "soft_nms_sigma")))
    return;
  float iou_threshold = scalar_float(c->inputs[3]);
  if (!(iou_threshold >= 0.0f && iou_threshold <= 1.0f)) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "iou_threshold must be in [0, 1]");
    return;
  }
  float score_threshold = version >= 3 ? scalar_float(c->inputs[4]) : -INFINITY;
  float sigma = version == 5 ? scalar_float(c->inputs[5]) : 0.0f;
  if (!(sigma >= 0.0f)) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "soft_nms_sigma_val must be >= 0");
    return;
  }
  char buf[96];
  tfd_shape bs, ss;
  tfd_shape_of_tensor(boxes, &bs);
  tfd_shape_of_tensor(scores, &ss);
  if (bs.ndims != 2) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "boxes must be 2-D%s (Shape must be rank 2 but is rank %d)",
                    tfd_shape_string(&bs, buf, sizeof buf), bs.ndims);
    return;
  }
  if (bs.dims[1] != 4) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "boxes must have 4 columns (Dimension must be 4 but is %lld)",
                    (long long)bs.dims[1]);
    return;
  }
  if (ss.ndims != 1) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "scores must be 1-D%s (Shape must be rank 1 but is rank %d)",
                    tfd_shape_string(&ss, buf, sizeof buf), ss.ndims);
    return;
  }
  if (ss.dims[0] != bs.dims[0]) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                    "scores has incompatible shape (Dimensions must be equal, but are %lld and %lld)",
                    (long long)bs.dims[0], (long long)ss.dims[0]);
    return;
  }
  if (bs.dims[0] > INT32_MAX) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "%lld boxes: at most 2^31-1 are supported", (long long)bs.dims[0]);
    return;
  }
  int num_boxes = (int)bs.dims[0];
  int32_t output_size = *(const int32_t *)tfd_tensor_const_data(c->inputs[2]);
  if (output_size < 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "output size must be non-negative");
    return;
  }
  float *b = as_float(boxes), *s = as_float(scores);
  candidate *heap = malloc((size_t)(num_boxes ? num_boxes : 1) * sizeof *heap);
  /* Each box is selected at most once: no more than min(output_size, num_boxes) are. */
  int cap = output_size < num_boxes ? output_size : num_boxes;
  int *selected = malloc((size_t)(cap ? cap : 1) * sizeof *selected);
  float *selected_scores = malloc((size_t)(cap ? cap : 1) * sizeof *selected_scores);
  if (!b || !s || !heap || !selected || !selected_scores) {
    tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory for %d boxes", num_boxes);
    goto done;
  }
  int n = 0, num_selected = 0;
  for (int i = 0; i < num_boxes; i++)
    if (s[i] > score_threshold) heap_push(heap, &n, (candidate){i, s[i], 0});
  bool soft = sigma > 0.0f;
  float scale = soft ? -0.5f / sigma : 0.0f;
  while (num_selected < output_size && n > 0) {
    candidate next = heap_pop(heap, &n);
    float original = next.score;
    bool hard_suppress = false;
    for (int j = num_selected - 1; j >= next.suppress_begin; --j) {
      float sim = iou(b, next.box, selected[j]);
      float weight = expf(scale * sim * sim);
      next.score *= soft || sim <= iou_threshold ? weight : 0.0f;
      if (!soft && sim > iou_threshold) {
        hard_suppress = true;
        break;
      }
      if (next.score <= score_threshold) break;
    }
    next.suppress_begin = num_selected;
    if (hard_suppress) continue;
    if (next.score == original) {
      selected[num_selected] = next.box;
      selected_scores[num_selected++] = next.score;
    } else if (next.score > score_threshold) {
      heap_push(heap, &n, next); /* soft-suppressed but still above the threshold: back in line */
    }
  }
  int64_t out_n = version >= 4 && k->keep_dims ? output_size : num_selected; /* pad_to_max_output_size */
  tfd_tensor *indices = tfd_kernel_alloc(c, k, TFD_INT32, &out_n, 1);
  tfd_tensor *out_scores = version == 5 ? tfd_kernel_alloc(c, k, k->T, &out_n, 1) : NULL;
  tfd_tensor *valid = version >= 4 ? tfd_kernel_alloc(c, k, TFD_INT32, NULL, 0) : NULL;
  if (!indices || (version == 5 && !out_scores) || (version >= 4 && !valid)) {
    tfd_tensor_unref(indices);
    tfd_tensor_unref(out_scores);
    tfd_tensor_unref(valid);
    goto done;
  }
  int32_t *idx = tfd_tensor_data(indices);
  for (int64_t i = 0; i < out_n; i++) idx[i] = i < num_selected ? selected[i] : 0;
  c->outputs[0] = indices;
  if (out_scores) {
    for (int64_t i = 0; i < out_n; i++) {
      float v = i < num_selected ? selected_scores[i] : 0.0f;
      if (k->T == TFD_FLOAT16) ((uint16_t *)tfd_tensor_data(out_scores))[i] = tfd_float_to_half(v);
      else ((float *)tfd_tensor_data(out_scores))[i] = v;
    }
    c->outputs[1] = out_scores;
  }
  if (valid) {
    *(int32_t *)tfd_tensor_data(valid) = num_selected;
    c->outputs[version == 5 ? 2 : 1] = valid;
  }
done:
  free(b);
  free(s);
  free(heap);
  free(selected);
  free(selected_scores);
}

tfd_code tfd_setup_nms(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  (void)st;
  const char *op = init->op->name;
  k->code = op[strlen(op) - 1] - '0';
  k->keep_dims = tfd_attr_bool(init->node, "pad_to_max_output_size", false);
  k->compute = k_nms;
  return TFD_OK;
}
