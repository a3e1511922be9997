/* Fuzzes DirectSession through the public C API: graph defs, session
 * options, runs, callables, partial runs, resets and eager ops.
 *
 * The input is read front to back as a stream of small decisions (a byte
 * each, 0 once the input is used up):
 *   options   one byte: 1 or 2 CPU devices, soft placement, per-session
 *             threads, cost model, 1 or 2 intra/inter-op threads
 *   graph     a node count (at most 24), then per node: a name (mostly the
 *             node's default name "a".."x"; sometimes another node's, a
 *             malformed one or raw bytes), an op (mostly from the registry,
 *             internal "_X" ops included; sometimes an unknown or raw name),
 *             inputs (earlier or later nodes, output indices, control
 *             inputs, malformed strings), a device, and attrs of every type
 *             (the type the op declares for the name, mostly)
 *   actions   until the input ends, at most 8 of: run, extend, callable,
 *             partial run, reset, eager op on a session device, close,
 *             queries; each reads its own names and tensors
 * Tensors are small (rank <= 3, dims <= 4) with their bytes taken from the
 * input; Const values may still hold huge int32 shapes for Fill, Reshape or
 * random ops, which the device's memory limit (16 MiB here) must refuse.
 * Runs time out after 30 ms so blocking queue ops end, and so do while loops that never end (the
 * session's operation timeout; partial runs' fetches wait that long too, then cancel the step). */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfdev/tfdev.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                               \
  do {                                                                                            \
    if (!(cond)) {                                                                                \
      fprintf(stderr, "fuzz_graph_session: invariant failed at line %d: %s\n", __LINE__, #cond); \
      abort();                                                                                    \
    }                                                                                             \
  } while (0)

#define MAX_NODES 24
#define MAX_EXTEND_NODES 6
#define MAX_ACTIONS 8
#define MAX_NAMES 4
#define TIMEOUT_MS 30

/* ---- the input stream ---- */
typedef struct fz {
  const uint8_t *p, *end;
  /* Strings made for this input, freed at its end. */
  char *strs[1024];
  int nstrs;
} fz;

static bool more(const fz *f) { return f->p < f->end; }
static uint8_t u8(fz *f) { return f->p < f->end ? *f->p++ : 0; }
static uint64_t le(fz *f, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; i++) v |= (uint64_t)u8(f) << (8 * i);
  return v;
}

/* A copy owned by the input's string list (NULL when the list is full). */
static const char *keep(fz *f, const char *s, size_t n) {
  if (f->nstrs == (int)(sizeof f->strs / sizeof f->strs[0])) return "";
  char *c = malloc(n + 1);
  if (!c) abort();
  memcpy(c, s, n);
  c[n] = 0;
  f->strs[f->nstrs++] = c;
  return c;
}

/* Up to `max` raw bytes (a NUL inside ends the C string early, as it would for a caller). */
static const char *raw_string(fz *f, size_t max) {
  size_t n = u8(f) % (max + 1);
  char buf[256];
  for (size_t i = 0; i < n; i++) buf[i] = (char)u8(f);
  return keep(f, buf, n);
}

/* prefix + name, then ":index" unless index < 0. */
static const char *join(fz *f, const char *prefix, const char *name, int index) {
  char buf[300];
  int n = index < 0 ? snprintf(buf, sizeof buf, "%s%s", prefix, name)
                    : snprintf(buf, sizeof buf, "%s%s:%d", prefix, name, index);
  return keep(f, buf, (size_t)(n < 0 ? 0 : n >= (int)sizeof buf ? (int)sizeof buf - 1 : n));
}

/* ---- names ---- */
/* Node k's default name: "a".."z", then "n26", "n27", ... */
static const char *node_name(fz *f, int k) {
  static const char *const letters[] = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m",
                                        "n", "o", "p", "q", "r", "s", "t", "u", "v", "w", "x", "y", "z"};
  if (k >= 0 && k < 26) return letters[k];
  char buf[24];
  int n = snprintf(buf, sizeof buf, "n%d", k);
  return keep(f, buf, (size_t)n);
}

static const char *const odd_node_names[] = {"",  "_a", "a b", "a:0", "^a", "a/b", "A.b-c", "a\xff", "0a", "-", "ghost"};
static const char *const odd_inputs[] = {"a:x", "",        ":0",    "a:-1",   "a:99999999999", "ghost", "^ghost",
                                         "^",   "a:0:0",   "a::1",  "^^a",    "a:+1",          "a: 1",  "a:2147483648",
                                         "a:1", "b:2",     "a:",    "^a:0"};
static const char *const devices[] = {"",
                                      "/device:CPU:0",
                                      "/cpu:1",
                                      "/job:foo",
                                      "/device:CPU:1",
                                      "/job:localhost/replica:0/task:0/device:CPU:0",
                                      "/job:localhost/replica:0/task:0/device:CPU:1",
                                      "/device:GPU:0",
                                      "gpu zero",
                                      "/device:CPU:*",
                                      "/job:localhost/replica:0/task:0",
                                      "/device:CPU:7"};
static const char *const bogus_ops[] = {"Frobnicate", "", "const", "MatMul ", "_Unknown", "Placeholder\n", "NoOp\x01"};
static const char *const attr_names[] = {"T",          "dtype",       "value",      "shape",        "transpose_a",
                                         "transpose_b", "keep_dims",  "Tidx",       "Tshape",       "Tperm",
                                         "N",          "SrcT",        "DstT",       "Truncate",     "index_type",
                                         "out_type",   "seed",        "seed2",      "container",    "shared_name",
                                         "component_types", "capacity", "Tcomponents", "cancel_pending_enqueues",
                                         "index",      "tensor_name", "send_device", "recv_device",
                                         "send_device_incarnation", "tensor_type", "data_format", "", "bogus",
                                         /* control flow, TensorLists, NMS: loops the timeout must end */
                                         "frame_name", "is_constant", "parallel_iterations", "element_dtype",
                                         "num_elements", "shape_type", "resize_if_index_out_of_bounds",
                                         "pad_to_max_output_size", "T_threshold",
                                         /* string ops */
                                         "num_buckets", "skip_empty", "separator", "ngram_widths", "left_pad",
                                         "right_pad", "pad_width", "preserve_short_sequences", "Tsplits", "pattern",
                                         "rewrite", "replace_global"};
static const char *const strings[] = {"",
                                      "NHWC",
                                      "NCHW",
                                      "c",
                                      "q",
                                      "v",
                                      "shared",
                                      "localhost",
                                      "/job:localhost/replica:0/task:0/device:CPU:0",
                                      "/job:localhost/replica:0/task:0/device:CPU:1",
                                      "client",
                                      "a:0",
                                      "loop",
                                      "inner",
                                      ("/job:localhost/replica:0/task:0/device:CPU:0;1;/job:localhost/replica:0/"
                                       "task:0/device:CPU:1;a:0;0:0"),
                                      /* the string ops' separators, patterns and rewrites */
                                      " ",
                                      "[a-z]+",
                                      "(a|b)*c?",
                                      "(?:x)(\\d{2,})\\s|^$",
                                      "\\1-\\0",
                                      "x*"};
#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* A tensor name for feeds and fetches: a node of the graph, maybe with an
 * output index, or something malformed. `total` is how many nodes there are. */
static const char *tensor_name(fz *f, int total) {
  uint8_t b = u8(f);
  const char *n = node_name(f, (b & 0x1f) % (total > 0 ? total : 1));
  switch (b >> 6) {
    case 0: return n;
    case 1: return join(f, "", n, u8(f) % 3);
    case 2: return b & 0x20 ? raw_string(f, 24) : join(f, "", n, 0);
    default: return odd_inputs[b % COUNT(odd_inputs)];
  }
}

/* ---- values ---- */
static tfd_dtype decode_dtype(fz *f) {
  static const tfd_dtype real[] = {TFD_FLOAT32, TFD_INT32,    TFD_FLOAT64, TFD_INT64,
                                   TFD_BOOL,    TFD_RESOURCE, TFD_VARIANT, TFD_STRING};
  uint8_t b = u8(f);
  if (b < 0xF0) return real[b % COUNT(real)];
  static const int odd[] = {0, 4, 8, 11, 19, 21, -1, 1000};
  return (tfd_dtype)odd[b & 7];
}

static int64_t decode_int(fz *f) {
  uint8_t b = u8(f);
  if (b < 0xF0) return (int8_t)b;
  switch (b & 7) {
    case 0: return INT64_MIN;
    case 1: return INT64_MAX;
    case 2: return (int64_t)1 << 31;
    case 3: return -((int64_t)1 << 31);
    case 4: return (int64_t)1 << 32;
    case 5: return 65536;
    default: return (int64_t)le(f, 8);
  }
}

static double decode_float(fz *f) {
  uint8_t b = u8(f);
  static const double table[] = {0, 1, -1, 0.5, 1e308, -0.0, 5e-324, 3};
  if (b < 0xE0) return table[b % COUNT(table)];
  if (b < 0xE4) return b & 1 ? INFINITY : -INFINITY;
  if (b < 0xE8) return NAN;
  uint64_t bits = le(f, 8);
  double d;
  memcpy(&d, &bits, sizeof d);
  return d;
}

/* A small tensor: bytes from the input, zero-padded. NULL when its dtype is invalid. */
static tfd_tensor *decode_tensor(fz *f, tfd_status *st) {
  tfd_dtype dt = decode_dtype(f);
  int rank = u8(f) % 4;
  int64_t dims[3];
  for (int i = 0; i < rank; i++) dims[i] = u8(f) % 5;
  tfd_tensor *t = NULL;
  tfd_tensor_new(NULL, dt, dims, rank, &t, st);
  tfd_status_reset(st);
  if (!t) return NULL;
  /* Handles stay zeroed (names must be strings), and so do variants: their elements are references
   * only kernels make, which no caller may write (tensor.h). */
  if (dt == TFD_RESOURCE || dt == TFD_VARIANT) return t;
  if (dt == TFD_STRING) { /* short strings of any bytes, set as a caller would */
    for (int64_t i = 0; i < tfd_tensor_numel(t); i++) {
      char bytes[8];
      size_t len = u8(f) % sizeof bytes;
      for (size_t k = 0; k < len; k++) bytes[k] = (char)u8(f);
      tfd_tensor_set_string(t, i, bytes, len, NULL);
    }
    return t;
  }
  unsigned char *d = tfd_tensor_data(t);
  size_t n = tfd_tensor_byte_size(t);
  /* Mostly small values (shapes, indices, axes), sometimes any bytes. */
  bool rawbytes = u8(f) & 1;
  size_t es = tfd_dtype_size(dt);
  for (size_t i = 0; i < n; i++) {
    if (rawbytes) d[i] = u8(f);
    else d[i] = i % es == 0 ? (uint8_t)(u8(f) % 8) : 0;
  }
  if (dt == TFD_BOOL)
    for (size_t i = 0; i < n; i++) d[i] = d[i] & 1;
  if (dt == TFD_FLOAT32 && !rawbytes) {
    float *p = (float *)d;
    for (size_t i = 0; i < n / 4; i++) p[i] = (float)((const unsigned char *)d)[i * 4];
  } else if (dt == TFD_FLOAT64 && !rawbytes) {
    double *p = (double *)d;
    for (size_t i = 0; i < n / 8; i++) p[i] = (double)((const unsigned char *)d)[i * 8];
  }
  return t;
}

/* Tensors made for this input (attr values, feeds), released at its end. */
typedef struct tensors {
  tfd_tensor *t[256];
  int n;
} tensors;

static tfd_tensor *keep_tensor(tensors *ts, tfd_tensor *t) {
  if (!t) return NULL;
  if (ts->n == COUNT(ts->t)) {
    tfd_tensor_unref(t);
    return NULL;
  }
  return ts->t[ts->n++] = t;
}

static void decode_attr(fz *f, tensors *ts, tfd_node_def *node, const char *op, tfd_status *st) {
  uint8_t nb = u8(f);
  const char *name = nb < 0xF0 ? attr_names[nb % COUNT(attr_names)] : raw_string(f, 16);
  tfd_attr_value v;
  memset(&v, 0, sizeof v);
  uint8_t tb = u8(f);
  int declared = tfd_ops_attr_type(op, name);
  if (tb < 0xB0 && declared) v.type = (tfd_attr_type)declared;
  else if (tb < 0xF8) v.type = (tfd_attr_type)(tb % 11 + 1);
  else {
    static const int odd[] = {0, 12, -1, 1000};
    v.type = (tfd_attr_type)odd[tb & 3];
  }
  int64_t li[4];
  double lf[4];
  tfd_dtype lt[4];
  const char *ls[4];
  switch ((int)v.type) {
    case TFD_ATTR_INT: v.i = decode_int(f); break;
    case TFD_ATTR_FLOAT: v.f = decode_float(f); break;
    case TFD_ATTR_BOOL: v.b = u8(f) & 1; break;
    case TFD_ATTR_STRING: {
      uint8_t b = u8(f);
      v.s = b < 0xE0 ? strings[b % COUNT(strings)] : raw_string(f, 48);
      break;
    }
    case TFD_ATTR_TYPE: v.dtype = decode_dtype(f); break;
    case TFD_ATTR_SHAPE: {
      uint8_t b = u8(f);
      v.shape.ndims = b == 0xFF ? -1 : b % 12 - 1;
      for (int i = 0; i < v.shape.ndims && i < TFD_MAX_DIMS; i++) {
        uint8_t d = u8(f);
        v.shape.dims[i] = d < 0xF0 ? (int64_t)(d % 9) - 1 : decode_int(f);
      }
      break;
    }
    case TFD_ATTR_TENSOR:
      /* 1 in 16: no tensor at all, which must be refused. */
      v.tensor = (u8(f) & 15) == 15 ? NULL : keep_tensor(ts, decode_tensor(f, st));
      break;
    case TFD_ATTR_LIST_INT:
    case TFD_ATTR_LIST_FLOAT:
    case TFD_ATTR_LIST_TYPE:
    case TFD_ATTR_LIST_STRING:
      v.list_len = u8(f) % 5;
      for (size_t i = 0; i < v.list_len; i++) {
        li[i] = decode_int(f);
        lf[i] = decode_float(f);
        lt[i] = decode_dtype(f);
        ls[i] = strings[u8(f) % COUNT(strings)];
      }
      v.list_i = li, v.list_f = lf, v.list_type = lt, v.list_s = ls;
      break;
    default: break;
  }
  tfd_node_def_set_attr(node, name, &v, st);
  tfd_status_reset(st);
}

/* Appends up to max nodes to g; nodes are numbered from `base` (for names
 * and references), and refer to nodes 0 .. base+n-1. */
static void decode_graph(fz *f, tensors *ts, tfd_graph_def *g, int base, int max, tfd_status *st) {
  int n = u8(f) % (max + 1);
  int nops = tfd_ops_count();
  for (int i = 0; i < n && more(f); i++) {
    int k = base + i;
    uint8_t nb = u8(f);
    const char *name = nb < 0xC0   ? node_name(f, k)
                       : nb < 0xE0 ? node_name(f, nb % (base + n))
                       : nb < 0xF0 ? odd_node_names[nb % COUNT(odd_node_names)]
                                   : raw_string(f, 32);
    uint8_t ob = u8(f);
    const char *op = ob < 0xE8   ? tfd_ops_name(ob % nops)
                     : ob < 0xF8 ? bogus_ops[ob % COUNT(bogus_ops)]
                                 : raw_string(f, 24);
    tfd_node_def *node = tfd_graph_def_add_node(g, name, op, st);
    tfd_status_reset(st);
    if (!node) continue;

    int ninputs = u8(f) % 5;
    for (int j = 0; j < ninputs; j++) {
      uint8_t b = u8(f);
      int earlier = k > 0 ? (b & 0x1f) % k : 0;
      int any = (b & 0x1f) % (base + n);
      const char *in;
      switch (b >> 6) {
        case 0: in = join(f, "", node_name(f, earlier), b & 0x20 ? u8(f) % 4 : -1); break;
        case 1: in = join(f, "", node_name(f, any), b & 0x20 ? u8(f) % 4 : -1); break;
        case 2: in = join(f, "^", node_name(f, b & 0x20 ? any : earlier), -1); break;
        default: in = b & 0x20 ? raw_string(f, 16) : odd_inputs[b % COUNT(odd_inputs)]; break;
      }
      tfd_node_def_add_input(node, in, st);
      tfd_status_reset(st);
    }
    uint8_t db = u8(f);
    if (db >= 0x90) {
      tfd_node_def_set_device(node, db < 0xF8 ? devices[db % COUNT(devices)] : raw_string(f, 48), st);
      tfd_status_reset(st);
    }
    int nattrs = u8(f) % 6;
    for (int j = 0; j < nattrs; j++) decode_attr(f, ts, node, op, st);
  }
}

/* ---- checking what comes back ---- */
static void check_tensor(tfd_tensor *t) {
  CHECK(tfd_dtype_size(tfd_tensor_dtype(t)) > 0);
  CHECK(tfd_tensor_ndims(t) >= 0 && tfd_tensor_ndims(t) <= TFD_MAX_DIMS);
  int64_t n = 1;
  for (int i = 0; i < tfd_tensor_ndims(t); i++) {
    CHECK(tfd_tensor_dim(t, i) >= 0);
    n *= tfd_tensor_dim(t, i);
  }
  CHECK(n == tfd_tensor_numel(t));
  CHECK(tfd_tensor_byte_size(t) == (size_t)n * tfd_dtype_size(tfd_tensor_dtype(t)));
  /* Read every byte: a short buffer shows up under ASan. */
  const unsigned char *d = tfd_tensor_const_data(t);
  volatile unsigned sum = 0;
  for (size_t i = 0; i < tfd_tensor_byte_size(t); i++) sum += d[i];
  (void)sum;
}

static void release_outputs(tfd_tensor **outs, int n) {
  for (int i = 0; i < n; i++) {
    if (outs[i]) {
      check_tensor(outs[i]);
      tfd_tensor_unref(outs[i]);
    }
    outs[i] = NULL;
  }
}

static void walk_graph_def(const tfd_graph_def *g) {
  for (size_t i = 0; i < tfd_graph_def_num_nodes(g); i++) {
    const tfd_node_def *n = tfd_graph_def_node(g, i);
    CHECK(strlen(tfd_node_def_name(n)) + strlen(tfd_node_def_op(n)) + strlen(tfd_node_def_device(n)) < ((size_t)1 << 20));
    for (size_t j = 0; j < tfd_node_def_num_inputs(n); j++) CHECK(tfd_node_def_input(n, j) != NULL);
    for (size_t j = 0; j < tfd_node_def_num_attrs(n); j++) {
      CHECK(tfd_node_def_attr_name(n, j) != NULL);
      const tfd_attr_value *v = tfd_node_def_attr_at(n, j);
      if (v->type == TFD_ATTR_TENSOR && v->tensor) check_tensor(v->tensor);
    }
  }
}

static void walk_metadata(const tfd_run_metadata *m) {
  (void)tfd_run_metadata_step_id(m);
  for (int d = 0; d < tfd_run_metadata_num_devices(m); d++) {
    CHECK(tfd_run_metadata_device(m, d) != NULL);
    for (int i = 0; i < tfd_run_metadata_num_nodes(m, d); i++) {
      tfd_node_exec_stats s;
      tfd_run_metadata_node(m, d, i, &s);
      CHECK(s.node_name && s.op);
      (void)strlen(s.node_name);
      CHECK(s.total_bytes >= 0 && s.peak_bytes <= s.total_bytes && s.num_allocation_records >= 0);
      for (int r = 0; r < s.num_allocation_records; r++) CHECK(s.allocation_records[r].alloc_micros > 0);
    }
  }
  for (int i = 0; i < tfd_run_metadata_num_cost_nodes(m); i++) {
    tfd_cost_entry e;
    tfd_run_metadata_cost_node(m, i, &e);
    CHECK(e.node != NULL);
    CHECK(e.num_outputs >= 0 && e.num_outputs <= TFD_COST_MAX_OUTPUTS);
    for (int o = 0; o < e.num_outputs; o++) CHECK(e.outputs[o].shape.ndims <= TFD_MAX_DIMS);
  }
  for (int i = 0; i < tfd_run_metadata_num_partition_graphs(m); i++) walk_graph_def(tfd_run_metadata_partition_graph(m, i));
}

/* ---- actions ---- */
/* TFDEV_FUZZ_TRACE=1 prints what each call said, for checking seeds by hand. */
static int tracing = -1;

static void done(tfd_status *st, const char *fn, int line) {
  if (tracing < 0) tracing = getenv("TFDEV_FUZZ_TRACE") != NULL;
  if (tracing) fprintf(stderr, "%s:%d: %s %s\n", fn, line, tfd_code_name(tfd_status_code(st)), tfd_status_message(st));
  tfd_status_reset(st);
}
#define DONE(st) done(st, __func__, __LINE__)

typedef struct ctx {
  fz *f;
  tensors *ts;
  tfd_session *s;
  tfd_graph_def *g; /* everything created or extended so far */
  int total;        /* default-named nodes so far */
  tfd_status *st;
} ctx;

static void decode_run_options(fz *f, tfd_run_options *ro) {
  uint8_t b = u8(f);
  static const int64_t timeouts[] = {0, 20, TIMEOUT_MS, 0};
  memset(ro, 0, sizeof *ro);
  ro->timeout_ms = timeouts[b & 3];
  ro->trace = b & 4;
  ro->output_partition_graphs = b & 8;
  ro->cost_graph = b & 16;
  ro->trace_allocations = b & 32;
}

static void act_run(ctx *c) {
  fz *f = c->f;
  const char *feed_names[MAX_NAMES], *fetch_names[MAX_NAMES], *targets[MAX_NAMES];
  tfd_tensor *feed_values[MAX_NAMES], *outs[MAX_NAMES] = {0};
  int nfeeds = 0, nfetches = u8(f) % MAX_NAMES, ntargets = u8(f) % 3;
  for (int n = u8(f) % MAX_NAMES; nfeeds < n; nfeeds++) {
    feed_names[nfeeds] = tensor_name(f, c->total);
    feed_values[nfeeds] = keep_tensor(c->ts, decode_tensor(f, c->st));
    if (!feed_values[nfeeds]) break;
  }
  for (int i = 0; i < nfetches; i++) fetch_names[i] = tensor_name(f, c->total);
  for (int i = 0; i < ntargets; i++) targets[i] = node_name(f, u8(f) % (c->total ? c->total : 1));
  tfd_run_options ro;
  decode_run_options(f, &ro);
  tfd_run_metadata *meta = u8(f) & 1 ? tfd_run_metadata_new() : NULL;
  tfd_code code = tfd_session_run(c->s, &ro, feed_names, feed_values, nfeeds, fetch_names, nfetches, targets, ntargets,
                                  outs, meta, c->st);
  if (code == TFD_OK)
    for (int i = 0; i < nfetches; i++) CHECK(outs[i] != NULL);
  else
    CHECK(tfd_status_code(c->st) == code && tfd_status_message(c->st)[0]);
  DONE(c->st);
  release_outputs(outs, nfetches);
  if (meta) {
    if (code == TFD_OK) walk_metadata(meta);
    tfd_run_metadata_free(meta);
  }
}

static void act_extend(ctx *c) {
  tfd_graph_def *g = tfd_graph_def_new();
  if (!g) abort();
  decode_graph(c->f, c->ts, g, c->total, MAX_EXTEND_NODES, c->st);
  if (tfd_session_extend(c->s, g, c->st) == TFD_OK) {
    for (size_t i = 0; i < tfd_graph_def_num_nodes(g); i++) {
      tfd_node_def *n = tfd_graph_def_node(g, i);
      tfd_node_def *copy = tfd_graph_def_add_node(c->g, tfd_node_def_name(n), tfd_node_def_op(n), NULL);
      (void)copy; /* only names and ops are needed later, for eager ops */
    }
    c->total += (int)tfd_graph_def_num_nodes(g);
  }
  DONE(c->st);
  tfd_graph_def_free(g);
}

static void act_callable(ctx *c) {
  fz *f = c->f;
  const char *feeds[MAX_NAMES], *fetches[MAX_NAMES], *targets[MAX_NAMES];
  int nfeeds = u8(f) % 3, nfetches = u8(f) % 3, ntargets = u8(f) % 2;
  for (int i = 0; i < nfeeds; i++) feeds[i] = tensor_name(f, c->total);
  for (int i = 0; i < nfetches; i++) fetches[i] = tensor_name(f, c->total);
  for (int i = 0; i < ntargets; i++) targets[i] = node_name(f, u8(f) % (c->total ? c->total : 1));
  int64_t h = tfd_session_make_callable(c->s, feeds, nfeeds, fetches, nfetches, targets, ntargets, c->st);
  DONE(c->st);
  int calls = u8(f) % 3;
  for (int k = 0; k < calls; k++) {
    tfd_tensor *values[MAX_NAMES], *outs[MAX_NAMES] = {0};
    int have = 0;
    for (; have < nfeeds; have++)
      if (!(values[have] = keep_tensor(c->ts, decode_tensor(f, c->st)))) break;
    if (have < nfeeds) break;
    tfd_run_options ro;
    decode_run_options(f, &ro);
    /* A handle that was never given out must be refused too. */
    int64_t which = u8(f) % 8 == 7 ? h + 1000 : h;
    tfd_session_run_callable(c->s, which, &ro, values, outs, NULL, c->st);
    DONE(c->st);
    release_outputs(outs, nfetches);
  }
  if (u8(f) % 4) {
    tfd_session_release_callable(c->s, h, c->st);
    DONE(c->st);
    CHECK(tfd_session_release_callable(c->s, h, c->st) != TFD_OK); /* twice: already gone */
    DONE(c->st);
  }
}

static void act_prun(ctx *c) {
  fz *f = c->f;
  const char *inputs[MAX_NAMES], *outputs[MAX_NAMES], *targets[MAX_NAMES];
  int nin = u8(f) % MAX_NAMES, nout = u8(f) % MAX_NAMES, ntargets = u8(f) % 2;
  for (int i = 0; i < nin; i++) inputs[i] = tensor_name(f, c->total);
  for (int i = 0; i < nout; i++) outputs[i] = tensor_name(f, c->total);
  for (int i = 0; i < ntargets; i++) targets[i] = node_name(f, u8(f) % (c->total ? c->total : 1));
  int64_t h = tfd_session_prun_setup(c->s, inputs, nin, outputs, nout, targets, ntargets, c->st);
  DONE(c->st);
  int steps = u8(f) % 4;
  for (int k = 0; k < steps; k++) {
    /* Feed and fetch subsets chosen by bit masks; a name not in the setup now and then. */
    uint8_t fm = u8(f), om = u8(f);
    const char *fn[MAX_NAMES], *on[MAX_NAMES];
    tfd_tensor *fv[MAX_NAMES], *outs[MAX_NAMES] = {0};
    int nf = 0, no = 0;
    for (int i = 0; i < nin; i++)
      if (fm >> i & 1) {
        fn[nf] = inputs[i];
        if (!(fv[nf] = keep_tensor(c->ts, decode_tensor(f, c->st)))) break;
        nf++;
      }
    for (int i = 0; i < nout; i++)
      if (om >> i & 1) on[no++] = outputs[i];
    if (fm & 0x80 && no < MAX_NAMES) on[no++] = tensor_name(f, c->total);
    int64_t which = om & 0x80 ? h + 7 : h;
    tfd_session_prun(c->s, which, fn, fv, nf, on, no, outs, c->st);
    DONE(c->st);
    release_outputs(outs, no);
  }
  if (u8(f) & 1) {
    tfd_session_prun_close(c->s, h, c->st);
    DONE(c->st);
  }
}

static void act_reset(ctx *c) {
  fz *f = c->f;
  static const char *const names[] = {"", "c", "localhost", "q", "v"};
  const char *containers[3];
  int n = u8(f) % 3;
  for (int i = 0; i < n; i++) {
    uint8_t b = u8(f);
    containers[i] = b < 0xF0 ? names[b % COUNT(names)] : raw_string(f, 16);
  }
  tfd_session_reset(c->s, containers, n, c->st);
  DONE(c->st);
}

static void act_eager(ctx *c) {
  fz *f = c->f;
  tfd_device_mgr *m = tfd_session_device_mgr(c->s);
  if (!m || tfd_device_mgr_size(m) == 0) return;
  tfd_device *d = tfd_device_mgr_get(m, u8(f) % tfd_device_mgr_size(m));
  /* The node: one of the graph's, or a fresh one. */
  tfd_graph_def *scratch = NULL;
  const tfd_node_def *node;
  uint8_t b = u8(f);
  if (b < 0x80 && tfd_graph_def_num_nodes(c->g) > 0) {
    node = tfd_graph_def_node(c->g, b % tfd_graph_def_num_nodes(c->g));
  } else {
    scratch = tfd_graph_def_new();
    if (!scratch) abort();
    decode_graph(c->f, c->ts, scratch, 0, 1, c->st);
    if (tfd_graph_def_num_nodes(scratch) == 0) {
      tfd_graph_def_free(scratch);
      return;
    }
    node = tfd_graph_def_node(scratch, 0);
  }
  tfd_tensor *inputs[4], *outs[4] = {0};
  int n = u8(f) % 4, have = 0;
  for (; have < n; have++)
    if (!(inputs[have] = keep_tensor(c->ts, decode_tensor(f, c->st)))) break;
  int nout = -1;
  /* Eager ops get the same deadline as runs: a dequeue from an empty queue blocks. */
  tfd_run_options ro;
  decode_run_options(f, &ro);
  if (ro.timeout_ms <= 0) ro.timeout_ms = TIMEOUT_MS;
  if (tfd_device_run_op(d, node, inputs, have, &ro, outs, &nout, c->st) == TFD_OK) {
    CHECK(nout >= 0 && nout <= 4);
    release_outputs(outs, nout);
  } else {
    release_outputs(outs, 4);
  }
  DONE(c->st);
  tfd_graph_def_free(scratch);
}

static void act_query(ctx *c) {
  fz *f = c->f;
  char out[TFD_DEVICE_NAME_MAX];
  tfd_dtype dt;
  tfd_session_node_device(c->s, node_name(f, u8(f) % (c->total ? c->total : 1)), out, c->st);
  DONE(c->st);
  tfd_session_tensor_dtype(c->s, tensor_name(f, c->total), &dt, c->st);
  DONE(c->st);
  CHECK(tfd_session_num_executors_built(c->s) >= 0);
  tfd_cost_entry entries[16];
  int n = tfd_session_export_cost_models(c->s, entries, 16);
  for (int i = 0; i < n && i < 16; i++) CHECK(entries[i].device && entries[i].node && entries[i].op);
}

/* Sessions get CPU devices limited to 16 MiB each, from a factory that
 * outranks the built-in one in a registry of the harness's own: a graph may
 * still ask for a 256 MiB tensor (and is refused), but no input spends its
 * time filling and checking hundreds of megabytes. The built-in factory's
 * own checks (device counts, pools) have their tests in runtime/session/. */
#define DEVICE_MEMORY_LIMIT ((int64_t)16 << 20)

static tfd_code small_cpu_create(void *self, void *host_ctx, const tfd_session_options *options, const char *prefix,
                                 tfd_device_list *out, tfd_status *st) {
  (void)self, (void)host_ctx;
  int n = tfd_session_options_device_count(options, "CPU", 1);
  for (int i = 0; i < n; i++) {
    char name[TFD_DEVICE_NAME_MAX + 32];
    snprintf(name, sizeof name, "%s/device:CPU:%d", prefix, i);
    tfd_cpu_device_config cfg = {.name = name,
                                 .memory_limit = DEVICE_MEMORY_LIMIT,
                                 .num_threads = tfd_session_options_intra_op_threads(options),
                                 .own_threadpool = !tfd_session_options_use_global_threadpool(options)};
    tfd_device *d = NULL;
    tfd_cpu_device_new(&cfg, &d, st);
    if (!d) return tfd_status_code(st);
    tfd_code code = tfd_device_list_push(out, d, st);
    tfd_device_unref(d);
    if (code != TFD_OK) return code;
  }
  return TFD_OK;
}

static const tfd_device_factory_ops small_cpu_ops = {"SmallCPUFactory", small_cpu_create, NULL, NULL};

static const tfd_factory_registry *harness_registry(void) {
  static tfd_factory_registry *r;
  if (!r) {
    r = tfd_factory_registry_copy(tfd_factory_registry_default());
    tfd_device_factory *f = NULL;
    tfd_device_factory_new(&small_cpu_ops, NULL, &f, NULL);
    if (!r || !f || tfd_factory_registry_register(r, "CPU", f, 100, NULL) != TFD_OK) abort();
    tfd_device_factory_unref(f);
  }
  return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz *f = calloc(1, sizeof *f);
  tensors *ts = calloc(1, sizeof *ts);
  tfd_status *st = tfd_status_new();
  tfd_session_options *o = tfd_session_options_new();
  tfd_graph_def *g = tfd_graph_def_new();
  if (!f || !ts || !st || !o || !g) abort();
  f->p = data, f->end = data + size;

  uint8_t ob = u8(f);
  tfd_session_options_set_device_count(o, "CPU", 1 + (ob & 1), st);
  tfd_session_options_set_allow_soft_placement(o, ob & 2);
  tfd_session_options_set_use_per_session_threads(o, ob & 4);
  tfd_session_options_set_build_cost_model(o, ob & 8);
  tfd_session_options_set_intra_op_threads(o, 1 + (ob >> 4 & 1));
  tfd_session_options_set_inter_op_threads(o, 1 + (ob >> 5 & 1));
  /* Devices with pools of their own: rarely, they cost threads on every input. */
  tfd_session_options_set_use_global_threadpool(o, (ob & 0xC0) != 0xC0);
  tfd_session_options_set_operation_timeout_ms(o, TIMEOUT_MS);

  decode_graph(f, ts, g, 0, MAX_NODES, st);
  if (getenv("TFDEV_FUZZ_TRACE")) { /* the graph, so a finding can be read as one */
    for (size_t i = 0; i < tfd_graph_def_num_nodes(g); i++) {
      const tfd_node_def *n = tfd_graph_def_node(g, i);
      fprintf(stderr, "node %zu '%s' %s [", i, tfd_node_def_name(n), tfd_node_def_op(n));
      for (size_t j = 0; j < tfd_node_def_num_inputs(n); j++) fprintf(stderr, " '%s'", tfd_node_def_input(n, j));
      fprintf(stderr, " ] dev '%s' attrs", tfd_node_def_device(n));
      for (size_t j = 0; j < tfd_node_def_num_attrs(n); j++) fprintf(stderr, " %s", tfd_node_def_attr_name(n, j));
      fprintf(stderr, "\n");
    }
  }
  ctx c = {f, ts, NULL, g, (int)tfd_graph_def_num_nodes(g), st};
  tfd_session_new(o, harness_registry(), NULL, &c.s, st);
  CHECK(c.s != NULL);
  tfd_session_create(c.s, g, st);
  DONE(st);

  for (int k = 0; k < MAX_ACTIONS && more(f); k++) {
    switch (u8(f) % 10) {
      case 0:
      case 1:
      case 2: act_run(&c); break;
      case 3: act_extend(&c); break;
      case 4: act_callable(&c); break;
      case 5: act_prun(&c); break;
      case 6: act_reset(&c); break;
      case 7: act_eager(&c); break;
      case 8: act_query(&c); break;
      default:
        tfd_session_close(c.s, st);
        tfd_status_reset(st);
        break;
    }
  }
  tfd_session_close(c.s, st);
  tfd_session_free(c.s);

  for (int i = 0; i < ts->n; i++) tfd_tensor_unref(ts->t[i]);
  for (int i = 0; i < f->nstrs; i++) free(f->strs[i]);
  tfd_graph_def_free(g);
  tfd_session_options_free(o);
  tfd_status_free(st);
  free(ts);
  free(f);
  return 0;
}
