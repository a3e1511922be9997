/* GraphDefs as Lua tables: {node = {{name=, op=, input={...}, device=, attr={...}}, ...}} both ways.
 * Attribute values are typed by what the op declares: dtype names for types, tables for shapes,
 * tensors (or nested tables) for tensors. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "l_common.h"
#include "l_tensor.h"
#include "l_graph.h"
#include "l_modules.h"

typedef struct gd_box {
  tfd_graph_def *g;
} gd_box;

static int gd_box_gc(lua_State *L) {
  gd_box *b = lua_touserdata(L, 1);
  tfd_graph_def_free(b->g);
  b->g = NULL;
  return 0;
}

static tfd_dtype dtype_of(lua_State *L, int idx, const char *node, const char *attr) {
  const char *s = lua_tostring(L, idx);
  tfd_dtype dt = lua_type(L, idx) == LUA_TSTRING ? tfd_dtype_from_name(s) : 0;
  if (!dt)
    tfdev_raise(L, TFD_INVALID_ARGUMENT, "node '%s': attr '%s' must be a dtype name (float32, float64, int32, int64, bool), got %s",
                node, attr, luaL_tolstring(L, idx, NULL));
  return dt;
}

static void shape_of(lua_State *L, int idx, const char *node, const char *attr, tfd_shape *out) {
  if (!lua_istable(L, idx))
    tfdev_raise(L, TFD_INVALID_ARGUMENT, "node '%s': attr '%s' must be a shape table like {-1, 784}, got %s", node, attr,
                luaL_typename(L, idx));
  lua_Integer n = (lua_Integer)lua_rawlen(L, idx);
  if (n > TFD_MAX_DIMS) tfdev_raise(L, TFD_INVALID_ARGUMENT, "node '%s': attr '%s' has rank %d > %d", node, attr, (int)n, TFD_MAX_DIMS);
  out->ndims = (int)n;
  for (int i = 0; i < out->ndims; i++) {
    lua_rawgeti(L, idx, i + 1);
    int ok;
    lua_Integer d = lua_tointegerx(L, -1, &ok);
    if (!ok || d < -1)
      tfdev_raise(L, TFD_INVALID_ARGUMENT, "node '%s': attr '%s' dimension %d must be an integer >= -1", node, attr, i + 1);
    out->dims[i] = d;
    lua_pop(L, 1);
  }
}

/* A tensor attr: a tensor userdata, or a value tfdev.tensor accepts (typed by the node's dtype attr). */
static tfd_tensor *tensor_of(lua_State *L, int idx, int node_idx, const char *node, const char *attr) {
  if (luaL_testudata(L, idx, TFDEV_TENSOR_MT)) return tfdev_check_tensor(L, idx);
  int t = lua_type(L, idx);
  if (t != LUA_TTABLE && t != LUA_TNUMBER && t != LUA_TBOOLEAN)
    tfdev_raise(L, TFD_INVALID_ARGUMENT, "node '%s': attr '%s' must be a tensor, got %s", node, attr, luaL_typename(L, idx));
  tfd_dtype dt = 0;
  lua_getfield(L, node_idx, "attr");
  if (lua_istable(L, -1) && lua_getfield(L, -1, "dtype") == LUA_TSTRING) dt = tfd_dtype_from_name(lua_tostring(L, -1));
  lua_settop(L, idx);
  const char *what = lua_pushfstring(L, "node '%s': attr '%s'", node, attr);
  tfd_tensor *v = tfdev_to_tensor(L, idx, dt, what); /* the new tensor stays anchored where the value was */
  lua_pop(L, 1);
  return v;
}

/* Reads one attribute value (at the top of the stack) into v; strings and lists stay anchored on the stack. */
static void attr_of(lua_State *L, int node_idx, const char *node, const char *op, const char *name, tfd_attr_value *v) {
  int idx = lua_gettop(L);
  int declared = tfd_ops_attr_type(op, name);
  memset(v, 0, sizeof *v);
  int t = lua_type(L, idx);
  if (!declared) {
    /* Not declared by the op: infer from the Lua value. */
    if (t == LUA_TBOOLEAN) declared = TFD_ATTR_BOOL;
    else if (t == LUA_TNUMBER) declared = lua_isinteger(L, idx) ? TFD_ATTR_INT : TFD_ATTR_FLOAT;
    else if (t == LUA_TSTRING) declared = tfd_dtype_from_name(lua_tostring(L, idx)) ? TFD_ATTR_TYPE : TFD_ATTR_STRING;
    else if (luaL_testudata(L, idx, TFDEV_TENSOR_MT)) declared = TFD_ATTR_TENSOR;
    else if (t == LUA_TTABLE) {
      lua_rawgeti(L, idx, 1);
      int et = lua_type(L, -1);
      bool is_int = lua_isinteger(L, -1);
      bool is_type = et == LUA_TSTRING && tfd_dtype_from_name(lua_tostring(L, -1));
      lua_pop(L, 1);
      declared = et == LUA_TSTRING ? (is_type ? TFD_ATTR_LIST_TYPE : TFD_ATTR_LIST_STRING)
                 : et == LUA_TNUMBER && !is_int ? TFD_ATTR_LIST_FLOAT
                                                : TFD_ATTR_LIST_INT;
    } else {
      tfdev_raise(L, TFD_INVALID_ARGUMENT, "node '%s': attr '%s' has an unsupported %s value", node, name,
                  lua_typename(L, t));
    }
  }
  v->type = (tfd_attr_type)declared;
  int ok = 1;
  switch (v->type) {
    case TFD_ATTR_INT: v->i = lua_tointegerx(L, idx, &ok); break;
    case TFD_ATTR_FLOAT: v->f = lua_tonumberx(L, idx, &ok); break;
    case TFD_ATTR_BOOL: ok = t == LUA_TBOOLEAN; v->b = lua_toboolean(L, idx); break;
    case TFD_ATTR_STRING:
      ok = t == LUA_TSTRING;
      if (ok) v->s = tfdev_check_name(L, idx, lua_pushfstring(L, "node '%s': attr '%s'", node, name));
      break;
    case TFD_ATTR_TYPE: v->dtype = dtype_of(L, idx, node, name); break;
    case TFD_ATTR_SHAPE: shape_of(L, idx, node, name, &v->shape); break;
    case TFD_ATTR_TENSOR: v->tensor = tensor_of(L, idx, node_idx, node, name); break;
    default: {
      if (t != LUA_TTABLE) {
        ok = 0;
        break;
      }
      size_t n = lua_rawlen(L, idx);
      v->list_len = n;
      void *mem = lua_newuserdatauv(L, (n ? n : 1) * sizeof(int64_t), 0); /* anchored above the value */
      const char **strs = v->type == TFD_ATTR_LIST_STRING ? lua_newuserdatauv(L, (n ? n : 1) * sizeof(char *), 0) : NULL;
      for (size_t i = 0; i < n && ok; i++) {
        lua_rawgeti(L, idx, (lua_Integer)i + 1);
        if (v->type == TFD_ATTR_LIST_INT) ((int64_t *)mem)[i] = lua_tointegerx(L, -1, &ok);
        else if (v->type == TFD_ATTR_LIST_FLOAT) ((double *)mem)[i] = lua_tonumberx(L, -1, &ok);
        else if (v->type == TFD_ATTR_LIST_TYPE) ((tfd_dtype *)mem)[i] = dtype_of(L, -1, node, name);
        else if (lua_type(L, -1) != LUA_TSTRING) ok = 0;
        else strs[i] = tfdev_check_name(L, -1, name); /* anchored by the list table */
        lua_pop(L, 1);
      }
      v->list_i = mem;
      v->list_f = mem;
      v->list_type = mem;
      v->list_s = strs;
      break;
    }
  }
  if (!ok) {
    static const char *const names[] = {"", "integer", "number", "boolean", "string", "dtype name", "shape", "tensor",
                                        "list of integers", "list of numbers", "list of dtypes", "list of strings"};
    tfdev_raise(L, TFD_INVALID_ARGUMENT, "node '%s': attr '%s' must be a %s, got %s", node, name, names[v->type],
                luaL_tolstring(L, idx, NULL));
  }
}

/* Sets every attribute of the table at attrs (the node table at nd, whose attr.dtype types tensor values)
 * on def. */
static void set_attrs(lua_State *L, int nd, int attrs, const char *name, const char *op, tfd_node_def *def,
                      tfd_status *st) {
  if (!lua_istable(L, attrs)) tfdev_raise(L, TFD_INVALID_ARGUMENT, "node '%s': attr must be a table", name);
  lua_pushnil(L);
  while (lua_next(L, attrs)) {
    if (lua_type(L, -2) != LUA_TSTRING) tfdev_raise(L, TFD_INVALID_ARGUMENT, "node '%s': attr names must be strings", name);
    int keep = lua_gettop(L);
    int aname_at = lua_absindex(L, -2);
    const char *aname = tfdev_check_name(L, aname_at, lua_pushfstring(L, "node '%s': attr name", name));
    lua_pop(L, 1);
    tfd_attr_value v;
    attr_of(L, nd, name, op, aname, &v);
    if (tfd_node_def_set_attr(def, aname, &v, st) != TFD_OK) tfdev_raise_status(L, st);
    lua_settop(L, keep - 1);
  }
}

tfd_graph_def *tfdev_check_graph_def(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  if (lua_istable(L, idx) && lua_getfield(L, idx, "graph_def") == LUA_TFUNCTION) {
    lua_pushvalue(L, idx); /* a builder: ask it for its table */
    lua_call(L, 1, 1);
    lua_replace(L, idx);
  } else if (lua_istable(L, idx)) {
    lua_pop(L, 1);
  }
  if (!lua_istable(L, idx))
    tfdev_raise(L, TFD_INVALID_ARGUMENT, "a graph must be a GraphDef table {node = {...}} or a tfdev.graph(), got %s",
                luaL_typename(L, idx));
  tfdev_check_alive(L);
  gd_box *box = lua_newuserdatauv(L, sizeof *box, 0);
  box->g = NULL;
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, gd_box_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  tfdev_made(L);
  box->g = tfd_graph_def_new();
  if (!box->g) tfdev_raise_oom(L, "making a GraphDef");
  tfd_status *st = tfdev_new_status(L);
  if (lua_getfield(L, idx, "node") == LUA_TNIL) {
    lua_pop(L, 1);
    lua_newtable(L);
  }
  if (!lua_istable(L, -1)) tfdev_raise(L, TFD_INVALID_ARGUMENT, "GraphDef field 'node' must be a list of nodes");
  int nodes = lua_gettop(L);
  lua_Integer n = (lua_Integer)lua_rawlen(L, nodes);
  for (lua_Integer i = 1; i <= n; i++) {
    int top = lua_gettop(L);
    lua_rawgeti(L, nodes, i);
    int nd = lua_gettop(L);
    if (!lua_istable(L, nd)) tfdev_raise(L, TFD_INVALID_ARGUMENT, "node %d must be a table, got %s", (int)i, luaL_typename(L, nd));
    lua_getfield(L, nd, "name");
    lua_getfield(L, nd, "op");
    if (lua_type(L, -2) != LUA_TSTRING) tfdev_raise(L, TFD_INVALID_ARGUMENT, "node %d has no name", (int)i);
    int name_at = lua_absindex(L, -2);
    const char *name = tfdev_check_name(L, name_at, lua_pushfstring(L, "node %d: name", (int)i));
    lua_pop(L, 1);
    if (lua_type(L, -1) != LUA_TSTRING) tfdev_raise(L, TFD_INVALID_ARGUMENT, "node '%s' has no op", name);
    int op_at = lua_absindex(L, -1);
    const char *op = tfdev_check_name(L, op_at, lua_pushfstring(L, "node '%s': op", name));
    lua_pop(L, 1);
    tfd_node_def *def = tfd_graph_def_add_node(box->g, name, op, st);
    if (!def) tfdev_raise_status(L, st);
    if (lua_getfield(L, nd, "device") != LUA_TNIL) {
      if (lua_type(L, -1) != LUA_TSTRING) tfdev_raise(L, TFD_INVALID_ARGUMENT, "node '%s': device must be a string", name);
      int dev_at = lua_absindex(L, -1);
      const char *dev = tfdev_check_name(L, dev_at, lua_pushfstring(L, "node '%s': device", name));
      if (tfd_node_def_set_device(def, dev, st) != TFD_OK) tfdev_raise_status(L, st);
      lua_pop(L, 1);
    }
    if (lua_getfield(L, nd, "input") != LUA_TNIL) {
      if (!lua_istable(L, -1)) tfdev_raise(L, TFD_INVALID_ARGUMENT, "node '%s': input must be a list of strings", name);
      for (lua_Integer k = 1, m = (lua_Integer)lua_rawlen(L, -1); k <= m; k++) {
        lua_rawgeti(L, -1, k);
        if (lua_type(L, -1) != LUA_TSTRING)
          tfdev_raise(L, TFD_INVALID_ARGUMENT, "node '%s': input %d must be a string, got %s", name, (int)k,
                      luaL_typename(L, -1));
        int in_at = lua_absindex(L, -1);
        const char *in = tfdev_check_name(L, in_at, lua_pushfstring(L, "node '%s': input %d", name, (int)k));
        if (tfd_node_def_add_input(def, in, st) != TFD_OK) tfdev_raise_status(L, st);
        lua_pop(L, 1);
        lua_pop(L, 1);
      }
    }
    if (lua_getfield(L, nd, "attr") != LUA_TNIL) set_attrs(L, nd, lua_gettop(L), name, op, def, st);
    lua_settop(L, top);
  }
  lua_pop(L, 2); /* node list, status */
  return box->g; /* owned by the box at the top of the stack */
}

static void push_attr(lua_State *L, const tfd_attr_value *v) {
  switch (v->type) {
    case TFD_ATTR_INT: lua_pushinteger(L, v->i); break;
    case TFD_ATTR_FLOAT: lua_pushnumber(L, v->f); break;
    case TFD_ATTR_BOOL: lua_pushboolean(L, v->b); break;
    case TFD_ATTR_STRING: lua_pushstring(L, v->s); break;
    case TFD_ATTR_TYPE: lua_pushstring(L, tfd_dtype_name(v->dtype)); break;
    case TFD_ATTR_SHAPE:
      if (v->shape.ndims < 0) {
        lua_pushnil(L);
        break;
      }
      lua_createtable(L, v->shape.ndims, 0);
      for (int i = 0; i < v->shape.ndims; i++) {
        lua_pushinteger(L, v->shape.dims[i]);
        lua_rawseti(L, -2, i + 1);
      }
      break;
    case TFD_ATTR_TENSOR: tfdev_push_tensor(L, tfd_tensor_ref(v->tensor)); break;
    default:
      lua_createtable(L, (int)v->list_len, 0);
      for (size_t i = 0; i < v->list_len; i++) {
        if (v->type == TFD_ATTR_LIST_INT) lua_pushinteger(L, v->list_i[i]);
        else if (v->type == TFD_ATTR_LIST_FLOAT) lua_pushnumber(L, v->list_f[i]);
        else if (v->type == TFD_ATTR_LIST_TYPE) lua_pushstring(L, tfd_dtype_name(v->list_type[i]));
        else lua_pushstring(L, v->list_s[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
      }
  }
}

/* gd.signature = {inputs = {{key=, name=, dtype=, shape=}, ...}, outputs = {...}} when g has one. */
static void push_signature(lua_State *L, const tfd_graph_def *g) {
  if (!tfd_graph_def_signature_size(g, false) && !tfd_graph_def_signature_size(g, true)) return;
  lua_createtable(L, 0, 2);
  for (int o = 0; o < 2; o++) {
    size_t n = tfd_graph_def_signature_size(g, o);
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
      const tfd_signature_entry *e = tfd_graph_def_signature_entry(g, o, i);
      lua_createtable(L, 0, 4);
      tfdev_set_str(L, "key", e->key);
      tfdev_set_str(L, "name", e->tensor);
      if (e->dtype) tfdev_set_str(L, "dtype", tfd_dtype_name(e->dtype));
      tfd_attr_value shape = {.type = TFD_ATTR_SHAPE, .shape = e->shape};
      push_attr(L, &shape);
      lua_setfield(L, -2, "shape");
      lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, o ? "outputs" : "inputs");
  }
  lua_setfield(L, -2, "signature");
}

void tfdev_push_graph_def(lua_State *L, const tfd_graph_def *g) {
  size_t n = tfd_graph_def_num_nodes(g);
  lua_createtable(L, 0, 2);
  push_signature(L, g);
  lua_createtable(L, (int)n, 0);
  for (size_t i = 0; i < n; i++) {
    const tfd_node_def *nd = tfd_graph_def_node(g, i);
    lua_createtable(L, 0, 5);
    tfdev_set_str(L, "name", tfd_node_def_name(nd));
    tfdev_set_str(L, "op", tfd_node_def_op(nd));
    if (*tfd_node_def_device(nd)) tfdev_set_str(L, "device", tfd_node_def_device(nd));
    lua_createtable(L, (int)tfd_node_def_num_inputs(nd), 0);
    for (size_t k = 0; k < tfd_node_def_num_inputs(nd); k++) {
      lua_pushstring(L, tfd_node_def_input(nd, k));
      lua_rawseti(L, -2, (lua_Integer)k + 1);
    }
    lua_setfield(L, -2, "input");
    lua_newtable(L);
    for (size_t a = 0; a < tfd_node_def_num_attrs(nd); a++) {
      push_attr(L, tfd_node_def_attr_at(nd, a));
      lua_setfield(L, -2, tfd_node_def_attr_name(nd, a));
    }
    lua_setfield(L, -2, "attr");
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  lua_setfield(L, -2, "node");
}

/* ---- tfdev.graph_def: TensorFlow's binary GraphDef files ---- */
static void free_graph_def(void *g) { tfd_graph_def_free(g); }

/* The most outputs op_infer reports; more than any registered op has (FusedBatchNormV3: 6). */
#define OP_INFER_MAX_OUTPUTS 16

/* core.op_infer(op, attrs, input_dtypes, input_shapes [, input_values [, name]])
 *   -> output dtypes (a list of names), output shapes (a table: -1 for an unknown size, nil for an unknown rank),
 *      the number of outputs
 * What the C op registry says a node of op makes, so the graph builder shows the dtypes and shapes the
 * session will see. input_shapes[i] nil: unknown rank; input_values[i]: a constant input's tensor (Reshape's
 * shape, ConcatV2's axis, Fill's dims are read from it). name is the node's, for errors. Raises NOT_FOUND for
 * an op the registry lacks and INVALID_ARGUMENT for inputs the op refuses. */
int tfdev_op_infer(lua_State *L) {
  const char *op = tfdev_check_name(L, 1, "op");
  const char *name = lua_isnoneornil(L, 6) ? op : tfdev_check_name(L, 6, "name");
  if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TTABLE);
  if (!lua_isnoneornil(L, 3)) luaL_checktype(L, 3, LUA_TTABLE);
  if (!lua_isnoneornil(L, 4)) luaL_checktype(L, 4, LUA_TTABLE);
  if (!lua_isnoneornil(L, 5)) luaL_checktype(L, 5, LUA_TTABLE);
  lua_settop(L, 6);
  int n = lua_istable(L, 3) ? (int)lua_rawlen(L, 3) : 0;
  tfd_graph_def **slot = (tfd_graph_def **)tfdev_new_box(L, free_graph_def);
  tfd_status *st = tfdev_new_status(L);
  if (!(*slot = tfd_graph_def_new())) tfdev_raise_oom(L, "making a GraphDef");
  tfd_node_def *def = tfd_graph_def_add_node(*slot, name, op, st);
  if (!def) return tfdev_raise_status(L, st);
  if (lua_istable(L, 2)) {
    lua_createtable(L, 0, 1); /* a node table {attr = attrs}, which tensor attrs read their dtype from */
    lua_pushvalue(L, 2);
    lua_setfield(L, -2, "attr");
    set_attrs(L, lua_gettop(L), 2, name, op, def, st);
    lua_pop(L, 1);
  }
  tfd_dtype *types = lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof *types, 0);
  tfd_shape *shapes = lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof *shapes, 0);
  const tfd_tensor **values = lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof *values, 0);
  for (int i = 0; i < n; i++) {
    lua_rawgeti(L, 3, i + 1);
    const char *dt = lua_tostring(L, -1);
    types[i] = lua_type(L, -1) == LUA_TSTRING ? tfd_dtype_from_name(dt) : 0;
    if (!types[i])
      tfdev_raise(L, TFD_INVALID_ARGUMENT, "node '%s': input %d's dtype must be a dtype name, got %s", name, i,
                  luaL_tolstring(L, -1, NULL));
    lua_pop(L, 1);
    shapes[i].ndims = -1;
    if (lua_istable(L, 4) && lua_rawgeti(L, 4, i + 1) != LUA_TNIL) {
      if (!lua_istable(L, -1))
        tfdev_raise(L, TFD_INVALID_ARGUMENT, "node '%s': input %d's shape must be a table like {-1, 2} or nil, got %s",
                    name, i, luaL_typename(L, -1));
      lua_Integer rank = (lua_Integer)lua_rawlen(L, -1);
      if (rank > TFD_MAX_DIMS)
        tfdev_raise(L, TFD_INVALID_ARGUMENT, "node '%s': input %d has rank %d > %d", name, i, (int)rank, TFD_MAX_DIMS);
      shapes[i].ndims = (int)rank;
      for (int d = 0; d < shapes[i].ndims; d++) {
        int ok;
        lua_rawgeti(L, -1, d + 1);
        shapes[i].dims[d] = lua_tointegerx(L, -1, &ok);
        if (!ok || shapes[i].dims[d] < -1)
          tfdev_raise(L, TFD_INVALID_ARGUMENT, "node '%s': input %d's dimension %d must be an integer >= -1", name, i,
                      d + 1);
        lua_pop(L, 1);
      }
    }
    if (lua_istable(L, 4)) lua_pop(L, 1);
    values[i] = NULL;
    if (lua_istable(L, 5) && lua_rawgeti(L, 5, i + 1) != LUA_TNIL) {
      if (!luaL_testudata(L, -1, TFDEV_TENSOR_MT))
        tfdev_raise(L, TFD_INVALID_ARGUMENT, "node '%s': input %d's value must be a tensor or nil, got %s", name, i,
                    luaL_typename(L, -1));
      values[i] = tfdev_check_tensor(L, -1); /* kept alive by the input_values table */
    }
    if (lua_istable(L, 5)) lua_pop(L, 1);
  }
  int nout = 0;
  tfd_dtype out_types[OP_INFER_MAX_OUTPUTS];
  tfd_shape out_shapes[OP_INFER_MAX_OUTPUTS];
  lua_State *prev = tfdev_calling_push(L); /* a Lua op's shape function runs here */
  tfd_code inferred = tfd_ops_infer(def, n, types, shapes, values, OP_INFER_MAX_OUTPUTS, &nout, out_types, out_shapes, st);
  tfdev_calling_pop(prev);
  if (inferred != TFD_OK)
    return tfdev_raise_status(L, st);
  lua_createtable(L, nout, 0);
  lua_createtable(L, nout, 0);
  for (int o = 0; o < nout; o++) {
    /* An op that leaves an output's dtype unset has none to give: leave a hole rather than a made-up name. */
    if (out_types[o]) {
      lua_pushstring(L, tfd_dtype_name(out_types[o]));
      lua_rawseti(L, -3, o + 1);
    }
    tfd_attr_value shape = {.type = TFD_ATTR_SHAPE, .shape = out_shapes[o]};
    push_attr(L, &shape);
    lua_rawseti(L, -2, o + 1);
  }
  lua_pushinteger(L, nout);
  return 3;
}

/* Pushes the table of a graph def made by `make`, raising its error. */
static int push_made(lua_State *L, tfd_graph_def **slot, tfd_status *st) {
  if (!*slot) return tfdev_raise_status(L, st);
  tfdev_push_graph_def(L, *slot);
  return 1;
}

/* options.weights at stack index idx: a table {[file] = bytes} or a function(file) -> bytes. */
typedef struct lua_weights {
  lua_State *L;
  int idx;
} lua_weights;

/* One weight file read through options.weights, under lua_pcall: the loader that asks holds a
 * half-built model in C memory, so nothing may raise past the reader (a memory error, the callback's
 * error, its error's __tostring). */
typedef struct weight_read {
  const char *name;
  size_t *len;
  tfd_status *st;
  unsigned char *buf; /* the bytes, malloc'ed: the last thing made, so nothing raises after it */
} weight_read;

#define WEIGHTS_ERROR_MAX 2048

/* (weight_read, options.weights) */
static int weight_read_body(lua_State *L) {
  weight_read *r = lua_touserdata(L, 1);
  lua_pushstring(L, r->name);
  if (lua_type(L, 2) == LUA_TTABLE) {
    lua_rawget(L, 2);
  } else {
    lua_pushvalue(L, 2);
    lua_insert(L, -2);
    if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
      char msg[WEIGHTS_ERROR_MAX];
      tfd_code code = tfdev_error_text(L, -1, TFD_INVALID_ARGUMENT, msg, sizeof msg);
      tfd_status_setf(r->st, code, "weight file %s: options.weights raised: %s", r->name, msg);
      return 0;
    }
  }
  if (lua_type(L, -1) != LUA_TSTRING) {
    tfd_status_setf(r->st, TFD_NOT_FOUND, "weight file %s: options.weights gave %s, not its bytes", r->name,
                    luaL_typename(L, -1));
    return 0;
  }
  const char *bytes = lua_tolstring(L, -1, r->len);
  if ((r->buf = malloc(*r->len + 1))) memcpy(r->buf, bytes, *r->len);
  else tfd_status_setf(r->st, TFD_RESOURCE_EXHAUSTED, "weight file %s: out of memory", r->name);
  return 0;
}

/* Reads one weight file through options.weights. Never raises: the loader owns C memory. */
static unsigned char *lua_weight_reader(void *arg, const char *name, size_t *len, tfd_status *st) {
  lua_weights *w = arg;
  lua_State *L = w->L;
  if (!lua_checkstack(L, 4)) {
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "weight file %s: Lua stack overflow", name);
    return NULL;
  }
  int top = lua_gettop(L);
  weight_read r = {name, len, st, NULL};
  lua_pushcfunction(L, weight_read_body);
  lua_pushlightuserdata(L, &r);
  lua_pushvalue(L, w->idx);
  if (lua_pcall(L, 2, 0, 0) != LUA_OK) { /* the callback's errors are caught inside: memory ran out */
    char msg[WEIGHTS_ERROR_MAX];
    tfd_code code = tfdev_error_text(L, -1, TFD_RESOURCE_EXHAUSTED, msg, sizeof msg);
    tfd_status_setf(st, code, "weight file %s: reading it through options.weights failed: %s", name, msg);
    free(r.buf);
    r.buf = NULL;
  }
  lua_settop(L, top);
  return r.buf;
}

/* The options table at idx (or nil) into o; w holds what a Lua weights reader needs. */
static void check_model_options(lua_State *L, int idx, tfd_graph_def_options *o, lua_weights *w) {
  memset(o, 0, sizeof *o);
  if (lua_isnoneornil(L, idx)) return;
  luaL_checktype(L, idx, LUA_TTABLE);
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    const char *key = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "?";
    if (strcmp(key, "format") != 0 && strcmp(key, "weights") != 0 && strcmp(key, "weights_dir") != 0 &&
        strcmp(key, "keep_devices") != 0)
      tfdev_raise(L, TFD_INVALID_ARGUMENT, "unknown option '%s' (format, weights, weights_dir, keep_devices)", key);
    lua_pop(L, 1);
  }
  lua_getfield(L, idx, "format");
  if (!lua_isnil(L, -1)) o->format = tfdev_check_name(L, -1, "options.format");
  lua_pop(L, 1); /* the string stays alive in the options table */
  lua_getfield(L, idx, "weights_dir");
  if (!lua_isnil(L, -1)) o->weights_dir = tfdev_check_name(L, -1, "options.weights_dir");
  lua_pop(L, 1);
  lua_getfield(L, idx, "keep_devices");
  if (!lua_isnil(L, -1)) {
    if (!lua_isboolean(L, -1))
      tfdev_raise(L, TFD_INVALID_ARGUMENT, "options.keep_devices must be a boolean, got %s", luaL_typename(L, -1));
    o->keep_devices = lua_toboolean(L, -1);
  }
  lua_pop(L, 1);
  lua_getfield(L, idx, "weights");
  int t = lua_type(L, -1);
  if (t == LUA_TTABLE || t == LUA_TFUNCTION) {
    w->L = L;
    w->idx = lua_gettop(L); /* stays on the stack until the call returns */
    o->weights = lua_weight_reader;
    o->weights_arg = w;
  } else if (t != LUA_TNIL) {
    tfdev_raise(L, TFD_INVALID_ARGUMENT, "options.weights must be a table of file bytes or a function, got %s",
                lua_typename(L, t));
  }
}

/* tfdev.graph_def.parse(bytes [, options]) -> GraphDef table (either format). */
static int gd_parse(lua_State *L) {
  size_t len;
  const char *bytes = luaL_checklstring(L, 1, &len);
  tfd_graph_def_options o;
  lua_weights w;
  check_model_options(L, 2, &o, &w);
  tfd_status *st = tfdev_new_status(L);
  tfd_graph_def **slot = (tfd_graph_def **)tfdev_new_box(L, free_graph_def);
  tfd_graph_def_parse_with_options(bytes, len, &o, slot, st);
  return push_made(L, slot, st);
}

/* tfdev.graph_def.load(path [, options]) -> GraphDef table (the format told by the content). */
static int gd_load(lua_State *L) {
  const char *path = tfdev_check_name(L, 1, "path");
  tfd_graph_def_options o;
  lua_weights w;
  check_model_options(L, 2, &o, &w);
  tfd_status *st = tfdev_new_status(L);
  tfd_graph_def **slot = (tfd_graph_def **)tfdev_new_box(L, free_graph_def);
  tfd_graph_def_load_with_options(path, &o, slot, st);
  return push_made(L, slot, st);
}

/* The bytes of a binary GraphDef for the table or builder at idx, pushed as a string. */
static void push_serialized(lua_State *L, int idx) {
  tfd_graph_def *g = tfdev_check_graph_def(L, idx);
  tfd_status *st = tfdev_new_status(L);
  void **slot = tfdev_new_box(L, free);
  size_t size = 0;
  if (tfd_graph_def_serialize(g, slot, &size, st) != TFD_OK) tfdev_raise_status(L, st);
  lua_pushlstring(L, *slot, size);
}

/* tfdev.graph_def.serialize(graph_def) -> bytes. */
static int gd_serialize(lua_State *L) {
  push_serialized(L, 1);
  return 1;
}

/* tfdev.graph_def.save(graph_def, path): writes a binary GraphDef. */
static int gd_save(lua_State *L) {
  const char *path = tfdev_check_name(L, 2, "path");
  push_serialized(L, 1);
  size_t len;
  const char *bytes = lua_tolstring(L, -1, &len);
  FILE *f = fopen(path, "wb");
  if (!f) return tfdev_raise(L, TFD_PERMISSION_DENIED, "%s: %s", path, strerror(errno));
  bool ok = fwrite(bytes, 1, len, f) == len;
  ok = fclose(f) == 0 && ok;
  if (!ok) return tfdev_raise(L, TFD_DATA_LOSS, "%s: could not write %zu bytes", path, len);
  return 0;
}

int tfdev_open_graph_def(lua_State *L) {
  static const luaL_Reg fns[] = {
      {"parse", gd_parse}, {"load", gd_load}, {"serialize", gd_serialize}, {"save", gd_save}, {NULL, NULL}};
  luaL_newlib(L, fns);
  return 1;
}
