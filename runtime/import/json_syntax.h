/* Whether bytes are well-formed JSON, decided without allocating.
 *
 * cJSON returns NULL both for text that is not JSON and when it runs out of memory. A reader that
 * gets NULL asks this: well-formed text that cJSON could not parse means memory ran out
 * (RESOURCE_EXHAUSTED), not a malformed file. So what this accepts is a subset of what cJSON 1.7
 * parses: RFC 8259 JSON, nested at most TFD_JSON_MAX_DEPTH deep (cJSON stops at 1000), numbers of
 * at most 63 characters (cJSON reads no more), \u escapes in pairs where UTF-16 needs them, no
 * byte-order mark. fuzz/fuzz_json_syntax.c checks that cJSON parses whatever this accepts. */
#ifndef TFDEV_RUNTIME_JSON_SYNTAX_H
#define TFDEV_RUNTIME_JSON_SYNTAX_H

#include <stdbool.h>
#include <stddef.h>

enum { TFD_JSON_MAX_DEPTH = 999 };

bool tfd_json_well_formed(const char *text, size_t len);

#endif
