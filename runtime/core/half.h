/* IEEE 754 half precision (float16) <-> float32, exact in one direction and rounded to nearest
 * even in the other, with infinities, NaNs and subnormals. tfdev stores float16 tensors and
 * computes on them in float32, as the issue of real models asks (weights quantized to float16).
 * TFD_HD: the CUDA kernels convert with the same code. */
#ifndef TFDEV_RUNTIME_HALF_H
#define TFDEV_RUNTIME_HALF_H

#include <stdint.h>
#include <string.h>

#include "hd.h"

static inline TFD_HD float tfd_half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, mant = h & 0x3ff, bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13); /* inf, nan */
  } else if (exp) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (!mant) {
    bits = sign; /* zero */
  } else { /* subnormal: normalise */
    int e = -1;
    do {
      e++;
      mant <<= 1;
    } while (!(mant & 0x400));
    bits = sign | ((uint32_t)(112 - e) << 23) | ((mant & 0x3ff) << 13);
  }
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static inline TFD_HD uint16_t tfd_float_to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
  uint32_t exp = (x >> 23) & 0xff, mant = x & 0x7fffff;
  if (exp == 0xff) return (uint16_t)(sign | 0x7c00 | (mant ? 0x200 | (mant >> 13) : 0)); /* inf, nan (quiet) */
  int32_t e = (int32_t)exp - 127 + 15;
  if (e >= 0x1f) return (uint16_t)(sign | 0x7c00); /* overflow: infinity */
  if (e <= 0) {                                      /* subnormal or zero */
    if (e < -10) return sign;
    mant |= 0x800000;
    int shift = 14 - e;
    uint32_t half = mant >> shift, rest = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rest > mid || (rest == mid && (half & 1))) half++;
    return (uint16_t)(sign | half);
  }
  uint32_t half = ((uint32_t)e << 10) | (mant >> 13), rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) half++; /* may carry into the exponent: still right */
  return (uint16_t)(sign | half);
}

#endif
