/* Tensor operations for the runtime only. */
#ifndef TFDEV_RUNTIME_TENSOR_INTERNAL_H
#define TFDEV_RUNTIME_TENSOR_INTERNAL_H

#include <stdbool.h>

#include "tfdev/tensor.h"

/* Takes n more references at once (n >= 0): an executor handing one output to many consumers. */
void tfd_tensor_ref_n(tfd_tensor *t, int n);

/* Whether t is the only reference to itself and its buffer is shared with no view: a holder of
 * that reference may write the elements in place without anyone seeing it. */
bool tfd_tensor_is_exclusive(const tfd_tensor *t);

#endif
