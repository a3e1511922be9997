/* Misuse through the C API: handles used across threads while another thread closes or releases them,
 * handles from another session, attrs and tensors the runtime cannot hold, eager ops that block.
 * The threaded cases run under TSan and ASan in CI; each must end in an error code, never a crash or hang. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/testing/graph_builder.h"
#include "runtime/testing/harness.h"

/* x -> y = -x; a queue q whose dequeue `take` blocks until something is enqueued. */
static tfd_session *new_session(tfd_status *st) {
  tfd_graph_def *g = tfd_graph_def_new();
  tg_set_type(tg_node(g, "x", "Placeholder", NULL, NULL, NULL), "dtype", TFD_FLOAT32);
  tg_node(g, "y", "Neg", "x", NULL, NULL);
  tg_set_types(tg_node(g, "q", "FIFOQueueV2", NULL, NULL, NULL), "component_types", TFD_FLOAT32);
  tg_set_types(tg_node(g, "take", "QueueDequeueV2", "q", NULL, NULL), "component_types", TFD_FLOAT32);
  tg_node(g, "taken", "Identity", "take", NULL, NULL);
  tfd_session *s = NULL;
  tfd_session_new(NULL, NULL, NULL, &s, st);
  CHECK(s != NULL);
  CHECK_INT(tfd_session_create(s, g, st), TFD_OK);
  tfd_graph_def_free(g);
  return s;
}

/* ---- D6: a partial run used by two threads while a third closes it ---- */
typedef struct prun_user {
  tfd_session *s;
  int64_t handle;
  tfd_code code;
  char message[256];
} prun_user;

static void *fetch_taken(void *p) {
  prun_user *u = p;
  tfd_status *st = tfd_status_new();
  const char *fetch[] = {"taken"};
  tfd_tensor *out[1] = {NULL};
  u->code = tfd_session_prun(u->s, u->handle, NULL, NULL, 0, fetch, 1, out, st);
  snprintf(u->message, sizeof u->message, "%s", tfd_status_message(st));
  tfd_tensor_unref(out[0]);
  tfd_status_free(st);
  return NULL;
}

static void sleep_us(long us) {
  struct timespec ts = {0, us * 1000};
  nanosleep(&ts, NULL);
}

static void test_prun_closed_while_in_use(void) {
  tfd_status *st = tfd_status_new();
  tfd_session *s = new_session(st);
  const char *outs[] = {"taken"};
  for (int round = 0; round < 200; round++) {
    int64_t h = tfd_session_prun_setup(s, NULL, 0, outs, 1, NULL, 0, st);
    CHECK(h >= 0);
    prun_user a = {s, h, TFD_OK, ""}, b = {s, h, TFD_OK, ""};
    pthread_t ta, tb;
    pthread_create(&ta, NULL, fetch_taken, &a);
    pthread_create(&tb, NULL, fetch_taken, &b);
    if (round % 3) sleep_us(round % 7 * 50); /* close before, while and after the fetches start */
    CHECK_INT(tfd_session_prun_close(s, h, st), TFD_OK);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    /* Each user was woken (CANCELLED), found the run closed (CANCELLED), or came after it was gone. */
    prun_user *users[] = {&a, &b};
    for (int i = 0; i < 2; i++) {
      tfd_code c = users[i]->code;
      if (c != TFD_CANCELLED && c != TFD_INVALID_ARGUMENT) {
        fprintf(stderr, "round %d user %d: %s: %s\n", round, i, tfd_code_name(c), users[i]->message);
        CHECK(0);
      }
      if (c == TFD_INVALID_ARGUMENT) CHECK_CONTAINS(users[i]->message, "No such partial run handle");
    }
    CHECK_INT(tfd_session_prun_close(s, h, st), TFD_INVALID_ARGUMENT); /* closing twice says so */
    CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "already finished or closed");
  }
  tfd_session_free(s);
  tfd_status_free(st);
}

/* A session closed with partial runs blocked in fetches: they end CANCELLED and the session frees. */
static void test_session_closed_under_prun(void) {
  tfd_status *st = tfd_status_new();
  for (int round = 0; round < 50; round++) {
    tfd_session *s = new_session(st);
    const char *outs[] = {"taken"};
    int64_t h = tfd_session_prun_setup(s, NULL, 0, outs, 1, NULL, 0, st);
    prun_user a = {s, h, TFD_OK, ""};
    pthread_t ta;
    pthread_create(&ta, NULL, fetch_taken, &a);
    if (round % 2) sleep_us(200);
    CHECK_INT(tfd_session_close(s, st), TFD_OK);
    pthread_join(ta, NULL);
    CHECK_INT(a.code, TFD_CANCELLED);
    tfd_session_free(s);
  }
  tfd_status_free(st);
}

/* ---- D7: a callable released while another thread runs it ---- */
typedef struct callable_user {
  tfd_session *s;
  int64_t handle;
  atomic_int *stop;
  int ok, released, other;
} callable_user;

static void *run_callable(void *p) {
  callable_user *u = p;
  tfd_status *st = tfd_status_new();
  while (!atomic_load(u->stop)) {
    tfd_tensor *x = tg_scalar(2), *out[1] = {NULL};
    tfd_code c = tfd_session_run_callable(u->s, u->handle, NULL, &x, out, NULL, st);
    if (c == TFD_OK) {
      u->ok += *(const float *)tfd_tensor_const_data(out[0]) == -2.0f;
    } else if (c == TFD_INVALID_ARGUMENT && strstr(tfd_status_message(st), "already released")) {
      u->released++;
    } else {
      u->other++;
    }
    tfd_status_reset(st);
    tfd_tensor_unref(out[0]);
    tfd_tensor_unref(x);
    if (u->released) break;
  }
  tfd_status_free(st);
  return NULL;
}

static void test_callable_released_while_running(void) {
  tfd_status *st = tfd_status_new();
  tfd_session *s = new_session(st);
  const char *feeds[] = {"x"}, *fetch[] = {"y"};
  for (int round = 0; round < 100; round++) {
    int64_t h = tfd_session_make_callable(s, feeds, 1, fetch, 1, NULL, 0, st);
    CHECK(h >= 0);
    atomic_int stop = 0;
    callable_user u[2] = {{s, h, &stop, 0, 0, 0}, {s, h, &stop, 0, 0, 0}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, run_callable, &u[i]);
    sleep_us(round % 5 * 100);
    CHECK_INT(tfd_session_release_callable(s, h, st), TFD_OK);
    sleep_us(100);
    atomic_store(&stop, 1);
    for (int i = 0; i < 2; i++) {
      pthread_join(th[i], NULL);
      CHECK_INT(u[i].other, 0);
    }
    CHECK_INT(tfd_session_release_callable(s, h, st), TFD_INVALID_ARGUMENT);
    CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "No such callable handle");
  }
  tfd_session_free(s);
  tfd_status_free(st);
}

/* ---- M1: handles belong to the session that made them ---- */
static void test_handles_of_another_session(void) {
  tfd_status *st = tfd_status_new();
  tfd_session *s1 = new_session(st), *s2 = new_session(st);
  const char *feeds[] = {"x"}, *fetch[] = {"y"};
  int64_t p1 = tfd_session_prun_setup(s1, feeds, 1, fetch, 1, NULL, 0, st);
  int64_t p2 = tfd_session_prun_setup(s2, feeds, 1, fetch, 1, NULL, 0, st);
  CHECK(p1 >= 0 && p2 >= 0 && p1 != p2);
  tfd_tensor *x = tg_scalar(3), *out[1] = {NULL};
  CHECK_INT(tfd_session_prun(s2, p1, feeds, &x, 1, fetch, 1, out, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "belongs to another session");
  CHECK_INT(tfd_session_prun_close(s2, p1, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "belongs to another session");
  CHECK_INT(tfd_session_prun(s2, p2, feeds, &x, 1, fetch, 1, out, st), TFD_OK); /* s2's run was not consumed */
  CHECK(*(const float *)tfd_tensor_const_data(out[0]) == -3.0f);
  tfd_tensor_unref(out[0]);
  int64_t c1 = tfd_session_make_callable(s1, feeds, 1, fetch, 1, NULL, 0, st);
  CHECK_INT(tfd_session_run_callable(s2, c1, NULL, &x, out, NULL, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "belongs to another session");
  CHECK_INT(tfd_session_release_callable(s2, c1, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "belongs to another session");
  CHECK_INT(tfd_session_run_callable(s1, -5, NULL, &x, out, NULL, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "No such callable handle: -5");
  tfd_tensor_unref(x);
  tfd_session_free(s1); /* p1 is still set up: freeing the session cancels and drops it */
  tfd_session_free(s2);
  tfd_status_free(st);
}

/* ---- D8, D10: attr values the runtime cannot hold are refused by set_attr ---- */
static void test_bad_attr_values(void) {
  tfd_status *st = tfd_status_new();
  tfd_graph_def *g = tfd_graph_def_new();
  tfd_node_def *n = tg_node(g, "p", "Placeholder", NULL, NULL, NULL);
  tfd_attr_value shape = {.type = TFD_ATTR_SHAPE, .shape = {.ndims = TFD_MAX_DIMS + 1}};
  CHECK_INT(tfd_node_def_set_attr(n, "shape", &shape, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "node 'p': attr 'shape' has rank 9 (shapes have rank -1 to 8)");
  shape.shape.ndims = -2;
  CHECK_INT(tfd_node_def_set_attr(n, "shape", &shape, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "has rank -2");
  shape.shape.ndims = 2;
  shape.shape.dims[1] = -7;
  CHECK_INT(tfd_node_def_set_attr(n, "shape", &shape, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "dimension 1 is -7");
  tfd_attr_value dt = {.type = TFD_ATTR_TYPE, .dtype = (tfd_dtype)77};
  CHECK_INT(tfd_node_def_set_attr(n, "dtype", &dt, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "attr 'dtype' is not a valid dtype (77)");
  dt.dtype = (tfd_dtype)-1;
  CHECK_INT(tfd_node_def_set_attr(n, "dtype", &dt, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "not a valid dtype (-1)");
  tfd_dtype list[] = {TFD_FLOAT32, (tfd_dtype)40};
  tfd_attr_value types = {.type = TFD_ATTR_LIST_TYPE, .list_len = 2, .list_type = list};
  CHECK_INT(tfd_node_def_set_attr(n, "component_types", &types, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "item 1 is not a valid dtype (40)");
  tfd_attr_value ints = {.type = TFD_ATTR_LIST_INT, .list_len = 3};
  CHECK_INT(tfd_node_def_set_attr(n, "x", &ints, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "lists 3 values but gives none");
  tfd_attr_value odd = {.type = (tfd_attr_type)99};
  CHECK_INT(tfd_node_def_set_attr(n, "x", &odd, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "unknown value type 99");
  tfd_attr_value no_tensor = {.type = TFD_ATTR_TENSOR};
  CHECK_INT(tfd_node_def_set_attr(n, "value", &no_tensor, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "has no tensor");
  CHECK_INT(tfd_node_def_set_attr(n, "", &dt, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "an attr needs a name");
  CHECK_INT(tfd_node_def_num_attrs(n), 0); /* nothing refused was kept */
  tfd_graph_def_free(g);
  tfd_status_free(st);
}

/* ---- D9, U1: sizes that overflow ---- */
static void test_sizes_that_overflow(void) {
  tfd_status *st = tfd_status_new();
  int64_t huge_resource[] = {(int64_t)1 << 58};
  CHECK(tfd_tensor_new(NULL, TFD_RESOURCE, huge_resource, 1, &(tfd_tensor *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "overflow the byte size");
  CHECK(tfd_tensor_from_bytes(NULL, TFD_RESOURCE, huge_resource, 1, "", 0, &(tfd_tensor *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "shape is too large");
  int64_t square[] = {(int64_t)1 << 40, (int64_t)1 << 40};
  CHECK(tfd_tensor_new(NULL, TFD_FLOAT32, square, 2, &(tfd_tensor *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "the element count overflows at dimension 1");
  int64_t doubles[] = {(int64_t)1 << 61};
  CHECK(tfd_tensor_new(NULL, TFD_FLOAT64, doubles, 1, &(tfd_tensor *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "overflow the byte size");
  int64_t empty[] = {(int64_t)1 << 40, 0};
  tfd_tensor *e = NULL;
  tfd_tensor_new(NULL, TFD_RESOURCE, empty, 2, &e, st);
  CHECK(e != NULL);
  CHECK_INT(tfd_tensor_byte_size(e), 0);
  tfd_tensor_unref(e);
  CHECK(tfd_tensor_new(NULL, (tfd_dtype)0, NULL, 0, &(tfd_tensor *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "invalid dtype 0");
  CHECK(tfd_tensor_new(NULL, TFD_FLOAT32, NULL, 2, &(tfd_tensor *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "tfd_tensor_new: dims is NULL but ndims is 2");
  tfd_status_free(st);
}

/* Resource handles are read as strings: ones without a terminating NUL are refused, new ones are empty. */
static void test_resource_handle_bytes(void) {
  tfd_status *st = tfd_status_new();
  tfd_resource_handle h;
  memset(&h, 'x', sizeof h);
  CHECK(tfd_tensor_from_bytes(NULL, TFD_RESOURCE, NULL, 0, &h, sizeof h, &(tfd_tensor *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "resource handle 0 is malformed");
  h.container[0] = 0;
  h.name[sizeof h.name - 1] = 0;
  tfd_tensor *ok = NULL;
  tfd_tensor_from_bytes(NULL, TFD_RESOURCE, NULL, 0, &h, sizeof h, &ok, st);
  CHECK(ok != NULL);
  tfd_tensor_unref(ok);
  int64_t three[] = {3};
  tfd_tensor *fresh = NULL;
  tfd_tensor_new(NULL, TFD_RESOURCE, three, 1, &fresh, st);
  const tfd_resource_handle *r = tfd_tensor_const_data(fresh);
  for (int i = 0; i < 3; i++) CHECK(r[i].container[0] == 0 && r[i].name[0] == 0);
  tfd_tensor_unref(fresh);
  tfd_status_free(st);
}

/* ---- eager ops that block take a timeout ---- */
static void test_eager_timeout(void) {
  tfd_status *st = tfd_status_new();
  tfd_cpu_device_config cfg = {.name = "/job:localhost/replica:0/task:0/device:CPU:0"};
  tfd_device *d = NULL;
  tfd_cpu_device_new(&cfg, &d, st);
  tfd_graph_def *g = tfd_graph_def_new();
  tfd_node_def *q = tg_node(g, "FIFOQueueV2", "FIFOQueueV2", NULL, NULL, NULL);
  tg_set_types(q, "component_types", TFD_FLOAT32);
  tfd_node_def *take = tg_node(g, "QueueDequeueV2", "QueueDequeueV2", NULL, NULL, NULL);
  tg_set_types(take, "component_types", TFD_FLOAT32);
  tfd_tensor *handle[4] = {NULL}, *out[4] = {NULL};
  int n = 0;
  CHECK_INT(tfd_device_run_op(d, q, NULL, 0, NULL, handle, &n, st), TFD_OK);
  CHECK_INT(n, 1);
  tfd_run_options ro = {.timeout_ms = 50};
  time_t t0 = time(NULL);
  CHECK_INT(tfd_device_run_op(d, take, handle, 1, &ro, out, &n, st), TFD_DEADLINE_EXCEEDED);
  CHECK_STATUS(st, TFD_DEADLINE_EXCEEDED, "Timed out waiting for the op (50 ms)");
  CHECK(time(NULL) - t0 < 5);
  CHECK_INT(n, 0);
  tfd_tensor *bad[1] = {NULL};
  CHECK_INT(tfd_device_run_op(d, take, bad, 1, &ro, out, &n, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "tfd_device_run_op: inputs[0] is NULL");
  tfd_tensor_unref(handle[0]);
  tfd_graph_def_free(g);
  tfd_device_unref(d);
  tfd_status_free(st);
}

/* ---- device counts and pools a host can ask for ---- */
static void test_device_and_thread_limits(void) {
  tfd_status *st = tfd_status_new();
  tfd_session_options *o = tfd_session_options_new();
  tfd_session_options_set_device_count(o, "CPU", 2000, st);
  CHECK(tfd_session_new(o, NULL, NULL, &(tfd_session *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "device_count.CPU is 2000: at most 1024 CPU devices");
  tfd_session_options_set_device_count(o, "CPU", 8, st);
  tfd_session_options_set_intra_op_threads(o, 512);
  tfd_session_options_set_use_global_threadpool(o, false);
  CHECK(tfd_session_new(o, NULL, NULL, &(tfd_session *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "8 CPU devices with own pools of 512 threads would start 4096 threads");
  CHECK(tfd_threadpool_new("big", 5000, &(tfd_threadpool *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "thread pool 'big' of 5000 threads: at most 1024");
  tfd_session_options_free(o);
  tfd_status_free(st);
}

/* ---- tfdev.h's release rule: every release verb takes NULL ---- */
static void test_release_null(void) {
  tfd_allocator_unref(NULL);
  tfd_device_unref(NULL);
  tfd_device_factory_unref(NULL);
  tfd_resource_unref(NULL);
  tfd_runtime_unref(NULL);
  tfd_tensor_unref(NULL);
  tfd_device_list_free(NULL);
  tfd_factory_registry_free(NULL);
  tfd_device_mgr_free(NULL);
  tfd_device_set_free(NULL);
  tfd_graph_def_free(NULL);
  tfd_model_free(NULL);
  tfd_session_options_free(NULL);
  tfd_resource_mgr_free(NULL);
  tfd_session_free(NULL);
  tfd_run_free(NULL);
  tfd_run_metadata_free(NULL);
  tfd_status_free(NULL);
  tfd_threadpool_free(NULL);
  CHECK(tfd_runtime_ref(NULL) == NULL && tfd_tensor_ref(NULL) == NULL && tfd_device_ref(NULL) == NULL);
}

static const tfd_test tests[] = {
    {"every release verb takes NULL", test_release_null},
    {"device counts and thread pools are bounded", test_device_and_thread_limits},
    {"D6: a partial run closed while two threads fetch through it", test_prun_closed_while_in_use},
    {"a session closed under a blocked partial-run fetch", test_session_closed_under_prun},
    {"D7: a callable released while two threads run it", test_callable_released_while_running},
    {"M1: handles of another session are refused", test_handles_of_another_session},
    {"D8, D10: attr values the runtime cannot hold", test_bad_attr_values},
    {"D9, U1: sizes that overflow", test_sizes_that_overflow},
    {"resource handles from bytes", test_resource_handle_bytes},
    {"eager ops that block take a timeout", test_eager_timeout},
};
TFD_TEST_MAIN(tests)
