/* Fuzzes the allocation-free JSON validator (runtime/import/json_syntax.h) against cJSON, which the
 * TensorFlow.js reader parses with. Input layout: the whole input is the text (NULs included).
 *
 * The readers take "well formed, yet cJSON returned NULL" to mean cJSON ran out of memory, so the
 * one thing that must never happen is text the validator accepts and cJSON (with memory to spare)
 * refuses: that would turn a malformed file into RESOURCE_EXHAUSTED. The other direction (cJSON
 * parses what the validator refuses: a BOM, a 64-digit number, an unpaired surrogate) is a
 * documented difference, counted, not a finding. A second pass checks that a prefix of a
 * well-formed document never reads past the given length. abort() on a finding. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "runtime/import/json_syntax.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > (1u << 20)) return 0;
  /* An exact-size copy: any read past len is a heap overflow ASan reports. */
  char *text = malloc(size ? size : 1);
  if (!text) return 0;
  memcpy(text, data, size);
  bool well_formed = tfd_json_well_formed(text, size);
  cJSON *root = cJSON_ParseWithLength(text, size);
  if (well_formed && !root) {
    fprintf(stderr, "fuzz_json_syntax: the validator accepts %zu bytes that cJSON refuses (near: %s)\n", size,
            cJSON_GetErrorPtr() ? cJSON_GetErrorPtr() : "?");
    abort();
  }
  cJSON_Delete(root);
  /* Every proper prefix of well-formed text is a separate question; asking must stay in bounds. */
  if (well_formed && size > 1) (void)tfd_json_well_formed(text, size / 2);
  free(text);
  return 0;
}
