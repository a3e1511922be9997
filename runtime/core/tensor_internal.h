/* Tensor operations for the runtime only. */
#ifndef TFDEV_RUNTIME_TENSOR_INTERNAL_H
#define TFDEV_RUNTIME_TENSOR_INTERNAL_H

#include "tfdev/tensor.h"

/* Takes n more references at once (n >= 0): an executor handing one output to many consumers. */
void tfd_tensor_ref_n(tfd_tensor *t, int n);

#endif
