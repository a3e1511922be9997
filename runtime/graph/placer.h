/* The placer: gives every node of a graph a device, as TensorFlow's Placer and ColocationGraph do.
 *
 * Nodes are grouped (union-find) by resource edges and by the `_class` attribute's "loc:@node"
 * entries; each group merges its members' requested devices (DeviceNameUtils::MergeDevNames) and
 * keeps the device types with a kernel for every member. A group then goes to the first device,
 * by type priority (the factory registry's order) and name, that matches its request; metadata
 * ops (Shape, Size, Rank) stay with their input and generators (no inputs, one output) follow
 * consumers that agree on a device. Stateful nodes placed by earlier runs stay where they were.
 * Soft placement relaxes the type and id of a request, never its job, replica or task. Every
 * error is INVALID_ARGUMENT (INTERNAL for an inconsistent earlier placement) in TensorFlow's
 * words, with the node's {{node X}} tag. */
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
  /* The graph is a run's pruned copy: a `_class` entry naming a node pruned away is ignored (the
   * whole graph was checked when it was created). Otherwise naming a missing node is an error. */
  bool pruned;
} tfd_placer_options;

/* Fills device_of[node] with an index into options->devices. */
tfd_code tfd_place(const tfd_graph *g, const tfd_placer_options *options, int *device_of, tfd_status *status);

#endif
