/* RE2 patterns and rewrites on the C library's POSIX matcher (regex_rewrite.h says what carries over). */
#include "regex_rewrite.h"

#include <ctype.h>
#include <regex.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_GROUPS 64 /* capturing groups a pattern may have (RE2 allows more; TensorFlow's models far fewer) */

struct tfd_regex {
  regex_t re;
  int ngroups;                 /* POSIX groups, capturing or not */
  int group_of[MAX_GROUPS + 1]; /* RE2 group k -> POSIX group (0 -> 0) */
  int re2_groups;              /* RE2's capturing groups */
  char *rewrite;               /* the rewrite, checked */
};

/* The translation under way: the POSIX expression as it grows. */
typedef struct xlate {
  char *buf;
  size_t len, cap;
  bool oom;
  const char *pattern;
  tfd_status *st;
  bool failed;
} xlate;

static void put(xlate *x, const char *s, size_t n) {
  if (x->oom) return;
  if (x->len + n + 1 > x->cap) {
    size_t cap = x->cap ? x->cap * 2 : 64;
    while (cap < x->len + n + 1) cap *= 2;
    char *b = realloc(x->buf, cap);
    if (!b) {
      x->oom = true;
      return;
    }
    x->buf = b;
    x->cap = cap;
  }
  memcpy(x->buf + x->len, s, n);
  x->len += n;
  x->buf[x->len] = 0;
}
static void puts_(xlate *x, const char *s) { put(x, s, strlen(s)); }

static bool bad(xlate *x, const char *what, const char *at) {
  if (!x->failed)
    tfd_status_setf(x->st, TFD_INVALID_ARGUMENT, "Invalid pattern: %s, error: %s at offset %d", x->pattern, what,
                    (int)(at - x->pattern));
  x->failed = true;
  return false;
}

/* A set of bytes, for classes: emitted as one POSIX bracket expression whatever the RE2 spelling. */
typedef struct byteset {
  uint8_t bit[32];
} byteset;
static void set_add(byteset *s, int c) { s->bit[c >> 3] |= (uint8_t)(1u << (c & 7)); }
static bool set_has(const byteset *s, int c) { return s->bit[c >> 3] & (1u << (c & 7)); }
static void set_range(byteset *s, int lo, int hi) {
  for (int c = lo; c <= hi; c++) set_add(s, c);
}

/* RE2's Perl classes: \d digits, \s [\t\n\f\r ], \w [0-9A-Za-z_]; upper case negates. */
static bool perl_class(int c, byteset *s) {
  byteset t = {{0}};
  int lc = tolower(c);
  if (lc == 'd') set_range(&t, '0', '9');
  else if (lc == 's') set_add(&t, '\t'), set_add(&t, '\n'), set_add(&t, '\f'), set_add(&t, '\r'), set_add(&t, ' ');
  else if (lc == 'w') set_range(&t, '0', '9'), set_range(&t, 'A', 'Z'), set_range(&t, 'a', 'z'), set_add(&t, '_');
  else return false;
  for (int b = 1; b < 256; b++)
    if (set_has(&t, b) != (c != lc)) set_add(s, b);
  return true;
}

/* [:name:] inside a bracket, as RE2 reads them (ASCII). */
static bool posix_class(const char *name, size_t n, byteset *s) {
  static const struct {
    const char *name;
    int (*is)(int);
  } classes[] = {{"alnum", isalnum}, {"alpha", isalpha}, {"blank", isblank}, {"cntrl", iscntrl},
                 {"digit", isdigit}, {"graph", isgraph}, {"lower", islower}, {"print", isprint},
                 {"punct", ispunct}, {"space", isspace}, {"upper", isupper}, {"xdigit", isxdigit}};
  for (size_t k = 0; k < sizeof classes / sizeof *classes; k++)
    if (strlen(classes[k].name) == n && memcmp(classes[k].name, name, n) == 0) {
      for (int b = 1; b < 128; b++)
        if (classes[k].is(b)) set_add(s, b);
      return true;
    }
  return false;
}

static int hex(int c) { return isdigit(c) ? c - '0' : isxdigit(c) ? tolower(c) - 'a' + 10 : -1; }

/* An escape's literal byte (\t, \x41, \.): -1 when it is no literal. *p points past the backslash
 * and is moved past the escape. */
static int escaped_literal(xlate *x, const char **p) {
  const char *at = *p;
  int c = (unsigned char)*at;
  static const char from[] = "tnrfva", to[] = "\t\n\r\f\v\a";
  const char *k = c ? strchr(from, c) : NULL;
  if (k) {
    *p = at + 1;
    return (unsigned char)to[k - from];
  }
  if (c == 'x') {
    int h = hex((unsigned char)at[1]), l = h >= 0 ? hex((unsigned char)at[2]) : -1;
    if (h < 0 || l < 0) return bad(x, "invalid escape sequence \\x (only \\xHH is supported)", at - 1), -1;
    *p = at + 3;
    return h * 16 + l;
  }
  if (c && !isalnum(c)) { /* escaped punctuation is itself */
    *p = at + 1;
    return c;
  }
  return -1;
}

/* One byte of a bracket expression at *p (a literal or an escape), or -1 after adding a class to s. */
static int bracket_atom(xlate *x, const char **p, byteset *s, bool *is_class) {
  *is_class = false;
  const char *at = *p;
  if (at[0] == '[' && at[1] == ':') {
    const char *end = strstr(at + 2, ":]");
    if (!end || !posix_class(at + 2, (size_t)(end - at - 2), s)) return bad(x, "invalid character class", at), -1;
    *p = end + 2;
    *is_class = true;
    return -1;
  }
  if (at[0] == '\\') {
    if (at[1] && strchr("dDsSwW", at[1])) {
      perl_class(at[1], s);
      *p = at + 2;
      *is_class = true;
      return -1;
    }
    const char *q = at + 1;
    int c = escaped_literal(x, &q);
    if (c < 0) return x->failed ? -1 : (bad(x, "invalid escape sequence in a character class", at), -1);
    *p = q;
    return c;
  }
  *p = at + 1;
  return (unsigned char)at[0];
}

/* Emits a set as a POSIX bracket: ']' first, '-' last, '^' never first; NUL cannot be matched. */
static void put_set(xlate *x, const byteset *s) {
  byteset in = *s;
  int count = 0;
  for (int b = 1; b < 256; b++) count += set_has(&in, b);
  if (count == 0) { /* matches nothing: a byte that is both a digit and not one */
    puts_(x, "[^\x01-\xff]");
    return;
  }
  bool neg = count > 128;
  char out[1024];
  size_t n = 0;
  out[n++] = '[';
  if (neg) out[n++] = '^';
  bool want_close = set_has(&in, ']') != neg, want_dash = set_has(&in, '-') != neg, want_caret = set_has(&in, '^') != neg;
  if (want_close) out[n++] = ']';
  int b = 1;
  while (b < 256) {
    if ((set_has(&in, b) != neg) && b != ']' && b != '-' && b != '^') {
      int e = b;
      while (e + 1 < 256 && (set_has(&in, e + 1) != neg) && e + 1 != ']' && e + 1 != '-' && e + 1 != '^') e++;
      out[n++] = (char)b;
      if (e > b + 1) out[n++] = '-';
      if (e > b) out[n++] = (char)e;
      b = e + 1;
    } else {
      b++;
    }
  }
  if (want_caret) { /* never first, where it would negate */
    if (n == 1 + (size_t)neg && want_dash) {
      out[n++] = '-';
      want_dash = false;
    } else if (n == 1 && !want_dash) { /* the set is just '^' */
      put(x, "\\^", 2);
      return;
    }
    out[n++] = '^';
  }
  if (want_dash) out[n++] = '-';
  if (n == 1 + (size_t)neg) { /* only NUL was asked for (or excluded): nothing or everything */
    puts_(x, neg ? "[\x01-\xff]" : "[^\x01-\xff]");
    return;
  }
  out[n++] = ']';
  put(x, out, n);
}

static void put_literal(xlate *x, int c) {
  char s[3] = {'\\', (char)c, 0};
  if (c == 0) {
    bad(x, "a NUL byte cannot be matched", x->pattern);
    return;
  }
  if (strchr(".[]()*+?{}|^$\\", c)) put(x, s, 2);
  else put(x, s + 1, 1);
}

/* Parses a bracket expression starting at *p ('['), emitting it. */
static bool bracket(xlate *x, const char **p) {
  const char *at = *p + 1;
  bool neg = *at == '^';
  if (neg) at++;
  byteset s = {{0}};
  bool first = true;
  while (*at && (*at != ']' || first)) {
    first = false;
    bool cls;
    int lo = bracket_atom(x, &at, &s, &cls);
    if (x->failed) return false;
    if (cls) continue;
    if (at[0] == '-' && at[1] && at[1] != ']') {
      at++;
      int hi = bracket_atom(x, &at, &s, &cls);
      if (x->failed) return false;
      if (cls || hi < lo) return bad(x, "invalid character class range", at);
      set_range(&s, lo ? lo : 1, hi);
    } else if (lo > 0) {
      set_add(&s, lo);
    }
  }
  if (*at != ']') return bad(x, "missing ]", *p);
  if (neg) {
    byteset t = {{0}};
    for (int b = 1; b < 256; b++)
      if (!set_has(&s, b)) set_add(&t, b);
    s = t;
  }
  put_set(x, &s);
  *p = at + 1;
  return true;
}

static bool translate(xlate *x, tfd_regex *re, bool *icase) {
  const char *p = x->pattern;
  if (strncmp(p, "(?i)", 4) == 0) {
    *icase = true;
    p += 4;
  }
  while (*p && !x->failed) {
    const char *at = p;
    int c = (unsigned char)*p;
    if (c == '\\') {
      p++;
      int e = (unsigned char)*p;
      if (!e) return bad(x, "trailing \\", at);
      if (strchr("dDsSwW", e)) {
        byteset s = {{0}};
        perl_class(e, &s);
        put_set(x, &s);
        p++;
      } else if (e == 'b' || e == 'B') {
        put(x, at, 2); /* word boundaries: a GNU extension of the POSIX matcher */
        p++;
      } else if (e == 'A') {
        puts_(x, "^");
        p++;
      } else if (e == 'z') {
        puts_(x, "$");
        p++;
      } else if (e >= '1' && e <= '9') {
        return bad(x, "invalid escape sequence (RE2 has no backreferences)", at);
      } else if (e == 'p' || e == 'P' || e == 'Q' || e == 'C' || e == 'E') {
        return bad(x, "this escape is not supported by tfdev's matcher", at);
      } else {
        int lit = escaped_literal(x, &p);
        if (lit < 0) return x->failed ? false : bad(x, "invalid escape sequence", at);
        put_literal(x, lit);
      }
      continue;
    }
    if (c == '[') {
      if (!bracket(x, &p)) return false;
      continue;
    }
    if (c == '.') {
      puts_(x, "[^\n]");
      p++;
      continue;
    }
    if (c == '(') {
      if (re->ngroups >= MAX_GROUPS) return bad(x, "too many groups", at);
      re->ngroups++;
      if (p[1] == '?') {
        if (p[2] == ':') {
          p += 3;
        } else if (p[2] == 'P' && p[3] == '<') {
          const char *end = strchr(p + 4, '>');
          if (!end) return bad(x, "invalid named capture group", at);
          re->group_of[++re->re2_groups] = re->ngroups;
          p = end + 1;
        } else {
          return bad(x, "inline flags and lookaround are not supported (only a leading (?i))", at);
        }
      } else {
        re->group_of[++re->re2_groups] = re->ngroups;
        p++;
      }
      puts_(x, "(");
      continue;
    }
    if (c == '*' || c == '+' || c == '?' || c == '}') {
      put(x, p, 1);
      p++;
      if (*p == '?') return bad(x, "non-greedy repetition is not supported", at);
      if (*p == '*' || *p == '+') return bad(x, "bad repetition operator", at);
      continue;
    }
    put(x, p, 1);
    p++;
  }
  return !x->failed;
}

/* Checks a rewrite: \0-\9 name groups the pattern has, \\ is a backslash, nothing else follows one. */
static bool check_rewrite(const tfd_regex *re, const char *rewrite, const char *pattern, tfd_status *st) {
  int most = 0;
  for (const char *p = rewrite; *p; p++) {
    if (*p != '\\') continue;
    p++;
    if (*p >= '0' && *p <= '9') {
      if (*p - '0' > most) most = *p - '0';
    } else if (*p != '\\') {
      tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Invalid rewrite pattern: %s (\\ must be followed by a digit or \\)",
                      rewrite);
      return false;
    }
  }
  if (most > re->re2_groups) {
    tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                    "Rewrite schema requests %d matches, but the regexp only has %d parenthesized subexpressions "
                    "(pattern %s, rewrite %s)",
                    most, re->re2_groups, pattern, rewrite);
    return false;
  }
  return true;
}

tfd_regex *tfd_regex_new(const char *pattern, const char *rewrite, tfd_status *st) {
  tfd_regex *re = calloc(1, sizeof *re);
  if (!re) {
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory compiling a pattern");
    return NULL;
  }
  xlate x = {.pattern = pattern, .st = st};
  bool icase = false;
  put(&x, "", 0);
  if (!translate(&x, re, &icase) || x.oom || !check_rewrite(re, rewrite, pattern, st) ||
      !(re->rewrite = strdup(rewrite))) {
    if (x.oom || (!x.failed && !re->rewrite && tfd_status_code(st) == TFD_OK))
      tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory compiling a pattern");
    free(x.buf);
    free(re->rewrite);
    free(re);
    return NULL;
  }
  int rc = regcomp(&re->re, x.buf, REG_EXTENDED | (icase ? REG_ICASE : 0));
  free(x.buf);
  if (rc != 0) {
    char why[128];
    regerror(rc, &re->re, why, sizeof why);
    tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Invalid pattern: %s, error: %s", pattern, why);
    free(re->rewrite);
    free(re);
    return NULL;
  }
  return re;
}

void tfd_regex_free(tfd_regex *re) {
  if (!re) return;
  regfree(&re->re);
  free(re->rewrite);
  free(re);
}

bool tfd_regex_out_append(tfd_regex_out *o, const void *s, size_t n) {
  if (o->len + n + 1 > o->cap) {
    size_t cap = o->cap ? o->cap : 32;
    while (cap < o->len + n + 1) cap *= 2;
    char *b = realloc(o->bytes, cap);
    if (!b) return false;
    o->bytes = b;
    o->cap = cap;
  }
  if (n) memcpy(o->bytes + o->len, s, n);
  o->len += n;
  return true;
}

static bool rewrite_into(const tfd_regex *re, const char *text, const regmatch_t *m, tfd_regex_out *o) {
  for (const char *p = re->rewrite; *p; p++) {
    if (*p != '\\') {
      if (!tfd_regex_out_append(o, p, 1)) return false;
      continue;
    }
    p++;
    if (*p == '\\') {
      if (!tfd_regex_out_append(o, p, 1)) return false;
      continue;
    }
    const regmatch_t *g = &m[re->group_of[*p - '0']];
    if (g->rm_so >= 0 && !tfd_regex_out_append(o, text + g->rm_so, (size_t)(g->rm_eo - g->rm_so))) return false;
  }
  return true;
}

/* Bytes in the UTF-8 character starting at p (1 for a byte that starts none), at most left. */
static size_t rune_len(const unsigned char *p, size_t left) {
  size_t n = *p < 0x80 ? 1 : (*p >> 5) == 6 ? 2 : (*p >> 4) == 14 ? 3 : (*p >> 3) == 30 ? 4 : 1;
  for (size_t k = 1; k < n && k < left; k++)
    if ((p[k] & 0xc0) != 0x80) return 1;
  return n <= left ? n : 1;
}

bool tfd_regex_replace(const tfd_regex *re, const char *text, size_t len, bool global, tfd_regex_out *out) {
  out->len = 0;
  regmatch_t m[MAX_GROUPS + 1];
  size_t p = 0, lastend = SIZE_MAX;
  while (p <= len) {
    m[0].rm_so = (regoff_t)p;
    m[0].rm_eo = (regoff_t)len;
    if (regexec(&re->re, text, (size_t)re->ngroups + 1, m, REG_STARTEND | (p > 0 ? REG_NOTBOL : 0)) != 0) break;
    size_t so = (size_t)m[0].rm_so, eo = (size_t)m[0].rm_eo;
    if (!tfd_regex_out_append(out, text + p, so - p)) return false;
    if (so == lastend && so == eo) { /* no empty match right where the last one ended: step one character */
      size_t n = p < len ? rune_len((const unsigned char *)text + p, len - p) : 1;
      if (p < len && !tfd_regex_out_append(out, text + p, n)) return false;
      p += n;
      continue;
    }
    if (!rewrite_into(re, text, m, out)) return false;
    p = eo;
    lastend = eo;
    if (!global) break;
  }
  if (p < len && !tfd_regex_out_append(out, text + p, len - p)) return false;
  return tfd_regex_out_append(out, "", 0); /* never NULL, even for an empty result */
}
