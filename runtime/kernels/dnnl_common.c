/* Shared oneDNN helpers (see dnnl_common.h). */
#include "dnnl_common.h"

#include <stdint.h>
#include <string.h>

static uint64_t slot_used(const void *entries, size_t size, size_t used_offset, int i) {
  uint64_t used;
  memcpy(&used, (const char *)entries + (size_t)i * size + used_offset, sizeof used);
  return used;
}

int tfd_dnnl_slot_for_new(const void *entries, size_t size, size_t used_offset, int *num) {
  if (*num < TFD_DNNL_CACHED_SHAPES) return (*num)++;
  int oldest = 0;
  for (int i = 1; i < TFD_DNNL_CACHED_SHAPES; i++)
    if (slot_used(entries, size, used_offset, i) < slot_used(entries, size, used_offset, oldest)) oldest = i;
  return oldest;
}

void tfd_dnnl_slot_drop(void *entries, size_t size, int i, int *num) {
  char *base = entries;
  (*num)--;
  if (i != *num) memcpy(base + (size_t)i * size, base + (size_t)*num * size, size);
  memset(base + (size_t)*num * size, 0, size);
}

#ifdef TFDEV_WITH_ONEDNN
bool tfd_dnnl_base_init(tfd_dnnl_base *b) {
  if (dnnl_engine_create(&b->engine, dnnl_cpu, 0) != dnnl_success) return false;
  if (dnnl_stream_create(&b->stream, b->engine, dnnl_stream_default_flags) != dnnl_success) {
    dnnl_engine_destroy(b->engine);
    return false;
  }
  pthread_mutex_init(&b->mu, NULL);
  b->tick = 0;
  return true;
}

void tfd_dnnl_base_destroy(tfd_dnnl_base *b) {
  dnnl_stream_destroy(b->stream);
  dnnl_engine_destroy(b->engine);
  pthread_mutex_destroy(&b->mu);
}


dnnl_status_t tfd_dnnl_append_activation(dnnl_post_ops_t po, tfd_activation act, float alpha) {
  switch (act) {
    case TFD_ACT_RELU: return dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f);
    case TFD_ACT_RELU6: return dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_clip, 0.0f, 6.0f);
    case TFD_ACT_ELU: return dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_elu, 1.0f, 0.0f);
    case TFD_ACT_LEAKY_RELU: return dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_relu, alpha, 0.0f);
    case TFD_ACT_TANH: return dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_tanh, 0.0f, 0.0f);
    case TFD_ACT_SIGMOID: return dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_logistic, 0.0f, 0.0f);
    default: return dnnl_success;
  }
}

dnnl_status_t tfd_dnnl_refuse_reference(const_dnnl_primitive_desc_t pd) {
  const char *impl = NULL;
  if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success && impl &&
      strncmp(impl, "ref", 3) == 0)
    return dnnl_unimplemented;
  return dnnl_success;
}
#endif
