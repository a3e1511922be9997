/* Device kernels of the control flow (k_control_flow.c): Enter, Exit, NextIteration and LoopCond pass
 * their input on by reference, so the CPU kernels serve a GPU as they are; Switch reads its
 * predicate (a bool in device memory) through a host copy, as TensorFlow's GPU Switch keeps it in
 * host memory; Merge makes its value_index where int32 lives on the device (the host). What the
 * ops mean (frames, dead tensors) is the executor's, whatever the device. */
#include <string.h>

#include "device_kernel.h"
#include "kernel_shared.h"

static void k_switch(tfd_kernel *k, tfd_kernel_ctx *c) {
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

static void k_merge(tfd_kernel *k, tfd_kernel_ctx *c) {
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

tfd_code tfd_dk_setup_control_flow(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  if (tfd_setup_control_flow(k, init, st) != TFD_OK) return tfd_status_code(st);
  const char *op = init->op->name;
  if (strcmp(op, "Switch") == 0) k->compute = k_switch;
  else if (strcmp(op, "Merge") == 0) k->compute = k_merge;
  return TFD_OK;
}
