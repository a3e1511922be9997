/* The executor's frame-aware path, for partitions with control flow (TensorFlow's PropagatorState).
 *
 * executor.c builds the kernels and hands a partition here when its graph holds control-flow nodes
 * (or belongs to a graph that does, so a _Recv may bring a dead tensor): its steps then run nodes
 * per frame and iteration, with dead tensors, and the fast path of executor.c is never entered. */
#ifndef TFDEV_RUNTIME_FRAMES_H
#define TFDEV_RUNTIME_FRAMES_H

#include "executor.h"

typedef struct tfd_frames tfd_frames;

/* The immutable part: frames found (runtime/graph/control_flow.h, whose errors it returns), pending
 * counts and input layout per frame. kernels[i] is node i's, owned by the executor; g and device are
 * borrowed for the executor's life. */
tfd_frames *tfd_frames_new(const tfd_graph *g, tfd_kernel *const *kernels, tfd_device *device, bool sync_every_op,
                           tfd_status *status);
void tfd_frames_free(tfd_frames *f);
/* Starts a step; done runs exactly once, on whichever thread finishes last. Cancellation (args'
 * cancellation, polled between nodes) and args' timeout_ms stop it, infinite loops included. */
void tfd_frames_run_async(tfd_frames *f, const tfd_executor_args *args, tfd_executor_done done, void *arg);

#endif
