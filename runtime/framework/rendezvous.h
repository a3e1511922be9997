/* Intra-process rendezvous: where a step's _Send leaves a tensor and its _Recv picks it up.
 *
 * Keys name the source device, its incarnation, the destination device and
 * the tensor ("/job:../device:CPU:0;1f2e;/job:../device:CPU:1;a:0;0:0").
 * A send and a recv of the same key meet whichever comes first. Aborting
 * (a failing or cancelled step) fails every pending and later recv, so no
 * partition waits forever. One rendezvous per step; thread-safe. */
#ifndef TFDEV_RUNTIME_RENDEZVOUS_H
#define TFDEV_RUNTIME_RENDEZVOUS_H

#include "tfdev/status.h"
#include "tfdev/tensor.h"

typedef struct tfd_rendezvous tfd_rendezvous;

/* Called once with the tensor (borrowed: ref it to keep it), with a failure status, or with neither
 * (t NULL and status NULL) when the sender sent a dead tensor (control flow: the branch not taken). */
typedef void (*tfd_recv_done)(void *arg, tfd_tensor *t, const tfd_status *status);

tfd_rendezvous *tfd_rendezvous_new(void);
tfd_rendezvous *tfd_rendezvous_ref(tfd_rendezvous *r);
void tfd_rendezvous_unref(tfd_rendezvous *r);
/* Delivers t (referenced; NULL: a dead tensor) under key. ALREADY_EXISTS for a
 * second send of the same key; the abort status once aborted. */
tfd_code tfd_rendezvous_send(tfd_rendezvous *r, const char *key, tfd_tensor *t, tfd_status *status);
/* Calls done when the tensor for key is there (maybe at once, on this thread). */
void tfd_rendezvous_recv(tfd_rendezvous *r, const char *key, tfd_recv_done done, void *arg);
/* TFD_OK while the rendezvous works; once aborted, the abort's code, with
 * its message copied into out (which may be NULL). */
tfd_code tfd_rendezvous_status(tfd_rendezvous *r, tfd_status *out);
/* Fails all waiting and future recvs with code/message. The first abort wins. */
void tfd_rendezvous_abort(tfd_rendezvous *r, tfd_code code, const char *message);
/* The key for a transfer (any length), for the caller to free(); NULL when
 * out of memory. */
char *tfd_rendezvous_key(const char *src_device, uint64_t incarnation, const char *dst_device, const char *tensor_name);

#endif
