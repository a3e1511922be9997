/* Keras's recurrent layers in a layers model: SimpleRNN, LSTM and GRU, and Bidirectional over them, each
 * turned into a TensorFlow v1 while loop as tf.while_loop builds one (Enter, Merge, LoopCond, Switch,
 * NextIteration, Exit in a frame named "<layer>/while"), so that any sequence length runs, known or not.
 *
 * The input projection x W + b of every time step is one BatchMatMulV2 before the loop; the loop
 * carries the step i, the state (h, and c for an LSTM) and, when the layer returns sequences, the flow
 * of a TensorArray that collects each step's h; the loop body reads row i of the projection and adds
 * h U. The cell formulas are Keras's (and TensorFlow.js's):
 *   SimpleRNN  h = act(x W + h U + b)
 *   LSTM       z = x W + h U + b split in [i, f, c, o]; c = ract(f) c + ract(i) act(c~); h = ract(o) act(c)
 *   GRU        z, r = ract(x W_zr + h U_zr + b_zr); h~ = act(x W_h + (r h) U_h + b_h), or with reset_after
 *              (Keras 2.3+, two bias rows) act(x W_h + b_h + r (h U_h + b'_h)); h = z h + (1 - z) h~
 * go_backwards reverses the time axis first and, as in Keras, returns the outputs in that order.
 * A Keras mask on the input (Embedding's mask_zero, Masking) makes a masked step keep the state, so that
 * its output repeats the last one, as Keras and TensorFlow.js compute it.
 * return_state makes the final h (and c) outputs 1 and 2 of the layer's call, as Keras lists them. The
 * generic RNN over a SimpleRNNCell, LSTMCell or GRUCell builds as the layer of that cell.
 * Not here: stateful layers and stacked cells. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layers_internal.h"

typedef enum { CELL_SIMPLE, CELL_LSTM, CELL_GRU } cell_kind;

bool lm_is_recurrent(const char *cls) {
  return !strcmp(cls, "SimpleRNN") || !strcmp(cls, "LSTM") || !strcmp(cls, "GRU") || !strcmp(cls, "Bidirectional") ||
         !strcmp(cls, "RNN");
}

/* One recurrent layer to build: what its config says, where its weights are. */
typedef struct rnn {
  lctx *c;
  const cJSON *cfg;
  const char *prefix;  /* its nodes' names */
  const char *weights; /* its weights' prefix: the layer, or "<bidirectional>/forward_<layer>" */
  cell_kind kind;
  int64_t units;
  bool backwards, sequences, state; /* state: return_state */
  const char *act, *ract;
} rnn;

static bool attr_bool(lctx *c, const char *node, const char *a, bool v) {
  return lm_set(c, tfd_graph_def_find(c->g, node), a, (tfd_attr_value){.type = TFD_ATTR_BOOL, .b = v});
}
static bool attr_int(lctx *c, const char *node, const char *a, int64_t v) {
  return lm_set(c, tfd_graph_def_find(c->g, node), a, (tfd_attr_value){.type = TFD_ATTR_INT, .i = v});
}
static bool attr_type(lctx *c, const char *node, const char *a, tfd_dtype v) {
  return lm_set(c, tfd_graph_def_find(c->g, node), a, (tfd_attr_value){.type = TFD_ATTR_TYPE, .dtype = v});
}

/* out of x (consumed) when ok holds, else NULL: chains attr setting onto a freshly made node. */
static char *keep_if(char *x, bool ok) {
  if (!ok) free(x), x = NULL;
  return x;
}

/* A 1-D int32 Const. */
static char *ints1(lctx *c, const char *prefix, const int64_t *v, int n) {
  return lm_int_const(c, prefix, v, n, (int64_t[]){n}, 1);
}

/* Split x (consumed) in n along axis 1: writes n tensor names "<split>:k" (caller frees each). */
static bool split_cols(lctx *c, const char *prefix, char *x, int n, char **out) {
  char *axis = lm_int_const(c, prefix, (int64_t[]){1}, 1, NULL, 0);
  char *s = axis && x ? lm_opn(c, prefix, "Split", 2, (const char *[]){axis, x}) : NULL;
  free(axis), free(x);
  bool ok = s && attr_int(c, s, "num_split", n);
  for (int k = 0; k < n; k++) out[k] = ok ? tfd_format("%s:%d", s, k) : NULL;
  free(s);
  for (int k = 0; k < n; k++) ok = ok && out[k];
  return ok;
}

/* The frame's Enter of x: "<prefix>/Enter_<k>", constant for loop invariants. */
static char *enter(lctx *c, const char *prefix, const char *frame, const char *x, bool constant) {
  char *e = x ? lm_opn(c, prefix, "Enter", 1, &x) : NULL;
  tfd_node_def *n = e ? tfd_graph_def_find(c->g, e) : NULL;
  bool ok = n && lm_set(c, n, "frame_name", (tfd_attr_value){.type = TFD_ATTR_STRING, .s = (char *)frame}) &&
            attr_bool(c, e, "is_constant", constant) && attr_int(c, e, "parallel_iterations", 1);
  return keep_if(e, ok);
}

/* A loop variable: Enter, Merge with its NextIteration (named now, made when the body is done), Switch
 * on the loop condition; body is Identity(Switch:1), exit Exit(Switch:0). */
typedef struct loop_var {
  char *merge, *next, *body, *exit;
} loop_var;

static bool var_enter(lctx *c, const char *prefix, const char *frame, const char *init, loop_var *v) {
  char *e = enter(c, prefix, frame, init, false);
  v->next = e ? lm_fresh(c, prefix, "NextIteration") : NULL;
  v->merge = v->next ? lm_opn(c, prefix, "Merge", 2, (const char *[]){e, v->next}) : NULL;
  free(e);
  return v->merge && attr_int(c, v->merge, "N", 2);
}

static bool var_switch(lctx *c, const char *prefix, const char *cond, loop_var *v) {
  char *sw = lm_opn(c, prefix, "Switch", 2, (const char *[]){v->merge, cond});
  char *t = sw ? tfd_format("%s:1", sw) : NULL;
  v->body = t ? lm_opn(c, prefix, "Identity", 1, (const char *[]){t}) : NULL;
  v->exit = v->body ? lm_opn(c, prefix, "Exit", 1, (const char *[]){sw}) : NULL;
  free(sw), free(t);
  return v->exit != NULL;
}

static bool var_next(lctx *c, const char *value, loop_var *v) {
  return value && lm_node(c, v->next, "NextIteration", value, NULL) != NULL;
}

static void var_free(loop_var *v) { free(v->merge), free(v->next), free(v->body), free(v->exit); }

/* One step of the cell inside the body: the new h (and *c_next for an LSTM) from the projected input
 * row xw, the state and the recurrent kernel u (and GRU's recurrent bias rb, or NULL). */
static char *cell(const rnn *r, const char *xw, const char *h, const char *cs, const char *u, const char *rb,
                  char **c_next) {
  lctx *c = r->c;
  const char *p = r->prefix;
  if (r->kind == CELL_SIMPLE)
    return lm_activation(c, p, lm_then(c, p, "AddV2", lm_op2(c, p, "MatMul", h, u), xw), r->act);
  if (r->kind == CELL_LSTM) {
    char *z[4] = {0};
    char *y = NULL;
    if (split_cols(c, p, lm_then(c, p, "AddV2", lm_op2(c, p, "MatMul", h, u), xw), 4, z)) {
      char *i = lm_activation(c, p, z[0], r->ract), *f = lm_activation(c, p, z[1], r->ract);
      char *g = lm_activation(c, p, z[2], r->act), *o = lm_activation(c, p, z[3], r->ract);
      z[0] = z[1] = z[2] = z[3] = NULL;
      char *fc = f ? lm_op2(c, p, "Mul", f, cs) : NULL, *ig = i && g ? lm_op2(c, p, "Mul", i, g) : NULL;
      *c_next = fc && ig ? lm_op2(c, p, "AddV2", fc, ig) : NULL;
      char *a = *c_next ? lm_activation(c, p, tfd_format("%s", *c_next), r->act) : NULL;
      y = a && o ? lm_op2(c, p, "Mul", o, a) : NULL;
      free(i), free(f), free(g), free(o), free(fc), free(ig), free(a);
    }
    for (int k = 0; k < 4; k++) free(z[k]);
    return y;
  }
  /* GRU: u is [U, 3U] (z, r, h columns); xw the input's projection of all three. */
  char *x3[3] = {0}, *h3[3] = {0}, *uh = NULL, *y = NULL;
  bool ok = split_cols(c, p, tfd_format("%s", xw), 3, x3);
  if (ok && rb) { /* reset_after: h U + b' at once, split in three */
    ok = split_cols(c, p, lm_then(c, p, "BiasAdd", lm_op2(c, p, "MatMul", h, u), rb), 3, h3);
  } else if (ok) { /* h U_zr now; U_h later, on r h */
    char *b0 = ints1(c, p, (int64_t[]){0, 0}, 2), *e0 = ints1(c, p, (int64_t[]){-1, 2 * r->units}, 2);
    char *b1 = ints1(c, p, (int64_t[]){0, 2 * r->units}, 2), *e1 = ints1(c, p, (int64_t[]){-1, -1}, 2);
    char *uzr = lm_opn(c, p, "Slice", 3, (const char *[]){u, b0, e0});
    uh = lm_opn(c, p, "Slice", 3, (const char *[]){u, b1, e1});
    ok = uzr && uh && split_cols(c, p, lm_op2(c, p, "MatMul", h, uzr), 2, h3);
    free(b0), free(e0), free(b1), free(e1), free(uzr);
  }
  char *z = ok ? lm_activation(c, p, lm_op2(c, p, "AddV2", x3[0], h3[0]), r->ract) : NULL;
  char *rg = z ? lm_activation(c, p, lm_op2(c, p, "AddV2", x3[1], h3[1]), r->ract) : NULL;
  char *rec = !rg ? NULL : rb ? lm_op2(c, p, "Mul", rg, h3[2]) : lm_then(c, p, "MatMul", lm_op2(c, p, "Mul", rg, h), uh);
  char *hh = rec ? lm_activation(c, p, lm_then(c, p, "AddV2", rec, x3[2]), r->act) : NULL;
  if (hh) { /* z h + (1 - z) h~ */
    char *one = lm_float_const(c, p, 1);
    char *zh = lm_op2(c, p, "Mul", z, h), *rest = one ? lm_then(c, p, "Mul", lm_op2(c, p, "Sub", one, z), hh) : NULL;
    y = zh && rest ? lm_op2(c, p, "AddV2", zh, rest) : NULL;
    free(one), free(zh), free(rest);
  }
  free(z), free(rg), free(hh), free(uh);
  for (int k = 0; k < 3; k++) free(x3[k]), free(h3[k]);
  return y;
}

/* The layer over x [N, T, F] (and its mask [N, T] or NULL): its output [N, T, U] (sequences) or [N, U]. */
static char *build(const rnn *r, const char *x, const char *mask) {
  lctx *c = r->c;
  const char *p = r->prefix;
  bool reset_after = r->kind == CELL_GRU && lm_flag(r->cfg, "reset_after", false);
  bool bias = lm_flag(r->cfg, "use_bias", true);
  char *w = lm_weight(c, r->weights, "kernel"), *u = lm_weight(c, r->weights, "recurrent_kernel");
  char *b = bias ? lm_weight(c, r->weights, "bias") : NULL, *bin = NULL, *brec = NULL;
  if (b && reset_after) { /* bias [2, 3U]: the input's row, the recurrent row */
    char *k0 = ints1(c, p, (int64_t[]){0}, 1), *k1 = ints1(c, p, (int64_t[]){1}, 1), *k2 = ints1(c, p, (int64_t[]){2}, 1);
    char *one = ints1(c, p, (int64_t[]){1}, 1);
    bin = lm_opn(c, p, "StridedSlice", 4, (const char *[]){b, k0, k1, one});
    brec = lm_opn(c, p, "StridedSlice", 4, (const char *[]){b, k1, k2, one});
    bin = keep_if(bin, bin && attr_int(c, bin, "shrink_axis_mask", 1));
    brec = keep_if(brec, brec && attr_int(c, brec, "shrink_axis_mask", 1));
    free(k0), free(k1), free(k2), free(one);
  } else if (b) {
    bin = tfd_format("%s", b);
  }
  bool ok = w && u && (!bias || (bin && (!reset_after || brec)));
  /* time major, reversed for go_backwards, projected */
  char *perm = ok ? ints1(c, p, (int64_t[]){1, 0, 2}, 3) : NULL;
  char *xt = perm ? lm_op2(c, p, "Transpose", x, perm) : NULL;
  if (xt && r->backwards) {
    char *ax = ints1(c, p, (int64_t[]){0}, 1);
    xt = ax ? lm_then(c, p, "ReverseV2", xt, ax) : (free(xt), NULL);
    free(ax);
  }
  char *mt = NULL; /* the mask time major: [T, N] */
  if (xt && mask) {
    char *perm2 = ints1(c, p, (int64_t[]){1, 0}, 2), *ax = ints1(c, p, (int64_t[]){0}, 1);
    mt = perm2 ? lm_op2(c, p, "Transpose", mask, perm2) : NULL;
    if (mt && r->backwards) mt = ax ? lm_then(c, p, "ReverseV2", mt, ax) : (free(mt), NULL);
    if (!mt) free(xt), xt = NULL;
    free(perm2), free(ax);
  }
  char *xw = xt ? lm_op2(c, p, "BatchMatMulV2", xt, w) : NULL;
  if (xw && bin) xw = lm_then(c, p, "BiasAdd", xw, bin);
  char *shape = xt ? lm_op2(c, p, "Shape", xt, NULL) : NULL;
  char *steps = shape ? lm_slice1(c, p, shape, 0, 1, true) : NULL;
  char *batch = steps ? lm_slice1(c, p, shape, 1, 2, false) : NULL;
  char *units = batch ? ints1(c, p, &r->units, 1) : NULL, *zaxis = units ? lm_int_const(c, p, (int64_t[]){0}, 1, NULL, 0) : NULL;
  char *hshape = zaxis ? lm_opn(c, p, "ConcatV2", 3, (const char *[]){batch, units, zaxis}) : NULL;
  char *zero = hshape && attr_int(c, hshape, "N", 2) ? lm_float_const(c, p, 0) : NULL;
  char *h0 = zero ? lm_op2(c, p, "Fill", hshape, zero) : NULL;
  char *ta = NULL, *flow0 = NULL;
  if (h0 && r->sequences) {
    ta = lm_opn(c, p, "TensorArrayV3", 1, (const char *[]){steps});
    tfd_node_def *tn = ta ? tfd_graph_def_find(c->g, ta) : NULL;
    tfd_shape es = {.ndims = 2, .dims = {-1, r->units}};
    bool tok = tn && attr_type(c, ta, "dtype", TFD_FLOAT32) && attr_bool(c, ta, "dynamic_size", false) &&
               attr_bool(c, ta, "clear_after_read", true) && attr_bool(c, ta, "identical_element_shapes", true) &&
               lm_set(c, tn, "element_shape", (tfd_attr_value){.type = TFD_ATTR_SHAPE, .shape = es});
    ta = keep_if(ta, tok);
    flow0 = ta ? tfd_format("%s:1", ta) : NULL;
  }
  char *i0 = h0 ? lm_int_const(c, p, (int64_t[]){0}, 1, NULL, 0) : NULL;
  ok = i0 && (!r->sequences || flow0);

  /* the loop */
  char *frame = ok ? tfd_format("%s/while", p) : NULL;
  loop_var vi = {0}, vh = {0}, vc = {0}, vf = {0};
  bool lstm = r->kind == CELL_LSTM;
  ok = frame && var_enter(c, p, frame, i0, &vi) && var_enter(c, p, frame, h0, &vh) &&
       (!lstm || var_enter(c, p, frame, h0, &vc)) && (!r->sequences || var_enter(c, p, frame, flow0, &vf));
  char *t_in = ok ? enter(c, p, frame, steps, true) : NULL, *xw_in = t_in ? enter(c, p, frame, xw, true) : NULL;
  char *u_in = xw_in ? enter(c, p, frame, u, true) : NULL;
  char *rb_in = u_in && brec ? enter(c, p, frame, brec, true) : NULL;
  char *ta_in = u_in && ta ? enter(c, p, frame, ta, true) : NULL;
  char *mt_in = u_in && mt ? enter(c, p, frame, mt, true) : NULL;
  ok = u_in && (!brec || rb_in) && (!ta || ta_in) && (!mt || mt_in);
  char *less = ok ? lm_op2(c, p, "Less", vi.merge, t_in) : NULL;
  char *cond = less ? lm_op2(c, p, "LoopCond", less, NULL) : NULL;
  ok = cond && var_switch(c, p, cond, &vi) && var_switch(c, p, cond, &vh) && (!lstm || var_switch(c, p, cond, &vc)) &&
       (!r->sequences || var_switch(c, p, cond, &vf));
  char *h_next = NULL, *c_next = NULL, *flow_next = NULL, *i_next = NULL;
  if (ok) {
    c->pivot = vi.body; /* every Const made from here joins the frame */
    char *axis = lm_int_const(c, p, (int64_t[]){0}, 1, NULL, 0);
    char *row = axis ? lm_opn(c, p, "GatherV2", 3, (const char *[]){xw_in, vi.body, axis}) : NULL;
    h_next = row ? cell(r, row, vh.body, lstm ? vc.body : NULL, u_in, rb_in, &c_next) : NULL;
    if (h_next && mt_in) { /* a masked step keeps the state (and so repeats the last output) */
      char *m = lm_opn(c, p, "GatherV2", 3, (const char *[]){mt_in, vi.body, axis});
      char *last = m ? lm_int_const(c, p, (int64_t[]){-1}, 1, NULL, 0) : NULL;
      char *m2 = last ? lm_op2(c, p, "ExpandDims", m, last) : NULL;
      char *hs = m2 ? lm_opn(c, p, "SelectV2", 3, (const char *[]){m2, h_next, vh.body}) : NULL;
      char *cs = m2 && lstm && c_next ? lm_opn(c, p, "SelectV2", 3, (const char *[]){m2, c_next, vc.body}) : NULL;
      free(h_next), h_next = hs;
      if (lstm) free(c_next), c_next = cs;
      free(m), free(last), free(m2);
    }
    if (h_next && r->sequences) {
      flow_next = lm_opn(c, p, "TensorArrayWriteV3", 4, (const char *[]){ta_in, vi.body, h_next, vf.body});
    }
    char *one = h_next ? lm_int_const(c, p, (int64_t[]){1}, 1, NULL, 0) : NULL;
    i_next = one ? lm_op2(c, p, "AddV2", vi.body, one) : NULL;
    c->pivot = NULL;
    free(axis), free(row), free(one);
    ok = var_next(c, i_next, &vi) && var_next(c, h_next, &vh) && (!lstm || var_next(c, c_next, &vc)) &&
         (!r->sequences || var_next(c, flow_next, &vf));
  }
  char *y = NULL;
  if (ok && r->sequences) { /* every step's h, batch major again */
    char *start = lm_int_const(c, p, (int64_t[]){0}, 1, NULL, 0), *delta = lm_int_const(c, p, (int64_t[]){1}, 1, NULL, 0);
    char *range = start && delta ? lm_opn(c, p, "Range", 3, (const char *[]){start, steps, delta}) : NULL;
    char *all = range ? lm_opn(c, p, "TensorArrayGatherV3", 3, (const char *[]){ta, range, vf.exit}) : NULL;
    tfd_shape es = {.ndims = 2, .dims = {-1, r->units}};
    bool gok = all && attr_type(c, all, "dtype", TFD_FLOAT32) &&
               lm_set(c, tfd_graph_def_find(c->g, all), "element_shape", (tfd_attr_value){.type = TFD_ATTR_SHAPE, .shape = es});
    y = gok ? lm_op2(c, p, "Transpose", all, perm) : NULL;
    free(start), free(delta), free(range), free(all);
  } else if (ok) {
    y = lm_op2(c, p, "Identity", vh.exit, NULL);
  }
  if (y && r->state) { /* Keras's [output, h] or [output, h, c] */
    c->states[0] = lm_op2(c, p, "Identity", vh.exit, NULL);
    c->states[1] = lstm && c->states[0] ? lm_op2(c, p, "Identity", vc.exit, NULL) : NULL;
    c->n_states = lstm ? 2 : 1;
    if (!c->states[0] || (lstm && !c->states[1])) {
      free(c->states[0]), free(c->states[1]);
      c->states[0] = c->states[1] = NULL, c->n_states = 0;
      free(y);
      y = NULL;
    }
  }
  free(w), free(u), free(b), free(bin), free(brec), free(perm), free(xt), free(xw), free(shape), free(steps), free(batch);
  free(units), free(zaxis), free(hshape), free(zero), free(h0), free(ta), free(flow0), free(i0), free(frame);
  free(t_in), free(xw_in), free(u_in), free(rb_in), free(ta_in), free(mt), free(mt_in), free(less), free(cond);
  free(h_next), free(c_next), free(flow_next), free(i_next);
  var_free(&vi), var_free(&vh), var_free(&vc), var_free(&vf);
  return y;
}

/* An rnn of a SimpleRNN/LSTM/GRU config, or of an RNN over a SimpleRNNCell/LSTMCell/GRUCell (the
 * cell's config gives the units and activations, the layer's the sequences, state and direction; the
 * weights are the layer's, as for the named layers); false (status set) for what tfdev does not build. */
static bool rnn_of(lctx *c, const call *l, const char *cls, const cJSON *cfg, rnn *r) {
  const cJSON *outer = cfg;
  if (!strcmp(cls, "RNN")) {
    const cJSON *cell = lm_get(cfg, "cell");
    const char *ccls = lm_str(cell, "class_name", "");
    cls = !strcmp(ccls, "SimpleRNNCell") ? "SimpleRNN"
          : !strcmp(ccls, "LSTMCell")    ? "LSTM"
          : !strcmp(ccls, "GRUCell")     ? "GRU"
                                         : "";
    if (!*cls) return lm_unsupported(c, l, "an RNN over a cell other than SimpleRNNCell, LSTMCell and GRUCell") != NULL;
    cfg = lm_get(cell, "config");
  }
  *r = (rnn){.c = c, .cfg = cfg, .prefix = l->prefix, .weights = l->layer};
  r->kind = !strcmp(cls, "LSTM") ? CELL_LSTM : !strcmp(cls, "GRU") ? CELL_GRU : CELL_SIMPLE;
  if (strcmp(cls, "LSTM") && strcmp(cls, "GRU") && strcmp(cls, "SimpleRNN"))
    return lm_unsupported(c, l, "a wrapped layer other than SimpleRNN, LSTM and GRU") != NULL;
  r->units = lm_int_of(lm_num(cfg, "units", 0));
  if (r->units < 1 || r->units > (1 << 24)) return lm_unsupported(c, l, "a number of units outside 1..2^24") != NULL;
  r->state = lm_flag(outer, "return_state", false);
  if (lm_flag(outer, "stateful", false)) return lm_unsupported(c, l, "a stateful layer") != NULL;
  r->backwards = lm_flag(outer, "go_backwards", false);
  r->sequences = lm_flag(outer, "return_sequences", false);
  r->act = lm_str(cfg, "activation", "tanh");
  r->ract = lm_str(cfg, "recurrent_activation", "hard_sigmoid");
  return true;
}

static char *bidirectional(lctx *c, const call *l, int *rank) {
  const cJSON *inner = lm_get(l->cfg, "layer");
  const cJSON *icfg = lm_get(inner, "config");
  const char *icls = lm_str(inner, "class_name", ""), *iname = lm_str(icfg, "name", "");
  const cJSON *mm = lm_get(l->cfg, "merge_mode");
  const char *mode = cJSON_IsString(mm) ? mm->valuestring : mm && !cJSON_IsNull(mm) ? "?" : mm ? "none" : "concat";
  if (strcmp(mode, "concat") && strcmp(mode, "sum") && strcmp(mode, "mul") && strcmp(mode, "ave"))
    return lm_unsupported(c, l, "a merge_mode other than concat, sum, mul and ave");
  rnn fw, bw;
  if (!rnn_of(c, l, icls, icfg, &fw) || !rnn_of(c, l, icls, icfg, &bw)) return NULL;
  char *fp = tfd_format("%s/forward", l->prefix), *bp = tfd_format("%s/backward", l->prefix);
  char *fwts = tfd_format("%s/forward_%s", l->layer, iname), *bwts = tfd_format("%s/backward_%s", l->layer, iname);
  char *y = NULL;
  if (fp && bp && fwts && bwts) {
    fw.prefix = fp, fw.weights = fwts, bw.prefix = bp, bw.weights = bwts;
    bw.backwards = !fw.backwards;
    const char *mask = lm_mask_of(c, l->in[0]);
    char *yf = build(&fw, l->in[0], mask), *fstates[2] = {c->states[0], c->states[1]};
    int nf = c->n_states;
    c->states[0] = c->states[1] = NULL, c->n_states = 0;
    char *yb = yf ? build(&bw, l->in[0], mask) : NULL;
    /* return_state: the forward layer's states, then the backward one's, as Keras lists them */
    char *bstates[2] = {c->states[0], c->states[1]};
    int nb = c->n_states;
    for (int i = 0; i < 4; i++) c->states[i] = NULL;
    for (int i = 0; i < 2; i++) {
      if (i < nf) c->states[i] = fstates[i];
      else free(fstates[i]);
      if (i < nb) c->states[nf + i] = bstates[i];
      else free(bstates[i]);
    }
    c->n_states = nf + nb;
    if (yb && fw.sequences) { /* the backward outputs back in time order, as Keras returns them */
      char *ax = ints1(c, l->prefix, (int64_t[]){1}, 1);
      yb = ax ? lm_then(c, l->prefix, "ReverseV2", yb, ax) : (free(yb), NULL);
      free(ax);
    }
    if (yb && !strcmp(mode, "concat")) {
      char *axis = lm_int_const(c, l->prefix, (int64_t[]){-1}, 1, NULL, 0);
      y = axis ? lm_opn(c, l->prefix, "ConcatV2", 3, (const char *[]){yf, yb, axis}) : NULL;
      y = keep_if(y, y && attr_int(c, y, "N", 2));
      free(axis);
    } else if (yb) {
      y = lm_op2(c, l->prefix, !strcmp(mode, "mul") ? "Mul" : "AddV2", yf, yb);
      if (y && !strcmp(mode, "ave")) {
        char *half = lm_float_const(c, l->prefix, 0.5f);
        y = half ? lm_then(c, l->prefix, "Mul", y, half) : (free(y), NULL);
        free(half);
      }
    }
    free(yf), free(yb);
  }
  if (!y) { /* no output, no states */
    for (int i = 0; i < 4; i++) free(c->states[i]), c->states[i] = NULL;
    c->n_states = 0;
  }
  *rank = fw.sequences ? 3 : 2;
  free(fp), free(bp), free(fwts), free(bwts);
  return y;
}

char *lm_recurrent_layer(lctx *c, const call *l, int *rank) {
  int in_rank = lm_rank_of(c, l->in[0]);
  if (in_rank >= 0 && in_rank != 3) {
    char what[64];
    snprintf(what, sizeof what, "an input of rank %d (it takes [batch, time, features])", in_rank);
    return lm_unsupported(c, l, what);
  }
  if (!strcmp(l->cls, "Bidirectional")) return bidirectional(c, l, rank);
  rnn r;
  if (!rnn_of(c, l, l->cls, l->cfg, &r)) return NULL;
  *rank = r.sequences ? 3 : 2;
  return build(&r, l->in[0], lm_mask_of(c, l->in[0]));
}
