/* The one place that picks a model's format: reads a file, or finds the model file in a folder
 * (model.json, a single .pb or TensorFlow.js JSON, a SavedModel's saved_model.pb), tells a binary
 * GraphDef from TensorFlow.js JSON (by tfd_graph_def_options.format or by the content), hands it to
 * its reader (graph_def_pb.c, graph_def_json.c) and refuses a graph whose ops tfdev lacks, naming
 * them all. A new format is a new reader and a case here. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/api_args.h"
#include "../core/status_internal.h"
#include "../framework/graph_def_internal.h"
#include "../ops/op_registry.h"
#include "readers.h"
/* A model file, named by the caller: a regular file only (a FIFO would block, a device such as
 * /dev/zero never end, a directory is no model), read whole. */
char *tfd_read_file(const char *path, size_t *size, tfd_status *st) {
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    tfd_status_setf(st, errno == ENOENT ? TFD_NOT_FOUND : TFD_PERMISSION_DENIED, "%s: %s", path, strerror(errno));
    return NULL;
  }
  struct stat sb;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    bool dir = S_ISDIR(sb.st_mode);
    close(fd);
    tfd_status_setf(st, TFD_INVALID_ARGUMENT, "%s: %s", path,
                    dir ? "is a directory, not a file" : "is not a regular file (a device, FIFO or socket)");
    return NULL;
  }
  /* The size told is where reading starts; a file that grows meanwhile is read to its end. */
  size_t cap = (size_t)sb.st_size + 1, len = 0;
  char *buf = (uint64_t)sb.st_size < SIZE_MAX / 2 ? malloc(cap) : NULL;
  for (;;) {
    if (buf && len == cap) {
      char *b = cap < SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
      if (!b) free(buf);
      buf = b;
      cap *= 2;
    }
    if (!buf) {
      close(fd);
      tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "%s: out of memory reading the file (%lld bytes)", path,
                      (long long)sb.st_size);
      return NULL;
    }
    ssize_t got = read(fd, buf + len, cap - len);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      int why = errno;
      free(buf);
      close(fd);
      tfd_status_setf(st, TFD_DATA_LOSS, "%s: read error: %s", path, strerror(why));
      return NULL;
    }
    if (got == 0) break;
    len += (size_t)got;
  }
  close(fd);
  *size = len;
  return buf;
}

/* A loaded model whose ops tfdev lacks is refused with every such op and the nodes that use it,
 * so one error lists all that a port needs (TensorFlow names only the first). */
static tfd_code check_ops(const tfd_graph_def *g, tfd_status *st) {
  char *msg = NULL;
  size_t len = 0, missing = 0;
  FILE *f = open_memstream(&msg, &len);
  if (!f) return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  for (size_t i = 0; i < g->n; i++) {
    const char *op = g->nodes[i]->op;
    if (tfd_op_lookup(op)) continue;
    bool seen = false;
    for (size_t k = 0; k < i && !seen; k++) seen = strcmp(g->nodes[k]->op, op) == 0;
    if (seen) continue;
    size_t users = 0;
    for (size_t k = i; k < g->n; k++) users += strcmp(g->nodes[k]->op, op) == 0;
    fprintf(f, "%s'%s' (node%s", missing++ ? "; " : "", op, users == 1 ? "" : "s");
    for (size_t k = i, shown = 0; k < g->n && shown < 8; k++)
      if (strcmp(g->nodes[k]->op, op) == 0) fprintf(f, "%s '%s'", shown++ ? "," : "", g->nodes[k]->name);
    if (users > 8) fprintf(f, " and %zu more", users - 8);
    fprintf(f, ")");
  }
  fclose(f);
  tfd_code code = TFD_OK;
  if (missing)
    code = tfd_status_setf(st, TFD_NOT_FOUND, "the graph uses %zu op type%s tfdev does not have: %s", missing,
                           missing == 1 ? "" : "s", msg ? msg : "");
  free(msg);
  return code;
}

/* Whether the model is TensorFlow.js JSON (else a binary GraphDef), told by options->format or by the
 * content; false for an unknown format name. */
static bool model_format(const void *data, size_t size, const tfd_graph_def_options *o, bool *json) {
  const char *format = o && o->format ? o->format : "auto";
  if (strcmp(format, "auto") == 0) {
    /* JSON opens with '{' (after white space); a binary GraphDef never does (0x7b is no field tag it uses). */
    const char *c = data;
    size_t i = 0;
    while (i < size && (c[i] == ' ' || c[i] == '\t' || c[i] == '\n' || c[i] == '\r')) i++;
    *json = i < size && c[i] == '{';
    return true;
  }
  *json = strcmp(format, "tfjs") == 0;
  return *json || strcmp(format, "graph_def") == 0;
}

/* Only the nodes' names and ops of a model (either format), so a model whose attrs or tensors tfdev
 * cannot read is still told every op it lacks first: that is the port's first question. NULL when
 * even that cannot be read. */
static tfd_graph_def *ops_only(const void *data, size_t size, bool json) {
  return json ? tfd_graph_def_json_ops_only(data, size) : tfd_graph_def_pb_ops_only(data, size);
}

/* A weight reader for models given from memory with no way to their weights. */
static unsigned char *no_weight_files(void *arg, const char *name, size_t *len, tfd_status *st) {
  (void)arg, (void)len;
  tfd_status_setf(st, TFD_FAILED_PRECONDITION,
                  "weight file %s: a model parsed from memory reads its weights through the options (a reader, or "
                  "weights_dir)",
                  name);
  return NULL;
}

/* Either format, told by options->format or by the content; path (NULL from memory) names the
 * model in messages and, without other options, is where its weight files are. */
static tfd_graph_def *parse_model(const void *data, size_t size, const char *path, const tfd_graph_def_options *o,
                                  tfd_status *st) {
  bool json;
  if (!model_format(data, size, o, &json)) {
    tfd_status_setf(st, TFD_INVALID_ARGUMENT, "unknown model format '%s' (\"auto\", \"graph_def\" or \"tfjs\")",
                    o->format);
    return NULL;
  }
  if (json) {
    tfd_graph_def *g;
    if (o && o->weights)
      g = tfd_graph_def_parse_json_model_with(data, size, path, o->weights, o->weights_arg, st);
    else if (o && o->weights_dir)
      g = tfd_graph_def_parse_json_model_in_dir(data, size, path, o->weights_dir, st);
    else if (path)
      g = tfd_graph_def_parse_json_model(data, size, path, st);
    else
      g = tfd_graph_def_parse_json_model_with(data, size, NULL, no_weight_files, NULL, st);
    if (g && !(o && o->keep_devices)) /* TensorFlow.js's reading (tfd_graph_def_options.keep_devices) */
      for (size_t i = 0, n = tfd_graph_def_num_nodes(g); i < n; i++) {
        tfd_node_def *nd = tfd_graph_def_node(g, i);
        if (*tfd_node_def_device(nd) && tfd_node_def_set_device(nd, "", st) != TFD_OK) {
          tfd_graph_def_free(g);
          return NULL;
        }
      }
    return g;
  }
  tfd_graph_def *g = NULL;
  tfd_graph_def_parse(data, size, &g, st);
  if (!g && path) tfd_status_prefixf(st, "%s: ", path);
  return g;
}

static tfd_graph_def *parse_with_options(const void *data, size_t size, const tfd_graph_def_options *options,
                                                tfd_status *st) {
  tfd_status_reset(st);
  if (!data && size) {
    tfd_status_setf(st, TFD_INVALID_ARGUMENT, "tfd_graph_def_parse_with_options: no data");
    return NULL;
  }
  return parse_model(data ? data : "", size, NULL, options, st);
}

tfd_code tfd_graph_def_parse_with_options(const void *data, size_t size, const tfd_graph_def_options *options,
                                          tfd_graph_def **out, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_graph_def_parse_with_options", "out", out)) return TFD_INVALID_ARGUMENT;
  tfd_status local = TFD_STATUS_INIT;
  *out = parse_with_options(data, size, options, &local);
  return tfd_status_move(status, &local);
}

static bool has_suffix(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n > k && strcmp(s + n - k, suffix) == 0;
}

/* Whether a .json file is a TensorFlow.js model (its text has "modelTopology" near the start), not
 * something kept beside one (reference outputs, a weights manifest of its own). */
static bool json_is_model(const char *path) {
  /* Non-blocking, and regular files only: a FIFO named x.json must not hang the listing. */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  struct stat info;
  if (fd < 0) return false;
  FILE *f = fstat(fd, &info) == 0 && S_ISREG(info.st_mode) ? fdopen(fd, "rb") : NULL;
  if (!f) {
    close(fd);
    return false;
  }
  static const size_t cap = 1 << 20; /* the key comes before the topology's bulk */
  char *buf = malloc(cap + 1);
  size_t n = buf ? fread(buf, 1, cap, f) : 0;
  fclose(f);
  if (!buf) return false;
  buf[n] = 0;
  bool yes = strstr(buf, "\"modelTopology\"") != NULL;
  free(buf);
  return yes;
}

/* The last part of a directory's path ("a/b/facemesh/" -> "facemesh"), as a new string. */
static char *base_name(const char *dir) {
  size_t end = strlen(dir);
  while (end > 1 && dir[end - 1] == '/') end--;
  size_t start = end;
  while (start > 0 && dir[start - 1] != '/') start--;
  return tfd_format("%.*s", (int)(end - start), dir + start);
}

/* A model directory (what TensorFlow.js's converter writes, or a folder holding one frozen .pb)
 * names its model file: model.json when there; else its only model file (a .pb, or a .json that is
 * a TensorFlow.js model: reference outputs and other JSON beside it do not count); else, of several,
 * the one named after the directory (facemesh/facemesh.json). A new string (caller frees), or NULL
 * with INVALID_ARGUMENT listing what the directory holds. */
/* Whether dir holds a SavedModel: saved_model.pb (or .pbtxt) in it, or in a version folder under it
 * (TensorFlow Serving's layout, dir/00000123/saved_model.pb); *folder: that folder (caller frees). */
static bool saved_model_in(const char *dir, char **folder) {
  static const char *const files[] = {"saved_model.pb", "saved_model.pbtxt"};
  struct stat info;
  for (size_t i = 0; i < 2; i++) {
    char *f = tfd_format("%s/%s", dir, files[i]);
    bool found = f && stat(f, &info) == 0 && S_ISREG(info.st_mode);
    free(f);
    if (found) return (*folder = tfd_format("%s", dir)) != NULL;
  }
  DIR *d = opendir(dir);
  if (!d) return false;
  bool found = false;
  for (struct dirent *e; !found && (e = readdir(d));) {
    if (!*e->d_name || strspn(e->d_name, "0123456789") != strlen(e->d_name)) continue;
    char *sub = tfd_format("%s/%s", dir, e->d_name), *f = sub ? tfd_format("%s/saved_model.pb", sub) : NULL;
    found = f && stat(f, &info) == 0 && S_ISREG(info.st_mode);
    free(f);
    if (found)
      *folder = sub;
    else
      free(sub);
  }
  closedir(d);
  return found && *folder;
}

static char *model_in_directory(const char *dir, tfd_status *st) {
  char *saved = NULL;
  if (saved_model_in(dir, &saved)) {
    tfd_status_setf(st, TFD_UNIMPLEMENTED,
                    "%s is a TensorFlow SavedModel directory (saved_model.pb); " TFD_SAVED_MODEL_ADVICE, saved);
    free(saved);
    return NULL;
  }
  DIR *d = opendir(dir);
  if (!d) {
    tfd_status_setf(st, TFD_PERMISSION_DENIED, "%s: %s", dir, strerror(errno));
    return NULL;
  }
  char *found = NULL, *names = NULL, *named = NULL, *base = base_name(dir);
  size_t names_len = 0;
  FILE *list = open_memstream(&names, &names_len);
  int count = 0;
  bool model_json = false, oom = !base;
  for (struct dirent *e; (e = readdir(d)) && !oom;) {
    bool json = has_suffix(e->d_name, ".json");
    if (!json && !has_suffix(e->d_name, ".pb")) continue;
    char *file = tfd_format("%s/%s", dir, e->d_name);
    if (!file) {
      oom = true;
      break;
    }
    struct stat info;
    if (stat(file, &info) != 0 || !S_ISREG(info.st_mode) || (json && !json_is_model(file))) {
      free(file); /* a directory, FIFO or device named x.pb is no model file */
      continue;
    }
    if (strcmp(e->d_name, "model.json") == 0) model_json = true;
    if (list) fprintf(list, "%s%s", count ? ", " : "", e->d_name);
    size_t stem = strlen(e->d_name) - (json ? 5 : 3);
    if (!named && base && strlen(base) == stem && strncmp(e->d_name, base, stem) == 0) named = tfd_format("%s", file);
    if (count++ == 0)
      found = file;
    else
      free(file);
  }
  closedir(d);
  if (list) fclose(list);
  if (oom) {
    free(found);
    found = NULL;
  } else if (model_json) {
    free(found);
    found = tfd_format("%s/model.json", dir);
  } else if (count > 1 && named) {
    free(found);
    found = named;
    named = NULL;
  } else if (count != 1) {
    free(found);
    found = NULL;
    if (count == 0)
      tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                      "%s is a directory with no model file in it (a .pb, or a TensorFlow.js model .json)", dir);
    else
      tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                      "%s is a directory with several model files (%s) and none named model.json or after the "
                      "directory: name one",
                      dir, names ? names : "?");
    free(names);
    free(named);
    free(base);
    return NULL;
  }
  free(names);
  free(named);
  free(base);
  if (!found) tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  return found;
}

static tfd_graph_def *load_with_options(const char *path, const tfd_graph_def_options *options, tfd_status *st) {
  tfd_status_reset(st);
  if (!path) {
    tfd_status_setf(st, TFD_INVALID_ARGUMENT, "tfd_graph_def_load: no path");
    return NULL;
  }
  struct stat info;
  if (stat(path, &info) == 0 && S_ISDIR(info.st_mode)) {
    char *file = model_in_directory(path, st);
    if (!file) return NULL;
    tfd_graph_def *g = NULL;
    tfd_graph_def_load_with_options(file, options, &g, st);
    free(file);
    return g;
  }
  size_t size = 0;
  char *data = tfd_read_file(path, &size, st);
  if (!data) return NULL;
  tfd_graph_def *g = parse_model(data, size, path, options, st);
  bool json;
  if (!g && tfd_status_code(st) != TFD_RESOURCE_EXHAUSTED && model_format(data, size, options, &json)) {
    /* A node tfdev cannot read (a dtype it lacks, say) may belong to an op it lacks as well: the ops
     * come first. */
    tfd_graph_def *ops = ops_only(data, size, json);
    tfd_status missing = TFD_STATUS_INIT;
    if (ops && check_ops(ops, &missing) != TFD_OK)
      tfd_status_setf(st, tfd_status_code(&missing), "%s: %s", path, tfd_status_message(&missing));
    tfd_status_clear(&missing);
    tfd_graph_def_free(ops);
  }
  free(data);
  if (g && check_ops(g, st) != TFD_OK) {
    tfd_status_prefixf(st, "%s: ", path);
    tfd_graph_def_free(g);
    g = NULL;
  }
  if (g && tfd_graph_def_num_nodes(g) == 0) { /* an empty graph in memory is fine; a model file of none is a mistake */
    tfd_status_setf(st, TFD_INVALID_ARGUMENT, "%s: the model has no nodes", path);
    tfd_graph_def_free(g);
    g = NULL;
  }
  return g;
}

tfd_code tfd_graph_def_load_with_options(const char *path, const tfd_graph_def_options *options, tfd_graph_def **out,
                                         tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_graph_def_load_with_options", "out", out)) return TFD_INVALID_ARGUMENT;
  tfd_status local = TFD_STATUS_INIT;
  *out = load_with_options(path, options, &local);
  return tfd_status_move(status, &local);
}

tfd_code tfd_graph_def_load(const char *path, tfd_graph_def **out, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_graph_def_load", "out", out)) return TFD_INVALID_ARGUMENT;
  tfd_status local = TFD_STATUS_INIT;
  *out = load_with_options(path, NULL, &local);
  return tfd_status_move(status, &local);
}
