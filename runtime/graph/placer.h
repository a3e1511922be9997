/* The placer: gives every node of a graph a device.
 *
 * A node goes where its device field asks (a full or partial spec), else to
 * the device of the highest-priority type (the factory registry's order)
 * that has a kernel for its op. Nodes that use a resource handle are
 * colocated with the node that makes it. Stateful nodes placed by earlier
 * runs stay where they were. A request nothing can satisfy is
 * INVALID_ARGUMENT naming the node and the device, unless soft placement is
 * allowed, which relaxes the request instead. */
#ifndef TFDEV_RUNTIME_PLACER_H
#define TFDEV_RUNTIME_PLACER_H

#include "graph.h"
#include "tfdev/device_factory.h"

typedef struct tfd_placer_options {
  tfd_device *const *devices; /* candidate devices, in the session's order */
  int num_devices;
  const tfd_factory_registry *registry; /* for type priorities */
  bool allow_soft_placement;
  bool log_device_placement;
  const tfd_strmap *fixed; /* node name -> (device index + 1) for stateful nodes already placed; may be NULL */
} tfd_placer_options;

/* Fills device_of[node] with an index into options->devices. */
tfd_code tfd_place(const tfd_graph *g, const tfd_placer_options *options, int *device_of, tfd_status *status);

#endif
