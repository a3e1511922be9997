/* Unit tests for runtime/core: status, string map, options. */
#include <stdlib.h>

#include "runtime/core/strmap.h"
#include "runtime/testing/harness.h"

static void test_status_codes(void) {
  CHECK_INT(TFD_INVALID_ARGUMENT, 3);
  CHECK_INT(TFD_UNAVAILABLE, 14);
  CHECK_STR(tfd_code_name(TFD_RESOURCE_EXHAUSTED), "RESOURCE_EXHAUSTED");
  CHECK_STR(tfd_code_name((tfd_code)99), "UNKNOWN");
  CHECK_INT(tfd_code_from_name("DEADLINE_EXCEEDED"), TFD_DEADLINE_EXCEEDED);
  CHECK_INT(tfd_code_from_name("NOPE"), -1);
}

static void test_status_messages(void) {
  tfd_status *s = tfd_status_new();
  CHECK_INT(tfd_status_code(s), TFD_OK);
  CHECK_STR(tfd_status_message(s), "");
  CHECK_INT(tfd_status_setf(s, TFD_NOT_FOUND, "device '%s' not found", "GPU:3"), TFD_NOT_FOUND);
  CHECK_STR(tfd_status_message(s), "device 'GPU:3' not found");
  tfd_status_prefixf(s, "while %s: ", "placing");
  CHECK_STR(tfd_status_message(s), "while placing: device 'GPU:3' not found");
  tfd_status_reset(s);
  CHECK_INT(tfd_status_code(s), TFD_OK);
  tfd_status_prefixf(s, "ignored: ");
  CHECK_STR(tfd_status_message(s), "");
  CHECK_INT(tfd_status_setf(NULL, TFD_ABORTED, "no status"), TFD_ABORTED);
  tfd_status_free(s);
}

static void test_strmap(void) {
  tfd_strmap m = TFD_STRMAP_INIT;
  char key[32];
  for (intptr_t i = 0; i < 1000; i++) {
    snprintf(key, sizeof key, "k%d", (int)i);
    CHECK(tfd_strmap_put(&m, key, (void *)(i + 1)));
  }
  CHECK_INT(m.size, 1000);
  CHECK_INT((intptr_t)tfd_strmap_get(&m, "k500"), 501);
  CHECK(tfd_strmap_get(&m, "k1000") == NULL);
  CHECK_INT((intptr_t)tfd_strmap_remove(&m, "k500"), 501);
  CHECK(tfd_strmap_get(&m, "k500") == NULL);
  CHECK(tfd_strmap_put(&m, "k500", (void *)7));
  CHECK_INT((intptr_t)tfd_strmap_get(&m, "k500"), 7);
  size_t it = 0, n = 0;
  const char *k;
  void *v;
  while (tfd_strmap_next(&m, &it, &k, &v)) n++;
  CHECK_INT(n, 1000);
  tfd_strmap_free(&m);
}

static void test_options(void) {
  tfd_session_options *o = tfd_session_options_new();
  tfd_status *st = tfd_status_new();
  CHECK_INT(tfd_session_options_device_count(o, "CPU", 1), 1);
  CHECK_INT(tfd_session_options_set_device_count(o, "CPU", 3, st), TFD_OK);
  CHECK_INT(tfd_session_options_set_device_count(o, "CPU", 2, st), TFD_OK);
  CHECK_INT(tfd_session_options_device_count(o, "CPU", 1), 2);
  CHECK_INT(tfd_session_options_set_device_count(o, "GPU", -1, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "device_count.GPU must not be negative");
  CHECK(tfd_session_options_use_global_threadpool(o));
  tfd_session_options_set_intra_op_threads(o, 3);
  tfd_session_options *c = tfd_session_options_copy(o);
  tfd_session_options_set_device_count(o, "CPU", 5, NULL);
  CHECK_INT(tfd_session_options_device_count(c, "CPU", 1), 2);
  CHECK_INT(tfd_session_options_intra_op_threads(c), 3);
  CHECK_INT(tfd_session_options_num_device_counts(c), 1);
  tfd_session_options_free(c);
  tfd_session_options_free(o);
  tfd_status_free(st);
}

static const tfd_test tests[] = {
    {"status codes", test_status_codes},
    {"status messages", test_status_messages},
    {"string map", test_strmap},
    {"session options", test_options},
};
TFD_TEST_MAIN(tests)
