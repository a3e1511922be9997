/* Step graphs: a partition that runs on a device with step graphs (CUDA graphs; the device math's
 * capture entries, kernels/device_math.h) is recorded once and replayed, so a frame loop pays one
 * launch per step rather than the executor's host work and one launch per node.
 *
 * What qualifies: every node is a _Feed, a _Fetch, or a synchronous kernel of a stateless op (no
 * variables, random ops, queues: replaying them would repeat their state), with no _Send/_Recv (a
 * step split across devices) and no control flow; a step that is traced, or whose fed tensors live in
 * host memory (int32: host work on them would not be replayed), runs as usual.
 *
 * How, per signature (the dtypes and shapes of the tensors fed): the first step with it runs as
 * usual, which makes the kernels' lazy state (library handles, algorithm choices, packed weights);
 * the second runs the _Feed nodes, records every other node but the _Fetch ones into a graph (the
 * kernels' host work runs once more, their device work is recorded), keeps the fed tensors and the
 * tensors fetched, launches the graph, and fetches; later steps copy what is fed into the kept
 * tensors (a host tensor straight in, one host-to-device copy; one already on the device through its
 * _Feed node and a device copy), launch the graph and fetch from the kept outputs. A node that cannot be recorded (one that
 * reads device memory on the host) makes the capture fail: that signature then always runs as usual.
 * The graphs of four signatures are kept (TFD_STEP_GRAPH_SIGNATURES), so a loop alternating between a
 * few shapes replays each; a fifth replaces the least recently used. Steps run through the graphs one
 * at a time (they share their tensors); one arriving while another holds them runs as usual. */
#ifndef TFDEV_RUNTIME_STEP_GRAPH_H
#define TFDEV_RUNTIME_STEP_GRAPH_H

#include <stdbool.h>

#include "../graph/graph.h"
#include "../kernels/kernel.h"

struct tfd_executor_args;
typedef struct tfd_step_graph tfd_step_graph;

/* Step graphs for the partition g whose nodes' kernels are kernels[i] (borrowed: they outlive it),
 * on device d; NULL when d has no step graphs or the partition does not qualify (nothing to report),
 * or memory runs out. */
tfd_step_graph *tfd_step_graph_new(const tfd_graph *g, tfd_kernel *const *kernels, tfd_device *d);
void tfd_step_graph_free(tfd_step_graph *sg);

/* Runs the step through its graph when it can: true when it did (the step's result in status, its
 * fetches in args->fetches), false when the caller must run it as usual (status untouched). */
bool tfd_step_graph_run(tfd_step_graph *sg, const struct tfd_executor_args *args, tfd_status *status);

/* Steps captured into a graph and replayed from one so far (tests and benchmarks). */
void tfd_step_graph_counts(const tfd_step_graph *sg, int64_t *captured, int64_t *replayed);

#endif
