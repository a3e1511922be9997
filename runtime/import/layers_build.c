/* The graph-building pieces of the layers-model reader (see layers_internal.h): config fields read
 * with defaults, nodes and their attrs, Consts, weights and activations. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/tensor_internal.h"
#include "layers_internal.h"

tfd_code lm_failf(lctx *c, tfd_code code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tfd_status_vsetf_in(c->st, code, c->path, fmt, ap);
  va_end(ap);
  return code;
}

const cJSON *lm_get(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }
const cJSON *lm_get2(const cJSON *o, const char *a, const char *b) { return lm_get(o, a) ? lm_get(o, a) : lm_get(o, b); }

double lm_num(const cJSON *o, const char *k, double dflt) {
  const cJSON *v = lm_get(o, k);
  return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}
bool lm_flag(const cJSON *o, const char *k, bool dflt) {
  const cJSON *v = lm_get(o, k);
  return cJSON_IsBool(v) ? cJSON_IsTrue(v) : dflt;
}
const char *lm_str(const cJSON *o, const char *k, const char *dflt) {
  const cJSON *v = lm_get(o, k);
  return cJSON_IsString(v) ? v->valuestring : dflt;
}

/* A JSON number as an integer, saturated to int32's range (NaN is 0): a config's sizes and axes are small, and a
 * double outside int64's range may not be converted at all (C11 6.3.1.4). Shape checks later refuse the extremes. */
int64_t lm_int_of(double x) {
  if (!(x == x)) return 0;
  if (x > INT32_MAX) return INT32_MAX;
  if (x < INT32_MIN) return INT32_MIN;
  return (int64_t)x;
}

/* An int or a list of n ints (Keras's kernel_size = 3 or [3, 3]); false when neither. */
bool lm_ints(const cJSON *v, int n, int64_t *out) {
  if (cJSON_IsNumber(v)) {
    for (int i = 0; i < n; i++) out[i] = lm_int_of(v->valuedouble);
    return true;
  }
  if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != n) return false;
  for (int i = 0; i < n; i++) {
    const cJSON *e = cJSON_GetArrayItem(v, i);
    if (!cJSON_IsNumber(e)) return false;
    out[i] = lm_int_of(e->valuedouble);
  }
  return true;
}

/* ---- making nodes ---- */
tfd_node_def *lm_node(lctx *c, const char *name, const char *op, const char *in0, const char *in1) {
  tfd_node_def *n = tfd_graph_def_add_node(c->g, name, op, c->st);
  if (n && in0 && tfd_node_def_add_input(n, in0, c->st) != TFD_OK) n = NULL;
  if (n && in1 && tfd_node_def_add_input(n, in1, c->st) != TFD_OK) n = NULL;
  return n;
}

bool lm_set(lctx *c, tfd_node_def *n, const char *name, tfd_attr_value v) {
  return n && tfd_node_def_set_attr(n, name, &v, c->st) == TFD_OK;
}
bool lm_set_ints(lctx *c, tfd_node_def *n, const char *name, const int64_t *v, int len) {
  return lm_set(c, n, name, (tfd_attr_value){.type = TFD_ATTR_LIST_INT, .list_len = (size_t)len, .list_i = (int64_t *)v});
}

/* A fresh helper node name under prefix: "<prefix>/<what>_<serial>". The caller frees it. */
char *lm_fresh(lctx *c, const char *prefix, const char *what) {
  return tfd_format("%s/%s_%d", prefix, what, c->serial++);
}

/* A Const of int32 values (shapes, axes, paddings); returns its name (caller frees) or NULL. */
/* A Const of dtype dt holding bytes (n elements of dims); its name (caller frees) or NULL. */
static char *const_node(lctx *c, const char *prefix, tfd_dtype dt, const void *bytes, size_t n, const int64_t *dims,
                        int nd) {
  char *name = lm_fresh(c, prefix, "const");
  tfd_tensor *t = name ? tfd_tensor_make_from_bytes(NULL, dt, dims, nd, bytes, n * tfd_dtype_size(dt), c->st) : NULL;
  tfd_node_def *k = t ? lm_node(c, name, "Const", NULL, NULL) : NULL;
  char *ctl = k && c->pivot ? tfd_format("^%s", c->pivot) : NULL; /* a Const in a loop body joins its frame */
  if (c->pivot && (!ctl || tfd_node_def_add_input(k, ctl, c->st) != TFD_OK)) k = NULL;
  free(ctl);
  bool ok = k && lm_set(c, k, "value", (tfd_attr_value){.type = TFD_ATTR_TENSOR, .tensor = t}) &&
            lm_set(c, k, "dtype", (tfd_attr_value){.type = TFD_ATTR_TYPE, .dtype = dt});
  tfd_tensor_unref(t);
  if (!ok) free(name), name = NULL;
  return name;
}

/* int32 values (shapes, axes, paddings; at most 64) and float scalars as Consts. */
char *lm_int_const(lctx *c, const char *prefix, const int64_t *v, int n, const int64_t *dims, int nd) {
  int32_t buf[64];
  for (int i = 0; i < n && i < 64; i++) buf[i] = (int32_t)v[i];
  return n <= 64 ? const_node(c, prefix, TFD_INT32, buf, (size_t)n, dims, nd) : NULL;
}
char *lm_float_const(lctx *c, const char *prefix, float v) { return const_node(c, prefix, TFD_FLOAT32, &v, 1, NULL, 0); }

/* The weight Const "<layer>/<weight>" (made once; the manifest gives its value); its name or NULL. */
char *lm_weight(lctx *c, const char *layer, const char *w) {
  char *name = tfd_format("%s/%s", layer, w);
  if (!name || tfd_graph_def_find(c->g, name)) return name;
  tfd_node_def *k = lm_node(c, name, "Const", NULL, NULL);
  if (!k || !lm_set(c, k, "dtype", (tfd_attr_value){.type = TFD_ATTR_TYPE, .dtype = TFD_FLOAT32}) ||
      !tfd_strmap_put(c->unfilled, name, k)) {
    free(name);
    return NULL;
  }
  return name;
}

/* One op node "<prefix>/<op>_<k>" over up to two inputs; its name (caller frees) or NULL. */
char *lm_op2(lctx *c, const char *prefix, const char *op, const char *a, const char *b) {
  char *name = lm_fresh(c, prefix, op);
  if (name && !lm_node(c, name, op, a, b)) free(name), name = NULL;
  return name;
}

/* x replaced by op(x, y) (y may be NULL): frees the old name; NULL on failure (x freed too). */
char *lm_then(lctx *c, const char *prefix, const char *op, char *x, const char *y) {
  char *out = x ? lm_op2(c, prefix, op, x, y) : NULL;
  free(x);
  return out;
}

/* Keras activations over x (consumed); the activation's name from its config, or "linear". */
char *lm_activation(lctx *c, const char *prefix, char *x, const char *act) {
  if (!x || !act || strcmp(act, "linear") == 0 || !*act) return x;
  static const char *const direct[][2] = {{"relu", "Relu"},       {"relu6", "Relu6"},       {"elu", "Elu"},
                                          {"selu", "Selu"},       {"sigmoid", "Sigmoid"},   {"tanh", "Tanh"},
                                          {"softmax", "Softmax"}, {"softplus", "Softplus"}, {"exponential", "Exp"}};
  for (size_t i = 0; i < sizeof direct / sizeof *direct; i++)
    if (strcmp(act, direct[i][0]) == 0) return lm_then(c, prefix, direct[i][1], x, NULL);
  if (strcmp(act, "swish") == 0 || strcmp(act, "silu") == 0) {
    char *s = lm_op2(c, prefix, "Sigmoid", x, NULL), *out = s ? lm_op2(c, prefix, "Mul", x, s) : NULL;
    free(s), free(x);
    return out;
  }
  if (strcmp(act, "softsign") == 0) { /* x / (1 + |x|) */
    char *one = lm_float_const(c, prefix, 1), *den = lm_then(c, prefix, "AddV2", lm_op2(c, prefix, "Abs", x, NULL), one);
    char *out = den ? lm_op2(c, prefix, "RealDiv", x, den) : NULL;
    free(one), free(den), free(x);
    return out;
  }
  if (strcmp(act, "hard_sigmoid") == 0) { /* Keras: clip(0.2 x + 0.5, 0, 1) */
    char *k = lm_float_const(c, prefix, 0.2f), *h = lm_float_const(c, prefix, 0.5f), *zero = lm_float_const(c, prefix, 0),
         *one = lm_float_const(c, prefix, 1);
    char *y = lm_then(c, prefix, "Minimum",
                   lm_then(c, prefix, "Maximum", lm_then(c, prefix, "AddV2", lm_then(c, prefix, "Mul", x, k), h), zero), one);
    free(k), free(h), free(zero), free(one);
    return y;
  }
  free(x);
  lm_failf(c, TFD_UNIMPLEMENTED, "layer '%s': activation '%s' is not supported", prefix, act);
  return NULL;
}

void lm_note_rank(lctx *c, const char *tensor, int rank) {
  if (tensor) tfd_strmap_put(&c->ranks, tensor, (void *)(intptr_t)(rank + 1));
}
int lm_rank_of(lctx *c, const char *tensor) { return (int)(intptr_t)tfd_strmap_get(&c->ranks, tensor) - 1; }

const char *lm_mask_of(lctx *c, const char *tensor) { return tfd_strmap_get(&c->masks, tensor); }



char *lm_unsupported(lctx *c, const call *l, const char *what) {
  lm_failf(c, TFD_UNIMPLEMENTED, "layer '%s' (%s): %s is not supported", l->layer, l->cls, what);
  return NULL;
}

/* A node "<prefix>/<op>_<k>" over n inputs (tensor names; a NULL entry fails); its name or NULL. */
char *lm_opn(lctx *c, const char *prefix, const char *op, int n, const char *const *in) {
  char *name = lm_fresh(c, prefix, op);
  tfd_node_def *nd = name ? lm_node(c, name, op, NULL, NULL) : NULL;
  for (int i = 0; nd && i < n; i++)
    if (!in[i] || tfd_node_def_add_input(nd, in[i], c->st) != TFD_OK) nd = NULL;
  if (!nd) free(name), name = NULL;
  return name;
}

/* x[from:to] of a 1-D int32 tensor x (to 0: to the end), or with scalar the element x[from]. */
char *lm_slice1(lctx *c, const char *prefix, const char *x, int64_t from, int64_t to, bool scalar) {
  int64_t one = 1, end = scalar ? from + 1 : to;
  char *b = lm_int_const(c, prefix, &from, 1, &one, 1), *e = lm_int_const(c, prefix, &end, 1, &one, 1);
  char *s = lm_int_const(c, prefix, &one, 1, &one, 1);
  char *y = lm_opn(c, prefix, "StridedSlice", 4, (const char *[]){x, b, e, s});
  const char *mask = scalar ? "shrink_axis_mask" : "end_mask";
  if (y && (scalar || to == 0) &&
      !lm_set(c, tfd_graph_def_find(c->g, y), mask, (tfd_attr_value){.type = TFD_ATTR_INT, .i = 1}))
    free(y), y = NULL;
  free(b), free(e), free(s);
  return y;
}
