/* tfdev backends: device modules loaded at run time (libtfdev_<name>.so, such as the CUDA backend
 * libtfdev_cuda.so), the way ggml and ONNX Runtime load theirs, so that a program built with tfdev
 * starts on a machine without the module's libraries (no CUDA at all) and simply has no such devices.
 *
 * A module is looked for in the directories of TFDEV_BACKEND_PATH (colon-separated) first, then
 * beside the library or executable that holds the runtime and in its ../lib (an installed prefix,
 * or the build tree), then by the system's library search. A backend that does not load, or finds
 * no hardware, is not an error: it says why in one line at info level (TFDEV_LOG=info shows it)
 * and in tfd_backend_info. */
#ifndef TFDEV_BACKEND_H
#define TFDEV_BACKEND_H

#include "tfdev/export.h"

#include <stdbool.h>
#include <stddef.h>

#include "tfdev/device_factory.h"
#include "tfdev/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tfd_backend_info {
  const char *name;  /* "cuda" */
  bool loaded;       /* the module is loaded: its factories can be registered */
  int num_devices;   /* devices the module found; 0 when none or not loaded */
  const char *path;  /* the module's file; "" when not found */
  const char *why;   /* with no devices: why ("backend not built", "no NVIDIA driver", "no CUDA device", ...) */
} tfd_backend_info;

/* Loads backend `name` once per process (later calls report what the first found; strings in
 * *info live as long as the process). TFD_OK when the module loaded, even with no devices;
 * NOT_FOUND, with info->why, when it did not; INVALID_ARGUMENT for a name that is not a short
 * lower-case word. info may be NULL. */
TFD_API tfd_code tfd_backend_load(const char *name, tfd_backend_info *info, tfd_status *status);
/* Registers the loaded backend's device factories into r (CUDA: "GPU" at 210 and the
 * GPU-compatible "CPU" at 70). FAILED_PRECONDITION when the backend is not loaded; a factory r
 * already holds at that priority is ALREADY_EXISTS, as any registration is. */
TFD_API tfd_code tfd_backend_register_factories(const char *name, tfd_factory_registry *r, tfd_status *status);
/* The backends tried so far, in the order they were first asked for. */
TFD_API size_t tfd_backend_count(void);
/* Backend i into *info; false past the end. */
TFD_API bool tfd_backend_at(size_t i, tfd_backend_info *info);
/* The backends the built-in factory registry loads when it is first built: TFDEV_BACKENDS
 * (comma-separated; "" or "none" for none) or, when unset, "cuda". Borrowed. */
TFD_API const char *tfd_backend_default_list(void);

#ifdef __cplusplus
}
#endif
#endif
