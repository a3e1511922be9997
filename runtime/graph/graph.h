/* A graph built from a GraphDef: nodes resolved to ops, edges resolved to nodes, checked and typed.
 *
 * Building validates everything a session relies on and names the node at
 * fault: invalid or duplicate names, unknown ops, wrong arity, inputs that
 * name no node or no output, control inputs before data inputs, cycles
 * (other than a while loop's, closed by a NextIteration feeding a Merge),
 * dtype mismatches and incompatible shapes. Output dtypes and (partly
 * known) shapes are inferred in topological order. */
#ifndef TFDEV_RUNTIME_GRAPH_H
#define TFDEV_RUNTIME_GRAPH_H

#include "../core/strmap.h"
#include "../ops/op_registry.h"
#include "tfdev/device_name.h"
#include "tfdev/graph_def.h"

typedef struct tfd_gedge {
  int node;  /* the other end */
  int index; /* output index at the source; -1 for a control edge */
} tfd_gedge;

typedef struct tfd_out_edge {
  int dst, dst_input; /* dst_input -1: control */
  int src_output;     /* -1: control */
} tfd_out_edge;

typedef struct tfd_gnode {
  int id;
  tfd_node_def *def; /* owned by the graph's def */
  const tfd_op_def *op;
  int num_inputs;
  tfd_gedge *inputs; /* data inputs, in order */
  int num_control;
  int *control; /* nodes this one waits for */
  int num_outputs;
  tfd_dtype *out_types;  /* num_outputs of each (one block with out_shapes, owned by the graph) */
  tfd_shape *out_shapes;
  tfd_dtype *in_types;
  int num_out_edges;
  tfd_out_edge *out_edges;
  tfd_parsed_name requested; /* the node's device field, parsed */
  bool has_requested;
} tfd_gnode;

typedef struct tfd_graph {
  tfd_graph_def *def; /* owned copy, attributes completed */
  tfd_gnode *nodes;
  int n;
  int *topo; /* node ids in topological order */
  tfd_strmap by_name;
} tfd_graph;

/* Builds a graph from a copy of def. NULL and an error naming the node on failure. */
tfd_graph *tfd_graph_build(const tfd_graph_def *def, tfd_status *status);
void tfd_graph_free(tfd_graph *g);
/* Whether the edge src -> dst closes a while loop (a NextIteration feeding its Merge): the one kind
 * of edge that may make a cycle, left out of the topological order. */
bool tfd_graph_is_back_edge(const tfd_graph *g, int src, int dst);
/* The node id for a name, or -1. */
int tfd_graph_find(const tfd_graph *g, const char *name);
const char *tfd_gnode_name(const tfd_gnode *n);
/* Whether name is a valid node name ([A-Za-z0-9._][A-Za-z0-9_./-]*; the
 * leading '_' is reserved for nodes the runtime adds). */
bool tfd_valid_node_name(const char *name);

#endif
