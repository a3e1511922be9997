/* GraphDef, NodeDef and AttrValue storage: owned copies of everything a graph is made of. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/api_args.h"
#include "../core/status_internal.h"
#include "../core/tstring.h"
#include "graph_def_internal.h"

static void attr_free(tfd_attr_value *v) {
  free((void *)v->s);
  tfd_tensor_unref(v->tensor);
  free((void *)v->list_i);
  free((void *)v->list_f);
  free((void *)v->list_type);
  if (v->list_s)
    for (size_t i = 0; i < v->list_len; i++) free((void *)v->list_s[i]);
  free((void *)v->list_s);
  memset(v, 0, sizeof *v);
}

/* Deep copy of src into dst (dst uninitialised). False when out of memory. */
static bool attr_copy(tfd_attr_value *dst, const tfd_attr_value *src) {
  *dst = *src;
  dst->s = NULL;
  dst->tensor = NULL;
  dst->list_i = NULL;
  dst->list_f = NULL;
  dst->list_type = NULL;
  dst->list_s = NULL;
  size_t n = src->list_len;
  bool ok = true;
  switch (src->type) {
    case TFD_ATTR_STRING: ok = (dst->s = strdup(src->s ? src->s : "")) != NULL; break;
    case TFD_ATTR_TENSOR: dst->tensor = tfd_tensor_ref(src->tensor); break;
    case TFD_ATTR_LIST_INT:
      ok = (dst->list_i = malloc((n ? n : 1) * sizeof *dst->list_i)) != NULL;
      if (ok && n) memcpy((void *)dst->list_i, src->list_i, n * sizeof *dst->list_i);
      break;
    case TFD_ATTR_LIST_FLOAT:
      ok = (dst->list_f = malloc((n ? n : 1) * sizeof *dst->list_f)) != NULL;
      if (ok && n) memcpy((void *)dst->list_f, src->list_f, n * sizeof *dst->list_f);
      break;
    case TFD_ATTR_LIST_TYPE:
      ok = (dst->list_type = malloc((n ? n : 1) * sizeof *dst->list_type)) != NULL;
      if (ok && n) memcpy((void *)dst->list_type, src->list_type, n * sizeof *dst->list_type);
      break;
    case TFD_ATTR_LIST_STRING: {
      char **l = calloc(n ? n : 1, sizeof *l);
      dst->list_s = (const char *const *)l;
      ok = l != NULL;
      for (size_t i = 0; ok && i < n; i++) ok = (l[i] = strdup(src->list_s[i])) != NULL;
      break;
    }
    default: break;
  }
  if (!ok) attr_free(dst);
  return ok;
}

static void node_free(tfd_node_def *n) {
  free(n->name);
  free(n->op);
  free(n->device);
  for (size_t i = 0; i < n->ninputs; i++) free(n->inputs[i]);
  free(n->inputs);
  for (size_t i = 0; i < n->nattrs; i++) {
    free(n->attrs[i].name);
    attr_free(&n->attrs[i].value);
  }
  free(n->attrs);
  free(n);
}

tfd_graph_def *tfd_graph_def_new(void) { return calloc(1, sizeof(tfd_graph_def)); }

void tfd_graph_def_free(tfd_graph_def *g) {
  if (!g) return;
  for (size_t i = 0; i < g->n; i++) node_free(g->nodes[i]);
  free(g->nodes);
  for (int o = 0; o < 2; o++) {
    for (size_t i = 0; i < g->nsig[o]; i++) {
      free((void *)g->sig[o][i].key);
      free((void *)g->sig[o][i].tensor);
    }
    free(g->sig[o]);
  }
  free(g);
}

size_t tfd_graph_def_signature_size(const tfd_graph_def *g, bool outputs) { return g->nsig[outputs]; }

const tfd_signature_entry *tfd_graph_def_signature_entry(const tfd_graph_def *g, bool outputs, size_t i) {
  return i < g->nsig[outputs] ? &g->sig[outputs][i] : NULL;
}

tfd_code tfd_graph_def_add_signature(tfd_graph_def *g, bool outputs, const char *key, const char *tensor, tfd_dtype dtype,
                                     const tfd_shape *shape, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_graph_def_add_signature", "g", g)) return TFD_INVALID_ARGUMENT;
  if (!key || !*key || !tensor || !*tensor)
    return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "a signature %s needs a key and a tensor name",
                           outputs ? "output" : "input");
  tfd_signature_entry *grown = realloc(g->sig[outputs], (g->nsig[outputs] + 1) * sizeof *grown);
  if (!grown) return tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory");
  g->sig[outputs] = grown;
  tfd_signature_entry e = {strdup(key), strdup(tensor), dtype, {.ndims = -1}};
  if (shape) e.shape = *shape;
  if (!e.key || !e.tensor) {
    free((void *)e.key);
    free((void *)e.tensor);
    return tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory");
  }
  grown[g->nsig[outputs]++] = e;
  return TFD_OK;
}

size_t tfd_graph_def_num_nodes(const tfd_graph_def *g) { return g->n; }
tfd_node_def *tfd_graph_def_node(const tfd_graph_def *g, size_t i) { return i < g->n ? g->nodes[i] : NULL; }

tfd_node_def *tfd_graph_def_find(const tfd_graph_def *g, const char *name) {
  for (size_t i = 0; i < g->n; i++)
    if (strcmp(g->nodes[i]->name, name) == 0) return g->nodes[i];
  return NULL;
}

/* Room for one more node. */
static bool reserve_node(tfd_graph_def *g) {
  if (g->n < g->cap) return true;
  size_t cap = g->cap ? g->cap * 2 : 16;
  tfd_node_def **nodes = realloc(g->nodes, cap * sizeof *nodes);
  if (!nodes) return false;
  g->nodes = nodes;
  g->cap = cap;
  return true;
}

tfd_node_def *tfd_graph_def_add_node(tfd_graph_def *g, const char *name, const char *op, tfd_status *status) {
  tfd_status_reset(status);
  static const char fn[] = "tfd_graph_def_add_node";
  if (tfd_arg_required(status, fn, "g", g) || tfd_arg_required(status, fn, "name", name) ||
      tfd_arg_required(status, fn, "op", op))
    return NULL;
  if (!reserve_node(g)) goto oom;
  tfd_node_def *n = calloc(1, sizeof *n);
  if (!n) goto oom;
  n->name = strdup(name ? name : "");
  n->op = strdup(op ? op : "");
  n->device = strdup("");
  if (!n->name || !n->op || !n->device) {
    node_free(n);
    goto oom;
  }
  g->nodes[g->n++] = n;
  return n;
oom:
  tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory adding node '%s'", name ? name : "");
  return NULL;
}

tfd_code tfd_node_def_add_input(tfd_node_def *n, const char *input, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_node_def_add_input", "n", n) || tfd_arg_required(status, "tfd_node_def_add_input", "input", input))
    return TFD_INVALID_ARGUMENT;
  if (n->ninputs == n->cap_inputs) {
    size_t cap = n->cap_inputs ? n->cap_inputs * 2 : 4;
    char **in = realloc(n->inputs, cap * sizeof *in);
    if (!in) return tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory");
    n->inputs = in;
    n->cap_inputs = cap;
  }
  char *s = strdup(input ? input : "");
  if (!s) return tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory");
  n->inputs[n->ninputs++] = s;
  return TFD_OK;
}

tfd_code tfd_node_def_set_device(tfd_node_def *n, const char *device, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_node_def_set_device", "n", n)) return TFD_INVALID_ARGUMENT;
  char *d = strdup(device ? device : "");
  if (!d) return tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory");
  free(n->device);
  n->device = d;
  return TFD_OK;
}

/* Whether v is a value the runtime can hold: everything later stages index
 * by (dtypes, ranks, list lengths) is checked here, at the API boundary. */
static tfd_code check_attr(const tfd_node_def *n, const char *name, const tfd_attr_value *v, tfd_status *st) {
  if (!name || !*name) return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s': an attr needs a name", n->name);
  if (!v) return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s': attr '%s' has no value", n->name, name);
  if ((int)v->type < TFD_ATTR_INT || (int)v->type > TFD_ATTR_LIST_STRING)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s': attr '%s' has an unknown value type %d", n->name, name,
                           (int)v->type);
  switch (v->type) {
    case TFD_ATTR_TYPE:
      if (!tfd_dtype_name(v->dtype))
        return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s': attr '%s' is not a valid dtype (%d)", n->name,
                               name, (int)v->dtype);
      break;
    case TFD_ATTR_SHAPE:
      if (v->shape.ndims < -1 || v->shape.ndims > TFD_MAX_DIMS)
        return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s': attr '%s' has rank %d (shapes have rank -1 to %d)",
                               n->name, name, v->shape.ndims, TFD_MAX_DIMS);
      for (int i = 0; i < v->shape.ndims; i++)
        if (v->shape.dims[i] < -1)
          return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s': attr '%s' dimension %d is %lld (sizes are >= -1)",
                                 n->name, name, i, (long long)v->shape.dims[i]);
      break;
    case TFD_ATTR_TENSOR:
      if (!v->tensor) return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s': attr '%s' has no tensor", n->name, name);
      break;
    case TFD_ATTR_LIST_INT:
    case TFD_ATTR_LIST_FLOAT:
    case TFD_ATTR_LIST_TYPE:
    case TFD_ATTR_LIST_STRING: {
      const void *items = v->type == TFD_ATTR_LIST_INT     ? (const void *)v->list_i
                          : v->type == TFD_ATTR_LIST_FLOAT ? (const void *)v->list_f
                          : v->type == TFD_ATTR_LIST_TYPE  ? (const void *)v->list_type
                                                           : (const void *)v->list_s;
      if (v->list_len > ((size_t)1 << 24))
        return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s': attr '%s' lists %zu values (at most %zu)", n->name,
                               name, v->list_len, (size_t)1 << 24);
      if (v->list_len && !items)
        return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s': attr '%s' lists %zu values but gives none",
                               n->name, name, v->list_len);
      for (size_t i = 0; i < v->list_len; i++) {
        if (v->type == TFD_ATTR_LIST_TYPE && !tfd_dtype_name(v->list_type[i]))
          return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s': attr '%s' item %zu is not a valid dtype (%d)",
                                 n->name, name, i, (int)v->list_type[i]);
        if (v->type == TFD_ATTR_LIST_STRING && !v->list_s[i])
          return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s': attr '%s' item %zu is NULL", n->name, name, i);
      }
      break;
    }
    default: break;
  }
  return TFD_OK;
}

tfd_code tfd_node_def_set_attr(tfd_node_def *n, const char *name, const tfd_attr_value *v, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_node_def_set_attr", "n", n)) return TFD_INVALID_ARGUMENT;
  tfd_code code = check_attr(n, name, v, status);
  if (code != TFD_OK) return code;
  tfd_attr_value copy;
  if (!attr_copy(&copy, v)) return tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory");
  for (size_t i = 0; i < n->nattrs; i++) {
    if (strcmp(n->attrs[i].name, name) == 0) {
      attr_free(&n->attrs[i].value);
      n->attrs[i].value = copy;
      return TFD_OK;
    }
  }
  node_attr *a = realloc(n->attrs, (n->nattrs + 1) * sizeof *a);
  char *nm = strdup(name);
  if (!a || !nm) {
    if (a) n->attrs = a;
    free(nm);
    attr_free(&copy);
    return tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory");
  }
  n->attrs = a;
  n->attrs[n->nattrs].name = nm;
  n->attrs[n->nattrs].value = copy;
  n->nattrs++;
  return TFD_OK;
}

const char *tfd_node_def_name(const tfd_node_def *n) { return n->name; }
const char *tfd_node_def_op(const tfd_node_def *n) { return n->op; }
const char *tfd_node_def_device(const tfd_node_def *n) { return n->device; }
size_t tfd_node_def_num_inputs(const tfd_node_def *n) { return n->ninputs; }
const char *tfd_node_def_input(const tfd_node_def *n, size_t i) { return i < n->ninputs ? n->inputs[i] : NULL; }
size_t tfd_node_def_num_attrs(const tfd_node_def *n) { return n->nattrs; }
const char *tfd_node_def_attr_name(const tfd_node_def *n, size_t i) { return n->attrs[i].name; }
const tfd_attr_value *tfd_node_def_attr_at(const tfd_node_def *n, size_t i) { return &n->attrs[i].value; }

const tfd_attr_value *tfd_node_def_attr(const tfd_node_def *n, const char *name) {
  for (size_t i = 0; i < n->nattrs; i++)
    if (strcmp(n->attrs[i].name, name) == 0) return &n->attrs[i].value;
  return NULL;
}

static tfd_node_def *node_copy(const tfd_node_def *src) {
  tfd_node_def *n = calloc(1, sizeof *n);
  if (!n) return NULL;
  n->name = strdup(src->name);
  n->op = strdup(src->op);
  n->device = strdup(src->device);
  bool ok = n->name && n->op && n->device;
  for (size_t i = 0; ok && i < src->ninputs; i++) ok = tfd_node_def_add_input(n, src->inputs[i], NULL) == TFD_OK;
  for (size_t i = 0; ok && i < src->nattrs; i++)
    ok = tfd_node_def_set_attr(n, src->attrs[i].name, &src->attrs[i].value, NULL) == TFD_OK;
  if (!ok) {
    node_free(n);
    return NULL;
  }
  return n;
}

tfd_code tfd_graph_def_append_node(tfd_graph_def *g, const tfd_node_def *src, tfd_status *status) {
  if (!reserve_node(g)) return tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory");
  tfd_node_def *n = node_copy(src);
  if (!n) return tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory copying node '%s'", src->name);
  g->nodes[g->n++] = n;
  return TFD_OK;
}

tfd_graph_def *tfd_graph_def_copy(const tfd_graph_def *src) {
  tfd_graph_def *g = tfd_graph_def_new();
  for (size_t i = 0; g && i < src->n; i++) {
    if (tfd_graph_def_append_node(g, src->nodes[i], NULL) != TFD_OK) {
      tfd_graph_def_free(g);
      return NULL;
    }
  }
  for (int o = 0; g && o < 2; o++)
    for (size_t i = 0; i < src->nsig[o]; i++) {
      const tfd_signature_entry *e = &src->sig[o][i];
      if (tfd_graph_def_add_signature(g, o, e->key, e->tensor, e->dtype, &e->shape, NULL) != TFD_OK) {
        tfd_graph_def_free(g);
        return NULL;
      }
    }
  return g;
}

char *tfd_input_node(const char *input, int *index, tfd_status *status) {
  const char *s = input ? input : "";
  bool control = *s == '^';
  if (control) s++;
  const char *colon = strrchr(s, ':');
  size_t len = colon ? (size_t)(colon - s) : strlen(s);
  if (len == 0) {
    tfd_status_setf(status, TFD_INVALID_ARGUMENT, "malformed input '%s': no node name", input ? input : "");
    return NULL;
  }
  *index = 0;
  if (colon) {
    if (control) {
      tfd_status_setf(status, TFD_INVALID_ARGUMENT, "malformed input '%s': a control input has no output index", input);
      return NULL;
    }
    const char *p = colon + 1;
    if (!*p) {
      tfd_status_setf(status, TFD_INVALID_ARGUMENT, "malformed input '%s': missing output index", input);
      return NULL;
    }
    long v = 0;
    for (; *p; p++) {
      if (!isdigit((unsigned char)*p) || v > 100000) {
        tfd_status_setf(status, TFD_INVALID_ARGUMENT, "malformed input '%s': bad output index", input);
        return NULL;
      }
      v = v * 10 + (*p - '0');
    }
    *index = (int)v;
  }
  char *node = malloc(len + 1);
  if (!node) {
    tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory");
    return NULL;
  }
  memcpy(node, s, len);
  node[len] = 0;
  if (control) *index = -1;
  return node;
}

tfd_code tfd_parse_input(const char *input, char *node, size_t node_cap, int *index, tfd_status *status) {
  tfd_status_reset(status);
  static const char fn[] = "tfd_parse_input";
  if (tfd_arg_required(status, fn, "input", input) || tfd_arg_required(status, fn, "index", index)) return TFD_INVALID_ARGUMENT;
  if (node_cap > 0 && !node)
    return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "%s: node is NULL but node_cap is %zu", fn, node_cap);
  tfd_status tmp = TFD_STATUS_INIT;
  char *name = tfd_input_node(input, index, &tmp);
  if (!name) {
    tfd_code code = tfd_status_code(&tmp);
    tfd_status_move(status, &tmp);
    return code;
  }
  size_t len = strlen(name);
  tfd_code code = TFD_OK;
  if (len >= node_cap)
    code = tfd_status_setf(status, TFD_INVALID_ARGUMENT, "input '%s': the node name is %zu bytes, the buffer holds %zu",
                           input, len, node_cap ? node_cap - 1 : 0);
  else
    memcpy(node, name, len + 1);
  free(name);
  return code;
}

tfd_code tfd_strings_from_content(tfd_tensor *t, const uint8_t *data, size_t len, tfd_status *st) {
  int64_t n = tfd_tensor_numel(t);
  size_t pos = 0;
  uint32_t *lens = malloc((size_t)(n ? n : 1) * sizeof *lens);
  if (!lens) return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory reading a string tensor");
  tfd_code code = TFD_OK;
  for (int64_t i = 0; i < n && code == TFD_OK; i++) {
    uint32_t v = 0;
    for (int shift = 0;; shift += 7) {
      if (pos >= len || shift > 28) {
        code = tfd_status_setf(st, TFD_INVALID_ARGUMENT, "the tensor content of a string tensor ends inside length %lld",
                               (long long)i);
        break;
      }
      uint8_t b = data[pos++];
      v |= (uint32_t)(b & 0x7f) << shift;
      if (!(b & 0x80)) break;
    }
    lens[i] = v;
  }
  for (int64_t i = 0; i < n && code == TFD_OK; i++) {
    if (lens[i] > len - pos)
      code = tfd_status_setf(st, TFD_INVALID_ARGUMENT, "the tensor content of a string tensor ends inside string %lld",
                             (long long)i);
    else if (!tfd_tensor_set_str(t, i, data + pos, lens[i]))
      code = tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory reading a string tensor");
    pos += lens[i];
  }
  if (code == TFD_OK && pos != len)
    code = tfd_status_setf(st, TFD_INVALID_ARGUMENT, "the tensor content of a string tensor has %zu bytes past its strings",
                           len - pos);
  free(lens);
  return code;
}
