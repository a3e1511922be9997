/* String ops, as TensorFlow's CPU kernels: StringToHashBucketFast (farmhash's Fingerprint64 modulo
 * the bucket count), StringSplit (bytes split at any of the delimiter's bytes, a SparseTensor out),
 * StringNGrams (n-grams of ragged rows, padded and joined) and StaticRegexReplace (RE2 patterns,
 * regex_rewrite.h). Errors carry TensorFlow's texts. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/tstring.h"
#include "../kernel.h"
#include "../kernel_shared.h"
#include "regex_rewrite.h"

enum { S_HASH, S_SPLIT, S_NGRAMS, S_REGEX };

/* ---- Fingerprint64: farmhash's farmhashna::Hash64, which TensorFlow's Fingerprint64 is ---- */
static const uint64_t K0 = 0xc3a5c85c97cb3127ULL, K1 = 0xb492b66fbe98f273ULL, K2 = 0x9ae16a3b2f90404fULL;

static uint64_t fetch64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
}
static uint64_t fetch32(const unsigned char *p) { return (uint64_t)p[0] | p[1] << 8 | p[2] << 16 | (uint64_t)p[3] << 24; }
static uint64_t rot(uint64_t v, int s) { return s == 0 ? v : (v >> s) | (v << (64 - s)); }
static uint64_t shift_mix(uint64_t v) { return v ^ (v >> 47); }

static uint64_t hash_len16(uint64_t u, uint64_t v, uint64_t mul) {
  uint64_t a = (u ^ v) * mul;
  a ^= a >> 47;
  uint64_t b = (v ^ a) * mul;
  b ^= b >> 47;
  return b * mul;
}

static uint64_t hash_0_to_16(const unsigned char *s, size_t len) {
  if (len >= 8) {
    uint64_t mul = K2 + len * 2, a = fetch64(s) + K2, b = fetch64(s + len - 8);
    uint64_t c = rot(b, 37) * mul + a, d = (rot(a, 25) + b) * mul;
    return hash_len16(c, d, mul);
  }
  if (len >= 4) {
    uint64_t mul = K2 + len * 2, a = fetch32(s);
    return hash_len16(len + (a << 3), fetch32(s + len - 4), mul);
  }
  if (len > 0) {
    uint8_t a = s[0], b = s[len >> 1], c = s[len - 1];
    uint32_t y = (uint32_t)a + ((uint32_t)b << 8), z = (uint32_t)len + ((uint32_t)c << 2);
    return shift_mix(y * K2 ^ z * K0) * K2;
  }
  return K2;
}

static uint64_t hash_17_to_32(const unsigned char *s, size_t len) {
  uint64_t mul = K2 + len * 2, a = fetch64(s) * K1, b = fetch64(s + 8);
  uint64_t c = fetch64(s + len - 8) * mul, d = fetch64(s + len - 16) * K2;
  return hash_len16(rot(a + b, 43) + rot(c, 30) + d, a + rot(b + K2, 18) + c, mul);
}

static uint64_t hash_33_to_64(const unsigned char *s, size_t len) {
  uint64_t mul = K2 + len * 2, a = fetch64(s) * K2, b = fetch64(s + 8);
  uint64_t c = fetch64(s + len - 8) * mul, d = fetch64(s + len - 16) * K2;
  uint64_t y = rot(a + b, 43) + rot(c, 30) + d, z = hash_len16(y, a + rot(b + K2, 18) + c, mul);
  uint64_t e = fetch64(s + 16) * mul, f = fetch64(s + 24);
  uint64_t g = (y + fetch64(s + len - 32)) * mul, h = (z + fetch64(s + len - 24)) * mul;
  return hash_len16(rot(e + f, 43) + rot(g, 30) + h, e + rot(f + a, 18) + g, mul);
}

typedef struct pair64 {
  uint64_t first, second;
} pair64;

static pair64 weak_hash_32(const unsigned char *s, uint64_t a, uint64_t b) {
  uint64_t w = fetch64(s), x = fetch64(s + 8), y = fetch64(s + 16), z = fetch64(s + 24);
  a += w;
  b = rot(b + a + z, 21);
  uint64_t c = a;
  a += x;
  a += y;
  b += rot(a, 44);
  return (pair64){a + z, b + c};
}

static uint64_t fingerprint64(const void *data, size_t len) {
  const unsigned char *s = data;
  if (len <= 16) return hash_0_to_16(s, len);
  if (len <= 32) return hash_17_to_32(s, len);
  if (len <= 64) return hash_33_to_64(s, len);
  const uint64_t seed = 81;
  uint64_t x = seed, y = seed * K1 + 113, z = shift_mix(y * K2 + 113) * K2;
  pair64 v = {0, 0}, w = {0, 0};
  x = x * K2 + fetch64(s);
  const unsigned char *end = s + ((len - 1) / 64) * 64, *last64 = end + ((len - 1) & 63) - 63;
  do {
    x = rot(x + y + v.first + fetch64(s + 8), 37) * K1;
    y = rot(y + v.second + fetch64(s + 48), 42) * K1;
    x ^= w.second;
    y += v.first + fetch64(s + 40);
    z = rot(z + w.first, 33) * K1;
    v = weak_hash_32(s, v.second * K1, x + w.first);
    w = weak_hash_32(s + 32, z + w.second, y + fetch64(s + 16));
    uint64_t t = z;
    z = x;
    x = t;
    s += 64;
  } while (s != end);
  uint64_t mul = K1 + ((z & 0xff) << 1);
  s = last64;
  w.first += ((len - 1) & 63);
  v.first += w.first;
  w.first += v.first;
  x = rot(x + y + v.first + fetch64(s + 8), 37) * mul;
  y = rot(y + v.second + fetch64(s + 48), 42) * mul;
  x ^= w.second * 9;
  y += v.first * 9 + fetch64(s + 40);
  z = rot(z + w.first, 33) * mul;
  v = weak_hash_32(s, v.second * mul, x + w.first);
  w = weak_hash_32(s + 32, z + w.second, y + fetch64(s + 16));
  uint64_t t = z;
  z = x;
  x = t;
  return hash_len16(hash_len16(v.first, w.first, mul) + shift_mix(y) * K0 + z, hash_len16(v.second, w.second, mul) + x,
                    mul);
}

static void k_hash(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *in = c->inputs[0];
  tfd_tensor *out = tfd_kernel_alloc_like(c, k, TFD_INT64, in);
  if (!out) return;
  int64_t *o = tfd_tensor_data(out);
  uint64_t buckets = (uint64_t)k->index;
  for (int64_t i = 0; i < tfd_tensor_numel(in); i++) {
    size_t len;
    const char *s = tfd_tensor_str(in, i, &len);
    o[i] = (int64_t)(fingerprint64(s, len) % buckets);
  }
  c->outputs[0] = out;
}

/* ---- StringSplit ---- */
/* The tokens of one string: (start, length) pairs appended to a growing list. */
typedef struct token_list {
  int64_t (*at)[2];
  int64_t n, cap;
} token_list;

static bool add_token(token_list *t, int64_t start, int64_t len) {
  if (t->n == t->cap) {
    int64_t cap = t->cap ? t->cap * 2 : 64;
    void *grown = realloc(t->at, (size_t)cap * sizeof *t->at);
    if (!grown) return false;
    t->at = grown;
    t->cap = cap;
  }
  t->at[t->n][0] = start;
  t->at[t->n][1] = len;
  t->n++;
  return true;
}

/* TensorFlow's Split: nothing for an empty string; every byte for an empty delimiter; else tokens
 * between any of the delimiter's bytes, empty ones kept unless skip_empty. */
static bool split_one(const char *s, size_t len, const char *delim, size_t dlen, bool skip_empty, token_list *t) {
  if (len == 0) return true;
  if (dlen == 0) {
    for (size_t i = 0; i < len; i++)
      if (!add_token(t, (int64_t)i, 1)) return false;
    return true;
  }
  size_t start = 0;
  for (size_t i = 0; i <= len; i++) {
    if (i < len && !memchr(delim, s[i], dlen)) continue;
    if ((!skip_empty || i > start) && !add_token(t, (int64_t)start, (int64_t)(i - start))) return false;
    start = i + 1;
  }
  return true;
}

static void k_split(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *in = c->inputs[0], *delim = c->inputs[1];
  char text[TFD_SHAPE_TEXT_CAP];
  if (tfd_tensor_ndims(in) != 1) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "input must be a vector, got shape: %s",
                    tfd_tensor_shape_text(text, sizeof text, in, 0));
    return;
  }
  if (tfd_tensor_ndims(delim) != 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "delimiter must be a scalar, got shape: %s",
                    tfd_tensor_shape_text(text, sizeof text, delim, 0));
    return;
  }
  int64_t rows = tfd_tensor_dim(in, 0), widest = 0;
  size_t dlen;
  const char *d = tfd_tensor_str(delim, 0, &dlen);
  token_list t = {0};
  int64_t *row_end = malloc((size_t)(rows ? rows : 1) * sizeof *row_end);
  bool ok = row_end != NULL;
  for (int64_t r = 0; ok && r < rows; r++) {
    size_t len;
    const char *s = tfd_tensor_str(in, r, &len);
    int64_t before = t.n;
    ok = split_one(s, len, d, dlen, k->keep_dims, &t);
    row_end[r] = t.n;
    if (t.n - before > widest) widest = t.n - before;
  }
  int64_t idims[2] = {t.n, 2}, vdims[1] = {t.n}, sdims[1] = {2};
  tfd_tensor *ix = ok ? tfd_kernel_alloc(c, k, TFD_INT64, idims, 2) : NULL;
  tfd_tensor *vals = ix ? tfd_kernel_alloc(c, k, TFD_STRING, vdims, 1) : NULL;
  tfd_tensor *shape = vals ? tfd_kernel_alloc(c, k, TFD_INT64, sdims, 1) : NULL;
  if (!ok) tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory splitting %lld strings", (long long)rows);
  if (shape) {
    int64_t *ip = tfd_tensor_data(ix), *sp = tfd_tensor_data(shape);
    for (int64_t r = 0, j = 0; r < rows; r++) {
      for (int64_t col = 0; j < row_end[r]; j++, col++) {
        ip[2 * j] = r;
        ip[2 * j + 1] = col;
        size_t len;
        const char *s = tfd_tensor_str(in, r, &len);
        if (!tfd_tensor_set_str(vals, j, s + t.at[j][0], (size_t)t.at[j][1])) ok = false;
      }
    }
    sp[0] = rows;
    sp[1] = widest;
    if (!ok) tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory splitting %lld strings", (long long)rows);
  }
  if (ok && shape) {
    c->outputs[0] = ix;
    c->outputs[1] = vals;
    c->outputs[2] = shape;
  } else {
    tfd_tensor_unref(ix);
    tfd_tensor_unref(vals);
    tfd_tensor_unref(shape);
  }
  free(row_end);
  free(t.at);
}

/* ---- StringNGrams ---- */
typedef struct ngram_params {
  char *separator, *left_pad, *right_pad;
  int64_t *widths;
  size_t nwidths;
  int64_t pad_width;
  bool preserve_short;
} ngram_params;

static int64_t pad_of(const ngram_params *p, int64_t width) {
  int64_t pad = p->pad_width < 0 ? width - 1 : p->pad_width;
  return pad < width - 1 ? pad : width - 1;
}

static int64_t count_ngrams(const ngram_params *p, int64_t length, int64_t width) {
  int64_t n = length + 2 * pad_of(p, width) - width + 1;
  return n > 0 ? n : 0;
}

/* n-grams grow in regex_rewrite.h's byte buffer */
static bool add(tfd_regex_out *buf, const void *bytes, size_t n) { return tfd_regex_out_append(buf, bytes, n); }

/* TensorFlow's CreateNgrams: num n-grams of `width` over data[0, ...), padded as pad_of says. */
static bool make_ngrams(const ngram_params *p, const tfd_tensor *data, int64_t first, tfd_tensor *out, int64_t at,
                        int64_t num, int64_t width, tfd_regex_out *buf) {
  size_t sep = strlen(p->separator), lp = strlen(p->left_pad), rp = strlen(p->right_pad);
  for (int64_t g = 0; g < num; g++) {
    int64_t pad = pad_of(p, width), left = pad - g > 0 ? pad - g : 0;
    int64_t right = pad - (num - (g + 1)) > 0 ? pad - (num - (g + 1)) : 0;
    int64_t tokens = width - (left + right), start = left > 0 ? 0 : g - pad;
    bool ok = true;
    buf->len = 0;
    for (int64_t n = 0; n < left; n++) ok = ok && add(buf, p->left_pad, lp) && add(buf, p->separator, sep);
    for (int64_t n = 0; n < tokens - 1; n++) {
      size_t len;
      const char *s = tfd_tensor_str(data, first + start + n, &len);
      ok = ok && add(buf, s, len) && add(buf, p->separator, sep);
    }
    if (tokens > 0) {
      size_t len;
      const char *s = tfd_tensor_str(data, first + start + tokens - 1, &len);
      ok = ok && add(buf, s, len);
      for (int64_t n = 0; n < right; n++) ok = ok && add(buf, p->separator, sep) && add(buf, p->right_pad, rp);
    } else {
      for (int64_t n = 0; n < right - 1; n++) ok = ok && add(buf, p->right_pad, rp) && add(buf, p->separator, sep);
      ok = ok && add(buf, p->right_pad, rp);
    }
    if (!ok || !tfd_tensor_set_str(out, at + g, buf->bytes, buf->len)) return false;
  }
  return true;
}

static int64_t split_at(const tfd_tensor *t, int64_t i) {
  return tfd_tensor_dtype(t) == TFD_INT32 ? ((const int32_t *)tfd_tensor_const_data(t))[i]
                                          : ((const int64_t *)tfd_tensor_const_data(t))[i];
}

static void k_ngrams(tfd_kernel *k, tfd_kernel_context *c) {
  const ngram_params *p = k->state;
  tfd_tensor *data = c->inputs[0], *splits = c->inputs[1];
  char text[TFD_SHAPE_TEXT_CAP];
  if (tfd_tensor_ndims(data) != 1 || tfd_tensor_ndims(splits) != 1) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "%s must be a vector, got shape: %s",
                    tfd_tensor_ndims(data) != 1 ? "Input data" : "Input splits",
                    tfd_tensor_shape_text(text, sizeof text, tfd_tensor_ndims(data) != 1 ? data : splits, 0));
    return;
  }
  int64_t size = tfd_tensor_numel(data), nsplits = tfd_tensor_numel(splits);
  if (nsplits > 0) {
    int64_t prev = split_at(splits, 0);
    if (prev != 0) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "First split value must be 0, got %lld", (long long)prev);
      return;
    }
    for (int64_t i = 1; i < nsplits; i++) {
      int64_t s = split_at(splits, i);
      if (s < prev || s > size) {
        tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Invalid split value %lld, must be in [%lld, %lld]", (long long)s,
                        (long long)prev, (long long)size);
        return;
      }
      prev = s;
    }
    if (prev != size) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Last split value must be data size. Expected %lld, got %lld",
                      (long long)size, (long long)prev);
      return;
    }
  }
  int64_t rows = nsplits - 1, sdims[1] = {nsplits};
  tfd_dtype st = tfd_tensor_dtype(splits);
  tfd_tensor *osplits = tfd_kernel_alloc(c, k, st, sdims, 1);
  if (!osplits) return;
  int64_t *ends = calloc((size_t)(nsplits > 0 ? nsplits : 1), sizeof *ends);
  if (!ends) {
    tfd_tensor_unref(osplits);
    tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory");
    return;
  }
  for (int64_t i = 1; size > 0 && i <= rows; i++) {
    int64_t length = split_at(splits, i) - split_at(splits, i - 1), n = 0;
    for (size_t w = 0; w < p->nwidths; w++) n += count_ngrams(p, length, p->widths[w]);
    if (p->preserve_short && length > 0 && n == 0) n = 1;
    ends[i] = ends[i - 1] + n;
  }
  int64_t odims[1] = {nsplits > 0 ? ends[rows > 0 ? rows : 0] : 0};
  tfd_tensor *out = tfd_kernel_alloc(c, k, TFD_STRING, odims, 1);
  tfd_regex_out buf = {0};
  bool ok = out != NULL;
  for (int64_t i = 0; ok && size > 0 && i < rows; i++) {
    int64_t first = split_at(splits, i), length = split_at(splits, i + 1) - first, at = ends[i];
    for (size_t w = 0; ok && w < p->nwidths; w++) {
      int64_t n = count_ngrams(p, length, p->widths[w]);
      ok = make_ngrams(p, data, first, out, at, n, p->widths[w], &buf);
      at += n;
    }
    if (ok && p->preserve_short && at == ends[i] && length > 0)
      ok = make_ngrams(p, data, first, out, at, 1, length + 2 * p->pad_width, &buf);
  }
  free(buf.bytes);
  if (!ok) {
    if (out) tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory making n-grams");
    tfd_tensor_unref(out);
    tfd_tensor_unref(osplits);
    free(ends);
    return;
  }
  for (int64_t i = 0; i < nsplits; i++) {
    if (st == TFD_INT32) ((int32_t *)tfd_tensor_data(osplits))[i] = (int32_t)ends[i];
    else ((int64_t *)tfd_tensor_data(osplits))[i] = ends[i];
  }
  free(ends);
  c->outputs[0] = out;
  c->outputs[1] = osplits;
}

static void free_ngrams(tfd_kernel *k) {
  ngram_params *p = k->state;
  if (!p) return;
  free(p->separator);
  free(p->left_pad);
  free(p->right_pad);
  free(p->widths);
  free(p);
}

static tfd_code setup_ngrams(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  const tfd_attr_value *w = tfd_node_def_attr(init->node, "ngram_widths");
  ngram_params *p = calloc(1, sizeof *p);
  if (!p) return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  k->state = p;
  k->cleanup = free_ngrams;
  p->nwidths = w && w->type == TFD_ATTR_LIST_INT ? w->list_len : 0;
  p->separator = strdup(tfd_attr_string(init->node, "separator", " "));
  p->left_pad = strdup(tfd_attr_string(init->node, "left_pad", ""));
  p->right_pad = strdup(tfd_attr_string(init->node, "right_pad", ""));
  p->widths = malloc((p->nwidths ? p->nwidths : 1) * sizeof *p->widths);
  if (!p->separator || !p->left_pad || !p->right_pad || !p->widths)
    return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  for (size_t i = 0; i < p->nwidths; i++) {
    p->widths[i] = w->list_i[i];
    if (p->widths[i] <= 0)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (StringNGrams): ngram_widths must contain positive values",
                             k->name);
  }
  p->pad_width = tfd_attr_int(init->node, "pad_width", -1);
  p->preserve_short = tfd_attr_bool(init->node, "preserve_short_sequences", false);
  k->compute = k_ngrams;
  return TFD_OK;
}

/* ---- StaticRegexReplace ---- */
static void k_regex(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *in = c->inputs[0];
  tfd_tensor *out = tfd_kernel_alloc_like(c, k, TFD_STRING, in);
  if (!out) return;
  tfd_regex_out buf = {0};
  bool ok = true;
  for (int64_t i = 0; ok && i < tfd_tensor_numel(in); i++) {
    size_t len;
    const char *s = tfd_tensor_str(in, i, &len);
    ok = tfd_regex_replace(k->state, s, len, k->keep_dims, &buf) && tfd_tensor_set_str(out, i, buf.bytes, buf.len);
  }
  free(buf.bytes);
  if (!ok) {
    tfd_tensor_unref(out);
    tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory replacing matches");
    return;
  }
  c->outputs[0] = out;
}

static void free_regex(tfd_kernel *k) { tfd_regex_free(k->state); }

tfd_code tfd_setup_string(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  static const char *const names[] = {"StringToHashBucketFast", "StringSplit", "StringNGrams", "StaticRegexReplace"};
  const char *op = init->op->name;
  int code = 0;
  while (code < (int)(sizeof names / sizeof names[0]) && strcmp(op, names[code]) != 0) code++;
  if (code == (int)(sizeof names / sizeof names[0])) return tfd_status_setf(st, TFD_INTERNAL, "no string kernel for %s", op);
  k->code = code;
  k->makes_strings = true; /* the outputs' strings are new ones, set element by element */
  switch (code) {
    case S_HASH:
      k->index = tfd_attr_int(init->node, "num_buckets", 0);
      if (k->index < 1)
        return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): num_buckets must be at least 1, got %lld",
                               k->name, op, (long long)k->index);
      k->compute = k_hash;
      return TFD_OK;
    case S_SPLIT:
      k->keep_dims = tfd_attr_bool(init->node, "skip_empty", true);
      k->compute = k_split;
      return TFD_OK;
    case S_NGRAMS: return setup_ngrams(k, init, st);
    default: {
      tfd_regex *re = tfd_regex_new(tfd_attr_string(init->node, "pattern", ""),
                                    tfd_attr_string(init->node, "rewrite", ""), st);
      if (!re) return tfd_status_prefixf(st, "node '%s' (%s): ", k->name, op);
      k->state = re;
      k->cleanup = free_regex;
      k->keep_dims = tfd_attr_bool(init->node, "replace_global", true);
      k->compute = k_regex;
      return TFD_OK;
    }
  }
}
