/* A JSON syntax check that allocates nothing (json_syntax.h says why): a recursive descent over
 * the bytes, with the depth bounded so the recursion is too. */
#include "json_syntax.h"

#include <stdint.h>

typedef struct cursor {
  const char *p, *end;
} cursor;

static void skip_space(cursor *c) {
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')) c->p++;
}

static bool literal(cursor *c, const char *word) {
  for (; *word; word++, c->p++)
    if (c->p >= c->end || *c->p != *word) return false;
  return true;
}

static bool digits(cursor *c) {
  const char *start = c->p;
  while (c->p < c->end && *c->p >= '0' && *c->p <= '9') c->p++;
  return c->p > start;
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, at most 63 characters. */
static bool number(cursor *c) {
  const char *start = c->p;
  if (c->p < c->end && *c->p == '-') c->p++;
  if (c->p < c->end && *c->p == '0') c->p++;
  else if (!digits(c)) return false;
  if (c->p < c->end && *c->p == '.') {
    c->p++;
    if (!digits(c)) return false;
  }
  if (c->p < c->end && (*c->p == 'e' || *c->p == 'E')) {
    c->p++;
    if (c->p < c->end && (*c->p == '+' || *c->p == '-')) c->p++;
    if (!digits(c)) return false;
  }
  return c->p - start <= 63;
}

/* Four hex digits after "\u"; -1 when malformed. */
static long hex4(cursor *c) {
  if (c->end - c->p < 4) return -1;
  long v = 0;
  for (int i = 0; i < 4; i++) {
    char h = *c->p++;
    int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

static bool string(cursor *c) {
  if (c->p >= c->end || *c->p != '"') return false;
  c->p++;
  while (c->p < c->end) {
    unsigned char ch = (unsigned char)*c->p++;
    if (ch == '"') return true;
    if (ch < 0x20) return false;
    if (ch != '\\') continue;
    if (c->p >= c->end) return false;
    char e = *c->p++;
    if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' || e == 'r' || e == 't') continue;
    if (e != 'u') return false;
    long u = hex4(c);
    if (u < 0 || (u >= 0xDC00 && u <= 0xDFFF)) return false; /* a low surrogate alone */
    if (u >= 0xD800 && u <= 0xDBFF) {                         /* a high one needs its low one next */
      if (c->end - c->p < 2 || c->p[0] != '\\' || c->p[1] != 'u') return false;
      c->p += 2;
      long low = hex4(c);
      if (low < 0xDC00 || low > 0xDFFF) return false;
    }
  }
  return false;
}

static bool value(cursor *c, int depth);

static bool container(cursor *c, int depth, char close, bool object) {
  if (depth >= TFD_JSON_MAX_DEPTH) return false;
  c->p++; /* the opening bracket */
  skip_space(c);
  if (c->p < c->end && *c->p == close) {
    c->p++;
    return true;
  }
  for (;;) {
    if (object) {
      if (!string(c)) return false;
      skip_space(c);
      if (c->p >= c->end || *c->p != ':') return false;
      c->p++;
    }
    if (!value(c, depth + 1)) return false;
    skip_space(c);
    if (c->p >= c->end) return false;
    if (*c->p == close) {
      c->p++;
      return true;
    }
    if (*c->p != ',') return false;
    c->p++;
    skip_space(c);
  }
}

/* A value with the space around it. */
static bool value(cursor *c, int depth) {
  skip_space(c);
  if (c->p >= c->end) return false;
  bool ok;
  switch (*c->p) {
    case '{': ok = container(c, depth, '}', true); break;
    case '[': ok = container(c, depth, ']', false); break;
    case '"': ok = string(c); break;
    case 't': ok = literal(c, "true"); break;
    case 'f': ok = literal(c, "false"); break;
    case 'n': ok = literal(c, "null"); break;
    default: ok = number(c); break;
  }
  skip_space(c);
  return ok;
}

bool tfd_json_well_formed(const char *text, size_t len) {
  if (!text) return false;
  cursor c = {text, text + len};
  return value(&c, 0) && c.p == c.end;
}
