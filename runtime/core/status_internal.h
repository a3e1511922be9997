/* The tfd_status struct, visible to the runtime so it can keep statuses on the stack. */
#ifndef TFDEV_RUNTIME_STATUS_INTERNAL_H
#define TFDEV_RUNTIME_STATUS_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>

#include "tfdev/status.h"

/* "an" before a word said with a vowel first ("an int32", "an int"), else "a" ("a uint8", "a float32"):
 * for messages that name a dtype or a type after an article. */
static inline const char *tfd_article(const char *word) {
  return word && (word[0] == 'a' || word[0] == 'e' || word[0] == 'i' || word[0] == 'o') ? "an" : "a";
}

struct tfd_status {
  tfd_code code;
  char *msg; /* heap, NULL when OK or when the message could not be stored */
};

#define TFD_STATUS_INIT {TFD_OK, NULL}

/* Releases the message of a stack status. */
void tfd_status_clear(tfd_status *s);
/* Moves code and message from src (left OK) into dst; dst may be NULL. */
tfd_code tfd_status_move(tfd_status *dst, tfd_status *src);

/* A printf-formatted string of any length, or NULL when out of memory.
 * The caller frees it with free(). Names are never truncated into fixed
 * buffers: this is what builds them. */
char *tfd_format(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* tfd_format with a va_list, which it uses up as vsnprintf does. */
char *tfd_vformat(const char *fmt, va_list ap);

/* printf-style checking for the runtime's own formatting functions. */
#if defined(__GNUC__)
#define TFD_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define TFD_PRINTF(fmt, args)
#endif

/* Sets st to code and "<file>: <message>" (the readers' errors, which name the file they read);
 * "out of memory" stands in for a message that cannot be made. Uses up ap. */
void tfd_status_vsetf_in(tfd_status *st, tfd_code code, const char *file, const char *fmt, va_list ap);

#endif
