/* The ops that only move data, for devices whose memory the host cannot touch (a GPU's), before
 * those devices have kernels of their own: what TensorFlow's GPU device runs without arithmetic.
 *
 * Identity, NoOp, Placeholder and _Send hand tensors on wherever they are. The rest run the CPU
 * kernel on the host and move bytes with the device memory's copies (tfd_tensor_copy_to): the inputs
 * the CPU kernel reads come to the host first, and each output goes to the memory its dtype lives in
 * on the device (tfd_kernel_memory_for: device memory, int32 and resources on the host, as in
 * TensorFlow). Reshape's data never leaves the device; Const is copied there once, when its kernel
 * is made; _Fetch hands the caller a host tensor; _Recv (k_sendrecv.c) moves what it receives. */
#include <string.h>

#include "../../core/status_internal.h"
#include "../../core/tensor_internal.h"
#include "../kernel.h"

static tfd_allocator *host_allocator(tfd_device *d) { return d->ops->get_allocator(d, (tfd_alloc_attrs){.on_host = true}); }

enum { MAX_STAGED_INPUTS = 2 }; /* Reshape's and Fill's two */

static void k_staged(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *in[MAX_STAGED_INPUTS] = {0}, *out[TFD_MAX_OP_OUTPUTS] = {0};
  tfd_status tmp = TFD_STATUS_INIT;
  bool ok = true;
  /* Inputs come to the device's host memory (a GPU's is pinned, as the memory TensorFlow receives a
   * GPU's tensors in on the host is): copies into it need no staging, and its blocks are reused, where
   * the system's would be faulted in afresh after glibc trims them. A fetched tensor stays in it. */
  tfd_allocator *host = host_allocator(c->device);
  for (int i = 0; i < c->num_inputs && i < MAX_STAGED_INPUTS && ok; i++) {
    in[i] = k->host_inputs & (1u << i) ? tfd_tensor_copy_to(c->inputs[i], host, &tmp) : tfd_tensor_ref(c->inputs[i]);
    ok = in[i] != NULL;
  }
  if (ok) {
    tfd_kernel_context hc = *c;
    hc.inputs = in;
    hc.outputs = out;
    hc.allocator = host;
    hc.owns_inputs = false;
    k->host_compute(k, &hc);
    for (int o = 0; o < c->num_outputs && tfd_status_code(c->status) == TFD_OK; o++) {
      if (!out[o]) continue;
      c->outputs[o] = tfd_tensor_copy_to(out[o], tfd_kernel_memory_for(c->device, tfd_tensor_dtype(out[o])), &tmp);
      if (!c->outputs[o]) break;
    }
  }
  if (tfd_status_code(&tmp) != TFD_OK) {
    tfd_kernel_fail(c, k, tfd_status_code(&tmp), "moving data to or from %s: %s", tfd_device_name(c->device),
                    tfd_status_message(&tmp));
    tfd_status_clear(&tmp);
  }
  for (int i = 0; i < MAX_STAGED_INPUTS; i++) tfd_tensor_unref(in[i]);
  for (int o = 0; o < TFD_MAX_OP_OUTPUTS; o++) tfd_tensor_unref(out[o]);
}

/* Which inputs each staged op reads on the host: Reshape's shape, Fill's dims and value, a fetched
 * tensor; ZerosLike and OnesLike read only their input's shape, _Feed has none. */
static const struct {
  const char *op;
  uint32_t host_inputs;
} staged[] = {{"Reshape", 1u << 1}, {"Fill", 3u}, {"ZerosLike", 0}, {"OnesLike", 0}, {"_Feed", 0}, {"_Fetch", 1u}};

tfd_code tfd_setup_data_movement(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  const char *op = init->op->name;
  if (strcmp(op, "_Send") == 0 || strcmp(op, "_Recv") == 0) return tfd_setup_sendrecv(k, init, st);
  if (tfd_setup_basic(k, init, st) != TFD_OK) return tfd_status_code(st);
  if (strcmp(op, "Const") == 0) { /* the value moves to the device once */
    tfd_tensor *v = tfd_tensor_copy_to(k->value, tfd_kernel_memory_for(init->device, tfd_tensor_dtype(k->value)), st);
    if (!v) return tfd_status_code(st);
    tfd_tensor_unref(k->value);
    k->value = v;
    return TFD_OK;
  }
  for (size_t i = 0; i < sizeof staged / sizeof staged[0]; i++)
    if (strcmp(op, staged[i].op) == 0) {
      k->host_compute = k->compute;
      k->host_inputs = staged[i].host_inputs;
      k->compute = k_staged;
    }
  return TFD_OK;
}

tfd_code tfd_kernel_register_data_movement(const char *device_type, tfd_status *st) {
  static const char *const ops[] = {"Const",   "Identity", "NoOp",   "Placeholder", "PlaceholderWithDefault",
                                    "Reshape", "Fill",     "ZerosLike", "OnesLike", "_Feed",
                                    "_Fetch",  "_Send",    "_Recv"};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (tfd_kernel_register(ops[i], device_type, tfd_setup_data_movement, st) != TFD_OK) return tfd_status_code(st);
  return TFD_OK;
}

tfd_code tfd_kernel_register_transfers(const char *device_type, tfd_status *st) {
  tfd_status_reset(st);
  if (!device_type || !*device_type)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "tfd_kernel_register_transfers needs a device type");
  return tfd_kernel_register_data_movement(device_type, st);
}
