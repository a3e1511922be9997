/* Backend modules and visible_device_list: parsing with TensorFlow's messages; the loader finding,
 * refusing and recording modules; the CUDA module (when this build made it) registering its
 * factories and making no GPU device on a machine without one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/device/backend_module.h"
#include "runtime/device/visible_devices.h"
#include "runtime/testing/harness.h"

static void test_visible_devices(void) {
  tfd_status *st = tfd_status_new();
  int ids[8], n = -1;
  CHECK_INT(tfd_parse_visible_devices("", 3, ids, &n, st), TFD_OK);
  CHECK(n == 3 && ids[0] == 0 && ids[2] == 2);
  CHECK_INT(tfd_parse_visible_devices(NULL, 2, ids, &n, st), TFD_OK);
  CHECK_INT(n, 2);
  CHECK_INT(tfd_parse_visible_devices(" 2 , 0", 3, ids, &n, st), TFD_OK);
  CHECK(n == 2 && ids[0] == 2 && ids[1] == 0);
  CHECK_INT(tfd_parse_visible_devices("1,0,1", 3, ids, &n, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "visible_device_list contained a duplicate entry: 1,0,1 (device id '1')");
  CHECK_INT(tfd_parse_visible_devices("0,3", 3, ids, &n, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "'visible_device_list' listed an invalid Device id '3' but visible device count is 3");
  CHECK_INT(tfd_parse_visible_devices("-1", 3, ids, &n, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "invalid Device id '-1'");
  CHECK_INT(tfd_parse_visible_devices("0,gpu1", 3, ids, &n, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "Could not parse entry in 'visible_device_list': 'gpu1'. visible_device_list = 0,gpu1");
  CHECK_INT(tfd_parse_visible_devices("0,,1", 3, ids, &n, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "Could not parse entry in 'visible_device_list': ''");
  CHECK_INT(tfd_parse_visible_devices("99999999999999999999", 3, ids, &n, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "Could not parse entry");
  tfd_status_free(st);
}

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  if (f) {
    fputs(text, f);
    fclose(f);
  }
}

static void test_loader(void) {
  tfd_status *st = tfd_status_new();
  tfd_backend_info info;
  CHECK_INT(tfd_backend_load("../etc", &info, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "backend names are short lower-case words");
  CHECK_INT(tfd_backend_load("", NULL, st), TFD_INVALID_ARGUMENT);
  tfd_status_reset(st);
  size_t before = tfd_backend_count();
  CHECK_INT(tfd_backend_load("nosuch", &info, st), TFD_NOT_FOUND);
  CHECK_STATUS(st, TFD_NOT_FOUND, "backend nosuch: backend not built: no libtfdev_nosuch.so");
  CHECK(!info.loaded && info.num_devices == 0 && strcmp(info.path, "") == 0);
  CHECK_INT(tfd_backend_load("nosuch", &info, st), TFD_NOT_FOUND); /* once per process: the same record */
  tfd_status_reset(st);
  CHECK_INT((int)tfd_backend_count(), (int)before + 1);
  CHECK(tfd_backend_at(before, &info) && strcmp(info.name, "nosuch") == 0);
  CHECK(!tfd_backend_at(before + 1, &info));
  tfd_factory_registry *r = tfd_factory_registry_new();
  CHECK_INT(tfd_backend_register_factories("nosuch", r, st), TFD_FAILED_PRECONDITION);
  CHECK_STATUS(st, TFD_FAILED_PRECONDITION, "backend nosuch is not loaded: backend not built");
  /* TFDEV_BACKEND_PATH is searched first: a file that is no library, and a library that is no backend */
  char dir[] = "/tmp/tfdev-backend-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char path[256], old[512] = "";
  snprintf(path, sizeof path, "%s/libtfdev_text.so", dir);
  write_file(path, "not an ELF file\n");
  snprintf(path, sizeof path, "%s/libtfdev_libm.so", dir);
  CHECK(symlink("/lib/x86_64-linux-gnu/libm.so.6", path) == 0 || access("/lib/x86_64-linux-gnu/libm.so.6", F_OK) != 0);
  const char *prev = getenv("TFDEV_BACKEND_PATH");
  if (prev) snprintf(old, sizeof old, "%s", prev);
  setenv("TFDEV_BACKEND_PATH", dir, 1);
  CHECK_INT(tfd_backend_load("text", &info, st), TFD_NOT_FOUND);
  CHECK_STATUS(st, TFD_NOT_FOUND, "libtfdev_text.so did not load: ");
  if (access("/lib/x86_64-linux-gnu/libm.so.6", F_OK) == 0) {
    CHECK_INT(tfd_backend_load("libm", &info, st), TFD_NOT_FOUND);
    char want[64];
    snprintf(want, sizeof want, "libm.so.6 is not a tfdev libm backend of ABI %d", TFD_BACKEND_ABI);
    CHECK_STATUS(st, TFD_NOT_FOUND, want);
  }
  if (prev) setenv("TFDEV_BACKEND_PATH", old, 1);
  else unsetenv("TFDEV_BACKEND_PATH");
  snprintf(path, sizeof path, "rm -rf '%s'", dir);
  CHECK(system(path) == 0);
  tfd_factory_registry_free(r);
  tfd_status_free(st);
}

static void test_cuda_module(void) {
  tfd_status *st = tfd_status_new();
  tfd_backend_info info;
  tfd_code code = tfd_backend_load("cuda", &info, st);
  if (!tfd_gpu_built_with_cuda()) {
    printf("SKIP cuda module: this build has no CUDA toolkit\n");
    CHECK_STATUS(st, TFD_NOT_FOUND, "backend not built");
    tfd_status_free(st);
    return;
  }
  CHECK_INT(code, TFD_OK);
  CHECK(info.loaded);
  CHECK_CONTAINS(info.path, "libtfdev_cuda.so");
  char why[512];
  CHECK_INT(tfd_gpu_count(why, sizeof why), info.num_devices);
  if (info.num_devices == 0) {
    CHECK(strstr(info.why, "no NVIDIA driver") || strstr(info.why, "no CUDA device"));
    CHECK_STR(why, info.why);
  }
  tfd_factory_registry *r = tfd_factory_registry_new();
  CHECK_INT(tfd_backend_register_factories("cuda", r, st), TFD_OK);
  CHECK_INT(tfd_factory_registry_priority(r, "GPU"), 210);
  CHECK_STR(tfd_device_factory_name(tfd_factory_registry_get(r, "GPU")), "GPUDeviceFactory");
  CHECK_INT(tfd_factory_registry_priority(r, "CPU"), 70);
  CHECK_STR(tfd_device_factory_name(tfd_factory_registry_get(r, "CPU")), "GPUCompatibleCPUDeviceFactory");
  CHECK_INT(tfd_backend_register_factories("cuda", r, st), TFD_ALREADY_EXISTS);
  tfd_status_reset(st);
  /* the devices: CPU first, then one per GPU; the CPU device's memory works (pinned or pageable) */
  tfd_session_options *o = tfd_session_options_new();
  CHECK_INT(tfd_session_options_set_visible_devices(o, info.num_devices ? "" : "0,0,7", st), TFD_OK);
  tfd_device_list *l = tfd_device_list_new();
  CHECK_INT(tfd_factory_registry_add_devices(r, o, TFD_LOCAL_NAME_PREFIX, NULL, l, st), TFD_OK);
  CHECK_INT((int)tfd_device_list_size(l), 1 + info.num_devices);
  tfd_device *cpu = tfd_device_list_get(l, 0);
  CHECK_STR(tfd_device_type(cpu), "CPU");
  void *p = tfd_allocator_allocate(tfd_device_get_allocator(cpu), 64, 4096, st);
  CHECK(p != NULL);
  memset(p, 1, 4096);
  tfd_allocator_deallocate(tfd_device_get_allocator(cpu), p, 4096);
  for (size_t i = 1; i < tfd_device_list_size(l); i++) {
    tfd_device_attributes a;
    tfd_device_get_attributes(tfd_device_list_get(l, i), &a);
    CHECK_STR(a.device_type, "GPU");
    CHECK_CONTAINS(a.physical_device_desc, "compute capability: ");
    CHECK(a.memory_limit > 0 && a.bus_id >= 1 && a.incarnation != 0);
  }
  if (info.num_devices) { /* checked against the GPUs there are */
    tfd_device_list *bad = tfd_device_list_new();
    CHECK_INT(tfd_session_options_set_visible_devices(o, "0,0", st), TFD_OK);
    CHECK_INT(tfd_factory_registry_add_devices(r, o, TFD_LOCAL_NAME_PREFIX, NULL, bad, st), TFD_INVALID_ARGUMENT);
    CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "duplicate entry");
    tfd_device_list_free(bad);
  }
  tfd_device_list_free(l);
  tfd_session_options_free(o);
  tfd_factory_registry_free(r);
  tfd_status_free(st);
}

static const tfd_test tests[] = {
    {"visible devices", test_visible_devices},
    {"loader", test_loader},
    {"cuda module", test_cuda_module},
};

TFD_TEST_MAIN(tests)
