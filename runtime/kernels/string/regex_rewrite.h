/* Regular expressions as TensorFlow's string ops write them (RE2's syntax), run by the C library's
 * POSIX matcher: a pattern is translated once into an extended POSIX expression, and RE2's Replace
 * and GlobalReplace (rewrites with \0-\9, empty matches after a match skipped) are reproduced on top.
 *
 * What carries over: literals and escapes (\t \n \r \f \v \a \xHH, escaped punctuation), classes
 * (\d \D \s \S \w \W, [...] with ranges, negation and [:alpha:]-style names), `.` (any byte but a
 * newline, as RE2 without (?s)), anchors (^ $ \A \z), groups (capturing, (?:...), (?P<name>...)),
 * alternation, and greedy repetition (* + ? {n,m}); a leading (?i) folds ASCII case. Classes and `.`
 * match bytes, not UTF-8 characters. What does not, refused when the pattern is compiled: non-greedy
 * repetition, \p classes, \Q...\E, inline flags other than a leading (?i), and backreferences (RE2 has
 * none either). One difference cannot be refused: POSIX picks the longest of several alternatives
 * that match at the same place (`a|ab` on "ab" matches "ab"), RE2 the first ("a"). */
#ifndef TFDEV_RUNTIME_REGEX_REWRITE_H
#define TFDEV_RUNTIME_REGEX_REWRITE_H

#include <stdbool.h>
#include <stddef.h>

#include "tfdev/status.h"

typedef struct tfd_regex tfd_regex;

/* Compiles an RE2 pattern and a rewrite ("\0" the whole match, "\1"-"\9" groups, "\\" a backslash).
 * INVALID_ARGUMENT naming the pattern or rewrite for syntax errors, a rewrite asking for a group the
 * pattern lacks, and the constructs above that do not carry over. Free with tfd_regex_free. */
tfd_regex *tfd_regex_new(const char *pattern, const char *rewrite, tfd_status *status);
void tfd_regex_free(tfd_regex *re);

/* Output of a replacement: a growing byte buffer (bytes malloc'd, owned by the caller). */
typedef struct tfd_regex_out {
  char *bytes;
  size_t len, cap;
} tfd_regex_out;

/* Appends n bytes to *out, keeping a NUL after them; false when memory runs out (out unchanged). */
bool tfd_regex_out_append(tfd_regex_out *out, const void *bytes, size_t n);

/* Replaces the first match of re in text[0, len) (global: every match, as RE2::GlobalReplace) with
 * the rewrite, writing the result to *out (reset first). False when memory runs out. Safe to call
 * from several threads at once. */
bool tfd_regex_replace(const tfd_regex *re, const char *text, size_t len, bool global, tfd_regex_out *out);

#endif
