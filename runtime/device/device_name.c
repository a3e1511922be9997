/* Device names: parsing, printing, matching and merging, as TensorFlow's DeviceNameUtils does. */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "../core/api_args.h"
#include "../core/status_internal.h"
#include "tfdev/device_name.h"

static bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static bool is_alnum_(char c) { return is_alpha(c) || (c >= '0' && c <= '9') || c == '_'; }

static bool consume(const char **s, const char *prefix) {
  size_t n = strlen(prefix);
  if (strncmp(*s, prefix, n) != 0) return false;
  *s += n;
  return true;
}

/* A name part: a letter, then letters, digits or '_', up to a terminator.
 * Returns NULL on success, else what is wrong. */
static const char *consume_part(const char **s, char *out, const char *terminators) {
  const char *p = *s;
  if (!is_alpha(*p)) return "a name must start with a letter";
  size_t n = strcspn(p, terminators);
  for (size_t i = 0; i < n; i++)
    if (!is_alnum_(p[i])) return "a name may hold only letters, digits and '_'";
  if (n >= TFD_NAME_PART_MAX) return "name part is too long";
  memcpy(out, p, n);
  out[n] = 0;
  *s = p + n;
  return NULL;
}

/* Leading decimal digits; refuses values above INT_MAX. */
static const char *consume_number(const char **s, int *out) {
  const char *p = *s;
  if (!isdigit((unsigned char)*p)) return "expected a number";
  long long v = 0;
  while (isdigit((unsigned char)*p)) {
    v = v * 10 + (*p - '0');
    if (v > INT_MAX) return "number is too large";
    p++;
  }
  *out = (int)v;
  *s = p;
  return NULL;
}

static tfd_code parse_error(tfd_status *status, const char *name, const char *at, const char *why) {
  return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "could not parse device name '%s' at position %d: %s", name,
                         (int)(at - name), why);
}

/* "*" for a wildcard; otherwise the number into *val. */
static const char *consume_index(const char **s, bool *has, int *val) {
  *has = !consume(s, "*");
  return *has ? consume_number(s, val) : NULL;
}

tfd_code tfd_device_name_parse(const char *name, tfd_parsed_name *p, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_device_name_parse", "out", p)) return TFD_INVALID_ARGUMENT;
  memset(p, 0, sizeof *p);
  if (tfd_arg_required(status, "tfd_device_name_parse", "name", name)) return TFD_INVALID_ARGUMENT;
  const char *s = name;
  if (strcmp(s, "/") == 0) return TFD_OK;
  while (*s) {
    bool progress = false;
    const char *why = NULL, *at = s;
    if (consume(&s, "/job:")) {
      p->has_job = !consume(&s, "*");
      at = s;
      if (p->has_job && (why = consume_part(&s, p->job, "/"))) return parse_error(status, name, at, why);
      progress = true;
    }
    if (consume(&s, "/replica:")) {
      at = s;
      if ((why = consume_index(&s, &p->has_replica, &p->replica))) return parse_error(status, name, at, why);
      progress = true;
    }
    if (consume(&s, "/task:")) {
      at = s;
      if ((why = consume_index(&s, &p->has_task, &p->task))) return parse_error(status, name, at, why);
      progress = true;
    }
    if (consume(&s, "/device:")) {
      p->has_type = !consume(&s, "*");
      at = s;
      if (p->has_type && (why = consume_part(&s, p->type, "/:"))) return parse_error(status, name, at, why);
      if (!consume(&s, ":")) {
        p->has_id = false;
      } else {
        at = s;
        if ((why = consume_index(&s, &p->has_id, &p->id))) return parse_error(status, name, at, why);
      }
      progress = true;
    }
    /* Legacy spellings: /cpu:0 and /gpu:0 mean /device:CPU:0 and /device:GPU:0. */
    static const char *const legacy[][2] = {{"/cpu:", "CPU"}, {"/CPU:", "CPU"}, {"/gpu:", "GPU"}, {"/GPU:", "GPU"}};
    for (size_t i = 0; i < 4; i++) {
      if (consume(&s, legacy[i][0])) {
        p->has_type = true;
        strcpy(p->type, legacy[i][1]);
        at = s;
        if ((why = consume_index(&s, &p->has_id, &p->id))) return parse_error(status, name, at, why);
        progress = true;
      }
    }
    if (!progress)
      return parse_error(status, name, s,
                         "expected one of /job:, /replica:, /task:, /device:, /cpu:, /gpu: "
                         "(full names look like /job:localhost/replica:0/task:0/device:CPU:0)");
  }
  return TFD_OK;
}

bool tfd_device_name_parse_local(const char *name, tfd_parsed_name *p) {
  memset(p, 0, sizeof *p);
  const char *s = name;
  if (consume_part(&s, p->type, "/:")) return false;
  p->has_type = true;
  if (!consume(&s, ":")) return false;
  if (consume_number(&s, &p->id)) return false;
  p->has_id = true;
  return *s == 0;
}

bool tfd_device_name_is_complete(const tfd_parsed_name *p) {
  return p->has_job && p->has_replica && p->has_task && p->has_type && p->has_id;
}

static tfd_code need_complete(const tfd_parsed_name *p, tfd_status *status) {
  if (tfd_device_name_is_complete(p)) return TFD_OK;
  char spec[TFD_DEVICE_NAME_MAX];
  tfd_device_name_canonical(p, spec);
  return tfd_status_setf(status, TFD_INVALID_ARGUMENT,
                         "device spec '%s' is not complete: job, replica, task, type and id are all needed", spec);
}

static tfd_code need_type_id(const tfd_parsed_name *p, tfd_status *status) {
  if (p->has_type && p->has_id) return TFD_OK;
  char spec[TFD_DEVICE_NAME_MAX];
  tfd_device_name_canonical(p, spec);
  return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "device spec '%s' needs a device type and id", spec);
}

tfd_code tfd_device_name_full(const tfd_parsed_name *p, char *out, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_device_name_full", "p", p) || tfd_arg_required(status, "tfd_device_name_full", "out", out))
    return TFD_INVALID_ARGUMENT;
  if (need_complete(p, status) != TFD_OK) return TFD_INVALID_ARGUMENT;
  snprintf(out, TFD_DEVICE_NAME_MAX, "/job:%s/replica:%d/task:%d/device:%s:%d", p->job, p->replica, p->task, p->type,
           p->id);
  return TFD_OK;
}

static void lower(char *dst, const char *src) {
  for (; *src; src++) *dst++ = (char)tolower((unsigned char)*src);
  *dst = 0;
}

tfd_code tfd_device_name_legacy(const tfd_parsed_name *p, char *out, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_device_name_legacy", "p", p) || tfd_arg_required(status, "tfd_device_name_legacy", "out", out))
    return TFD_INVALID_ARGUMENT;
  if (need_complete(p, status) != TFD_OK) return TFD_INVALID_ARGUMENT;
  char type[TFD_NAME_PART_MAX];
  lower(type, p->type);
  snprintf(out, TFD_DEVICE_NAME_MAX, "/job:%s/replica:%d/task:%d/%s:%d", p->job, p->replica, p->task, type, p->id);
  return TFD_OK;
}

tfd_code tfd_device_name_local(const tfd_parsed_name *p, char *out, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_device_name_local", "p", p) || tfd_arg_required(status, "tfd_device_name_local", "out", out))
    return TFD_INVALID_ARGUMENT;
  if (need_type_id(p, status) != TFD_OK) return TFD_INVALID_ARGUMENT;
  snprintf(out, TFD_DEVICE_NAME_MAX, "/device:%s:%d", p->type, p->id);
  return TFD_OK;
}

tfd_code tfd_device_name_legacy_local(const tfd_parsed_name *p, char *out, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_device_name_legacy_local", "p", p) || tfd_arg_required(status, "tfd_device_name_legacy_local", "out", out))
    return TFD_INVALID_ARGUMENT;
  if (need_type_id(p, status) != TFD_OK) return TFD_INVALID_ARGUMENT;
  snprintf(out, TFD_DEVICE_NAME_MAX, "%s:%d", p->type, p->id);
  return TFD_OK;
}

void tfd_device_name_canonical(const tfd_parsed_name *p, char *out) {
  size_t n = 0, cap = TFD_DEVICE_NAME_MAX;
  out[0] = 0;
  if (p->has_job) n += (size_t)snprintf(out + n, cap - n, "/job:%s", p->job);
  if (p->has_replica) n += (size_t)snprintf(out + n, cap - n, "/replica:%d", p->replica);
  if (p->has_task) n += (size_t)snprintf(out + n, cap - n, "/task:%d", p->task);
  if (p->has_type) {
    if (p->has_id)
      snprintf(out + n, cap - n, "/device:%s:%d", p->type, p->id);
    else
      snprintf(out + n, cap - n, "/device:%s:*", p->type);
  }
}

/* CompleteName: fills the parts `name` lacks from `base`. */
static void complete_name(const tfd_parsed_name *base, tfd_parsed_name *name) {
  if (!name->has_job) {
    strcpy(name->job, base->job);
    name->has_job = true;
  }
  if (!name->has_replica) {
    name->replica = base->replica;
    name->has_replica = true;
  }
  if (!name->has_task) {
    name->task = base->task;
    name->has_task = true;
  }
  if (!name->has_type) {
    strcpy(name->type, base->type);
    name->has_type = true;
  }
  if (!name->has_id) {
    name->id = base->id;
    name->has_id = true;
  }
}

tfd_code tfd_device_name_canonicalize(const char *name, const char *basename, char *out, tfd_status *status) {
  tfd_status_reset(status);
  static const char fn[] = "tfd_device_name_canonicalize";
  if (tfd_arg_required(status, fn, "name", name) || tfd_arg_required(status, fn, "basename", basename) ||
      tfd_arg_required(status, fn, "out", out))
    return TFD_INVALID_ARGUMENT;
  tfd_parsed_name base, p;
  out[0] = 0;
  tfd_status ignore = TFD_STATUS_INIT;
  if (tfd_device_name_parse(basename, &base, &ignore) != TFD_OK) {
    tfd_status_clear(&ignore);
    return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "could not parse basename '%s' into a device specification",
                           basename);
  }
  if (!tfd_device_name_is_complete(&base))
    return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "basename '%s' should be fully specified", basename);
  if (!tfd_device_name_parse_local(name, &p) && tfd_device_name_parse(name, &p, &ignore) != TFD_OK) {
    tfd_status_clear(&ignore);
    return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "could not parse '%s' into a device specification", name);
  }
  complete_name(&base, &p);
  tfd_device_name_canonical(&p, out);
  return TFD_OK;
}

bool tfd_device_name_is_specification(const tfd_parsed_name *spec, const tfd_parsed_name *name) {
  if (spec->has_job && (!name->has_job || strcmp(spec->job, name->job) != 0)) return false;
  if (spec->has_replica && (!name->has_replica || spec->replica != name->replica)) return false;
  if (spec->has_task && (!name->has_task || spec->task != name->task)) return false;
  if (spec->has_type && (!name->has_type || strcmp(spec->type, name->type) != 0)) return false;
  if (spec->has_id && (!name->has_id || spec->id != name->id)) return false;
  return true;
}

tfd_code tfd_device_name_is_complete_specification(const tfd_parsed_name *pattern, const tfd_parsed_name *name,
                                                   bool *matches, tfd_status *status) {
  tfd_status_reset(status);
  static const char fn[] = "tfd_device_name_is_complete_specification";
  if (tfd_arg_required(status, fn, "pattern", pattern) || tfd_arg_required(status, fn, "name", name) ||
      tfd_arg_required(status, fn, "matches", matches))
    return TFD_INVALID_ARGUMENT;
  if (need_complete(name, status) != TFD_OK) return TFD_INVALID_ARGUMENT;
  /* name has every part, so matching a complete name is IsSpecification. */
  *matches = tfd_device_name_is_specification(pattern, name);
  return TFD_OK;
}

bool tfd_device_name_is_same_address_space(const tfd_parsed_name *a, const tfd_parsed_name *b) {
  return a->has_job && b->has_job && strcmp(a->job, b->job) == 0 && a->has_replica && b->has_replica &&
         a->replica == b->replica && a->has_task && b->has_task && a->task == b->task;
}

static tfd_code merge_conflict(tfd_status *status, const char *what, const tfd_parsed_name *a,
                               const tfd_parsed_name *b) {
  char sa[TFD_DEVICE_NAME_MAX], sb[TFD_DEVICE_NAME_MAX];
  tfd_device_name_canonical(a, sa);
  tfd_device_name_canonical(b, sb);
  return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "Cannot merge devices with incompatible %s: '%s' and '%s'",
                         what, sa, sb);
}

tfd_code tfd_device_name_merge(tfd_parsed_name *target, const tfd_parsed_name *other, bool allow_soft_placement,
                               tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_device_name_merge", "target", target) ||
      tfd_arg_required(status, "tfd_device_name_merge", "other", other))
    return TFD_INVALID_ARGUMENT;
  tfd_parsed_name t = *target; /* work on a copy so target is untouched on error */
  if (other->has_job) {
    if (t.has_job && strcmp(t.job, other->job) != 0) return merge_conflict(status, "jobs", target, other);
    t.has_job = true;
    strcpy(t.job, other->job);
  }
  if (other->has_replica) {
    if (t.has_replica && t.replica != other->replica) return merge_conflict(status, "replicas", target, other);
    t.has_replica = true;
    t.replica = other->replica;
  }
  if (other->has_task) {
    if (t.has_task && t.task != other->task) return merge_conflict(status, "tasks", target, other);
    t.has_task = true;
    t.task = other->task;
  }
  if (other->has_type) {
    if (t.has_type && strcmp(t.type, other->type) != 0) {
      if (!allow_soft_placement) return merge_conflict(status, "types", target, other);
      t.has_type = false;
      t.has_id = false;
      *target = t;
      return TFD_OK;
    }
    t.has_type = true;
    strcpy(t.type, other->type);
  }
  if (other->has_id) {
    if (t.has_id && t.id != other->id) {
      if (!allow_soft_placement) return merge_conflict(status, "ids", target, other);
      t.has_id = false;
      *target = t;
      return TFD_OK;
    }
    t.has_id = true;
    t.id = other->id;
  }
  *target = t;
  return TFD_OK;
}

tfd_code tfd_device_name_split(const char *name, char *task_out, char *device_out, tfd_status *status) {
  tfd_status_reset(status);
  static const char fn[] = "tfd_device_name_split";
  if (tfd_arg_required(status, fn, "name", name) || tfd_arg_required(status, fn, "task_out", task_out) ||
      tfd_arg_required(status, fn, "device_out", device_out))
    return TFD_INVALID_ARGUMENT;
  tfd_parsed_name p;
  if (tfd_device_name_parse(name, &p, status) != TFD_OK) return TFD_INVALID_ARGUMENT;
  if (!p.has_type || !p.has_id)
    return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "cannot split '%s': it names no device type and id", name);
  size_t n = 0, cap = TFD_DEVICE_NAME_MAX;
  task_out[0] = 0;
  if (p.has_job) n += (size_t)snprintf(task_out + n, cap - n, "/job:%s", p.job);
  if (p.has_replica) n += (size_t)snprintf(task_out + n, cap - n, "/replica:%d", p.replica);
  if (p.has_task) snprintf(task_out + n, cap - n, "/task:%d", p.task);
  snprintf(device_out, TFD_DEVICE_NAME_MAX, "%s:%d", p.type, p.id);
  return TFD_OK;
}
