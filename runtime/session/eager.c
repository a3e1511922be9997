/* Eager execution: one op on one device, through the same graph checks, kernels and executor a session uses. */
#include <stdio.h>
#include <string.h>

#include "../core/status_internal.h"
#include "../framework/cancellation.h"
#include "../exec/executor.h"
#include "../kernels/kernel.h"
#include "../framework/graph_def_internal.h"
#include "session_args.h"
#include "tfdev/session.h"

static tfd_code set_attr(tfd_node_def *n, const char *name, const tfd_attr_value *v, tfd_status *st) {
  return tfd_node_def_set_attr(n, name, v, st);
}

tfd_code tfd_device_run_op(tfd_device *d, const tfd_node_def *spec, tfd_tensor *const *inputs, int num_inputs,
                           const tfd_run_options *options, tfd_tensor **outputs, int *num_outputs, tfd_status *st) {
  tfd_status_reset(st);
  static const char fn[] = "tfd_device_run_op";
  if (tfd_arg_required(st, fn, "num_outputs", num_outputs)) return TFD_INVALID_ARGUMENT;
  *num_outputs = 0;
  if (tfd_arg_required(st, fn, "d", d) || tfd_arg_required(st, fn, "node", spec) ||
      tfd_arg_items(st, fn, "inputs", TFD_ARG_ITEMS(inputs), "num_inputs", num_inputs) ||
      tfd_arg_required(st, fn, "outputs", outputs))
    return TFD_INVALID_ARGUMENT;
  const char *op = tfd_node_def_op(spec);
  const tfd_op_def *def = tfd_op_lookup(op);
  if (!def || def->runtime_only)
    return tfd_status_setf(st, def ? TFD_INVALID_ARGUMENT : TFD_NOT_FOUND, "op type not registered '%s'", op);
  static const char *const graph_only[] = {"Enter", "Exit", "NextIteration", "Switch", "Merge", "LoopCond"};
  for (size_t k = 0; k < sizeof graph_only / sizeof graph_only[0]; k++)
    if (strcmp(op, graph_only[k]) == 0) /* frames and dead tensors are a graph's */
      return tfd_status_setf(st, TFD_UNIMPLEMENTED, "op %s is control flow: it runs only in a graph, not eagerly", op);
  if (tfd_kernel_registry_ready(st) != TFD_OK) return tfd_status_code(st);
  if (!tfd_kernel_supported(op, tfd_device_type(d)))
    return tfd_status_setf(st, TFD_NOT_FOUND, "no %s kernel for op %s on %s", tfd_device_type(d), op, tfd_device_name(d));
  tfd_graph_def *g = tfd_graph_def_new();
  if (!g) return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  tfd_code code = TFD_OK;
  for (int i = 0; i < num_inputs && code == TFD_OK; i++) {
    char name[32];
    snprintf(name, sizeof name, "_in_%d", i);
    tfd_node_def *f = tfd_graph_def_add_node(g, name, "_Feed", st);
    tfd_attr_value idx = {.type = TFD_ATTR_INT, .i = i}, dt = {.type = TFD_ATTR_TYPE, .dtype = tfd_tensor_dtype(inputs[i])},
                   sh = {.type = TFD_ATTR_SHAPE};
    tfd_shape_of_tensor(inputs[i], &sh.shape);
    code = !f ? TFD_RESOURCE_EXHAUSTED
              : set_attr(f, "index", &idx, st) ? tfd_status_code(st)
              : set_attr(f, "dtype", &dt, st) ? tfd_status_code(st)
                                                : set_attr(f, "shape", &sh, st);
  }
  tfd_node_def *n = code == TFD_OK ? tfd_graph_def_add_node(g, op, op, st) : NULL;
  if (code == TFD_OK && !n) code = TFD_RESOURCE_EXHAUSTED;
  for (size_t a = 0; code == TFD_OK && a < spec->nattrs; a++)
    code = tfd_node_def_set_attr(n, spec->attrs[a].name, &spec->attrs[a].value, st);
  for (int i = 0; code == TFD_OK && i < num_inputs; i++) {
    char in[32];
    snprintf(in, sizeof in, "_in_%d", i);
    code = tfd_node_def_add_input(n, in, st);
  }
  /* The graph's own rule for the output count: ShapeN without N has one output per input, a missing or
   * bad count (Unpack's num, a queue's component_types) is refused naming the attr. */
  int nout = 0;
  if (code == TFD_OK) code = tfd_op_check_arity(def, spec, num_inputs, &nout, st);
  if (code == TFD_OK && nout > TFD_MAX_EAGER_OUTPUTS) /* callers give room for 4 (include/tfdev/session.h) */
    code = tfd_status_setf(st, TFD_UNIMPLEMENTED, "op %s has %d outputs; eager execution returns at most %d (run it in a graph)",
                           op, nout, TFD_MAX_EAGER_OUTPUTS);
  for (int o = 0; code == TFD_OK && o < nout; o++) {
    char name[32], in[160];
    snprintf(name, sizeof name, "_out_%d", o);
    snprintf(in, sizeof in, "%s:%d", op, o);
    tfd_node_def *f = tfd_graph_def_add_node(g, name, "_Fetch", st);
    tfd_attr_value idx = {.type = TFD_ATTR_INT, .i = o};
    code = !f ? TFD_RESOURCE_EXHAUSTED : tfd_node_def_add_input(f, in, st) ? tfd_status_code(st) : set_attr(f, "index", &idx, st);
  }
  tfd_graph *graph = code == TFD_OK ? tfd_graph_build(g, st) : NULL;
  tfd_graph_def_free(g);
  if (!graph) return tfd_status_code(st) != TFD_OK ? tfd_status_code(st) : TFD_RESOURCE_EXHAUSTED;
  tfd_executor *e = tfd_executor_new(graph, d, NULL, st);
  if (!e) return tfd_status_code(st);
  tfd_tensor *fetched[TFD_MAX_OP_OUTPUTS] = {0};
  tfd_executor_args args = {.step_id = 0, .feeds = inputs, .num_feeds = num_inputs, .fetches = fetched,
                            .caller_thread = pthread_self(), .has_caller_thread = true, /* it all runs here */
                            .num_fetches = nout};
  tfd_cancellation *cancel = tfd_cancellation_new(); /* so a timeout can wake a blocked kernel */
  args.cancellation = cancel;
  code = cancel ? tfd_executor_run(e, &args, options ? options->timeout_ms : 0, "the op", st)
                : tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  tfd_cancellation_unref(cancel);
  tfd_executor_free(e);
  for (int o = 0; o < nout && code == TFD_OK; o++)
    if (!fetched[o]) code = tfd_status_setf(st, TFD_INTERNAL, "op %s made no output %d", op, o);
  for (int o = 0; o < nout; o++) {
    if (code == TFD_OK) outputs[o] = fetched[o];
    else tfd_tensor_unref(fetched[o]);
  }
  if (code == TFD_OK) *num_outputs = nout;
  return code;
}
