/* What every way of running a partition shares (the executor's own loop, frames.c's frame-aware one,
 * step_graph.c's replays): a step's kernel context, a node's output checks and statistics, the clock,
 * and failing a step before it starts. Below executor.c, frames.c and step_graph.c, which all call it. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../core/status_internal.h"
#include "../core/tensor_internal.h"
#include "../core/tracking_allocator.h"
#include "../framework/cancellation.h"
#include "executor.h"

int64_t tfd_now_micros(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void tfd_node_check_outputs_slow(tfd_device *sync_device, const tfd_gnode *gn, tfd_tensor *const *outputs,
                                 int num_outputs, bool missing_is_dead, tfd_status *st) {
  if (sync_device) {
    tfd_status sync = TFD_STATUS_INIT;
    if (tfd_device_sync(sync_device, &sync) != TFD_OK)
      tfd_status_setf(st, tfd_status_code(&sync), "node '%s' (%s): sync_every_op: %s", tfd_gnode_name(gn), gn->op->name,
                      tfd_status_message(&sync));
    tfd_status_clear(&sync);
    if (st->code != TFD_OK) return;
  }
  /* A tensor of another dtype (a queue or session tensor shared with other graphs, a variable written
   * elsewhere) must stop here. */
  for (int o = 0; o < num_outputs; o++) {
    if (!outputs[o]) {
      if (missing_is_dead) continue;
      tfd_status_setf(st, TFD_INTERNAL, "node '%s' (%s) produced no output %d", tfd_gnode_name(gn), gn->op->name, o);
      return;
    }
    if (tfd_tensor_dtype(outputs[o]) != gn->out_types[o]) {
      tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): output %d is %s, but the graph expects %s",
                      tfd_gnode_name(gn), gn->op->name, o, tfd_dtype_name(tfd_tensor_dtype(outputs[o])),
                      tfd_dtype_name(gn->out_types[o]));
      return;
    }
  }
}

void tfd_node_stats_record(tfd_node_stats *ns, const tfd_gnode *gn, tfd_tensor *const *outputs,
                           tfd_tensor *const *inputs, int num_inputs, const tfd_allocator *allocator, int64_t start,
                           int thread_id) {
  ns->all_start_micros = start;
  ns->all_end_rel_micros = tfd_now_micros() - start;
  ns->thread_id = thread_id;
  ns->ran = true;
  ns->output_bytes = 0;
  ns->num_outputs = gn->num_outputs;
  for (int o = 0; o < gn->num_outputs; o++) {
    tfd_output_stats *os = &ns->outputs[o];
    os->alias_input_slot = -1;
    if (!outputs[o]) {
      os->bytes = 0;
      os->dtype = gn->out_types[o];
      os->shape.ndims = -1;
      continue;
    }
    os->bytes = (int64_t)tfd_tensor_byte_size(outputs[o]);
    ns->output_bytes += os->bytes;
    os->dtype = tfd_tensor_dtype(outputs[o]);
    tfd_shape_of_tensor(outputs[o], &os->shape);
    /* An output that is one of the inputs' buffers (forwarded, or Identity) aliases that input. */
    const void *data = os->bytes ? tfd_tensor_const_data(outputs[o]) : NULL;
    for (int i = 0; data && i < num_inputs; i++) {
      tfd_tensor *in = inputs[i];
      if (in && tfd_tensor_byte_size(in) && tfd_tensor_const_data(in) == data) {
        os->alias_input_slot = i;
        break;
      }
    }
  }
  tfd_allocator_stats as;
  tfd_allocator_get_stats(allocator, &as);
  ns->allocator_bytes_in_use = as.bytes_in_use;
  if (ns->tracker) tfd_tracking_allocator_sizes(ns->tracker, &ns->total_bytes, &ns->peak_bytes, &ns->live_bytes);
}

tfd_kernel_context tfd_executor_step_ctx(tfd_device *d, const tfd_executor_args *args) {
  return tfd_executor_step_ctx_timed(d, args, NULL);
}

tfd_kernel_context tfd_executor_step_ctx_timed(tfd_device *d, const tfd_executor_args *args, tfd_deadline *own) {
  const tfd_deadline *deadline = args->deadline;
  if (!deadline && own && args->timeout_ms > 0) {
    int64_t now = tfd_kernel_clock_micros(); /* a timeout too far to count is none */
    atomic_store_explicit(&own->at, args->timeout_ms < (INT64_MAX - now) / 1000 ? now + args->timeout_ms * 1000 : 0,
                          memory_order_relaxed);
    own->timeout_ms = args->timeout_ms;
    own->what = args->timeout_what;
    deadline = own;
  }
  return (tfd_kernel_context){
      .device = d,
      .allocator = tfd_device_get_allocator(d),
      .intra_pool = tfd_device_threadpool(d),
      .rm = tfd_device_resource_manager(d),
      .step_id = args->step_id,
      .rendezvous = args->rendezvous,
      .cancellation = args->cancellation,
      .session_state = args->session_state,
      .feeds = args->feeds,
      .num_feeds = args->num_feeds,
      .fetches = args->fetches,
      .num_fetches = args->num_fetches,
      .owns_inputs = true, /* each input slot holds its own reference: kernels may forward inputs */
      .caller_queue = args->caller_queue,
      .caller_thread = args->caller_thread,
      .has_caller_thread = args->has_caller_thread,
      .deadline = deadline,
  };
}

bool tfd_executor_node_cheap(const tfd_gnode *n, const tfd_device *d) {
  return n->op->cheap || (d && strcmp(tfd_device_type(d), "GPU") == 0);
}

void tfd_executor_fail_start(const tfd_executor_args *args, const tfd_status *status, tfd_executor_done done,
                             void *arg) {
  if (args->rendezvous && status->code != TFD_OK)
    tfd_rendezvous_abort(args->rendezvous, status->code, tfd_status_message(status));
  done(arg, status);
}
