/* DeviceMgr: a fixed set of devices with lookup by every name they answer to and per-type counts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/api_args.h"
#include "../core/status_internal.h"
#include "../core/strmap.h"
#include "tfdev/device_mgr.h"

struct tfd_device_mgr {
  tfd_device **devices; /* one reference each */
  size_t size;
  tfd_strmap by_name;     /* full, legacy, local and legacy local names -> device */
  tfd_strmap type_counts; /* type -> (void*)(intptr_t)count */
};

void tfd_device_mgr_free(tfd_device_mgr *m) {
  if (!m) return;
  for (size_t i = 0; i < m->size; i++) tfd_device_unref(m->devices[i]);
  free(m->devices);
  tfd_strmap_free(&m->by_name);
  tfd_strmap_free(&m->type_counts);
  free(m);
}

/* Registers one name; a name already held by another device is an error. */
static tfd_code map_name(tfd_device_mgr *m, const char *name, tfd_device *d, tfd_status *status) {
  tfd_device *other = tfd_strmap_get(&m->by_name, name);
  if (other && other != d)
    return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "devices '%s' and '%s' both answer to the name '%s'",
                           tfd_device_name(other), tfd_device_name(d), name);
  if (!tfd_strmap_put(&m->by_name, name, d))
    return tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory building the device manager");
  return TFD_OK;
}

static tfd_device_mgr *make_device_mgr(tfd_device *const *devices, size_t n, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_items(status, "tfd_device_mgr_new", "devices", TFD_ARG_ITEMS(devices), "n", (int64_t)n)) return NULL;
  tfd_device_mgr *m = calloc(1, sizeof *m);
  if (!m || !(m->devices = calloc(n ? n : 1, sizeof *m->devices))) {
    free(m);
    tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory building the device manager");
    return NULL;
  }
  for (size_t i = 0; i < n; i++) {
    tfd_device *d = devices[i];
    m->devices[m->size++] = tfd_device_ref(d);
    const tfd_parsed_name *p = tfd_device_parsed_name(d);
    char names[4][TFD_DEVICE_NAME_MAX];
    tfd_device_name_full(p, names[0], NULL);
    tfd_device_name_legacy(p, names[1], NULL);
    tfd_device_name_local(p, names[2], NULL);
    tfd_device_name_legacy_local(p, names[3], NULL);
    for (int k = 0; k < 4; k++) {
      if (map_name(m, names[k], d, status) != TFD_OK) {
        tfd_device_mgr_free(m);
        return NULL;
      }
    }
    const char *type = tfd_device_type(d);
    intptr_t count = (intptr_t)tfd_strmap_get(&m->type_counts, type);
    if (!tfd_strmap_put(&m->type_counts, type, (void *)(count + 1))) {
      tfd_device_mgr_free(m);
      tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory building the device manager");
      return NULL;
    }
  }
  return m;
}

tfd_code tfd_device_mgr_new(tfd_device *const *devices, size_t n, tfd_device_mgr **out, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_device_mgr_new", "out", out)) return TFD_INVALID_ARGUMENT;
  tfd_status local = TFD_STATUS_INIT;
  *out = make_device_mgr(devices, n, &local);
  return tfd_status_move(status, &local);
}

size_t tfd_device_mgr_size(const tfd_device_mgr *m) { return m->size; }
tfd_device *tfd_device_mgr_get(const tfd_device_mgr *m, size_t i) { return i < m->size ? m->devices[i] : NULL; }

tfd_device *tfd_device_mgr_lookup(const tfd_device_mgr *m, const char *name, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_device_mgr_lookup", "m", m) || tfd_arg_required(status, "tfd_device_mgr_lookup", "name", name))
    return NULL;
  tfd_device *d = tfd_strmap_get(&m->by_name, name);
  if (d) return d;
  /* Name the devices there are, so the caller sees what was meant. */
  size_t cap = 64;
  for (size_t i = 0; i < m->size; i++) cap += strlen(tfd_device_name(m->devices[i])) + 2;
  char *known = malloc(cap);
  if (known) {
    known[0] = 0;
    for (size_t i = 0; i < m->size; i++) {
      if (i) strcat(known, ", ");
      strcat(known, tfd_device_name(m->devices[i]));
    }
  }
  tfd_status_setf(status, TFD_INVALID_ARGUMENT, "%s unknown device (known devices: %s)", name ? name : "(null)",
                  known && *known ? known : "none");
  free(known);
  return NULL;
}

int tfd_device_mgr_num_device_type(const tfd_device_mgr *m, const char *type) {
  return type ? (int)(intptr_t)tfd_strmap_get(&m->type_counts, type) : 0;
}

char *tfd_device_mgr_mapping_string(const tfd_device_mgr *m) {
  size_t cap = 1;
  tfd_device_attributes a;
  for (size_t i = 0; i < m->size; i++) {
    tfd_device_get_attributes(m->devices[i], &a);
    if (*a.physical_device_desc) cap += strlen(a.name) + strlen(a.physical_device_desc) + 5;
  }
  char *out = malloc(cap);
  if (!out) return NULL;
  size_t n = 0;
  out[0] = 0;
  for (size_t i = 0; i < m->size; i++) {
    tfd_device_get_attributes(m->devices[i], &a);
    if (*a.physical_device_desc) n += (size_t)snprintf(out + n, cap - n, "%s -> %s\n", a.name, a.physical_device_desc);
  }
  return out;
}

tfd_code tfd_device_mgr_clear_containers(tfd_device_mgr *m, const char *const *containers, size_t n,
                                         tfd_status *status) {
  tfd_status_reset(status);
  static const char fn[] = "tfd_device_mgr_clear_containers";
  if (tfd_arg_required(status, fn, "m", m) ||
      tfd_arg_items(status, fn, "containers", TFD_ARG_ITEMS(containers), "n", (int64_t)n))
    return TFD_INVALID_ARGUMENT;
  for (size_t i = 0; i < m->size; i++) {
    tfd_resource_mgr *rm = tfd_device_resource_manager(m->devices[i]);
    if (n == 0) {
      if (tfd_resource_mgr_cleanup(rm, NULL, status) != TFD_OK) return tfd_status_code(status);
    }
    for (size_t c = 0; c < n; c++)
      if (tfd_resource_mgr_cleanup(rm, containers[c], status) != TFD_OK) return tfd_status_code(status);
  }
  return TFD_OK;
}
