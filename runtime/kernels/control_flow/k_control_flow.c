/* The control-flow kernels: Enter, Exit, NextIteration, LoopCond, Switch, Merge and ControlTrigger,
 * on a CPU and on a GPU alike: they pass tensors on by reference, Switch reads its predicate through
 * a host copy (TensorFlow's GPU Switch keeps it in host memory) and Merge makes its value_index where
 * int32 lives on the device.
 *
 * What they compute is small; what they mean (frames, iterations, dead tensors) is the frame-aware
 * executor's (runtime/exec/frames.c). There an untaken Switch output is left empty, which makes it
 * dead, and a Merge is given only its first live input, the others empty. */
#include <string.h>

#include "../../core/status_internal.h"
#include "../device_kernel.h"
#include "../kernel.h"
#include "../kernel_shared.h"

/* Enter, Exit, NextIteration, LoopCond: the input, passed on. */
static void k_forward(tfd_kernel *k, tfd_kernel_context *c) {
  (void)k;
  c->outputs[0] = tfd_tensor_ref(c->inputs[0]);
}

static void k_nothing(tfd_kernel *k, tfd_kernel_context *c) { (void)k, (void)c; }

static void k_switch(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *pred = tfd_kernel_host_input(c, k, 1);
  if (!pred) return;
  if (tfd_tensor_ndims(pred) != 0) {
    char buf[96];
    tfd_shape s;
    tfd_shape_of_tensor(pred, &s);
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "The second input must be a scalar, but it has shape %s",
                    tfd_shape_string(&s, buf, sizeof buf));
  } else {
    bool taken = *(const unsigned char *)tfd_tensor_const_data(pred) != 0;
    c->outputs[taken ? 1 : 0] = tfd_tensor_ref(c->inputs[0]);
  }
  tfd_tensor_unref(pred);
}

/* Merge: its first live input (the executor leaves the others empty) and which one it was. */
static void k_merge(tfd_kernel *k, tfd_kernel_context *c) {
  int live = 0;
  while (live < c->num_inputs && !c->inputs[live]) live++;
  if (live == c->num_inputs) {
    tfd_kernel_fail(c, k, TFD_INTERNAL, "ran with no live input");
    return;
  }
  tfd_tensor *index = tfd_dk_alloc(c, k, TFD_INT32, NULL, 0);
  if (!index) return;
  *(int32_t *)tfd_tensor_data(index) = live;
  c->outputs[0] = tfd_tensor_ref(c->inputs[live]);
  c->outputs[1] = index;
}

tfd_code tfd_setup_control_flow(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  const char *op = init->op->name;
  if (strcmp(op, "Switch") == 0) k->compute = k_switch;
  else if (strcmp(op, "Merge") == 0) k->compute = k_merge;
  else if (strcmp(op, "ControlTrigger") == 0) k->compute = k_nothing;
  else if (strcmp(op, "Enter") == 0 || strcmp(op, "Exit") == 0 || strcmp(op, "NextIteration") == 0 ||
           strcmp(op, "LoopCond") == 0)
    k->compute = k_forward;
  else return tfd_status_setf(st, TFD_INTERNAL, "no control-flow kernel for %s", op);
  return TFD_OK;
}
