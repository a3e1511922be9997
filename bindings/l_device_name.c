/* tfdev.device_name: DeviceNameUtils for Lua. Names are strings or {job=, replica=, task=, type=, id=} tables. */
#include <string.h>

#include "l_common.h"
#include "l_modules.h"

/* The name argument at idx, or NULL (after pushing nil, err) when it holds a
 * NUL byte: C would read a shorter, different name. */
static const char *name_arg(lua_State *L, int idx) {
  size_t len;
  const char *s = luaL_checklstring(L, idx, &len);
  if (strlen(s) == len) return s;
  lua_pushnil(L);
  tfdev_push_error(L, TFD_INVALID_ARGUMENT, lua_pushfstring(L, "device name '%s' contains a NUL byte", s));
  lua_remove(L, -2);
  return NULL;
}

static int dn_parse(lua_State *L) {
  const char *s = name_arg(L, 1);
  if (!s) return 2;
  tfd_status *st = tfdev_new_status(L);
  tfd_parsed_name p;
  if (tfd_device_name_parse(s, &p, st) != TFD_OK) return tfdev_fail_status(L, st);
  tfdev_push_parsed_name(L, &p);
  return 1;
}

typedef tfd_code (*name_writer)(const tfd_parsed_name *, char *, tfd_status *);

static int write_name(lua_State *L, name_writer w) {
  tfd_parsed_name p;
  tfdev_check_parsed_name(L, 1, &p);
  tfd_status *st = tfdev_new_status(L);
  char out[TFD_DEVICE_NAME_MAX];
  if (w(&p, out, st) != TFD_OK) return tfdev_raise_status(L, st);
  lua_pushstring(L, out);
  return 1;
}

static int dn_full(lua_State *L) { return write_name(L, tfd_device_name_full); }
static int dn_legacy(lua_State *L) { return write_name(L, tfd_device_name_legacy); }
static int dn_local(lua_State *L) { return write_name(L, tfd_device_name_local); }

static int dn_canonical(lua_State *L) {
  tfd_parsed_name p;
  tfdev_check_parsed_name(L, 1, &p);
  char out[TFD_DEVICE_NAME_MAX];
  tfd_device_name_canonical(&p, out);
  lua_pushstring(L, out);
  return 1;
}

static int dn_canonicalize(lua_State *L) {
  const char *name = name_arg(L, 1);
  if (!name) return 2;
  const char *base = name_arg(L, 2);
  if (!base) return 2;
  tfd_status *st = tfdev_new_status(L);
  char out[TFD_DEVICE_NAME_MAX];
  if (tfd_device_name_canonicalize(name, base, out, st) != TFD_OK) return tfdev_fail_status(L, st);
  lua_pushstring(L, out);
  return 1;
}

static int dn_is_specification(lua_State *L) {
  tfd_parsed_name spec, name;
  tfdev_check_parsed_name(L, 1, &spec);
  tfdev_check_parsed_name(L, 2, &name);
  lua_pushboolean(L, tfd_device_name_is_specification(&spec, &name));
  return 1;
}

static int dn_is_complete_specification(lua_State *L) {
  lua_settop(L, 2);
  tfd_parsed_name pattern, name;
  tfdev_check_parsed_name(L, 1, &pattern);
  tfdev_check_parsed_name(L, 2, &name);
  tfd_status *st = tfdev_new_status(L);
  bool matches = false;
  if (tfd_device_name_is_complete_specification(&pattern, &name, &matches, st) != TFD_OK)
    return tfdev_fail_status(L, st);
  lua_pushboolean(L, matches);
  return 1;
}

static int dn_is_complete(lua_State *L) {
  tfd_parsed_name p;
  tfdev_check_parsed_name(L, 1, &p);
  lua_pushboolean(L, tfd_device_name_is_complete(&p));
  return 1;
}

static int dn_is_same_address_space(lua_State *L) {
  tfd_parsed_name a, b;
  tfdev_check_parsed_name(L, 1, &a);
  tfdev_check_parsed_name(L, 2, &b);
  lua_pushboolean(L, tfd_device_name_is_same_address_space(&a, &b));
  return 1;
}

static int dn_merge(lua_State *L) {
  lua_settop(L, 3); /* helpers push below: fix the argument slots first */
  tfd_parsed_name a, b;
  tfdev_check_parsed_name(L, 1, &a);
  tfdev_check_parsed_name(L, 2, &b);
  tfd_status *st = tfdev_new_status(L);
  if (tfd_device_name_merge(&a, &b, lua_toboolean(L, 3), st) != TFD_OK) return tfdev_fail_status(L, st);
  tfdev_push_parsed_name(L, &a);
  return 1;
}

static int dn_split(lua_State *L) {
  const char *name = name_arg(L, 1);
  if (!name) return 2;
  tfd_status *st = tfdev_new_status(L);
  char task[TFD_DEVICE_NAME_MAX], dev[TFD_DEVICE_NAME_MAX];
  if (tfd_device_name_split(name, task, dev, st) != TFD_OK) return tfdev_fail_status(L, st);
  lua_pushstring(L, task);
  lua_pushstring(L, dev);
  return 2;
}

int tfdev_open_device_name(lua_State *L) {
  static const luaL_Reg fns[] = {{"parse", dn_parse},
                                 {"full_name", dn_full},
                                 {"legacy_name", dn_legacy},
                                 {"local_name", dn_local},
                                 {"canonical_name", dn_canonical},
                                 {"canonicalize", dn_canonicalize},
                                 {"is_specification", dn_is_specification},
                                 {"is_complete", dn_is_complete},
                                 {"is_complete_specification", dn_is_complete_specification},
                                 {"is_same_address_space", dn_is_same_address_space},
                                 {"merge", dn_merge},
                                 {"split", dn_split},
                                 {NULL, NULL}};
  luaL_newlib(L, fns);
  return 1;
}
