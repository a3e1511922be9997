/* The table of shapes a oneDNN kernel caches (dnnl_common.h): free entries first, then the least
 * recently used, and a failed make that leaves the table dense. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "runtime/kernels/dnnl_common.h"
#include "runtime/testing/harness.h"

typedef struct entry {
  int shape; /* stands for the key; 0 in an unused entry */
  uint64_t used;
} entry;

static int take(entry *t, int *num, int shape, uint64_t tick) {
  int i = tfd_dnnl_slot_for_new(t, sizeof *t, offsetof(entry, used), num);
  t[i].shape = shape;
  t[i].used = tick;
  return i;
}

static void test_free_entries_first_then_least_recent(void) {
  entry t[TFD_DNNL_CACHED_SHAPES];
  memset(t, 0, sizeof t);
  int num = 0;
  for (int s = 1; s <= TFD_DNNL_CACHED_SHAPES; s++) CHECK_INT(take(t, &num, s, (uint64_t)s), s - 1);
  CHECK_INT(num, TFD_DNNL_CACHED_SHAPES);
  t[0].used = 10; /* shape 1 ran again: shape 2 is now the oldest */
  int i = take(t, &num, 5, 11);
  CHECK_INT(i, 1);
  CHECK_INT(num, TFD_DNNL_CACHED_SHAPES);
  CHECK_INT(take(t, &num, 6, 12), 2); /* then shape 3 */
}

static void test_drop_keeps_the_table_dense(void) {
  entry t[TFD_DNNL_CACHED_SHAPES];
  memset(t, 0, sizeof t);
  int num = 0;
  for (int s = 1; s <= 3; s++) take(t, &num, s, (uint64_t)s);
  tfd_dnnl_slot_drop(t, sizeof *t, 0, &num); /* shape 1's make failed */
  CHECK_INT(num, 2);
  CHECK_INT(t[0].shape, 3);
  CHECK_INT(t[1].shape, 2);
  CHECK_INT(t[2].shape, 0);
  CHECK(t[2].used == 0);
  tfd_dnnl_slot_drop(t, sizeof *t, 1, &num); /* the last entry: nothing moves */
  CHECK_INT(num, 1);
  CHECK_INT(t[0].shape, 3);
  CHECK_INT(t[1].shape, 0);
  CHECK_INT(take(t, &num, 7, 9), 1); /* the next shape takes the freed entry */
}

static const tfd_test tests[] = {
    {"free entries first, then the least recently used", test_free_entries_first_then_least_recent},
    {"a failed make leaves the table dense", test_drop_keeps_the_table_dense},
};
TFD_TEST_MAIN(tests)
