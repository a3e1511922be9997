/* tfd_model (<tfdev/model.h>): a loaded graph, a session that runs it, and the inputs and outputs it
 * is called with. The feeds and fetches are resolved once, into a callable, so a run is one
 * tfd_session_run_callable. lua/tfdev/model.lua applies the same rules to a GraphDef table. */
#include <stdlib.h>
#include <string.h>

#include "../core/api_args.h"
#include "../core/status_internal.h"
#include "../core/strmap.h"
#include "tfdev/model.h"
#include "tfdev/tfdev.h"

typedef struct model_io {
  char *name;   /* what callers call it */
  char *tensor; /* the graph tensor, "node:0" */
  tfd_dtype dtype;
  tfd_shape shape;
} model_io;

struct tfd_model {
  tfd_session *session;
  int n_in, n_out;
  model_io *in, *out;
  int64_t callable;
};

static void free_io(model_io *io, int n) {
  for (int i = 0; i < n && io; i++) free(io[i].name), free(io[i].tensor);
  free(io);
}

/* "input_1:0" -> "input_1": a signature's key as the Placeholder of the same graph is named. */
static char *input_name(const char *key) {
  size_t n = strlen(key);
  return n > 2 && strcmp(key + n - 2, ":0") == 0 ? tfd_format("%.*s", (int)(n - 2), key) : tfd_format("%s", key);
}

static bool add_io(model_io *io, int *n, char *name, char *tensor, tfd_dtype dt, const tfd_shape *shape) {
  if (!name || !tensor) {
    free(name), free(tensor);
    return false;
  }
  io[*n] = (model_io){name, tensor, dt, {.ndims = -1}};
  if (shape) io[*n].shape = *shape;
  (*n)++;
  return true;
}

static tfd_code from_signature(tfd_model *m, const tfd_graph_def *g, tfd_status *st) {
  size_t ni = tfd_graph_def_signature_size(g, false), no = tfd_graph_def_signature_size(g, true);
  m->in = calloc(ni ? ni : 1, sizeof *m->in);
  m->out = calloc(no, sizeof *m->out);
  bool ok = m->in && m->out;
  for (size_t i = 0; ok && i < ni; i++) {
    const tfd_signature_entry *e = tfd_graph_def_signature_entry(g, false, i);
    ok = add_io(m->in, &m->n_in, input_name(e->key), tfd_format("%s", e->tensor), e->dtype, &e->shape);
  }
  for (size_t i = 0; ok && i < no; i++) {
    const tfd_signature_entry *e = tfd_graph_def_signature_entry(g, true, i);
    ok = add_io(m->out, &m->n_out, tfd_format("%s", e->key), tfd_format("%s", e->tensor), e->dtype, &e->shape);
  }
  return ok ? TFD_OK : tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory describing a model");
}

/* The nodes some node reads (by data or control input): their names as keys. */
static bool consumed_nodes(const tfd_graph_def *g, tfd_strmap *read) {
  for (size_t i = 0, n = tfd_graph_def_num_nodes(g); i < n; i++) {
    const tfd_node_def *nd = tfd_graph_def_node(g, i);
    for (size_t k = 0; k < tfd_node_def_num_inputs(nd); k++) {
      const char *in = tfd_node_def_input(nd, k);
      in += *in == '^';
      char *node = tfd_format("%.*s", (int)strcspn(in, ":"), in);
      bool ok = node && tfd_strmap_put(read, node, (void *)1);
      free(node);
      if (!ok) return false;
    }
  }
  return true;
}

static bool is_sink(const tfd_strmap *read, const tfd_node_def *n) {
  const char *op = tfd_node_def_op(n);
  return strcmp(op, "Const") != 0 && strcmp(op, "NoOp") != 0 && strcmp(op, "Placeholder") != 0 &&
         !tfd_strmap_get(read, tfd_node_def_name(n));
}

static tfd_dtype attr_dtype(const tfd_node_def *n, const char *name) {
  const tfd_attr_value *v = tfd_node_def_attr(n, name);
  return v && v->type == TFD_ATTR_TYPE ? v->dtype : 0;
}

/* Placeholders in, sinks out (their dtypes are asked of the session once it has the graph). */
static tfd_code from_graph(tfd_model *m, const tfd_graph_def *g, tfd_status *st) {
  size_t n = tfd_graph_def_num_nodes(g);
  m->in = calloc(n ? n : 1, sizeof *m->in);
  m->out = calloc(n ? n : 1, sizeof *m->out);
  tfd_strmap read = TFD_STRMAP_INIT;
  bool ok = m->in && m->out && consumed_nodes(g, &read);
  for (size_t i = 0; ok && i < n; i++) {
    const tfd_node_def *nd = tfd_graph_def_node(g, i);
    const char *name = tfd_node_def_name(nd);
    if (strcmp(tfd_node_def_op(nd), "Placeholder") == 0) {
      const tfd_attr_value *shape = tfd_node_def_attr(nd, "shape");
      ok = add_io(m->in, &m->n_in, tfd_format("%s", name), tfd_format("%s:0", name), attr_dtype(nd, "dtype"),
                  shape && shape->type == TFD_ATTR_SHAPE ? &shape->shape : NULL);
    } else if (is_sink(&read, nd)) {
      ok = add_io(m->out, &m->n_out, tfd_format("%s:0", name), tfd_format("%s:0", name), 0, NULL);
    }
  }
  tfd_strmap_free(&read);
  return ok ? TFD_OK : tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory describing a model");
}

static tfd_model *make_model(const tfd_graph_def *g, const tfd_session_options *options, tfd_status *st) {
  tfd_status_reset(st);
  if (!g) {
    tfd_status_setf(st, TFD_INVALID_ARGUMENT, "tfd_model_new: no graph def");
    return NULL;
  }
  tfd_model *m = calloc(1, sizeof *m);
  if (!m) {
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory making a model");
    return NULL;
  }
  m->callable = -1;
  bool has_signature = tfd_graph_def_signature_size(g, true) > 0;
  tfd_code code = has_signature ? from_signature(m, g, st) : from_graph(m, g, st);
  if (code == TFD_OK && tfd_session_new(options, NULL, NULL, &m->session, st) != TFD_OK) code = tfd_status_code(st);
  if (code == TFD_OK) code = tfd_session_create(m->session, g, st);
  for (int o = 0; o < 2 && code == TFD_OK; o++) /* what neither signature nor attrs said */
    for (int i = 0; i < (o ? m->n_out : m->n_in) && code == TFD_OK; i++) {
      model_io *io = o ? &m->out[i] : &m->in[i];
      if (!io->dtype) code = tfd_session_tensor_dtype(m->session, io->tensor, &io->dtype, st);
    }
  if (code == TFD_OK) {
    const char **feeds = calloc((size_t)m->n_in + 1, sizeof *feeds);
    const char **fetches = calloc((size_t)m->n_out + 1, sizeof *fetches);
    if (!feeds || !fetches) code = tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory making a model");
    for (int i = 0; code == TFD_OK && i < m->n_in; i++) feeds[i] = m->in[i].tensor;
    for (int i = 0; code == TFD_OK && i < m->n_out; i++) fetches[i] = m->out[i].tensor;
    if (code == TFD_OK) {
      m->callable = tfd_session_make_callable(m->session, feeds, m->n_in, fetches, m->n_out, NULL, 0, st);
      if (m->callable < 0) code = tfd_status_code(st);
    }
    free(feeds);
    free(fetches);
  }
  if (code != TFD_OK) {
    tfd_model_free(m);
    return NULL;
  }
  return m;
}

tfd_code tfd_model_new(const tfd_graph_def *graph, const tfd_session_options *options, tfd_model **out, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_model_new", "out", out)) return TFD_INVALID_ARGUMENT;
  tfd_status local = TFD_STATUS_INIT;
  *out = make_model(graph, options, &local);
  return tfd_status_move(status, &local);
}

static tfd_model *load_model(const char *path, const tfd_session_options *options, tfd_status *st) {
  tfd_status_reset(st);
  tfd_graph_def *g = NULL;
  tfd_graph_def_load(path, &g, st);
  if (!g) return NULL;
  tfd_model *m = NULL;
  tfd_model_new(g, options, &m, st);
  if (!m && path) tfd_status_prefixf(st, "%s: ", path);
  tfd_graph_def_free(g);
  return m;
}

tfd_code tfd_model_load(const char *path, const tfd_session_options *options, tfd_model **out, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_model_load", "out", out)) return TFD_INVALID_ARGUMENT;
  tfd_status local = TFD_STATUS_INIT;
  *out = load_model(path, options, &local);
  return tfd_status_move(status, &local);
}

void tfd_model_free(tfd_model *m) {
  if (!m) return;
  tfd_session_free(m->session); /* releases the callable with everything else */
  free_io(m->in, m->n_in);
  free_io(m->out, m->n_out);
  free(m);
}

int tfd_model_num_inputs(const tfd_model *m) { return m ? m->n_in : 0; }
int tfd_model_num_outputs(const tfd_model *m) { return m ? m->n_out : 0; }

static const model_io *io_at(const tfd_model *m, bool out, int i) {
  if (!m || i < 0 || i >= (out ? m->n_out : m->n_in)) return NULL;
  return out ? &m->out[i] : &m->in[i];
}

const char *tfd_model_input_name(const tfd_model *m, int i) { return io_at(m, false, i) ? m->in[i].name : NULL; }
const char *tfd_model_output_name(const tfd_model *m, int i) { return io_at(m, true, i) ? m->out[i].name : NULL; }
const char *tfd_model_input_tensor(const tfd_model *m, int i) { return io_at(m, false, i) ? m->in[i].tensor : NULL; }
const char *tfd_model_output_tensor(const tfd_model *m, int i) { return io_at(m, true, i) ? m->out[i].tensor : NULL; }
tfd_dtype tfd_model_input_dtype(const tfd_model *m, int i) { return io_at(m, false, i) ? m->in[i].dtype : 0; }
tfd_dtype tfd_model_output_dtype(const tfd_model *m, int i) { return io_at(m, true, i) ? m->out[i].dtype : 0; }

static int shape_of(const model_io *io, int64_t *dims, int cap) {
  if (!io || io->shape.ndims < 0) return -1;
  for (int d = 0; d < io->shape.ndims && d < cap && dims; d++) dims[d] = io->shape.dims[d];
  return io->shape.ndims;
}
int tfd_model_input_shape(const tfd_model *m, int i, int64_t *dims, int cap) {
  return shape_of(io_at(m, false, i), dims, cap);
}
int tfd_model_output_shape(const tfd_model *m, int i, int64_t *dims, int cap) {
  return shape_of(io_at(m, true, i), dims, cap);
}

tfd_code tfd_model_run(tfd_model *m, tfd_tensor *const *inputs, int n_inputs, tfd_tensor **outputs, int n_outputs,
                       tfd_status *st) {
  tfd_status_reset(st);
  if (!m) return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "tfd_model_run: no model");
  if (n_inputs != m->n_in || n_outputs != m->n_out)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "tfd_model_run: the model takes %d inputs and gives %d outputs, got %d and %d", m->n_in, m->n_out,
                           n_inputs, n_outputs);
  if ((m->n_in && !inputs) || (m->n_out && !outputs))
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "tfd_model_run: %s is NULL", !outputs ? "outputs" : "inputs");
  for (int i = 0; i < m->n_in; i++)
    if (!inputs[i])
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "tfd_model_run: input %d ('%s') is NULL", i, m->in[i].name);
  return tfd_session_run_callable(m->session, m->callable, NULL, inputs, outputs, NULL, st);
}

tfd_session *tfd_model_session(tfd_model *m) { return m ? m->session : NULL; }

const char *tfd_version(void) { return TFDEV_VERSION; }
