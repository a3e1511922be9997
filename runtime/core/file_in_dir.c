/* Opening a file a model names, confined to the model's directory (file_in_dir.h): the name is
 * checked as written (relative, not climbing out with ".."), then resolved with realpath and
 * checked to lie under realpath(dir) before anything is opened, so a device or a FIFO outside is
 * never even opened; the file is opened non-blocking, must be a regular file, and the descriptor's
 * own path is checked again, so a directory swapped for a symbolic link in between gains nothing. */
#include "file_in_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "status_internal.h"

static int failf(tfd_status *st, tfd_code code, const char *what, const char *name, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

static int failf(tfd_status *st, tfd_code code, const char *what, const char *name, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *msg = tfd_vformat(fmt, ap);
  va_end(ap);
  tfd_status_setf(st, code, "%s '%s': %s", what, name, msg ? msg : "out of memory");
  free(msg);
  return -1;
}

/* An errno from resolving or opening a file inside the directory, as a code. */
static tfd_code code_of(int err) {
  switch (err) {
    case ENOENT:
    case ENOTDIR: return TFD_NOT_FOUND;
    case ENOMEM: return TFD_RESOURCE_EXHAUSTED;
    case ELOOP:
    case ENAMETOOLONG: return TFD_INVALID_ARGUMENT;
    default: return TFD_PERMISSION_DENIED;
  }
}

static const char *kind_of(mode_t m) {
  return S_ISDIR(m)    ? "a directory"
         : S_ISFIFO(m) ? "a FIFO"
         : S_ISSOCK(m) ? "a socket"
         : S_ISCHR(m)  ? "a character device"
         : S_ISBLK(m)  ? "a block device"
                       : "a special file";
}

/* Whether the name's own ".." parts climb above where it starts ("a/../../b"): refused before
 * the file system is asked anything, so the answer cannot tell what exists outside. */
static bool climbs(const char *name) {
  long depth = 0;
  for (const char *p = name; *p;) {
    size_t n = strcspn(p, "/");
    if (n == 2 && p[0] == '.' && p[1] == '.') {
      if (--depth < 0) return true;
    } else if (n > 0 && !(n == 1 && p[0] == '.')) {
      depth++;
    }
    p += n;
    if (*p == '/') p++;
  }
  return false;
}

/* Whether the resolved path `real` is the resolved directory `root` or lies below it. */
static bool inside(const char *real, const char *root) {
  size_t n = strlen(root);
  if (strncmp(real, root, n) != 0) return false;
  return real[n] == 0 || real[n] == '/' || (n > 0 && root[n - 1] == '/');
}

/* Whether the file open on fd (whose fstat is `opened`) is still under root: by the descriptor's
 * own path where /proc tells it, else by the checked path naming that same file. */
static bool opened_inside(int fd, const struct stat *opened, const char *real, const char *root) {
  char link[64];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  char *at = realpath(link, NULL);
  if (at) {
    bool ok = inside(at, root);
    free(at);
    return ok;
  }
  char *again = realpath(real, NULL);
  struct stat sb;
  bool ok =
      again && inside(again, root) && stat(again, &sb) == 0 && sb.st_dev == opened->st_dev && sb.st_ino == opened->st_ino;
  free(again);
  return ok;
}

int tfd_open_in_dir(const char *dir, const char *what, const char *name, size_t *size, tfd_status *st) {
  const char *shown = name ? name : "";
  if (!what) what = "file";
  if (!*shown) return failf(st, TFD_INVALID_ARGUMENT, what, shown, "an empty path");
  if (name[0] == '/')
    return failf(st, TFD_INVALID_ARGUMENT, what, name,
                 "is an absolute path; a model names its files relative to its own directory");
  if (climbs(name)) return failf(st, TFD_INVALID_ARGUMENT, what, name, "leads outside the model's directory");
  const char *d = dir && *dir ? dir : ".";
  char *root = realpath(d, NULL);
  if (!root) return failf(st, code_of(errno), what, name, "the model's directory %s: %s", d, strerror(errno));
  char *full = tfd_format("%s/%s", root, name);
  if (!full) {
    free(root);
    return failf(st, TFD_RESOURCE_EXHAUSTED, what, name, "out of memory");
  }
  int fd = -1;
  char *real = realpath(full, NULL);
  int err = errno;
  free(full);
  struct stat sb;
  if (!real) {
    failf(st, code_of(err), what, name, "%s", strerror(err));
  } else if (!inside(real, root)) {
    failf(st, TFD_INVALID_ARGUMENT, what, name, "leads outside the model's directory");
  } else if (stat(real, &sb) != 0) {
    err = errno;
    failf(st, code_of(err), what, name, "%s", strerror(err));
  } else if (!S_ISREG(sb.st_mode)) {
    failf(st, TFD_INVALID_ARGUMENT, what, name, "is %s, not a regular file", kind_of(sb.st_mode));
  } else if ((fd = open(real, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)) < 0) {
    err = errno;
    failf(st, code_of(err), what, name, "%s", strerror(err));
  } else if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    failf(st, TFD_INVALID_ARGUMENT, what, name, "is not a regular file");
    close(fd);
    fd = -1;
  } else if (!opened_inside(fd, &sb, real, root)) {
    failf(st, TFD_INVALID_ARGUMENT, what, name, "leads outside the model's directory");
    close(fd);
    fd = -1;
  } else {
    *size = (size_t)sb.st_size;
  }
  free(real);
  free(root);
  return fd;
}

unsigned char *tfd_read_fd(int fd, size_t max, size_t *len, const char *what, const char *name, tfd_status *st) {
  unsigned char *buf = malloc(max ? max : 1);
  if (!buf) {
    failf(st, TFD_RESOURCE_EXHAUSTED, what ? what : "file", name ? name : "", "out of memory reading %zu bytes", max);
    return NULL;
  }
  size_t got = 0;
  while (got < max) {
    ssize_t r = read(fd, buf + got, max - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      int err = errno;
      free(buf);
      failf(st, TFD_DATA_LOSS, what ? what : "file", name ? name : "", "%s", strerror(err));
      return NULL;
    }
    if (r == 0) break;
    got += (size_t)r;
  }
  *len = got;
  return buf;
}

unsigned char *tfd_read_in_dir(const char *dir, const char *what, const char *name, size_t max, size_t *len,
                               tfd_status *st) {
  size_t size = 0;
  int fd = tfd_open_in_dir(dir, what, name, &size, st);
  if (fd < 0) return NULL;
  unsigned char *buf = NULL;
  if (size > max)
    failf(st, TFD_INVALID_ARGUMENT, what ? what : "file", name, "holds %zu bytes, more than the %zu expected", size, max);
  else
    buf = tfd_read_fd(fd, size, len, what, name, st);
  close(fd);
  return buf;
}
