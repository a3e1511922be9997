/* Fuzzes include/tfdev/device_name.h. The input up to its first NUL byte
 * (or all of it) is a device name; the bytes after that NUL, if any, are a
 * second name. Each name goes through every function of the header, alone,
 * against the other, and against a fixed set of names; the cheap
 * properties that must hold (a name reprints and reparses to itself,
 * merging never contradicts either side, ...) abort() when violated. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfdev/device_name.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const fixed_names[] = {
    "",
    "/",
    "/job:localhost/replica:0/task:0/device:CPU:0",
    "/job:localhost/replica:0/task:0/cpu:0",
    "/job:worker/replica:1/task:2/device:GPU:3",
    "/device:CPU:*",
    "/job:localhost",
    "/cpu:1",
    "/device:GPU:0",
    "CPU:0",
    "/job:*/replica:*/task:*/device:*:*",
};
#define NUM_FIXED (sizeof fixed_names / sizeof fixed_names[0])

#define CHECK(cond)                                                                   \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      fprintf(stderr, "fuzz_device_name: invariant failed at line %d: %s\n", __LINE__, \
              #cond);                                                                 \
      abort();                                                                        \
    }                                                                                 \
  } while (0)

/* Two parsed names say the same thing. The id is compared only where a
 * type is present: like TensorFlow's ParsedNameToString, the canonical
 * spelling of "/device:*:3" drops the id, so it cannot round-trip. */
static int same_name(const tfd_parsed_name *a, const tfd_parsed_name *b) {
  if (a->has_job != b->has_job || (a->has_job && strcmp(a->job, b->job) != 0)) return 0;
  if (a->has_replica != b->has_replica || (a->has_replica && a->replica != b->replica)) return 0;
  if (a->has_task != b->has_task || (a->has_task && a->task != b->task)) return 0;
  if (a->has_type != b->has_type || (a->has_type && strcmp(a->type, b->type) != 0)) return 0;
  if (a->has_type && (a->has_id != b->has_id || (a->has_id && a->id != b->id))) return 0;
  return 1;
}

static size_t bounded_len(const char *s) { return strnlen(s, TFD_DEVICE_NAME_MAX); }

/* Everything that takes one parsed name; `full` says `name` is what
 * tfd_device_name_parse read it from (not parse_local). */
static void one_name(const char *name, const tfd_parsed_name *p, int full, tfd_status *st) {
  char out[TFD_DEVICE_NAME_MAX], again[TFD_DEVICE_NAME_MAX];
  tfd_parsed_name q;

  tfd_device_name_canonical(p, out);
  CHECK(bounded_len(out) < TFD_DEVICE_NAME_MAX);
  CHECK(tfd_device_name_parse(out, &q, st) == TFD_OK);
  CHECK(same_name(p, &q));
  tfd_device_name_canonical(&q, again);
  CHECK(strcmp(out, again) == 0);

  CHECK(tfd_device_name_is_specification(p, p));
  int complete = tfd_device_name_is_complete(p);
  CHECK(tfd_device_name_is_same_address_space(p, p) == (p->has_job && p->has_replica && p->has_task));

  if (tfd_device_name_full(p, out, st) == TFD_OK) {
    CHECK(complete);
    CHECK(tfd_device_name_parse(out, &q, st) == TFD_OK);
    CHECK(same_name(p, &q));
    CHECK(tfd_device_name_is_complete(&q));
  } else {
    CHECK(!complete);
  }
  if (tfd_device_name_legacy(p, out, st) == TFD_OK) {
    CHECK(complete);
    /* Only CPU and GPU have a legacy spelling the parser reads back. */
    if (strcmp(p->type, "CPU") == 0 || strcmp(p->type, "GPU") == 0) {
      CHECK(tfd_device_name_parse(out, &q, st) == TFD_OK);
      CHECK(same_name(p, &q));
    }
  } else {
    CHECK(!complete);
  }
  int type_id = p->has_type && p->has_id;
  if (tfd_device_name_local(p, out, st) == TFD_OK) {
    CHECK(type_id);
    CHECK(tfd_device_name_parse(out, &q, st) == TFD_OK);
    CHECK(q.has_type && q.has_id && strcmp(q.type, p->type) == 0 && q.id == p->id);
  } else {
    CHECK(!type_id);
  }
  if (tfd_device_name_legacy_local(p, out, st) == TFD_OK) {
    CHECK(type_id);
    /* "TYPE:i" reads back with parse_local when TYPE is a valid name part. */
    if (tfd_device_name_parse_local(out, &q)) CHECK(strcmp(q.type, p->type) == 0 && q.id == p->id);
  } else {
    CHECK(!type_id);
  }

  char task[TFD_DEVICE_NAME_MAX], device[TFD_DEVICE_NAME_MAX];
  if (!full) {
    tfd_device_name_split(name, task, device, st); /* a local name is not a full one: must just fail cleanly */
  } else if (tfd_device_name_split(name, task, device, st) == TFD_OK) {
    CHECK(type_id);
    CHECK(tfd_device_name_legacy_local(p, out, st) == TFD_OK && strcmp(out, device) == 0);
    CHECK(tfd_device_name_parse(task, &q, st) == TFD_OK);
    CHECK(!q.has_type && !q.has_id);
  } else {
    CHECK(!type_id);
  }

  /* Merging a name into itself changes nothing, soft placement or not. */
  for (int soft = 0; soft < 2; soft++) {
    q = *p;
    CHECK(tfd_device_name_merge(&q, p, soft, st) == TFD_OK);
    CHECK(same_name(&q, p));
  }
}

/* Everything that takes two names. */
static void two_names(const char *a_name, const tfd_parsed_name *a, const char *b_name, const tfd_parsed_name *b,
                      tfd_status *st) {
  char out[TFD_DEVICE_NAME_MAX];
  tfd_parsed_name m, q;

  /* Each a specification of the other: they name the same thing. */
  if (tfd_device_name_is_specification(a, b) && tfd_device_name_is_specification(b, a)) CHECK(same_name(a, b));
  CHECK(tfd_device_name_is_same_address_space(a, b) == tfd_device_name_is_same_address_space(b, a));

  for (int soft = 0; soft < 2; soft++) {
    m = *a;
    if (tfd_device_name_merge(&m, b, soft, st) == TFD_OK) {
      /* A merge that had no conflict to drop keeps everything both sides said. */
      if (!soft) {
        CHECK(tfd_device_name_is_specification(a, &m));
        CHECK(tfd_device_name_is_specification(b, &m));
      }
      tfd_device_name_canonical(&m, out);
      CHECK(tfd_device_name_parse(out, &q, st) == TFD_OK);
    } else {
      CHECK(same_name(&m, a) && memcmp(&m, a, sizeof m) == 0); /* unchanged on error */
      CHECK(!soft || a->has_job || a->has_replica || a->has_task);
    }
  }

  /* canonicalize completes a name from a fully specified basename. */
  if (tfd_device_name_canonicalize(a_name, b_name, out, st) == TFD_OK) {
    CHECK(tfd_device_name_is_complete(b));
    CHECK(tfd_device_name_parse(out, &q, st) == TFD_OK);
    CHECK(tfd_device_name_is_complete(&q));
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* Copies: the first name, and what follows its NUL. */
  size_t n1 = strnlen((const char *)data, size);
  char *first = malloc(n1 + 1);
  size_t n2 = n1 < size ? size - n1 - 1 : 0;
  char *second = malloc(n2 + 1);
  if (!first || !second) goto done;
  memcpy(first, data, n1);
  first[n1] = 0;
  memcpy(second, data + size - n2, n2);
  second[n2] = 0;

  tfd_status *st = tfd_status_new();
  if (!st) goto done;
  tfd_parsed_name p, p2, fixed;
  int ok1 = tfd_device_name_parse(first, &p, st) == TFD_OK;
  if (!ok1) CHECK(tfd_status_code(st) == TFD_INVALID_ARGUMENT && tfd_status_message(st)[0]);
  tfd_status_reset(st);
  if (ok1) one_name(first, &p, 1, st);

  tfd_parsed_name local;
  if (tfd_device_name_parse_local(first, &local)) {
    CHECK(local.has_type && local.has_id && !local.has_job);
    one_name(first, &local, 0, st);
  }

  int ok2 = n1 < size && tfd_device_name_parse(second, &p2, st) == TFD_OK;
  if (ok2) one_name(second, &p2, 1, st);
  if (ok1 && ok2) {
    two_names(first, &p, second, &p2, st);
    two_names(second, &p2, first, &p, st);
  }

  char out[TFD_DEVICE_NAME_MAX];
  for (size_t i = 0; i < NUM_FIXED; i++) {
    /* canonicalize parses both strings itself, so it runs even when ours did not parse. */
    tfd_device_name_canonicalize(first, fixed_names[i], out, st);
    tfd_device_name_canonicalize(fixed_names[i], first, out, st);
    if (!ok1 || tfd_device_name_parse(fixed_names[i], &fixed, st) != TFD_OK) continue;
    two_names(first, &p, fixed_names[i], &fixed, st);
    two_names(fixed_names[i], &fixed, first, &p, st);
  }
  tfd_status_free(st);
done:
  free(first);
  free(second);
  return 0;
}
