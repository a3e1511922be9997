/* The device-memory path through the C API, against the fake GPU backend (fake_gpu_backend.c,
 * loaded with TFDEV_BACKENDS=fakegpu): copies in and out of memory the host must not touch,
 * partitioned graphs CPU<->GPU, feeds and fetches of GPU tensors, the data-movement kernels,
 * eager ops on a GPU, placement errors and fallbacks, sync_every_op, kernel registration. ctest runs
 * it with TFDEV_FAKE_GPU_MATH=0: a GPU without device math, whose other ops fall back to the CPU
 * (runtime/kernels/device_kernels_test.c runs the fake GPU with its math). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/core/tensor_internal.h"
#include "runtime/kernels/kernel.h"
#include "runtime/testing/graph_builder.h"
#include "runtime/testing/harness.h"

static tfd_device *find_gpu(tfd_session *s) {
  tfd_device_mgr *m = tfd_session_device_mgr(s);
  for (size_t i = 0; m && i < tfd_device_mgr_size(m); i++)
    if (strcmp(tfd_device_type(tfd_device_mgr_get(m, i)), "GPU") == 0) return tfd_device_mgr_get(m, i);
  return NULL;
}

#define GPU0 "/device:GPU:0"

/* x (fed) -> Identity on the GPU -> Reshape on the GPU (int32 shape: host memory there) -> Square
 * (no GPU kernel: CPU) ; Fill and ZerosLike on the GPU; a float Const on the GPU fetched as is. */
static tfd_graph_def *mixed_graph(void) {
  tfd_graph_def *g = tfd_graph_def_new();
  tg_set_type(tg_node(g, "x", "Placeholder", NULL, NULL, NULL), "dtype", TFD_FLOAT32);
  tg_node(g, "a", "Identity", "x", NULL, GPU0);
  int32_t shape[] = {3, 2}, dims[] = {2, 2};
  int64_t d2[] = {2}, d0[] = {0};
  tg_set_tensor(tg_node(g, "shape", "Const", NULL, NULL, GPU0), "value", tfd_test_tensor(TFD_INT32, d2, 1, shape, sizeof shape, NULL));
  tg_node(g, "r", "Reshape", "a", "shape", GPU0);
  tg_node(g, "sq", "Square", "r", NULL, NULL);
  tg_set_tensor(tg_node(g, "dims", "Const", NULL, NULL, GPU0), "value", tfd_test_tensor(TFD_INT32, d2, 1, dims, sizeof dims, NULL));
  float seven = 7.5f, c[] = {1, -2, 3};
  int64_t d3[] = {3};
  tg_set_tensor(tg_node(g, "seven", "Const", NULL, NULL, GPU0), "value", tg_f32(&seven, d0, 0));
  tg_node(g, "f", "Fill", "dims", "seven", GPU0);
  tg_set_tensor(tg_node(g, "c", "Const", NULL, NULL, GPU0), "value", tg_f32(c, d3, 1));
  tg_node(g, "z", "OnesLike", "c", NULL, GPU0);
  tg_node(g, "back", "Identity", "sq", NULL, GPU0); /* CPU -> GPU again, fetched from the GPU */
  return g;
}

static void test_partitioned_graph(void) {
  tfd_status *st = tfd_status_new();
  tfd_session *s = NULL;
  tfd_session_new(NULL, NULL, NULL, &s, st);
  CHECK(s != NULL);
  tfd_device *gpu = s ? find_gpu(s) : NULL;
  CHECK(gpu != NULL);
  if (!gpu) {
    tfd_session_free(s);
    tfd_status_free(st);
    return;
  }
  CHECK_STR(tfd_device_name(gpu), "/job:localhost/replica:0/task:0/device:GPU:0");
  tfd_graph_def *g = mixed_graph();
  CHECK_INT(tfd_session_create(s, g, st), TFD_OK);
  CHECK_STR(tfd_status_message(st), "");
  float xv[] = {1, 2, 3, 4, 5, 6};
  int64_t d23[] = {2, 3};
  tfd_tensor *x = tg_f32(xv, d23, 2);
  const char *feeds[] = {"x"}, *fetches[] = {"sq", "r", "f", "z", "c", "back", "shape"};
  tfd_tensor *out[7] = {0};
  tfd_allocator_stats before, after;
  tfd_allocator_get_stats(tfd_device_get_allocator(gpu), &before);
  CHECK_INT(tfd_session_run(s, NULL, feeds, &x, 1, fetches, 7, NULL, 0, out, NULL, st), TFD_OK);
  CHECK_STR(tfd_status_message(st), "");
  tfd_allocator_get_stats(tfd_device_get_allocator(gpu), &after);
  CHECK(after.num_allocs > before.num_allocs); /* the fed x, a, r and Fill's output went to device memory */
  for (int i = 0; i < 7; i++) CHECK(out[i] && tfd_tensor_on_host(out[i]));
  if (out[0] && out[1] && out[2] && out[3] && out[4] && out[5] && out[6]) {
    const float *sq = tfd_tensor_const_data(out[0]), *r = tfd_tensor_const_data(out[1]);
    CHECK_INT(tfd_tensor_ndims(out[1]), 2);
    CHECK_INT(tfd_tensor_dim(out[1], 0), 3);
    for (int i = 0; i < 6; i++) {
      CHECK(r[i] == xv[i]);
      CHECK(sq[i] == xv[i] * xv[i]);
      CHECK(((const float *)tfd_tensor_const_data(out[5]))[i] == xv[i] * xv[i]);
    }
    const float *f = tfd_tensor_const_data(out[2]), *z = tfd_tensor_const_data(out[3]), *c = tfd_tensor_const_data(out[4]);
    for (int i = 0; i < 4; i++) CHECK(f[i] == 7.5f);
    CHECK(z[0] == 1 && z[1] == 1 && z[2] == 1);
    CHECK(c[0] == 1 && c[1] == -2 && c[2] == 3);
    CHECK_INT(((const int32_t *)tfd_tensor_const_data(out[6]))[0], 3);
  }
  for (int i = 0; i < 7; i++) tfd_tensor_unref(out[i]);
  /* The same step again, and a callable: what the first step left in device memory is gone. */
  int64_t h = tfd_session_make_callable(s, feeds, 1, fetches, 1, NULL, 0, st);
  CHECK(h >= 0);
  for (int k = 0; k < 50; k++) {
    CHECK_INT(tfd_session_run_callable(s, h, NULL, &x, out, NULL, st), TFD_OK);
    if (out[0]) CHECK(((const float *)tfd_tensor_const_data(out[0]))[5] == 36);
    tfd_tensor_unref(out[0]);
    out[0] = NULL;
  }
  tfd_allocator_get_stats(tfd_device_get_allocator(gpu), &after);
  CHECK(after.bytes_in_use <= before.bytes_in_use + 64); /* constants only: no step leaves tensors behind */
  tfd_tensor_unref(x);
  tfd_graph_def_free(g);
  tfd_session_free(s);
  tfd_status_free(st);
}

static void test_copies(void) {
  tfd_status *st = tfd_status_new();
  tfd_session *s = NULL;
  tfd_session_new(NULL, NULL, NULL, &s, st);
  tfd_device *gpu = s ? find_gpu(s) : NULL;
  CHECK(gpu != NULL);
  if (gpu) {
    tfd_allocator *mem = tfd_device_get_allocator(gpu);
    static const tfd_dtype types[] = {TFD_FLOAT32, TFD_FLOAT64, TFD_INT32, TFD_INT64, TFD_BOOL, TFD_UINT8, TFD_FLOAT16};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
      for (int64_t n = 0; n <= 4099; n += 1 + n * 3) {
        size_t bytes = (size_t)n * tfd_dtype_size(types[t]);
        unsigned char *src = malloc(bytes + 1);
        for (size_t i = 0; i < bytes; i++) src[i] = types[t] == TFD_BOOL ? (unsigned char)(i % 2) : (unsigned char)(i * 7 + 1);
        tfd_tensor *h = NULL;
        tfd_tensor_from_bytes(NULL, types[t], &n, 1, src, bytes, &h, st);
        tfd_tensor *d = h ? tfd_tensor_copy_to(h, mem, st) : NULL;
        CHECK(d && !tfd_tensor_on_host(d));
        if (d && bytes) /* what sits in device memory is not the host's bytes (the fake stores them inverted) */
          CHECK(((const unsigned char *)tfd_tensor_const_data(d))[0] == (unsigned char)~src[0]);
        tfd_tensor *same = d ? tfd_tensor_copy_to(d, mem, st) : NULL;
        CHECK(same == d); /* already there: the same tensor */
        tfd_tensor *back = d ? tfd_tensor_copy_to(d, NULL, st) : NULL;
        CHECK(back && tfd_tensor_on_host(back) && tfd_tensor_dtype(back) == types[t] && tfd_tensor_numel(back) == n);
        if (back) CHECK(bytes == 0 || memcmp(tfd_tensor_const_data(back), src, bytes) == 0);
        tfd_tensor_unref(same);
        tfd_tensor_unref(back);
        tfd_tensor_unref(d);
        tfd_tensor_unref(h);
        free(src);
      }
    }
    /* from_bytes straight into device memory goes through the copy too */
    float v[] = {1.5f, -2};
    int64_t n2 = 2;
    tfd_tensor *d = NULL;
    tfd_tensor_from_bytes(mem, TFD_FLOAT32, &n2, 1, v, sizeof v, &d, st);
    tfd_tensor *back = d ? tfd_tensor_copy_to(d, NULL, st) : NULL;
    CHECK(back && ((const float *)tfd_tensor_const_data(back))[1] == -2);
    tfd_tensor_unref(back);
    tfd_tensor_unref(d);
  }
  tfd_session_free(s);
  tfd_status_free(st);
}

static void test_eager_on_gpu(void) {
  tfd_status *st = tfd_status_new();
  tfd_session *s = NULL;
  tfd_session_new(NULL, NULL, NULL, &s, st);
  tfd_device *gpu = s ? find_gpu(s) : NULL;
  CHECK(gpu != NULL);
  if (gpu) {
    tfd_graph_def *g = tfd_graph_def_new();
    tfd_node_def *fill = tfd_graph_def_add_node(g, "fill", "Fill", st);
    int64_t dims[] = {2, 3}, n2 = 2;
    float one = 2.25f;
    tfd_tensor *in[2] = {tfd_test_tensor(TFD_INT64, &n2, 1, dims, sizeof dims, st),
                         tfd_test_tensor(TFD_FLOAT32, NULL, 0, &one, 4, st)};
    tfd_tensor *out[4] = {0};
    int nout = 0;
    CHECK_INT(tfd_device_run_op(gpu, fill, in, 2, NULL, out, &nout, st), TFD_OK);
    CHECK_STR(tfd_status_message(st), "");
    CHECK_INT(nout, 1);
    CHECK(out[0] && tfd_tensor_on_host(out[0]) && tfd_tensor_numel(out[0]) == 6);
    if (out[0]) CHECK(((const float *)tfd_tensor_const_data(out[0]))[5] == 2.25f);
    tfd_tensor_unref(out[0]);
    /* An op with no GPU kernel names the device. */
    tfd_node_def *sq = tfd_graph_def_add_node(g, "sq", "Square", st);
    CHECK_INT(tfd_device_run_op(gpu, sq, &in[1], 1, NULL, out, &nout, st), TFD_NOT_FOUND);
    CHECK_STATUS(st, TFD_NOT_FOUND, "no GPU kernel for op Square on /job:localhost/replica:0/task:0/device:GPU:0");
    tfd_tensor_unref(in[0]);
    tfd_tensor_unref(in[1]);
    tfd_graph_def_free(g);
  }
  tfd_session_free(s);
  tfd_status_free(st);
}

static void test_placement(void) {
  tfd_status *st = tfd_status_new();
  /* A node pinned to a GPU that is not there: INVALID_ARGUMENT naming it, unless soft placement. */
  tfd_graph_def *g = tfd_graph_def_new();
  float one = 1;
  tg_set_tensor(tg_node(g, "c", "Const", NULL, NULL, "/device:GPU:1"), "value", tg_f32(&one, NULL, 0));
  tg_node(g, "sq", "Square", "c", NULL, GPU0); /* no GPU kernel */
  const char *fetch[] = {"sq"};
  tfd_tensor *out = NULL;
  tfd_session *s = NULL;
  tfd_session_new(NULL, NULL, NULL, &s, st);
  tfd_code code = tfd_session_create(s, g, st);
  if (code == TFD_OK) code = tfd_session_run(s, NULL, NULL, NULL, 0, fetch, 1, NULL, 0, &out, NULL, st);
  /* TensorFlow places generators (c) after their consumers, so sq is the node it names
   * (TestUnsupportedDeviceNoAllowSoftPlacement's text). */
  CHECK_INT(code, TFD_INVALID_ARGUMENT);
  CHECK_CONTAINS(tfd_status_message(st), "Cannot assign a device for operation sq: Could not satisfy explicit device "
                                         "specification '/device:GPU:0' because no supported kernel for GPU devices is "
                                         "available.");
  tfd_status_reset(st);
  tfd_session_free(s);
  tfd_session_options *o = tfd_session_options_new();
  tfd_session_options_set_allow_soft_placement(o, true);
  tfd_session_new(o, NULL, NULL, &s, st);
  CHECK_INT(tfd_session_create(s, g, st), TFD_OK);
  CHECK_INT(tfd_session_run(s, NULL, NULL, NULL, 0, fetch, 1, NULL, 0, &out, NULL, st), TFD_OK);
  CHECK(out && ((const float *)tfd_tensor_const_data(out))[0] == 1);
  tfd_tensor_unref(out);
  tfd_session_free(s);
  tfd_session_options_free(o);
  tfd_graph_def_free(g);
  tfd_status_free(st);
}

static void test_kernel_registration(void) {
  tfd_status *st = tfd_status_new();
  CHECK(tfd_kernel_supported("Reshape", "GPU"));
  CHECK(!tfd_kernel_supported("Square", "GPU"));
  CHECK_INT(tfd_kernel_register_data_movement("GPU", st), TFD_OK); /* again: nothing changes */
  CHECK_INT(tfd_kernel_register("Identity", "GPU", tfd_setup_basic, st), TFD_ALREADY_EXISTS);
  CHECK_STATUS(st, TFD_ALREADY_EXISTS, "a GPU kernel for op Identity is already registered");
  CHECK_INT(tfd_kernel_register("NoSuchOp", "GPU", tfd_setup_basic, st), TFD_NOT_FOUND);
  CHECK_STATUS(st, TFD_NOT_FOUND, "kernel for unknown op 'NoSuchOp' (GPU)");
  CHECK_INT(tfd_kernel_register("Square", "", tfd_setup_cwise, st), TFD_INVALID_ARGUMENT);
  tfd_status_reset(st);
  tfd_status_free(st);
}

/* sync_every_op: the executor waits for the GPU after each of its nodes, so a device fault is
 * reported by the node that ran last; without it nobody waits, and the step succeeds. */
static void test_sync_every_op(void) {
  tfd_status *st = tfd_status_new();
  tfd_graph_def *g = tfd_graph_def_new();
  float one = 3;
  tg_set_tensor(tg_node(g, "c", "Const", NULL, NULL, NULL), "value", tg_f32(&one, NULL, 0));
  tg_node(g, "a", "Identity", "c", NULL, GPU0);
  tg_node(g, "sq", "Square", "a", NULL, NULL);
  const char *fetch[] = {"sq"};
  setenv("TFDEV_FAKE_GPU_FAIL_SYNC", "1", 1);
  for (int on = 0; on < 2; on++) {
    tfd_session_options *o = tfd_session_options_new();
    tfd_session_options_set_gpu_sync_every_op(o, on);
    tfd_session *s = NULL;
    tfd_session_new(o, NULL, NULL, &s, st);
    tfd_tensor *out = NULL;
    CHECK_INT(tfd_session_create(s, g, st), TFD_OK);
    tfd_code code = tfd_session_run(s, NULL, NULL, NULL, 0, fetch, 1, NULL, 0, &out, NULL, st);
    if (on) {
      CHECK_INT(code, TFD_INTERNAL);
      CHECK_STATUS(st, TFD_INTERNAL, "node 'c' (Const): sync_every_op: /job:localhost/replica:0/task:0/device:GPU:0: fake device fault");
    } else {
      CHECK_INT(code, TFD_OK);
      CHECK(out && ((const float *)tfd_tensor_const_data(out))[0] == 9);
    }
    tfd_tensor_unref(out);
    tfd_session_free(s);
    tfd_session_options_free(o);
  }
  unsetenv("TFDEV_FAKE_GPU_FAIL_SYNC");
  tfd_graph_def_free(g);
  tfd_status_free(st);
}

static const tfd_test tests[] = {
    {"copies in and out of device memory", test_copies},
    {"a graph partitioned between CPU and GPU", test_partitioned_graph},
    {"eager ops on a GPU", test_eager_on_gpu},
    {"pinned to a missing GPU, with and without soft placement", test_placement},
    {"kernels registered at run time", test_kernel_registration},
    {"sync_every_op", test_sync_every_op},
};

/* Runs only against the fake backend (ctest sets TFDEV_BACKENDS=fakegpu): elsewhere it would test
 * whatever GPU the machine has, or none. */
static const char *skip_reason(void) {
  const char *b = getenv("TFDEV_BACKENDS");
  return b && strcmp(b, "fakegpu") == 0 ? NULL : "needs TFDEV_BACKENDS=fakegpu (ctest sets it)";
}

TFD_TEST_MAIN_UNLESS(tests, skip_reason)
