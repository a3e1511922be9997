/* Einsum's equation parser (see einsum_spec.h), with the texts of TensorFlow's
 * ValidateEinsumEquation and ValidateEinsumEllipsis. */
#include "einsum_spec.h"

#include <stdio.h>
#include <string.h>

/* One subscript [s, e): its labels (new characters get the next id) and its ellipsis. */
static bool parse_subscript(tfd_einsum_spec *sp, const char *s, const char *e, int *labels, int *n, int *ellipsis,
                            char *err, size_t cap) {
  int periods = 0;
  for (const char *p = s; p < e; p++) periods += *p == '.';
  if (periods != 0 && periods != 3) {
    snprintf(err, cap, "Expected at most one ellipsis (...), but found %d periods (.) in the input subscript: %.*s",
             periods, (int)(e - s), s);
    return false;
  }
  *n = 0;
  *ellipsis = -1;
  for (const char *p = s; p < e; p++) {
    if (*p == '.') {
      if (p + 2 >= e || p[1] != '.' || p[2] != '.') {
        snprintf(err, cap, "Periods found outside of ellipsis in subscript: %.*s", (int)(e - s), s);
        return false;
      }
      *ellipsis = *n;
      p += 2;
      continue;
    }
    if (*n == TFD_EINSUM_MAX_LABELS) {
      snprintf(err, cap, "Subscript %.*s has more than %d labels", (int)(e - s), s, TFD_EINSUM_MAX_LABELS);
      return false;
    }
    int id = -1;
    for (int l = 0; l < sp->num_distinct; l++)
      if (sp->chars[l] == *p) id = l;
    if (id < 0) {
      if (sp->num_distinct == TFD_EINSUM_MAX_LABELS) {
        snprintf(err, cap, "Equation has more than %d distinct labels", TFD_EINSUM_MAX_LABELS);
        return false;
      }
      id = sp->num_distinct++;
      sp->chars[id] = *p;
    }
    labels[(*n)++] = id;
  }
  return true;
}

bool tfd_einsum_parse(const char *equation, tfd_einsum_spec *sp, char *err, size_t cap) {
  memset(sp, 0, sizeof *sp);
  const char *arrow = strstr(equation, "->");
  if (!arrow || strstr(arrow + 2, "->")) {
    snprintf(err, cap, "Expecting exactly one '->' in einsum equation: %s", equation);
    return false;
  }
  int commas = 0;
  for (const char *p = equation; p < arrow; p++) commas += *p == ',';
  if (commas > 1) {
    snprintf(err, cap, "Expecting 1 or 2 input subscripts in equation '%s' but got: %d", equation, commas + 1);
    return false;
  }
  sp->num_inputs = commas + 1;
  const char *s = equation;
  for (int i = 0; i < sp->num_inputs; i++) {
    const char *e = i == 0 && commas ? strchr(s, ',') : arrow;
    if (!parse_subscript(sp, s, e, sp->labels[i], &sp->num_labels[i], &sp->ellipsis[i], err, cap)) return false;
    s = e + 1;
  }
  return parse_subscript(sp, arrow + 2, arrow + strlen(arrow), sp->out, &sp->num_out, &sp->out_ellipsis, err, cap);
}
