/* Graph construction: resolve, validate, sort and infer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/status_internal.h"
#include "function_library.h"
#include "graph.h"
#include "../framework/graph_def_internal.h"

bool tfd_valid_node_name(const char *s) {
  if (!s || !*s) return false;
  for (const char *p = s; *p; p++) {
    char c = *p;
    bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    /* A leading '_' is for the nodes the runtime adds; sessions refuse it in user graphs. */
    if (!(alnum || c == '.' || c == '_' || (p != s && (c == '/' || c == '-')))) return false;
  }
  return true;
}

const char *tfd_gnode_name(const tfd_gnode *n) { return tfd_node_def_name(n->def); }

int tfd_graph_find(const tfd_graph *g, const char *name) {
  void *v = tfd_strmap_get(&g->by_name, name);
  return v ? (int)(intptr_t)v - 1 : -1;
}

void tfd_graph_free(tfd_graph *g) {
  if (!g) return;
  for (int i = 0; g->nodes && i < g->n; i++) { /* no nodes: their array could not be made */
    free(g->nodes[i].inputs);
    free(g->nodes[i].control);
    free(g->nodes[i].in_types);
    free(g->nodes[i].out_edges);
    free(g->nodes[i].out_shapes); /* the block out_types shares */
  }
  free(g->nodes);
  free(g->topo);
  tfd_strmap_free(&g->by_name);
  tfd_graph_def_free(g->def);
  free(g);
}

static tfd_code oom(tfd_status *st) { return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory building graph"); }

/* Resolves names, ops and inputs of every node. */
static tfd_code resolve(tfd_graph *g, tfd_status *st) {
  for (int i = 0; i < g->n; i++) {
    tfd_gnode *n = &g->nodes[i];
    const char *name = tfd_node_def_name(n->def);
    if (!tfd_valid_node_name(name))
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node name '%s' is invalid: names match [A-Za-z0-9.][A-Za-z0-9_./-]*",
                             name);
    if (tfd_graph_find(g, name) >= 0)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "duplicate node name '%s'", name);
    if (!tfd_strmap_put(&g->by_name, name, (void *)(intptr_t)(i + 1))) return oom(st);
  }
  for (int i = 0; i < g->n; i++) {
    tfd_gnode *n = &g->nodes[i];
    const char *name = tfd_node_def_name(n->def);
    n->id = i;
    n->op = tfd_op_lookup(tfd_node_def_op(n->def));
    if (!n->op && tfd_function_op(tfd_node_def_op(n->def)))
      return tfd_status_setf(st, TFD_NOT_FOUND,
                             "node '%s': op type not registered '%s' (tfdev runs it from a graph's function library, "
                             "which the GraphDef and TensorFlow.js loaders inline; this graph has none)",
                             name, tfd_node_def_op(n->def));
    if (!n->op)
      return tfd_status_setf(st, TFD_NOT_FOUND, "node '%s': op type not registered '%s'", name, tfd_node_def_op(n->def));
    /* A malformed device field is the placer's error to report (TensorFlow's "Malformed device
     * specification"), and only if the node is placed: a run that prunes it away never sees it. */
    const char *dev = tfd_node_def_device(n->def);
    if (*dev && tfd_device_name_parse(dev, &n->requested, NULL) == TFD_OK) n->has_requested = true;
    size_t nin = tfd_node_def_num_inputs(n->def);
    n->inputs = calloc(nin ? nin : 1, sizeof *n->inputs);
    n->control = calloc(nin ? nin : 1, sizeof *n->control);
    if (!n->inputs || !n->control) return oom(st);
    for (size_t k = 0; k < nin; k++) {
      const char *in = tfd_node_def_input(n->def, k);
      int index;
      char *src = tfd_input_node(in, &index, st);
      if (!src) return tfd_status_prefixf(st, "node '%s': ", name);
      int s = tfd_graph_find(g, src);
      if (s < 0) {
        tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s': input '%s' refers to unknown node '%s'", name, in, src);
        free(src);
        return TFD_INVALID_ARGUMENT;
      }
      free(src);
      if (index < 0) {
        n->control[n->num_control++] = s;
      } else {
        if (n->num_control > 0)
          return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s': data input '%s' comes after a control input",
                                 name, in);
        n->inputs[n->num_inputs++] = (tfd_gedge){s, index};
      }
    }
    if (tfd_op_check_arity(n->op, n->def, n->num_inputs, &n->num_outputs, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
    /* Outputs sized to the node (Split and Unpack may have up to TFD_MAX_OP_OUTPUTS): shapes first,
     * then the dtypes, in one block. */
    size_t k = n->num_outputs > 0 ? (size_t)n->num_outputs : 1;
    n->out_shapes = calloc(1, k * (sizeof(tfd_shape) + sizeof(tfd_dtype)));
    if (!n->out_shapes) return oom(st);
    n->out_types = (tfd_dtype *)(void *)(n->out_shapes + k);
  }
  return TFD_OK;
}

bool tfd_graph_is_back_edge(const tfd_graph *g, int src, int dst) {
  return strcmp(g->nodes[src].op->name, "NextIteration") == 0 && strcmp(g->nodes[dst].op->name, "Merge") == 0;
}

/* A NextIteration closes a while loop: its output goes back to the loop's Merge and nowhere else. */
static tfd_code check_next_iterations(const tfd_graph *g, tfd_status *st) {
  for (int i = 0; i < g->n; i++) {
    const tfd_gnode *n = &g->nodes[i];
    for (int k = 0; k < n->num_inputs + n->num_control; k++) {
      int src = k < n->num_inputs ? n->inputs[k].node : n->control[k - n->num_inputs];
      if (strcmp(g->nodes[src].op->name, "NextIteration") != 0 || strcmp(n->op->name, "Merge") == 0) continue;
      if (strcmp(n->op->name, "_Fetch") == 0)
        return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                               "fetching the output of node '%s' (NextIteration) is not supported: it is inside a "
                               "while loop (fetch the loop's Exit instead)",
                               tfd_gnode_name(&g->nodes[src]));
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                             "node '%s' (NextIteration) feeds node '%s' (%s), which is not a Merge: a NextIteration's "
                             "output must go back to the Merge of its while loop",
                             tfd_gnode_name(&g->nodes[src]), tfd_gnode_name(n), n->op->name);
    }
  }
  return TFD_OK;
}

/* Kahn's algorithm; a leftover node means a cycle, which we name. Edges from a NextIteration back to
 * its loop's Merge do not count: they close a while loop, the only cycle a graph may have. */
static tfd_code sort(tfd_graph *g, tfd_status *st) {
  int *pending = calloc((size_t)g->n + 1, sizeof *pending);
  int *count = calloc((size_t)g->n + 1, sizeof *count);
  g->topo = malloc(((size_t)g->n + 1) * sizeof *g->topo);
  if (!pending || !count || !g->topo) {
    free(pending);
    free(count);
    return oom(st);
  }
  for (int i = 0; i < g->n; i++) {
    tfd_gnode *n = &g->nodes[i];
    pending[i] = n->num_inputs + n->num_control;
    for (int k = 0; k < n->num_inputs; k++) {
      count[n->inputs[k].node]++;
      pending[i] -= tfd_graph_is_back_edge(g, n->inputs[k].node, i);
    }
    for (int k = 0; k < n->num_control; k++) {
      count[n->control[k]]++;
      pending[i] -= tfd_graph_is_back_edge(g, n->control[k], i);
    }
  }
  for (int i = 0; i < g->n; i++) {
    g->nodes[i].out_edges = calloc(count[i] ? (size_t)count[i] : 1, sizeof(tfd_out_edge));
    if (!g->nodes[i].out_edges) {
      free(pending);
      free(count);
      return oom(st);
    }
  }
  for (int i = 0; i < g->n; i++) {
    tfd_gnode *n = &g->nodes[i];
    for (int k = 0; k < n->num_inputs; k++) {
      tfd_gnode *s = &g->nodes[n->inputs[k].node];
      s->out_edges[s->num_out_edges++] = (tfd_out_edge){i, k, n->inputs[k].index};
    }
    for (int k = 0; k < n->num_control; k++) {
      tfd_gnode *s = &g->nodes[n->control[k]];
      s->out_edges[s->num_out_edges++] = (tfd_out_edge){i, -1, -1};
    }
  }
  int head = 0, tail = 0;
  for (int i = 0; i < g->n; i++)
    if (pending[i] == 0) g->topo[tail++] = i;
  while (head < tail) {
    int src = g->topo[head++];
    tfd_gnode *n = &g->nodes[src];
    for (int e = 0; e < n->num_out_edges; e++)
      if (!tfd_graph_is_back_edge(g, src, n->out_edges[e].dst) && --pending[n->out_edges[e].dst] == 0)
        g->topo[tail++] = n->out_edges[e].dst;
  }
  tfd_code code = TFD_OK;
  if (tail < g->n) {
    char names[256] = "";
    int shown = 0;
    for (int i = 0; i < g->n && shown < 5; i++) {
      if (pending[i] == 0) continue;
      size_t used = strlen(names);
      snprintf(names + used, sizeof names - used, "%s'%s'", shown ? ", " : "", tfd_gnode_name(&g->nodes[i]));
      shown++;
    }
    code = tfd_status_setf(st, TFD_INVALID_ARGUMENT, "graph has a cycle through %d node%s: %s%s", g->n - tail,
                           g->n - tail == 1 ? "" : "s", names, g->n - tail > 5 ? ", ..." : "");
  }
  free(pending);
  free(count);
  return code;
}

static tfd_code infer(tfd_graph *g, tfd_status *st) {
  for (int t = 0; t < g->n; t++) {
    tfd_gnode *n = &g->nodes[g->topo[t]];
    const char *name = tfd_gnode_name(n);
    int nin = n->num_inputs;
    n->in_types = calloc(nin ? (size_t)nin : 1, sizeof *n->in_types);
    tfd_shape *in_shapes = calloc(nin ? (size_t)nin : 1, sizeof *in_shapes);
    const tfd_tensor **in_values = calloc(nin ? (size_t)nin : 1, sizeof *in_values);
    if (!n->in_types || !in_shapes || !in_values) {
      free(in_shapes);
      free(in_values);
      return oom(st);
    }
    tfd_code code = TFD_OK;
    tfd_dtype forward = 0; /* a loop Merge's type, from an input that is not its NextIteration */
    for (int k = 0; k < nin && code == TFD_OK; k++) {
      tfd_gnode *s = &g->nodes[n->inputs[k].node];
      int idx = n->inputs[k].index;
      if (idx >= s->num_outputs) {
        code = tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s': input %d is '%s:%d' but '%s' has %d output%s", name,
                               k, tfd_gnode_name(s), idx, tfd_gnode_name(s), s->num_outputs,
                               s->num_outputs == 1 ? "" : "s");
        break;
      }
      if (tfd_graph_is_back_edge(g, s->id, n->id)) { /* not inferred yet: checked below, once it is */
        n->in_types[k] = 0;
        in_shapes[k].ndims = -1;
        continue;
      }
      n->in_types[k] = s->out_types[idx];
      if (!forward) forward = n->in_types[k];
      in_shapes[k] = s->out_shapes[idx];
      if (strcmp(s->op->name, "Const") == 0) in_values[k] = tfd_node_def_attr(s->def, "value")->tensor;
    }
    if (strcmp(n->op->name, "Merge") == 0) {
      const tfd_attr_value *declared = tfd_node_def_attr(n->def, "T");
      if (declared && declared->type == TFD_ATTR_TYPE && declared->dtype) forward = declared->dtype;
      for (int k = 0; k < nin; k++)
        if (!n->in_types[k]) n->in_types[k] = forward;
      if (!forward && code == TFD_OK)
        code = tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                               "node '%s' (Merge): every input comes from a NextIteration, so its dtype is unknown "
                               "(give it attr T, or an input from the loop's Enter)",
                               name);
    }
    if (code == TFD_OK)
      code = tfd_op_infer_node(n->op, n->def, nin, n->in_types, in_shapes, in_values, n->num_outputs, n->out_types,
                               n->out_shapes, st);
    free(in_shapes);
    free(in_values);
    if (code != TFD_OK) return code;
  }
  /* Each loop's NextIteration, now inferred, must carry what its Merge takes. */
  for (int i = 0; i < g->n; i++) {
    tfd_gnode *n = &g->nodes[i];
    for (int k = 0; k < n->num_inputs; k++) {
      tfd_gnode *s = &g->nodes[n->inputs[k].node];
      if (!tfd_graph_is_back_edge(g, s->id, i)) continue;
      tfd_dtype have = s->out_types[n->inputs[k].index];
      if (have != n->in_types[k])
        return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (Merge): input %d is %s (from NextIteration '%s') but T is %s",
                               tfd_gnode_name(n), k, tfd_dtype_name(have), tfd_gnode_name(s), tfd_dtype_name(n->in_types[k]));
    }
  }
  return TFD_OK;
}

tfd_graph *tfd_graph_build(const tfd_graph_def *def, tfd_status *st) {
  tfd_graph *g = calloc(1, sizeof *g);
  if (!g) {
    oom(st);
    return NULL;
  }
  g->def = tfd_graph_def_copy(def);
  g->n = g->def ? (int)tfd_graph_def_num_nodes(g->def) : 0;
  g->nodes = calloc(g->n ? (size_t)g->n : 1, sizeof *g->nodes);
  if (!g->def || !g->nodes) {
    oom(st);
    tfd_graph_free(g);
    return NULL;
  }
  for (int i = 0; i < g->n; i++) g->nodes[i].def = tfd_graph_def_node(g->def, (size_t)i);
  if (resolve(g, st) != TFD_OK || check_next_iterations(g, st) != TFD_OK || sort(g, st) != TFD_OK ||
      infer(g, st) != TFD_OK) {
    tfd_graph_free(g);
    return NULL;
  }
  return g;
}
