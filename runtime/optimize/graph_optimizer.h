/* The graph optimisation pass: constant folding and MatMul remapping on one placed partition
 * (see graph_optimizer.c for the rules). The session runs it unless the session option
 * optimize_graph is off. */
#ifndef TFDEV_RUNTIME_GRAPH_OPTIMIZER_H
#define TFDEV_RUNTIME_GRAPH_OPTIMIZER_H

#include "tfdev/device.h"
#include "tfdev/graph_def.h"

/* Rewrites *def, a partition placed on `device`, in place: on success *def
 * may be a new graph def (the old one freed); on failure *def is unchanged
 * and the status says why (RESOURCE_EXHAUSTED, or the graph's own error). */
tfd_code tfd_optimize_partition(tfd_graph_def **def, tfd_device *device, tfd_status *status);

#endif
