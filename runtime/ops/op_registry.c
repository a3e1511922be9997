/* The op registry: looks ops up by name among the built-in families (builtin_ops.c) and the ops
 * registered at run time, completes a node's attributes and checks its arity before its family's shape
 * function runs. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/api_args.h"
#include "../core/status_internal.h"
#include "op_registry.h"
#include "tfdev/custom_op.h"

/* The built-in op at index i of all the families in tfd_builtin_op_families' order, or NULL. */
static const tfd_op_def *builtin_at(int i) {
  for (int f = 0; tfd_builtin_op_families[f]; f++) {
    const tfd_op_family *fam = tfd_builtin_op_families[f];
    if (i < fam->count) return i >= 0 ? &fam->ops[i] : NULL;
    i -= fam->count;
  }
  return NULL;
}

static int builtin_count(void) {
  int n = 0;
  for (int f = 0; tfd_builtin_op_families[f]; f++) n += tfd_builtin_op_families[f]->count;
  return n;
}

static const tfd_op_def *find_builtin(const char *name) {
  for (int f = 0; tfd_builtin_op_families[f]; f++) {
    const tfd_op_family *fam = tfd_builtin_op_families[f];
    for (int i = 0; i < fam->count; i++)
      if (strcmp(fam->ops[i].name, name) == 0) return &fam->ops[i];
  }
  return NULL;
}

/* ---- ops registered at run time (include/tfdev/custom_op.h) ----
 * Each is a heap copy made once and kept as long as the library (registrations are permanent), so a
 * def found stays valid once the lock is dropped. */
typedef struct custom_def {
  tfd_op_def def;
  tfd_attr_def attrs[TFD_MAX_CUSTOM_ATTRS + 1]; /* ends with a NULL name */
  tfd_code (*infer)(void *user, tfd_infer_ctx *ctx, tfd_status *status);
  void *user;
} custom_def;

static pthread_mutex_t custom_mu = PTHREAD_MUTEX_INITIALIZER;
static custom_def **customs;
static int num_customs, cap_customs;

static const custom_def *find_custom(const char *name) {
  pthread_mutex_lock(&custom_mu);
  const custom_def *found = NULL;
  for (int i = 0; i < num_customs && !found; i++)
    if (strcmp(customs[i]->def.name, name) == 0) found = customs[i];
  pthread_mutex_unlock(&custom_mu);
  return found;
}

const tfd_op_def *tfd_op_lookup(const char *name) {
  if (!name) return NULL;
  const tfd_op_def *builtin = find_builtin(name);
  if (builtin) return builtin;
  const custom_def *c = find_custom(name);
  return c ? &c->def : NULL;
}

/* The inference of every custom op: outputs default to input 0's dtype and an unknown shape, then
 * the op's own function, if any, says better. */
static tfd_code infer_custom(tfd_infer_ctx *c, tfd_status *st) {
  const custom_def *d = find_custom(tfd_node_def_op(c->node));
  for (int o = 0; o < c->num_outputs; o++) {
    c->out_types[o] = c->num_inputs > 0 ? c->in_types[0] : TFD_FLOAT32;
    c->out_shapes[o].ndims = -1;
  }
  if (!d || !d->infer) return TFD_OK;
  tfd_status mine = TFD_STATUS_INIT;
  if (d->infer(d->user, c, &mine) == TFD_OK && tfd_status_code(&mine) == TFD_OK) return TFD_OK;
  tfd_code code = tfd_status_code(&mine) != TFD_OK ? tfd_status_code(&mine) : TFD_INVALID_ARGUMENT;
  tfd_status_setf(st, code, "node '%s' (%s): %s", tfd_node_def_name(c->node), d->def.name,
                  *tfd_status_message(&mine) ? tfd_status_message(&mine) : "its inference function failed");
  tfd_status_clear(&mine);
  return code;
}

static bool valid_op_name(const char *n) {
  if (!n || !((*n >= 'A' && *n <= 'Z') || (*n >= 'a' && *n <= 'z'))) return false;
  size_t len = 0;
  for (; n[len]; len++)
    if (!((n[len] >= 'A' && n[len] <= 'Z') || (n[len] >= 'a' && n[len] <= 'z') || (n[len] >= '0' && n[len] <= '9') ||
          n[len] == '_'))
      return false;
  return len < 128;
}

tfd_code tfd_custom_op_register(const tfd_custom_op *op, tfd_status *st) {
  tfd_status_reset(st);
  static const char fn[] = "tfd_custom_op_register";
  if (tfd_arg_required(st, fn, "op", op) || tfd_arg_required(st, fn, "op->name", op->name) ||
      tfd_arg_count(st, fn, "op->num_inputs", op->num_inputs) ||
      tfd_arg_count(st, fn, "op->num_outputs", op->num_outputs) ||
      tfd_arg_array(st, fn, "op->attrs", op->attrs, "op->num_attrs", op->num_attrs))
    return TFD_INVALID_ARGUMENT;
  for (int i = 0; i < op->num_attrs; i++)
    if (!op->attrs[i].name) return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "%s: op->attrs[%d].name is NULL", fn, i);
  if (!valid_op_name(op->name))
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "a custom op needs a name of letters, digits and '_' starting with a letter, got '%s'",
                           op && op->name ? op->name : "(null)");
  _Static_assert(TFD_CUSTOM_OP_MAX_OUTPUTS <= TFD_MAX_OP_OUTPUTS, "custom ops fit a node's outputs");
  if (op->num_inputs < 0 || op->num_inputs > TFD_MAX_CUSTOM_INPUTS || op->num_outputs < 0 ||
      op->num_outputs > TFD_CUSTOM_OP_MAX_OUTPUTS)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "op %s: inputs must be 0 to %d and outputs 0 to %d, got %d and %d",
                           op->name, TFD_MAX_CUSTOM_INPUTS, TFD_CUSTOM_OP_MAX_OUTPUTS, op->num_inputs, op->num_outputs);
  if (op->num_attrs < 0 || op->num_attrs > TFD_MAX_CUSTOM_ATTRS || (op->num_attrs > 0 && !op->attrs))
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "op %s: at most %d attributes", op->name, TFD_MAX_CUSTOM_ATTRS);
  custom_def *d = calloc(1, sizeof *d);
  char *name = strdup(op->name);
  bool ok = d && name;
  for (int i = 0; ok && i < op->num_attrs; i++) {
    const tfd_custom_attr *a = &op->attrs[i];
    bool typed = a->type == TFD_ATTR_INT || a->type == TFD_ATTR_FLOAT || a->type == TFD_ATTR_BOOL ||
                 a->type == TFD_ATTR_STRING || a->type == TFD_ATTR_TYPE;
    if (!a->name || !*a->name || !typed || (a->default_value && a->default_value->type != a->type)) {
      free(name);
      for (int j = 0; j < i; j++) {
        free((char *)d->attrs[j].name);
        free((char *)d->attrs[j].dflt_s);
      }
      free(d);
      return tfd_status_setf(
          st, TFD_INVALID_ARGUMENT,
          "op %s: attr %d ('%s') must be int, float, bool, string or type, with a default of that type", op->name, i,
          a->name ? a->name : "");
    }
    tfd_attr_def *ad = &d->attrs[i];
    ad->name = strdup(a->name);
    ad->type = a->type;
    ad->required = !a->default_value;
    if (a->default_value) {
      const tfd_attr_value *v = a->default_value;
      ad->dflt_i = v->type == TFD_ATTR_BOOL ? v->b : v->type == TFD_ATTR_TYPE ? (int64_t)v->dtype : v->i;
      ad->dflt_f = v->f;
      if (v->type == TFD_ATTR_STRING) ad->dflt_s = strdup(v->s ? v->s : "");
      ok = v->type != TFD_ATTR_STRING || ad->dflt_s;
    }
    ok = ok && ad->name;
    /* "T" without a default is TensorFlow's type attribute: inferred from input 0. */
    if (a->type == TFD_ATTR_TYPE && !a->default_value && strcmp(a->name, "T") == 0 && op->num_inputs > 0) {
      d->def.type_attr = "T";
      ad->required = false;
    }
  }
  if (!ok) {
    if (d)
      for (int j = 0; j < op->num_attrs; j++) {
        free((char *)d->attrs[j].name);
        free((char *)d->attrs[j].dflt_s);
      }
    free(name);
    free(d);
    return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory registering op %s", op->name);
  }
  d->def.name = name;
  d->def.min_inputs = d->def.max_inputs = op->num_inputs;
  d->def.num_outputs = op->num_outputs;
  d->def.stateful = op->stateful;
  d->def.attrs = d->attrs;
  d->def.infer = infer_custom;
  d->infer = op->infer;
  d->user = op->user;
  pthread_mutex_lock(&custom_mu);
  bool taken = find_builtin(name) != NULL;
  for (int i = 0; i < num_customs && !taken; i++) taken = strcmp(customs[i]->def.name, name) == 0;
  bool grown = true;
  if (!taken && num_customs == cap_customs) {
    int cap = cap_customs ? cap_customs * 2 : 16;
    custom_def **more = realloc(customs, (size_t)cap * sizeof *more);
    if (more) {
      customs = more;
      cap_customs = cap;
    } else {
      grown = false;
    }
  }
  if (!taken && grown) customs[num_customs++] = d;
  pthread_mutex_unlock(&custom_mu);
  if (taken || !grown) {
    for (int j = 0; j < op->num_attrs; j++) {
      free((char *)d->attrs[j].name);
      free((char *)d->attrs[j].dflt_s);
    }
    free(name);
    free(d);
    return taken ? tfd_status_setf(st, TFD_ALREADY_EXISTS, "op %s is already registered", op->name)
                 : tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory registering op %s", op->name);
  }
  return TFD_OK;
}

/* When a Lua state that loaded core.so closes, Lua unloads it and libtfdev with it: what was
 * registered goes too. */
__attribute__((destructor)) static void free_customs(void) {
  for (int i = 0; i < num_customs; i++) {
    for (const tfd_attr_def *a = customs[i]->attrs; a->name; a++) {
      free((char *)a->name);
      free((char *)a->dflt_s);
    }
    free((char *)customs[i]->def.name);
    free(customs[i]);
  }
  free(customs);
  customs = NULL;
  num_customs = cap_customs = 0;
}

int tfd_infer_num_inputs(const tfd_infer_context *c) { return c->num_inputs; }
tfd_dtype tfd_infer_input_dtype(const tfd_infer_context *c, int i) {
  return i >= 0 && i < c->num_inputs ? c->in_types[i] : 0;
}
void tfd_infer_input_shape(const tfd_infer_context *c, int i, tfd_shape *out) {
  if (i >= 0 && i < c->num_inputs)
    *out = c->in_shapes[i];
  else
    out->ndims = -1;
}
const tfd_node_def *tfd_infer_node(const tfd_infer_context *c) { return c->node; }
void tfd_infer_set_output(tfd_infer_context *c, int i, tfd_dtype dtype, const tfd_shape *shape) {
  if (i < 0 || i >= c->num_outputs) return;
  c->out_types[i] = dtype;
  if (shape)
    c->out_shapes[i] = *shape;
  else
    c->out_shapes[i].ndims = -1;
}

/* Ops whose output count comes from an attr of the node (num_outputs TFD_OUTPUTS_FROM_ATTR): an int
 * (Unpack's num, ShapeN's N) or the length of a list(type) (IdentityN's T), plus `extra` (RaggedGather:
 * its OUTPUT_RAGGED_RANK splits and the values). per_input: one output per input, so a node without the
 * attr (a builder that leaves N to its default) has as many as inputs. */
static const struct {
  const char *op, *attr;
  bool list, per_input;
  int extra;
} output_count_attrs[] = {
    {"Unpack", "num", false, false, 0},       {"Split", "num_split", false, false, 0},
    {"SplitV", "num_split", false, false, 0}, {"RaggedGather", "OUTPUT_RAGGED_RANK", false, false, 1},
    {"ShapeN", "N", false, true, 0},          {"IdentityN", "T", true, true, 0}};

static int output_count_entry(const tfd_op_def *op) {
  for (size_t i = 0; i < sizeof output_count_attrs / sizeof output_count_attrs[0]; i++)
    if (strcmp(output_count_attrs[i].op, op->name) == 0) return (int)i;
  return -1;
}

const char *tfd_op_num_outputs_attr(const tfd_op_def *op) {
  if (op->num_outputs == TFD_OUTPUTS_PER_COMPONENT) return "component_types";
  int e = output_count_entry(op);
  return e >= 0 ? output_count_attrs[e].attr : NULL;
}

int tfd_op_num_outputs(const tfd_op_def *op, const tfd_node_def *node) {
  if (op->num_outputs >= 0) return op->num_outputs;
  if (op->num_outputs == TFD_OUTPUTS_FROM_ATTR) {
    int e = output_count_entry(op);
    const tfd_attr_value *n = e >= 0 ? tfd_node_def_attr(node, output_count_attrs[e].attr) : NULL;
    if (!n) return -1;
    int extra = output_count_attrs[e].extra;
    int64_t count = output_count_attrs[e].list ? (n->type == TFD_ATTR_LIST_TYPE ? (int64_t)n->list_len : -1)
                                               : (n->type == TFD_ATTR_INT ? n->i : -1);
    if (count < 0 || count + extra < 1 || count + extra > TFD_MAX_OP_OUTPUTS) return -1;
    return (int)(count + extra);
  }
  const tfd_attr_value *types = tfd_node_def_attr(node, "component_types");
  if (!types || types->type != TFD_ATTR_LIST_TYPE || types->list_len < 1 || types->list_len > TFD_MAX_QUEUE_COMPONENTS)
    return -1;
  return (int)types->list_len;
}

int tfd_op_count(void) {
  pthread_mutex_lock(&custom_mu);
  int n = builtin_count() + num_customs;
  pthread_mutex_unlock(&custom_mu);
  return n;
}

const tfd_op_def *tfd_op_at(int i) {
  int builtin = builtin_count();
  if (i < 0) return NULL;
  if (i < builtin) return builtin_at(i);
  pthread_mutex_lock(&custom_mu);
  const tfd_op_def *d = i - builtin < num_customs ? &customs[i - builtin]->def : NULL;
  pthread_mutex_unlock(&custom_mu);
  return d;
}

static const char *attr_type_name(tfd_attr_type t) {
  static const char *const names[] = {"",      "int",    "float",     "bool",        "string",     "type",
                                      "shape", "tensor", "list(int)", "list(float)", "list(type)", "list(string)"};
  return (int)t >= 0 && t <= TFD_ATTR_LIST_STRING ? names[t] : "?";
}

tfd_code tfd_op_complete_attrs(const tfd_op_def *op, tfd_node_def *node, const tfd_dtype *in_types, int num_inputs,
                               tfd_status *st) {
  const char *name = tfd_node_def_name(node);
  for (const tfd_attr_def *a = op->attrs; a->name; a++) {
    const tfd_attr_value *v = tfd_node_def_attr(node, a->name);
    if (v) {
      bool list_want = a->type >= TFD_ATTR_LIST_INT, list_got = v->type >= TFD_ATTR_LIST_INT;
      if (v->type != a->type && list_want && list_got && v->list_len == 0) {
        /* An empty list is a value of every list type, as in TensorFlow (a binary GraphDef's empty
         * AttrValue.list says no type, and the loaders store it as list(string)): retyped, so kernels
         * read the list they expect. */
        tfd_attr_value empty = {.type = a->type};
        if (tfd_node_def_set_attr(node, a->name, &empty, st) != TFD_OK) return tfd_status_code(st);
        continue;
      }
      if (v->type != a->type)
        return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): attr '%s' must be %s %s, got %s %s", name,
                               op->name, a->name, tfd_article(attr_type_name(a->type)), attr_type_name(a->type),
                               tfd_article(attr_type_name(v->type)), attr_type_name(v->type));
      continue;
    }
    tfd_attr_value d = {0};
    d.type = a->type;
    if (op->type_attr && strcmp(a->name, op->type_attr) == 0) {
      if (op->type_input >= num_inputs) continue; /* nothing to infer it from; optional */
      d.dtype = in_types[op->type_input];
    } else if (a->required) {
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): missing required attr '%s'", name, op->name,
                             a->name);
    } else if (a->type == TFD_ATTR_SHAPE || a->type == TFD_ATTR_TENSOR || a->type >= TFD_ATTR_LIST_INT) {
      continue; /* optional, no default */
    } else {
      d.i = a->dflt_i;
      d.b = a->dflt_i != 0;
      d.f = a->dflt_f;
      d.dtype = (tfd_dtype)a->dflt_i;
      d.s = a->dflt_s ? a->dflt_s : "";
      if (a->type == TFD_ATTR_TYPE && !d.dtype) continue;
      if (strcmp(a->name, "N") == 0) /* the values (not ConcatV2's or Concat's axis) */
        d.i = strcmp(op->name, "ConcatV2") == 0 || strcmp(op->name, "Concat") == 0 ? num_inputs - 1 : num_inputs;
    }
    if (tfd_node_def_set_attr(node, a->name, &d, st) != TFD_OK) return tfd_status_code(st);
  }
  if (op->type_attr && !op->allowed_types) {
    const tfd_attr_value *t = tfd_node_def_attr(node, op->type_attr);
    if (t && t->dtype == TFD_VARIANT)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                             "node '%s' (%s): %s=variant is not supported: variant tensors (TensorList handles) "
                             "only pass through Identity, control flow and the TensorList ops",
                             name, op->name, op->type_attr);
  }
  if (op->type_attr && op->allowed_types) {
    const tfd_attr_value *t = tfd_node_def_attr(node, op->type_attr);
    if (t && !(op->allowed_types & (1u << t->dtype))) {
      char allowed[128] = "";
      for (int d = 1; d < 32; d++)
        if (op->allowed_types & (1u << d)) {
          if (*allowed) strcat(allowed, ", ");
          strcat(allowed, tfd_dtype_name((tfd_dtype)d));
        }
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): %s=%s is not allowed (allowed: %s)", name,
                             op->name, op->type_attr, tfd_dtype_name(t->dtype), allowed);
    }
  }
  /* A declared T must agree with what the input actually is. */
  if (op->type_attr && op->type_input < num_inputs) {
    const tfd_attr_value *t = tfd_node_def_attr(node, op->type_attr);
    if (t && t->dtype != in_types[op->type_input])
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): %s is %s but input %d is %s", name, op->name,
                             op->type_attr, tfd_dtype_name(t->dtype), op->type_input,
                             tfd_dtype_name(in_types[op->type_input]));
  }
  return TFD_OK;
}

tfd_code tfd_op_infer_node(const tfd_op_def *op, tfd_node_def *node, int num_inputs, const tfd_dtype *in_types,
                           const tfd_shape *in_shapes, const tfd_tensor *const *in_values, int num_outputs,
                           tfd_dtype *out_types, tfd_shape *out_shapes, tfd_status *st) {
  if (tfd_op_complete_attrs(op, node, in_types, num_inputs, st) != TFD_OK) return tfd_status_code(st);
  tfd_infer_ctx c = {node, num_inputs, in_types, in_shapes, in_values, num_outputs, out_types, out_shapes};
  if (op->infer(&c, st) != TFD_OK) return tfd_status_code(st);
  /* A fully known shape must be one a tensor can have (TensorShape's 2^63-1 element rule). */
  for (int o = 0; o < num_outputs; o++) {
    const tfd_shape *sh = &out_shapes[o];
    if (tfd_shape_is_known(sh) && tfd_shape_numel(sh) < 0) {
      char buf[256];
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                             "node '%s' (%s): output %d has shape %s: shape is too large (more than 2^63-1 elements)",
                             tfd_node_def_name(node), op->name, o, tfd_shape_string(sh, buf, sizeof buf));
    }
  }
  return TFD_OK;
}

/* ---- the public view (include/tfdev/ops.h) ---- */
#include "tfdev/ops.h"

int tfd_ops_count(void) { return tfd_op_count(); }
const char *tfd_ops_name(int i) { return tfd_op_at(i) ? tfd_op_at(i)->name : NULL; }
bool tfd_ops_exists(const char *op) { return tfd_op_lookup(op) != NULL; }
bool tfd_ops_is_stateful(const char *op) { return tfd_op_lookup(op) && tfd_op_lookup(op)->stateful; }
bool tfd_ops_user_visible(const char *op) { return tfd_op_lookup(op) && !tfd_op_lookup(op)->runtime_only; }

int tfd_ops_attr_type(const char *op, const char *attr) {
  const tfd_op_def *d = tfd_op_lookup(op);
  if (!d || !attr) return 0;
  for (const tfd_attr_def *a = d->attrs; a->name; a++)
    if (strcmp(a->name, attr) == 0) return (int)a->type;
  return 0;
}

tfd_code tfd_op_check_arity(const tfd_op_def *op, const tfd_node_def *node, int num_inputs, int *num_outputs,
                            tfd_status *st) {
  const char *name = tfd_node_def_name(node);
  if (num_inputs < op->min_inputs || (op->max_inputs >= 0 && num_inputs > op->max_inputs)) {
    if (op->min_inputs == op->max_inputs)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s) takes %d input%s, got %d", name, op->name,
                             op->min_inputs, op->min_inputs == 1 ? "" : "s", num_inputs);
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s) takes at least %d inputs, got %d", name, op->name,
                           op->min_inputs, num_inputs);
  }
  *num_outputs = tfd_op_num_outputs(op, node);
  if (*num_outputs >= 0) return TFD_OK;
  int e = op->num_outputs == TFD_OUTPUTS_FROM_ATTR ? output_count_entry(op) : -1;
  if (e >= 0 && output_count_attrs[e].per_input && !tfd_node_def_attr(node, output_count_attrs[e].attr) &&
      !output_count_attrs[e].list && num_inputs <= TFD_MAX_OP_OUTPUTS) {
    *num_outputs = num_inputs; /* the attr's default, which tfd_op_complete_attrs fills in */
    return TFD_OK;
  }
  if (e >= 0 && output_count_attrs[e].list)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (%s): attr '%s' must list 1 to %d dtypes (tfdev supports at most %d outputs)",
                           name, op->name, output_count_attrs[e].attr, TFD_MAX_OP_OUTPUTS, TFD_MAX_OP_OUTPUTS);
  if (op->num_outputs == TFD_OUTPUTS_PER_COMPONENT)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): component_types must list 1 to %d dtypes", name,
                           op->name, TFD_MAX_QUEUE_COMPONENTS);
  int extra = e >= 0 ? output_count_attrs[e].extra : 0;
  return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                         "node '%s' (%s): attr '%s' must be an int from %d to %d (tfdev supports at most %d outputs)",
                         name, op->name, tfd_op_num_outputs_attr(op), 1 - extra, TFD_MAX_OP_OUTPUTS - extra,
                         TFD_MAX_OP_OUTPUTS);
}

/* The checks graph.c's resolve makes of one node (op known, input count, output count), then the shared
 * inference. Inputs a caller does not know the value of may be given as a NULL in_values. */
tfd_code tfd_ops_infer(tfd_node_def *node, int num_inputs, const tfd_dtype *in_types, const tfd_shape *in_shapes,
                       const tfd_tensor *const *in_values, int cap, int *num_outputs, tfd_dtype *out_types,
                       tfd_shape *out_shapes, tfd_status *st) {
  tfd_status_reset(st);
  static const char fn[] = "tfd_ops_infer";
  if (tfd_arg_required(st, fn, "num_outputs", num_outputs)) return TFD_INVALID_ARGUMENT;
  *num_outputs = 0;
  if (tfd_arg_required(st, fn, "node", node) || tfd_arg_array(st, fn, "in_types", in_types, "num_inputs", num_inputs) ||
      tfd_arg_array(st, fn, "in_shapes", in_shapes, "num_inputs", num_inputs) ||
      tfd_arg_array(st, fn, "out_types", out_types, "cap", cap) ||
      tfd_arg_array(st, fn, "out_shapes", out_shapes, "cap", cap))
    return TFD_INVALID_ARGUMENT;
  const char *name = tfd_node_def_name(node);
  const tfd_op_def *op = tfd_op_lookup(tfd_node_def_op(node));
  if (!op)
    return tfd_status_setf(st, TFD_NOT_FOUND, "node '%s': op type not registered '%s'", name, tfd_node_def_op(node));
  int n;
  if (tfd_op_check_arity(op, node, num_inputs, &n, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  if (n > cap)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s) has %d outputs, room was given for %d", name,
                           op->name, n, cap);
  const tfd_tensor *none[1] = {NULL};
  const tfd_tensor **values = NULL;
  if (!in_values && num_inputs > 0) {
    values = calloc((size_t)num_inputs, sizeof *values);
    if (!values) return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "node '%s': out of memory", name);
  }
  /* Inference leaves shapes of outputs it cannot work out untouched: start them unknown. */
  for (int o = 0; o < n; o++) {
    out_types[o] = 0;
    out_shapes[o].ndims = -1;
  }
  tfd_code code = tfd_op_infer_node(op, node, num_inputs, in_types, in_shapes,
                                    in_values ? in_values
                                    : values  ? (const tfd_tensor *const *)values
                                              : none,
                                    n, out_types, out_shapes, st);
  free(values);
  if (code == TFD_OK) *num_outputs = n;
  return code;
}
