/* Loading device backend modules (see tfdev/backend.h and backend_module.h): finding the file,
 * dlopen, the ABI check, the record of what was tried, and the host table a module calls back
 * through. The records are a process-wide registry: a module is loaded at most once per process
 * and never unloaded (its threads and its CUDA context may outlive any caller). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr */
#endif
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/api_args.h"
#include "../core/allocator_internal.h"
#include "../core/status_internal.h"
#include "backend_module.h"
#include "tfdev/backend.h"
#include "visible_devices.h"

#define MAX_BACKENDS 8

typedef struct backend_record {
  char name[32];
  bool loaded;
  int num_devices;
  char path[PATH_MAX];
  char why[PATH_MAX + 512];
  const tfd_backend_module *module;
  bool kernels_asked; /* register_kernels has been called */
} backend_record;

static backend_record records[MAX_BACKENDS];
static size_t num_records;
static pthread_mutex_t records_mu = PTHREAD_MUTEX_INITIALIZER;
/* A module has loaded whose kernels nobody has asked for yet: the kernel registry's misses (every
 * (op, GPU) pair the placer tries) look at this before taking records_mu. */
static atomic_bool kernels_pending;

/* ---- the host table ---- */
static tfd_code host_status_setv(tfd_status *st, tfd_code code, const char *fmt, va_list ap) {
  char msg[1024];
  vsnprintf(msg, sizeof msg, fmt, ap);
  return tfd_status_setf(st, code, "%s", msg);
}

static void host_log(tfd_log_level level, const char *msg) { tfd_log(level, "%s", msg); }

static const tfd_backend_host host_table = {
    TFD_BACKEND_ABI,
    host_status_setv,
    host_log,
    tfd_log_enabled,
    tfd_device_init,
    tfd_device_fini,
    tfd_device_default_compute,
    tfd_device_default_compute_async,
    tfd_device_default_fill_context_map,
    tfd_cpu_device_new,
    tfd_cpu_devices_create,
    tfd_device_unref,
    tfd_device_list_push,
    tfd_device_factory_new,
    tfd_device_factory_unref,
    tfd_factory_registry_register,
    tfd_session_options_device_count,
    tfd_session_options_visible_devices,
    tfd_session_options_gpu_memory_fraction,
    tfd_session_options_gpu_allow_growth,
    tfd_session_options_gpu_sync_every_op,
    tfd_session_options_gpu_max_streams,
    tfd_session_options_intra_op_threads,
    tfd_session_options_use_global_threadpool,
    tfd_parse_visible_devices,
    tfd_allocator_init,
    tfd_allocator_fini,
    tfd_cpu_allocator_new,
    tfd_allocator_unref,
    tfd_allocator_allocate,
    tfd_allocator_deallocate,
};

const tfd_backend_host *tfd_backend_host_table(void) { return &host_table; }

/* ---- finding and loading a module ---- */
static bool valid_name(const char *name) {
  size_t n = name ? strlen(name) : 0;
  if (n == 0 || n >= sizeof records[0].name) return false;
  for (size_t i = 0; i < n; i++)
    if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9') || name[i] == '_')) return false;
  return true;
}

/* Tries dir/file; on success fills r->path and returns the handle. Keeps the first dlopen error
 * that is not "no such file": a module that exists but cannot load (its CUDA runtime missing) says so. */
static void *try_open(backend_record *r, const char *dir, const char *file, char *first_error, size_t cap) {
  char path[PATH_MAX];
  if (dir) {
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, file) >= sizeof path) return NULL;
    if (access(path, F_OK) != 0) return NULL;
  } else {
    snprintf(path, sizeof path, "%s", file);
  }
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (h) {
    char real[PATH_MAX];
    snprintf(r->path, sizeof r->path, "%s", dir && realpath(path, real) ? real : path);
    return h;
  }
  const char *err = dlerror();
  if (err && !first_error[0] && (dir || !strstr(err, "No such file"))) snprintf(first_error, cap, "%s", err);
  return NULL;
}

/* The directory of the object (library or executable) holding this code. */
static bool own_dir(char *out, size_t cap) {
  Dl_info info;
  if (!dladdr((void *)&tfd_backend_load, &info) || !info.dli_fname) return false;
  char resolved[PATH_MAX];
  const char *f = info.dli_fname;
  if (!strchr(f, '/')) { /* the executable itself, found on PATH */
    ssize_t n = readlink("/proc/self/exe", resolved, sizeof resolved - 1);
    if (n <= 0) return false;
    resolved[n] = 0;
    f = resolved;
  }
  const char *slash = strrchr(f, '/');
  if ((size_t)(slash - f) >= cap) return false;
  memcpy(out, f, (size_t)(slash - f));
  out[slash - f] = 0;
  return true;
}

static void *open_module(backend_record *r, char *first_error, size_t cap) {
  char file[64];
  snprintf(file, sizeof file, "libtfdev_%s.so", r->name);
  void *h = NULL;
  const char *env = getenv("TFDEV_BACKEND_PATH");
  if (env && *env) {
    char *dirs = strdup(env), *save = NULL;
    for (char *d = dirs ? strtok_r(dirs, ":", &save) : NULL; d && !h; d = strtok_r(NULL, ":", &save))
      h = try_open(r, d, file, first_error, cap);
    free(dirs);
  }
  char dir[PATH_MAX], up[PATH_MAX + 16];
  if (!h && own_dir(dir, sizeof dir)) {
    /* lib/ (libtfdev.so), bin/../lib (the tfdev executable), lib/lua/5.4/tfdev/../../.. (core.so) */
    static const char *const rel[] = {"", "/../lib", "/../../.."};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0] && !h; i++) {
      snprintf(up, sizeof up, "%s%s", dir, rel[i]);
      h = try_open(r, up, file, first_error, cap);
    }
  }
  if (!h) h = try_open(r, NULL, file, first_error, cap);
  return h;
}

static void load_record(backend_record *r) {
  char first_error[512] = "";
  void *h = open_module(r, first_error, sizeof first_error);
  if (!h) {
    if (first_error[0])
      snprintf(r->why, sizeof r->why, "libtfdev_%s.so did not load: %s", r->name, first_error);
#ifdef TFDEV_WITH_CUDA
    else if (strcmp(r->name, "cuda") == 0)
      snprintf(r->why, sizeof r->why, "backend not found: libtfdev_cuda.so is not beside the runtime nor on TFDEV_BACKEND_PATH");
#endif
    else
      snprintf(r->why, sizeof r->why, "backend not built: no libtfdev_%s.so", r->name);
    return;
  }
  tfd_backend_module_entry_fn entry;
  *(void **)&entry = dlsym(h, TFD_BACKEND_ENTRY);
  const tfd_backend_module *m = entry ? entry() : NULL;
  if (!m || m->abi != TFD_BACKEND_ABI || !m->name || strcmp(m->name, r->name) != 0 || !m->init ||
      !m->register_factories) {
    snprintf(r->why, sizeof r->why, "%s is not a tfdev %s backend of ABI %d", r->path, r->name, TFD_BACKEND_ABI);
    return; /* left open: unloading a half-initialised module is riskier than keeping it */
  }
  r->module = m;
  r->loaded = true;
  atomic_store(&kernels_pending, true);
  r->num_devices = m->init(&host_table, r->why, sizeof r->why);
  if (r->num_devices < 0) r->num_devices = 0;
  if (r->num_devices > 0) r->why[0] = 0;
}

static void fill_info(const backend_record *r, tfd_backend_info *info) {
  if (info) *info = (tfd_backend_info){r->name, r->loaded, r->num_devices, r->path, r->why};
}

tfd_code tfd_backend_load(const char *name, tfd_backend_info *info, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_backend_load", "name", name)) return TFD_INVALID_ARGUMENT;
  if (!valid_name(name))
    return tfd_status_setf(status, TFD_INVALID_ARGUMENT,
                           "backend names are short lower-case words (\"cuda\"), got '%s'", name ? name : "(null)");
  pthread_mutex_lock(&records_mu);
  backend_record *r = NULL;
  for (size_t i = 0; i < num_records && !r; i++)
    if (strcmp(records[i].name, name) == 0) r = &records[i];
  bool fresh = false;
  if (!r && num_records < MAX_BACKENDS) {
    r = &records[num_records++];
    snprintf(r->name, sizeof r->name, "%s", name);
    load_record(r);
    fresh = true;
  }
  pthread_mutex_unlock(&records_mu);
  if (!r) return tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "at most %d backends can be tried", MAX_BACKENDS);
  if (fresh && r->why[0]) tfd_log(TFD_LOG_INFO, "backend %s: %s%s", r->name, r->loaded ? "0 devices: " : "", r->why);
  fill_info(r, info);
  if (r->loaded) return TFD_OK;
  return tfd_status_setf(status, TFD_NOT_FOUND, "backend %s: %s", r->name, r->why);
}

tfd_code tfd_backend_register_factories(const char *name, tfd_factory_registry *reg, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_backend_register_factories", "name", name) ||
      tfd_arg_required(status, "tfd_backend_register_factories", "r", reg))
    return TFD_INVALID_ARGUMENT;
  tfd_backend_info info = {0};
  tfd_code code = tfd_backend_load(name, &info, NULL);
  if (code == TFD_INVALID_ARGUMENT) return tfd_backend_load(name, NULL, status);
  if (code != TFD_OK)
    return tfd_status_setf(status, TFD_FAILED_PRECONDITION, "backend %s is not loaded: %s", name, info.why);
  const tfd_backend_module *m = NULL;
  pthread_mutex_lock(&records_mu);
  for (size_t i = 0; i < num_records; i++)
    if (records[i].name == info.name) m = records[i].module; /* info points into its record */
  pthread_mutex_unlock(&records_mu);
  return m->register_factories(reg, status);
}

tfd_code tfd_backend_register_kernels(const tfd_backend_kernel_api *api, tfd_status *status) {
  if (!atomic_load(&kernels_pending)) return TFD_OK;
  tfd_code code = TFD_OK;
  pthread_mutex_lock(&records_mu);
  atomic_store(&kernels_pending, false); /* under the lock: a module loading now sets it again after */
  for (size_t i = 0; i < num_records; i++) {
    backend_record *r = &records[i];
    if (!r->loaded || r->kernels_asked) continue;
    r->kernels_asked = true;
    tfd_status st = TFD_STATUS_INIT;
    if (r->module->register_kernels && r->module->register_kernels(api, &st) != TFD_OK) {
      if (tfd_status_code(&st) == TFD_RESOURCE_EXHAUSTED) { /* not the module's fault: ask again */
        r->kernels_asked = false;
        atomic_store(&kernels_pending, true);
        code = tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "backend %s: registering its kernels: %s", r->name,
                               tfd_status_message(&st));
      } else {
        tfd_log(TFD_LOG_ERROR, "backend %s: its kernels did not register: %s", r->name, tfd_status_message(&st));
      }
    }
    tfd_status_clear(&st);
  }
  pthread_mutex_unlock(&records_mu);
  return code;
}

size_t tfd_backend_count(void) {
  pthread_mutex_lock(&records_mu);
  size_t n = num_records;
  pthread_mutex_unlock(&records_mu);
  return n;
}

bool tfd_backend_at(size_t i, tfd_backend_info *info) {
  pthread_mutex_lock(&records_mu);
  bool ok = i < num_records;
  if (ok) fill_info(&records[i], info);
  pthread_mutex_unlock(&records_mu);
  return ok;
}

const char *tfd_backend_default_list(void) {
  const char *env = getenv("TFDEV_BACKENDS");
  if (!env) return "cuda";
  return strcmp(env, "none") == 0 ? "" : env;
}
