/* Unit tests for factories and registries: Register rules, GetFactory, AddDevices, NewDevice. */
#include <stdio.h>
#include <stdlib.h>

#include "runtime/testing/harness.h"

/* A fake factory making `count` devices of its type (CPU devices renamed to the type). */
typedef struct fake {
  const char *type;
  int calls;
  tfd_code fail;
} fake;

static tfd_code fake_create(void *self, void *host_ctx, const tfd_session_options *o, const char *prefix,
                            tfd_device_list *out, tfd_status *status) {
  fake *f = self;
  f->calls++;
  CHECK(host_ctx == (void *)0x1234 || host_ctx == NULL);
  if (f->fail) return tfd_status_setf(status, f->fail, "fake %s refuses", f->type);
  int n = tfd_session_options_device_count(o, f->type, 1);
  for (int i = 0; i < n; i++) {
    char name[256];
    snprintf(name, sizeof name, "%s/device:CPU:%d", prefix, 100 + i);
    tfd_cpu_device_config cfg = {.name = name, .num_threads = 1, .own_threadpool = true};
    tfd_device *d = NULL;
    tfd_cpu_device_new(&cfg, &d, status);
    if (!d) return tfd_status_code(status);
    tfd_device_list_push(out, d, status);
    tfd_device_unref(d);
  }
  return TFD_OK;
}
static const tfd_device_factory_ops fake_ops = {"FakeFactory", fake_create, NULL, NULL};

static void test_register_rules(void) {
  tfd_factory_registry *r = tfd_factory_registry_new();
  tfd_status *st = tfd_status_new();
  fake a = {"CPU", 0, 0}, b = {"CPU", 0, 0}, c = {"CPU", 0, 0};
  tfd_device_factory *fa = NULL;
  tfd_device_factory_new(&fake_ops, &a, &fa, st);
  tfd_device_factory *fb = NULL;
  tfd_device_factory_new(&fake_ops, &b, &fb, st);
  tfd_device_factory *fc = NULL;
  tfd_device_factory_new(&fake_ops, &c, &fc, st);
  CHECK_INT(tfd_factory_registry_priority(r, "CPU"), -1);
  CHECK(tfd_factory_registry_get(r, "CPU") == NULL);
  CHECK_INT(tfd_factory_registry_register(r, "CPU", fa, 125, st), TFD_OK);
  CHECK_INT(tfd_factory_registry_register(r, "CPU", fb, 150, st), TFD_OK); /* higher replaces */
  CHECK(tfd_factory_registry_get(r, "CPU") == fb);
  CHECK_INT(tfd_factory_registry_priority(r, "CPU"), 150);
  CHECK_INT(tfd_factory_registry_register(r, "CPU", fc, 100, st), TFD_OK); /* lower ignored */
  CHECK(tfd_factory_registry_get(r, "CPU") == fb);
  CHECK_INT(tfd_factory_registry_register(r, "CPU", fc, 150, st), TFD_ALREADY_EXISTS);
  CHECK_STATUS(st, TFD_ALREADY_EXISTS, "Duplicate registration of device factory for type CPU with the same priority 150");
  CHECK(tfd_factory_registry_get(r, "CPU") == fb);
  CHECK_INT(tfd_factory_registry_register(r, "bad type", fc, 1, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "invalid device type 'bad type'");
  CHECK_INT(tfd_factory_registry_register(r, "", fc, 1, st), TFD_INVALID_ARGUMENT);
  tfd_status_reset(st);
  CHECK_INT(tfd_factory_registry_register(r, "GPU", NULL, 1, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "no factory given for device type 'GPU'");
  tfd_factory_registry_register(r, "ZZZ", fa, 150, st);
  tfd_factory_registry_register(r, "AAA", fc, 150, st);
  tfd_factory_registry_register(r, "TPU", fc, 300, st);
  const char *order[] = {"TPU", "AAA", "CPU", "ZZZ"};
  CHECK_INT(tfd_factory_registry_size(r), 4);
  for (size_t i = 0; i < 4; i++) {
    const char *type;
    tfd_factory_registry_entry(r, i, &type, NULL, NULL);
    CHECK_STR(type, order[i]);
  }
  tfd_device_factory_unref(fa);
  tfd_device_factory_unref(fb);
  tfd_device_factory_unref(fc);
  tfd_factory_registry_free(r);
  tfd_status_free(st);
}

static void test_default_registry_and_copies(void) {
  const tfd_factory_registry *def = tfd_factory_registry_default();
  CHECK(def == tfd_factory_registry_default());
  CHECK_INT(tfd_factory_registry_priority(def, "CPU"), 60);
  CHECK_STR(tfd_device_factory_name(tfd_factory_registry_get(def, "CPU")), "ThreadPoolDeviceFactory");
  tfd_factory_registry *mine = tfd_factory_registry_copy(def);
  fake a = {"CPU", 0, 0};
  tfd_device_factory *fa = NULL;
  tfd_device_factory_new(&fake_ops, &a, &fa, NULL);
  CHECK_INT(tfd_factory_registry_register(mine, "CPU", fa, 150, NULL), TFD_OK);
  CHECK(tfd_factory_registry_get(mine, "CPU") == fa);
  CHECK_INT(tfd_factory_registry_priority(def, "CPU"), 60); /* the default is untouched */
  CHECK(tfd_device_factory_self(fa, &fake_ops) == &a);
  CHECK(tfd_device_factory_self(tfd_factory_registry_get(def, "CPU"), &fake_ops) == NULL);
  tfd_device_factory_unref(fa);
  tfd_factory_registry_free(mine);
}

static void test_add_devices_cpu_first(void) {
  tfd_factory_registry *r = tfd_factory_registry_copy(tfd_factory_registry_default());
  tfd_status *st = tfd_status_new();
  fake acc = {"ACC", 0, 0};
  tfd_device_factory *f = NULL;
  tfd_device_factory_new(&fake_ops, &acc, &f, st);
  tfd_factory_registry_register(r, "ACC", f, 300, st); /* higher than CPU, still after it */
  tfd_session_options *o = tfd_session_options_new();
  tfd_session_options_set_device_count(o, "CPU", 2, st);
  tfd_session_options_set_device_count(o, "ACC", 1, st);
  tfd_device_list *l = tfd_device_list_new();
  CHECK_INT(tfd_factory_registry_add_devices(r, o, TFD_LOCAL_NAME_PREFIX, (void *)0x1234, l, st), TFD_OK);
  CHECK_INT(tfd_device_list_size(l), 3);
  CHECK_STR(tfd_device_name(tfd_device_list_get(l, 0)), "/job:localhost/replica:0/task:0/device:CPU:0");
  CHECK_STR(tfd_device_name(tfd_device_list_get(l, 1)), "/job:localhost/replica:0/task:0/device:CPU:1");
  CHECK_STR(tfd_device_name(tfd_device_list_get(l, 2)), "/job:localhost/replica:0/task:0/device:CPU:100");
  CHECK_INT(acc.calls, 1);
  tfd_device_list_free(l);
  /* A failing factory leaves the output list untouched and names itself. */
  acc.fail = TFD_UNAVAILABLE;
  l = tfd_device_list_new();
  CHECK_INT(tfd_factory_registry_add_devices(r, o, TFD_LOCAL_NAME_PREFIX, NULL, l, st), TFD_UNAVAILABLE);
  CHECK_STATUS(st, TFD_UNAVAILABLE, "device factory 'FakeFactory' for type ACC: fake ACC refuses");
  CHECK_INT(tfd_device_list_size(l), 0);
  /* device_count.CPU = 0: no CPU device is an error. */
  tfd_session_options_set_device_count(o, "CPU", 0, st);
  CHECK_INT(tfd_factory_registry_add_devices(r, o, TFD_LOCAL_NAME_PREFIX, NULL, l, st), TFD_NOT_FOUND);
  CHECK_STATUS(st, TFD_NOT_FOUND, "No CPU devices are available");
  /* A malformed prefix is refused by the CPU device. */
  tfd_session_options_set_device_count(o, "CPU", 1, st);
  CHECK_INT(tfd_factory_registry_add_devices(r, o, "/job:a/bogus", NULL, l, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "for type CPU: could not parse device name '/job:a/bogus/device:CPU:0'");
  tfd_device_list_free(l);
  tfd_session_options_free(o);
  tfd_device_factory_unref(f);
  tfd_factory_registry_free(r);
  tfd_status_free(st);
}

static void test_add_devices_needs_cpu_factory(void) {
  tfd_factory_registry *r = tfd_factory_registry_new();
  tfd_status *st = tfd_status_new();
  fake g = {"GPU", 0, 0};
  tfd_device_factory *f = NULL;
  tfd_device_factory_new(&fake_ops, &g, &f, st);
  tfd_factory_registry_register(r, "GPU", f, 210, st);
  tfd_device_list *l = tfd_device_list_new();
  CHECK_INT(tfd_factory_registry_add_devices(r, NULL, TFD_LOCAL_NAME_PREFIX, NULL, l, st), TFD_NOT_FOUND);
  CHECK_STATUS(st, TFD_NOT_FOUND, "CPU Factory not registered");
  CHECK_INT(g.calls, 0);
  tfd_device_list_free(l);
  tfd_device_factory_unref(f);
  tfd_factory_registry_free(r);
  tfd_status_free(st);
}

static void test_new_device(void) {
  const tfd_factory_registry *def = tfd_factory_registry_default();
  tfd_status *st = tfd_status_new();
  tfd_session_options *o = tfd_session_options_new();
  tfd_session_options_set_device_count(o, "CPU", 4, st);
  tfd_device *d = NULL;
  tfd_factory_registry_new_device(def, "CPU", o, "/job:w/replica:0/task:2", NULL, &d, st);
  CHECK(d != NULL);
  CHECK_STR(tfd_device_name(d), "/job:w/replica:0/task:2/device:CPU:0");
  CHECK_INT(tfd_session_options_device_count(o, "CPU", 0), 4); /* caller's options untouched */
  tfd_device_unref(d);
  CHECK(tfd_factory_registry_new_device(def, "TPU", o, TFD_LOCAL_NAME_PREFIX, NULL, &(tfd_device *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_NOT_FOUND, "no device factory registered for device type 'TPU'");
  tfd_session_options_free(o);
  tfd_status_free(st);
}

static const tfd_test tests[] = {
    {"register rules", test_register_rules},
    {"default registry and copies", test_default_registry_and_copies},
    {"add devices: CPU first", test_add_devices_cpu_first},
    {"add devices needs a CPU factory", test_add_devices_needs_cpu_factory},
    {"new device", test_new_device},
};
TFD_TEST_MAIN(tests)
