/* Plug-ins (include/tfdev/custom_op.h): shared libraries that register ops and kernels into this
 * process's tfdev when loaded.
 *
 * A plug-in calls the public API but links no libtfdev of its own: a second copy of the runtime in
 * the process would hold registries nobody reads. Its tfd_ symbols resolve, when it is opened, to the
 * copy that loads it: before opening it the loader makes its own library's symbols global (a Lua
 * interpreter opens core.so, and with it libtfdev, privately); an executable linking tfdev
 * statically exports them with -Wl,-E, as the tfdev executable does. Loaded paths are remembered so
 * a second load is a no-op, not a second round of registrations that would collide. */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../core/status_internal.h"
#include "tfdev/custom_op.h"

enum { MAX_PLUGINS = 64 };

static pthread_mutex_t plugins_mu = PTHREAD_MUTEX_INITIALIZER;
static char *loaded[MAX_PLUGINS];
static int num_loaded;

tfd_code tfd_plugin_load(const char *path, tfd_status *st) {
  tfd_status_reset(st);
  if (!path || !*path) return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "tfd_plugin_load needs a path");
  char real[PATH_MAX];
  const char *key = realpath(path, real) ? real : path;
  pthread_mutex_lock(&plugins_mu); /* held throughout: two threads loading one plug-in run its init once */
  tfd_code code = TFD_OK;
  for (int i = 0; i < num_loaded; i++)
    if (strcmp(loaded[i], key) == 0) goto done;
  if (num_loaded == MAX_PLUGINS) {
    code = tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "at most %d plug-ins can be loaded", MAX_PLUGINS);
    goto done;
  }
  Dl_info self;
  if (dladdr((void *)&tfd_plugin_load, &self) && self.dli_fname && strstr(self.dli_fname, ".so")) {
    void *lib = dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL); /* already loaded: now global */
    if (lib) dlclose(lib); /* the promotion stays; only the extra reference goes */
  }
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *err = dlerror();
    code = tfd_status_setf(st, TFD_NOT_FOUND, "plug-in %s did not load: %s", path, err ? err : "unknown error");
    goto done;
  }
  const int *version = dlsym(h, "tfd_plugin_api_version");
  tfd_code (*init)(tfd_status *);
  *(void **)&init = dlsym(h, "tfd_plugin_init");
  if (!version || !init) {
    dlclose(h);
    code = tfd_status_setf(st, TFD_FAILED_PRECONDITION,
                           "%s is not a tfdev plug-in: it must export tfd_plugin_api_version and tfd_plugin_init", path);
    goto done;
  }
  if (*version != TFD_PLUGIN_API_VERSION) {
    int v = *version;
    dlclose(h);
    code = tfd_status_setf(st, TFD_FAILED_PRECONDITION,
                           "plug-in %s was built for plug-in API version %d; this tfdev has version %d", path, v,
                           TFD_PLUGIN_API_VERSION);
    goto done;
  }
  char *copy = strdup(key);
  if (!copy) {
    code = tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory loading %s", path);
    goto done;
  }
  /* Remembered before init: what init registered stays registered whatever it returns, and must not
   * be registered twice. The library stays loaded: its functions are in the registries now. */
  loaded[num_loaded++] = copy;
  tfd_status mine = TFD_STATUS_INIT;
  if (init(&mine) != TFD_OK || tfd_status_code(&mine) != TFD_OK) {
    code = tfd_status_setf(st, tfd_status_code(&mine) != TFD_OK ? tfd_status_code(&mine) : TFD_UNKNOWN,
                           "plug-in %s: tfd_plugin_init failed: %s", path, tfd_status_message(&mine));
  }
  tfd_status_clear(&mine);
done:
  pthread_mutex_unlock(&plugins_mu);
  return code;
}

/* The remembered paths go with the library (a Lua state unloading core.so); the plug-ins stay. */
__attribute__((destructor)) static void forget_plugins(void) {
  for (int i = 0; i < num_loaded; i++) free(loaded[i]);
  num_loaded = 0;
}
