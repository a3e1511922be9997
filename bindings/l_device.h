/* Device handles (l_device.c), for the modules that take or give devices. */
#ifndef TFDEV_BINDINGS_L_DEVICE_H
#define TFDEV_BINDINGS_L_DEVICE_H

#include "l_common.h"

/* Devices. push takes a new reference (the caller keeps its own). */
void tfdev_push_device(lua_State *L, tfd_device *d);
tfd_device *tfdev_check_device(lua_State *L, int idx);
tfd_device *tfdev_test_device(lua_State *L, int idx);
/* Pushes an allocator's statistics as a table (name, num_allocs, bytes_in_use, ...). */
void tfdev_push_allocator_stats(lua_State *L, tfd_allocator *a);
/* Pushes device:attributes() of d. */
void tfdev_push_device_attributes(lua_State *L, tfd_device *d);
/* Pushes a list of devices. */
void tfdev_push_device_list(lua_State *L, const tfd_device_list *l);
/* Reads a Lua array of devices into a new list (freed by the caller). */
tfd_device_list *tfdev_check_device_array(lua_State *L, int idx, const char *what);
/* Pushes a manager's devices as a list of handles, or of attribute tables. */
void tfdev_push_mgr_devices(lua_State *L, const tfd_device_mgr *m, bool attributes);
/* Pushes a list of n devices. */
void tfdev_push_devices(lua_State *L, tfd_device *const *devices, size_t n);

#endif
