/* visible_device_list parsing, with the checks and messages of TensorFlow's ParseVisibleDeviceList. */
#include "visible_devices.h"

#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../core/status_internal.h"

tfd_code tfd_parse_visible_devices(const char *list, int num_physical, int *ids, int *num_ids, tfd_status *st) {
  *num_ids = 0;
  if (!list || !*list) {
    for (int i = 0; i < num_physical; i++) ids[(*num_ids)++] = i;
    return TFD_OK;
  }
  const char *p = list;
  for (;;) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    char entry[32];
    size_t a = 0, b = len;
    while (a < b && isspace((unsigned char)p[a])) a++;
    while (b > a && isspace((unsigned char)p[b - 1])) b--;
    bool ok = b > a && b - a < sizeof entry;
    long id = -1;
    if (ok) {
      memcpy(entry, p + a, b - a);
      entry[b - a] = 0;
      char *stop;
      errno = 0;
      id = strtol(entry, &stop, 10);
      ok = *stop == 0 && errno == 0 && (isdigit((unsigned char)entry[0]) || entry[0] == '-');
    }
    if (!ok)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                             "Could not parse entry in 'visible_device_list': '%.*s'. visible_device_list = %s", (int)len, p,
                             list);
    if (id < 0 || id >= num_physical)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                             "'visible_device_list' listed an invalid Device id '%ld' but visible device count is %d", id,
                             num_physical);
    for (int i = 0; i < *num_ids; i++)
      if (ids[i] == id)
        return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                               "visible_device_list contained a duplicate entry: %s (device id '%ld')", list, id);
    ids[(*num_ids)++] = (int)id;
    if (!end) return TFD_OK;
    p = end + 1;
  }
}
