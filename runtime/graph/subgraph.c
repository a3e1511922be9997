/* Feeds, fetches, pruning and partitioning. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/tensor_internal.h"
#include "../core/status_internal.h"
#include "../framework/graph_def_internal.h"
#include "subgraph.h"

char *tfd_parse_tensor_name(const char *s, int *index, tfd_status *st) {
  if (!s || *s == '^') {
    tfd_status_setf(st, TFD_INVALID_ARGUMENT, "'%s' is not a tensor name (expected \"node\" or \"node:i\")",
                    s ? s : "(null)");
    return NULL;
  }
  return tfd_input_node(s, index, st);
}

static tfd_code out_of_memory(tfd_status *st) { return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory"); }

/* Adds the input built from fmt (any length) to n. */
static tfd_code add_input_f(tfd_node_def *n, tfd_status *st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static tfd_code add_input_f(tfd_node_def *n, tfd_status *st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *in = tfd_vformat(fmt, ap);
  va_end(ap);
  if (!in) return out_of_memory(st);
  tfd_code code = tfd_node_def_add_input(n, in, st);
  free(in);
  return code;
}

void tfd_graph_placeholders_text(const tfd_graph *g, char *buf, size_t cap) {
  size_t used = 0;
  int listed = 0;
  buf[0] = 0;
  for (int i = 0; i < g->n && used < cap; i++) {
    const char *op = g->nodes[i].op->name, *name = tfd_gnode_name(&g->nodes[i]);
    if (strcmp(op, "Placeholder") != 0 && strcmp(op, "PlaceholderWithDefault") != 0) continue;
    if (listed == 8) {
      snprintf(buf + used, cap - used, ", ...");
      return;
    }
    used += (size_t)snprintf(buf + used, cap - used, "%s%s", listed++ ? ", " : "; its placeholders are ", name);
  }
}

/* Resolves "node:i" against the graph: node id and output index. */
static tfd_code resolve_tensor(const tfd_graph *g, const char *what, const char *s, int *node, int *index,
                               tfd_status *st) {
  char *name = tfd_parse_tensor_name(s, index, st);
  if (!name) return tfd_status_prefixf(st, "%s: ", what);
  *node = tfd_graph_find(g, name);
  tfd_code code = TFD_OK;
  if (*node < 0 || name[0] == '_') {
    char known[512] = "";
    if (strcmp(what, "feed") == 0) tfd_graph_placeholders_text(g, known, sizeof known);
    code = tfd_status_setf(st, TFD_NOT_FOUND, "%s '%s': the graph has no node named '%s'%s", what, s, name, known);
  } else {
    const tfd_gnode *n = &g->nodes[*node];
    if (*index >= n->num_outputs)
      code = tfd_status_setf(st, TFD_INVALID_ARGUMENT, "%s '%s': node '%s' (%s) has %d output%s", what, s, name,
                             n->op->name, n->num_outputs, n->num_outputs == 1 ? "" : "s");
  }
  free(name);
  return code;
}

/* Index of the feed of (node, index), or -1. */
static int fed(const int *feed_node, const int *feed_index, int num_feeds, int node, int index) {
  for (int k = 0; k < num_feeds; k++)
    if (feed_node[k] == node && feed_index[k] == index) return k;
  return -1;
}

/* The feed that stands for node as the source of control edges, or -1: a node whose every output is
 * fed (a Placeholder, say) does no work in the step, so its control out-edges move onto its first
 * feed, as TensorFlow's subgraph::FeedInputs moves a fed Placeholder's. Otherwise the node still runs
 * and its control edges stay. */
static int replaced_by_feed(const tfd_graph *g, const int *feed_node, const int *feed_index, int num_feeds, int node) {
  int outputs = g->nodes[node].num_outputs, first = -1;
  for (int i = 0; i < outputs; i++) {
    int f = fed(feed_node, feed_index, num_feeds, node, i);
    if (f < 0) return -1;
    if (first < 0 || f < first) first = f;
  }
  return first;
}

/* Tensor connections (CallableOptions.tensor_connection), resolved: to (node, index) reads from
 * (node, index) instead. */
typedef struct connection {
  int to_node, to_index, from_node, from_index;
} connection;

static int connected(const connection *c, int n, int node, int index) {
  for (int k = 0; k < n; k++)
    if (c[k].to_node == node && c[k].to_index == index) return k;
  return -1;
}

/* Whether connection k makes a cycle: after rewiring, from_node would depend on a node that reads
 * to_tensor (so now reads from_node). The graph was acyclic before, so any new cycle goes through
 * such an edge. seen has full->n entries. */
static bool makes_cycle(const tfd_graph *full, const connection *c, int nconn, int k, bool *seen, int *stack) {
  memset(seen, 0, (size_t)full->n * sizeof *seen);
  int top = 0;
  seen[stack[top++] = c[k].from_node] = true;
  while (top > 0) {
    const tfd_gnode *gn = &full->nodes[stack[--top]];
    for (int i = 0; i < gn->num_inputs + gn->num_control; i++) {
      int src;
      if (i < gn->num_inputs) {
        int via = connected(c, nconn, gn->inputs[i].node, gn->inputs[i].index);
        if (via == k) return true;
        src = via >= 0 ? c[via].from_node : gn->inputs[i].node;
      } else {
        src = gn->control[i - gn->num_inputs];
      }
      if (!seen[src]) seen[stack[top++] = src] = true;
    }
  }
  return false;
}

/* Resolves the connections (canonical "node:i" names) against the graph, with TensorFlow's errors. */
static tfd_code resolve_connections(const tfd_graph *full, const char *const *feeds, int num_feeds,
                                    const char *const *conn_from, const char *const *conn_to, int nconn,
                                    connection *c, tfd_status *st) {
  for (int k = 0; k < nconn; k++) {
    int index;
    char *name = tfd_parse_tensor_name(conn_from[k], &index, st);
    if (!name) return tfd_status_prefixf(st, "tensor connection: ");
    int node = tfd_graph_find(full, name);
    free(name);
    if (node < 0)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Requested tensor connection from unknown node: \"%s\".",
                             conn_from[k]);
    if (index >= full->nodes[node].num_outputs)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                             "Requested tensor connection from unknown edge: \"%s\" (actual number of outputs = %d).",
                             conn_from[k], full->nodes[node].num_outputs);
    c[k].from_node = node;
    c[k].from_index = index;
  }
  for (int k = 0; k < nconn; k++) {
    bool twice = false;
    for (int j = 0; j < num_feeds && !twice; j++) twice = strcmp(feeds[j], conn_to[k]) == 0;
    for (int j = 0; j < k && !twice; j++) twice = strcmp(conn_to[j], conn_to[k]) == 0;
    if (twice) return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Endpoint \"%s\" fed more than once.", conn_to[k]);
  }
  for (int k = 0; k < nconn; k++) {
    int index;
    char *name = tfd_parse_tensor_name(conn_to[k], &index, st);
    if (!name) return tfd_status_prefixf(st, "tensor connection: ");
    int node = tfd_graph_find(full, name);
    free(name);
    if (node < 0 || index >= full->nodes[node].num_outputs)
      return tfd_status_setf(st, TFD_NOT_FOUND, "FeedInputs: unable to find feed output %s", conn_to[k]);
    c[k].to_node = node;
    c[k].to_index = index;
    tfd_dtype want = full->nodes[node].out_types[index], got = full->nodes[c[k].from_node].out_types[c[k].from_index];
    if (want != got)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Requested tensor connection from %s (%s) to %s (%s): the dtypes differ",
                             conn_from[k], tfd_dtype_name(got), conn_to[k], tfd_dtype_name(want));
  }
  bool *seen = malloc(((size_t)full->n + 1) * sizeof *seen);
  int *stack = malloc(((size_t)full->n + 1) * sizeof *stack);
  tfd_code code = seen && stack ? TFD_OK : tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  for (int k = 0; code == TFD_OK && k < nconn; k++)
    if (makes_cycle(full, c, nconn, k, seen, stack))
      code = tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                             "Requested Tensor connection between nodes \"%s\" and \"%s\" would create a cycle.",
                             tfd_gnode_name(&full->nodes[c[k].to_node]), tfd_gnode_name(&full->nodes[c[k].from_node]));
  free(seen);
  free(stack);
  return code;
}

tfd_graph_def *tfd_subgraph_for_run(const tfd_graph *full, const char *const *feeds, int num_feeds,
                                    const char *const *fetches, int num_fetches, const char *const *targets,
                                    int num_targets, tfd_dtype *feed_types, tfd_shape *feed_shapes, tfd_status *st) {
  return tfd_subgraph_for_run_connected(full, feeds, num_feeds, fetches, num_fetches, targets, num_targets, NULL, NULL, 0,
                                        feed_types, feed_shapes, st);
}

tfd_graph_def *tfd_subgraph_for_run_connected(const tfd_graph *full, const char *const *feeds, int num_feeds,
                                              const char *const *fetches, int num_fetches, const char *const *targets,
                                              int num_targets, const char *const *conn_from, const char *const *conn_to,
                                              int num_conn, tfd_dtype *feed_types, tfd_shape *feed_shapes,
                                              tfd_status *st) {
  int n = full->n, total = num_feeds + num_fetches + 1;
  int *feed_node = calloc((size_t)total, sizeof(int)), *feed_index = calloc((size_t)total, sizeof(int));
  connection *conn = calloc((size_t)num_conn + 1, sizeof *conn);
  tfd_graph_def *def = tfd_graph_def_new(), *out = NULL;
  bool *keep = NULL;
  if (!feed_node || !feed_index || !def || !conn) {
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
    goto done;
  }
  for (int k = 0; k < num_feeds; k++) {
    if (resolve_tensor(full, "feed", feeds[k], &feed_node[k], &feed_index[k], st) != TFD_OK) goto done;
    if (fed(feed_node, feed_index, k, feed_node[k], feed_index[k]) >= 0) {
      tfd_status_setf(st, TFD_INVALID_ARGUMENT, "'%s' fed more than once.", feeds[k]);
      goto done;
    }
    const tfd_gnode *src = &full->nodes[feed_node[k]];
    feed_types[k] = src->out_types[feed_index[k]];
    feed_shapes[k] = src->out_shapes[feed_index[k]];
  }
  if (num_conn && resolve_connections(full, feeds, num_feeds, conn_from, conn_to, num_conn, conn, st) != TFD_OK) goto done;
  /* Every node, with inputs that read a fed tensor redirected to its feed. */
  for (int i = 0; i < n; i++) {
    const tfd_node_def *src = full->nodes[i].def;
    tfd_node_def *copy = tfd_graph_def_add_node(def, src->name, src->op, st);
    if (!copy || tfd_node_def_set_device(copy, src->device, st) != TFD_OK) goto done;
    for (size_t a = 0; a < src->nattrs; a++)
      if (tfd_node_def_set_attr(copy, src->attrs[a].name, &src->attrs[a].value, st) != TFD_OK) goto done;
    const tfd_gnode *gn = &full->nodes[i];
    for (int k = 0; k < gn->num_inputs; k++) {
      int f = fed(feed_node, feed_index, num_feeds, gn->inputs[k].node, gn->inputs[k].index);
      int c = connected(conn, num_conn, gn->inputs[k].node, gn->inputs[k].index);
      tfd_code code = c >= 0   ? add_input_f(copy, st, "%s:%d", tfd_gnode_name(&full->nodes[conn[c].from_node]),
                                             conn[c].from_index)
                      : f >= 0 ? add_input_f(copy, st, "_feed_%d", f)
                             : add_input_f(copy, st, "%s:%d", tfd_gnode_name(&full->nodes[gn->inputs[k].node]),
                                           gn->inputs[k].index);
      if (code != TFD_OK) goto done;
    }
    for (int k = 0; k < gn->num_control; k++) {
      int f = replaced_by_feed(full, feed_node, feed_index, num_feeds, gn->control[k]);
      tfd_code code = f >= 0 ? add_input_f(copy, st, "^_feed_%d", f)
                             : add_input_f(copy, st, "^%s", tfd_gnode_name(&full->nodes[gn->control[k]]));
      if (code != TFD_OK) goto done;
    }
  }
  for (int k = 0; k < num_feeds; k++) {
    char name[32];
    snprintf(name, sizeof name, "_feed_%d", k);
    tfd_node_def *f = tfd_graph_def_add_node(def, name, "_Feed", st);
    tfd_attr_value idx = {.type = TFD_ATTR_INT, .i = k}, dt = {.type = TFD_ATTR_TYPE, .dtype = feed_types[k]},
                   sh = {.type = TFD_ATTR_SHAPE, .shape = feed_shapes[k]};
    if (!f || tfd_node_def_set_attr(f, "index", &idx, st) || tfd_node_def_set_attr(f, "dtype", &dt, st) ||
        tfd_node_def_set_attr(f, "shape", &sh, st))
      goto done;
  }
  int first_fetch = (int)def->n;
  for (int k = 0; k < num_fetches; k++) {
    int node, index;
    if (resolve_tensor(full, "fetch", fetches[k], &node, &index, st) != TFD_OK) goto done;
    char name[32];
    snprintf(name, sizeof name, "_fetch_%d", k);
    int f = fed(feed_node, feed_index, num_feeds, node, index), c = connected(conn, num_conn, node, index);
    if (c >= 0) { /* a fetch of a connected tensor gets what it is connected to, as a fed one gets its feed */
      node = conn[c].from_node;
      index = conn[c].from_index;
    }
    tfd_node_def *fn = tfd_graph_def_add_node(def, name, "_Fetch", st);
    tfd_attr_value idx = {.type = TFD_ATTR_INT, .i = k};
    if (!fn) goto done;
    tfd_code code = f >= 0 ? add_input_f(fn, st, "_feed_%d", f)
                           : add_input_f(fn, st, "%s:%d", tfd_gnode_name(&full->nodes[node]), index);
    if (code != TFD_OK || tfd_node_def_set_attr(fn, "index", &idx, st)) goto done;
  }
  /* Prune: walk back from fetches and targets over data and control inputs. */
  int m = (int)def->n;
  keep = calloc((size_t)m, sizeof *keep);
  int *stack = malloc((size_t)m * sizeof *stack), top = 0;
  tfd_strmap by_name = TFD_STRMAP_INIT;
  bool ok = keep && stack;
  for (int i = 0; ok && i < m; i++) ok = tfd_strmap_put(&by_name, def->nodes[i]->name, (void *)(intptr_t)(i + 1));
  if (!ok) {
    free(stack);
    tfd_strmap_free(&by_name);
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
    goto done;
  }
  for (int i = first_fetch; i < m; i++) keep[stack[top++] = i] = true;
  for (int t = 0; t < num_targets; t++) {
    const char *name = targets[t][0] == '^' ? targets[t] + 1 : targets[t];
    intptr_t id = (intptr_t)tfd_strmap_get(&by_name, name);
    if (!id || name[0] == '_') {
      free(stack);
      tfd_strmap_free(&by_name);
      tfd_status_setf(st, TFD_NOT_FOUND, "target '%s': the graph has no node named '%s'", targets[t], name);
      goto done;
    }
    if (!keep[id - 1]) keep[stack[top++] = (int)id - 1] = true;
  }
  while (top > 0 && ok) {
    tfd_node_def *nd = def->nodes[stack[--top]];
    for (size_t k = 0; k < nd->ninputs; k++) {
      int index;
      char *src = tfd_input_node(nd->inputs[k], &index, NULL); /* valid: the graph was built from these */
      if (!src) { /* out of memory: a node left out would read as unknown to its consumer */
        ok = false;
        break;
      }
      intptr_t id = (intptr_t)tfd_strmap_get(&by_name, src);
      free(src);
      if (id && !keep[id - 1]) keep[stack[top++] = (int)id - 1] = true;
    }
  }
  free(stack);
  tfd_strmap_free(&by_name);
  if (!ok) {
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
    goto done;
  }
  out = tfd_graph_def_new();
  for (int i = 0; out && i < m; i++) {
    if (keep[i] && tfd_graph_def_append_node(out, def->nodes[i], st) != TFD_OK) {
      tfd_graph_def_free(out);
      out = NULL;
    }
  }
  if (!out && tfd_status_code(st) == TFD_OK) tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
done:
  free(keep);
  free(conn);
  free(feed_node);
  free(feed_index);
  tfd_graph_def_free(def);
  return out;
}

static tfd_code set_op(tfd_node_def *n, const char *op, tfd_status *st) {
  char *copy = strdup(op);
  if (!copy) return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  free(n->op);
  n->op = copy;
  return TFD_OK;
}

static tfd_code client_attrs(tfd_node_def *n, const char *tensor, tfd_status *st) {
  tfd_attr_value name = {.type = TFD_ATTR_STRING, .s = tensor}, dev = {.type = TFD_ATTR_STRING, .s = TFD_CLIENT_DEVICE},
                 inc = {.type = TFD_ATTR_INT, .i = 0};
  if (tfd_node_def_set_attr(n, "tensor_name", &name, st) || tfd_node_def_set_attr(n, "send_device", &dev, st) ||
      tfd_node_def_set_attr(n, "recv_device", &dev, st) || tfd_node_def_set_attr(n, "send_device_incarnation", &inc, st))
    return tfd_status_code(st);
  return TFD_OK;
}

tfd_code tfd_subgraph_for_partial_run(tfd_graph_def *def, char *const *feeds, char *const *fetches,
                                      const tfd_dtype *feed_types, tfd_status *st) {
  for (size_t i = 0; i < def->n; i++) {
    tfd_node_def *n = def->nodes[i];
    const tfd_attr_value *idx = tfd_node_def_attr(n, "index");
    if (strcmp(n->op, "_Feed") == 0) {
      tfd_attr_value t = {.type = TFD_ATTR_TYPE, .dtype = feed_types[idx->i]};
      if (set_op(n, "_Recv", st) || client_attrs(n, feeds[idx->i], st) || tfd_node_def_set_attr(n, "tensor_type", &t, st))
        return tfd_status_code(st);
    } else if (strcmp(n->op, "_Fetch") == 0) {
      if (set_op(n, "_Send", st) || client_attrs(n, fetches[idx->i], st)) return tfd_status_code(st);
    }
  }
  return TFD_OK;
}

/* ---- partitioning ---- */
static tfd_node_def *copy_node(tfd_graph_def *part, const tfd_gnode *n, const char *device, tfd_status *st) {
  tfd_node_def *c = tfd_graph_def_add_node(part, n->def->name, n->def->op, st);
  if (!c || tfd_node_def_set_device(c, device, st) != TFD_OK) return NULL;
  for (size_t a = 0; a < n->def->nattrs; a++)
    if (tfd_node_def_set_attr(c, n->def->attrs[a].name, &n->def->attrs[a].value, st) != TFD_OK) return NULL;
  return c;
}

static tfd_code set_str(tfd_node_def *n, const char *name, const char *v, tfd_status *st) {
  tfd_attr_value a = {.type = TFD_ATTR_STRING, .s = v};
  return tfd_node_def_set_attr(n, name, &a, st);
}

/* The _Send in part sp and the _Recv in part dp for one tensor. */
static tfd_code make_transfer(tfd_graph_def **parts, tfd_device *const *devices, int sp, int dp, const char *tensor,
                              const char *send_input, tfd_dtype dt, const char *send_name, const char *recv_name,
                              tfd_status *st) {
  tfd_device_attributes sa, da;
  tfd_device_get_attributes(devices[sp], &sa);
  tfd_device_get_attributes(devices[dp], &da);
  tfd_attr_value inc = {.type = TFD_ATTR_INT, .i = (int64_t)sa.incarnation}, t = {.type = TFD_ATTR_TYPE, .dtype = dt};
  tfd_node_def *s = tfd_graph_def_add_node(parts[sp], send_name, "_Send", st);
  if (!s || tfd_node_def_add_input(s, send_input, st) || tfd_node_def_set_device(s, sa.name, st) ||
      set_str(s, "tensor_name", tensor, st) || set_str(s, "send_device", sa.name, st) ||
      set_str(s, "recv_device", da.name, st) || tfd_node_def_set_attr(s, "send_device_incarnation", &inc, st) ||
      tfd_node_def_set_attr(s, "T", &t, st))
    return tfd_status_code(st);
  tfd_node_def *r = tfd_graph_def_add_node(parts[dp], recv_name, "_Recv", st);
  if (!r || tfd_node_def_set_device(r, da.name, st) || set_str(r, "tensor_name", tensor, st) ||
      set_str(r, "send_device", sa.name, st) || set_str(r, "recv_device", da.name, st) ||
      tfd_node_def_set_attr(r, "send_device_incarnation", &inc, st) || tfd_node_def_set_attr(r, "tensor_type", &t, st))
    return tfd_status_code(st);
  return TFD_OK;
}

/* Adds the _Send (in src part) and _Recv (in dst part) for one tensor unless
 * present; returns the _Recv's name (the caller frees it), NULL on error. */
static char *add_transfer(tfd_graph_def **parts, tfd_device *const *devices, int sp, int dp, const char *tensor,
                          const char *send_input, tfd_dtype dt, const char *tag, tfd_status *st) {
  char *recv_name = tfd_format("_recv_%s_%s_%d", tag, tensor, dp);
  char *send_name = recv_name ? tfd_format("_send_%s", recv_name + 6) : NULL;
  if (!send_name) {
    free(recv_name);
    out_of_memory(st);
    return NULL;
  }
  for (char *p = recv_name; *p; p++)
    if (*p == ':') *p = '_';
  for (char *p = send_name; *p; p++)
    if (*p == ':') *p = '_';
  if (!tfd_graph_def_find(parts[dp], recv_name) && make_transfer(parts, devices, sp, dp, tensor, send_input, dt,
                                                                 send_name, recv_name, st) != TFD_OK) {
    free(recv_name);
    recv_name = NULL;
  }
  free(send_name);
  return recv_name;
}
tfd_code tfd_partition(const tfd_graph *g, const int *device_of, tfd_device *const *devices, int num_devices,
                       tfd_graph_def **parts, tfd_status *st) {
  for (int d = 0; d < num_devices; d++) parts[d] = NULL;
  for (int i = 0; i < g->n; i++) {
    int d = device_of[i];
    if (!parts[d] && !(parts[d] = tfd_graph_def_new())) goto oom;
  }
  for (int i = 0; i < g->n; i++) {
    const tfd_gnode *n = &g->nodes[i];
    int dp = device_of[i];
    tfd_node_def *c = copy_node(parts[dp], n, tfd_device_name(devices[dp]), st);
    if (!c) goto fail;
    for (int k = 0; k < n->num_inputs; k++) {
      const tfd_gnode *src = &g->nodes[n->inputs[k].node];
      int sp = device_of[src->id];
      char *tensor = tfd_format("%s:%d", tfd_gnode_name(src), n->inputs[k].index);
      if (!tensor) goto oom;
      char *recv = sp == dp ? NULL
                            : add_transfer(parts, devices, sp, dp, tensor, tensor, src->out_types[n->inputs[k].index],
                                           "t", st);
      tfd_code code = sp == dp ? tfd_node_def_add_input(c, tensor, st)
                      : recv   ? tfd_node_def_add_input(c, recv, st)
                               : TFD_INTERNAL;
      free(tensor);
      free(recv);
      if (code != TFD_OK) goto fail;
    }
    /* Control inputs go after data inputs; collect the cross-device ones first. */
    for (int k = 0; k < n->num_control; k++) {
      const tfd_gnode *src = &g->nodes[n->control[k]];
      int sp = device_of[src->id];
      if (sp == dp) {
        if (add_input_f(c, st, "^%s", tfd_gnode_name(src)) != TFD_OK) goto fail;
        continue;
      }
      /* A dummy scalar, made after src, carries the dependency across. */
      char *dummy = tfd_format("_ctrl_%s_%d", tfd_gnode_name(src), dp);
      if (!dummy) goto oom;
      tfd_code code = TFD_OK;
      if (!tfd_graph_def_find(parts[sp], dummy)) {
        tfd_tensor *zero = tfd_tensor_make(NULL, TFD_INT32, NULL, 0, st);
        tfd_node_def *z = zero ? tfd_graph_def_add_node(parts[sp], dummy, "Const", st) : NULL;
        if (z) *(int32_t *)tfd_tensor_data(zero) = 0;
        tfd_attr_value v = {.type = TFD_ATTR_TENSOR, .tensor = zero};
        code = !z                                                    ? TFD_RESOURCE_EXHAUSTED
               : tfd_node_def_set_attr(z, "value", &v, st)           ? tfd_status_code(st)
               : add_input_f(z, st, "^%s", tfd_gnode_name(src))      ? tfd_status_code(st)
                                                                     : tfd_node_def_set_device(z, tfd_device_name(devices[sp]), st);
        tfd_tensor_unref(zero);
      }
      char *recv = code == TFD_OK ? add_transfer(parts, devices, sp, dp, dummy, dummy, TFD_INT32, "c", st) : NULL;
      free(dummy);
      code = recv ? add_input_f(c, st, "^%s", recv) : TFD_INTERNAL;
      free(recv);
      if (code != TFD_OK) goto fail;
    }
  }
  return TFD_OK;
oom:
  tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory partitioning the graph");
fail:
  for (int d = 0; d < num_devices; d++) {
    tfd_graph_def_free(parts[d]);
    parts[d] = NULL;
  }
  return tfd_status_code(st) != TFD_OK ? tfd_status_code(st) : TFD_INTERNAL;
}
