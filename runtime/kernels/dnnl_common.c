/* Shared oneDNN helpers (see dnnl_common.h). */
#include "dnnl_common.h"

#ifdef TFDEV_WITH_ONEDNN
#include <string.h>

bool tfd_dnnl_open(dnnl_engine_t *engine, dnnl_stream_t *stream) {
  if (dnnl_engine_create(engine, dnnl_cpu, 0) != dnnl_success) return false;
  if (dnnl_stream_create(stream, *engine, dnnl_stream_default_flags) != dnnl_success) {
    dnnl_engine_destroy(*engine);
    return false;
  }
  return true;
}

void tfd_dnnl_close(dnnl_engine_t engine, dnnl_stream_t stream) {
  dnnl_stream_destroy(stream);
  dnnl_engine_destroy(engine);
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
