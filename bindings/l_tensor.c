/* Lua userdata for tensors (tfdev.tensor): creation from nested tables, specs and bytes; conversion back. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../runtime/core/status_internal.h"
#include "../runtime/core/half.h"
#include "l_common.h"
#include "l_tensor.h"
#include "l_modules.h"

typedef struct ltensor {
  tfd_tensor *t; /* one reference; NULL once closed */
} ltensor;

/* Lua's collector sees a tensor handle as a few bytes, not the buffer it holds: a loop that drops
 * its results would keep them all until a collection happens to come, and every new output would
 * be fresh memory (page faults on each run). So a tensor of a page or more handed to Lua pays for
 * its buffer in collector work, as if Lua had allocated it (LUA_GCSTEP takes kilobytes, and only
 * adds debt until a step is due). The bound was 64 KiB: a frame loop fetching blazeface's 56 KiB
 * output then kept about 14 MiB of dropped outputs alive and faulted in 11 pages a step. */
#define GC_ACCOUNTED_BYTES ((size_t)4 << 10)

static void account(lua_State *L, const tfd_tensor *t) {
  size_t bytes = t ? tfd_tensor_byte_size(t) + tfd_tensor_string_bytes(t) : 0; /* strings: their bytes too */
  if (bytes >= GC_ACCOUNTED_BYTES) lua_gc(L, LUA_GCSTEP, (int)(bytes >> 10 < INT32_MAX ? bytes >> 10 : INT32_MAX));
}

/* The reference a push takes is dropped when tfdev is closed in L (a finalizer run by lua_close after
 * tfdev's state): no handle that nothing would ever free is made. */
static void check_alive_taking(lua_State *L, tfd_tensor *t) {
  if (tfdev_closed(L)) {
    tfd_tensor_unref(t);
    tfdev_check_alive(L);
  }
}

void tfdev_push_tensor(lua_State *L, tfd_tensor *t) {
  check_alive_taking(L, t);
  ltensor *u = lua_newuserdatauv(L, sizeof *u, 0);
  u->t = t;
  luaL_setmetatable(L, TFDEV_TENSOR_MT);
  tfdev_made(L);
  account(L, t);
}

void tfdev_push_tensor_mt(lua_State *L, tfd_tensor *t, int mt) {
  mt = lua_absindex(L, mt);
  check_alive_taking(L, t);
  ltensor *u = lua_newuserdatauv(L, sizeof *u, 0);
  u->t = t;
  lua_pushvalue(L, mt);
  lua_setmetatable(L, -2);
  tfdev_made(L);
  account(L, t);
}

bool tfdev_is_tensor_mt(lua_State *L, int idx, int mt, tfd_tensor **t) {
  ltensor *u = lua_touserdata(L, idx);
  if (!u || !lua_getmetatable(L, idx)) return false;
  bool is = lua_rawequal(L, -1, mt < 0 && mt > LUA_REGISTRYINDEX ? mt - 1 : mt);
  lua_pop(L, 1);
  if (is && t) *t = u->t;
  return is;
}

tfd_tensor *tfdev_check_tensor(lua_State *L, int idx) {
  ltensor *u = luaL_checkudata(L, idx, TFDEV_TENSOR_MT);
  if (!u->t) tfdev_raise(L, TFD_FAILED_PRECONDITION, "tensor handle is closed");
  return u->t;
}

static tfd_dtype check_dtype(lua_State *L, int idx) {
  const char *name = tfdev_check_name(L, idx, "dtype");
  tfd_dtype dt = tfd_dtype_from_name(name);
  if (!dt || dt == TFD_RESOURCE || dt == TFD_VARIANT)
    tfdev_raise(L, TFD_INVALID_ARGUMENT,
                "unknown dtype '%s' (tfdev has float32, float64, int32, int64, bool, uint8, float16, complex64, string)",
                name);
  return dt;
}

/* "[2,1]" for the element at 0-based path idx[0..depth). */
static const char *path_string(lua_State *L, const int64_t *idx, int depth) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addchar(&b, '[');
  for (int i = 0; i < depth; i++) {
    char n[32];
    snprintf(n, sizeof n, "%s%" PRId64, i ? "," : "", idx[i] + 1);
    luaL_addstring(&b, n);
  }
  luaL_addchar(&b, ']');
  luaL_pushresult(&b);
  return lua_tostring(L, -1);
}

/* Writes the Lua value at the top of the stack as element i of data, which is tensor `tensor`'s (string
 * elements are set through it). */
static void write_element(lua_State *L, tfd_tensor *tensor, tfd_dtype dt, void *data, int64_t i, const int64_t *path,
                          int depth) {
  int t = lua_type(L, -1);
  if (dt == TFD_STRING) {
    if (t != LUA_TSTRING)
      tfdev_raise(L, TFD_INVALID_ARGUMENT, "element %s is a %s, expected a string (dtype string)",
                  path_string(L, path, depth), lua_typename(L, t));
    size_t len;
    const char *bytes = lua_tolstring(L, -1, &len);
    tfd_code code = tfd_tensor_set_string(tensor, i, bytes, len, NULL); /* a fresh tensor: only memory can fail */
    if (code != TFD_OK)
      tfdev_raise(L, code, "element %s: the %zu-byte string could not be stored", path_string(L, path, depth), len);
    return;
  }
  if (dt == TFD_COMPLEX64) { /* a {re, im} pair, as totable() gives it */
    bool ok = t == LUA_TTABLE && lua_rawlen(L, -1) == 2;
    for (int k = 0; ok && k < 2; k++) {
      ok = lua_rawgeti(L, -1, k + 1) == LUA_TNUMBER;
      ((float *)data)[2 * i + k] = (float)lua_tonumber(L, -1);
      lua_pop(L, 1);
    }
    if (!ok)
      tfdev_raise(L, TFD_INVALID_ARGUMENT, "element %s is not a {re, im} pair of numbers (dtype complex64)",
                  path_string(L, path, depth));
    return;
  }
  if (dt == TFD_BOOL) {
    if (t != LUA_TBOOLEAN)
      tfdev_raise(L, TFD_INVALID_ARGUMENT, "element %s is a %s, expected a boolean (dtype bool)",
                  path_string(L, path, depth), lua_typename(L, t));
    ((unsigned char *)data)[i] = (unsigned char)lua_toboolean(L, -1);
    return;
  }
  if (t != LUA_TNUMBER)
    tfdev_raise(L, TFD_INVALID_ARGUMENT, "element %s is a %s, expected a number (dtype %s)",
                path_string(L, path, depth), lua_typename(L, t), tfd_dtype_name(dt));
  if (dt == TFD_FLOAT32) {
    ((float *)data)[i] = (float)lua_tonumber(L, -1);
  } else if (dt == TFD_FLOAT16) {
    ((uint16_t *)data)[i] = tfd_float_to_half((float)lua_tonumber(L, -1));
  } else if (dt == TFD_FLOAT64) {
    ((double *)data)[i] = (double)lua_tonumber(L, -1);
  } else {
    int ok;
    lua_Integer v = lua_tointegerx(L, -1, &ok);
    if (!ok)
      tfdev_raise(L, TFD_INVALID_ARGUMENT, "element %s = %s is not an integer (dtype %s)",
                  path_string(L, path, depth), luaL_tolstring(L, -1, NULL), tfd_dtype_name(dt));
    if (dt == TFD_INT32) {
      if (v < INT32_MIN || v > INT32_MAX)
        tfdev_raise(L, TFD_INVALID_ARGUMENT, "element %s = %I is out of range for int32", path_string(L, path, depth),
                    v);
      ((int32_t *)data)[i] = (int32_t)v;
    } else if (dt == TFD_UINT8) {
      if (v < 0 || v > 255)
        tfdev_raise(L, TFD_INVALID_ARGUMENT, "element %s = %I is out of range for uint8", path_string(L, path, depth), v);
      ((uint8_t *)data)[i] = (uint8_t)v;
    } else {
      ((int64_t *)data)[i] = (int64_t)v;
    }
  }
}

typedef struct fill_state {
  tfd_tensor *t;
  tfd_dtype dt;
  void *data;
  const int64_t *dims;
  int ndims;
  int64_t next;
  int64_t path[TFD_MAX_DIMS];
} fill_state;

/* Walks the nested table at the top of the stack, checking it is rectangular. */
static void fill_nested(lua_State *L, fill_state *f, int depth) {
  if (depth == f->ndims) {
    if (lua_istable(L, -1) && f->dt != TFD_COMPLEX64)
      tfdev_raise(L, TFD_INVALID_ARGUMENT, "ragged nested table: element %s is a table, expected a %s",
                  path_string(L, f->path, depth), f->dt == TFD_BOOL ? "boolean" : f->dt == TFD_STRING ? "string" : "number");
    write_element(L, f->t, f->dt, f->data, f->next++, f->path, depth);
    return;
  }
  if (!lua_istable(L, -1))
    tfdev_raise(L, TFD_INVALID_ARGUMENT, "ragged nested table: element %s is a %s, expected a table of %d entries",
                path_string(L, f->path, depth), luaL_typename(L, -1), (int)f->dims[depth]);
  lua_Integer n = (lua_Integer)lua_rawlen(L, -1);
  if (n != f->dims[depth])
    tfdev_raise(L, TFD_INVALID_ARGUMENT, "ragged nested table: element %s has %d entries, expected %d",
                path_string(L, f->path, depth), (int)n, (int)f->dims[depth]);
  for (lua_Integer i = 1; i <= n; i++) {
    f->path[depth] = i - 1;
    lua_rawgeti(L, -1, i);
    fill_nested(L, f, depth + 1);
    lua_pop(L, 1);
  }
}

/* Whether the table at idx is a {re, im} pair (a complex64 element) rather than a level of nesting:
 * it holds something and its first entry is no table. */
static bool is_pair(lua_State *L, int idx) {
  if (lua_rawlen(L, idx) == 0) return false;
  bool pair = lua_rawgeti(L, idx, 1) != LUA_TTABLE;
  lua_pop(L, 1);
  return pair;
}

/* Shape of a nested table: follows the first element down. A complex64 element is itself a table, a
 * {re, im} pair: the innermost level is the pairs, not a dimension. */
static int infer_shape(lua_State *L, int idx, tfd_dtype dt, int64_t *dims) {
  int nd = 0;
  lua_pushvalue(L, idx);
  while (lua_istable(L, -1) && !(dt == TFD_COMPLEX64 && is_pair(L, -1))) {
    if (nd == TFD_MAX_DIMS) tfdev_raise(L, TFD_INVALID_ARGUMENT, "nested table is deeper than %d levels", TFD_MAX_DIMS);
    dims[nd++] = (int64_t)lua_rawlen(L, -1);
    if (dims[nd - 1] == 0) break;
    lua_rawgeti(L, -1, 1);
    lua_remove(L, -2);
  }
  lua_pop(L, 1);
  return nd;
}

static tfd_dtype merge_dtype(lua_State *L, tfd_dtype a, tfd_dtype b) {
  if (!a) return b;
  if (!b) return a;
  if ((a == TFD_STRING) != (b == TFD_STRING))
    tfdev_raise(L, TFD_INVALID_ARGUMENT, "nested table mixes strings with %s; give a dtype",
                a == TFD_STRING ? (b == TFD_BOOL ? "booleans" : "numbers") : (a == TFD_BOOL ? "booleans" : "numbers"));
  if ((a == TFD_BOOL) != (b == TFD_BOOL))
    tfdev_raise(L, TFD_INVALID_ARGUMENT, "nested table mixes booleans and numbers; give a dtype");
  return a == TFD_FLOAT32 || b == TFD_FLOAT32 ? TFD_FLOAT32 : a;
}

/* TensorFlow's inference for Python values: all booleans -> bool, all
 * integers -> int32, any float -> float32, strings -> string; 0 when there is no leaf. The
 * walk stops below TFD_MAX_DIMS levels: deeper tables (and tables that
 * contain themselves) can never be tensors, and recursing into them would
 * only exhaust the C stack. */
static tfd_dtype infer_dtype(lua_State *L, int idx, int depth) {
  switch (lua_type(L, idx)) {
    case LUA_TBOOLEAN: return TFD_BOOL;
    case LUA_TNUMBER: return lua_isinteger(L, idx) ? TFD_INT32 : TFD_FLOAT32;
    case LUA_TSTRING: return TFD_STRING;
    case LUA_TTABLE: {
      if (depth >= TFD_MAX_DIMS)
        tfdev_raise(L, TFD_INVALID_ARGUMENT, "nested table is deeper than %d levels (or contains itself)", TFD_MAX_DIMS);
      luaL_checkstack(L, 2, "nested table too deep");
      tfd_dtype acc = 0;
      lua_Integer n = (lua_Integer)lua_rawlen(L, idx);
      for (lua_Integer i = 1; i <= n; i++) {
        lua_rawgeti(L, idx, i);
        acc = merge_dtype(L, acc, infer_dtype(L, lua_gettop(L), depth + 1));
        lua_pop(L, 1);
      }
      return acc;
    }
  }
  return 0; /* filling reports the bad element */
}

static int tensor_from_spec(lua_State *L, int idx) {
  tfd_dtype dt = TFD_FLOAT32;
  if (lua_getfield(L, idx, "dtype") != LUA_TNIL) dt = check_dtype(L, -1);
  lua_pop(L, 1);
  int64_t dims[TFD_MAX_DIMS];
  int nd = -1;
  if (lua_getfield(L, idx, "shape") != LUA_TNIL) {
    if (!lua_istable(L, -1)) return tfdev_raise(L, TFD_INVALID_ARGUMENT, "shape must be a table of sizes");
    lua_Integer n = (lua_Integer)lua_rawlen(L, -1);
    if (n > TFD_MAX_DIMS) return tfdev_raise(L, TFD_INVALID_ARGUMENT, "rank %d is above the maximum %d", (int)n, TFD_MAX_DIMS);
    nd = (int)n;
    for (int i = 0; i < nd; i++) {
      lua_rawgeti(L, -1, i + 1);
      int ok;
      lua_Integer v = lua_tointegerx(L, -1, &ok);
      if (!ok || v < 0)
        return tfdev_raise(L, TFD_INVALID_ARGUMENT, "shape[%d] must be a non-negative integer, got %s", i + 1,
                           luaL_tolstring(L, -1, NULL));
      dims[i] = v;
      lua_pop(L, 1);
    }
  }
  lua_pop(L, 1);
  int data_idx = 0;
  if (lua_getfield(L, idx, "data") != LUA_TNIL) data_idx = lua_gettop(L);
  bool nested = false;
  if (data_idx && lua_istable(L, data_idx) && lua_rawlen(L, data_idx) > 0) {
    nested = lua_rawgeti(L, data_idx, 1) == LUA_TTABLE;
    /* complex64 elements are {re, im} tables themselves: nested only when the first entry holds tables */
    if (nested && dt == TFD_COMPLEX64) nested = lua_rawlen(L, -1) > 0 && !is_pair(L, -1);
    lua_pop(L, 1);
  }
  if (nd < 0) {
    if (!data_idx) return tfdev_raise(L, TFD_INVALID_ARGUMENT, "a tensor spec needs a shape, data, or both");
    nd = infer_shape(L, data_idx, dt, dims);
    nested = true;
  }
  tfd_status *st = tfdev_new_status(L);
  /* The spec's device's allocator, else the state's host allocator; read right before it is used, and left
   * on the stack, so the device stays alive meanwhile. */
  tfd_allocator *alloc = lua_getfield(L, idx, "device") == LUA_TNIL ? tfdev_state(L)->host
                                                                    : tfd_device_get_allocator(tfdev_check_handle(L, -1, TFDEV_DEVICE_MT, "device"));
  tfd_tensor *t = NULL;
  tfd_tensor_new(alloc, dt, dims, nd, &t, st);
  if (!t) return tfdev_raise_status(L, st);
  tfdev_push_tensor(L, t); /* owns t from here, even if we raise below */
  void *data = tfd_tensor_data(t);
  int64_t numel = tfd_tensor_numel(t);
  if (!data_idx) {
    memset(data, 0, tfd_tensor_byte_size(t));
  } else if (nested || !lua_istable(L, data_idx)) {
    fill_state f = {t, dt, data, dims, nd, 0, {0}};
    lua_pushvalue(L, data_idx);
    fill_nested(L, &f, 0);
    lua_pop(L, 1);
  } else {
    lua_Integer n = (lua_Integer)lua_rawlen(L, data_idx);
    if (n != numel)
      return tfdev_raise(L, TFD_INVALID_ARGUMENT, "data has %d elements, shape needs %d", (int)n, (int)numel);
    for (int64_t i = 0; i < numel; i++) {
      int64_t path[1] = {i};
      lua_rawgeti(L, data_idx, (lua_Integer)i + 1);
      write_element(L, t, dt, data, i, path, 1);
      lua_pop(L, 1);
    }
  }
  return 1;
}

/* tfdev.tensor(value [, dtype]) or tfdev.tensor{dtype=, shape=, data=, device=} */
static int tensor_new(lua_State *L) {
  if (lua_gettop(L) > 2) /* a shape given third would be ignored: say so (the spec table takes one) */
    return tfdev_raise(L, TFD_INVALID_ARGUMENT,
                       "tfdev.tensor takes (value[, dtype]) or a spec table {dtype=, shape=, data=}, got %d arguments "
                       "(a shape goes in the spec table)",
                       lua_gettop(L));
  lua_settop(L, 2);
  int idx = 1;
  if (lua_istable(L, idx) && lua_rawlen(L, idx) == 0) {
    lua_getfield(L, idx, "shape");
    lua_getfield(L, idx, "dtype");
    lua_getfield(L, idx, "data");
    bool spec = !lua_isnil(L, -1) || !lua_isnil(L, -2) || !lua_isnil(L, -3);
    lua_pop(L, 3);
    if (spec) {
      if (!lua_isnoneornil(L, 2))
        return tfdev_raise(L, TFD_INVALID_ARGUMENT, "give the dtype inside the spec table, not as a second argument");
      return tensor_from_spec(L, idx);
    }
  }
  int t = lua_type(L, idx);
  if (t != LUA_TTABLE && t != LUA_TNUMBER && t != LUA_TBOOLEAN && t != LUA_TSTRING)
    return tfdev_raise(L, TFD_INVALID_ARGUMENT, "tfdev.tensor expects a number, boolean, string or nested table, got %s",
                       luaL_typename(L, idx));
  tfd_dtype dt = lua_isnoneornil(L, 2) ? infer_dtype(L, idx, 0) : check_dtype(L, 2);
  if (!dt) dt = TFD_FLOAT32;
  int64_t dims[TFD_MAX_DIMS];
  int nd = infer_shape(L, idx, dt, dims);
  tfd_status *st = tfdev_new_status(L);
  tfd_tensor *tensor = NULL;
  tfd_tensor_new(tfdev_state(L)->host, dt, dims, nd, &tensor, st);
  if (!tensor) return tfdev_raise_status(L, st);
  tfdev_push_tensor(L, tensor);
  fill_state f = {tensor, dt, tfd_tensor_data(tensor), dims, nd, 0, {0}};
  lua_pushvalue(L, idx);
  fill_nested(L, &f, 0);
  lua_pop(L, 1);
  return 1;
}

tfd_tensor *tfdev_to_tensor(lua_State *L, int idx, tfd_dtype dtype, const char *what) {
  idx = lua_absindex(L, idx);
  if (luaL_testudata(L, idx, TFDEV_TENSOR_MT)) {
    ltensor *u = lua_touserdata(L, idx);
    if (!u->t) tfdev_raise(L, TFD_FAILED_PRECONDITION, "%s: the tensor handle is closed", what ? what : "tensor");
    return u->t;
  }
  lua_pushcfunction(L, tensor_new);
  lua_pushvalue(L, idx);
  if (dtype) lua_pushstring(L, tfd_dtype_name(dtype));
  else lua_pushnil(L);
  if (lua_pcall(L, 2, 1, 0) != LUA_OK) {
    /* Say which value was bad: "feed 'x': element [2] is a string, ...". */
    if (what && tfdev_is_error(L, -1)) {
      lua_getfield(L, -1, "code");
      lua_getfield(L, -2, "message");
      int code = tfd_code_from_name(lua_tostring(L, -2));
      tfdev_raise(L, code > 0 ? (tfd_code)code : TFD_UNKNOWN, "%s: %s", what, lua_tostring(L, -1));
    }
    lua_error(L);
  }
  lua_replace(L, idx);
  return tfdev_check_tensor(L, idx);
}

static int check_shape_table(lua_State *L, int idx, int64_t *dims) {
  luaL_checktype(L, idx, LUA_TTABLE);
  lua_Integer n = (lua_Integer)lua_rawlen(L, idx);
  if (n > TFD_MAX_DIMS) tfdev_raise(L, TFD_INVALID_ARGUMENT, "rank %d is above the maximum %d", (int)n, TFD_MAX_DIMS);
  for (lua_Integer i = 1; i <= n; i++) {
    lua_rawgeti(L, idx, i);
    int ok;
    lua_Integer v = lua_tointegerx(L, -1, &ok);
    if (!ok || v < 0) tfdev_raise(L, TFD_INVALID_ARGUMENT, "shape[%d] must be a non-negative integer", (int)i);
    dims[i - 1] = v;
    lua_pop(L, 1);
  }
  return (int)n;
}

/* tfdev.from_bytes(dtype, shape, bytes) */
static int tensor_from_bytes(lua_State *L) {
  lua_settop(L, 3);
  tfd_dtype dt = check_dtype(L, 1);
  int64_t dims[TFD_MAX_DIMS];
  int nd = check_shape_table(L, 2, dims);
  size_t len;
  const char *s = luaL_checklstring(L, 3, &len);
  tfd_status *st = tfdev_new_status(L);
  tfd_tensor *t = NULL;
  tfd_tensor_from_bytes(tfdev_state(L)->host, dt, dims, nd, s, len, &t, st);
  if (!t) return tfdev_raise_status(L, st);
  tfdev_push_tensor(L, t);
  return 1;
}

/* A variant tensor's elements are references to runtime objects (TensorList handles) that only kernels
 * read: Lua gets an error saying what to fetch instead, never the pointers. */
static void refuse_variant(lua_State *L, const tfd_tensor *t, const char *what) {
  if (tfd_tensor_dtype(t) == TFD_VARIANT)
    tfdev_raise(L, TFD_INVALID_ARGUMENT,
                "%s: a variant tensor holds TensorList handles, which Lua cannot read; fetch the list's contents "
                "instead (the output of a TensorListStack or TensorListGetItem)",
                what);
}

static void push_string_element(lua_State *L, const tfd_tensor *t, int64_t i) {
  size_t len;
  const char *s = tfd_tensor_string_at(t, i, &len);
  lua_pushlstring(L, s, len);
}

static void push_element(lua_State *L, const tfd_tensor *t, int64_t i) {
  const void *d = tfd_tensor_const_data(t);
  switch (tfd_tensor_dtype(t)) {
    case TFD_FLOAT32: lua_pushnumber(L, ((const float *)d)[i]); break;
    case TFD_FLOAT64: lua_pushnumber(L, ((const double *)d)[i]); break;
    case TFD_INT32: lua_pushinteger(L, ((const int32_t *)d)[i]); break;
    case TFD_INT64: lua_pushinteger(L, ((const int64_t *)d)[i]); break;
    case TFD_BOOL: lua_pushboolean(L, ((const unsigned char *)d)[i]); break;
    case TFD_UINT8: lua_pushinteger(L, ((const uint8_t *)d)[i]); break;
    case TFD_FLOAT16: lua_pushnumber(L, tfd_half_to_float(((const uint16_t *)d)[i])); break;
    case TFD_COMPLEX64:
      lua_createtable(L, 2, 0);
      lua_pushnumber(L, ((const float *)d)[2 * i]);
      lua_rawseti(L, -2, 1);
      lua_pushnumber(L, ((const float *)d)[2 * i + 1]);
      lua_rawseti(L, -2, 2);
      break;
    case TFD_RESOURCE: {
      const tfd_resource_handle *h = &((const tfd_resource_handle *)d)[i];
      lua_pushfstring(L, "%s/%s", h->container, h->name);
      break;
    }
    case TFD_VARIANT: refuse_variant(L, t, "reading an element"); break;
    case TFD_STRING: push_string_element(L, t, i); break;
  }
}

/* Pushes the nested table for dims [depth..) starting at element *next. */
static void push_nested(lua_State *L, const tfd_tensor *t, int depth, int64_t *next) {
  if (depth == tfd_tensor_ndims(t)) {
    push_element(L, t, (*next)++);
    return;
  }
  int64_t n = tfd_tensor_dim(t, depth);
  luaL_checkstack(L, 4, "tensor too deep");
  lua_createtable(L, (int)(n < 1 << 24 ? n : 0), 0);
  for (int64_t i = 0; i < n; i++) {
    push_nested(L, t, depth + 1, next);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
}

/* How many Lua values (tables and elements) the nested form of t has,
 * saturating: an empty dimension after a huge one still means that many
 * empty tables. */
static int64_t nested_value_count(const tfd_tensor *t) {
  int64_t total = 0, level = 1;
  for (int d = 0; d < tfd_tensor_ndims(t); d++) {
    total = total > INT64_MAX - level ? INT64_MAX : total + level;
    int64_t n = tfd_tensor_dim(t, d);
    level = n && level > INT64_MAX / n ? INT64_MAX : level * n;
  }
  return total > INT64_MAX - level ? INT64_MAX : total + level;
}

/* Past this many values a nested table would take gigabytes: use bytes(). */
#define TOTABLE_MAX_VALUES ((int64_t)1 << 27)

static int tensor_totable(lua_State *L) {
  tfd_tensor *t = tfdev_check_tensor(L, 1);
  refuse_variant(L, t, "totable()");
  int64_t count = nested_value_count(t);
  if (count > TOTABLE_MAX_VALUES)
    return tfdev_raise(L, TFD_RESOURCE_EXHAUSTED,
                       "totable(): this tensor would need %s%I Lua values (tables and elements; at most %I): "
                       "use bytes() or index it",
                       count == INT64_MAX ? "over " : "", (lua_Integer)count, (lua_Integer)TOTABLE_MAX_VALUES);
  int64_t next = 0;
  push_nested(L, t, 0, &next);
  return 1;
}

static int tensor_item(lua_State *L) {
  tfd_tensor *t = tfdev_check_tensor(L, 1);
  refuse_variant(L, t, "item()");
  if (tfd_tensor_numel(t) != 1)
    return tfdev_raise(L, TFD_INVALID_ARGUMENT, "item() needs a tensor of one element, this one has %d",
                       (int)tfd_tensor_numel(t));
  push_element(L, t, 0);
  return 1;
}

static int tensor_numel(lua_State *L) {
  lua_pushinteger(L, tfd_tensor_numel(tfdev_check_tensor(L, 1)));
  return 1;
}

static int tensor_bytes(lua_State *L) {
  tfd_tensor *t = tfdev_check_tensor(L, 1);
  refuse_variant(L, t, "bytes()");
  if (tfd_tensor_dtype(t) == TFD_STRING)
    return tfdev_raise(L, TFD_INVALID_ARGUMENT, "bytes(): a string tensor's elements are strings of their own: "
                                                "read them with totable(), item() or indexing");
  lua_pushlstring(L, tfd_tensor_const_data(t), tfd_tensor_byte_size(t));
  return 1;
}

static void push_shape(lua_State *L, const tfd_tensor *t) {
  int nd = tfd_tensor_ndims(t);
  lua_createtable(L, nd, 0);
  for (int i = 0; i < nd; i++) {
    lua_pushinteger(L, tfd_tensor_dim(t, i));
    lua_rawseti(L, -2, i + 1);
  }
}

static int tensor_index(lua_State *L) {
  luaL_checkudata(L, 1, TFDEV_TENSOR_MT);
  if (lua_type(L, 2) == LUA_TSTRING) {
    luaL_getmetafield(L, 1, "methods");
    if (lua_getfield(L, -1, lua_tostring(L, 2)) != LUA_TNIL) return 1; /* methods stay reachable when closed */
    lua_pop(L, 2);
  }
  tfd_tensor *t = tfdev_check_tensor(L, 1);
  if (lua_type(L, 2) == LUA_TNUMBER) {
    int ok;
    lua_Integer i = lua_tointegerx(L, 2, &ok);
    if (!ok || tfd_tensor_ndims(t) == 0 || i < 1 || i > tfd_tensor_dim(t, 0)) {
      lua_pushnil(L); /* like a table: nil past the end, so ipairs stops */
      return 1;
    }
    if (tfd_tensor_ndims(t) == 1) {
      push_element(L, t, i - 1);
      return 1;
    }
    tfd_status *st = tfdev_new_status(L);
    tfd_tensor *v = NULL;
    tfd_tensor_slice(t, i - 1, &v, st);
    if (!v) return tfdev_raise_status(L, st);
    tfdev_push_tensor(L, v);
    return 1;
  }
  const char *k = luaL_checkstring(L, 2);
  if (strcmp(k, "dtype") == 0) lua_pushstring(L, tfd_dtype_name(tfd_tensor_dtype(t)));
  else if (strcmp(k, "shape") == 0) push_shape(L, t);
  else if (strcmp(k, "ndims") == 0) lua_pushinteger(L, tfd_tensor_ndims(t));
  else lua_pushnil(L);
  return 1;
}

static int tensor_len(lua_State *L) {
  tfd_tensor *t = tfdev_check_tensor(L, 1);
  lua_pushinteger(L, tfd_tensor_ndims(t) ? tfd_tensor_dim(t, 0) : 0);
  return 1;
}

/* A string element as a quoted Lua literal: printable ASCII as is, the rest as \ddd escapes, and
 * past 40 bytes an ellipsis. */
static void add_string_element(luaL_Buffer *b, const tfd_tensor *t, int64_t i) {
  size_t len;
  const unsigned char *s = (const unsigned char *)tfd_tensor_string_at(t, i, &len);
  luaL_addchar(b, '"');
  for (size_t k = 0; k < len && k < 40; k++) {
    if (s[k] >= 32 && s[k] < 127 && s[k] != '"' && s[k] != '\\') {
      luaL_addchar(b, (char)s[k]);
    } else if (s[k] == '"' || s[k] == '\\') {
      luaL_addchar(b, '\\');
      luaL_addchar(b, (char)s[k]);
    } else {
      char e[8]; /* three digits when a digit follows, as Lua's %q writes them */
      bool digit_next = k + 1 < len && k + 1 < 40 && s[k + 1] >= '0' && s[k + 1] <= '9';
      snprintf(e, sizeof e, digit_next ? "\\%03d" : "\\%d", s[k]);
      luaL_addstring(b, e);
    }
  }
  luaL_addstring(b, len > 40 ? "\"..." : "\"");
}

static void add_element(luaL_Buffer *b, const tfd_tensor *t, int64_t i) {
  char s[64];
  const void *d = tfd_tensor_const_data(t);
  switch (tfd_tensor_dtype(t)) {
    case TFD_FLOAT32: snprintf(s, sizeof s, "%.7g", (double)((const float *)d)[i]); break;
    case TFD_FLOAT64: snprintf(s, sizeof s, "%.15g", ((const double *)d)[i]); break;
    case TFD_INT32: snprintf(s, sizeof s, "%d", ((const int32_t *)d)[i]); break;
    case TFD_INT64: snprintf(s, sizeof s, "%" PRId64, ((const int64_t *)d)[i]); break;
    case TFD_BOOL: snprintf(s, sizeof s, "%s", ((const unsigned char *)d)[i] ? "true" : "false"); break;
    case TFD_UINT8: snprintf(s, sizeof s, "%d", ((const uint8_t *)d)[i]); break;
    case TFD_FLOAT16: snprintf(s, sizeof s, "%.4g", (double)tfd_half_to_float(((const uint16_t *)d)[i])); break;
    case TFD_COMPLEX64:
      snprintf(s, sizeof s, "%.7g%+.7gi", (double)((const float *)d)[2 * i], (double)((const float *)d)[2 * i + 1]);
      break;
    case TFD_RESOURCE: snprintf(s, sizeof s, "<resource %.50s>", ((const tfd_resource_handle *)d)[i].name); break;
    case TFD_VARIANT: snprintf(s, sizeof s, "%s", ((void *const *)d)[i] ? "<variant>" : "<empty variant>"); break;
    case TFD_STRING: add_string_element(b, t, i); return;
  }
  luaL_addstring(b, s);
}

/* numpy-style summary: past 1000 elements, long dimensions show 3 ... 3. */
static void add_nested(luaL_Buffer *b, const tfd_tensor *t, int depth, int64_t offset, bool summarize) {
  if (depth == tfd_tensor_ndims(t)) {
    add_element(b, t, offset);
    return;
  }
  int64_t n = tfd_tensor_dim(t, depth), stride = 1;
  /* An empty tensor has no element to address, and its sizes may multiply past int64. */
  for (int i = depth + 1; i < tfd_tensor_ndims(t) && tfd_tensor_numel(t) > 0; i++) stride *= tfd_tensor_dim(t, i);
  luaL_addchar(b, '[');
  for (int64_t i = 0; i < n; i++) {
    if (i) luaL_addstring(b, ", ");
    if (summarize && n > 6 && i == 3) {
      luaL_addstring(b, "..., ");
      i = n - 3;
    }
    add_nested(b, t, depth + 1, offset + i * stride, summarize);
  }
  luaL_addchar(b, ']');
}

static int tensor_tostring(lua_State *L) {
  ltensor *u = luaL_checkudata(L, 1, TFDEV_TENSOR_MT);
  if (!u->t) {
    lua_pushliteral(L, "tfdev.tensor(closed)");
    return 1;
  }
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addstring(&b, "tfdev.tensor(");
  luaL_addstring(&b, tfd_dtype_name(tfd_tensor_dtype(u->t)));
  luaL_addstring(&b, ", shape={");
  for (int i = 0; i < tfd_tensor_ndims(u->t); i++) {
    char s[32];
    snprintf(s, sizeof s, "%s%" PRId64, i ? ", " : "", tfd_tensor_dim(u->t, i));
    luaL_addstring(&b, s);
  }
  luaL_addstring(&b, "}): ");
  add_nested(&b, u->t, 0, 0, nested_value_count(u->t) > 1000); /* rows count too: {2^40, 0} */
  luaL_pushresult(&b);
  return 1;
}

/* tensor:copy_from(other_tensor or bytes_string): writes the elements in place (same dtype and element
 * count; the bytes of exactly the tensor's size), refused while a running step or anyone else shares
 * the buffer. Returns the tensor, so calls chain. */
static int tensor_copy_from(lua_State *L) {
  tfd_tensor *t = tfdev_check_tensor(L, 1);
  tfd_status *st = tfdev_new_status(L);
  tfd_code code;
  if (lua_type(L, 2) == LUA_TSTRING) {
    size_t n;
    const char *bytes = lua_tolstring(L, 2, &n);
    code = tfd_tensor_copy_from_bytes(t, bytes, n, st);
  } else if (luaL_testudata(L, 2, TFDEV_TENSOR_MT)) {
    code = tfd_tensor_copy_from(t, tfdev_check_tensor(L, 2), st);
  } else {
    return tfdev_raise(L, TFD_INVALID_ARGUMENT, "copy_from takes a tensor or a string of bytes, got %s",
                       luaL_typename(L, 2));
  }
  if (code != TFD_OK) return tfdev_raise_status(L, st);
  lua_settop(L, 1);
  return 1;
}

/* tensor:fill(v): every element set to v (a number, a boolean for bool tensors, a {re, im} pair for
 * complex64 ones), in place, with the same checks as tensor:copy_from. Returns the tensor. */
static int tensor_fill(lua_State *L) {
  lua_settop(L, 2);
  tfd_tensor *t = tfdev_check_tensor(L, 1);
  tfd_dtype dt = tfd_tensor_dtype(t);
  if (dt == TFD_RESOURCE || dt == TFD_VARIANT)
    return tfdev_raise(L, TFD_INVALID_ARGUMENT, "fill: %s tensors cannot be written in place", tfd_dtype_name(dt));
  int want = dt == TFD_BOOL ? LUA_TBOOLEAN : dt == TFD_COMPLEX64 ? LUA_TTABLE : dt == TFD_STRING ? LUA_TSTRING : LUA_TNUMBER;
  const char *what = dt == TFD_BOOL        ? "a boolean"
                     : dt == TFD_COMPLEX64 ? "a {re, im} pair"
                     : dt == TFD_STRING    ? "a string"
                                           : "a number";
  if (lua_isnil(L, 2)) return tfdev_raise(L, TFD_INVALID_ARGUMENT, "fill needs a value (%s)", what);
  if (lua_type(L, 2) != want)
    return tfdev_raise(L, TFD_INVALID_ARGUMENT, "fill: %s %s tensor takes %s, got %s %s", tfd_article(tfd_dtype_name(dt)),
                       tfd_dtype_name(dt), what, tfd_article(luaL_typename(L, 2)), luaL_typename(L, 2));
  if (dt == TFD_STRING) { /* one string per element; each set is checked as tfd_tensor_fill would be */
    size_t len;
    const char *bytes = lua_tolstring(L, 2, &len);
    tfd_status *st = tfdev_new_status(L);
    for (int64_t i = 0; i < tfd_tensor_numel(t); i++)
      if (tfd_tensor_set_string(t, i, bytes, len, st) != TFD_OK) return tfdev_raise_status(L, st);
    lua_settop(L, 1);
    return 1;
  }
  unsigned char element[8] = {0};
  write_element(L, t, dt, element, 0, NULL, 0); /* integer and range checks, and the conversion, as in a table */
  tfd_status *st = tfdev_new_status(L);
  if (tfd_tensor_fill(t, element, st) != TFD_OK) return tfdev_raise_status(L, st);
  lua_settop(L, 1);
  return 1;
}

/* __gc, __close and close(): the metatable is upvalue 1, since every result a script drops comes
 * through here and luaL_checkudata would look the metatable up by name (a string hash and compare). */
static int tensor_gc(lua_State *L) {
  if (!tfdev_is_tensor_mt(L, 1, lua_upvalueindex(1), NULL)) return luaL_typeerror(L, 1, TFDEV_TENSOR_MT);
  ltensor *u = lua_touserdata(L, 1);
  tfd_tensor_unref(u->t);
  u->t = NULL;
  return 0;
}

/* a == b: same dtype, shape and values. Floats compare as IEEE numbers (0 == -0, NaN is unequal to
 * everything, itself included), as Lua's own numbers do. Anything that is not an open tensor is
 * unequal to a tensor; Lua has already answered true for the same handle. */
static bool elements_equal(tfd_dtype dt, const void *a, const void *b, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    bool eq;
    switch (dt) {
      case TFD_FLOAT32: eq = ((const float *)a)[i] == ((const float *)b)[i]; break;
      case TFD_FLOAT64: eq = ((const double *)a)[i] == ((const double *)b)[i]; break;
      case TFD_COMPLEX64:
        eq = ((const float *)a)[2 * i] == ((const float *)b)[2 * i] &&
             ((const float *)a)[2 * i + 1] == ((const float *)b)[2 * i + 1];
        break;
      case TFD_FLOAT16:
        eq = tfd_half_to_float(((const uint16_t *)a)[i]) == tfd_half_to_float(((const uint16_t *)b)[i]);
        break;
      case TFD_INT32: eq = ((const int32_t *)a)[i] == ((const int32_t *)b)[i]; break;
      case TFD_INT64: eq = ((const int64_t *)a)[i] == ((const int64_t *)b)[i]; break;
      case TFD_UINT8: eq = ((const uint8_t *)a)[i] == ((const uint8_t *)b)[i]; break;
      case TFD_BOOL: eq = !((const unsigned char *)a)[i] == !((const unsigned char *)b)[i]; break;
      case TFD_RESOURCE: {
        const tfd_resource_handle *x = &((const tfd_resource_handle *)a)[i], *y = &((const tfd_resource_handle *)b)[i];
        eq = strcmp(x->container, y->container) == 0 && strcmp(x->name, y->name) == 0;
        break;
      }
      case TFD_VARIANT: eq = ((void *const *)a)[i] == ((void *const *)b)[i]; break; /* the same object */
      default: eq = false;
    }
    if (!eq) return false;
  }
  return true;
}

static int tensor_eq(lua_State *L) {
  ltensor *x = luaL_testudata(L, 1, TFDEV_TENSOR_MT), *y = luaL_testudata(L, 2, TFDEV_TENSOR_MT);
  bool eq = x && y && x->t && y->t && tfd_tensor_dtype(x->t) == tfd_tensor_dtype(y->t) &&
            tfd_tensor_ndims(x->t) == tfd_tensor_ndims(y->t);
  for (int i = 0; eq && i < tfd_tensor_ndims(x->t); i++) eq = tfd_tensor_dim(x->t, i) == tfd_tensor_dim(y->t, i);
  if (eq) {
    /* Reading a device address from the host would crash: refuse, as an error the caller can see. */
    if (!tfd_tensor_on_host(x->t) || !tfd_tensor_on_host(y->t))
      return tfdev_raise(L, TFD_FAILED_PRECONDITION, "cannot compare a tensor in device memory: copy it to the host first");
    if (tfd_tensor_dtype(x->t) == TFD_STRING) {
      for (int64_t i = 0; eq && i < tfd_tensor_numel(x->t); i++) {
        size_t la, lb;
        const char *a = tfd_tensor_string_at(x->t, i, &la), *b = tfd_tensor_string_at(y->t, i, &lb);
        eq = la == lb && memcmp(a, b, la) == 0;
      }
    } else {
      eq = elements_equal(tfd_tensor_dtype(x->t), tfd_tensor_const_data(x->t), tfd_tensor_const_data(y->t),
                          tfd_tensor_numel(x->t));
    }
  }
  lua_pushboolean(L, eq);
  return 1;
}

static int tensor_is(lua_State *L) {
  lua_pushboolean(L, luaL_testudata(L, 1, TFDEV_TENSOR_MT) != NULL);
  return 1;
}

int tfdev_open_tensor(lua_State *L) {
  static const luaL_Reg meta[] = {{"__index", tensor_index}, {"__len", tensor_len}, {"__tostring", tensor_tostring},
                                  {"__eq", tensor_eq},       {NULL, NULL}};
  static const luaL_Reg methods[] = {{"totable", tensor_totable}, {"numel", tensor_numel}, {"bytes", tensor_bytes},
                                     {"item", tensor_item},       {"copy_from", tensor_copy_from},
                                     {"fill", tensor_fill},       {NULL, NULL}};
  tfdev_new_class(L, TFDEV_TENSOR_MT, meta, methods);
  luaL_getmetatable(L, TFDEV_TENSOR_MT);
  lua_getfield(L, -1, "methods");
  lua_pushvalue(L, -2);
  lua_pushcclosure(L, tensor_gc, 1);
  lua_pushvalue(L, -1);
  lua_setfield(L, -3, "close");
  lua_pushvalue(L, -1);
  lua_setfield(L, -4, "__close");
  lua_setfield(L, -3, "__gc");
  lua_pop(L, 2);
  static const luaL_Reg fns[] = {{"new", tensor_new}, {"from_bytes", tensor_from_bytes}, {"is", tensor_is}, {NULL, NULL}};
  luaL_newlib(L, fns);
  return 1;
}
