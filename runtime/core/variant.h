/* Variant values: the runtime objects a DT_VARIANT tensor's elements refer to (TensorFlow's Variant).
 *
 * An element of a variant tensor is a tfd_variant pointer that holds one reference; the tensor's
 * buffer drops them when it goes, so views and forwarded tensors share the objects safely. A NULL
 * element is an empty variant. Objects are immutable once another holder can see them: a kernel may
 * change one in place only while it holds the sole reference to the tensor, its buffer and the
 * object (copy on write, as TensorFlow's TensorList). */
#ifndef TFDEV_RUNTIME_VARIANT_H
#define TFDEV_RUNTIME_VARIANT_H

#include <stdbool.h>
#include <stdint.h>

#include "refcount.h"
#include "tfdev/tensor.h"

typedef struct tfd_variant tfd_variant;

typedef struct tfd_variant_ops {
  const char *type_name;               /* "tensorflow::TensorList", for messages */
  void (*destroy)(tfd_variant *v);     /* frees the object when its last reference goes */
} tfd_variant_ops;

/* Embedded first in every variant object. */
struct tfd_variant {
  tfd_refcount refs;
  const tfd_variant_ops *ops;
};

/* Starts v's count at one reference, the creator's. */
void tfd_variant_init(tfd_variant *v, const tfd_variant_ops *ops);
tfd_variant *tfd_variant_ref(tfd_variant *v);
void tfd_variant_unref(tfd_variant *v); /* NULL is fine */
/* Whether the caller's reference is the only one. */
bool tfd_variant_is_unique(const tfd_variant *v);

/* Element i of variant tensor t (borrowed; NULL when empty). t must be a variant tensor. */
tfd_variant *tfd_tensor_variant_at(const tfd_tensor *t, int64_t i);
/* Stores v (the caller's reference moves into t) as element i, dropping what was there. */
void tfd_tensor_set_variant_at(tfd_tensor *t, int64_t i, tfd_variant *v);

#endif
