/* Opening a file that a model file names (a TensorFlow.js weight file, and whatever later formats
 * name), confined to the model's directory: a path written in a file someone else made must not
 * read what lies outside that directory, nor block on a FIFO or read a device until memory runs
 * out. */
#ifndef TFDEV_RUNTIME_FILE_IN_DIR_H
#define TFDEV_RUNTIME_FILE_IN_DIR_H

#include <stddef.h>

#include "tfdev/status.h"

/* Opens `name` (a path as a model file writes it) in directory `dir` (NULL or "": the current one)
 * for reading. It must be relative, lead to a regular file, and resolve (after every symbolic link)
 * inside realpath(dir); nothing outside is opened, and what is opened is checked again by its
 * descriptor. Returns the descriptor (the caller closes it) with *size the file's size, or -1 with
 * the status set to "<what> '<name>': ...", the name as written: INVALID_ARGUMENT for an empty or
 * absolute name, one that leads outside the directory, and anything not a regular file (directory,
 * FIFO, socket, device); NOT_FOUND when there is no such file; PERMISSION_DENIED when it cannot be
 * opened. No message tells anything of a file outside the directory. */
int tfd_open_in_dir(const char *dir, const char *what, const char *name, size_t *size, tfd_status *status);

/* Reads at most `max` bytes of the descriptor (up to its end) into a new buffer the caller frees
 * (at least one byte is allocated, so an empty read is not NULL); *len the bytes read. NULL with
 * DATA_LOSS on a read error, RESOURCE_EXHAUSTED when out of memory, named as tfd_open_in_dir does. */
unsigned char *tfd_read_fd(int fd, size_t max, size_t *len, const char *what, const char *name, tfd_status *status);

/* Both: the whole file `name` in `dir`, which may hold at most `max` bytes (INVALID_ARGUMENT when it
 * holds more: nothing is read then). The caller frees the result. */
unsigned char *tfd_read_in_dir(const char *dir, const char *what, const char *name, size_t max, size_t *len,
                               tfd_status *status);

#endif
