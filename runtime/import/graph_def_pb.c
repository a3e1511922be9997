/* Binary GraphDefs (TensorFlow's .pb): protobuf-c decodes and encodes the messages of
 * the .proto files under proto/tensorflow/core/framework/ (TensorFlow's field numbers); this file maps them to
 * and from tfd_graph_def.
 *
 * Everything read is checked before it reaches the runtime, and each error names the node and
 * attribute at fault: dtypes tfdev has no kernels for, shapes above TFD_MAX_DIMS or with
 * negative sizes, element counts that overflow, tensor contents whose size disagrees with the
 * shape, strings with NUL bytes (tfdev's strings are C strings), attr kinds tfdev cannot hold
 * (functions, lists of shapes or tensors), and calls into a function library. TensorProto's
 * typed value fields follow TensorFlow: fewer values than elements repeat the last one (one
 * value fills the tensor), none give zeros. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/tensor_internal.h"
#include "../core/api_args.h"
#include "../core/checked.h"
#include "../core/status_internal.h"
#include "../core/tstring.h"
#include "../graph/function_library.h"
#include "../framework/graph_def_internal.h"
#include "../ops/op_registry.h"
#include "readers.h"
#include "tensorflow/core/framework/graph.pb-c.h"


/* The DataTypes tfdev holds; everything else is refused by name. */
static const char *data_type_name(int dt) {
  static const char *const names[] = {"DT_INVALID", "DT_FLOAT",  "DT_DOUBLE", "DT_INT32",     "DT_UINT8",   "DT_INT16",
                                      "DT_INT8",    "DT_STRING", "DT_COMPLEX64", "DT_INT64", "DT_BOOL",    "DT_QINT8",
                                      "DT_QUINT8",  "DT_QINT32", "DT_BFLOAT16", "DT_QINT16", "DT_QUINT16", "DT_UINT16",
                                      "DT_COMPLEX128", "DT_HALF", "DT_RESOURCE", "DT_VARIANT", "DT_UINT32", "DT_UINT64"};
  if (dt >= 0 && dt < (int)(sizeof names / sizeof names[0])) return names[dt];
  if (dt > 100 && dt - 100 < (int)(sizeof names / sizeof names[0])) return "a reference dtype (*_REF)";
  return "an unknown DataType";
}

static bool supported_dtype(int dt) {
  return dt == TFD_FLOAT32 || dt == TFD_FLOAT64 || dt == TFD_INT32 || dt == TFD_INT64 || dt == TFD_BOOL ||
         dt == TFD_UINT8 || dt == TFD_FLOAT16 || dt == TFD_RESOURCE || dt == TFD_VARIANT || dt == TFD_COMPLEX64 ||
         dt == TFD_STRING;
}

/* "node 'n' attr 'a': " for messages. */
typedef struct where {
  const char *node, *attr;
} where;

static tfd_code fail(tfd_status *st, tfd_code code, const where *w, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static tfd_code fail(tfd_status *st, tfd_code code, const where *w, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *msg = tfd_vformat(fmt, ap);
  va_end(ap);
  tfd_status_setf(st, code, "GraphDef: node '%s'%s%s%s: %s", w->node, w->attr ? ", attr '" : "", w->attr ? w->attr : "",
                  w->attr ? "'" : "", msg ? msg : "out of memory");
  free(msg);
  return code;
}

static tfd_code dtype_of(int dt, const where *w, tfd_dtype *out, tfd_status *st) {
  if (!supported_dtype(dt)) return fail(st, TFD_UNIMPLEMENTED, w, "dtype %s (%d) is not supported", data_type_name(dt), dt);
  *out = (tfd_dtype)dt;
  return TFD_OK;
}

static tfd_code shape_of(const Tensorflow__TensorShapeProto *p, const where *w, bool need_known, tfd_shape *out,
                         tfd_status *st) {
  if (!p) {
    out->ndims = 0; /* an absent shape is a scalar, as in TensorFlow */
    return TFD_OK;
  }
  if (p->unknown_rank) {
    if (need_known) return fail(st, TFD_INVALID_ARGUMENT, w, "a tensor's shape cannot have an unknown rank");
    out->ndims = -1;
    return TFD_OK;
  }
  if (p->n_dim > TFD_MAX_DIMS)
    return fail(st, TFD_INVALID_ARGUMENT, w, "shape has %zu dimensions; tfdev supports at most %d", p->n_dim, TFD_MAX_DIMS);
  out->ndims = (int)p->n_dim;
  for (size_t i = 0; i < p->n_dim; i++) {
    int64_t d = p->dim[i]->size;
    if (d < -1 || (need_known && d < 0))
      return fail(st, TFD_INVALID_ARGUMENT, w, "dimension %zu has size %lld", i, (long long)d);
    out->dims[i] = d;
  }
  return TFD_OK;
}

/* Copies n typed values into the tensor's elements, repeating the last to fill it. */
#define FILL(T, SRC, N, CONV)                                             \
  do {                                                                    \
    T *o = data;                                                          \
    for (int64_t i = 0; i < numel; i++) o[i] = CONV((SRC)[i < (int64_t)(N) ? i : (int64_t)(N) - 1]); \
  } while (0)
#define SAME(x) (x)
#define TRUTH(x) ((x) != 0)

/* A string tensor's elements from string_val: the last value repeats when there are fewer. */
static tfd_code strings_of_values(tfd_tensor *t, const Tensorflow__TensorProto *p, tfd_status *st) {
  for (int64_t i = 0; i < tfd_tensor_numel(t); i++) {
    const ProtobufCBinaryData *v = &p->string_val[i < (int64_t)p->n_string_val ? (size_t)i : p->n_string_val - 1];
    if (!tfd_tensor_set_str(t, i, v->data, v->len))
      return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory reading a string tensor");
  }
  return TFD_OK;
}

static tfd_tensor *tensor_of(const Tensorflow__TensorProto *p, const where *w, tfd_status *st) {
  tfd_dtype dt = TFD_FLOAT32;
  tfd_shape s;
  if (dtype_of(p->dtype, w, &dt, st) != TFD_OK || shape_of(p->tensor_shape, w, true, &s, st) != TFD_OK) return NULL;
  if (dt == TFD_RESOURCE || dt == TFD_VARIANT) {
    fail(st, TFD_UNIMPLEMENTED, w, "%s tensors cannot be stored in a graph", tfd_dtype_name(dt));
    return NULL;
  }
  int64_t numel = 1, bytes;
  for (int i = 0; i < s.ndims; i++)
    if (!tfd_checked_mul(numel, s.dims[i], &numel)) {
      fail(st, TFD_INVALID_ARGUMENT, w, "the tensor's element count overflows 64 bits");
      return NULL;
    }
  size_t es = tfd_dtype_size(dt);
  if (!tfd_checked_mul(numel, (int64_t)es, &bytes)) {
    fail(st, TFD_INVALID_ARGUMENT, w, "the tensor's byte size overflows 64 bits");
    return NULL;
  }
  size_t nvals = 0;
  switch (dt) {
    case TFD_FLOAT32: nvals = p->n_float_val; break;
    case TFD_FLOAT64: nvals = p->n_double_val; break;
    case TFD_INT32: nvals = p->n_int_val; break;
    case TFD_INT64: nvals = p->n_int64_val; break;
    case TFD_BOOL: nvals = p->n_bool_val; break;
    case TFD_UINT8: nvals = p->n_int_val; break;   /* TensorFlow keeps uint8 values in int_val */
    case TFD_FLOAT16: nvals = p->n_half_val; break; /* and float16 bit patterns in half_val */
    case TFD_STRING: nvals = p->n_string_val; break;
    case TFD_COMPLEX64: /* and complex64 values as real, imaginary pairs of scomplex_val */
      if (p->n_scomplex_val % 2) {
        fail(st, TFD_INVALID_ARGUMENT, w, "scomplex_val has %zu floats, not real and imaginary pairs", p->n_scomplex_val);
        return NULL;
      }
      nvals = p->n_scomplex_val / 2;
      break;
    default: break;
  }
  if (p->tensor_content.len > 0 && dt != TFD_STRING) {
    if ((int64_t)p->tensor_content.len != bytes) {
      fail(st, TFD_INVALID_ARGUMENT, w, "tensor_content has %zu bytes but %s %s tensor of %lld elements needs %lld",
           p->tensor_content.len, tfd_article(tfd_dtype_name(dt)), tfd_dtype_name(dt), (long long)numel, (long long)bytes);
      return NULL;
    }
  } else if ((int64_t)nvals > numel) {
    fail(st, TFD_INVALID_ARGUMENT, w, "%zu values for a tensor of %lld elements", nvals, (long long)numel);
    return NULL;
  } else if (bytes > TFD_MAX_EXPANDED_BYTES && (int64_t)nvals < numel) {
    fail(st, TFD_RESOURCE_EXHAUSTED, w, "a %lld-byte tensor expanded from %zu values is over tfdev's limit of %lld bytes",
         (long long)bytes, nvals, (long long)TFD_MAX_EXPANDED_BYTES);
    return NULL;
  }
  tfd_tensor *t = tfd_tensor_make(NULL, dt, s.dims, s.ndims, st);
  if (!t) return NULL;
  if (dt == TFD_STRING) { /* elements never set are empty strings */
    tfd_code code = p->tensor_content.len > 0 ? tfd_strings_from_content(t, p->tensor_content.data, p->tensor_content.len, st)
                    : nvals > 0               ? strings_of_values(t, p, st)
                                              : TFD_OK;
    if (code == TFD_OK) return t;
    if (code != TFD_RESOURCE_EXHAUSTED)
      tfd_status_prefixf(st, "GraphDef: node '%s'%s%s%s: ", w->node, w->attr ? ", attr '" : "", w->attr ? w->attr : "",
                         w->attr ? "'" : "");
    tfd_tensor_unref(t);
    return NULL;
  }
  void *data = tfd_tensor_data(t);
  if (p->tensor_content.len > 0) {
    memcpy(data, p->tensor_content.data, p->tensor_content.len);
  } else if (nvals == 0) {
    memset(data, 0, (size_t)bytes);
  } else {
    switch (dt) {
      case TFD_FLOAT32: FILL(float, p->float_val, nvals, SAME); break;
      case TFD_FLOAT64: FILL(double, p->double_val, nvals, SAME); break;
      case TFD_INT32: FILL(int32_t, p->int_val, nvals, SAME); break;
      case TFD_INT64: FILL(int64_t, p->int64_val, nvals, SAME); break;
      case TFD_BOOL: FILL(bool, p->bool_val, nvals, TRUTH); break;
      case TFD_UINT8: FILL(uint8_t, p->int_val, nvals, (uint8_t)); break;
      case TFD_FLOAT16: FILL(uint16_t, p->half_val, nvals, (uint16_t)); break;
      case TFD_COMPLEX64: {
        float *o = data;
        for (int64_t i = 0; i < numel; i++) {
          size_t k = i < (int64_t)nvals ? (size_t)i : nvals - 1;
          o[2 * i] = p->scomplex_val[2 * k];
          o[2 * i + 1] = p->scomplex_val[2 * k + 1];
        }
        break;
      }
      default: break;
    }
  }
  return t;
}

/* A C string from protobuf bytes, refusing NULs. Caller frees. */
static char *string_of(ProtobufCBinaryData b, const where *w, tfd_status *st) {
  if (b.len > 0 && memchr(b.data, 0, b.len)) {
    fail(st, TFD_INVALID_ARGUMENT, w, "a string holds a NUL byte, which tfdev's strings cannot");
    return NULL;
  }
  char *s = malloc(b.len + 1);
  if (!s) {
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
    return NULL;
  }
  if (b.len) memcpy(s, b.data, b.len);
  s[b.len] = 0;
  return s;
}

static tfd_code list_of(const Tensorflow__AttrValue__ListValue *l, const where *w, tfd_node_def *n, tfd_status *st) {
  tfd_attr_value v = {0};
  tfd_code code = TFD_OK;
  int kinds = (l->n_s > 0) + (l->n_i > 0) + (l->n_f > 0) + (l->n_b > 0) + (l->n_type > 0) + (l->n_shape > 0) +
              (l->n_tensor > 0) + (l->n_func > 0);
  if (kinds > 1) return fail(st, TFD_INVALID_ARGUMENT, w, "a list holds values of %d kinds", kinds);
  if (l->n_b || l->n_shape || l->n_tensor || l->n_func)
    return fail(st, TFD_UNIMPLEMENTED, w, "lists of %s are not supported",
                l->n_b ? "bools" : l->n_shape ? "shapes" : l->n_tensor ? "tensors" : "functions");
  if (l->n_s) {
    char **items = calloc(l->n_s, sizeof *items);
    if (!items) return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
    for (size_t i = 0; i < l->n_s && code == TFD_OK; i++)
      if (!(items[i] = string_of(l->s[i], w, st))) code = tfd_status_code(st);
    v = (tfd_attr_value){.type = TFD_ATTR_LIST_STRING, .list_len = l->n_s, .list_s = (const char *const *)items};
    if (code == TFD_OK) code = tfd_node_def_set_attr(n, w->attr, &v, st);
    for (size_t i = 0; i < l->n_s; i++) free(items[i]);
    free(items);
    return code;
  }
  if (l->n_i) return tfd_node_def_set_attr(n, w->attr, &(tfd_attr_value){.type = TFD_ATTR_LIST_INT, .list_len = l->n_i, .list_i = l->i}, st);
  if (l->n_f) {
    double *f = malloc(l->n_f * sizeof *f);
    if (!f) return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
    for (size_t i = 0; i < l->n_f; i++) f[i] = l->f[i];
    code = tfd_node_def_set_attr(n, w->attr, &(tfd_attr_value){.type = TFD_ATTR_LIST_FLOAT, .list_len = l->n_f, .list_f = f}, st);
    free(f);
    return code;
  }
  if (l->n_type) {
    tfd_dtype *t = malloc(l->n_type * sizeof *t);
    if (!t) return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
    for (size_t i = 0; i < l->n_type && code == TFD_OK; i++) code = dtype_of(l->type[i], w, &t[i], st);
    if (code == TFD_OK)
      code = tfd_node_def_set_attr(n, w->attr, &(tfd_attr_value){.type = TFD_ATTR_LIST_TYPE, .list_len = l->n_type, .list_type = t}, st);
    free(t);
    return code;
  }
  /* An empty list: TensorFlow cannot tell its kind either; an empty list(string) serves every reader. */
  return tfd_node_def_set_attr(n, w->attr, &(tfd_attr_value){.type = TFD_ATTR_LIST_STRING}, st);
}

static tfd_code attr_of(const Tensorflow__AttrValue *a, const where *w, tfd_node_def *n, tfd_status *st) {
  tfd_attr_value v = {0};
  tfd_code code;
  switch (a->value_case) {
    case TENSORFLOW__ATTR_VALUE__VALUE_S: {
      char *s = string_of(a->s, w, st);
      if (!s) return tfd_status_code(st);
      v = (tfd_attr_value){.type = TFD_ATTR_STRING, .s = s};
      code = tfd_node_def_set_attr(n, w->attr, &v, st);
      free(s);
      return code;
    }
    case TENSORFLOW__ATTR_VALUE__VALUE_I: v = (tfd_attr_value){.type = TFD_ATTR_INT, .i = a->i}; break;
    case TENSORFLOW__ATTR_VALUE__VALUE_F: v = (tfd_attr_value){.type = TFD_ATTR_FLOAT, .f = a->f}; break;
    case TENSORFLOW__ATTR_VALUE__VALUE_B: v = (tfd_attr_value){.type = TFD_ATTR_BOOL, .b = a->b}; break;
    case TENSORFLOW__ATTR_VALUE__VALUE_TYPE:
      v.type = TFD_ATTR_TYPE;
      if (dtype_of(a->type, w, &v.dtype, st) != TFD_OK) return tfd_status_code(st);
      break;
    case TENSORFLOW__ATTR_VALUE__VALUE_SHAPE:
      v.type = TFD_ATTR_SHAPE;
      if (shape_of(a->shape, w, false, &v.shape, st) != TFD_OK) return tfd_status_code(st);
      break;
    case TENSORFLOW__ATTR_VALUE__VALUE_TENSOR: {
      if (!a->tensor) return fail(st, TFD_INVALID_ARGUMENT, w, "an empty tensor value");
      tfd_tensor *t = tensor_of(a->tensor, w, st);
      if (!t) return tfd_status_code(st);
      v = (tfd_attr_value){.type = TFD_ATTR_TENSOR, .tensor = t};
      code = tfd_node_def_set_attr(n, w->attr, &v, st);
      tfd_tensor_unref(t);
      return code;
    }
    case TENSORFLOW__ATTR_VALUE__VALUE_LIST:
      if (!a->list) return tfd_node_def_set_attr(n, w->attr, &(tfd_attr_value){.type = TFD_ATTR_LIST_STRING}, st);
      return list_of(a->list, w, n, st);
    case TENSORFLOW__ATTR_VALUE__VALUE_FUNC:
      if (tfd_function_attr(tfd_node_def_op(n), w->attr) && a->func && a->func->name && *a->func->name) {
        /* If's branches, While's cond and body, a call's f: the function's name, for the inlining pass */
        v = (tfd_attr_value){.type = TFD_ATTR_STRING, .s = a->func->name};
        break;
      }
      return fail(st, TFD_UNIMPLEMENTED, w, "function-valued attrs ('%s') are not supported",
                  a->func && a->func->name ? a->func->name : "");
    case TENSORFLOW__ATTR_VALUE__VALUE_PLACEHOLDER:
      return fail(st, TFD_INVALID_ARGUMENT, w, "a placeholder attr ('%s') belongs in a function body, not a graph",
                  a->placeholder ? a->placeholder : "");
    default: return fail(st, TFD_INVALID_ARGUMENT, w, "the attr has no value");
  }
  return tfd_node_def_set_attr(n, w->attr, &v, st);
}

/* NodeDefs into g: the graph's nodes, or a function's body. */
static tfd_code nodes_into(tfd_graph_def *g, Tensorflow__NodeDef *const *nodes, size_t count, tfd_status *st) {
  tfd_code code = TFD_OK;
  for (size_t i = 0; i < count && code == TFD_OK; i++) {
    const Tensorflow__NodeDef *p = nodes[i];
    tfd_node_def *n = tfd_graph_def_add_node(g, p->name, p->op, st);
    if (!n) return tfd_status_code(st);
    if (p->device && *p->device) code = tfd_node_def_set_device(n, p->device, st);
    for (size_t k = 0; k < p->n_input && code == TFD_OK; k++) code = tfd_node_def_add_input(n, p->input[k], st);
    for (size_t k = 0; k < p->n_attr && code == TFD_OK; k++) {
      const Tensorflow__NodeDef__AttrEntry *e = p->attr[k];
      where w = {p->name, e->key ? e->key : ""};
      /* the output shapes of a call or of If/While: lists of shapes tfdev does not hold, and the
       * inlined nodes infer their own */
      if (e->key && tfd_function_op(p->op) && strcmp(e->key, "output_shapes") == 0) continue;
      if (!e->key || !*e->key) code = fail(st, TFD_INVALID_ARGUMENT, &w, "an attr without a name");
      else if (!e->value) code = fail(st, TFD_INVALID_ARGUMENT, &w, "the attr has no value");
      else code = attr_of(e->value, &w, n, st);
    }
  }
  return code;
}

static tfd_code args_into(tfd_function_def *f, Tensorflow__ArgDef *const *args, size_t count, bool output, tfd_status *st) {
  for (size_t i = 0; i < count; i++) {
    const Tensorflow__ArgDef *a = args[i];
    bool typed = a->type != 0, attr = a->type_attr && *a->type_attr;
    if (!a->name || !*a->name || (!typed && !attr) || (a->number_attr && *a->number_attr) ||
        (a->type_list_attr && *a->type_list_attr))
      return tfd_status_setf(st, TFD_UNIMPLEMENTED,
                             "GraphDef: function '%s': %s argument %zu is not one tensor of a dtype or type attr", f->name,
                             output ? "output" : "input", i);
    if (typed && !supported_dtype(a->type))
      return tfd_status_setf(st, TFD_UNIMPLEMENTED, "GraphDef: function '%s': argument '%s' has dtype %s", f->name, a->name,
                             data_type_name(a->type));
    if (tfd_function_def_add_arg(f, output, a->name, typed ? (tfd_dtype)a->type : 0, typed ? NULL : a->type_attr, st) != TFD_OK)
      return tfd_status_code(st);
  }
  return TFD_OK;
}

/* The library's functions: signatures, bodies and returns. */
static tfd_code library_into(tfd_function_library *lib, const Tensorflow__FunctionDefLibrary *l, tfd_status *st) {
  for (size_t i = 0; l && i < l->n_function; i++) {
    const Tensorflow__FunctionDef *fn = l->function[i];
    const Tensorflow__OpDefSignature *sig = fn ? fn->signature : NULL;
    if (!sig || !sig->name || !*sig->name)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "GraphDef: library function %zu has no name", i);
    tfd_function_def *f = tfd_function_library_add(lib, sig->name, st);
    tfd_code code = !f                                                            ? tfd_status_code(st)
                    : args_into(f, sig->input_arg, sig->n_input_arg, false, st) != TFD_OK ? tfd_status_code(st)
                    : args_into(f, sig->output_arg, sig->n_output_arg, true, st) != TFD_OK ? tfd_status_code(st)
                                                                                 : nodes_into(f->body, fn->node_def, fn->n_node_def, st);
    for (size_t k = 0; code == TFD_OK && k < fn->n_ret; k++) {
      const Tensorflow__FunctionDef__RetEntry *r = fn->ret[k];
      code = r && r->key && r->value ? tfd_function_def_set_ret(f, r->key, r->value, st)
                                     : tfd_status_setf(st, TFD_INVALID_ARGUMENT, "GraphDef: function '%s': an empty ret entry",
                                                       f->name);
    }
    if (code != TFD_OK) return code;
  }
  return TFD_OK;
}

/* protobuf-c's allocator, counting what it could not get: an unpack that fails for want of memory
 * is RESOURCE_EXHAUSTED, not a corrupted file. */
typedef struct pb_memory {
  ProtobufCAllocator a;
  bool out_of_memory;
} pb_memory;

static void *pb_alloc(void *data, size_t size) {
  void *p = malloc(size ? size : 1);
  if (!p) ((pb_memory *)data)->out_of_memory = true;
  return p;
}

static void pb_free(void *data, void *p) {
  (void)data;
  free(p);
}

static Tensorflow__GraphDef *unpack(const void *data, size_t size, bool *out_of_memory) {
  pb_memory m = {{pb_alloc, pb_free, NULL}, false};
  m.a.allocator_data = &m;
  Tensorflow__GraphDef *g = tensorflow__graph_def__unpack(&m.a, size, data);
  *out_of_memory = !g && m.out_of_memory;
  return g;
}

/* protobuf-c frees through the allocator it is given; pb_free needs no data. */
static void free_unpacked(Tensorflow__GraphDef *g) {
  ProtobufCAllocator a = {pb_alloc, pb_free, NULL};
  tensorflow__graph_def__free_unpacked(g, &a);
}

/* A SavedModel proto (saved_model.pb) starts with saved_model_schema_version (field 1, a varint: 0x08)
 * and a MetaGraphDef (field 2, length-delimited: 0x12); a GraphDef's field 1 is a node (0x0a), so the
 * first byte tells them apart. */
static bool is_saved_model(const unsigned char *data, size_t size) {
  if (size < 3 || data[0] != 0x08) return false;
  size_t i = 1;
  while (i < size && i < 11 && (data[i] & 0x80)) i++; /* the version's varint */
  return i + 1 < size && data[i + 1] == 0x12;
}

static tfd_graph_def *parse_graph_def(const void *data, size_t size, tfd_status *st) {
  tfd_status_reset(st);
  if (!data && size) {
    tfd_status_setf(st, TFD_INVALID_ARGUMENT, "tfd_graph_def_parse: data is NULL but size is %zu", size);
    return NULL;
  }
  bool oom;
  Tensorflow__GraphDef *g = unpack(data, size, &oom);
  if (!g) {
    if (oom) tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "GraphDef: out of memory reading %zu bytes", size);
    else if (is_saved_model(data, size))
      tfd_status_setf(st, TFD_UNIMPLEMENTED, "a TensorFlow SavedModel (saved_model.pb), not a GraphDef; " TFD_SAVED_MODEL_ADVICE);
    else tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                         "GraphDef: %zu bytes are not a binary GraphDef (truncated or corrupted protobuf)", size);
    return NULL;
  }
  tfd_graph_def *out = tfd_graph_def_new();
  tfd_function_library lib = TFD_FUNCTION_LIBRARY_INIT;
  tfd_code code = out ? nodes_into(out, g->node, g->n_node, st) : tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  if (code == TFD_OK) code = library_into(&lib, g->library, st);
  if (code == TFD_OK && tfd_function_library_inline(out, &lib, st) != TFD_OK)
    code = tfd_status_prefixf(st, "GraphDef: ");
  tfd_function_library_free(&lib);
  free_unpacked(g);
  if (code != TFD_OK) {
    tfd_graph_def_free(out);
    return NULL;
  }
  return out;
}

tfd_code tfd_graph_def_parse(const void *data, size_t size, tfd_graph_def **out, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_graph_def_parse", "out", out)) return TFD_INVALID_ARGUMENT;
  tfd_status local = TFD_STATUS_INIT;
  *out = parse_graph_def(data, size, &local);
  return tfd_status_move(status, &local);
}


/* ---- writing ---- */
/* The protobuf message tree owns nothing the graph def does not: strings and arrays point into
 * the graph def; only the message structs are allocated here, in one arena freed at the end. */
typedef struct arena {
  void **blocks;
  size_t n, cap;
  bool failed;
} arena;

static void *arena_alloc(arena *a, size_t size) {
  if (a->failed) return NULL;
  if (a->n == a->cap) {
    size_t cap = a->cap ? a->cap * 2 : 64;
    void **b = realloc(a->blocks, cap * sizeof *b);
    if (!b) {
      a->failed = true;
      return NULL;
    }
    a->blocks = b;
    a->cap = cap;
  }
  void *p = calloc(1, size ? size : 1);
  if (!p) {
    a->failed = true;
    return NULL;
  }
  return a->blocks[a->n++] = p;
}

static void arena_free(arena *a) {
  for (size_t i = 0; i < a->n; i++) free(a->blocks[i]);
  free(a->blocks);
}

static Tensorflow__TensorShapeProto *shape_msg(arena *a, const tfd_shape *s) {
  Tensorflow__TensorShapeProto *m = arena_alloc(a, sizeof *m);
  if (!m) return NULL;
  tensorflow__tensor_shape_proto__init(m);
  if (s->ndims < 0) {
    m->unknown_rank = 1;
    return m;
  }
  m->n_dim = (size_t)s->ndims;
  m->dim = arena_alloc(a, (size_t)s->ndims * sizeof *m->dim);
  for (int i = 0; m->dim && i < s->ndims; i++) {
    Tensorflow__TensorShapeProto__Dim *d = arena_alloc(a, sizeof *d);
    if (!d) return NULL;
    tensorflow__tensor_shape_proto__dim__init(d);
    d->size = s->dims[i];
    m->dim[i] = d;
  }
  return a->failed ? NULL : m;
}

static Tensorflow__TensorProto *tensor_msg(arena *a, const tfd_tensor *t) {
  Tensorflow__TensorProto *m = arena_alloc(a, sizeof *m);
  if (!m) return NULL;
  tensorflow__tensor_proto__init(m);
  m->dtype = (Tensorflow__DataType)tfd_tensor_dtype(t);
  tfd_shape s;
  tfd_shape_of_tensor(t, &s);
  m->tensor_shape = shape_msg(a, &s);
  if (m->dtype == TENSORFLOW__DATA_TYPE__DT_STRING) { /* string_val, as TensorFlow's Python writes them */
    int64_t n = tfd_tensor_numel(t);
    m->n_string_val = (size_t)n;
    m->string_val = n ? arena_alloc(a, (size_t)n * sizeof *m->string_val) : NULL;
    for (int64_t i = 0; m->string_val && i < n; i++) {
      size_t len;
      m->string_val[i].data = (uint8_t *)tfd_tensor_string_at(t, i, &len);
      m->string_val[i].len = len;
    }
    return a->failed ? NULL : m;
  }
  m->tensor_content.len = tfd_tensor_byte_size(t);
  m->tensor_content.data = (uint8_t *)tfd_tensor_const_data(t);
  return m;
}

static tfd_code attr_msg(arena *a, const tfd_node_def *n, size_t k, Tensorflow__AttrValue **out, tfd_status *st) {
  const tfd_attr_value *v = tfd_node_def_attr_at(n, k);
  where w = {tfd_node_def_name(n), tfd_node_def_attr_name(n, k)};
  Tensorflow__AttrValue *m = arena_alloc(a, sizeof *m);
  if (!m) return TFD_RESOURCE_EXHAUSTED;
  tensorflow__attr_value__init(m);
  Tensorflow__AttrValue__ListValue *l = NULL;
  if (v->type >= TFD_ATTR_LIST_INT) {
    if (!(l = arena_alloc(a, sizeof *l))) return TFD_RESOURCE_EXHAUSTED;
    tensorflow__attr_value__list_value__init(l);
    m->value_case = TENSORFLOW__ATTR_VALUE__VALUE_LIST;
    m->list = l;
  }
  switch (v->type) {
    case TFD_ATTR_INT: m->value_case = TENSORFLOW__ATTR_VALUE__VALUE_I, m->i = v->i; break;
    case TFD_ATTR_FLOAT: m->value_case = TENSORFLOW__ATTR_VALUE__VALUE_F, m->f = (float)v->f; break;
    case TFD_ATTR_BOOL: m->value_case = TENSORFLOW__ATTR_VALUE__VALUE_B, m->b = v->b; break;
    case TFD_ATTR_STRING:
      m->value_case = TENSORFLOW__ATTR_VALUE__VALUE_S;
      m->s.data = (uint8_t *)v->s;
      m->s.len = strlen(v->s);
      break;
    case TFD_ATTR_TYPE: m->value_case = TENSORFLOW__ATTR_VALUE__VALUE_TYPE, m->type = (Tensorflow__DataType)v->dtype; break;
    case TFD_ATTR_SHAPE:
      m->value_case = TENSORFLOW__ATTR_VALUE__VALUE_SHAPE;
      m->shape = shape_msg(a, &v->shape);
      break;
    case TFD_ATTR_TENSOR:
      if (tfd_tensor_dtype(v->tensor) == TFD_RESOURCE || tfd_tensor_dtype(v->tensor) == TFD_VARIANT)
        return fail(st, TFD_INVALID_ARGUMENT, &w, "%s tensors cannot be saved in a GraphDef",
                    tfd_dtype_name(tfd_tensor_dtype(v->tensor)));
      m->value_case = TENSORFLOW__ATTR_VALUE__VALUE_TENSOR;
      m->tensor = tensor_msg(a, v->tensor);
      break;
    case TFD_ATTR_LIST_INT:
      l->n_i = v->list_len;
      l->i = (int64_t *)v->list_i;
      break;
    case TFD_ATTR_LIST_FLOAT:
      l->n_f = v->list_len;
      if (v->list_len && (l->f = arena_alloc(a, v->list_len * sizeof *l->f)))
        for (size_t i = 0; i < v->list_len; i++) l->f[i] = (float)v->list_f[i];
      break;
    case TFD_ATTR_LIST_TYPE:
      l->n_type = v->list_len;
      if (v->list_len && (l->type = arena_alloc(a, v->list_len * sizeof *l->type)))
        for (size_t i = 0; i < v->list_len; i++) l->type[i] = (Tensorflow__DataType)v->list_type[i];
      break;
    case TFD_ATTR_LIST_STRING:
      l->n_s = v->list_len;
      if (v->list_len && (l->s = arena_alloc(a, v->list_len * sizeof *l->s)))
        for (size_t i = 0; i < v->list_len; i++) l->s[i] = (ProtobufCBinaryData){strlen(v->list_s[i]), (uint8_t *)v->list_s[i]};
      break;
  }
  *out = m;
  return a->failed ? tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory writing a GraphDef") : TFD_OK;
}

tfd_code tfd_graph_def_serialize(const tfd_graph_def *g, void **out, size_t *size, tfd_status *st) {
  tfd_status_reset(st);
  if (tfd_arg_required(st, "tfd_graph_def_serialize", "g", g) || tfd_arg_required(st, "tfd_graph_def_serialize", "data", out) ||
      tfd_arg_required(st, "tfd_graph_def_serialize", "size", size))
    return TFD_INVALID_ARGUMENT;
  *out = NULL;
  *size = 0;
  arena a = {0};
  Tensorflow__GraphDef m = TENSORFLOW__GRAPH_DEF__INIT;
  tfd_code code = TFD_OK;
  m.n_node = g->n;
  m.node = arena_alloc(&a, g->n * sizeof *m.node);
  for (size_t i = 0; m.node && i < g->n && code == TFD_OK; i++) {
    const tfd_node_def *n = g->nodes[i];
    Tensorflow__NodeDef *p = arena_alloc(&a, sizeof *p);
    if (!p) break;
    tensorflow__node_def__init(p);
    p->name = n->name;
    p->op = n->op;
    p->device = n->device;
    p->n_input = n->ninputs;
    p->input = n->inputs;
    p->n_attr = n->nattrs;
    p->attr = arena_alloc(&a, n->nattrs * sizeof *p->attr);
    for (size_t k = 0; p->attr && k < n->nattrs && code == TFD_OK; k++) {
      Tensorflow__NodeDef__AttrEntry *e = arena_alloc(&a, sizeof *e);
      if (!e) break;
      tensorflow__node_def__attr_entry__init(e);
      e->key = n->attrs[k].name;
      code = attr_msg(&a, n, k, &e->value, st);
      p->attr[k] = e;
    }
    m.node[i] = p;
  }
  if (code == TFD_OK && a.failed) code = tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory writing a GraphDef");
  if (code == TFD_OK) {
    size_t len = tensorflow__graph_def__get_packed_size(&m);
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf) {
      code = tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory writing a GraphDef of %zu bytes", len);
    } else {
      tensorflow__graph_def__pack(&m, buf);
      *out = buf;
      *size = len;
    }
  }
  arena_free(&a);
  return code;
}

tfd_graph_def *tfd_graph_def_pb_ops_only(const void *data, size_t size) {
  bool oom;
  Tensorflow__GraphDef *p = unpack(data, size, &oom);
  tfd_graph_def *g = p ? tfd_graph_def_new() : NULL;
  for (size_t i = 0; g && i < p->n_node; i++)
    if (!tfd_graph_def_add_node(g, p->node[i]->name, p->node[i]->op, NULL)) {
      tfd_graph_def_free(g);
      g = NULL;
    }
  if (p) free_unpacked(p);
  return g;
}
