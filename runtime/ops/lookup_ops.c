/* Lookup ops, as TensorFlow's core/ops/lookup_ops.cc defines them: hash tables held as resources, in TensorFlow 2's and
 * TensorFlow 1's names. Their definitions and shape functions. */
#include <string.h>

#include "common_shape_fns.h"

/* hash tables (issue 26, lists helper; k_lookup_table.c):
 * A table is a resource; keys are int32, int64 or strings and values scalars of a numeric dtype, bool
 * or string. */
#define TABLE_KEYS ((1u << TFD_INT32) | (1u << TFD_INT64) | (1u << TFD_STRING))

#define TABLE_VALUES                                                                                      \
  ((1u << TFD_INT32) | (1u << TFD_INT64) | (1u << TFD_FLOAT32) | (1u << TFD_FLOAT64) | (1u << TFD_BOOL) | \
   (1u << TFD_STRING))

static tfd_code table_dtype(tfd_infer_ctx *c, const char *name, unsigned mask, tfd_dtype *out, tfd_status *st) {
  const tfd_attr_value *a = attr(c, name);
  if (!a || !a->dtype)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): missing required attr '%s'", node_name(c),
                           op_name(c), name);
  if (!(mask & (1u << a->dtype)))
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): %s %s is not supported (%s)", node_name(c),
                           op_name(c), name, tfd_dtype_name(a->dtype),
                           mask == TABLE_KEYS ? "keys are int32, int64 or string"
                                              : "values are int32, int64, float32, float64, bool or string");
  *out = a->dtype;
  return TFD_OK;
}

static tfd_code infer_hash_table(tfd_infer_ctx *c, tfd_status *st) {
  tfd_dtype kd, vd;
  if (table_dtype(c, "key_dtype", TABLE_KEYS, &kd, st) != TFD_OK ||
      table_dtype(c, "value_dtype", TABLE_VALUES, &vd, st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  return tfd_infer_var_handle(c, st);
}

static tfd_code need_table(tfd_infer_ctx *c, tfd_status *st) {
  if (c->in_types[0] != TFD_RESOURCE)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (%s): input 0 must be a table handle (resource), got %s", node_name(c),
                           op_name(c), tfd_dtype_name(c->in_types[0]));
  return tfd_infer_need_rank(c, 0, 0, "the table handle", st);
}

/* The table ops whose inputs 1 and 2 are keys and values (or default_value): their type attrs, when
 * given, must be the inputs' dtypes. */
static tfd_code infer_table_kv(tfd_infer_ctx *c, tfd_status *st) {
  if (need_table(c, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  const char *op = op_name(c);
  bool init = strncmp(op, "InitializeTable", 15) == 0;
  const char *names[2] = {init ? "Tkey" : "Tin", init ? "Tval" : "Tout"};
  for (int i = 0; i < 2 && i + 1 < c->num_inputs; i++) {
    const tfd_attr_value *a = attr(c, names[i]);
    if (a && a->dtype && a->dtype != c->in_types[i + 1])
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): input %d is %s but %s is %s", node_name(c), op,
                             i + 1, tfd_dtype_name(c->in_types[i + 1]), names[i], tfd_dtype_name(a->dtype));
  }
  if (strncmp(op, "LookupTableFind", 15) == 0) {
    c->out_types[0] = c->in_types[2];
    c->out_shapes[0] = c->in_shapes[1];
  }
  return TFD_OK;
}

static tfd_code infer_table_size(tfd_infer_ctx *c, tfd_status *st) {
  if (need_table(c, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  c->out_types[0] = TFD_INT64;
  c->out_shapes[0].ndims = 0;
  return TFD_OK;
}

static tfd_code infer_table_export(tfd_infer_ctx *c, tfd_status *st) {
  tfd_dtype kd, vd;
  if (need_table(c, st) != TFD_OK || table_dtype(c, "Tkeys", TABLE_KEYS, &kd, st) != TFD_OK ||
      table_dtype(c, "Tvalues", TABLE_VALUES, &vd, st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  c->out_types[0] = kd;
  c->out_types[1] = vd;
  c->out_shapes[0].ndims = c->out_shapes[1].ndims = 1;
  c->out_shapes[0].dims[0] = c->out_shapes[1].dims[0] = -1;
  return TFD_OK;
}

/* hash tables (issue 26, lists helper) */
static const tfd_attr_def attrs_hash_table[] = {{"container", TFD_ATTR_STRING, false, 0, 0, ""},
                                                {"shared_name", TFD_ATTR_STRING, false, 0, 0, ""},
                                                {"use_node_name_sharing", TFD_ATTR_BOOL, false, 0, 0, NULL},
                                                {"key_dtype", TFD_ATTR_TYPE, true, 0, 0, NULL},
                                                {"value_dtype", TFD_ATTR_TYPE, true, 0, 0, NULL},
                                                END};

static const tfd_attr_def attrs_table_in_out[] = {
    {"Tin", TFD_ATTR_TYPE, false, 0, 0, NULL}, {"Tout", TFD_ATTR_TYPE, false, 0, 0, NULL}, END};

static const tfd_attr_def attrs_table_init[] = {
    {"Tkey", TFD_ATTR_TYPE, false, 0, 0, NULL}, {"Tval", TFD_ATTR_TYPE, false, 0, 0, NULL}, END};

static const tfd_attr_def attrs_table_remove[] = {{"Tin", TFD_ATTR_TYPE, false, 0, 0, NULL}, END};

static const tfd_attr_def attrs_table_export[] = {
    {"Tkeys", TFD_ATTR_TYPE, true, 0, 0, NULL}, {"Tvalues", TFD_ATTR_TYPE, true, 0, 0, NULL}, END};

/* One row per op: clang-format would give each field a line. */
/* clang-format off */
static const tfd_op_def lookup_ops[] = {
    {.name = "HashTableV2", .num_outputs = 1, .stateful = true, .attrs = attrs_hash_table, .infer = infer_hash_table},
    {.name = "MutableHashTableV2", .num_outputs = 1, .stateful = true, .attrs = attrs_hash_table,
     .infer = infer_hash_table},
    {.name = "InitializeTableV2", .min_inputs = 3, .max_inputs = 3, .stateful = true, .attrs = attrs_table_init,
     .infer = infer_table_kv},
    {.name = "LookupTableImportV2", .min_inputs = 3, .max_inputs = 3, .stateful = true, .attrs = attrs_table_in_out,
     .infer = infer_table_kv},
    {.name = "LookupTableInsertV2", .min_inputs = 3, .max_inputs = 3, .stateful = true, .attrs = attrs_table_in_out,
     .infer = infer_table_kv},
    {.name = "LookupTableRemoveV2", .min_inputs = 2, .max_inputs = 2, .stateful = true, .attrs = attrs_table_remove,
     .infer = infer_table_kv},
    {.name = "LookupTableFindV2", .min_inputs = 3, .max_inputs = 3, .num_outputs = 1, .stateful = true,
     .attrs = attrs_table_in_out, .infer = infer_table_kv},
    {.name = "LookupTableSizeV2", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .stateful = true,
     .attrs = tfd_attrs_none, .infer = infer_table_size},
    {.name = "LookupTableExportV2", .min_inputs = 1, .max_inputs = 1, .num_outputs = 2, .stateful = true,
     .attrs = attrs_table_export, .infer = infer_table_export},
    /* TensorFlow 1's names for the same tables: a string-ref handle there, the resource here */
    {.name = "HashTable", .num_outputs = 1, .stateful = true, .attrs = attrs_hash_table, .infer = infer_hash_table},
    {.name = "MutableHashTable", .num_outputs = 1, .stateful = true, .attrs = attrs_hash_table,
     .infer = infer_hash_table},
    {.name = "InitializeTable", .min_inputs = 3, .max_inputs = 3, .stateful = true, .attrs = attrs_table_init,
     .infer = infer_table_kv},
    {.name = "LookupTableImport", .min_inputs = 3, .max_inputs = 3, .stateful = true, .attrs = attrs_table_in_out,
     .infer = infer_table_kv},
    {.name = "LookupTableInsert", .min_inputs = 3, .max_inputs = 3, .stateful = true, .attrs = attrs_table_in_out,
     .infer = infer_table_kv},
    {.name = "LookupTableFind", .min_inputs = 3, .max_inputs = 3, .num_outputs = 1, .stateful = true,
     .attrs = attrs_table_in_out, .infer = infer_table_kv},
    {.name = "LookupTableSize", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .stateful = true,
     .attrs = tfd_attrs_none, .infer = infer_table_size},
    {.name = "LookupTableExport", .min_inputs = 1, .max_inputs = 1, .num_outputs = 2, .stateful = true,
     .attrs = attrs_table_export, .infer = infer_table_export},
};
/* clang-format on */

const tfd_op_family tfd_lookup_ops = {"lookup", lookup_ops, (int)(sizeof lookup_ops / sizeof lookup_ops[0])};
