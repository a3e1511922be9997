/* Unit tests for DeviceSet and DeviceMgr. */
#include <stdio.h>
#include <stdlib.h>

#include "runtime/testing/harness.h"

static tfd_device *cpu(const char *name) {
  tfd_cpu_device_config cfg = {.name = name, .num_threads = 1};
  tfd_device *made = NULL;
  tfd_cpu_device_new(&cfg, &made, NULL);
  return made;
}

static void test_device_set(void) {
  tfd_status *st = tfd_status_new();
  tfd_device *c0 = cpu("/job:a/replica:0/task:0/device:CPU:0");
  tfd_device *c1 = cpu("/job:a/replica:0/task:1/device:CPU:0");
  tfd_device *x = NULL;
  tfd_renamed_device_new(c0, "/job:b/replica:0/task:0", &x, st);
  tfd_device_set *s = tfd_device_set_new();
  CHECK_INT(tfd_device_set_add(s, c0, st), TFD_OK);
  CHECK_INT(tfd_device_set_add(s, c1, st), TFD_OK);
  CHECK_INT(tfd_device_set_add(s, x, st), TFD_OK);
  CHECK_INT(tfd_device_set_add(s, c1, st), TFD_ALREADY_EXISTS);
  CHECK_STATUS(st, TFD_ALREADY_EXISTS, "'/job:a/replica:0/task:1/device:CPU:0'");
  CHECK_INT(tfd_device_set_size(s), 3);
  CHECK(tfd_device_set_find_by_name(s, "/job:a/replica:0/task:1/device:CPU:0") == c1);
  CHECK(tfd_device_set_find_by_name(s, "/job:a/replica:0/task:1/cpu:0") == c1); /* legacy */
  CHECK(tfd_device_set_find_by_name(s, "/job:a/replica:0/task:9/cpu:0") == NULL);
  tfd_parsed_name spec;
  tfd_device *found[4];
  tfd_device_name_parse("/job:a", &spec, st);
  CHECK_INT(tfd_device_set_find_matching(s, &spec, found, 4), 2);
  CHECK(found[0] == c0 && found[1] == c1);
  tfd_device_name_parse("/device:CPU:0", &spec, st);
  CHECK_INT(tfd_device_set_find_matching(s, &spec, found, 1), 3); /* counts past cap */
  tfd_device_name_parse("/job:b/task:0", &spec, st);
  CHECK_INT(tfd_device_set_find_matching(s, &spec, found, 4), 1);
  CHECK(found[0] == x);
  CHECK(tfd_device_set_client_device(s) == NULL);
  CHECK_INT(tfd_device_set_set_client_device(s, c1, st), TFD_OK);
  CHECK(tfd_device_set_client_device(s) == c1);
  tfd_device *other = cpu("/job:z/replica:0/task:0/device:CPU:0");
  CHECK_INT(tfd_device_set_set_client_device(s, other, st), TFD_NOT_FOUND);
  CHECK_STATUS(st, TFD_NOT_FOUND, "not in the device set");
  tfd_device_unref(other);
  tfd_device_unref(c0);
  tfd_device_unref(c1);
  tfd_device_unref(x);
  tfd_device_set_free(s);
  tfd_status_free(st);
}

/* A factory type only for its priority; never called. */
static tfd_code never(void *self, void *host, const tfd_session_options *o, const char *p, tfd_device_list *out,
                      tfd_status *st) {
  (void)self, (void)host, (void)o, (void)p, (void)out;
  return tfd_status_setf(st, TFD_INTERNAL, "never called");
}
static const tfd_device_factory_ops never_ops = {"Never", never, NULL, NULL};

static void test_prioritized_types(void) {
  tfd_factory_registry *r = tfd_factory_registry_copy(tfd_factory_registry_default());
  tfd_device_factory *f = NULL;
  tfd_device_factory_new(&never_ops, NULL, &f, NULL);
  tfd_factory_registry_register(r, "GPU", f, 210, NULL);
  tfd_factory_registry_register(r, "XPU", f, 60, NULL); /* ties CPU: name decides */
  tfd_device_factory_unref(f);
  tfd_device_set *s = tfd_device_set_new();
  const char *made[][2] = {{"XPU", "0"}, {"CPU", "0"}, {"ABC", "0"}, {"GPU", "0"}, {"CPU", "1"}, {"GPU", "1"}};
  for (int i = 0; i < 6; i++) {
    char name[128];
    snprintf(name, sizeof name, "/job:a/replica:0/task:0/device:%s:%s", made[i][0], made[i][1]);
    tfd_cpu_device_config cfg = {.name = name, .device_type = made[i][0], .num_threads = 1};
    tfd_status *st = tfd_status_new();
    tfd_device *c = NULL;
    tfd_cpu_device_new(&cfg, &c, st);
    CHECK_STR(tfd_status_message(st), "");
    tfd_status_free(st);
    tfd_device_set_add(s, c, NULL);
    tfd_device_unref(c);
  }
  const char *types[8];
  /* GPU 210; CPU and XPU tie at 60 and sort by name; ABC has no factory (-1). */
  CHECK_INT(tfd_device_set_prioritized_types(s, r, types, 8), 4);
  CHECK_STR(types[0], "GPU");
  CHECK_STR(types[1], "CPU");
  CHECK_STR(types[2], "XPU");
  CHECK_STR(types[3], "ABC");
  CHECK_INT(tfd_device_set_prioritized_types(s, r, types, 1), 4);
  tfd_factory_registry_free(r);
  tfd_device_set_free(s);
}

static void test_device_mgr(void) {
  tfd_status *st = tfd_status_new();
  tfd_device *ds[3] = {cpu("/job:localhost/replica:0/task:0/device:CPU:0"),
                       cpu("/job:localhost/replica:0/task:0/device:CPU:1"), NULL};
  tfd_renamed_device_new(ds[0], "/job:other/replica:0/task:0", &ds[2], st);
  tfd_device_mgr *m = NULL;
  tfd_device_mgr_new(ds, 2, &m, st);
  CHECK(m != NULL);
  CHECK_INT(tfd_device_mgr_size(m), 2);
  CHECK(tfd_device_mgr_lookup(m, "/job:localhost/replica:0/task:0/device:CPU:1", st) == ds[1]);
  CHECK(tfd_device_mgr_lookup(m, "/job:localhost/replica:0/task:0/cpu:1", st) == ds[1]);
  CHECK(tfd_device_mgr_lookup(m, "/device:CPU:1", st) == ds[1]);
  CHECK(tfd_device_mgr_lookup(m, "CPU:0", st) == ds[0]);
  CHECK(tfd_device_mgr_lookup(m, "/device:GPU:0", st) == NULL);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "/device:GPU:0 unknown device (known devices: /job:localhost");
  CHECK_INT(tfd_device_mgr_num_device_type(m, "CPU"), 2);
  CHECK_INT(tfd_device_mgr_num_device_type(m, "GPU"), 0);
  char *map = tfd_device_mgr_mapping_string(m);
  CHECK_CONTAINS(map, "/job:localhost/replica:0/task:0/device:CPU:0 -> device: 0, name: ");
  CHECK_CONTAINS(map, "/job:localhost/replica:0/task:0/device:CPU:1 -> device: 1, name: ");
  free(map);
  /* Clear containers: default container when none named. */
  tfd_resource_mgr *rm = tfd_device_resource_manager(ds[0]);
  tfd_resource *r = NULL;
  tfd_resource_new("X", NULL, NULL, &r, st);
  tfd_resource_mgr_create(rm, NULL, "a", r, st);
  tfd_resource_mgr_create(rm, "c1", "a", r, st);
  tfd_resource_mgr_create(rm, "c2", "a", r, st);
  tfd_resource_unref(r);
  const char *c1[] = {"c1"};
  CHECK_INT(tfd_device_mgr_clear_containers(m, c1, 1, st), TFD_OK);
  CHECK_INT(tfd_resource_mgr_container_size(rm, "c1"), 0);
  CHECK_INT(tfd_resource_mgr_container_size(rm, "c2"), 1);
  CHECK_INT(tfd_resource_mgr_container_size(rm, NULL), 1);
  CHECK_INT(tfd_device_mgr_clear_containers(m, NULL, 0, st), TFD_OK);
  CHECK_INT(tfd_resource_mgr_container_size(rm, NULL), 0);
  CHECK_INT(tfd_resource_mgr_container_size(rm, "c2"), 1);
  tfd_device_mgr_free(m);
  /* Local names collide across tasks: two CPU:0 devices cannot share a manager. */
  tfd_device *dup[2] = {ds[0], ds[2]};
  CHECK(tfd_device_mgr_new(dup, 2, &(tfd_device_mgr *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "both answer to the name '/device:CPU:0'");
  for (int i = 0; i < 3; i++) tfd_device_unref(ds[i]);
  tfd_status_free(st);
}

static const tfd_test tests[] = {
    {"device set", test_device_set},
    {"prioritized device types", test_prioritized_types},
    {"device manager", test_device_mgr},
};
TFD_TEST_MAIN(tests)
