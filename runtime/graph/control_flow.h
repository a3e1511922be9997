/* The frames of a graph's while loops (TensorFlow's BuildControlFlowInfo), for the executor's
 * frame-aware path and for placement, which keeps each loop on one device.
 *
 * Frame 0 is the root. A node runs in the frame of its inputs: an Enter's outputs go into the child
 * frame its frame_name names (the Enter itself runs in the parent), an Exit's outputs go back to the
 * parent (the Exit runs in the loop). Frames are told apart by name within their parent. Nodes no
 * root reaches are left in the root frame: they can never run. Malformed loops are refused with
 * INVALID_ARGUMENT naming the node: an Exit or NextIteration outside any loop, a node whose inputs
 * come from different frames, one frame name under two parents, two LoopConds in one loop, a fetch
 * or a transfer between devices inside a loop. */
#ifndef TFDEV_RUNTIME_CONTROL_FLOW_H
#define TFDEV_RUNTIME_CONTROL_FLOW_H

#include "graph.h"

typedef struct tfd_frame_info {
  char *name;              /* "" for the root */
  int parent;              /* -1 for the root */
  int parallel_iterations; /* from its first Enter (at most 1024); 1 for the root */
  int num_enters;          /* the Enter nodes feeding it (TensorFlow's input_count) */
  int loop_cond;           /* its LoopCond node, or -1 */
} tfd_frame_info;

typedef struct tfd_control_flow {
  int num_frames;
  tfd_frame_info *frames;
  int *frame_of;    /* node -> the frame it runs in */
  int *enter_frame; /* node -> for an Enter, the frame its output enters; else -1 */
} tfd_control_flow;

/* Whether g has any control-flow node (Enter, Exit, NextIteration, Switch, Merge, LoopCond,
 * ControlTrigger): only then can a tensor be dead, and only then does the executor need frames. */
bool tfd_graph_has_control_flow(const tfd_graph *g);
/* Fills cf (freed with tfd_control_flow_free, also after an error). */
tfd_code tfd_control_flow_build(const tfd_graph *g, tfd_control_flow *cf, tfd_status *status);
void tfd_control_flow_free(tfd_control_flow *cf);

#endif
