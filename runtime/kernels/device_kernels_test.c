/* The device kernels' host side through the C API, against the fake GPU backend and its math
 * (ctest sets TFDEV_BACKENDS=fakegpu): walks merge what they can, outputs land in the memory their
 * dtype lives in (int32 on the host, the rest in device memory), ExpandDims and Squeeze alias their
 * input's buffer, shape-like int64 inputs are read from device memory, a device without math fails
 * with INTERNAL naming it, steps leave no device memory behind, and a GPU partition's nodes run
 * inline on one thread. Values against the CPU kernels
 * are spec/device_kernels_spec.lua's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/core/allocator_internal.h"
#include "runtime/core/tensor_internal.h"
#include "runtime/kernels/device_kernel.h"
#include "runtime/testing/graph_builder.h"
#include "runtime/testing/harness.h"

static tfd_device *find(tfd_session *s, const char *type) {
  tfd_device_mgr *m = tfd_session_device_mgr(s);
  for (size_t i = 0; m && i < tfd_device_mgr_size(m); i++)
    if (strcmp(tfd_device_type(tfd_device_mgr_get(m, i)), type) == 0) return tfd_device_mgr_get(m, i);
  return NULL;
}

/* ---- walks ---- */
static void test_walks(void) {
  tfd_dm_walk w;
  /* a contiguous [2, 3, 4] copy is one run of 24 */
  int64_t dims[3] = {2, 3, 4}, s[2][TFD_MAX_DIMS] = {{12, 4, 1}, {12, 4, 1}};
  CHECK_INT(tfd_dk_walk(&w, 3, dims, 2, s, NULL), 24);
  CHECK_INT(w.nd, 1);
  CHECK_INT(w.dims[0], 24);
  CHECK_INT(w.strides[0][0], 1);
  /* [3, 1, 5] + [1, 4, 1]: nothing merges, the size-1 dimensions of the output are kept as strides 0 */
  int64_t bd[3] = {3, 4, 5}, bs[2][TFD_MAX_DIMS] = {{5, 0, 1}, {0, 1, 0}};
  CHECK_INT(tfd_dk_walk(&w, 3, bd, 2, bs, NULL), 60);
  CHECK_INT(w.nd, 3);
  /* a scalar broadcast over [2, 1, 3]: the 1 dropped, then one run of 6 with stride 0 */
  int64_t sd[3] = {2, 1, 3}, ss[2][TFD_MAX_DIMS] = {{3, 3, 1}, {0, 0, 0}};
  CHECK_INT(tfd_dk_walk(&w, 3, sd, 2, ss, NULL), 6);
  CHECK_INT(w.nd, 1);
  CHECK_INT(w.strides[1][0], 0);
  /* a transpose [2, 3] -> [3, 2] keeps both dimensions; an empty one walks nothing */
  int64_t td[2] = {3, 2}, ts[2][TFD_MAX_DIMS] = {{1, 3}, {2, 1}}, off[2] = {5, 7};
  CHECK_INT(tfd_dk_walk(&w, 2, td, 2, ts, off), 6);
  CHECK_INT(w.nd, 2);
  CHECK_INT(w.offsets[0], 5);
  CHECK_INT(w.offsets[1], 7);
  int64_t ed[2] = {3, 0};
  CHECK_INT(tfd_dk_walk(&w, 2, ed, 2, ts, NULL), 0);
  /* rank 0: one element */
  CHECK_INT(tfd_dk_walk(&w, 0, NULL, 2, ts, NULL), 1);
  CHECK_INT(w.nd, 0);
}

/* ---- kernels run directly on a device, with device-resident inputs ---- */
typedef struct run {
  tfd_tensor *out[4];
  int nout;
} run;

/* Creates node n's kernel on d and runs it once on `in` (moved to the memory their dtypes live in
 * on d, as the executor's inputs are); the caller frees r's outputs. */
static tfd_code run_kernel(tfd_device *d, tfd_node_def *n, tfd_tensor **host_in, int nin, run *r, tfd_status *st) {
  const tfd_op_def *op = tfd_op_lookup(tfd_node_def_op(n));
  tfd_dtype in_types[4], out_types[4];
  tfd_shape in_shapes[4], out_shapes[4];
  tfd_tensor *in[4] = {0};
  memset(r, 0, sizeof *r);
  for (int i = 0; i < nin; i++) {
    in_types[i] = tfd_tensor_dtype(host_in[i]);
    tfd_shape_of_tensor(host_in[i], &in_shapes[i]);
  }
  r->nout = tfd_op_num_outputs(op, n);
  if (tfd_op_infer_node(op, n, nin, in_types, in_shapes, NULL, r->nout, out_types, out_shapes, st) != TFD_OK)
    return tfd_status_code(st);
  tfd_kernel_init init = {n, op, d, nin, in_types, out_types, r->nout};
  tfd_kernel *k = tfd_kernel_create(&init, st);
  if (!k) return tfd_status_code(st);
  for (int i = 0; i < nin; i++) in[i] = tfd_tensor_copy_to(host_in[i], tfd_kernel_memory_for(d, in_types[i]), st);
  tfd_kernel_context c = {.device = d, .allocator = tfd_device_get_allocator(d), .inputs = in, .num_inputs = nin,
                      .outputs = r->out, .num_outputs = r->nout, .status = st, .owns_inputs = false};
  k->compute(k, &c);
  for (int i = 0; i < nin; i++) tfd_tensor_unref(in[i]);
  k->base.ops->destroy(&k->base);
  return tfd_status_code(st);
}

static void free_run(run *r) {
  for (int i = 0; i < 4; i++) tfd_tensor_unref(r->out[i]);
}

/* A host copy of a device or host tensor. */
static tfd_tensor *host(tfd_tensor *t) { return tfd_tensor_copy_to(t, NULL, NULL); }

static void test_memories(void) {
  tfd_status *st = tfd_status_new();
  tfd_session *s = NULL;
  tfd_session_new(NULL, NULL, NULL, &s, st);
  tfd_device *gpu = s ? find(s, "GPU") : NULL;
  CHECK(gpu && gpu->math);
  if (!gpu) {
    tfd_session_free(s);
    tfd_status_free(st);
    return;
  }
  tfd_graph_def *g = tfd_graph_def_new();
  float xv[6] = {3, -1, 2, 7, 0.5f, -4};
  int64_t d23[2] = {2, 3}, one = 1, axis64 = 1;
  int32_t axis32 = 1;
  tfd_tensor *x = tg_f32(xv, d23, 2);
  tfd_tensor *a32 = NULL;
  tfd_tensor_from_bytes(NULL, TFD_INT32, NULL, 0, &axis32, 4, &a32, st);
  tfd_tensor *a64 = NULL;
  tfd_tensor_from_bytes(NULL, TFD_INT64, NULL, 0, &axis64, 8, &a64, st);
  run r;

  /* ArgMax: output_type int32 is made on the device and copied to the host; int64 stays there */
  for (int i = 0; i < 2; i++) {
    tfd_node_def *n = tg_node(g, i ? "am64" : "am32", "ArgMax", NULL, NULL, NULL);
    tg_set_type(n, "output_type", i ? TFD_INT64 : TFD_INT32);
    tfd_tensor *in[2] = {x, i ? a64 : a32}; /* the int64 axis is read out of device memory */
    CHECK_INT(run_kernel(gpu, n, in, 2, &r, st), TFD_OK);
    CHECK_STR(tfd_status_message(st), "");
    if (r.out[0]) {
      CHECK(tfd_tensor_on_host(r.out[0]) == !i);
      tfd_tensor *h = host(r.out[0]);
      CHECK(h && tfd_tensor_get_index(h, 0) == 0 && tfd_tensor_get_index(h, 1) == 0);
      tfd_tensor_unref(h);
    }
    free_run(&r);
  }
  /* Cast to int32 lands on the host, from int32 in device memory */
  tfd_node_def *cast = tg_node(g, "cast", "Cast", NULL, NULL, NULL);
  tg_set_type(cast, "DstT", TFD_INT32);
  CHECK_INT(run_kernel(gpu, cast, &x, 1, &r, st), TFD_OK);
  CHECK(r.out[0] && tfd_tensor_on_host(r.out[0]) && ((const int32_t *)tfd_tensor_const_data(r.out[0]))[3] == 7);
  tfd_tensor *c32 = r.out[0] ? tfd_tensor_ref(r.out[0]) : NULL;
  free_run(&r);
  tfd_node_def *back = tg_node(g, "back", "Cast", NULL, NULL, NULL);
  tg_set_type(back, "DstT", TFD_FLOAT32);
  if (c32) {
    CHECK_INT(run_kernel(gpu, back, &c32, 1, &r, st), TFD_OK);
    CHECK(r.out[0] && !tfd_tensor_on_host(r.out[0]));
    tfd_tensor *h = r.out[0] ? host(r.out[0]) : NULL;
    CHECK(h && ((const float *)tfd_tensor_const_data(h))[5] == -4);
    tfd_tensor_unref(h);
    free_run(&r);
  }
  /* Shape: int32 on the host, int64 in device memory */
  tfd_node_def *shape = tg_node(g, "shape", "Shape", NULL, NULL, NULL);
  CHECK_INT(run_kernel(gpu, shape, &x, 1, &r, st), TFD_OK);
  CHECK(r.out[0] && tfd_tensor_on_host(r.out[0]) && ((const int32_t *)tfd_tensor_const_data(r.out[0]))[1] == 3);
  free_run(&r);
  tg_set_type(shape, "out_type", TFD_INT64);
  CHECK_INT(run_kernel(gpu, shape, &x, 1, &r, st), TFD_OK);
  CHECK(r.out[0] && !tfd_tensor_on_host(r.out[0]));
  free_run(&r);
  /* ExpandDims and Squeeze make views of their input's device buffer */
  tfd_tensor *xd = tfd_tensor_copy_to(x, tfd_device_get_allocator(gpu), st);
  tfd_node_def *ed = tg_node(g, "ed", "ExpandDims", NULL, NULL, NULL);
  tfd_graph_def *g2 = tfd_graph_def_new();
  (void)one;
  if (xd) {
    const tfd_op_def *op = tfd_op_lookup("ExpandDims");
    tfd_dtype types[2] = {TFD_FLOAT32, TFD_INT64}, out_t[1];
    tfd_shape shapes[2], out_s[1];
    tfd_shape_of_tensor(x, &shapes[0]);
    tfd_shape_of_tensor(a64, &shapes[1]);
    CHECK_INT(tfd_op_infer_node(op, ed, 2, types, shapes, NULL, 1, out_t, out_s, st), TFD_OK);
    tfd_kernel_init init = {ed, op, gpu, 2, types, out_t, 1};
    tfd_kernel *k = tfd_kernel_create(&init, st);
    tfd_tensor *axis_dev = tfd_tensor_copy_to(a64, tfd_device_get_allocator(gpu), st);
    tfd_tensor *in[2] = {xd, axis_dev}, *out[1] = {0};
    tfd_kernel_context c = {.device = gpu, .allocator = tfd_device_get_allocator(gpu), .inputs = in, .num_inputs = 2,
                        .outputs = out, .num_outputs = 1, .status = st};
    if (k && axis_dev) {
      k->compute(k, &c);
      CHECK_STR(tfd_status_message(st), "");
      CHECK(out[0] && tfd_tensor_const_data(out[0]) == tfd_tensor_const_data(xd));
      CHECK(out[0] && tfd_tensor_ndims(out[0]) == 3 && tfd_tensor_dim(out[0], 1) == 1);
      k->base.ops->destroy(&k->base);
    }
    tfd_node_def *sq = tg_node(g2, "sq", "Squeeze", NULL, NULL, NULL);
    const tfd_op_def *sop = tfd_op_lookup("Squeeze");
    tfd_shape_of_tensor(out[0] ? out[0] : x, &shapes[0]);
    CHECK_INT(tfd_op_infer_node(sop, sq, 1, types, shapes, NULL, 1, out_t, out_s, st), TFD_OK);
    tfd_kernel_init sinit = {sq, sop, gpu, 1, types, out_t, 1};
    tfd_kernel *sk = tfd_kernel_create(&sinit, st);
    tfd_tensor *sout[1] = {0};
    tfd_kernel_context sc = {.device = gpu, .allocator = tfd_device_get_allocator(gpu), .inputs = out, .num_inputs = 1,
                         .outputs = sout, .num_outputs = 1, .status = st};
    if (sk && out[0]) {
      sk->compute(sk, &sc);
      CHECK(sout[0] && tfd_tensor_const_data(sout[0]) == tfd_tensor_const_data(xd) && tfd_tensor_ndims(sout[0]) == 2);
      sk->base.ops->destroy(&sk->base);
    }
    tfd_tensor_unref(sout[0]);
    tfd_tensor_unref(out[0]);
    tfd_tensor_unref(axis_dev);
  }
  tfd_tensor_unref(xd);
  tfd_tensor_unref(c32);
  tfd_tensor_unref(x);
  tfd_tensor_unref(a32);
  tfd_tensor_unref(a64);
  tfd_graph_def_free(g);
  tfd_graph_def_free(g2);
  tfd_session_free(s);
  tfd_status_free(st);
}

/* A device whose backend gives it no math: its device kernels fail with INTERNAL naming it. */
static void test_no_math(void) {
  tfd_status *st = tfd_status_new();
  tfd_session *s = NULL;
  tfd_session_new(NULL, NULL, NULL, &s, st);
  tfd_device *gpu = s ? find(s, "GPU") : NULL;
  CHECK(gpu != NULL);
  if (gpu) {
    const struct tfd_device_math *m = gpu->math;
    gpu->math = NULL;
    tfd_graph_def *g = tfd_graph_def_new();
    tfd_node_def *neg = tg_node(g, "neg", "Neg", NULL, NULL, NULL);
    float v[2] = {1, 2};
    int64_t n = 2;
    tfd_tensor *x = tg_f32(v, &n, 1), *out[4] = {0};
    int nout = 0;
    CHECK_INT(tfd_device_run_op(gpu, neg, &x, 1, NULL, out, &nout, st), TFD_INTERNAL);
    CHECK_STATUS(st, TFD_INTERNAL, "node 'Neg' (Neg): device /job:localhost/replica:0/task:0/device:GPU:0 has no device math");
    gpu->math = m;
    CHECK_INT(tfd_device_run_op(gpu, neg, &x, 1, NULL, out, &nout, st), TFD_OK);
    CHECK(nout == 1 && out[0] && ((const float *)tfd_tensor_const_data(out[0]))[1] == -2);
    tfd_tensor_unref(out[0]);
    tfd_tensor_unref(x);
    tfd_graph_def_free(g);
  }
  tfd_session_free(s);
  tfd_status_free(st);
}

/* Steps whose kernels make temporaries (a transposing reduction, a fused batch norm's factors, int64
 * Relu's scalars, ArgMax's int32 result) leave no device memory behind. */
static void test_no_leftovers(void) {
  tfd_status *st = tfd_status_new();
  tfd_session *s = NULL;
  tfd_session_new(NULL, NULL, NULL, &s, st);
  tfd_device *gpu = s ? find(s, "GPU") : NULL;
  CHECK(gpu != NULL);
  tfd_graph_def *g = tfd_graph_def_new();
  tg_set_type(tg_node(g, "x", "Placeholder", NULL, NULL, NULL), "dtype", TFD_FLOAT32);
  int32_t axes[2] = {0, 2};
  int64_t two = 2, i64v[3] = {-3, 4, 0}, three = 3;
  tg_const(g, "axes", TFD_INT32, &two, 1, axes);
  tg_node(g, "sum", "Sum", "x", "axes", NULL);
  tfd_node_def *am = tg_node(g, "am", "ArgMax", "x", "axes1", NULL);
  tg_set_type(am, "output_type", TFD_INT32);
  int32_t one = 1;
  tg_const(g, "axes1", TFD_INT32, NULL, 0, &one);
  tg_const(g, "i", TFD_INT64, &three, 1, i64v);
  tg_node(g, "relu6", "Relu6", "i", NULL, NULL);
  const char *fetches[] = {"sum", "am", "relu6"};
  tfd_tensor *out[3] = {0};
  float xv[24];
  for (int i = 0; i < 24; i++) xv[i] = (float)((i * 7) % 11) - 5;
  int64_t dims[3] = {2, 3, 4};
  tfd_tensor *x = tg_f32(xv, dims, 3);
  const char *feeds[] = {"x"};
  if (gpu && tfd_session_create(s, g, st) == TFD_OK) {
    CHECK_INT(tfd_session_run(s, NULL, feeds, &x, 1, fetches, 3, NULL, 0, out, NULL, st), TFD_OK);
    for (int i = 0; i < 3; i++) tfd_tensor_unref(out[i]), out[i] = NULL;
    tfd_allocator_stats before, after;
    tfd_allocator_get_stats(tfd_device_get_allocator(gpu), &before);
    for (int k = 0; k < 20; k++) {
      CHECK_INT(tfd_session_run(s, NULL, feeds, &x, 1, fetches, 3, NULL, 0, out, NULL, st), TFD_OK);
      float want = 0; /* sum[1] = x[:, 1, :] summed, integers: exact */
      for (int q = 0; q < 4; q++) want += xv[4 + q] + xv[16 + q];
      if (out[0]) CHECK(((const float *)tfd_tensor_const_data(out[0]))[1] == want);
      if (out[2]) CHECK(((const int64_t *)tfd_tensor_const_data(out[2]))[0] == 0 && ((const int64_t *)tfd_tensor_const_data(out[2]))[1] == 4);
      for (int i = 0; i < 3; i++) tfd_tensor_unref(out[i]), out[i] = NULL;
    }
    tfd_allocator_get_stats(tfd_device_get_allocator(gpu), &after);
    CHECK_INT(after.bytes_in_use, before.bytes_in_use);
    CHECK(after.num_allocs > before.num_allocs);
  }
  CHECK_STR(tfd_status_message(st), "");
  tfd_tensor_unref(x);
  tfd_graph_def_free(g);
  tfd_session_free(s);
  tfd_status_free(st);
}

/* The node-thread rule: x -> 6 MatMuls side by side (an op not registered cheap) -> fetched. On the
 * CPU the executor keeps one on the calling thread and hands the others to the inter-op pool; on a
 * GPU every kernel only queues its work, so, as TensorFlow takes no GPU kernel to be expensive, the
 * whole partition runs on the thread that started it (thread id 0 in the trace). */
static void test_gpu_nodes_run_inline(void) {
  tfd_status *st = tfd_status_new();
  for (int on_gpu = 0; on_gpu < 2; on_gpu++) {
    tfd_session_options *o = tfd_session_options_new();
    tfd_session_options_set_inter_op_threads(o, 2);
    tfd_session *s = NULL;
    tfd_session_new(o, NULL, NULL, &s, st);
    tfd_session_options_free(o);
    const char *dev = on_gpu ? "/device:GPU:0" : "/device:CPU:0";
    tfd_graph_def *g = tfd_graph_def_new();
    tg_set_type(tg_node(g, "x", "Placeholder", NULL, NULL, dev), "dtype", TFD_FLOAT32);
    const char *fetches[6];
    char names[6][8];
    for (int i = 0; i < 6; i++) {
      snprintf(names[i], sizeof names[i], "mm%d", i);
      tg_node(g, names[i], "MatMul", "x", "x", dev);
      fetches[i] = names[i];
    }
    float xv[4] = {1, 2, 3, 4};
    int64_t dims[2] = {2, 2};
    tfd_tensor *x = tg_f32(xv, dims, 2), *out[6] = {0};
    const char *feeds[] = {"x"};
    tfd_run_options ro = {.trace = true};
    tfd_run_metadata *m = tfd_run_metadata_new();
    int on_caller = 0, elsewhere = 0;
    if (s && tfd_session_create(s, g, st) == TFD_OK &&
        tfd_session_run(s, &ro, feeds, &x, 1, fetches, 6, NULL, 0, out, m, st) == TFD_OK) {
      for (int d = 0; d < tfd_run_metadata_num_devices(m); d++)
        for (int i = 0; i < tfd_run_metadata_num_nodes(m, d); i++) {
          tfd_node_exec_stats ns;
          tfd_run_metadata_node(m, d, i, &ns);
          if (strcmp(ns.op, "MatMul") == 0) ns.thread_id == 0 ? on_caller++ : elsewhere++;
        }
      CHECK(out[5] && ((const float *)tfd_tensor_const_data(out[5]))[3] == 22); /* [[1 2] [3 4]]^2 */
    }
    CHECK_STATUS(st, TFD_OK, "");
    CHECK_INT(on_caller + elsewhere, 6);
    if (on_gpu) CHECK_INT(elsewhere, 0);
    else CHECK(elsewhere >= 1);
    for (int i = 0; i < 6; i++) tfd_tensor_unref(out[i]);
    tfd_run_metadata_free(m);
    tfd_tensor_unref(x);
    tfd_graph_def_free(g);
    tfd_session_free(s);
  }
  tfd_status_free(st);
}

static const tfd_test tests[] = {
    {"walks merge and drop dimensions", test_walks},
    {"outputs in the memory their dtype lives in, views alias", test_memories},
    {"a device without math", test_no_math},
    {"steps leave no device memory behind", test_no_leftovers},
    {"a GPU partition's nodes run on the thread that started it", test_gpu_nodes_run_inline},
};

static const char *skip_reason(void) {
  const char *b = getenv("TFDEV_BACKENDS");
  return b && strcmp(b, "fakegpu") == 0 ? NULL : "needs TFDEV_BACKENDS=fakegpu (ctest sets it)";
}

TFD_TEST_MAIN_UNLESS(tests, skip_reason)
