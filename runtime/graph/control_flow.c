/* While-loop frames of a graph, found breadth-first from its roots, with TensorFlow's checks and texts. */
#include "control_flow.h"

#include <stdlib.h>
#include <string.h>

#include "../core/status_internal.h"
#include "../framework/graph_def_internal.h"

#define MAX_PARALLEL_ITERATIONS 1024

static bool is_op(const tfd_gnode *n, const char *op) { return strcmp(n->op->name, op) == 0; }

bool tfd_graph_has_control_flow(const tfd_graph *g) {
  static const char *const ops[] = {"Enter", "Exit", "NextIteration", "Switch", "Merge", "LoopCond", "ControlTrigger"};
  for (int i = 0; i < g->n; i++)
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
      if (is_op(&g->nodes[i], ops[k])) return true;
  return false;
}

void tfd_control_flow_free(tfd_control_flow *cf) {
  for (int f = 0; f < cf->num_frames; f++) free(cf->frames[f].name);
  free(cf->frames);
  free(cf->frame_of);
  free(cf->enter_frame);
  memset(cf, 0, sizeof *cf);
}

static tfd_code oom(tfd_status *st) { return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory analysing loops"); }

/* The frame named `name` under `parent`, made on first sight; -1 (status set) when the name is
 * already a frame under another parent. */
static int child_frame(tfd_control_flow *cf, const char *name, int parent, int parallel, const tfd_gnode *enter,
                       tfd_status *st) {
  for (int f = 1; f < cf->num_frames; f++) {
    if (strcmp(cf->frames[f].name, name) != 0) continue;
    if (cf->frames[f].parent == parent) return f;
    tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                    "Invalid loop structure: Mismatched parent frames for \"%s\": \"%s\" vs \"%s\". The node giving "
                    "this error: '%s'",
                    name, cf->frames[parent].name, cf->frames[cf->frames[f].parent].name, tfd_gnode_name(enter));
    return -1;
  }
  tfd_frame_info *grown = realloc(cf->frames, ((size_t)cf->num_frames + 1) * sizeof *grown);
  if (!grown) {
    oom(st);
    return -1;
  }
  cf->frames = grown;
  tfd_frame_info *fi = &cf->frames[cf->num_frames];
  *fi = (tfd_frame_info){strdup(name), parent, parallel, 0, -1};
  if (!fi->name) {
    oom(st);
    return -1;
  }
  return cf->num_frames++;
}

static const char *frame_name(const tfd_control_flow *cf, int f) { return cf->frames[f].name; }

tfd_code tfd_control_flow_build(const tfd_graph *g, tfd_control_flow *cf, tfd_status *st) {
  memset(cf, 0, sizeof *cf);
  size_t n = g->n ? (size_t)g->n : 1;
  cf->frame_of = calloc(n, sizeof *cf->frame_of);
  cf->enter_frame = malloc(n * sizeof *cf->enter_frame);
  cf->frames = calloc(1, sizeof *cf->frames);
  int *queue = malloc(n * sizeof *queue), *first_input = malloc(n * sizeof *first_input);
  char *root = strdup("");
  tfd_code code = TFD_OK;
  if (!cf->frame_of || !cf->enter_frame || !cf->frames || !queue || !first_input || !root) {
    free(root);
    code = oom(st);
    goto done;
  }
  cf->frames[0] = (tfd_frame_info){root, -1, 1, 0, -1};
  cf->num_frames = 1;
  int head = 0, tail = 0, outside = -1; /* an Exit or NextIteration in the root frame */
  for (int i = 0; i < g->n; i++) {
    cf->enter_frame[i] = -1;
    first_input[i] = -1; /* not reached yet */
    if (g->nodes[i].num_inputs + g->nodes[i].num_control == 0) {
      first_input[i] = i;
      queue[tail++] = i;
    }
  }
  while (head < tail && code == TFD_OK) {
    int cur = queue[head++];
    const tfd_gnode *c = &g->nodes[cur];
    int in = cf->frame_of[cur], out = in;
    if (is_op(c, "Enter")) {
      const tfd_attr_value *name = tfd_node_def_attr(c->def, "frame_name");
      const tfd_attr_value *par = tfd_node_def_attr(c->def, "parallel_iterations");
      if (!name || name->type != TFD_ATTR_STRING || !name->s || !*name->s) {
        code = tfd_status_setf(st, TFD_INVALID_ARGUMENT, "The Enter node '%s' must have a frame name.", tfd_gnode_name(c));
        break;
      }
      /* Iterations past 1024 at once gain nothing but memory: each frame instance keeps a slot per one. */
      int parallel = !par || par->i < 1 ? 10 : par->i > MAX_PARALLEL_ITERATIONS ? MAX_PARALLEL_ITERATIONS : (int)par->i;
      out = child_frame(cf, name->s, in, parallel, c, st);
      if (out < 0) {
        code = tfd_status_code(st);
        break;
      }
      cf->enter_frame[cur] = out;
      cf->frames[out].num_enters++;
    } else if (is_op(c, "Exit") || is_op(c, "NextIteration")) {
      /* Reported once the walk is over: a node reading from two frames, found on the way, says more
       * about what is wrong (TensorFlow reports only that). */
      if (in == 0 && outside < 0) outside = cur;
      if (is_op(c, "Exit") && in != 0) out = cf->frames[in].parent;
    } else if (is_op(c, "LoopCond") && in != 0) {
      int other = cf->frames[in].loop_cond;
      if (other >= 0) {
        code = tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                               "Invalid loop structure: Loop \"%s\" has more than one LoopCond node: '%s' and '%s'",
                               frame_name(cf, in), tfd_gnode_name(c), tfd_gnode_name(&g->nodes[other]));
        break;
      }
      cf->frames[in].loop_cond = cur;
    }
    if (in != 0 && (is_op(c, "_Fetch") || is_op(c, "_Send") || is_op(c, "_Recv"))) {
      const char *what = is_op(c, "_Fetch") ? "fetching" : "sending between devices";
      code = tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                             "%s '%s' is not supported: it is inside the while loop \"%s\" (%s happens outside loops: "
                             "use the loop's Exit)",
                             what, c->num_inputs ? tfd_node_def_input(c->def, 0) : tfd_gnode_name(c),
                             frame_name(cf, in), what);
      break;
    }
    for (int e = 0; e < c->num_out_edges; e++) {
      int dst = c->out_edges[e].dst;
      if (first_input[dst] < 0) {
        first_input[dst] = cur;
        cf->frame_of[dst] = out;
        queue[tail++] = dst;
      } else if (cf->frame_of[dst] != out) {
        /* TensorFlow names the frame each input sends into: the other input's is dst's own. */
        code = tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                               "node '%s' has inputs from different frames. The input '%s' is in frame '%s'. The "
                               "input '%s' is in frame '%s'.",
                               tfd_gnode_name(&g->nodes[dst]), tfd_gnode_name(c), frame_name(cf, out),
                               tfd_gnode_name(&g->nodes[first_input[dst]]), frame_name(cf, cf->frame_of[dst]));
        break;
      }
    }
  }
  if (code == TFD_OK && outside >= 0)
    code = tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s) is not inside a while loop: no Enter leads to it",
                           tfd_gnode_name(&g->nodes[outside]), g->nodes[outside].op->name);
done:
  free(queue);
  free(first_input);
  return code;
}
