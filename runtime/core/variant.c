/* Variant values: reference counting and a variant tensor's elements. */
#include "variant.h"

#include <stddef.h>

void tfd_variant_init(tfd_variant *v, const tfd_variant_ops *ops) {
  tfd_refcount_init(&v->refs);
  v->ops = ops;
}

tfd_variant *tfd_variant_ref(tfd_variant *v) {
  if (v) tfd_refcount_inc(&v->refs);
  return v;
}

void tfd_variant_unref(tfd_variant *v) {
  if (v && tfd_refcount_dec(&v->refs)) v->ops->destroy(v);
}

bool tfd_variant_is_unique(const tfd_variant *v) { return tfd_refcount_get(&v->refs) == 1; }

tfd_variant *tfd_tensor_variant_at(const tfd_tensor *t, int64_t i) {
  tfd_variant *const *e = tfd_tensor_const_data(t);
  return e[i];
}

void tfd_tensor_set_variant_at(tfd_tensor *t, int64_t i, tfd_variant *v) {
  tfd_variant **e = tfd_tensor_data(t);
  tfd_variant *old = e[i];
  e[i] = v;
  tfd_variant_unref(old);
}
