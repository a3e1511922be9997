/* String elements: immutable byte strings shared by reference between elements and tensors. */
#include "tstring.h"

#include <stdlib.h>
#include <string.h>

typedef struct tstring {
  tfd_variant base;
  size_t len;
  char bytes[]; /* len bytes, then a NUL */
} tstring;

static void destroy(tfd_variant *v) { free(v); }

static const tfd_variant_ops tstring_ops = {"tensorflow::tstring", destroy};

tfd_variant *tfd_tstring_new(const void *bytes, size_t len, bool *oom) {
  *oom = false;
  if (len == 0) return NULL;
  tstring *s = len < SIZE_MAX - sizeof *s ? malloc(sizeof *s + len + 1) : NULL;
  if (!s) {
    *oom = true;
    return NULL;
  }
  tfd_variant_init(&s->base, &tstring_ops);
  s->len = len;
  memcpy(s->bytes, bytes, len);
  s->bytes[len] = 0;
  return &s->base;
}

const char *tfd_tstring_data(const tfd_variant *v, size_t *len) {
  if (!v) {
    *len = 0;
    return "";
  }
  const tstring *s = (const tstring *)v;
  *len = s->len;
  return s->bytes;
}

uint64_t tfd_tstring_hash(const tfd_variant *s) {
  size_t len;
  const unsigned char *b = (const unsigned char *)tfd_tstring_data(s, &len);
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < len; i++) h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}

bool tfd_tensor_set_str(tfd_tensor *t, int64_t i, const void *bytes, size_t len) {
  bool oom;
  tfd_variant *s = tfd_tstring_new(bytes, len, &oom);
  if (oom) return false;
  tfd_tensor_set_variant_at(t, i, s);
  return true;
}
