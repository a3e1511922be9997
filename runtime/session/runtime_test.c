/* Runtimes with a host's hooks (include/tfdev/runtime.h): the host allocator sees every tensor
 * buffer, the host scheduler runs every task and tfdev starts no thread of its own, the host logger
 * gets the lines, synchronous sessions run on the caller's thread, and two runtimes stay apart. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/testing/harness.h"
#include "runtime/testing/threads.h"
#include "tfdev/runtime.h"

/* ---- a host: a counting allocator, a small job system, a logger that keeps lines ---- */
typedef struct counting_allocator {
  atomic_long allocs, frees, live_bytes;
} counting_allocator;

static void *count_alloc(void *ctx, size_t alignment, size_t size) {
  counting_allocator *c = ctx;
  void *p = NULL;
  if (posix_memalign(&p, alignment, size ? size : alignment) != 0) return NULL;
  atomic_fetch_add(&c->allocs, 1);
  atomic_fetch_add(&c->live_bytes, (long)size);
  return p;
}

static void count_free(void *ctx, void *p, size_t size) {
  counting_allocator *c = ctx;
  atomic_fetch_add(&c->frees, 1);
  atomic_fetch_sub(&c->live_bytes, (long)size);
  free(p);
}

typedef struct job {
  void (*fn)(void *);
  void *arg;
  struct job *next;
} job;

typedef struct job_system {
  pthread_t threads[4];
  int num_threads;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  job *head, *tail;
  bool stop;
  atomic_long scheduled, ran;
} job_system;

static void *job_worker(void *p) {
  job_system *js = p;
  pthread_mutex_lock(&js->mu);
  for (;;) {
    while (!js->head && !js->stop) pthread_cond_wait(&js->cv, &js->mu);
    if (!js->head) break;
    job *j = js->head;
    js->head = j->next;
    if (!js->head) js->tail = NULL;
    pthread_mutex_unlock(&js->mu);
    j->fn(j->arg);
    atomic_fetch_add(&js->ran, 1);
    free(j);
    pthread_mutex_lock(&js->mu);
  }
  pthread_mutex_unlock(&js->mu);
  return NULL;
}

static int js_schedule(void *ctx, void (*fn)(void *), void *arg) {
  job_system *js = ctx;
  job *j = malloc(sizeof *j);
  if (!j) return -1;
  *j = (job){fn, arg, NULL};
  pthread_mutex_lock(&js->mu);
  if (js->tail) js->tail->next = j;
  else js->head = j;
  js->tail = j;
  atomic_fetch_add(&js->scheduled, 1);
  pthread_cond_signal(&js->cv);
  pthread_mutex_unlock(&js->mu);
  return 0;
}

static void js_start(job_system *js, int n) {
  memset(js, 0, sizeof *js);
  pthread_mutex_init(&js->mu, NULL);
  pthread_cond_init(&js->cv, NULL);
  js->num_threads = n;
  for (int i = 0; i < n; i++) pthread_create(&js->threads[i], NULL, job_worker, js);
}

static void js_stop(job_system *js) {
  pthread_mutex_lock(&js->mu);
  js->stop = true;
  pthread_cond_broadcast(&js->cv);
  pthread_mutex_unlock(&js->mu);
  for (int i = 0; i < js->num_threads; i++) pthread_join(js->threads[i], NULL);
  pthread_mutex_destroy(&js->mu);
  pthread_cond_destroy(&js->cv);
}

typedef struct kept_lines {
  pthread_mutex_t mu;
  char text[8192];
  int count;
} kept_lines;

static void keep_line(void *ctx, tfd_log_level level, const char *msg) {
  kept_lines *k = ctx;
  pthread_mutex_lock(&k->mu);
  size_t used = strlen(k->text);
  snprintf(k->text + used, sizeof k->text - used, "%d:%s\n", (int)level, msg);
  k->count++;
  pthread_mutex_unlock(&k->mu);
}

/* ---- graphs ---- */
static tfd_node_def *find_node(const tfd_graph_def *g, const char *name) {
  for (size_t i = 0; i < tfd_graph_def_num_nodes(g); i++)
    if (strcmp(tfd_node_def_name(tfd_graph_def_node(g, i)), name) == 0) return tfd_graph_def_node(g, i);
  return NULL;
}

static void set_tensor(tfd_node_def *n, tfd_tensor *t) {
  tfd_attr_value v = {.type = TFD_ATTR_TENSOR, .tensor = t};
  tfd_node_def_set_attr(n, "value", &v, NULL);
  tfd_tensor_unref(t);
}

/* x (fed: n floats, i % 7) -> eight independent Squares summed in a chain: wide enough for the
 * inter-op pool, and with n large, elementwise work the intra-op pool splits. */
static tfd_tensor *wide_input(int64_t n) {
  float *v = malloc((size_t)n * sizeof *v);
  for (int64_t i = 0; i < n; i++) v[i] = (float)(i % 7);
  tfd_tensor *t = NULL;
  tfd_tensor_from_bytes(NULL, TFD_FLOAT32, &n, 1, v, (size_t)n * 4, &t, NULL);
  free(v);
  return t;
}

static tfd_graph_def *wide_graph(int64_t n) {
  (void)n;
  tfd_graph_def *g = tfd_graph_def_new();
  tfd_attr_value dt = {.type = TFD_ATTR_TYPE, .dtype = TFD_FLOAT32};
  tfd_node_def_set_attr(tfd_graph_def_add_node(g, "x", "Placeholder", NULL), "dtype", &dt, NULL);
  char name[32], prev[32] = "x";
  for (int b = 0; b < 8; b++) {
    snprintf(name, sizeof name, "sq%d", b);
    tfd_node_def_add_input(tfd_graph_def_add_node(g, name, "Square", NULL), "x", NULL);
  }
  for (int b = 0; b < 8; b++) {
    char sq[32], out[32];
    snprintf(sq, sizeof sq, "sq%d", b);
    snprintf(out, sizeof out, "sum%d", b);
    tfd_node_def *a = tfd_graph_def_add_node(g, out, "AddV2", NULL);
    tfd_node_def_add_input(a, prev, NULL);
    tfd_node_def_add_input(a, sq, NULL);
    snprintf(prev, sizeof prev, "%s", out);
  }
  return g;
}

static int64_t wide_n = 1000;

static float run_wide(tfd_session *s, const tfd_run_options *ro, tfd_run_metadata *meta, tfd_status *st) {
  const char *fetch[] = {"sum7"}, *feed[] = {"x"};
  tfd_tensor *out = NULL, *x = wide_input(wide_n);
  float v = -1;
  tfd_code code = tfd_session_run(s, ro, feed, &x, 1, fetch, 1, NULL, 0, &out, meta, st);
  tfd_tensor_unref(x);
  if (code == TFD_OK)
    v = ((const float *)tfd_tensor_const_data(out))[6]; /* 6 + 8 * 36 */
  tfd_tensor_unref(out);
  return v;
}

static void test_host_allocator(void) {
  tfd_status *st = tfd_status_new();
  counting_allocator ca = {0};
  tfd_host_allocator hooks = {count_alloc, count_free, &ca};
  tfd_runtime_config cfg = {.allocator = &hooks};
  tfd_runtime *rt = NULL;
  tfd_runtime_new(&cfg, &rt, st);
  CHECK(rt != NULL);
  tfd_session *s = NULL;
  tfd_runtime_session_new(rt, NULL, NULL, &s, st);
  tfd_graph_def *g = wide_graph(1000);
  CHECK_INT(tfd_session_create(s, g, st), TFD_OK);
  CHECK(run_wide(s, NULL, NULL, st) == 6 + 8 * 36.0f);
  long after_one = atomic_load(&ca.allocs);
  CHECK(after_one >= 8); /* each Square's output (the adds write into theirs in place) */
  for (int i = 0; i < 3; i++) run_wide(s, NULL, NULL, st);
  /* No cache of tfdev's own: each step's buffers come from the host again. */
  CHECK(atomic_load(&ca.allocs) >= after_one + 3 * 8);
  tfd_runtime_unref(rt); /* the session keeps it alive */
  CHECK(run_wide(s, NULL, NULL, st) == 6 + 8 * 36.0f);
  tfd_session_free(s);
  tfd_graph_def_free(g);
  CHECK_INT(atomic_load(&ca.allocs), atomic_load(&ca.frees)); /* every buffer went back */
  CHECK_INT(atomic_load(&ca.live_bytes), 0);
  tfd_status_free(st);
}

static void test_host_scheduler(void) {
  tfd_status *st = tfd_status_new();
  job_system js;
  js_start(&js, 3);
  int before = tfd_test_count_threads();
  tfd_host_scheduler sched = {js_schedule, 3, &js};
  tfd_runtime_config cfg = {.scheduler = &sched};
  tfd_runtime *rt = NULL;
  tfd_runtime_new(&cfg, &rt, st);
  CHECK(rt != NULL);
  tfd_session *s = NULL;
  tfd_runtime_session_new(rt, NULL, NULL, &s, st);
  wide_n = 1 << 20; /* 4 MiB per tensor: the intra-op pool splits the adds */
  tfd_graph_def *g = wide_graph(wide_n);
  CHECK_INT(tfd_session_create(s, g, st), TFD_OK);
  for (int i = 0; i < 5; i++) CHECK(run_wide(s, NULL, NULL, st) == 6 + 8 * 36.0f);
  CHECK(atomic_load(&js.scheduled) > 0);
  CHECK_INT(tfd_test_count_threads(), before); /* tfdev started none */
  tfd_session_free(s);
  tfd_runtime_unref(rt);
  CHECK_INT(atomic_load(&js.ran), atomic_load(&js.scheduled)); /* every task ran, none is left */
  wide_n = 1000;
  tfd_graph_def_free(g);
  js_stop(&js);
  /* A scheduler the runtime cannot use is refused, naming why. */
  tfd_host_scheduler none = {js_schedule, 0, &js};
  cfg.scheduler = &none;
  CHECK(tfd_runtime_new(&cfg, &(tfd_runtime *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "a host scheduler needs a schedule function and 1 to 1024 threads, got 0");
  tfd_host_allocator half = {count_alloc, NULL, NULL};
  tfd_runtime_config bad = {.allocator = &half};
  CHECK(tfd_runtime_new(&bad, &(tfd_runtime *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "a host allocator needs both allocate and deallocate");
  tfd_status_free(st);
}

static void all_on_caller(tfd_run_metadata *m) {
  int nodes = 0;
  for (int d = 0; d < tfd_run_metadata_num_devices(m); d++)
    for (int i = 0; i < tfd_run_metadata_num_nodes(m, d); i++) {
      tfd_node_exec_stats ns;
      tfd_run_metadata_node(m, d, i, &ns);
      CHECK_INT(ns.thread_id, 0);
      nodes++;
    }
  CHECK(nodes >= 17);
}

static void test_synchronous_session(void) {
  tfd_status *st = tfd_status_new();
  job_system js;
  js_start(&js, 2);
  tfd_host_scheduler sched = {js_schedule, 2, &js};
  tfd_runtime_config cfg = {.scheduler = &sched};
  tfd_runtime *rt = NULL;
  tfd_runtime_new(&cfg, &rt, st);
  tfd_session_options *o = tfd_session_options_new();
  tfd_session_options_set_inter_op_threads(o, -1);
  CHECK_INT(tfd_session_options_inter_op_threads(o), -1);
  tfd_session *s = NULL;
  tfd_runtime_session_new(rt, o, NULL, &s, st);
  wide_n = 100; /* small: no intra-op splitting either */
  tfd_graph_def *g = wide_graph(wide_n);
  CHECK_INT(tfd_session_create(s, g, st), TFD_OK);
  tfd_run_options ro = {.trace = true};
  tfd_run_metadata *m = tfd_run_metadata_new();
  CHECK(run_wide(s, &ro, m, st) == 6 + 8 * 36.0f);
  all_on_caller(m);
  CHECK_INT(atomic_load(&js.scheduled), 0);
  tfd_run_metadata_free(m);
  tfd_session_free(s);
  /* The run option does the same for one run of an ordinary session. */
  tfd_runtime_session_new(rt, NULL, NULL, &s, st);
  CHECK_INT(tfd_session_create(s, g, st), TFD_OK);
  ro.inter_op_thread_pool = -1;
  m = tfd_run_metadata_new();
  CHECK(run_wide(s, &ro, m, st) == 6 + 8 * 36.0f);
  all_on_caller(m);
  CHECK_INT(atomic_load(&js.scheduled), 0);
  tfd_run_metadata_free(m);
  tfd_session_free(s);
  /* Partitions on two CPU devices, one after another on this thread, exchanging tensors. */
  tfd_session_options_set_device_count(o, "CPU", 2, st);
  tfd_runtime_session_new(rt, o, NULL, &s, st);
  tfd_graph_def *g2 = wide_graph(100);
  tfd_node_def_set_device(find_node(g2, "sum3"), "/device:CPU:1", st);
  tfd_node_def_set_device(find_node(g2, "sq5"), "/device:CPU:1", st);
  CHECK_INT(tfd_session_create(s, g2, st), TFD_OK);
  CHECK_STR(tfd_status_message(st), "");
  CHECK(run_wide(s, NULL, NULL, st) == 6 + 8 * 36.0f);
  CHECK_INT(atomic_load(&js.scheduled), 0);
  tfd_session_free(s);
  tfd_graph_def_free(g2);
  tfd_graph_def_free(g);
  tfd_session_options_free(o);
  tfd_runtime_unref(rt);
  js_stop(&js);
  tfd_status_free(st);
}

/* A device type only one runtime knows: CPU-backed "MINE" devices. */
static tfd_code mine_create(void *self, void *host_ctx, const tfd_session_options *o, const char *prefix,
                            tfd_device_list *out, tfd_status *st) {
  (void)self, (void)host_ctx, (void)o;
  char name[128];
  snprintf(name, sizeof name, "%s/device:MINE:0", prefix);
  tfd_cpu_device_config cfg = {.name = name, .device_type = "MINE", .num_threads = 1};
  tfd_device *d = NULL;
  tfd_cpu_device_new(&cfg, &d, st);
  if (!d) return tfd_status_code(st);
  tfd_code code = tfd_device_list_push(out, d, st);
  tfd_device_unref(d);
  return code;
}

static const tfd_device_factory_ops mine_ops = {"MineFactory", mine_create, NULL, NULL};

static bool has_device_type(tfd_session *s, const char *type) {
  tfd_device_mgr *m = tfd_session_device_mgr(s);
  return m && tfd_device_mgr_num_device_type(m, type) > 0;
}

static void test_two_runtimes_apart(void) {
  tfd_status *st = tfd_status_new();
  kept_lines l1 = {PTHREAD_MUTEX_INITIALIZER, "", 0}, l2 = {PTHREAD_MUTEX_INITIALIZER, "", 0};
  tfd_host_logger log1 = {keep_line, TFD_LOG_INFO, &l1}, log2 = {keep_line, TFD_LOG_WARNING, &l2};
  tfd_runtime_config c1 = {.logger = &log1}, c2 = {.logger = &log2};
  tfd_runtime *r1 = NULL;
  tfd_runtime_new(&c1, &r1, st);
  tfd_runtime *r2 = NULL;
  tfd_runtime_new(&c2, &r2, st);
  tfd_device_factory *f = NULL;
  tfd_device_factory_new(&mine_ops, NULL, &f, st);
  CHECK_INT(tfd_factory_registry_register(tfd_runtime_registry(r1), "MINE", f, 40, st), TFD_OK);
  tfd_device_factory_unref(f);
  tfd_session_options *o = tfd_session_options_new();
  tfd_session_options_set_allow_soft_placement(o, true);
  tfd_session *s1 = NULL;
  tfd_runtime_session_new(r1, o, NULL, &s1, st);
  tfd_session *s2 = NULL;
  tfd_runtime_session_new(r2, o, NULL, &s2, st);
  CHECK(has_device_type(s1, "MINE"));
  CHECK(!has_device_type(s2, "MINE"));
  CHECK(tfd_factory_registry_get(tfd_runtime_registry(r2), "MINE") == NULL);
  /* A node pinned to a GPU neither has: soft placement says so at info, to r1's logger only. */
  tfd_graph_def *g = tfd_graph_def_new();
  float one = 2;
  tfd_node_def *c = tfd_graph_def_add_node(g, "c", "Const", st);
  set_tensor(c, tfd_test_tensor(TFD_FLOAT32, NULL, 0, &one, 4, st));
  tfd_node_def_set_device(c, "/device:GPU:0", st);
  const char *fetch[] = {"c"};
  tfd_tensor *out = NULL;
  CHECK_INT(tfd_session_create(s1, g, st), TFD_OK);
  CHECK_INT(tfd_session_run(s1, NULL, NULL, NULL, 0, fetch, 1, NULL, 0, &out, NULL, st), TFD_OK);
  tfd_tensor_unref(out);
  CHECK_INT(tfd_session_create(s2, g, st), TFD_OK);
  CHECK_INT(tfd_session_run(s2, NULL, NULL, NULL, 0, fetch, 1, NULL, 0, &out, NULL, st), TFD_OK);
  tfd_tensor_unref(out);
  CHECK_CONTAINS(l1.text, "1:soft placement: node 'c' (Const) asked for '/device:GPU:0'");
  CHECK_INT(l2.count, 0); /* its level is warning */
  tfd_runtime_log(r2, TFD_LOG_ERROR, "from the host");
  tfd_runtime_log(r2, TFD_LOG_INFO, "below its level");
  CHECK_STR(l2.text, "3:from the host\n");
  tfd_session_free(s1);
  tfd_session_free(s2);
  tfd_session_options_free(o);
  tfd_graph_def_free(g);
  tfd_runtime_unref(r1);
  tfd_runtime_unref(r2);
  tfd_status_free(st);
}

static const tfd_test tests[] = {
    {"a host allocator sees every tensor buffer", test_host_allocator},
    {"a host scheduler runs every task; tfdev starts no thread", test_host_scheduler},
    {"synchronous sessions and runs stay on the caller's thread", test_synchronous_session},
    {"two runtimes share no registration and no log", test_two_runtimes_apart},
};

TFD_TEST_MAIN(tests)
