/* Unit tests for device names: TensorFlow's DeviceNameUtils cases. */
#include "runtime/testing/harness.h"

static tfd_parsed_name parse_ok(const char *s) {
  tfd_parsed_name p;
  tfd_status *st = tfd_status_new();
  CHECK_INT(tfd_device_name_parse(s, &p, st), TFD_OK);
  tfd_status_free(st);
  return p;
}

static void test_parse_full_and_legacy(void) {
  tfd_parsed_name p = parse_ok("/job:a/replica:0/task:1/device:GPU:2");
  CHECK(p.has_job && p.has_replica && p.has_task && p.has_type && p.has_id);
  CHECK_STR(p.job, "a");
  CHECK_INT(p.replica, 0);
  CHECK_INT(p.task, 1);
  CHECK_STR(p.type, "GPU");
  CHECK_INT(p.id, 2);
  tfd_parsed_name l = parse_ok("/job:a/replica:0/task:1/gpu:2");
  CHECK_STR(l.type, "GPU");
  CHECK_INT(l.id, 2);
  CHECK(tfd_device_name_is_specification(&p, &l) && tfd_device_name_is_specification(&l, &p));
  tfd_parsed_name c = parse_ok("/cpu:0");
  CHECK(!c.has_job && c.has_type && c.has_id);
  CHECK_STR(c.type, "CPU");
  tfd_parsed_name lower = parse_ok("/device:cpu:3");
  CHECK_STR(lower.type, "cpu");
  tfd_parsed_name w = parse_ok("/job:w");
  CHECK(w.has_job && !w.has_replica && !w.has_type);
}

static void test_parse_wildcards(void) {
  tfd_parsed_name p = parse_ok("/device:CPU:*");
  CHECK(p.has_type && !p.has_id);
  p = parse_ok("/job:*/replica:*/task:*/device:*");
  CHECK(!p.has_job && !p.has_replica && !p.has_task && !p.has_type && !p.has_id);
  p = parse_ok("/device:GPU");
  CHECK(p.has_type && !p.has_id);
  p = parse_ok("/");
  CHECK(!p.has_job && !p.has_type);
  p = parse_ok("");
  CHECK(!p.has_job && !p.has_type);
  p = parse_ok("/gpu:*");
  CHECK(p.has_type && !p.has_id);
}

static void test_parse_errors(void) {
  const char *bad[] = {"/job:123",      "/job:a/replica:x",     "job:a",       "/job:a/",
                       "/device:GPU:x", "/job:a/replica:0/foo", "/task:-1",    "/job:a-b",
                       "/replica:99999999999", "/device:1GPU:0", "CPU:0"};
  tfd_status *st = tfd_status_new();
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    tfd_parsed_name p;
    CHECK_INT(tfd_device_name_parse(bad[i], &p, st), TFD_INVALID_ARGUMENT);
    CHECK_CONTAINS(tfd_status_message(st), bad[i]);
    tfd_status_reset(st);
  }
  tfd_parsed_name p;
  tfd_device_name_parse("/job:a/replica:x", &p, st);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "position 15: expected a number");
  tfd_status_free(st);
}

static void test_names(void) {
  tfd_parsed_name p = parse_ok("/job:worker/replica:1/task:3/gpu:2");
  char out[TFD_DEVICE_NAME_MAX];
  tfd_status *st = tfd_status_new();
  tfd_device_name_full(&p, out, st);
  CHECK_STR(out, "/job:worker/replica:1/task:3/device:GPU:2");
  tfd_device_name_legacy(&p, out, st);
  CHECK_STR(out, "/job:worker/replica:1/task:3/gpu:2");
  tfd_device_name_local(&p, out, st);
  CHECK_STR(out, "/device:GPU:2");
  tfd_device_name_legacy_local(&p, out, st);
  CHECK_STR(out, "GPU:2");
  tfd_device_name_canonical(&p, out);
  CHECK_STR(out, "/job:worker/replica:1/task:3/device:GPU:2");
  tfd_parsed_name partial = parse_ok("/job:w/device:CPU:*");
  tfd_device_name_canonical(&partial, out);
  CHECK_STR(out, "/job:w/device:CPU:*");
  CHECK_INT(tfd_device_name_full(&partial, out, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "not complete");
  tfd_parsed_name local;
  CHECK(tfd_device_name_parse_local("CPU:0", &local));
  CHECK(!tfd_device_name_parse_local("/device:CPU:0", &local));
  CHECK(!tfd_device_name_parse_local("CPU:0x", &local));
  tfd_status_free(st);
}

static void test_canonicalize(void) {
  char out[TFD_DEVICE_NAME_MAX];
  tfd_status *st = tfd_status_new();
  const char *base = "/job:foo/replica:10/task:0/device:CPU:1";
  CHECK_INT(tfd_device_name_canonicalize("/job:foo/replica:10/task:0/device:CPU:1", base, out, st), TFD_OK);
  CHECK_STR(out, "/job:foo/replica:10/task:0/device:CPU:1");
  tfd_device_name_canonicalize("CPU:0", base, out, st);
  CHECK_STR(out, "/job:foo/replica:10/task:0/device:CPU:0");
  tfd_device_name_canonicalize("/device:GPU:2", base, out, st);
  CHECK_STR(out, "/job:foo/replica:10/task:0/device:GPU:2");
  CHECK_INT(tfd_device_name_canonicalize("CPU:0", "/job:foo", out, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "should be fully specified");
  CHECK_INT(tfd_device_name_canonicalize("#!", base, out, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "could not parse '#!'");
  tfd_status_free(st);
}

static void test_matching(void) {
  tfd_parsed_name full = parse_ok("/job:work/replica:1/task:3/device:GPU:2");
  const char *yes[] = {"/job:work", "/job:work/replica:1", "/device:GPU:2", "/gpu:*", "/job:*/device:GPU:*", ""};
  const char *no[] = {"/job:other", "/replica:0", "/device:CPU:2", "/gpu:1", "/task:4"};
  for (size_t i = 0; i < 6; i++) {
    tfd_parsed_name s = parse_ok(yes[i]);
    CHECK(tfd_device_name_is_specification(&s, &full));
  }
  for (size_t i = 0; i < 5; i++) {
    tfd_parsed_name s = parse_ok(no[i]);
    CHECK(!tfd_device_name_is_specification(&s, &full));
  }
  tfd_parsed_name spec = parse_ok("/job:work/device:GPU:*");
  CHECK(!tfd_device_name_is_specification(&full, &spec)); /* more specific never matches less */
  CHECK(tfd_device_name_is_complete(&full));
  CHECK(!tfd_device_name_is_complete(&spec));

  /* DeviceNameUtilsTest's IsCompleteSpecification: patterns against a complete name only. */
  bool m = false;
  tfd_status *st = tfd_status_new();
  tfd_parsed_name pat = parse_ok("/job:work/task:3");
  CHECK(tfd_device_name_is_complete_specification(&pat, &full, &m, st) == TFD_OK && m);
  pat = parse_ok("/task:2");
  CHECK(tfd_device_name_is_complete_specification(&pat, &full, &m, st) == TFD_OK && !m);
  m = true;
  CHECK(tfd_device_name_is_complete_specification(&pat, &spec, &m, st) == TFD_INVALID_ARGUMENT && m);
  CHECK(strstr(tfd_status_message(st), "'/job:work/device:GPU:*' is not complete"));
  tfd_status_free(st);
}

static void test_same_address_space(void) {
  tfd_parsed_name a = parse_ok("/job:w/replica:0/task:1/device:CPU:0");
  tfd_parsed_name b = parse_ok("/job:w/replica:0/task:1/device:GPU:3");
  tfd_parsed_name c = parse_ok("/job:w/replica:0/task:2/device:CPU:0");
  tfd_parsed_name d = parse_ok("/job:w/device:CPU:0");
  CHECK(tfd_device_name_is_same_address_space(&a, &b));
  CHECK(!tfd_device_name_is_same_address_space(&a, &c));
  CHECK(!tfd_device_name_is_same_address_space(&a, &d));
}

static void check_merge(const char *a, const char *b, bool soft, const char *want) {
  tfd_parsed_name t = parse_ok(a), o = parse_ok(b);
  tfd_status *st = tfd_status_new();
  CHECK_INT(tfd_device_name_merge(&t, &o, soft, st), TFD_OK);
  char out[TFD_DEVICE_NAME_MAX];
  tfd_device_name_canonical(&t, out);
  CHECK_STR(out, want);
  tfd_status_free(st);
}

static void check_merge_fails(const char *a, const char *b, bool soft, const char *fragment) {
  tfd_parsed_name t = parse_ok(a), o = parse_ok(b), before = t;
  tfd_status *st = tfd_status_new();
  CHECK_INT(tfd_device_name_merge(&t, &o, soft, st), TFD_INVALID_ARGUMENT);
  CHECK_CONTAINS(tfd_status_message(st), fragment);
  CHECK(memcmp(&t, &before, sizeof t) == 0);
  tfd_status_free(st);
}

static void test_merge(void) {
  check_merge("", "/job:foo", false, "/job:foo");
  check_merge("/job:foo", "/job:foo/replica:1", false, "/job:foo/replica:1");
  check_merge("/job:foo/replica:1", "/task:2/device:GPU:0", false, "/job:foo/replica:1/task:2/device:GPU:0");
  check_merge("/device:GPU:*", "/device:GPU:1", false, "/device:GPU:1");
  check_merge("/job:a/device:GPU:0", "/job:a/device:CPU:0", true, "/job:a");
  check_merge("/job:a/device:GPU:0", "/device:GPU:1", true, "/job:a/device:GPU:*");
  check_merge_fails("/job:foo", "/job:bar", true, "incompatible jobs: '/job:foo' and '/job:bar'");
  check_merge_fails("/replica:1", "/replica:2", false, "incompatible replicas");
  check_merge_fails("/task:1", "/task:2", true, "incompatible tasks");
  check_merge_fails("/device:GPU:0", "/device:CPU:0", false, "incompatible types");
  check_merge_fails("/device:GPU:0", "/device:GPU:1", false, "incompatible ids");
}

static void test_split(void) {
  char task[TFD_DEVICE_NAME_MAX], dev[TFD_DEVICE_NAME_MAX];
  tfd_status *st = tfd_status_new();
  CHECK_INT(tfd_device_name_split("/job:a/replica:0/task:1/device:GPU:2", task, dev, st), TFD_OK);
  CHECK_STR(task, "/job:a/replica:0/task:1");
  CHECK_STR(dev, "GPU:2");
  CHECK_INT(tfd_device_name_split("/cpu:0", task, dev, st), TFD_OK);
  CHECK_STR(task, "");
  CHECK_STR(dev, "CPU:0");
  CHECK_INT(tfd_device_name_split("/job:a/device:GPU:*", task, dev, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "no device type and id");
  tfd_status_free(st);
}

static const tfd_test tests[] = {
    {"parse full and legacy", test_parse_full_and_legacy},
    {"parse wildcards", test_parse_wildcards},
    {"parse errors", test_parse_errors},
    {"full, legacy, local, canonical names", test_names},
    {"canonicalize", test_canonicalize},
    {"matching", test_matching},
    {"same address space", test_same_address_space},
    {"merge", test_merge},
    {"split", test_split},
};
TFD_TEST_MAIN(tests)
