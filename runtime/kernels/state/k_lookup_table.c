/* Hash tables (TensorFlow's lookup_table_op.h/.cc, lookup_interface.cc): HashTableV2 and
 * MutableHashTableV2 resources with numeric keys and scalar values, and the ops that use them
 * (TensorFlow 1's names for them too).
 *
 * A table lives in the device's resource manager under (container, "LookupTable", name), so it
 * outlives the step that made it: every run of a session finds the same table, and another node
 * naming the same shared_name shares it. A node with no shared_name and use_node_name_sharing false
 * gets a table of its own, as TensorFlow's: the kernel picks the first free name "_<n>_<node>" and
 * keeps it (and a reference to the table) for its life. HashTableV2 is initialized once
 * (InitializeTableV2 or LookupTableImportV2); initializing it again with the same entries is a no-op,
 * with others TensorFlow's FAILED_PRECONDITION. Checks and error texts are TensorFlow's, with tfdev's
 * dtype names. String keys and values are references to their strings (tstring.h), which the table
 * holds while it keeps them and outputs take under the table's lock; they hash and compare by bytes. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/status_internal.h"
#include "../../core/tstring.h"
#include "../kernel.h"

#define TABLE_TYPE "LookupTable"

typedef struct table {
  pthread_mutex_t mu;
  bool is_mutable, initialized;
  tfd_dtype kdt, vdt;
  int64_t n, cap;
  int64_t *keys; /* in insertion order (export gives this order) */
  uint64_t *vals; /* a value's bytes, zero-extended */
  int64_t *slots; /* open addressing: entry index + 1, 0 empty */
  int64_t nslots; /* a power of two, at least 2n */
} table;

/* A string key or value is its element's reference, kept as an integer (tstring.h). */
static const tfd_variant *as_str(uint64_t v) { return (const tfd_variant *)(uintptr_t)v; }
static void hold(tfd_dtype dt, uint64_t v) {
  if (dt == TFD_STRING) tfd_variant_ref((tfd_variant *)(uintptr_t)v);
}
static void drop(tfd_dtype dt, uint64_t v) {
  if (dt == TFD_STRING) tfd_variant_unref((tfd_variant *)(uintptr_t)v);
}
static bool str_eq(uint64_t a, uint64_t b) { return tfd_tstring_equal(as_str(a), as_str(b)); }

/* Drops every entry (and the index: lookups miss until entries come back). */
static void clear(table *t) {
  for (int64_t i = 0; i < t->n; i++) drop(t->kdt, (uint64_t)t->keys[i]), drop(t->vdt, t->vals[i]);
  t->n = 0;
  if (t->slots) memset(t->slots, 0, (size_t)t->nslots * sizeof *t->slots);
}

static void table_destroy(void *p) {
  table *t = p;
  clear(t);
  free(t->keys);
  free(t->vals);
  free(t->slots);
  pthread_mutex_destroy(&t->mu);
  free(t);
}

static uint64_t mix(int64_t key) { /* splitmix64's finalizer */
  uint64_t z = (uint64_t)key + 0x9e3779b97f4a7c15u;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

static uint64_t key_hash(const table *t, int64_t key) {
  return mix(t->kdt == TFD_STRING ? (int64_t)tfd_tstring_hash(as_str((uint64_t)key)) : key);
}

static bool val_eq(const table *t, uint64_t a, uint64_t b) { return t->vdt == TFD_STRING ? str_eq(a, b) : a == b; }

/* The entry index of key, or -1. */
static int64_t find(const table *t, int64_t key) {
  if (!t->nslots) return -1;
  for (uint64_t s = key_hash(t, key) & (uint64_t)(t->nslots - 1);; s = (s + 1) & (uint64_t)(t->nslots - 1)) {
    int64_t e = t->slots[s];
    if (!e) return -1;
    if (t->keys[e - 1] == key || (t->kdt == TFD_STRING && str_eq((uint64_t)t->keys[e - 1], (uint64_t)key))) return e - 1;
  }
}

static bool reindex(table *t, int64_t nslots) {
  int64_t *slots = calloc((size_t)nslots, sizeof *slots);
  if (!slots) return false;
  free(t->slots);
  t->slots = slots;
  t->nslots = nslots;
  for (int64_t i = 0; i < t->n; i++) {
    uint64_t s = key_hash(t, t->keys[i]) & (uint64_t)(nslots - 1);
    while (slots[s]) s = (s + 1) & (uint64_t)(nslots - 1);
    slots[s] = i + 1;
  }
  return true;
}

/* Room for `more` new entries. */
static bool grow(table *t, int64_t more) {
  int64_t want = t->n + more;
  if (want > t->cap) {
    int64_t cap = t->cap ? t->cap : 8;
    while (cap < want) cap *= 2;
    int64_t *keys = realloc(t->keys, (size_t)cap * sizeof *keys);
    if (!keys) return false;
    t->keys = keys;
    uint64_t *vals = realloc(t->vals, (size_t)cap * sizeof *vals);
    if (!vals) return false;
    t->vals = vals;
    t->cap = cap;
  }
  if (want * 2 > t->nslots) {
    int64_t nslots = t->nslots ? t->nslots : 16;
    while (want * 2 > nslots) nslots *= 2;
    return reindex(t, nslots);
  }
  return true;
}

static int64_t key_at(const tfd_tensor *keys, int64_t i) {
  /* int64 and string keys alike: a string's is its reference */
  return tfd_tensor_dtype(keys) == TFD_INT32 ? ((const int32_t *)tfd_tensor_const_data(keys))[i]
                                              : ((const int64_t *)tfd_tensor_const_data(keys))[i];
}

static uint64_t val_at(const tfd_tensor *vals, int64_t i) {
  size_t sz = tfd_dtype_size(tfd_tensor_dtype(vals));
  uint64_t v = 0;
  memcpy(&v, (const char *)tfd_tensor_const_data(vals) + (size_t)i * sz, sz);
  return v;
}

/* A value as TensorFlow's StrCat writes it (floats: the shortest of 6 or 9 / 15 or 17 digits that reads back). */
static void val_str(tfd_dtype dt, uint64_t v, char *buf, size_t cap) {
  switch (dt) {
  case TFD_FLOAT32: {
    float f;
    memcpy(&f, &v, sizeof f);
    snprintf(buf, cap, "%.6g", f);
    if (strtof(buf, NULL) != f) snprintf(buf, cap, "%.9g", f);
    break;
  }
  case TFD_FLOAT64: {
    double d;
    memcpy(&d, &v, sizeof d);
    snprintf(buf, cap, "%.15g", d);
    if (strtod(buf, NULL) != d) snprintf(buf, cap, "%.17g", d);
    break;
  }
  case TFD_INT32: snprintf(buf, cap, "%" PRId32, (int32_t)(uint32_t)v); break;
  case TFD_STRING: {
    size_t len;
    const char *str = tfd_tstring_data(as_str(v), &len);
    snprintf(buf, cap, "%.*s", (int)(len < cap - 1 ? len : cap - 1), str);
    break;
  }
  case TFD_BOOL: snprintf(buf, cap, "%d", (int)(v & 0xff)); break;
  default: snprintf(buf, cap, "%" PRId64, (int64_t)v); break;
  }
}

typedef struct kernel_state {
  pthread_mutex_t mu;
  tfd_resource *res; /* the table this node made or found, once it has run */
  tfd_resource_handle handle;
} kernel_state;

static void table_kernel_cleanup(tfd_kernel *k) {
  kernel_state *s = k->state;
  if (!s) return;
  tfd_resource_unref(s->res);
  pthread_mutex_destroy(&s->mu);
  free(s);
}

/* Finds or makes the table a handle op names (under s->mu). */
static tfd_resource *make_table(tfd_kernel *k, tfd_kernel_context *c, kernel_state *s) {
  tfd_resource_handle h = k->handle;
  if (!h.container[0]) snprintf(h.container, sizeof h.container, "%s", tfd_resource_mgr_default_container(c->rm));
  bool private_name = k->ta; /* no shared_name, no node-name sharing: a name of the kernel's own */
  tfd_status tmp = TFD_STATUS_INIT;
  tfd_resource *r = private_name ? NULL : tfd_resource_mgr_lookup(c->rm, h.container, TABLE_TYPE, h.name, &tmp);
  tfd_status_clear(&tmp);
  if (r) {
    table *t = tfd_resource_data(r);
    if (t->kdt != k->types[0] || t->vdt != k->types[1])
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Conflicting key/value dtypes %s->%s with %s-%s for table %s",
                      tfd_dtype_name(k->types[0]), tfd_dtype_name(k->types[1]), tfd_dtype_name(t->kdt),
                      tfd_dtype_name(t->vdt), h.name);
    else if (t->is_mutable != k->tb) /* TensorFlow's resource manager: another type under the name */
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "table %s is a %s, this node makes a %s", h.name,
                      t->is_mutable ? "MutableHashTable" : "HashTable", k->tb ? "MutableHashTable" : "HashTable");
    if (t->kdt != k->types[0] || t->vdt != k->types[1] || t->is_mutable != k->tb) {
      tfd_resource_unref(r);
      return NULL;
    }
    s->handle = h;
    return r;
  }
  for (int64_t attempt = 1;; attempt++) {
    table *t = calloc(1, sizeof *t);
    r = NULL;
    if (t) tfd_resource_new(TABLE_TYPE, t, table_destroy, &r, &tmp);
    if (!r) {
      free(t);
      tfd_status_clear(&tmp);
      tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory creating table '%s'", h.name);
      return NULL;
    }
    pthread_mutex_init(&t->mu, NULL);
    t->kdt = k->types[0];
    t->vdt = k->types[1];
    t->is_mutable = k->tb;
    t->initialized = k->tb;
    tfd_resource_handle try = h;
    if (private_name) {
      int len = snprintf(try.name, sizeof try.name, "_%" PRId64 "_%s", attempt, k->name);
      if (len < 0 || (size_t)len >= sizeof try.name) {
        tfd_resource_unref(r);
        tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "node name '%s' is too long for a table's name", k->name);
        return NULL;
      }
    }
    if (tfd_resource_mgr_create(c->rm, try.container, try.name, r, &tmp) == TFD_OK) {
      s->handle = try;
      return r;
    }
    tfd_resource_unref(r);
    tfd_status_clear(&tmp);
    if (private_name) continue; /* taken: try the next number */
    /* made meanwhile by another step or session run: use that one */
    r = tfd_resource_mgr_lookup(c->rm, h.container, TABLE_TYPE, h.name, &tmp);
    tfd_status_clear(&tmp);
    if (!r) {
      tfd_kernel_fail(c, k, TFD_INTERNAL, "table '%s' vanished", h.name);
      return NULL;
    }
    s->handle = h;
    return r;
  }
}

static void k_table(tfd_kernel *k, tfd_kernel_context *c) {
  kernel_state *s = k->state;
  pthread_mutex_lock(&s->mu);
  if (!s->res) s->res = make_table(k, c, s);
  bool ok = s->res != NULL;
  tfd_resource_handle h = s->handle;
  pthread_mutex_unlock(&s->mu);
  if (!ok) return;
  tfd_tensor *out = tfd_kernel_alloc(c, k, TFD_RESOURCE, NULL, 0);
  if (!out) return;
  *(tfd_resource_handle *)tfd_tensor_data(out) = h;
  c->outputs[0] = out;
}

static table *lookup_table(tfd_kernel *k, tfd_kernel_context *c, tfd_resource **res) {
  *res = NULL;
  if (!tfd_kernel_check_scalar(c, k, c->inputs[0], "the table handle")) return NULL;
  const tfd_resource_handle *h = tfd_tensor_const_data(c->inputs[0]);
  tfd_status tmp = TFD_STATUS_INIT;
  *res = tfd_resource_mgr_lookup(c->rm, h->container, TABLE_TYPE, h->name, &tmp);
  if (!*res) tfd_kernel_fail(c, k, TFD_NOT_FOUND, "%s", tfd_status_message(&tmp));
  tfd_status_clear(&tmp);
  return *res ? tfd_resource_data(*res) : NULL;
}

/* OpKernelContext::MatchSignature over the inputs after the handle. */
static bool match_signature(tfd_kernel_context *c, const tfd_kernel *k, const table *t, int nin) {
  tfd_dtype want[3] = {TFD_RESOURCE, t->kdt, t->vdt};
  bool ok = true;
  for (int i = 1; i < nin; i++) ok = ok && tfd_tensor_dtype(c->inputs[i]) == want[i];
  if (ok) return true;
  char have[96] = "resource", expect[96] = "resource";
  for (int i = 1; i < nin; i++) {
    size_t a = strlen(have), b = strlen(expect);
    snprintf(have + a, sizeof have - a, ", %s", tfd_dtype_name(tfd_tensor_dtype(c->inputs[i])));
    snprintf(expect + b, sizeof expect - b, ", %s", tfd_dtype_name(want[i]));
  }
  tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Signature mismatch, have: %s expected: %s", have, expect);
  return false;
}

/* CheckKeyAndValueTensorsHelper: scalar keys and values, so values must have the keys' shape. */
static bool same_shape(tfd_kernel_context *c, const tfd_kernel *k, const tfd_tensor *keys, const tfd_tensor *vals) {
  tfd_shape ks, vs;
  tfd_shape_of_tensor(keys, &ks);
  tfd_shape_of_tensor(vals, &vs);
  bool same = ks.ndims == vs.ndims;
  for (int d = 0; same && d < ks.ndims; d++) same = ks.dims[d] == vs.dims[d];
  if (same) return true;
  char a[96], b[96];
  tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Expected shape %s for value, got %s", tfd_shape_string(&ks, a, sizeof a),
                  tfd_shape_string(&vs, b, sizeof b));
  return false;
}

/* Inserts every (key, value); an initializable table refuses a key it holds with another value
 * (HashTable::DoInsert). Called with t->mu held. */
static bool insert_all(tfd_kernel_context *c, const tfd_kernel *k, table *t, const tfd_tensor *keys, const tfd_tensor *vals) {
  int64_t n = tfd_tensor_numel(keys);
  if (!grow(t, n)) {
    tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory growing a table to %" PRId64 " entries", t->n + n);
    return false;
  }
  for (int64_t i = 0; i < n; i++) {
    int64_t key = key_at(keys, i);
    uint64_t v = val_at(vals, i);
    int64_t e = find(t, key);
    if (e >= 0) {
      if (t->is_mutable) {
        hold(t->vdt, v);
        drop(t->vdt, t->vals[e]);
        t->vals[e] = v;
      } else if (!val_eq(t, t->vals[e], v)) {
        char have[48], add[48], kt[48];
        val_str(t->vdt, t->vals[e], have, sizeof have);
        val_str(t->vdt, v, add, sizeof add);
        val_str(t->kdt, (uint64_t)key, kt, sizeof kt);
        tfd_kernel_fail(c, k, TFD_FAILED_PRECONDITION,
                        "HashTable has different value for same key. Key %s has %s and trying to add value %s", kt, have,
                        add);
        return false;
      }
      continue;
    }
    hold(t->kdt, (uint64_t)key);
    hold(t->vdt, v);
    t->keys[t->n] = key;
    t->vals[t->n] = v;
    uint64_t s = key_hash(t, key) & (uint64_t)(t->nslots - 1);
    while (t->slots[s]) s = (s + 1) & (uint64_t)(t->nslots - 1);
    t->slots[s] = ++t->n;
  }
  return true;
}

/* InitializableLookupTable::Initialize: once; again only with the same entries. Under t->mu. */
static void initialize(tfd_kernel_context *c, const tfd_kernel *k, table *t, const tfd_tensor *keys, const tfd_tensor *vals) {
  if (t->initialized) {
    int64_t n = tfd_tensor_numel(keys);
    bool same = true;
    /* AreEntriesSame: as many distinct keys, each holding its value */
    for (int64_t i = 0; same && i < n; i++) {
      int64_t e = find(t, key_at(keys, i));
      same = e >= 0 && val_eq(t, t->vals[e], val_at(vals, i));
    }
    if (same && n != t->n) same = false;
    if (!same) tfd_kernel_fail(c, k, TFD_FAILED_PRECONDITION, "Table was already initialized with different data.");
    return;
  }
  if (!insert_all(c, k, t, keys, vals)) {
    clear(t); /* a failed initialization leaves the table empty, as a fresh one */
    free(t->slots);
    t->slots = NULL;
    t->nslots = 0;
    return;
  }
  t->initialized = true;
}

static void k_initialize(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_resource *r;
  table *t = lookup_table(k, c, &r);
  if (!t) return;
  const tfd_tensor *keys = c->inputs[1], *vals = c->inputs[2];
  char buf[96];
  tfd_shape ks;
  tfd_shape_of_tensor(keys, &ks);
  if (!match_signature(c, k, t, 3)) goto out;
  if (ks.ndims != 1) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Keys must be a vector, but received shape%s", tfd_shape_string(&ks, buf, sizeof buf));
    goto out;
  }
  if (tfd_tensor_numel(keys) != tfd_tensor_numel(vals)) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Keys and values must have the same size %" PRId64 " vs %" PRId64,
                    tfd_tensor_numel(keys), tfd_tensor_numel(vals));
    goto out;
  }
  if (!same_shape(c, k, keys, vals)) goto out;
  if (t->is_mutable) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "table %s is a MutableHashTable, which %s does not initialize",
                    ((const tfd_resource_handle *)tfd_tensor_const_data(c->inputs[0]))->name, k->op->name);
    goto out;
  }
  pthread_mutex_lock(&t->mu);
  initialize(c, k, t, keys, vals);
  pthread_mutex_unlock(&t->mu);
out:
  tfd_resource_unref(r);
}

/* LookupTableImportV2: a HashTable initializes; a MutableHashTable replaces its entries. */
static void k_import(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_resource *r;
  table *t = lookup_table(k, c, &r);
  if (!t) return;
  const tfd_tensor *keys = c->inputs[1], *vals = c->inputs[2];
  if (match_signature(c, k, t, 3) && same_shape(c, k, keys, vals)) {
    pthread_mutex_lock(&t->mu);
    if (t->is_mutable) {
      clear(t);
      insert_all(c, k, t, keys, vals);
    } else {
      initialize(c, k, t, keys, vals);
    }
    pthread_mutex_unlock(&t->mu);
  }
  tfd_resource_unref(r);
}

static void k_insert(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_resource *r;
  table *t = lookup_table(k, c, &r);
  if (!t) return;
  if (match_signature(c, k, t, 3)) {
    if (!t->is_mutable)
      tfd_kernel_fail(c, k, TFD_UNIMPLEMENTED, "Insert not supported by InitializableLookupTable implementations");
    else if (same_shape(c, k, c->inputs[1], c->inputs[2])) {
      pthread_mutex_lock(&t->mu);
      insert_all(c, k, t, c->inputs[1], c->inputs[2]);
      pthread_mutex_unlock(&t->mu);
    }
  }
  tfd_resource_unref(r);
}

static void k_remove(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_resource *r;
  table *t = lookup_table(k, c, &r);
  if (!t) return;
  const tfd_tensor *keys = c->inputs[1];
  if (tfd_tensor_dtype(keys) != t->kdt) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Key must be type %s but got %s", tfd_dtype_name(t->kdt),
                    tfd_dtype_name(tfd_tensor_dtype(keys)));
  } else if (!t->is_mutable) {
    tfd_kernel_fail(c, k, TFD_UNIMPLEMENTED, "Remove not supported by InitializableLookupTable implementations");
  } else {
    pthread_mutex_lock(&t->mu);
    for (int64_t i = 0; i < tfd_tensor_numel(keys); i++) {
      int64_t e = find(t, key_at(keys, i));
      if (e < 0) continue;
      drop(t->kdt, (uint64_t)t->keys[e]);
      drop(t->vdt, t->vals[e]);
      /* keep insertion order: shift the later entries down, then rebuild the index once */
      memmove(t->keys + e, t->keys + e + 1, (size_t)(t->n - e - 1) * sizeof *t->keys);
      memmove(t->vals + e, t->vals + e + 1, (size_t)(t->n - e - 1) * sizeof *t->vals);
      t->n--;
      if (!reindex(t, t->nslots)) {
        tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory removing from a table");
        clear(t); /* no index: an empty table rather than one whose lookups miss */
        break;
      }
    }
    pthread_mutex_unlock(&t->mu);
  }
  tfd_resource_unref(r);
}

static void k_find(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_resource *r;
  table *t = lookup_table(k, c, &r);
  if (!t) return;
  const tfd_tensor *keys = c->inputs[1], *dflt = c->inputs[2];
  if (!match_signature(c, k, t, 3)) goto out;
  tfd_shape ks, ds;
  tfd_shape_of_tensor(keys, &ks);
  tfd_shape_of_tensor(dflt, &ds);
  bool full = ds.ndims == ks.ndims;
  for (int d = 0; full && d < ks.ndims; d++) full = ds.dims[d] == ks.dims[d];
  if (ds.ndims != 0 && !full) {
    char a[96], b[96];
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                    "default_value must be the same shape as value_shape or full size value shape expected [] or %s, got %s",
                    tfd_shape_string(&ks, a, sizeof a), tfd_shape_string(&ds, b, sizeof b));
    goto out;
  }
  pthread_mutex_lock(&t->mu);
  if (!t->initialized) {
    pthread_mutex_unlock(&t->mu);
    tfd_kernel_fail(c, k, TFD_FAILED_PRECONDITION, "Table not initialized.");
    goto out;
  }
  tfd_tensor *o = tfd_kernel_alloc(c, k, t->vdt, ks.dims, ks.ndims);
  if (!o) {
    pthread_mutex_unlock(&t->mu);
    goto out;
  }
  size_t sz = tfd_dtype_size(t->vdt);
  char *dst = tfd_tensor_data(o);
  int64_t n = tfd_tensor_numel(keys);
  /* HashTable reads default_value's first element; MutableHashTable a full-size one elementwise */
  bool per_key = full && ds.ndims != 0 && t->is_mutable;
  for (int64_t i = 0; i < n; i++) {
    int64_t e = find(t, key_at(keys, i));
    uint64_t v = e >= 0 ? t->vals[e] : val_at(dflt, per_key ? i : 0);
    memcpy(dst + (size_t)i * sz, &v, sz);
    hold(t->vdt, v); /* under the lock: a removal right after cannot free it first */
  }
  pthread_mutex_unlock(&t->mu);
  c->outputs[0] = o;
out:
  tfd_resource_unref(r);
}

static void k_size(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_resource *r;
  table *t = lookup_table(k, c, &r);
  if (!t) return;
  tfd_tensor *o = tfd_kernel_alloc(c, k, TFD_INT64, NULL, 0);
  if (o) {
    pthread_mutex_lock(&t->mu);
    *(int64_t *)tfd_tensor_data(o) = t->initialized ? t->n : 0;
    pthread_mutex_unlock(&t->mu);
    c->outputs[0] = o;
  }
  tfd_resource_unref(r);
}

static void k_export(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_resource *r;
  table *t = lookup_table(k, c, &r);
  if (!t) return;
  pthread_mutex_lock(&t->mu);
  int64_t n = t->initialized ? t->n : 0;
  tfd_tensor *ko = tfd_kernel_alloc(c, k, t->kdt, &n, 1);
  tfd_tensor *vo = ko ? tfd_kernel_alloc(c, k, t->vdt, &n, 1) : NULL;
  if (vo) {
    size_t vs = tfd_dtype_size(t->vdt);
    for (int64_t i = 0; i < n; i++) {
      if (t->kdt == TFD_INT32) ((int32_t *)tfd_tensor_data(ko))[i] = (int32_t)t->keys[i];
      else ((int64_t *)tfd_tensor_data(ko))[i] = t->keys[i];
      memcpy((char *)tfd_tensor_data(vo) + (size_t)i * vs, &t->vals[i], vs);
      hold(t->kdt, (uint64_t)t->keys[i]);
      hold(t->vdt, t->vals[i]);
    }
    c->outputs[0] = ko;
    c->outputs[1] = vo;
  } else {
    tfd_tensor_unref(ko);
  }
  pthread_mutex_unlock(&t->mu);
  tfd_resource_unref(r);
}

/* TensorFlow 1's table ops (HashTable, InitializeTable, LookupTableFind, ...) pass a string-ref handle
 * where the V2 ops pass a resource; tfdev gives both the resource, so a v1 name runs its V2 kernel. */
static bool table_op_is(const char *op, const char *base) {
  size_t n = strlen(base);
  return strncmp(op, base, n) == 0 && (op[n] == '\0' || strcmp(op + n, "V2") == 0);
}

tfd_code tfd_setup_lookup_table(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  const char *op = init->op->name;
  const tfd_node_def *n = init->node;
  k->makes_strings = true; /* string outputs take their references under the table's lock */
  if (table_op_is(op, "HashTable") || table_op_is(op, "MutableHashTable")) {
    k->tb = table_op_is(op, "MutableHashTable");
    k->types[0] = tfd_attr_dtype(n, "key_dtype", 0);
    k->types[1] = tfd_attr_dtype(n, "value_dtype", 0);
    const char *container = tfd_attr_string(n, "container", ""), *name = tfd_attr_string(n, "shared_name", "");
    bool node_sharing = tfd_attr_bool(n, "use_node_name_sharing", false);
    k->ta = !*name && !node_sharing;
    if (!*name) name = tfd_node_def_name(n);
    if (strlen(container) >= sizeof k->handle.container || strlen(name) >= sizeof k->handle.name)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s': container or table name is too long", tfd_node_def_name(n));
    strcpy(k->handle.container, container);
    strcpy(k->handle.name, name);
    kernel_state *s = calloc(1, sizeof *s);
    if (!s) return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
    pthread_mutex_init(&s->mu, NULL);
    k->state = s;
    k->cleanup = table_kernel_cleanup;
    k->compute = k_table;
  } else if (table_op_is(op, "InitializeTable")) k->compute = k_initialize;
  else if (table_op_is(op, "LookupTableImport")) k->compute = k_import;
  else if (table_op_is(op, "LookupTableInsert")) k->compute = k_insert;
  else if (table_op_is(op, "LookupTableRemove")) k->compute = k_remove;
  else if (table_op_is(op, "LookupTableFind")) k->compute = k_find;
  else if (table_op_is(op, "LookupTableSize")) k->compute = k_size;
  else if (table_op_is(op, "LookupTableExport")) k->compute = k_export;
  else return tfd_status_setf(st, TFD_INTERNAL, "no lookup table kernel for %s", op);
  return TFD_OK;
}
