/* Rewriting a graph for one run: feeds replace the tensors they name, fetches become sinks, and
 * everything the fetches and targets do not need is pruned. Then partitioning by device. */
#ifndef TFDEV_RUNTIME_SUBGRAPH_H
#define TFDEV_RUNTIME_SUBGRAPH_H

#include "graph.h"
#include "tfdev/device.h"

/* "x" -> x, 0; "x:2" -> x, 2: the node name (any length) for the caller to
 * free(). NULL with INVALID_ARGUMENT for "^x" or a malformed name. */
char *tfd_parse_tensor_name(const char *s, int *index, tfd_status *status);

/* A new graph def for a run: a _Feed node (attr index k) per feed replacing
 * every use of the fed tensor, a _Fetch node (attr index k) per fetch, and
 * only the nodes the fetches and targets need. feed_types receives the
 * dtype of each fed tensor. NOT_FOUND names an unknown feed, fetch or target. */
tfd_graph_def *tfd_subgraph_for_run(const tfd_graph *full, const char *const *feeds, int num_feeds,
                                    const char *const *fetches, int num_fetches, const char *const *targets,
                                    int num_targets, tfd_dtype *feed_types, tfd_shape *feed_shapes,
                                    tfd_status *status);

/* The same with tensor connections (CallableOptions.tensor_connection, canonical "node:i" names):
 * every use of conn_to[k], a fetch included, reads conn_from[k] instead. Errors are TensorFlow's:
 * INVALID_ARGUMENT for an unknown from node or output, a to tensor fed or connected twice ("fed more
 * than once"), differing dtypes, or a cycle ("would create a cycle"); NOT_FOUND for an unknown to
 * tensor ("unable to find feed output"). */
tfd_graph_def *tfd_subgraph_for_run_connected(const tfd_graph *full, const char *const *feeds, int num_feeds,
                                              const char *const *fetches, int num_fetches, const char *const *targets,
                                              int num_targets, const char *const *conn_from, const char *const *conn_to,
                                              int num_conn, tfd_dtype *feed_types, tfd_shape *feed_shapes,
                                              tfd_status *status);

/* The device name partial runs use for the client end of their feeds and fetches. */
#define TFD_CLIENT_DEVICE "client"

/* For partial runs: turns the _Feed nodes of a run's graph def into _Recv
 * nodes and its _Fetch nodes into _Send nodes keyed to the client, so the
 * step can start before its feeds exist and hand out fetches as they are
 * computed. feeds and fetches are the canonical names, in index order. */
tfd_code tfd_subgraph_for_partial_run(tfd_graph_def *def, char *const *feeds, char *const *fetches,
                                      const tfd_dtype *feed_types, tfd_status *status);

/* Splits a placed graph into one graph def per device (parts[d] NULL when
 * device d has no node). Edges between devices become _Send/_Recv pairs
 * keyed by source device, incarnation, destination device and tensor;
 * control edges between devices carry a dummy scalar. */
tfd_code tfd_partition(const tfd_graph *g, const int *device_of, tfd_device *const *devices, int num_devices,
                       tfd_graph_def **parts, tfd_status *status);

/* "; its placeholders are a, b" (the first eight), or "" when g has none: what a wrong feed name
 * meets, appended to its NOT_FOUND. buf holds cap bytes. */
void tfd_graph_placeholders_text(const tfd_graph *g, char *buf, size_t cap);

#endif
