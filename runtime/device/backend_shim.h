/* A backend module's link to the runtime that loaded it (see backend_shim.c). */
#ifndef TFDEV_RUNTIME_BACKEND_SHIM_H
#define TFDEV_RUNTIME_BACKEND_SHIM_H

#include "backend_module.h"

/* Called once by the module's init, before any other runtime function. */
void tfd_backend_shim_init(const tfd_backend_host *host);

#endif
