/* Session options for the runtime only: the runtime (include/tfdev/runtime.h) whose registry is
 * making devices, which a registry sets on the options it hands its factories. */
#ifndef TFDEV_RUNTIME_OPTIONS_INTERNAL_H
#define TFDEV_RUNTIME_OPTIONS_INTERNAL_H

#include "tfdev/options.h"
#include "tfdev/runtime.h"

/* Borrowed: the options do not keep the runtime alive. NULL: tfdev's defaults. */
void tfd_session_options_set_runtime(tfd_session_options *o, tfd_runtime *rt);
tfd_runtime *tfd_session_options_runtime(const tfd_session_options *o);

#endif
