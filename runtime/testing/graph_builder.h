/* Small GraphDef builders the C tests share: nodes with up to two inputs and a device, attrs of
 * the common kinds, float32 tensors. Test code only; errors surface when the graph is used. */
#ifndef TFDEV_TESTING_GRAPH_BUILDER_H
#define TFDEV_TESTING_GRAPH_BUILDER_H

#include "tfdev/tfdev.h"
#include "test_tensor.h"

/* A node of `op` in g; in0, in1 and device may be NULL. The graph owns it. */
static inline tfd_node_def *tg_node(tfd_graph_def *g, const char *name, const char *op, const char *in0,
                                    const char *in1, const char *device) {
  tfd_node_def *n = tfd_graph_def_add_node(g, name, op, NULL);
  if (in0) tfd_node_def_add_input(n, in0, NULL);
  if (in1) tfd_node_def_add_input(n, in1, NULL);
  if (device) tfd_node_def_set_device(n, device, NULL);
  return n;
}

/* A Const node holding a copy of data (nd dims, dtype dt). */
static inline tfd_node_def *tg_const(tfd_graph_def *g, const char *name, tfd_dtype dt, const int64_t *dims, int nd,
                                     const void *data) {
  int64_t n = 1;
  for (int i = 0; i < nd; i++) n *= dims[i];
  tfd_tensor *t = tfd_test_tensor(dt, dims, nd, data, (size_t)n * tfd_dtype_size(dt), NULL);
  tfd_attr_value v = {.type = TFD_ATTR_TENSOR, .tensor = t};
  tfd_node_def *node = tg_node(g, name, "Const", NULL, NULL, NULL);
  tfd_node_def_set_attr(node, "value", &v, NULL);
  tfd_tensor_unref(t);
  return node;
}

/* Sets a tensor attr and drops the caller's reference to t. */
static inline void tg_set_tensor(tfd_node_def *n, const char *attr, tfd_tensor *t) {
  tfd_attr_value v = {.type = TFD_ATTR_TENSOR, .tensor = t};
  tfd_node_def_set_attr(n, attr, &v, NULL);
  tfd_tensor_unref(t);
}

static inline void tg_set_type(tfd_node_def *n, const char *attr, tfd_dtype dt) {
  tfd_attr_value v = {.type = TFD_ATTR_TYPE, .dtype = dt};
  tfd_node_def_set_attr(n, attr, &v, NULL);
}

/* A one-element list(type) attr. */
static inline void tg_set_types(tfd_node_def *n, const char *attr, tfd_dtype dt) {
  tfd_attr_value v = {.type = TFD_ATTR_LIST_TYPE, .list_len = 1, .list_type = &dt};
  tfd_node_def_set_attr(n, attr, &v, NULL);
}

/* float32 tensors copied from v; the caller owns the reference. */
static inline tfd_tensor *tg_f32(const float *v, const int64_t *dims, int nd) {
  int64_t n = 1;
  for (int i = 0; i < nd; i++) n *= dims[i];
  return tfd_test_tensor(TFD_FLOAT32, dims, nd, v, (size_t)n * 4, NULL);
}
static inline tfd_tensor *tg_vec(const float *v, int64_t n) { return tg_f32(v, &n, 1); }
static inline tfd_tensor *tg_scalar(float v) { return tg_f32(&v, NULL, 0); }

/* A session with one GPU, step graphs on or off, created with g (borrowed); NULL with the status set.
 * The caller frees it with tfd_session_free. */
static inline tfd_session *tg_gpu_session(const tfd_graph_def *g, bool graphs, tfd_status *st) {
  tfd_session_options *o = tfd_session_options_new();
  tfd_session_options_set_device_count(o, "GPU", 1, NULL);
  tfd_session_options_set_gpu_graphs(o, graphs);
  tfd_session *s = NULL;
  tfd_session_new(o, NULL, NULL, &s, st);
  tfd_session_options_free(o);
  if (s && tfd_session_create(s, g, st) != TFD_OK) {
    tfd_session_free(s);
    s = NULL;
  }
  return s;
}

#endif
