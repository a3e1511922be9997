/* TensorFlow.js graph models: model.json (a GraphDef in protobuf's JSON mapping) plus the weight
 * files its manifest lists, read into a tfd_graph_def. cJSON parses the text; the mapping is
 * protobuf's: camelCase field names (snake_case accepted too), int64 values as strings, enum
 * values by name ("DT_FLOAT"), bytes in base64.
 *
 * Weights follow TensorFlow.js's loader: the files of a group are one byte stream, the group's
 * weights follow one another in it, and each fills the value of the Const of its name.
 * Quantized weights are dequantized as TensorFlow.js does: float16 to float32; uint8 and uint16
 * to value * scale + min. Every error names the file and the node, weight or field at fault. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "../core/tensor_internal.h"
#include "../core/checked.h"
#include "../core/file_in_dir.h"
#include "../core/half.h"
#include "../core/status_internal.h"
#include "../core/strmap.h"
#include "../core/tstring.h"
#include "../graph/function_library.h"
#include "../framework/graph_def_internal.h"
#include "readers.h"
#include "json_syntax.h"
#include "layers_model.h"
#include "../ops/op_registry.h"

/* A weight may not be larger than this (TensorFlow.js shards files at 4 MiB; models of a few
 * hundred MiB exist): a manifest cannot make tfdev allocate without bound. */
#define MAX_WEIGHT_BYTES ((int64_t)1 << 32)

typedef struct ctx {
  const char *path; /* model.json, for messages */
  tfd_status *st;
  tfd_weight_reader read; /* the bytes of one weight file, from a host; NULL: */
  void *read_arg;
  const char *dir; /* the weight files are in this directory (NULL or "": the current one), confined to it */
} ctx;

static tfd_code failf(ctx *c, tfd_code code, const char *fmt, ...) TFD_PRINTF(3, 4);
static tfd_code failf(ctx *c, tfd_code code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tfd_status_vsetf_in(c->st, code, c->path, fmt, ap);
  va_end(ap);
  return code;
}

/* A field by its protobuf JSON name or its proto name. */
static const cJSON *field(const cJSON *obj, const char *camel, const char *snake) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, camel);
  return v || !snake ? v : cJSON_GetObjectItemCaseSensitive(obj, snake);
}

/* int64 in protobuf JSON: a string of digits, or a number. */
static bool int64_of(const cJSON *v, int64_t *out) {
  if (cJSON_IsNumber(v)) {
    double d = v->valuedouble;
    if (d != floor(d) || d < -9.2233720368547758e18 || d >= 9.2233720368547758e18) return false;
    *out = (int64_t)d;
    return true;
  }
  if (!cJSON_IsString(v) || !*v->valuestring) return false;
  char *end;
  errno = 0;
  long long n = strtoll(v->valuestring, &end, 10);
  if (errno || *end) return false;
  *out = n;
  return true;
}

/* float in protobuf JSON: a number, or "NaN", "Infinity", "-Infinity". */
static bool double_of(const cJSON *v, double *out) {
  if (cJSON_IsNumber(v)) {
    *out = v->valuedouble;
    return true;
  }
  if (!cJSON_IsString(v)) return false;
  if (strcmp(v->valuestring, "NaN") == 0) *out = NAN;
  else if (strcmp(v->valuestring, "Infinity") == 0) *out = INFINITY;
  else if (strcmp(v->valuestring, "-Infinity") == 0) *out = -INFINITY;
  else {
    char *end;
    *out = strtod(v->valuestring, &end);
    return *v->valuestring && !*end;
  }
  return true;
}

/* A DataType by enum name ("DT_FLOAT") or number; 0 when unknown. */
static tfd_dtype dtype_of(const cJSON *v) {
  int64_t n;
  if (cJSON_IsString(v)) return tfd_dtype_from_name(v->valuestring);
  if (int64_of(v, &n) && n > 0 && n < 64 && tfd_dtype_name((tfd_dtype)n)) return (tfd_dtype)n;
  return 0;
}

/* Standard base64 (protobuf JSON writes bytes so); NULL for malformed text, or with *oom set when
 * memory ran out. Caller frees. */
static unsigned char *base64_decode(const char *s, size_t *len, bool *oom) {
  size_t n = strlen(s);
  unsigned char *out = malloc(n / 4 * 3 + 3);
  *oom = !out;
  if (!out) return NULL;
  size_t o = 0;
  unsigned acc = 0;
  int bits = 0, pad = 0;
  for (size_t i = 0; i < n; i++) {
    char ch = s[i];
    int v;
    if (ch >= 'A' && ch <= 'Z') v = ch - 'A';
    else if (ch >= 'a' && ch <= 'z') v = ch - 'a' + 26;
    else if (ch >= '0' && ch <= '9') v = ch - '0' + 52;
    else if (ch == '+' || ch == '-') v = 62;
    else if (ch == '/' || ch == '_') v = 63;
    else if (ch == '=') {
      pad++;
      continue;
    } else {
      free(out);
      return NULL;
    }
    if (pad) {
      free(out);
      return NULL;
    }
    acc = (acc << 6) | (unsigned)v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (unsigned char)(acc >> bits);
      acc &= (1u << bits) - 1;
    }
  }
  *len = o;
  return out;
}

static tfd_code shape_of(ctx *c, const cJSON *s, const char *where, bool need_known, tfd_shape *out) {
  out->ndims = 0;
  if (!s) return TFD_OK;
  if (!cJSON_IsObject(s)) return failf(c, TFD_INVALID_ARGUMENT, "%s: a shape must be an object", where);
  if (cJSON_IsTrue(field(s, "unknownRank", "unknown_rank"))) {
    if (need_known) return failf(c, TFD_INVALID_ARGUMENT, "%s: a tensor's shape cannot have an unknown rank", where);
    out->ndims = -1;
    return TFD_OK;
  }
  const cJSON *dims = field(s, "dim", NULL);
  if (!dims) return TFD_OK;
  if (!cJSON_IsArray(dims)) return failf(c, TFD_INVALID_ARGUMENT, "%s: shape.dim must be a list", where);
  int n = cJSON_GetArraySize(dims);
  if (n > TFD_MAX_DIMS) return failf(c, TFD_INVALID_ARGUMENT, "%s: shape has %d dimensions; tfdev supports at most %d", where, n, TFD_MAX_DIMS);
  out->ndims = n;
  int i = 0;
  const cJSON *d;
  cJSON_ArrayForEach(d, dims) {
    int64_t size = 0;
    const cJSON *sz = field(d, "size", NULL);
    if (sz && !int64_of(sz, &size)) return failf(c, TFD_INVALID_ARGUMENT, "%s: dimension %d is not an integer", where, i);
    if (size < -1 || (need_known && size < 0))
      return failf(c, TFD_INVALID_ARGUMENT, "%s: dimension %d has size %lld", where, i, (long long)size);
    out->dims[i++] = size;
  }
  return TFD_OK;
}

/* numel and bytes of a known shape, overflow-checked. */
static tfd_code sizes(ctx *c, const tfd_shape *s, size_t es, const char *where, int64_t *numel, int64_t *bytes) {
  *numel = 1;
  for (int i = 0; i < s->ndims; i++)
    if (!tfd_checked_mul(*numel, s->dims[i], numel))
      return failf(c, TFD_INVALID_ARGUMENT, "%s: the element count overflows 64 bits", where);
  if (!tfd_checked_mul(*numel, (int64_t)es, bytes))
    return failf(c, TFD_INVALID_ARGUMENT, "%s: the byte size overflows 64 bits", where);
  return TFD_OK;
}

/* A string TensorProto in JSON: stringVal (base64 strings; the last repeats when there are fewer), or
 * tensorContent in TensorFlow's encoding of strings. */
static tfd_tensor *strings_of(ctx *c, const cJSON *t, const tfd_shape *s, int64_t numel, const char *where,
                              bool *no_values) {
  const cJSON *content = field(t, "tensorContent", "tensor_content"), *vals = field(t, "stringVal", "string_val");
  int nvals = cJSON_IsArray(vals) ? cJSON_GetArraySize(vals) : 0;
  *no_values = !content && nvals == 0 && numel > 0;
  if (nvals > numel) {
    failf(c, TFD_INVALID_ARGUMENT, "%s: %d values for a tensor of %lld elements", where, nvals, (long long)numel);
    return NULL;
  }
  if (*no_values) return NULL;
  if (numel * (int64_t)sizeof(void *) > TFD_MAX_EXPANDED_BYTES) {
    failf(c, TFD_RESOURCE_EXHAUSTED, "%s: a string tensor of %lld elements is over tfdev's limit", where,
          (long long)numel);
    return NULL;
  }
  tfd_tensor *out = tfd_tensor_make(NULL, TFD_STRING, s->dims, s->ndims, c->st);
  if (!out) return NULL;
  size_t len = 0;
  bool oom = false;
  if (content) {
    unsigned char *raw = cJSON_IsString(content) ? base64_decode(content->valuestring, &len, &oom) : NULL;
    tfd_code code = raw ? tfd_strings_from_content(out, raw, len, c->st) : TFD_INVALID_ARGUMENT;
    free(raw);
    if (code == TFD_OK) return out;
    if (!raw && oom) failf(c, TFD_RESOURCE_EXHAUSTED, "%s: out of memory decoding tensorContent", where);
    else if (!raw) failf(c, TFD_INVALID_ARGUMENT, "%s: tensorContent is not base64", where);
    else tfd_status_prefixf(c->st, "%s: ", where);
    tfd_tensor_unref(out);
    return NULL;
  }
  int64_t i = 0;
  const cJSON *v = NULL;
  cJSON_ArrayForEach(v, vals) {
    unsigned char *raw = cJSON_IsString(v) ? base64_decode(v->valuestring, &len, &oom) : NULL;
    bool ok = raw != NULL;
    for (int64_t k = i; ok && k < (i == nvals - 1 ? numel : i + 1); k++) ok = tfd_tensor_set_str(out, k, raw, len);
    free(raw);
    if (!ok) {
      if (oom || raw) failf(c, TFD_RESOURCE_EXHAUSTED, "%s: out of memory reading string %lld", where, (long long)i);
      else failf(c, TFD_INVALID_ARGUMENT, "%s: stringVal %lld is not base64 text", where, (long long)i);
      tfd_tensor_unref(out);
      return NULL;
    }
    i++;
  }
  return out;
}

/* A TensorProto in JSON. A Const whose values live in the weight files has only dtype and shape:
 * *no_values is then set and NULL returned with no error: the weight makes the tensor (nothing is
 * allocated for a shape the weights may never fill). */
static tfd_tensor *tensor_of(ctx *c, const cJSON *t, const char *where, bool *no_values) {
  tfd_dtype dt = dtype_of(field(t, "dtype", NULL));
  if (!dt || dt == TFD_RESOURCE || dt == TFD_VARIANT) {
    const cJSON *d = field(t, "dtype", NULL);
    failf(c, TFD_UNIMPLEMENTED, "%s: dtype %s is not supported", where, cJSON_IsString(d) ? d->valuestring : "(missing)");
    return NULL;
  }
  tfd_shape s;
  int64_t numel = 0, bytes = 0;
  if (shape_of(c, field(t, "tensorShape", "tensor_shape"), where, true, &s) != TFD_OK ||
      sizes(c, &s, tfd_dtype_size(dt), where, &numel, &bytes) != TFD_OK)
    return NULL;
  if (dt == TFD_STRING) return strings_of(c, t, &s, numel, where, no_values);
  static const char *const camel[] = {"",        "floatVal", "doubleVal", "intVal", "intVal", "", "", "", "scomplexVal",
                                      "int64Val", "boolVal", "",         "",          "",       "",       "", "", "", "",
                                      "halfVal"};
  static const char *const snake[] = {"",         "float_val", "double_val", "int_val", "int_val", "", "", "",
                                      "scomplex_val", "int64_val", "bool_val",  "",           "",        "",
                                      "",         "",          "",           "",        "",        "half_val"};
  const cJSON *content = field(t, "tensorContent", "tensor_content"), *vals = field(t, camel[dt], snake[dt]);
  int nvals = cJSON_IsArray(vals) ? cJSON_GetArraySize(vals) : 0;
  int per_value = dt == TFD_COMPLEX64 ? 2 : 1; /* scomplexVal holds real and imaginary parts in turn */
  if (nvals % per_value) {
    failf(c, TFD_INVALID_ARGUMENT, "%s: scomplexVal has %d floats, not real and imaginary pairs", where, nvals);
    return NULL;
  }
  nvals /= per_value;
  *no_values = !content && nvals == 0 && numel > 0; /* an empty tensor needs no values */
  if (nvals > numel) {
    failf(c, TFD_INVALID_ARGUMENT, "%s: %d values for a tensor of %lld elements", where, nvals, (long long)numel);
    return NULL;
  }
  if (*no_values) return NULL;
  if (bytes > MAX_WEIGHT_BYTES || (!content && nvals < numel && bytes > TFD_MAX_EXPANDED_BYTES)) {
    failf(c, TFD_RESOURCE_EXHAUSTED, "%s: a tensor of %lld bytes%s is over tfdev's limit", where, (long long)bytes,
          content ? "" : " expanded from a few values");
    return NULL;
  }
  if (content) {
    /* Decoded before anything is allocated for the shape: the content's own length bounds what a file can make
     * tfdev allocate, not a shape it declares. */
    size_t len = 0;
    bool oom = false;
    unsigned char *raw = cJSON_IsString(content) ? base64_decode(content->valuestring, &len, &oom) : NULL;
    if (!raw || (int64_t)len != bytes) {
      if (oom) failf(c, TFD_RESOURCE_EXHAUSTED, "%s: out of memory decoding tensorContent", where);
      else failf(c, TFD_INVALID_ARGUMENT, "%s: tensorContent %s", where,
                 raw ? "has the wrong size for the tensor's shape" : "is not base64");
      free(raw);
      return NULL;
    }
    tfd_tensor *out = tfd_tensor_make(NULL, dt, s.dims, s.ndims, c->st);
    if (out && len) memcpy(tfd_tensor_data(out), raw, len);
    free(raw);
    return out;
  }
  tfd_tensor *out = tfd_tensor_make(NULL, dt, s.dims, s.ndims, c->st);
  if (!out) return NULL;
  char *data = tfd_tensor_data(out);
  memset(data, 0, (size_t)bytes);
  /* Typed values; fewer than the elements repeat the last, as TensorFlow does. */
  int64_t i = 0;
  const cJSON *v = NULL;
  cJSON_ArrayForEach(v, vals) {
    double d = 0;
    int64_t n = 0;
    bool ok = dt == TFD_BOOL                                               ? cJSON_IsBool(v)
              : dt == TFD_FLOAT32 || dt == TFD_FLOAT64 || dt == TFD_COMPLEX64 ? double_of(v, &d)
                                                                             : int64_of(v, &n);
    if (!ok) {
      failf(c, TFD_INVALID_ARGUMENT, "%s: value %lld is not %s %s", where, (long long)i, tfd_article(tfd_dtype_name(dt)),
            tfd_dtype_name(dt));
      tfd_tensor_unref(out);
      return NULL;
    }
    if (dt == TFD_COMPLEX64) { /* float i is part i % 2 of element i / 2; the last pair repeats */
      for (int64_t k = i / 2; k < (i / 2 == nvals - 1 ? numel : i / 2 + 1); k++) ((float *)data)[2 * k + i % 2] = (float)d;
      i++;
      continue;
    }
    for (int64_t k = i; k < (i == nvals - 1 ? numel : i + 1); k++) {
      switch (dt) {
        case TFD_FLOAT32: ((float *)data)[k] = (float)d; break;
        case TFD_FLOAT64: ((double *)data)[k] = d; break;
        case TFD_INT32: ((int32_t *)data)[k] = (int32_t)n; break;
        case TFD_INT64: ((int64_t *)data)[k] = n; break;
        case TFD_BOOL: ((bool *)data)[k] = cJSON_IsTrue(v); break;
        case TFD_UINT8: ((uint8_t *)data)[k] = (uint8_t)n; break;
        case TFD_FLOAT16: ((uint16_t *)data)[k] = (uint16_t)n; break; /* halfVal holds bit patterns */
        default: break;
      }
    }
    i++;
  }
  return out;
}

static char *string_of(ctx *c, const cJSON *v, const char *where) {
  size_t len = 0;
  bool oom = false;
  unsigned char *raw = cJSON_IsString(v) ? base64_decode(v->valuestring, &len, &oom) : NULL;
  if (!raw) {
    if (oom) failf(c, TFD_RESOURCE_EXHAUSTED, "%s: out of memory decoding a string", where);
    else failf(c, TFD_INVALID_ARGUMENT, "%s: a bytes value must be base64 text", where);
    return NULL;
  }
  if (memchr(raw, 0, len)) {
    free(raw);
    failf(c, TFD_INVALID_ARGUMENT, "%s: a string holds a NUL byte, which tfdev's strings cannot", where);
    return NULL;
  }
  raw[len] = 0;
  return (char *)raw;
}

static tfd_code list_of(ctx *c, const cJSON *l, const char *where, tfd_attr_value *v, void **owned) {
  static const char *const kinds[] = {"s", "i", "f", "type", "b", "shape", "tensor", "func"};
  const cJSON *items = NULL;
  int kind = -1;
  for (int k = 0; k < 8; k++) {
    const cJSON *x = field(l, kinds[k], NULL);
    if (x && cJSON_GetArraySize(x) > 0) {
      if (kind >= 0) return failf(c, TFD_INVALID_ARGUMENT, "%s: a list holds values of two kinds", where);
      kind = k;
      items = x;
    }
  }
  *v = (tfd_attr_value){.type = TFD_ATTR_LIST_STRING};
  if (kind < 0) return TFD_OK; /* empty: no kind to tell, as in TensorFlow */
  if (kind >= 4) return failf(c, TFD_UNIMPLEMENTED, "%s: lists of %ss are not supported", where, kinds[kind]);
  if (!cJSON_IsArray(items)) return failf(c, TFD_INVALID_ARGUMENT, "%s: list.%s must be a list", where, kinds[kind]);
  size_t n = (size_t)cJSON_GetArraySize(items), i = 0;
  void *mem = calloc(n, kind == 0 ? sizeof(char *) : 8);
  if (!mem) return failf(c, TFD_RESOURCE_EXHAUSTED, "out of memory");
  *owned = mem;
  /* The kind is set before any item is read: the caller frees by it, also after a failure. */
  v->type = kind == 0 ? TFD_ATTR_LIST_STRING : kind == 1 ? TFD_ATTR_LIST_INT : kind == 2 ? TFD_ATTR_LIST_FLOAT : TFD_ATTR_LIST_TYPE;
  v->list_len = n;
  const cJSON *x;
  cJSON_ArrayForEach(x, items) {
    bool ok = true;
    if (kind == 0) ok = (((char **)mem)[i] = string_of(c, x, where)) != NULL;
    else if (kind == 1) ok = int64_of(x, &((int64_t *)mem)[i]);
    else if (kind == 2) ok = double_of(x, &((double *)mem)[i]);
    else ok = (((tfd_dtype *)mem)[i] = dtype_of(x)) != 0;
    if (!ok)
      return kind == 0 ? tfd_status_code(c->st)
                       : failf(c, kind == 3 ? TFD_UNIMPLEMENTED : TFD_INVALID_ARGUMENT, "%s: list item %zu is not %s",
                               where, i, kind == 3 ? "a supported dtype" : kind == 1 ? "an integer" : "a number");
    i++;
  }
  v->list_s = mem, v->list_i = mem, v->list_f = mem, v->list_type = mem;
  return TFD_OK;
}

static tfd_code attr_of(ctx *c, tfd_node_def *n, const char *name, const cJSON *a, bool *no_values) {
  char where[512];
  snprintf(where, sizeof where, "node '%s', attr '%s'", tfd_node_def_name(n), name);
  tfd_attr_value v = {0};
  void *owned = NULL;
  tfd_tensor *t = NULL;
  const cJSON *x;
  tfd_code code = TFD_OK;
  if ((x = field(a, "s", NULL))) {
    char *s = string_of(c, x, where);
    if (!s) return tfd_status_code(c->st);
    v = (tfd_attr_value){.type = TFD_ATTR_STRING, .s = s};
    owned = s;
  } else if ((x = field(a, "i", NULL))) {
    v.type = TFD_ATTR_INT;
    if (!int64_of(x, &v.i)) return failf(c, TFD_INVALID_ARGUMENT, "%s: i must be an integer", where);
  } else if ((x = field(a, "f", NULL))) {
    v.type = TFD_ATTR_FLOAT;
    if (!double_of(x, &v.f)) return failf(c, TFD_INVALID_ARGUMENT, "%s: f must be a number", where);
  } else if ((x = field(a, "b", NULL))) {
    if (!cJSON_IsBool(x)) return failf(c, TFD_INVALID_ARGUMENT, "%s: b must be true or false", where);
    v = (tfd_attr_value){.type = TFD_ATTR_BOOL, .b = cJSON_IsTrue(x)};
  } else if ((x = field(a, "type", NULL))) {
    v = (tfd_attr_value){.type = TFD_ATTR_TYPE, .dtype = dtype_of(x)};
    if (!v.dtype)
      return failf(c, TFD_UNIMPLEMENTED, "%s: dtype %s is not supported", where, cJSON_IsString(x) ? x->valuestring : "(not a name)");
  } else if ((x = field(a, "shape", NULL))) {
    v.type = TFD_ATTR_SHAPE;
    if (shape_of(c, x, where, false, &v.shape) != TFD_OK) return tfd_status_code(c->st);
  } else if ((x = field(a, "tensor", NULL))) {
    if (!(t = tensor_of(c, x, where, no_values))) return *no_values ? TFD_OK : tfd_status_code(c->st);
    v = (tfd_attr_value){.type = TFD_ATTR_TENSOR, .tensor = t};
  } else if ((x = field(a, "list", NULL))) {
    code = list_of(c, x, where, &v, &owned);
  } else if ((x = field(a, "func", NULL)) && tfd_function_attr(tfd_node_def_op(n), name)) {
    /* If's branches, While's cond and body, a call's f: the function's name, for the inlining pass */
    const cJSON *fname = field(x, "name", NULL);
    if (!cJSON_IsString(fname)) return failf(c, TFD_INVALID_ARGUMENT, "%s: a function attr needs a name", where);
    v = (tfd_attr_value){.type = TFD_ATTR_STRING, .s = fname->valuestring};
  } else if (field(a, "func", NULL) || field(a, "placeholder", NULL)) {
    return failf(c, TFD_UNIMPLEMENTED, "%s: function and placeholder attrs are not supported", where);
  } else {
    return failf(c, TFD_INVALID_ARGUMENT, "%s: the attr has no value", where);
  }
  if (code == TFD_OK) code = tfd_node_def_set_attr(n, name, &v, c->st);
  if (v.type == TFD_ATTR_LIST_STRING && owned)
    for (size_t i = 0; i < v.list_len; i++) free(((char **)owned)[i]);
  free(owned);
  tfd_tensor_unref(t);
  return code;
}

/* The nodes of a list (the graph's, where = "modelTopology.node", or a function's nodeDef) into g. */
static tfd_code nodes_of(ctx *c, const cJSON *nodes, const char *where, tfd_graph_def *g, tfd_strmap *unfilled) {
  if (!nodes) return TFD_OK;
  if (!cJSON_IsArray(nodes)) return failf(c, TFD_INVALID_ARGUMENT, "%s must be a list", where);
  int i = 0;
  const cJSON *nd;
  cJSON_ArrayForEach(nd, nodes) {
    const cJSON *name = field(nd, "name", NULL), *op = field(nd, "op", NULL), *device = field(nd, "device", NULL);
    if (!cJSON_IsString(name) || !cJSON_IsString(op))
      return failf(c, TFD_INVALID_ARGUMENT, "%s[%d] needs a name and an op (strings)", where, i);
    tfd_node_def *n = tfd_graph_def_add_node(g, name->valuestring, op->valuestring, c->st);
    if (!n) return tfd_status_code(c->st);
    if (cJSON_IsString(device) && tfd_node_def_set_device(n, device->valuestring, c->st) != TFD_OK)
      return tfd_status_code(c->st);
    const cJSON *inputs = field(nd, "input", NULL), *in;
    cJSON_ArrayForEach(in, inputs) {
      if (!cJSON_IsString(in)) return failf(c, TFD_INVALID_ARGUMENT, "node '%s': inputs must be strings", name->valuestring);
      if (tfd_node_def_add_input(n, in->valuestring, c->st) != TFD_OK) return tfd_status_code(c->st);
    }
    const cJSON *attrs = field(nd, "attr", NULL), *a;
    /* an empty list is the empty object as JSON encoders without the distinction (Lua's) write it */
    if (attrs && !cJSON_IsObject(attrs) && !(cJSON_IsArray(attrs) && cJSON_GetArraySize(attrs) == 0))
      return failf(c, TFD_INVALID_ARGUMENT, "node '%s': attr must be an object of attribute values", name->valuestring);
    bool no_values = false;
    cJSON_ArrayForEach(a, attrs) {
      bool empty = false;
      /* the output shapes of a call or of If/While: lists of shapes tfdev does not hold, and the
       * inlined nodes infer their own */
      if (tfd_function_op(op->valuestring) && strcmp(a->string, "output_shapes") == 0) continue;
      if (attr_of(c, n, a->string, a, &empty) != TFD_OK) return tfd_status_code(c->st);
      if (strcmp(a->string, "value") == 0) no_values = empty;
    }
    if (strcmp(op->valuestring, "Const") == 0 && (no_values || !tfd_node_def_attr(n, "value")) &&
        !tfd_strmap_put(unfilled, name->valuestring, n))
      return failf(c, TFD_RESOURCE_EXHAUSTED, "out of memory");
    i++;
  }
  return TFD_OK;
}

/* ---- the function library (modelTopology.library.function): signatures, bodies, returns ---- */
static tfd_code args_of(ctx *c, tfd_function_def *f, const cJSON *args, bool output) {
  const cJSON *a;
  cJSON_ArrayForEach(a, args) {
    const cJSON *name = field(a, "name", NULL), *type = field(a, "type", NULL), *ta = field(a, "typeAttr", "type_attr");
    tfd_dtype dt = type ? dtype_of(type) : 0;
    if (!cJSON_IsString(name) || (type && !dt) || (!type && !cJSON_IsString(ta)))
      return failf(c, type && !dt ? TFD_UNIMPLEMENTED : TFD_INVALID_ARGUMENT,
                   "function '%s': an %s argument needs a name and a dtype tfdev has (or a type attr)", f->name,
                   output ? "output" : "input");
    if (tfd_function_def_add_arg(f, output, name->valuestring, dt, dt ? NULL : ta->valuestring, c->st) != TFD_OK)
      return tfd_status_code(c->st);
  }
  return TFD_OK;
}

static tfd_code library_of(ctx *c, const cJSON *topology, tfd_function_library *lib, tfd_strmap *unfilled) {
  const cJSON *fns = field(field(topology, "library", NULL), "function", NULL), *fn;
  cJSON_ArrayForEach(fn, fns) {
    const cJSON *sig = field(fn, "signature", NULL), *name = field(sig, "name", NULL), *ret = field(fn, "ret", NULL), *r;
    if (!cJSON_IsString(name)) return failf(c, TFD_INVALID_ARGUMENT, "library.function: a function needs signature.name");
    tfd_function_def *f = tfd_function_library_add(lib, name->valuestring, c->st);
    if (!f) return failf(c, tfd_status_code(c->st), "%s", tfd_status_message(c->st));
    char where[300];
    snprintf(where, sizeof where, "function '%.200s' nodeDef", f->name);
    if (args_of(c, f, field(sig, "inputArg", "input_arg"), false) != TFD_OK ||
        args_of(c, f, field(sig, "outputArg", "output_arg"), true) != TFD_OK ||
        nodes_of(c, field(fn, "nodeDef", "node_def"), where, f->body, unfilled) != TFD_OK)
      return tfd_status_code(c->st);
    cJSON_ArrayForEach(r, ret) {
      if (!cJSON_IsString(r)) return failf(c, TFD_INVALID_ARGUMENT, "function '%s': ret values must be strings", f->name);
      if (tfd_function_def_set_ret(f, r->string, r->valuestring, c->st) != TFD_OK)
        return failf(c, tfd_status_code(c->st), "%s", tfd_status_message(c->st));
    }
  }
  return TFD_OK;
}

/* ---- weights ---- */
/* A weight of the manifest: what it holds and how many bytes of its group's stream it takes. */
typedef struct weight_spec {
  const char *name;
  tfd_dtype dt;
  tfd_shape s;
  const cJSON *q;
  const char *qtype; /* NULL when not quantized */
  size_t stored;     /* bytes per stored element (strings: at least, their length) */
  int64_t numel, bytes; /* bytes: strings take at least this many, their lengths */
  char where[512];
} weight_spec;

static tfd_code weight_spec_of(ctx *c, const cJSON *w, weight_spec *ws) {
  const cJSON *name = field(w, "name", NULL), *dtype = field(w, "dtype", NULL), *q = field(w, "quantization", NULL);
  if (!cJSON_IsString(name) || !cJSON_IsString(dtype))
    return failf(c, TFD_INVALID_ARGUMENT, "weightsManifest: a weight needs a name and a dtype");
  ws->name = name->valuestring;
  ws->q = q;
  snprintf(ws->where, sizeof ws->where, "weight '%s'", name->valuestring);
  const char *where = ws->where;
  tfd_dtype dt = strcmp(dtype->valuestring, "float32") == 0 ? TFD_FLOAT32
                 : strcmp(dtype->valuestring, "int32") == 0 ? TFD_INT32
                 : strcmp(dtype->valuestring, "bool") == 0 ? TFD_BOOL
                 /* TensorFlow.js writes a complex64 weight as float32 real, imaginary pairs */
                 : strcmp(dtype->valuestring, "complex64") == 0 ? TFD_COMPLEX64
                 /* each element a uint32 little-endian length, then that many bytes */
                 : strcmp(dtype->valuestring, "string") == 0 ? TFD_STRING
                                                               : 0;
  if (!dt) return failf(c, TFD_UNIMPLEMENTED, "%s: dtype %s is not supported", where, dtype->valuestring);
  ws->dt = dt;
  /* Its shape, as a TensorShapeProto-like list of sizes. */
  const cJSON *shape = field(w, "shape", NULL), *d;
  tfd_shape *s = &ws->s;
  *s = (tfd_shape){0};
  if (!cJSON_IsArray(shape) || cJSON_GetArraySize(shape) > TFD_MAX_DIMS)
    return failf(c, TFD_INVALID_ARGUMENT, "%s: shape must be a list of at most %d sizes", where, TFD_MAX_DIMS);
  cJSON_ArrayForEach(d, shape) {
    if (!int64_of(d, &s->dims[s->ndims]) || s->dims[s->ndims] < 0)
      return failf(c, TFD_INVALID_ARGUMENT, "%s: dimension %d is not a size", where, s->ndims);
    s->ndims++;
  }
  ws->qtype = q ? (cJSON_IsString(field(q, "dtype", NULL)) ? field(q, "dtype", NULL)->valuestring : "") : NULL;
  const char *qtype = ws->qtype;
  ws->stored = dt == TFD_STRING ? 4 : !qtype ? tfd_dtype_size(dt) : strcmp(qtype, "float16") == 0 || strcmp(qtype, "uint16") == 0 ? 2
                                            : strcmp(qtype, "uint8") == 0                                   ? 1
                                                                                                            : 0;
  if (!ws->stored) return failf(c, TFD_UNIMPLEMENTED, "%s: quantization dtype '%s' is not supported", where, qtype);
  if (qtype && (dt == TFD_COMPLEX64 || dt == TFD_STRING))
    return failf(c, TFD_UNIMPLEMENTED, "%s: quantized %s weights are not supported", where, tfd_dtype_name(dt));
  if (sizes(c, s, ws->stored, where, &ws->numel, &ws->bytes) != TFD_OK) return tfd_status_code(c->st);
  if (ws->bytes > MAX_WEIGHT_BYTES)
    return failf(c, TFD_INVALID_ARGUMENT, "%s: needs %lld bytes, over tfdev's limit of %lld for one weight", where,
                 (long long)ws->bytes, (long long)MAX_WEIGHT_BYTES);
  return TFD_OK;
}

/* The bytes a group's weights take: known before any of its files is read, so none is read past
 * what the manifest declares. A group with string weights, whose lengths are in the files, reads
 * its files whole. */
static tfd_code group_bytes(ctx *c, const cJSON *weights, size_t *need) {
  int64_t total = 0;
  const cJSON *w;
  weight_spec ws;
  bool strings = false;
  cJSON_ArrayForEach(w, weights) {
    if (weight_spec_of(c, w, &ws) != TFD_OK) return tfd_status_code(c->st);
    strings |= ws.dt == TFD_STRING;
    if (!tfd_checked_add(total, ws.bytes, &total) || (uint64_t)total > SIZE_MAX)
      return failf(c, TFD_INVALID_ARGUMENT, "weightsManifest: the weights of a group overflow the address space");
  }
  *need = strings ? SIZE_MAX : (size_t)total;
  return TFD_OK;
}

/* The concatenation of group gi's files, of which its weights take `need` bytes. A file that would
 * take the stream past that is not read (a host's reader is told the room left in *len), but the
 * rest are still sized, so the error says what the files hold. */
static unsigned char *read_group(ctx *c, int gi, const cJSON *paths, size_t need, size_t *len) {
  unsigned char *buf = NULL;
  size_t held = 0;
  bool too_long = false;
  *len = 0;
  const cJSON *p;
  cJSON_ArrayForEach(p, paths) {
    if (!cJSON_IsString(p)) {
      failf(c, TFD_INVALID_ARGUMENT, "weightsManifest: paths must be strings");
      free(buf);
      return NULL;
    }
    size_t room = need - *len, n = 0;
    unsigned char *part = NULL;
    if (c->read) {
      n = room;
      part = c->read(c->read_arg, p->valuestring, &n, c->st);
      if (!part) {
        tfd_status_prefixf(c->st, "%s: ", c->path);
        free(buf);
        return NULL;
      }
      if (n > room) too_long = true;
    } else {
      size_t size = 0;
      int fd = tfd_open_in_dir(c->dir, "weight file", p->valuestring, &size, c->st);
      if (fd >= 0 && !too_long && size <= room) {
        part = tfd_read_fd(fd, size, &n, "weight file", p->valuestring, c->st);
      } else if (fd >= 0) {
        too_long = true;
        n = size;
      }
      if (fd >= 0) close(fd);
      if (fd < 0 || (!too_long && !part)) {
        tfd_status_prefixf(c->st, "%s: ", c->path);
        free(buf);
        return NULL;
      }
    }
    held = held + n < held ? SIZE_MAX : held + n;
    if (too_long) {
      free(part);
      continue;
    }
    unsigned char *grown = n ? realloc(buf, *len + n) : buf ? buf : malloc(1);
    if (!grown) {
      free(part);
      free(buf);
      failf(c, TFD_RESOURCE_EXHAUSTED, "out of memory reading weights");
      return NULL;
    }
    buf = grown;
    if (n) memcpy(buf + *len, part, n);
    *len += n;
    free(part);
  }
  if (too_long) {
    free(buf);
    failf(c, TFD_INVALID_ARGUMENT, "weightsManifest[%d]: the weights take %zu bytes but the files hold %zu", gi, need, held);
    return NULL;
  }
  return buf ? buf : malloc(1);
}


/* model.json's "signature" (or userDefinedMetadata's): {"inputs": {key: TensorInfo}, "outputs": ...}
 * where a TensorInfo has the tensor's name, dtype and tensorShape. Unknown dtypes are kept as 0. */
static tfd_code signature_of(ctx *c, const cJSON *root, tfd_graph_def *g) {
  const cJSON *sig = field(root, "signature", NULL);
  if (!sig) sig = field(field(root, "userDefinedMetadata", "user_defined_metadata"), "signature", NULL);
  if (!sig) return TFD_OK;
  if (!cJSON_IsObject(sig)) return failf(c, TFD_INVALID_ARGUMENT, "signature must be an object");
  static const char *const sides[2] = {"inputs", "outputs"};
  for (int o = 0; o < 2; o++) {
    const cJSON *list = field(sig, sides[o], NULL), *e;
    if (!list) continue;
    if (!cJSON_IsObject(list)) return failf(c, TFD_INVALID_ARGUMENT, "signature.%s must be an object", sides[o]);
    cJSON_ArrayForEach(e, list) {
      const cJSON *name = field(e, "name", NULL);
      if (!cJSON_IsObject(e) || !cJSON_IsString(name) || !name->valuestring[0])
        return failf(c, TFD_INVALID_ARGUMENT, "signature.%s['%s'] needs the name of a tensor", sides[o], e->string);
      char where[160];
      snprintf(where, sizeof where, "signature.%s['%.100s']", sides[o], e->string);
      tfd_shape shape;
      if (shape_of(c, field(e, "tensorShape", "tensor_shape"), where, false, &shape) != TFD_OK) return tfd_status_code(c->st);
      if (!field(e, "tensorShape", "tensor_shape")) shape.ndims = -1;
      if (tfd_graph_def_add_signature(g, o, e->string, name->valuestring, dtype_of(field(e, "dtype", NULL)), &shape, c->st) !=
          TFD_OK)
        return tfd_status_code(c->st);
    }
  }
  return TFD_OK;
}

static tfd_code fill_node(ctx *c, const weight_spec *ws, tfd_node_def *n, const unsigned char *src);

/* Keras (tf.keras 2 and Keras 3) names a recurrent layer's weights through its cell
 * ("lstm/lstm_cell/kernel", "bidirectional/forward_lstm/lstm_cell/kernel"); the layers reader names
 * them as TensorFlow.js saves them ("lstm/kernel"). A weight no node asks for is tried again without
 * a path component ending in "_cell"; *key is then the name found (malloc'd), else NULL. */
static tfd_node_def *cell_weight(tfd_strmap *unfilled, const char *name, char **key) {
  *key = NULL;
  size_t len = strlen(name);
  for (const char *at = name; (at = strstr(at, "_cell/")) != NULL; at++) {
    const char *start = at;
    while (start > name && start[-1] != '/') start--;
    const char *end = at + strlen("_cell/");
    char *alt = malloc(len + 1);
    if (!alt) return NULL;
    memcpy(alt, name, (size_t)(start - name));
    strcpy(alt + (start - name), end);
    tfd_node_def *n = tfd_strmap_get(unfilled, alt);
    if (n) {
      *key = alt;
      return n;
    }
    free(alt);
  }
  return NULL;
}

static tfd_code fill_weight(ctx *c, const cJSON *w, const unsigned char *data, size_t len, size_t *offset,
                            tfd_strmap *unfilled) {
  weight_spec ws;
  if (weight_spec_of(c, w, &ws) != TFD_OK) return tfd_status_code(c->st);
  const char *where = ws.where;
  int64_t bytes = ws.bytes;
  if (ws.dt == TFD_STRING) { /* the lengths say how far the strings go */
    size_t at = *offset;
    for (int64_t i = 0; i < ws.numel; i++) {
      if (len - at < 4)
        return failf(c, TFD_INVALID_ARGUMENT, "%s: the group's files end inside the length of string %lld", where,
                     (long long)i);
      const unsigned char *p = data + at;
      size_t n = (size_t)p[0] | (size_t)p[1] << 8 | (size_t)p[2] << 16 | (size_t)p[3] << 24;
      if (n > len - at - 4)
        return failf(c, TFD_INVALID_ARGUMENT, "%s: string %lld of %zu bytes runs past the group's files", where,
                     (long long)i, n);
      at += 4 + n;
    }
    bytes = (int64_t)(at - *offset);
  }
  if ((uint64_t)bytes > len - *offset)
    return failf(c, TFD_INVALID_ARGUMENT, "%s: needs %lld bytes at offset %zu, but the group's files hold %zu", where,
                 (long long)bytes, *offset, len);
  const unsigned char *src = data + *offset;
  *offset += (size_t)bytes;
  char *alias = NULL;
  tfd_node_def *n = tfd_strmap_get(unfilled, ws.name);
  if (!n) n = cell_weight(unfilled, ws.name, &alias);
  if (!n) return TFD_OK; /* TensorFlow.js also skips weights no node asks for */
  tfd_code code = fill_node(c, &ws, n, src);
  if (code == TFD_OK) tfd_strmap_remove(unfilled, alias ? alias : ws.name);
  free(alias);
  return code;
}

/* n's value from a weight's stored bytes at src (dequantized, widened to n's declared dtype). */
static tfd_code fill_node(ctx *c, const weight_spec *ws, tfd_node_def *n, const unsigned char *src) {
  const char *where = ws->where, *qtype = ws->qtype;
  tfd_dtype dt = ws->dt;
  int64_t numel = ws->numel, bytes = ws->bytes;
  tfd_tensor *t = tfd_tensor_make(NULL, dt, ws->s.dims, ws->s.ndims, c->st);
  if (!t) return tfd_status_code(c->st);
  if (dt == TFD_STRING) { /* fill_weight has checked every length against the files */
    for (int64_t i = 0; i < numel; i++) {
      size_t len = (size_t)src[0] | (size_t)src[1] << 8 | (size_t)src[2] << 16 | (size_t)src[3] << 24;
      if (!tfd_tensor_set_str(t, i, src + 4, len)) {
        tfd_tensor_unref(t);
        return failf(c, TFD_RESOURCE_EXHAUSTED, "%s: out of memory reading string %lld", where, (long long)i);
      }
      src += 4 + len;
    }
  } else if (!qtype) {
    memcpy(tfd_tensor_data(t), src, (size_t)bytes);
  } else if (strcmp(qtype, "float16") == 0) {
    if (dt != TFD_FLOAT32) {
      tfd_tensor_unref(t);
      return failf(c, TFD_UNIMPLEMENTED, "%s: float16 quantization of %s weights", where, tfd_dtype_name(dt));
    }
    float *o = tfd_tensor_data(t);
    for (int64_t i = 0; i < numel; i++) o[i] = tfd_half_to_float((uint16_t)(src[2 * i] | src[2 * i + 1] << 8));
  } else {
    double scale = 1, min = 0;
    if (!double_of(field(ws->q, "scale", NULL), &scale) || !double_of(field(ws->q, "min", NULL), &min)) {
      tfd_tensor_unref(t);
      return failf(c, TFD_INVALID_ARGUMENT, "%s: %s quantization needs scale and min", where, qtype);
    }
    for (int64_t i = 0; i < numel; i++) {
      double u = ws->stored == 1 ? src[i] : (double)(src[2 * i] | src[2 * i + 1] << 8);
      double x = u * scale + min;
      if (dt == TFD_FLOAT32) ((float *)tfd_tensor_data(t))[i] = (float)x;
      else if (dt == TFD_INT32) ((int32_t *)tfd_tensor_data(t))[i] = (int32_t)lrint(x);
      else ((bool *)tfd_tensor_data(t))[i] = x != 0;
    }
  }
  /* TensorFlow.js's converter stores int64 weights as int32 and float64 as float32 while the node
   * still declares the wide type: widen to what the graph declares (TensorFlow.js computes in the
   * narrow type, tfdev in the declared one, as TensorFlow would). */
  const tfd_attr_value *declared = tfd_node_def_attr(n, "dtype");
  if (declared && declared->type == TFD_ATTR_TYPE &&
      ((dt == TFD_INT32 && declared->dtype == TFD_INT64) || (dt == TFD_FLOAT32 && declared->dtype == TFD_FLOAT64))) {
    tfd_tensor *wide = tfd_tensor_make(NULL, declared->dtype, ws->s.dims, ws->s.ndims, c->st);
    if (!wide) {
      tfd_tensor_unref(t);
      return tfd_status_code(c->st);
    }
    for (int64_t i = 0; i < numel; i++) {
      if (dt == TFD_INT32) ((int64_t *)tfd_tensor_data(wide))[i] = ((const int32_t *)tfd_tensor_data(t))[i];
      else ((double *)tfd_tensor_data(wide))[i] = ((const float *)tfd_tensor_data(t))[i];
    }
    tfd_tensor_unref(t);
    t = wide;
    dt = declared->dtype;
  }
  tfd_attr_value value = {.type = TFD_ATTR_TENSOR, .tensor = t}, type = {.type = TFD_ATTR_TYPE, .dtype = dt};
  tfd_code code = tfd_node_def_set_attr(n, "value", &value, c->st);
  if (code == TFD_OK) code = tfd_node_def_set_attr(n, "dtype", &type, c->st);
  tfd_tensor_unref(t);
  return code;
}

static tfd_code weights_of(ctx *c, const cJSON *manifest, tfd_strmap *unfilled) {
  const cJSON *group;
  int gi = 0;
  cJSON_ArrayForEach(group, manifest) {
    const cJSON *paths = field(group, "paths", NULL), *weights = field(group, "weights", NULL), *w;
    if (!cJSON_IsArray(paths) || !cJSON_IsArray(weights))
      return failf(c, TFD_INVALID_ARGUMENT, "weightsManifest[%d] needs lists 'paths' and 'weights'", gi);
    size_t need = 0, len = 0, offset = 0;
    if (group_bytes(c, weights, &need) != TFD_OK) return tfd_status_code(c->st);
    unsigned char *data = read_group(c, gi, paths, need, &len);
    if (!data) return tfd_status_code(c->st) != TFD_OK ? tfd_status_code(c->st) : failf(c, TFD_RESOURCE_EXHAUSTED, "out of memory");
    tfd_code code = TFD_OK;
    cJSON_ArrayForEach(w, weights) {
      if ((code = fill_weight(c, w, data, len, &offset, unfilled)) != TFD_OK) break;
    }
    free(data);
    if (code != TFD_OK) return code;
    if (offset != len)
      return failf(c, TFD_INVALID_ARGUMENT, "weightsManifest[%d]: the weights take %zu bytes but the files hold %zu", gi,
                   offset, len);
    gi++;
  }
  return TFD_OK;
}


/* TensorFlow.js has no uint8: it reads a DT_UINT8 Placeholder as int32 and its callers feed int32
 * (tfjs-converter's parseDtypeParam). tfdev takes the same feed: such a Placeholder becomes int32 and
 * a Cast to uint8 ("<name>/uint8") follows it, which its data consumers read instead, so the graph
 * still computes in uint8 as the model says. The signature's entry says int32 too. */
static tfd_code uint8_inputs_as_tfjs(ctx *c, tfd_graph_def *g) {
  size_t n = g->n;
  for (size_t i = 0; i < n; i++) {
    tfd_node_def *p = g->nodes[i];
    const tfd_attr_value *dt = tfd_node_def_attr(p, "dtype");
    if (strcmp(p->op, "Placeholder") != 0 || !dt || dt->type != TFD_ATTR_TYPE || dt->dtype != TFD_UINT8) continue;
    char *cast = tfd_format("%s/uint8", p->name);
    for (int k = 2; cast && tfd_graph_def_find(g, cast); k++) { /* a name the model does not use */
      free(cast);
      cast = tfd_format("%s/uint8_%d", p->name, k);
    }
    char *zero = tfd_format("%s:0", p->name);
    tfd_node_def *cn = cast && zero ? tfd_graph_def_add_node(g, cast, "Cast", c->st) : NULL;
    tfd_attr_value i32 = {.type = TFD_ATTR_TYPE, .dtype = TFD_INT32}, u8 = {.type = TFD_ATTR_TYPE, .dtype = TFD_UINT8};
    tfd_code code = !cn ? (tfd_status_code(c->st) != TFD_OK ? tfd_status_code(c->st) : failf(c, TFD_RESOURCE_EXHAUSTED, "out of memory"))
                    : tfd_node_def_add_input(cn, p->name, c->st) != TFD_OK ? tfd_status_code(c->st)
                    : tfd_node_def_set_attr(cn, "SrcT", &i32, c->st) != TFD_OK ? tfd_status_code(c->st)
                    : tfd_node_def_set_attr(cn, "DstT", &u8, c->st) != TFD_OK ? tfd_status_code(c->st)
                                                                           : tfd_node_def_set_attr(p, "dtype", &i32, c->st);
    for (size_t j = 0; code == TFD_OK && j < g->n; j++) {
      tfd_node_def *u = g->nodes[j];
      if (u == cn) continue;
      for (size_t k = 0; k < u->ninputs; k++) {
        if (strcmp(u->inputs[k], p->name) != 0 && strcmp(u->inputs[k], zero) != 0) continue;
        char *moved = strdup(cast);
        if (!moved) {
          code = failf(c, TFD_RESOURCE_EXHAUSTED, "out of memory");
          break;
        }
        free(u->inputs[k]);
        u->inputs[k] = moved;
      }
    }
    for (size_t k = 0; code == TFD_OK && k < g->nsig[0]; k++)
      if (g->sig[0][k].dtype == TFD_UINT8 && (strcmp(g->sig[0][k].tensor, zero) == 0 || strcmp(g->sig[0][k].tensor, p->name) == 0))
        g->sig[0][k].dtype = TFD_INT32;
    free(cast);
    free(zero);
    if (code != TFD_OK) return code;
  }
  return TFD_OK;
}

tfd_graph_def *tfd_graph_def_json_ops_only(const char *text, size_t len) {
  cJSON *root = cJSON_ParseWithLength(text, len);
  const cJSON *nodes = field(field(root, "modelTopology", "model_topology"), "node", NULL), *nd;
  tfd_graph_def *g = cJSON_IsArray(nodes) ? tfd_graph_def_new() : NULL;
  cJSON_ArrayForEach(nd, nodes) {
    const cJSON *name = field(nd, "name", NULL), *op = field(nd, "op", NULL);
    if (!g || !cJSON_IsString(name) || !cJSON_IsString(op) ||
        !tfd_graph_def_add_node(g, name->valuestring, op->valuestring, NULL)) {
      tfd_graph_def_free(g);
      g = NULL;
      break;
    }
  }
  cJSON_Delete(root);
  return g;
}

static tfd_graph_def *parse_json_model(ctx c, const char *text, size_t len);

tfd_graph_def *tfd_graph_def_parse_json_model(const char *text, size_t len, const char *path, tfd_status *st) {
  /* The model file's own directory: "a/model.json" -> "a", "/model.json" -> "/", "model.json" -> "". */
  const char *slash = path ? strrchr(path, '/') : NULL;
  char *dir = slash ? tfd_format("%.*s", slash == path ? 1 : (int)(slash - path), path) : NULL;
  if (slash && !dir) {
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "%s: out of memory", path);
    return NULL;
  }
  tfd_graph_def *g = tfd_graph_def_parse_json_model_in_dir(text, len, path, dir, st);
  free(dir);
  return g;
}

tfd_graph_def *tfd_graph_def_parse_json_model_in_dir(const char *text, size_t len, const char *path, const char *dir,
                                                     tfd_status *st) {
  return parse_json_model((ctx){path ? path : "model.json", st, NULL, NULL, dir}, text, len);
}

tfd_graph_def *tfd_graph_def_parse_json_model_with(const char *text, size_t len, const char *path,
                                                   tfd_weight_reader read, void *read_arg, tfd_status *st) {
  return parse_json_model((ctx){path ? path : "model.json", st, read, read_arg, NULL}, text, len);
}

static tfd_graph_def *parse_json_model(ctx c, const char *text, size_t len) {
  tfd_status *st = c.st;
  cJSON *root = cJSON_ParseWithLength(text, len);
  tfd_graph_def *g = NULL;
  tfd_strmap unfilled = TFD_STRMAP_INIT;
  tfd_function_library lib = TFD_FUNCTION_LIBRARY_INIT;
  if (!root) {
    /* cJSON says NULL for both: well-formed text it could not parse means memory ran out. */
    const char *at = cJSON_GetErrorPtr();
    if (tfd_json_well_formed(text, len)) failf(&c, TFD_RESOURCE_EXHAUSTED, "out of memory parsing the JSON");
    else failf(&c, TFD_INVALID_ARGUMENT, "not valid JSON (near byte %lld)", at && at >= text ? (long long)(at - text) : -1LL);
    return NULL;
  }
  const cJSON *format = field(root, "format", NULL), *topology = field(root, "modelTopology", "model_topology");
  bool layers = tfd_layers_model_is(root, topology);
  if (!layers && cJSON_IsString(format) && strcmp(format->valuestring, "graph-model") != 0) {
    failf(&c, TFD_UNIMPLEMENTED, "a TensorFlow.js '%s'; tfdev loads graph models ('graph-model') and layers models ('layers-model')",
          format->valuestring);
    goto done;
  }
  if (!cJSON_IsObject(topology)) {
    failf(&c, TFD_INVALID_ARGUMENT, "no modelTopology: not a TensorFlow.js model");
    goto done;
  }
  if (!(g = tfd_graph_def_new())) {
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
    goto done;
  }
  if (layers ? tfd_layers_model_to_graph(topology, g, &unfilled, c.path, st) != TFD_OK
             : nodes_of(&c, field(topology, "node", NULL), "modelTopology.node", g, &unfilled) != TFD_OK ||
                   library_of(&c, topology, &lib, &unfilled) != TFD_OK || signature_of(&c, root, g) != TFD_OK ||
                   uint8_inputs_as_tfjs(&c, g) != TFD_OK)
    goto fail;
  const cJSON *manifest = field(root, "weightsManifest", "weights_manifest");
  if (manifest) {
    if (!cJSON_IsArray(manifest)) {
      failf(&c, TFD_INVALID_ARGUMENT, "weightsManifest must be a list");
      goto fail;
    }
    if (weights_of(&c, manifest, &unfilled) != TFD_OK) goto fail;
  }
  if (unfilled.size > 0) {
    /* Name the first in alphabetical order, so the message does not depend on hashing. */
    const char *first = NULL, *key;
    void *value;
    for (size_t it = 0; tfd_strmap_next(&unfilled, &it, &key, &value);)
      if (!first || strcmp(key, first) < 0) first = key;
    failf(&c, TFD_INVALID_ARGUMENT, "Const '%s' has no value: neither the JSON nor the weights give it (%zu such nodes)",
          first, unfilled.size);
    goto fail;
  }
  if (tfd_function_library_inline(g, &lib, st) != TFD_OK) {
    failf(&c, tfd_status_code(st), "%s", tfd_status_message(st));
    goto fail;
  }
  goto done;
fail:
  tfd_graph_def_free(g);
  g = NULL;
done:
  tfd_strmap_free(&unfilled);
  tfd_function_library_free(&lib);
  cJSON_Delete(root);
  return g;
}
