/* TopKV2's order, which the CPU kernel (k_gather.c) and the fake GPU's math
 * (runtime/testing/fake_gpu_math.c) both sort by: larger values first, then lower indices (TensorFlow's
 * order on ties); NaN counts as largest. Inline, with no library calls, because the fake GPU's module
 * links no libtfdev. */
#ifndef TFDEV_RUNTIME_TOPK_ORDER_H
#define TFDEV_RUNTIME_TOPK_ORDER_H

#include <stdbool.h>
#include <stdint.h>

/* An entry of one row: floats compare by f, integers by i (the other field is 0), so one comparator
 * serves every dtype; idx is the entry's column. */
typedef struct tfd_topk_item {
  double f;
  int64_t i, idx;
} tfd_topk_item;

/* qsort's comparator over tfd_topk_items. */
static inline int tfd_topk_cmp(const void *pa, const void *pb) {
  const tfd_topk_item *a = pa, *b = pb;
  bool an = a->f != a->f, bn = b->f != b->f;
  if (an != bn) return an ? -1 : 1;
  if (!an && a->f != b->f) return a->f > b->f ? -1 : 1;
  if (a->i != b->i) return a->i > b->i ? -1 : 1;
  return a->idx < b->idx ? -1 : a->idx > b->idx;
}

#endif
