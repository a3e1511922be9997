/* String elements: the objects a DT_STRING tensor's elements refer to (TensorFlow's tstring).
 *
 * A string tensor's elements are tfd_variant references (variant.h), as a variant tensor's are;
 * their objects are immutable byte strings, and a NULL element is the empty string. Kernels that
 * make strings set elements with tfd_tensor_set_variant_at (the tensor takes the reference); kernels
 * that only move elements copy the references as plain bytes into a tensor marked as borrowing
 * (tensor_internal.h), and the kernel registry has the tensor take its references when the kernel
 * returns. Sharing a string between elements and tensors is therefore the rule, not a copy. */
#ifndef TFDEV_RUNTIME_TSTRING_H
#define TFDEV_RUNTIME_TSTRING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "variant.h"

/* A new string holding a copy of len bytes (one reference, the caller's), or NULL for the empty
 * string. *oom is set when the copy could not be allocated (NULL is returned then too). */
tfd_variant *tfd_tstring_new(const void *bytes, size_t len, bool *oom);
/* The bytes of s, NUL-terminated after *len; "" with *len 0 for NULL (the empty string). */
const char *tfd_tstring_data(const tfd_variant *s, size_t *len);

/* Whether two strings hold the same bytes (NULL is the empty string). */
static inline bool tfd_tstring_equal(const tfd_variant *a, const tfd_variant *b) {
  size_t la, lb;
  const char *x = tfd_tstring_data(a, &la), *y = tfd_tstring_data(b, &lb);
  return a == b || (la == lb && memcmp(x, y, la) == 0);
}
/* A hash of s's bytes (FNV-1a), equal for equal strings: Unique's sets and the hash tables. */
uint64_t tfd_tstring_hash(const tfd_variant *s);

/* Element i of string tensor t: its bytes and length (no checks: t is a host string tensor). */
static inline const char *tfd_tensor_str(const tfd_tensor *t, int64_t i, size_t *len) {
  return tfd_tstring_data(tfd_tensor_variant_at(t, i), len);
}
/* Sets element i of string tensor t to a copy of the bytes; false when out of memory. */
bool tfd_tensor_set_str(tfd_tensor *t, int64_t i, const void *bytes, size_t len);

#endif
