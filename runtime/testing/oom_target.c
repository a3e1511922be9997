/* A C host for the out-of-memory sweep (scripts/oom-sweep): what a host does with tfdev's C API, one
 * step at a time, each checked. Linked with runtime/testing/alloc_faults.c, which fails the N-th
 * allocation; every step must then succeed, or fail with RESOURCE_EXHAUSTED and succeed when tried
 * again (nothing was lost), with the right values either way.
 *
 *   oom_target session      a graph over two CPU devices (a Send/Recv pair), a session: create,
 *                           run, a callable, a partial run, an asynchronous run, close
 *   oom_target model PATH   tfd_graph_def_load of a model (a .pb, or a TensorFlow.js model.json), a
 *                           session created with it, one run fed zeros by its signature
 *
 * Prints one line per step and "RESULT clean" (exit 0), or "RESULT bad: <step>: <why>" (exit 3)
 * when a step fails otherwise: another code, a wrong value, a retry that fails too.
 *
 *   oom_target sweep [--stride=K] session | model PATH
 *
 * runs the script again and again in this one process, failing its 1st allocation, then its
 * (1+K)-th, ..., until a run ends without reaching the allocation asked for: a quick sweep for
 * ctest (once the process has made its registries and pools, a run allocates less than the first;
 * scripts/oom-sweep, one process per point, fails those too). Exit 0 when every point is clean. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/testing/alloc_faults.h"
#include "tfdev/tfdev.h"

typedef struct host {
  tfd_graph_def *g;
  tfd_session *s;
  const char *model;
  tfd_status *st;
  tfd_status *aux; /* for the calls that tidy up after a step, whose errors are not the step's */
  bool quiet;      /* a sweep in process: only what went wrong is printed */
  char why[512];
} host;

typedef tfd_code (*step_fn)(host *h);

static tfd_code bad(host *h, const char *fmt, const char *detail) {
  snprintf(h->why, sizeof h->why, fmt, detail);
  return TFD_INTERNAL;
}

/* Runs fn; a RESOURCE_EXHAUSTED failure is tried once more, which must then succeed. False: the
 * run is bad, and why is printed. */
static bool step(host *h, const char *name, step_fn fn) {
  for (int attempt = 0; attempt < 2; attempt++) {
    h->why[0] = 0;
    tfd_status_reset(h->st);
    tfd_code code = fn(h);
    if (code == TFD_OK) {
      if (!h->quiet) printf("STEP %s %s\n", name, attempt ? "ok after out of memory" : "ok");
      return true;
    }
    if (h->why[0]) { /* the step's own check failed: a wrong value, not an error */
      printf("RESULT bad: %s: %s\n", name, h->why);
      return false;
    }
    if (code != TFD_RESOURCE_EXHAUSTED || attempt == 1) {
      printf("RESULT bad: %s: %s%s: %s\n", name, attempt ? "the retry after out of memory failed: " : "",
             tfd_code_name(code), tfd_status_message(h->st));
      return false;
    }
    if (!h->quiet) printf("STEP %s out of memory: %s\n", name, tfd_status_message(h->st));
  }
  return false;
}

/* ---- the session script ---- */
static tfd_code add_node(tfd_graph_def *g, const char *name, const char *op, const char *in0, const char *in1,
                         const char *device, tfd_status *st) {
  tfd_node_def *n = tfd_graph_def_add_node(g, name, op, st);
  if (!n) return tfd_status_code(st);
  if (in0 && tfd_node_def_add_input(n, in0, st) != TFD_OK) return tfd_status_code(st);
  if (in1 && tfd_node_def_add_input(n, in1, st) != TFD_OK) return tfd_status_code(st);
  if (device && tfd_node_def_set_device(n, device, st) != TFD_OK) return tfd_status_code(st);
  return TFD_OK;
}

static tfd_code set_type(tfd_graph_def *g, const char *node, const char *attr, tfd_dtype dt, tfd_status *st) {
  tfd_attr_value v = {.type = TFD_ATTR_TYPE, .dtype = dt};
  return tfd_node_def_set_attr(tfd_graph_def_find(g, node), attr, &v, st);
}

/* x (fed, 2x2) -> y = MatMul(x, w) on CPU:0 -> out = Relu(y + y) on CPU:1, so a run crosses devices. */
static tfd_code build_graph(host *h) {
  tfd_graph_def_free(h->g);
  h->g = tfd_graph_def_new();
  if (!h->g) return tfd_status_setf(h->st, TFD_RESOURCE_EXHAUSTED, "tfd_graph_def_new: out of memory");
  static const float w[4] = {1, 2, 3, 4};
  static const int64_t dims[2] = {2, 2};
  tfd_tensor *wt = NULL;
  tfd_tensor_from_bytes(NULL, TFD_FLOAT32, dims, 2, w, sizeof w, &wt, h->st);
  if (!wt) return tfd_status_code(h->st);
  tfd_attr_value value = {.type = TFD_ATTR_TENSOR, .tensor = wt};
  tfd_attr_value shape = {.type = TFD_ATTR_SHAPE, .shape = {.ndims = 2, .dims = {2, 2}}};
  tfd_code code = add_node(h->g, "x", "Placeholder", NULL, NULL, NULL, h->st);
  if (code == TFD_OK) code = set_type(h->g, "x", "dtype", TFD_FLOAT32, h->st);
  if (code == TFD_OK) code = tfd_node_def_set_attr(tfd_graph_def_find(h->g, "x"), "shape", &shape, h->st);
  if (code == TFD_OK) code = add_node(h->g, "w", "Const", NULL, NULL, NULL, h->st);
  if (code == TFD_OK) code = set_type(h->g, "w", "dtype", TFD_FLOAT32, h->st);
  if (code == TFD_OK) code = tfd_node_def_set_attr(tfd_graph_def_find(h->g, "w"), "value", &value, h->st);
  if (code == TFD_OK) code = add_node(h->g, "y", "MatMul", "x", "w", "/device:CPU:0", h->st);
  if (code == TFD_OK) code = add_node(h->g, "sum", "AddV2", "y", "y", "/device:CPU:1", h->st);
  if (code == TFD_OK) code = add_node(h->g, "out", "Relu", "sum", NULL, "/device:CPU:1", h->st);
  tfd_tensor_unref(wt);
  return code;
}

static tfd_code new_session(host *h) {
  tfd_session_options *o = tfd_session_options_new();
  if (!o) return tfd_status_setf(h->st, TFD_RESOURCE_EXHAUSTED, "tfd_session_options_new: out of memory");
  tfd_code code = tfd_session_options_set_device_count(o, "CPU", 2, h->st);
  if (code == TFD_OK) {
    tfd_session_new(o, NULL, NULL, &h->s, h->st);
    if (!h->s) code = tfd_status_code(h->st);
  }
  tfd_session_options_free(o);
  return code;
}

static tfd_code create(host *h) { return tfd_session_create(h->s, h->g, h->st); }

/* x = [[1, -1], [0, 2]]: y = x.w = [[-2, -2], [6, 8]], out = relu(2y) = [[0, 0], [12, 16]]. */
static tfd_tensor *feed_x(host *h) {
  static const float x[4] = {1, -1, 0, 2};
  static const int64_t dims[2] = {2, 2};
  tfd_tensor *made = NULL;
  tfd_tensor_from_bytes(NULL, TFD_FLOAT32, dims, 2, x, sizeof x, &made, h->st);
  return made;
}

static tfd_code check_values(host *h, tfd_tensor *t, const float *want, int n) {
  if (!t || tfd_tensor_dtype(t) != TFD_FLOAT32 || tfd_tensor_numel(t) != n) return bad(h, "%s", "an output of the wrong kind");
  const float *v = tfd_tensor_const_data(t);
  for (int i = 0; i < n; i++)
    if (v[i] != want[i]) return bad(h, "%s", "an output with wrong values");
  return TFD_OK;
}

static const float want_out[4] = {0, 0, 12, 16}, want_y[4] = {-2, -2, 6, 8};

static tfd_code run(host *h) {
  tfd_tensor *x = feed_x(h), *out[2] = {NULL, NULL};
  if (!x) return tfd_status_code(h->st);
  const char *feeds[] = {"x"}, *fetches[] = {"out", "y:0"};
  tfd_code code = tfd_session_run(h->s, NULL, feeds, &x, 1, fetches, 2, NULL, 0, out, NULL, h->st);
  if (code == TFD_OK) code = check_values(h, out[0], want_out, 4);
  if (code == TFD_OK) code = check_values(h, out[1], want_y, 4);
  tfd_tensor_unref(out[0]);
  tfd_tensor_unref(out[1]);
  tfd_tensor_unref(x);
  return code;
}

static tfd_code callable(host *h) {
  const char *feeds[] = {"x"}, *fetches[] = {"out"};
  int64_t c = tfd_session_make_callable(h->s, feeds, 1, fetches, 1, NULL, 0, h->st);
  if (c < 0) return tfd_status_code(h->st);
  tfd_tensor *x = feed_x(h);
  tfd_code code = x ? TFD_OK : tfd_status_code(h->st);
  for (int i = 0; code == TFD_OK && i < 2; i++) {
    tfd_tensor *out = NULL;
    code = tfd_session_run_callable(h->s, c, NULL, &x, &out, NULL, h->st);
    if (code == TFD_OK) code = check_values(h, out, want_out, 4);
    tfd_tensor_unref(out);
  }
  tfd_tensor_unref(x);
  tfd_status_reset(h->aux);
  if (tfd_session_release_callable(h->s, c, h->aux) != TFD_OK && code == TFD_OK)
    code = tfd_status_setf(h->st, tfd_status_code(h->aux), "release_callable: %s", tfd_status_message(h->aux));
  return code;
}

static tfd_code partial_run(host *h) {
  const char *inputs[] = {"x"}, *outputs[] = {"y", "out"};
  int64_t p = tfd_session_prun_setup(h->s, inputs, 1, outputs, 2, NULL, 0, h->st);
  if (p < 0) return tfd_status_code(h->st);
  tfd_tensor *x = feed_x(h), *y = NULL, *out = NULL;
  tfd_code code = x ? TFD_OK : tfd_status_code(h->st);
  if (code == TFD_OK) code = tfd_session_prun(h->s, p, inputs, &x, 1, outputs, 1, &y, h->st);
  if (code == TFD_OK) code = check_values(h, y, want_y, 4);
  if (code == TFD_OK) code = tfd_session_prun(h->s, p, NULL, NULL, 0, outputs + 1, 1, &out, h->st);
  if (code == TFD_OK) code = check_values(h, out, want_out, 4);
  tfd_tensor_unref(x);
  tfd_tensor_unref(y);
  tfd_tensor_unref(out);
  tfd_session_prun_close(h->s, p, h->aux); /* NOT_FOUND when every fetch was taken: the run is done */
  return code;
}

static tfd_code async_run(host *h) {
  tfd_tensor *x = feed_x(h), *out = NULL;
  if (!x) return tfd_status_code(h->st);
  const char *feeds[] = {"x"}, *fetches[] = {"out"};
  tfd_run *r = NULL;
  tfd_session_run_async(h->s, NULL, feeds, &x, 1, fetches, 1, NULL, 0, NULL, NULL, NULL, &r, h->st);
  tfd_tensor_unref(x);
  if (!r) return tfd_status_code(h->st);
  tfd_code code = tfd_run_wait(r, -1, h->st) ? tfd_status_code(h->st) : bad(h, "%s", "wait(-1) returned before the end");
  if (code == TFD_OK) code = tfd_run_take_outputs(r, &out, h->st);
  if (code == TFD_OK) code = check_values(h, out, want_out, 4);
  tfd_tensor_unref(out);
  tfd_run_free(r);
  return code;
}

static tfd_code close_session(host *h) {
  tfd_code code = tfd_session_close(h->s, h->st);
  tfd_session_free(h->s);
  h->s = NULL;
  return code;
}

/* ---- the model script ---- */
static tfd_code load_model(host *h) {
  tfd_graph_def_free(h->g);
  tfd_graph_def_load(h->model, &h->g, h->st);
  return h->g ? TFD_OK : tfd_status_code(h->st);
}

static tfd_code new_default_session(host *h) {
  tfd_session_new(NULL, NULL, NULL, &h->s, h->st);
  return h->s ? TFD_OK : tfd_status_code(h->st);
}

/* What to feed and fetch: the signature's, else (a binary GraphDef has none) the Placeholders and the
 * nodes nobody reads, as tfdev.model describes a graph. Names are borrowed from g. */
typedef struct io {
  const char **names;
  tfd_dtype *types;
  tfd_shape *shapes;
  size_t n;
} io;

static bool io_alloc(io *x, size_t cap) {
  x->names = calloc(cap + 1, sizeof *x->names);
  x->types = calloc(cap + 1, sizeof *x->types);
  x->shapes = calloc(cap + 1, sizeof *x->shapes);
  x->n = 0;
  return x->names && x->types && x->shapes;
}

static void io_free(io *x) {
  free(x->names);
  free(x->types);
  free(x->shapes);
}

static bool consumed(const tfd_graph_def *g, const char *name) {
  size_t len = strlen(name);
  for (size_t i = 0; i < tfd_graph_def_num_nodes(g); i++) {
    const tfd_node_def *n = tfd_graph_def_node(g, i);
    for (size_t k = 0; k < tfd_node_def_num_inputs(n); k++) {
      const char *in = tfd_node_def_input(n, k);
      if (*in == '^') in++;
      if (strncmp(in, name, len) == 0 && (in[len] == 0 || in[len] == ':')) return true;
    }
  }
  return false;
}

static tfd_code model_io(host *h, io *in, io *out) {
  const tfd_graph_def *g = h->g;
  size_t ni = tfd_graph_def_signature_size(g, false), no = tfd_graph_def_signature_size(g, true), n = tfd_graph_def_num_nodes(g);
  bool sig = no > 0;
  if (!io_alloc(in, sig ? ni : n) || !io_alloc(out, sig ? no : n))
    return tfd_status_setf(h->st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  for (size_t i = 0; sig && i < ni; i++) {
    const tfd_signature_entry *e = tfd_graph_def_signature_entry(g, false, i);
    in->names[in->n] = e->tensor, in->types[in->n] = e->dtype, in->shapes[in->n++] = e->shape;
  }
  for (size_t i = 0; sig && i < no; i++) out->names[out->n++] = tfd_graph_def_signature_entry(g, true, i)->tensor;
  for (size_t i = 0; !sig && i < n; i++) {
    const tfd_node_def *d = tfd_graph_def_node(g, i);
    const char *op = tfd_node_def_op(d);
    if (strcmp(op, "Placeholder") == 0) {
      const tfd_attr_value *dt = tfd_node_def_attr(d, "dtype"), *shape = tfd_node_def_attr(d, "shape");
      in->names[in->n] = tfd_node_def_name(d);
      in->types[in->n] = dt ? dt->dtype : TFD_FLOAT32;
      in->shapes[in->n++] = shape ? shape->shape : (tfd_shape){.ndims = -1};
    } else if (strcmp(op, "Const") != 0 && strcmp(op, "NoOp") != 0 && !consumed(g, tfd_node_def_name(d))) {
      out->names[out->n++] = tfd_node_def_name(d);
    }
  }
  return in->n && out->n ? TFD_OK : bad(h, "%s", "the model has nothing to feed or to fetch");
}

/* Feeds zeros of each input's shape (unknown dimensions 1), fetches every output. */
static tfd_code run_model(host *h) {
  io in = {0}, out = {0};
  tfd_tensor **feeds = NULL, **outs = NULL;
  tfd_code code = model_io(h, &in, &out);
  if (code == TFD_OK) {
    feeds = calloc(in.n, sizeof *feeds);
    outs = calloc(out.n, sizeof *outs);
    if (!feeds || !outs) code = tfd_status_setf(h->st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  }
  for (size_t i = 0; code == TFD_OK && i < in.n; i++) {
    int64_t dims[TFD_MAX_DIMS];
    int nd = in.shapes[i].ndims < 0 ? 0 : in.shapes[i].ndims;
    for (int d = 0; d < nd; d++) dims[d] = in.shapes[i].dims[d] < 0 ? 1 : in.shapes[i].dims[d];
    tfd_tensor_new(NULL, in.types[i], dims, nd, &feeds[i], h->st);
    if (!feeds[i]) code = tfd_status_code(h->st);
    else memset(tfd_tensor_data(feeds[i]), 0, tfd_tensor_byte_size(feeds[i]));
  }
  if (code == TFD_OK)
    code = tfd_session_run(h->s, NULL, in.names, feeds, (int)in.n, out.names, (int)out.n, NULL, 0, outs, NULL, h->st);
  for (size_t i = 0; code == TFD_OK && i < out.n; i++)
    if (!outs[i] || tfd_tensor_numel(outs[i]) <= 0) code = bad(h, "%s", "an empty output");
  for (size_t i = 0; feeds && i < in.n; i++) tfd_tensor_unref(feeds[i]);
  for (size_t i = 0; outs && i < out.n; i++) tfd_tensor_unref(outs[i]);
  free(feeds);
  free(outs);
  io_free(&in);
  io_free(&out);
  return code;
}

/* One run of the script; frees what it made. */
static bool run_script(host *h) {
  bool ok = h->model ? step(h, "load", load_model) && step(h, "session", new_default_session) &&
                           step(h, "create", create) && step(h, "run", run_model) && step(h, "close", close_session)
                     : step(h, "graph", build_graph) && step(h, "session", new_session) && step(h, "create", create) &&
                           step(h, "run", run) && step(h, "callable", callable) && step(h, "partial run", partial_run) &&
                           step(h, "async run", async_run) && step(h, "close", close_session);
  tfd_session_free(h->s);
  tfd_graph_def_free(h->g);
  h->s = NULL;
  h->g = NULL;
  return ok;
}

/* The in-process sweep: exit 0 when every point was clean. */
static int sweep(host *h, long long stride) {
  long long points = 0;
  for (long long k = 1;; k += stride) {
    tfd_alloc_faults_fail_at(tfd_alloc_faults_count() + k);
    bool ok = run_script(h);
    bool reached = tfd_alloc_faults_failed();
    tfd_alloc_faults_fail_at(0);
    if (!ok) {
      printf("oom sweep in process: point %lld of a run failed (above)\n", k);
      return 3;
    }
    if (!reached) break;
    points++;
  }
  printf("oom sweep in process: %lld points (stride %lld), every one clean\n", points, stride);
  return 0;
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0); /* a run killed for hanging still shows its last step */
  host h = {0};
  long long stride = 0;
  int a = 1;
  if (a < argc && strcmp(argv[a], "sweep") == 0) {
    stride = 1;
    if (++a < argc && strncmp(argv[a], "--stride=", 9) == 0) stride = atoll(argv[a++] + 9);
  }
  bool session = argc - a == 1 && strcmp(argv[a], "session") == 0;
  bool model = argc - a == 2 && strcmp(argv[a], "model") == 0;
  if ((!session && !model) || stride < 0) {
    fprintf(stderr, "usage: oom_target [sweep [--stride=K]] session | model PATH\n");
    return 2;
  }
  h.model = model ? argv[a + 1] : NULL;
  h.quiet = stride > 0;
  /* The host's own statuses: made again if that allocation is the one that fails. */
  if (!(h.st = tfd_status_new()) && !(h.st = tfd_status_new())) return 3;
  if (!(h.aux = tfd_status_new()) && !(h.aux = tfd_status_new())) return 3;
  int rc;
  if (stride > 0) rc = run_script(&h) ? sweep(&h, stride) : 3; /* the first run makes what every run shares */
  else rc = run_script(&h) ? 0 : 3;
  tfd_status_free(h.st);
  tfd_status_free(h.aux);
  if (rc == 0 && stride == 0) printf("RESULT clean\n");
  return rc;
}
