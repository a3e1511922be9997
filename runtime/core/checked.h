/* Overflow-checked integer arithmetic for sizes that come from user data.
 *
 * Shapes, element counts and byte sizes are products of numbers a caller
 * chose; multiplying them unchecked is undefined behaviour in C and a heap
 * overflow once the result sizes a buffer. Each helper returns false (and
 * leaves *out alone) when the exact result does not fit. */
#ifndef TFDEV_RUNTIME_CHECKED_H
#define TFDEV_RUNTIME_CHECKED_H

#include <stdbool.h>
#include <stdint.h>

static inline bool tfd_checked_mul(int64_t a, int64_t b, int64_t *out) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return false;
  *out = r;
  return true;
}

static inline bool tfd_checked_add(int64_t a, int64_t b, int64_t *out) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return false;
  *out = r;
  return true;
}

#endif
