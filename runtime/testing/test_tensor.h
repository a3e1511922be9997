/* The one helper the C tests and their graph builders share for making a tensor inline: the public
 * maker (tfdev.h: a tfd_code, the handle in *out) turned back into an expression. Test code only. */
#ifndef TFDEV_TESTING_TEST_TENSOR_H
#define TFDEV_TESTING_TEST_TENSOR_H

#include "tfdev/tfdev.h"

/* A host tensor of dtype dt and shape dims holding a copy of data, for a test's feeds and constants
 * written inline: the new reference (the caller's), NULL with st set (st may be NULL) when it cannot
 * be made. */
static inline tfd_tensor *tfd_test_tensor(tfd_dtype dt, const int64_t *dims, int ndims, const void *data, size_t nbytes,
                                          tfd_status *st) {
  tfd_tensor *t = NULL;
  tfd_tensor_from_bytes(NULL, dt, dims, ndims, data, nbytes, &t, st);
  return t;
}

#endif
