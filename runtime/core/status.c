/* Status codes and messages (TensorFlow's Status, as a C out-parameter). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "status_internal.h"

static const char *const code_names[TFD_CODE_COUNT] = {
    "OK",        "CANCELLED",          "UNKNOWN",          "INVALID_ARGUMENT",    "DEADLINE_EXCEEDED",
    "NOT_FOUND", "ALREADY_EXISTS",     "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
    "ABORTED",   "OUT_OF_RANGE",       "UNIMPLEMENTED",    "INTERNAL",            "UNAVAILABLE",
    "DATA_LOSS", "UNAUTHENTICATED",
};

const char *tfd_code_name(tfd_code code) {
  if ((int)code < 0 || (int)code >= TFD_CODE_COUNT) return "UNKNOWN";
  return code_names[code];
}

int tfd_code_from_name(const char *name) {
  if (!name) return -1;
  for (int i = 0; i < TFD_CODE_COUNT; i++)
    if (strcmp(code_names[i], name) == 0) return i;
  return -1;
}

tfd_status *tfd_status_new(void) { return calloc(1, sizeof(tfd_status)); }

void tfd_status_clear(tfd_status *s) {
  if (!s) return;
  free(s->msg);
  s->msg = NULL;
  s->code = TFD_OK;
}

void tfd_status_free(tfd_status *s) {
  tfd_status_clear(s);
  free(s);
}

void tfd_status_reset(tfd_status *s) { tfd_status_clear(s); }

tfd_code tfd_status_code(const tfd_status *s) { return s ? s->code : TFD_OK; }

const char *tfd_status_message(const tfd_status *s) {
  if (!s || s->code == TFD_OK) return "";
  /* A message lost to out-of-memory still says what kind of failure it was. */
  return s->msg ? s->msg : tfd_code_name(s->code);
}

char *tfd_vformat(const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0) return NULL;
  char *buf = malloc((size_t)n + 1);
  if (buf) vsnprintf(buf, (size_t)n + 1, fmt, ap);
  return buf;
}

char *tfd_format(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = tfd_vformat(fmt, ap);
  va_end(ap);
  return s;
}

tfd_code tfd_status_setf(tfd_status *s, tfd_code code, const char *fmt, ...) {
  if (!s) return code;
  if (!fmt) fmt = ""; /* a code without a message */
  va_list ap;
  va_start(ap, fmt);
  char *msg = tfd_vformat(fmt, ap);
  va_end(ap);
  free(s->msg);
  s->msg = msg;
  s->code = code;
  return code;
}

tfd_code tfd_status_prefixf(tfd_status *s, const char *fmt, ...) {
  if (!s || s->code == TFD_OK || !fmt) return tfd_status_code(s);
  va_list ap;
  va_start(ap, fmt);
  char *prefix = tfd_vformat(fmt, ap);
  va_end(ap);
  if (!prefix) return s->code;
  const char *old = s->msg ? s->msg : "";
  size_t n = strlen(prefix) + strlen(old) + 1;
  char *msg = malloc(n);
  if (msg) {
    snprintf(msg, n, "%s%s", prefix, old);
    free(s->msg);
    s->msg = msg;
  }
  free(prefix);
  return s->code;
}

tfd_code tfd_status_move(tfd_status *dst, tfd_status *src) {
  tfd_code code = src->code;
  if (dst) {
    free(dst->msg);
    dst->code = src->code;
    dst->msg = src->msg;
  } else {
    free(src->msg);
  }
  src->msg = NULL;
  src->code = TFD_OK;
  return code;
}

void tfd_status_vsetf_in(tfd_status *st, tfd_code code, const char *file, const char *fmt, va_list ap) {
  char *msg = tfd_vformat(fmt, ap);
  tfd_status_setf(st, code, "%s: %s", file, msg ? msg : "out of memory");
  free(msg);
}
