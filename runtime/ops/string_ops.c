/* String ops, as TensorFlow's core/ops/string_ops.cc defines them: hashing, splitting, n-grams and regular-expression
 * replacement. Their definitions and shape functions. */
#include <string.h>

#include "common_shape_fns.h"

static const tfd_attr_def attrs_hash_bucket[] = {{"num_buckets", TFD_ATTR_INT, true, 0, 0, NULL}, END};

static const tfd_attr_def attrs_string_split[] = {{"skip_empty", TFD_ATTR_BOOL, false, 1, 0, NULL}, END};

static const tfd_attr_def attrs_string_ngrams[] = {{"separator", TFD_ATTR_STRING, true, 0, 0, NULL},
                                                   {"ngram_widths", TFD_ATTR_LIST_INT, true, 0, 0, NULL},
                                                   {"left_pad", TFD_ATTR_STRING, true, 0, 0, NULL},
                                                   {"right_pad", TFD_ATTR_STRING, true, 0, 0, NULL},
                                                   {"pad_width", TFD_ATTR_INT, true, 0, 0, NULL},
                                                   {"preserve_short_sequences", TFD_ATTR_BOOL, true, 0, 0, NULL},
                                                   {"Tsplits", TFD_ATTR_TYPE, false, TFD_INT64, 0, NULL},
                                                   END};

static const tfd_attr_def attrs_regex_replace[] = {{"pattern", TFD_ATTR_STRING, true, 0, 0, NULL},
                                                   {"rewrite", TFD_ATTR_STRING, true, 0, 0, NULL},
                                                   {"replace_global", TFD_ATTR_BOOL, false, 1, 0, NULL},
                                                   END};

/* Input i must be a string tensor. */
static tfd_code need_string(tfd_infer_ctx *c, int i, const char *what, tfd_status *st) {
  if (c->in_types[i] == TFD_STRING) return TFD_OK;
  return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): %s (input %d) must be string, got %s", node_name(c),
                         tfd_node_def_op(c->node), what, i, tfd_dtype_name(c->in_types[i]));
}

static tfd_code infer_string_map(tfd_infer_ctx *c, tfd_status *st) {
  if (need_string(c, 0, "input", st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  c->out_types[0] = strcmp(tfd_node_def_op(c->node), "StringToHashBucketFast") == 0 ? TFD_INT64 : TFD_STRING;
  c->out_shapes[0] = c->in_shapes[0];
  return TFD_OK;
}

static tfd_code infer_string_split(tfd_infer_ctx *c, tfd_status *st) {
  if (need_string(c, 0, "input", st) != TFD_OK || need_string(c, 1, "delimiter", st) != TFD_OK ||
      tfd_infer_need_rank(c, 0, 1, "input", st) != TFD_OK || tfd_infer_need_rank(c, 1, 0, "delimiter", st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  c->out_types[0] = TFD_INT64;
  c->out_types[1] = TFD_STRING;
  c->out_types[2] = TFD_INT64;
  c->out_shapes[0] = (tfd_shape){2, {-1, 2}};
  c->out_shapes[1] = (tfd_shape){1, {-1}};
  c->out_shapes[2] = (tfd_shape){1, {2}};
  return TFD_OK;
}

static tfd_code infer_string_ngrams(tfd_infer_ctx *c, tfd_status *st) {
  if (need_string(c, 0, "data", st) != TFD_OK || tfd_infer_need_index(c, 1, "data_splits", st) != TFD_OK ||
      tfd_infer_need_rank(c, 0, 1, "data", st) != TFD_OK || tfd_infer_need_rank(c, 1, 1, "data_splits", st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  if (attr(c, "Tsplits")->dtype != c->in_types[1])
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (StringNGrams): Tsplits=%s but data_splits is %s",
                           node_name(c), tfd_dtype_name(attr(c, "Tsplits")->dtype), tfd_dtype_name(c->in_types[1]));
  c->out_types[0] = TFD_STRING;
  c->out_types[1] = c->in_types[1];
  c->out_shapes[0] = (tfd_shape){1, {-1}};
  c->out_shapes[1] = c->in_shapes[1];
  return TFD_OK;
}

/* One row per op: clang-format would give each field a line. */
/* clang-format off */
static const tfd_op_def string_ops[] = {
    {.name = "StringToHashBucketFast", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .attrs = attrs_hash_bucket,
     .infer = infer_string_map},
    {.name = "StringSplit", .min_inputs = 2, .max_inputs = 2, .num_outputs = 3, .attrs = attrs_string_split,
     .infer = infer_string_split},
    {.name = "StringNGrams", .min_inputs = 2, .max_inputs = 2, .num_outputs = 2, .type_attr = "Tsplits",
     .type_input = 1, .allowed_types = TFD_TYPES_INDEX, .attrs = attrs_string_ngrams, .infer = infer_string_ngrams},
    {.name = "StaticRegexReplace", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .attrs = attrs_regex_replace,
     .infer = infer_string_map},
};
/* clang-format on */

const tfd_op_family tfd_string_ops = {"string", string_ops, (int)(sizeof string_ops / sizeof string_ops[0])};
