/* The pieces the layers-model reader builds graphs from (runtime/import/layers_build.c), shared by
 * layers_model.c (the model and most layers) and layers_recurrent.c (RNN, LSTM, GRU, Bidirectional).
 * Names a function returns are malloc'd: the caller frees them. NULL means failure, with the status set
 * (or out of memory). */
#ifndef TFDEV_RUNTIME_LAYERS_INTERNAL_H
#define TFDEV_RUNTIME_LAYERS_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "../core/status_internal.h"
#include "../core/strmap.h"
#include "../framework/graph_def_internal.h"

typedef struct lctx {
  const char *path;
  tfd_status *st;
  tfd_graph_def *g;
  tfd_strmap *unfilled; /* weight Consts still without values, by name */
  tfd_strmap tensors;   /* "layer\x1fnode\x1ftensor" -> the output node's name (malloc'd) */
  tfd_strmap ranks;     /* output node name -> rank + 1 (0: unknown) */
  int serial;           /* for helper nodes' names */
  const char *pivot;    /* while building a loop body: the node every Const there depends on (its frame) */
  const char *scope;    /* inside a nested model: the prefix of its nodes' names ("<outer scope>/<model>") */
  char **feed;          /* inside a nested model: the tensors its inputs are, in input order */
  int n_feed;
  char **outs; /* inside a nested model: its outputs, collected (malloc'd names) instead of a signature */
  int n_outs;
  int depth; /* of model nesting */
  tfd_strmap masks; /* Keras masks: output node name -> its bool [batch, time] mask tensor (malloc'd) */
  char *made_mask;  /* the mask the layer being built made for its output (Embedding, Masking), or NULL */
  char *states[4];  /* a recurrent layer's return_state outputs (h, and c for an LSTM; Bidirectional: the forward
                       then the backward ones): outputs 1.. of its call */
  int n_states;
} lctx;

/* One call of a layer: its class, config and input tensors. */
typedef struct call {
  const char *cls, *layer; /* class_name, layer name (its weights' prefix) */
  const char *prefix;      /* names of this call's nodes */
  const cJSON *cfg;
  char **in; /* input tensors */
  int n_in;
} call;

tfd_code lm_failf(lctx *c, tfd_code code, const char *fmt, ...) TFD_PRINTF(3, 4);
char *lm_unsupported(lctx *c, const call *l, const char *what);

/* Config fields: a key's value, the first of two spellings, a number, a bool, a string (dflt when absent). */
const cJSON *lm_get(const cJSON *o, const char *k);
const cJSON *lm_get2(const cJSON *o, const char *a, const char *b);
double lm_num(const cJSON *o, const char *k, double dflt);
bool lm_flag(const cJSON *o, const char *k, bool dflt);
const char *lm_str(const cJSON *o, const char *k, const char *dflt);
int64_t lm_int_of(double x);
bool lm_ints(const cJSON *v, int n, int64_t *out);

/* Nodes: a node over up to two inputs (borrowed; NULL on failure), its attrs, a fresh helper name. */
tfd_node_def *lm_node(lctx *c, const char *name, const char *op, const char *in0, const char *in1);
bool lm_set(lctx *c, tfd_node_def *n, const char *name, tfd_attr_value v);
bool lm_set_ints(lctx *c, tfd_node_def *n, const char *name, const int64_t *v, int len);
char *lm_fresh(lctx *c, const char *prefix, const char *what);
char *lm_int_const(lctx *c, const char *prefix, const int64_t *v, int n, const int64_t *dims, int nd);
char *lm_float_const(lctx *c, const char *prefix, float v);
char *lm_weight(lctx *c, const char *layer, const char *w);
char *lm_opn(lctx *c, const char *prefix, const char *op, int n, const char *const *in);
char *lm_slice1(lctx *c, const char *prefix, const char *x, int64_t from, int64_t to, bool scalar);
char *lm_op2(lctx *c, const char *prefix, const char *op, const char *a, const char *b);
char *lm_then(lctx *c, const char *prefix, const char *op, char *x, const char *y);
char *lm_activation(lctx *c, const char *prefix, char *x, const char *act);
void lm_note_rank(lctx *c, const char *tensor, int rank);
int lm_rank_of(lctx *c, const char *tensor);

/* layers_recurrent.c: SimpleRNN, LSTM, GRU (as a while loop over time) and Bidirectional over them. */
bool lm_is_recurrent(const char *cls);
char *lm_recurrent_layer(lctx *c, const call *l, int *rank);

/* The Keras mask of a layer's input tensor, or NULL. */
const char *lm_mask_of(lctx *c, const char *tensor);

#endif
