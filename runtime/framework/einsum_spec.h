/* Einsum's equation, parsed once for both the op's shape inference (op_registry.c) and its kernel
 * (k_einsum.c): the subscripts as small integer labels, in TensorFlow's order of first appearance,
 * with where each ellipsis ("...") stands. */
#ifndef TFDEV_RUNTIME_EINSUM_SPEC_H
#define TFDEV_RUNTIME_EINSUM_SPEC_H

#include <stdbool.h>
#include <stddef.h>

/* The most distinct labels and the longest subscript (any longer one cannot match a tensor's rank:
 * the check against the inputs' ranks reports it). */
#define TFD_EINSUM_MAX_LABELS 64

typedef struct tfd_einsum_spec {
  int num_inputs;                          /* 1 or 2 */
  int num_labels[2];                       /* named labels of each input subscript */
  int labels[2][TFD_EINSUM_MAX_LABELS];    /* their label ids */
  int ellipsis[2];                         /* the ellipsis stands before named label j; -1: none */
  int num_out, out[TFD_EINSUM_MAX_LABELS]; /* the output subscript's named labels */
  int out_ellipsis;
  int num_distinct;                        /* labels 0 .. num_distinct-1 */
  char chars[TFD_EINSUM_MAX_LABELS];       /* each label's character */
} tfd_einsum_spec;

/* Parses equation into *sp; false with TensorFlow's text in err (cap bytes) when malformed: not one
 * "->", not 1 or 2 inputs, periods outside one ellipsis, a subscript or label set too long. */
bool tfd_einsum_parse(const char *equation, tfd_einsum_spec *sp, char *err, size_t cap);

#endif
