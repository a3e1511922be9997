/* The names of tfdev's dtypes ("float32"), inline so that code which links no libtfdev (the fake
 * GPU's math, runtime/testing/fake_gpu_math.c) names them from the same list as tfd_dtype_name. */
#ifndef TFDEV_RUNTIME_DTYPE_NAME_H
#define TFDEV_RUNTIME_DTYPE_NAME_H

#include <stddef.h>

#include "tfdev/tensor.h"

/* dt's name, or NULL when it is no dtype tfdev has. */
static inline const char *tfd_dtype_name_inline(tfd_dtype dt) {
  switch (dt) {
    case TFD_FLOAT32: return "float32";
    case TFD_FLOAT64: return "float64";
    case TFD_INT32: return "int32";
    case TFD_INT64: return "int64";
    case TFD_BOOL: return "bool";
    case TFD_UINT8: return "uint8";
    case TFD_FLOAT16: return "float16";
    case TFD_COMPLEX64: return "complex64";
    case TFD_STRING: return "string";
    case TFD_RESOURCE: return "resource";
    case TFD_VARIANT: return "variant";
  }
  return NULL;
}

#endif
