/* Function libraries: what the loaders read of a FunctionDefLibrary, and the pass that inlines calls
 * and lowers If/While to TensorFlow 1's frames (function_library.h). The lowering follows
 * TensorFlow's lower_if_op.cc and lower_while_op.cc:
 *
 *   If(cond, args...)      pred Switch(pred, pred) gives the pivots n/pivot_t and n/pivot_f; each
 *                          arg goes through Switch(arg, pred); the then branch reads the true sides,
 *                          the else branch the false ones; a Merge per output joins them.
 *   While(vars...)         per var: Enter (frame n) -> Merge(enter, next) -> [cond on the merges]
 *                          -> LoopCond -> Switch: false -> Exit, true -> Identity -> [body] ->
 *                          NextIteration -> back into the Merge.
 *
 * A branch's or body's nodes without inputs (constants) take a control input from its pivot, so
 * they run in its frame and only when the branch is taken. A non-bool condition becomes
 * NotEqual(cond, ZerosLike(cond)), TensorFlow's truth of a scalar. */
#include <stdlib.h>
#include <string.h>

#include "../core/status_internal.h"
#include "function_library.h"
#include "../framework/graph_def_internal.h"

/* ---- the library ---- */
static char **grow_strings(char **v, size_t n) { return realloc(v, (n + 1) * sizeof *v); }

tfd_function_def *tfd_function_library_add(tfd_function_library *lib, const char *name, tfd_status *st) {
  for (size_t i = 0; i < lib->n; i++)
    if (strcmp(lib->fns[i]->name, name) == 0) {
      tfd_status_setf(st, TFD_INVALID_ARGUMENT, "the function library defines '%s' twice", name);
      return NULL;
    }
  if (lib->n == lib->cap) {
    size_t cap = lib->cap ? 2 * lib->cap : 8;
    tfd_function_def **fns = realloc(lib->fns, cap * sizeof *fns);
    if (!fns) goto oom;
    lib->fns = fns, lib->cap = cap;
  }
  tfd_function_def *f = calloc(1, sizeof *f);
  if (!f || !(f->name = strdup(name)) || !(f->body = tfd_graph_def_new())) {
    if (f) free(f->name);
    free(f);
    goto oom;
  }
  lib->fns[lib->n++] = f;
  return f;
oom:
  tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory reading function '%s'", name);
  return NULL;
}

tfd_code tfd_function_def_add_arg(tfd_function_def *f, bool output, const char *name, tfd_dtype dtype, const char *type_attr,
                                  tfd_status *st) {
  size_t n = output ? f->n_out : f->n_in;
  char **names = grow_strings(output ? f->out_names : f->in_names, n);
  if (names) {
    if (output) f->out_names = names;
    else f->in_names = names;
  }
  char *copy = names ? strdup(name) : NULL;
  if (copy && output) {
    tfd_dtype *types = realloc(f->out_types, (n + 1) * sizeof *types);
    char **attrs = types ? grow_strings(f->out_type_attrs, n) : NULL;
    char **ret = attrs ? grow_strings(f->ret, n) : NULL;
    if (types) f->out_types = types;
    if (attrs) f->out_type_attrs = attrs;
    if (ret) f->ret = ret;
    char *ta = ret && type_attr ? strdup(type_attr) : NULL;
    if (!ret || (type_attr && !ta)) {
      free(copy);
      copy = NULL;
    } else {
      types[n] = dtype, attrs[n] = ta, ret[n] = NULL;
    }
  }
  if (!copy) return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory reading function '%s'", f->name);
  names[n] = copy;
  if (output) f->n_out++;
  else f->n_in++;
  return TFD_OK;
}

tfd_code tfd_function_def_set_ret(tfd_function_def *f, const char *out_name, const char *tensor, tfd_status *st) {
  for (size_t k = 0; k < f->n_out; k++) {
    if (strcmp(f->out_names[k], out_name) != 0) continue;
    char *copy = strdup(tensor);
    if (!copy) return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory reading function '%s'", f->name);
    free(f->ret[k]);
    f->ret[k] = copy;
    return TFD_OK;
  }
  return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "function '%s' returns '%s', which is not one of its outputs", f->name,
                         out_name);
}

static void free_strings(char **v, size_t n) {
  for (size_t i = 0; v && i < n; i++) free(v[i]);
  free(v);
}

void tfd_function_library_free(tfd_function_library *lib) {
  for (size_t i = 0; i < lib->n; i++) {
    tfd_function_def *f = lib->fns[i];
    free(f->name);
    free_strings(f->in_names, f->n_in);
    free_strings(f->out_names, f->n_out);
    free_strings(f->out_type_attrs, f->n_out);
    free_strings(f->ret, f->n_out);
    free(f->out_types);
    tfd_graph_def_free(f->body);
    free(f);
  }
  free(lib->fns);
  *lib = (tfd_function_library)TFD_FUNCTION_LIBRARY_INIT;
}

static const tfd_function_def *lookup(const tfd_function_library *lib, const char *name) {
  for (size_t i = 0; name && i < lib->n; i++)
    if (strcmp(lib->fns[i]->name, name) == 0) return lib->fns[i];
  return NULL;
}

static bool is_if(const char *op) { return strcmp(op, "If") == 0 || strcmp(op, "StatelessIf") == 0; }
static bool is_while(const char *op) { return strcmp(op, "While") == 0 || strcmp(op, "StatelessWhile") == 0; }
static bool is_call(const char *op) {
  return strcmp(op, "PartitionedCall") == 0 || strcmp(op, "StatefulPartitionedCall") == 0;
}

bool tfd_function_op(const char *op) { return is_if(op) || is_while(op) || is_call(op); }

bool tfd_function_attr(const char *op, const char *attr) {
  if (is_if(op)) return strcmp(attr, "then_branch") == 0 || strcmp(attr, "else_branch") == 0;
  if (is_while(op)) return strcmp(attr, "cond") == 0 || strcmp(attr, "body") == 0;
  return is_call(op) && strcmp(attr, "f") == 0;
}

/* ---- the pass ---- */
/* Where a node's inputs come from while it is copied out of a function body. */
typedef struct scope {
  const char *prefix;              /* "" at the top level, else "call/" */
  const tfd_function_def *fn;      /* NULL at the top level */
  const tfd_graph_def *src;        /* the nodes being copied */
  char *const *args;               /* fn's inputs: the tensors they are bound to */
  const char *pivot;               /* control input for nodes without inputs, or NULL */
  char *const *controls;           /* and the call's own control inputs ("^x") */
  size_t ncontrols;
  const struct scope *parent;      /* the calls above: recursion is refused */
} scope;

typedef struct lower {
  const tfd_function_library *lib;
  tfd_graph_def *out;
  tfd_status *st;
} lower;

static tfd_code oom(lower *c) { return tfd_status_setf(c->st, TFD_RESOURCE_EXHAUSTED, "out of memory inlining functions"); }
/* After a step returned nothing: the error it reported, or running out of memory (tfd_format and
 * the allocations report none). */
static tfd_code failed(lower *c) { return tfd_status_code(c->st) != TFD_OK ? tfd_status_code(c->st) : oom(c); }

/* Ops whose outputs come from several output arguments of one tensor each, by name: a function body
 * names such an output "node:arg:index". Other ops have one output argument (a list or a tensor). */
static int output_index(const char *op, const char *arg, int index) {
  static const struct {
    const char *op, *outs[6];
  } named[] = {
      {"FusedBatchNorm", {"y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2"}},
      {"FusedBatchNormV2", {"y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2"}},
      {"FusedBatchNormV3", {"y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2", "reserve_space_3"}},
      {"Unique", {"y", "idx"}},
      {"UniqueV2", {"y", "idx"}},
      {"ListDiff", {"out", "idx"}},
      {"TopKV2", {"values", "indices"}},
      {"Switch", {"output_false", "output_true"}},
      {"Merge", {"output", "value_index"}},
      {"NonMaxSuppressionV4", {"selected_indices", "valid_outputs"}},
      {"NonMaxSuppressionV5", {"selected_indices", "selected_scores", "valid_outputs"}},
      {"MaxPoolWithArgmax", {"output", "argmax"}},
      {"SparseFillEmptyRows", {"output_indices", "output_values", "empty_row_indicator", "reverse_index_map"}},
      {"SparseReshape", {"output_indices", "output_shape"}},
      {"RaggedRange", {"rt_nested_splits", "rt_dense_values"}},
      {"TensorArrayV3", {"handle", "flow"}},
      {"TensorListPopBack", {"output_handle", "tensor"}},
      {"LookupTableExport", {"keys", "values"}},
      {"LookupTableExportV2", {"keys", "values"}},
  };
  for (size_t i = 0; i < sizeof named / sizeof named[0]; i++) {
    if (strcmp(op, named[i].op) != 0) continue;
    for (int k = 0; k < 6 && named[i].outs[k]; k++)
      if (strcmp(named[i].outs[k], arg) == 0) return k + index;
    return -1;
  }
  return index;
}

static int arg_of(const scope *s, const char *name) {
  for (size_t i = 0; s->fn && i < s->fn->n_in; i++)
    if (strcmp(s->fn->in_names[i], name) == 0) return (int)i;
  return -1;
}

/* The graph tensor a body's input names: a new string, or NULL (reported). */
static char *map_input(lower *c, const scope *s, const char *in, const char *node) {
  bool control = in[0] == '^';
  const char *ref = control ? in + 1 : in;
  if (!s->fn) return strdup(in); /* the top level keeps its names */
  char *copy = strdup(ref);
  if (!copy) return NULL;
  char *c1 = strchr(copy, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
  if (c1) *c1 = '\0';
  int a = arg_of(s, copy);
  char *out = NULL;
  if (a >= 0) { /* an argument: the tensor it is bound to */
    const char *t = s->args[a];
    if (control) {
      const char *colon = strrchr(t, ':');
      out = tfd_format("^%.*s", colon ? (int)(colon - t) : (int)strlen(t), t);
    } else {
      out = strdup(t);
    }
  } else if (control || !c1) {
    out = tfd_format("%s%s%s", control ? "^" : "", s->prefix, copy);
  } else {
    int index = atoi(c2 ? c2 + 1 : c1 + 1);
    if (c2) {
      *c2 = '\0';
      const tfd_node_def *src = tfd_graph_def_find(s->src, copy);
      index = src ? output_index(src->op, c1 + 1, index) : index;
      if (index < 0) {
        tfd_status_setf(c->st, TFD_UNIMPLEMENTED, "function '%s', node '%s': input '%s' names an output tfdev cannot place",
                        s->fn->name, node, in);
        free(copy);
        return NULL;
      }
    }
    out = tfd_format("%s%s:%d", s->prefix, copy, index);
  }
  free(copy);
  return out;
}

static tfd_code emit_nodes(lower *c, const scope *s);

/* A new node of the output graph with these inputs (control ones as "^x"). */
static tfd_node_def *add(lower *c, const char *name, const char *op, const char *const *inputs, size_t n) {
  tfd_node_def *d = tfd_graph_def_add_node(c->out, name, op, c->st);
  for (size_t i = 0; d && i < n; i++)
    if (tfd_node_def_add_input(d, inputs[i], c->st) != TFD_OK) return NULL;
  return d;
}

static tfd_code set_type_list(lower *c, tfd_node_def *d, const tfd_dtype *types, size_t n) {
  tfd_attr_value v = {.type = TFD_ATTR_LIST_TYPE, .list_len = n, .list_type = types};
  return tfd_node_def_set_attr(d, "T", &v, c->st);
}

/* The tensor output k of a function whose body was copied under scope s returns. */
static char *map_ret(lower *c, const scope *s, size_t k, const char *node) {
  const char *r = s->fn->ret[k];
  if (!r) {
    tfd_status_setf(c->st, TFD_INVALID_ARGUMENT, "node '%s': function '%s' does not say what output '%s' returns", node,
                    s->fn->name, s->fn->out_names[k]);
    return NULL;
  }
  return map_input(c, s, r, node);
}

/* The output types of a call of f from node n: f's own, or n's attr where f names a type attr
 * (a list attr such as Tout gives all of them). */
static tfd_code out_types(lower *c, const tfd_node_def *n, const tfd_function_def *f, const char *list_attr,
                          tfd_dtype *types) {
  const tfd_attr_value *list = list_attr ? tfd_node_def_attr(n, list_attr) : NULL;
  for (size_t k = 0; k < f->n_out; k++) {
    types[k] = f->out_types[k];
    if (list && list->type == TFD_ATTR_LIST_TYPE && list->list_len == f->n_out) types[k] = list->list_type[k];
    const tfd_attr_value *a = f->out_type_attrs[k] ? tfd_node_def_attr(n, f->out_type_attrs[k]) : NULL;
    if (!types[k] && a && a->type == TFD_ATTR_TYPE) types[k] = a->dtype;
    if (!types[k])
      return tfd_status_setf(c->st, TFD_UNIMPLEMENTED, "node '%s': the type of output '%s' of function '%s' is not known",
                             n->name, f->out_names[k], f->name);
  }
  return TFD_OK;
}

static const tfd_function_def *function_of(lower *c, const tfd_node_def *n, const char *attr, const scope *s) {
  const tfd_attr_value *a = attr ? tfd_node_def_attr(n, attr) : NULL;
  const char *name = attr ? (a && a->type == TFD_ATTR_STRING ? a->s : NULL) : n->op;
  if (!name) {
    tfd_status_setf(c->st, TFD_INVALID_ARGUMENT, "node '%s' (%s): attr '%s' must name a function", n->name, n->op, attr);
    return NULL;
  }
  const tfd_function_def *f = lookup(c->lib, name);
  if (!f) {
    tfd_status_setf(c->st, TFD_NOT_FOUND, "node '%s' (%s): function '%s' is not in the graph's library", n->name, n->op,
                    name);
    return NULL;
  }
  for (const scope *p = s; p; p = p->parent)
    if (p->fn == f) {
      tfd_status_setf(c->st, TFD_INVALID_ARGUMENT, "node '%s' (%s): function '%s' calls itself, which tfdev cannot inline",
                      n->name, n->op, name);
      return NULL;
    }
  return f;
}

/* Copies f's body under prefix full + "/" + part, its inputs bound to args; *outs (a new array of
 * n_out new strings) the tensors its outputs return. */
static tfd_code inline_body(lower *c, const scope *s, const tfd_node_def *n, const tfd_function_def *f, const char *full,
                            const char *part, char *const *args, size_t nargs, const char *pivot, char *const *controls,
                            size_t ncontrols, char ***outs) {
  if (nargs != f->n_in)
    return tfd_status_setf(c->st, TFD_INVALID_ARGUMENT, "node '%s' (%s): function '%s' takes %zu inputs, given %zu", n->name,
                           n->op, f->name, f->n_in, nargs);
  char *prefix = part ? tfd_format("%s/%s/", full, part) : tfd_format("%s/", full);
  if (!prefix) return oom(c);
  scope in = {prefix, f, f->body, args, pivot, controls, ncontrols, s};
  tfd_code code = emit_nodes(c, &in);
  char **r = code == TFD_OK ? calloc(f->n_out + 1, sizeof *r) : NULL;
  if (code == TFD_OK && !r) code = oom(c);
  for (size_t k = 0; code == TFD_OK && k < f->n_out; k++)
    if (!(r[k] = map_ret(c, &in, k, n->name))) code = failed(c);
  free(prefix);
  if (code != TFD_OK) {
    free_strings(r, f->n_out);
    return code;
  }
  *outs = r;
  return TFD_OK;
}

/* The node named full: an IdentityN of outs (types[n]), so "full:k" and "^full" keep their meaning. */
static tfd_code outputs_node(lower *c, const tfd_node_def *n, const char *full, char *const *outs, const tfd_dtype *types,
                             size_t count) {
  if (count == 0)
    return tfd_status_setf(c->st, TFD_UNIMPLEMENTED, "node '%s' (%s): a call without outputs is not supported", n->name,
                           n->op);
  tfd_node_def *d = add(c, full, "IdentityN", (const char *const *)outs, count);
  return d ? set_type_list(c, d, types, count) : tfd_status_code(c->st);
}

/* n's inputs mapped into the output graph, data ones first: *data of them, the rest "^x". */
typedef struct mapped {
  char **in;
  size_t n, data;
} mapped;

static void mapped_free(mapped *m) { free_strings(m->in, m->n); }

static tfd_code map_inputs(lower *c, const scope *s, const tfd_node_def *n, mapped *m) {
  *m = (mapped){calloc(n->ninputs + 1, sizeof(char *)), 0, 0};
  if (!m->in) return oom(c);
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < n->ninputs; i++) {
      if ((n->inputs[i][0] == '^') != (pass == 1)) continue;
      if (!(m->in[m->n] = map_input(c, s, n->inputs[i], n->name))) {
        mapped_free(m);
        return failed(c);
      }
      m->n++;
      if (pass == 0) m->data++;
    }
  return TFD_OK;
}

/* A call: the body under full/, the call's control inputs on its nodes without inputs. */
static tfd_code lower_call(lower *c, const scope *s, const tfd_node_def *n, const char *full, mapped *m) {
  const tfd_function_def *f = function_of(c, n, is_call(n->op) ? "f" : NULL, s);
  if (!f) return tfd_status_code(c->st);
  tfd_dtype *types = calloc(f->n_out + 1, sizeof *types);
  if (!types) return oom(c);
  char **outs = NULL;
  tfd_code code = out_types(c, n, f, "Tout", types);
  if (code == TFD_OK)
    code = inline_body(c, s, n, f, full, NULL, m->in, m->data, s->pivot, m->in + m->data, m->n - m->data, &outs);
  if (code == TFD_OK) code = outputs_node(c, n, full, outs, types, f->n_out);
  free_strings(outs, f->n_out);
  free(types);
  return code;
}

/* pred as a bool: itself, or NotEqual(pred, ZerosLike(pred)) under full/<what>. */
static char *truth(lower *c, const char *full, const char *what, const char *pred, tfd_dtype dt) {
  if (dt == TFD_BOOL || dt == 0) return strdup(pred);
  char *zero = tfd_format("%s/%s_zero", full, what), *b = tfd_format("%s/%s_bool", full, what);
  const char *in2[2] = {pred, zero};
  bool ok = zero && b && add(c, zero, "ZerosLike", in2, 1) && add(c, b, "NotEqual", in2, 2);
  free(zero);
  if (!ok) {
    free(b);
    return NULL;
  }
  return b;
}

static tfd_code lower_if(lower *c, const scope *s, const tfd_node_def *n, const char *full, mapped *m) {
  const tfd_function_def *fs[2] = {function_of(c, n, "then_branch", s), NULL};
  if (!fs[0] || !(fs[1] = function_of(c, n, "else_branch", s))) return tfd_status_code(c->st);
  if (m->data < 1)
    return tfd_status_setf(c->st, TFD_INVALID_ARGUMENT, "node '%s' (%s) needs a condition input", n->name, n->op);
  if (fs[0]->n_out != fs[1]->n_out)
    return tfd_status_setf(c->st, TFD_INVALID_ARGUMENT,
                           "node '%s' (%s): its branches '%s' and '%s' return %zu and %zu outputs", n->name, n->op,
                           fs[0]->name, fs[1]->name, fs[0]->n_out, fs[1]->n_out);
  size_t nargs = m->data - 1, nout = fs[0]->n_out;
  const tfd_attr_value *tc = tfd_node_def_attr(n, "Tcond");
  char *pred = truth(c, full, "cond", m->in[0], tc && tc->type == TFD_ATTR_TYPE ? tc->dtype : 0);
  char **sw = calloc(nargs + 2, sizeof *sw);
  char **args[2] = {calloc(nargs + 1, sizeof(char *)), calloc(nargs + 1, sizeof(char *))};
  char *pivot[2] = {tfd_format("%s/pivot_t", full), tfd_format("%s/pivot_f", full)}, **outs[2] = {NULL, NULL};
  tfd_dtype *types = calloc(nout + 1, sizeof *types);
  tfd_code code = pred && sw && args[0] && args[1] && pivot[0] && pivot[1] && types ? TFD_OK : failed(c);
  /* Switches: the predicate's own (the pivots), then one per argument, each after the If's control inputs. */
  for (size_t j = 0; code == TFD_OK && j <= nargs; j++) {
    sw[j] = j == 0 ? tfd_format("%s/switch_pred", full) : tfd_format("%s/switch_%zu", full, j - 1);
    const char *in[2] = {j == 0 ? pred : m->in[j], pred};
    tfd_node_def *d = sw[j] ? add(c, sw[j], "Switch", in, 2) : NULL;
    for (size_t k = m->data; d && k < m->n; k++)
      if (tfd_node_def_add_input(d, m->in[k], c->st) != TFD_OK) d = NULL;
    if (!d) code = failed(c);
    for (int b = 0; code == TFD_OK && j > 0 && b < 2; b++)
      if (!(args[b][j - 1] = tfd_format("%s:%d", sw[j], 1 - b))) code = oom(c);
  }
  for (int b = 0; code == TFD_OK && b < 2; b++) {
    char *side = tfd_format("%s:%d", sw[0], 1 - b);
    const char *in[1] = {side};
    if (!side || !add(c, pivot[b], "Identity", in, 1)) code = failed(c);
    free(side);
  }
  for (int b = 0; code == TFD_OK && b < 2; b++)
    code = inline_body(c, s, n, fs[b], full, b == 0 ? "then" : "else", args[b], nargs, pivot[b], NULL, 0, &outs[b]);
  if (code == TFD_OK) code = out_types(c, n, fs[0], "Tout", types);
  char **merged = code == TFD_OK ? calloc(nout + 1, sizeof *merged) : NULL;
  if (code == TFD_OK && !merged) code = oom(c);
  for (size_t k = 0; code == TFD_OK && k < nout; k++) {
    char *name = tfd_format("%s/merge_%zu", full, k);
    const char *in[2] = {outs[0][k], outs[1][k]};
    if (!name || !add(c, name, "Merge", in, 2) || !(merged[k] = tfd_format("%s:0", name)))
      code = failed(c);
    free(name);
  }
  if (code == TFD_OK) code = outputs_node(c, n, full, merged, types, nout);
  free_strings(merged, nout);
  for (int b = 0; b < 2; b++) {
    free_strings(outs[b], nout);
    free_strings(args[b], nargs);
    free(pivot[b]);
  }
  free_strings(sw, nargs + 1);
  free(types);
  free(pred);
  return code;
}

static tfd_code lower_while(lower *c, const scope *s, const tfd_node_def *n, const char *full, mapped *m) {
  const tfd_function_def *cond = function_of(c, n, "cond", s), *body = cond ? function_of(c, n, "body", s) : NULL;
  if (!body) return tfd_status_code(c->st);
  size_t nv = m->data;
  if (nv == 0) return tfd_status_setf(c->st, TFD_INVALID_ARGUMENT, "node '%s' (%s) has no loop variables", n->name, n->op);
  if (cond->n_out != 1)
    return tfd_status_setf(c->st, TFD_INVALID_ARGUMENT, "node '%s' (%s): its cond '%s' returns %zu outputs, not 1", n->name,
                           n->op, cond->name, cond->n_out);
  if (body->n_out != nv)
    return tfd_status_setf(c->st, TFD_INVALID_ARGUMENT,
                           "node '%s' (%s): its body '%s' returns %zu outputs for %zu loop variables", n->name, n->op,
                           body->name, body->n_out, nv);
  const tfd_attr_value *pi = tfd_node_def_attr(n, "parallel_iterations");
  tfd_attr_value frame = {.type = TFD_ATTR_STRING, .s = full}, konst = {.type = TFD_ATTR_BOOL, .b = false},
                 iters = {.type = TFD_ATTR_INT, .i = pi && pi->type == TFD_ATTR_INT ? pi->i : 10};
  char **merged = calloc(nv + 1, sizeof(char *)), **body_in = calloc(nv + 1, sizeof(char *));
  char **exits = calloc(nv + 1, sizeof(char *));
  char **cond_out = NULL, **body_out = NULL, *pred = NULL, *loop_cond = tfd_format("%s/loop_cond", full);
  tfd_dtype *types = calloc(nv + 1, sizeof *types), cond_type = 0;
  tfd_code code = merged && body_in && exits && types && loop_cond ? TFD_OK : oom(c);
  for (size_t i = 0; code == TFD_OK && i < nv; i++) { /* Enter -> Merge(enter, next) */
    char *enter = tfd_format("%s/enter_%zu", full, i), *merge = tfd_format("%s/merge_%zu", full, i),
         *next = tfd_format("%s/next_%zu", full, i);
    const char *in[2] = {enter, next};
    tfd_node_def *e = enter && merge && next ? add(c, enter, "Enter", (const char *const *)&m->in[i], 1) : NULL;
    for (size_t k = m->data; e && k < m->n; k++)
      if (tfd_node_def_add_input(e, m->in[k], c->st) != TFD_OK) e = NULL;
    bool ok = e && tfd_node_def_set_attr(e, "frame_name", &frame, c->st) == TFD_OK &&
              tfd_node_def_set_attr(e, "is_constant", &konst, c->st) == TFD_OK &&
              tfd_node_def_set_attr(e, "parallel_iterations", &iters, c->st) == TFD_OK && add(c, merge, "Merge", in, 2) &&
              (merged[i] = tfd_format("%s:0", merge));
    if (!ok) code = failed(c);
    free(enter), free(merge), free(next);
  }
  char *cond_pivot = code == TFD_OK ? tfd_format("%s/merge_0", full) : NULL;
  if (code == TFD_OK)
    code = cond_pivot ? inline_body(c, s, n, cond, full, "cond", merged, nv, cond_pivot, NULL, 0, &cond_out) : oom(c);
  cond_type = cond->out_types[0]; /* 0 (a type attr): taken as bool */
  if (code == TFD_OK && !(pred = truth(c, full, "cond", cond_out[0], cond_type))) code = failed(c);
  if (code == TFD_OK && !add(c, loop_cond, "LoopCond", (const char *const *)&pred, 1)) code = tfd_status_code(c->st);
  for (size_t i = 0; code == TFD_OK && i < nv; i++) { /* Switch: false -> Exit, true -> Identity into the body */
    char *sw = tfd_format("%s/switch_%zu", full, i), *ex = tfd_format("%s/exit_%zu", full, i),
         *bi = tfd_format("%s/body_in_%zu", full, i), *f = tfd_format("%s/switch_%zu:0", full, i),
         *t = tfd_format("%s/switch_%zu:1", full, i);
    const char *in[2] = {merged[i], loop_cond};
    bool ok = sw && ex && bi && f && t && add(c, sw, "Switch", in, 2) && add(c, ex, "Exit", (const char *const *)&f, 1) &&
              add(c, bi, "Identity", (const char *const *)&t, 1) && (exits[i] = tfd_format("%s:0", ex)) &&
              (body_in[i] = tfd_format("%s:0", bi));
    if (!ok) code = failed(c);
    free(sw), free(ex), free(bi), free(f), free(t);
  }
  char *body_pivot = code == TFD_OK ? tfd_format("%s/body_in_0", full) : NULL;
  if (code == TFD_OK)
    code = body_pivot ? inline_body(c, s, n, body, full, "body", body_in, nv, body_pivot, NULL, 0, &body_out) : oom(c);
  for (size_t i = 0; code == TFD_OK && i < nv; i++) {
    char *next = tfd_format("%s/next_%zu", full, i);
    if (!next || !add(c, next, "NextIteration", (const char *const *)&body_out[i], 1))
      code = failed(c);
    free(next);
  }
  if (code == TFD_OK) code = out_types(c, n, body, "T", types);
  if (code == TFD_OK) code = outputs_node(c, n, full, exits, types, nv);
  free_strings(merged, nv), free_strings(body_in, nv), free_strings(exits, nv);
  free_strings(cond_out, 1), free_strings(body_out, nv);
  free(pred), free(loop_cond), free(cond_pivot), free(body_pivot), free(types);
  return code;
}

/* A plain node, copied with its inputs mapped; one without inputs inside a body takes the pivot and
 * the call's control inputs. */
static tfd_code copy_node(lower *c, const scope *s, const tfd_node_def *n, const char *full, mapped *m) {
  tfd_node_def *d = add(c, full, n->op, (const char *const *)m->in, m->n);
  if (!d) return tfd_status_code(c->st);
  if (m->n == 0 && s->pivot) {
    char *p = tfd_format("^%s", s->pivot);
    tfd_code code = p ? tfd_node_def_add_input(d, p, c->st) : oom(c);
    free(p);
    if (code != TFD_OK) return code;
  }
  for (size_t k = 0; m->n == 0 && k < s->ncontrols; k++)
    if (tfd_node_def_add_input(d, s->controls[k], c->st) != TFD_OK) return tfd_status_code(c->st);
  if (n->device && *n->device && tfd_node_def_set_device(d, n->device, c->st) != TFD_OK) return tfd_status_code(c->st);
  for (size_t i = 0; i < n->nattrs; i++)
    if (tfd_node_def_set_attr(d, n->attrs[i].name, &n->attrs[i].value, c->st) != TFD_OK) return tfd_status_code(c->st);
  return TFD_OK;
}

static tfd_code emit_nodes(lower *c, const scope *s) {
  for (size_t i = 0; i < s->src->n; i++) {
    const tfd_node_def *n = s->src->nodes[i];
    char *full = tfd_format("%s%s", s->prefix, n->name);
    mapped m = {NULL, 0, 0};
    tfd_code code = full ? map_inputs(c, s, n, &m) : oom(c);
    if (code == TFD_OK) {
      if (is_if(n->op)) code = lower_if(c, s, n, full, &m);
      else if (is_while(n->op)) code = lower_while(c, s, n, full, &m);
      else if (is_call(n->op) || lookup(c->lib, n->op)) code = lower_call(c, s, n, full, &m);
      else code = copy_node(c, s, n, full, &m);
    }
    mapped_free(&m);
    free(full);
    if (code != TFD_OK) return code;
  }
  return TFD_OK;
}

tfd_code tfd_function_library_inline(tfd_graph_def *g, const tfd_function_library *lib, tfd_status *st) {
  bool any = false;
  for (size_t i = 0; i < g->n && !any; i++) any = tfd_function_op(g->nodes[i]->op) || lookup(lib, g->nodes[i]->op);
  if (!any) return TFD_OK;
  lower c = {lib, tfd_graph_def_new(), st};
  if (!c.out) return oom(&c);
  scope top = {"", NULL, g, NULL, NULL, NULL, 0, NULL};
  tfd_code code = emit_nodes(&c, &top);
  if (code == TFD_OK) { /* the new nodes into g, g's old ones out with the scratch graph */
    tfd_node_def **nodes = g->nodes;
    size_t n = g->n, cap = g->cap;
    g->nodes = c.out->nodes, g->n = c.out->n, g->cap = c.out->cap;
    c.out->nodes = nodes, c.out->n = n, c.out->cap = cap;
  }
  tfd_graph_def_free(c.out);
  return code;
}
