/* _Send and _Recv: the two ends of an edge cut by partitioning, joined through the step's rendezvous. */
#include <stdlib.h>
#include <string.h>

#include "../../core/status_internal.h"
#include "../../core/tensor_internal.h"
#include "../../framework/rendezvous.h"
#include "../kernel.h"

/* A dead input (the frame-aware executor runs _Send dead, with no input) is sent as dead. */
static void k_send(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_status tmp = TFD_STATUS_INIT;
  if (tfd_rendezvous_send(c->rendezvous, k->key, c->inputs[0], &tmp) != TFD_OK) {
    tfd_kernel_fail(c, k, tfd_status_code(&tmp), "%s", tfd_status_message(&tmp));
    tfd_status_clear(&tmp);
  }
}

typedef struct recv_wait {
  tfd_kernel *k;
  tfd_kernel_context *c;
  tfd_done_fn done;
  void *arg;
} recv_wait;

/* What arrives is wherever its sender left it; it leaves in the memory its dtype lives in on this
 * device, copied when that is elsewhere (TensorFlow's SameWorkerRecvDone): a GPU tensor received on
 * a CPU comes to the host, a host tensor received on a GPU goes to device memory. */
static void recv_done(void *p, tfd_tensor *t, const tfd_status *st) {
  recv_wait w = *(recv_wait *)p;
  free(p);
  if (t) {
    tfd_status tmp = TFD_STATUS_INIT;
    w.c->outputs[0] = tfd_tensor_copy_to(t, tfd_kernel_memory_for(w.c->device, tfd_tensor_dtype(t)), &tmp);
    if (!w.c->outputs[0])
      tfd_kernel_fail(w.c, w.k, tfd_status_code(&tmp), "copying the received tensor to %s: %s",
                      tfd_device_name(w.c->device), tfd_status_message(&tmp));
    tfd_status_clear(&tmp);
  } else if (st && tfd_status_code(st) != TFD_OK) {
    tfd_kernel_fail(w.c, w.k, tfd_status_code(st), "%s", tfd_status_message(st));
  } /* else dead: no output, which the frame-aware executor reads as a dead tensor */
  w.done(w.arg);
}

static void k_recv_async(tfd_kernel *k, tfd_kernel_context *c, tfd_done_fn done, void *arg) {
  recv_wait *w = malloc(sizeof *w);
  if (!w) {
    tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory");
    done(arg);
    return;
  }
  *w = (recv_wait){k, c, done, arg};
  tfd_rendezvous_recv(c->rendezvous, k->key, recv_done, w);
}

static void k_recv_sync(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_kernel_fail(c, k, TFD_INTERNAL, "_Recv must run asynchronously");
}

tfd_code tfd_setup_sendrecv(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  const tfd_node_def *n = init->node;
  k->key = tfd_rendezvous_key(tfd_attr_string(n, "send_device", ""), (uint64_t)tfd_attr_int(n, "send_device_incarnation", 0),
                              tfd_attr_string(n, "recv_device", ""), tfd_attr_string(n, "tensor_name", ""));
  if (!k->key) return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  if (strcmp(init->op->name, "_Send") == 0) {
    k->compute = k_send;
  } else {
    k->compute = k_recv_sync;
    k->compute_async = k_recv_async;
  }
  return TFD_OK;
}
