/* OpSegment: the kernels a device keeps for each session, alive while the session holds them.
 *
 * Kernels are created once per (session, node) and reused by every step;
 * when a session's last hold goes, its kernels are destroyed. Thread-safe. */
#ifndef TFDEV_RUNTIME_OP_SEGMENT_H
#define TFDEV_RUNTIME_OP_SEGMENT_H

#include <pthread.h>

#include "../core/strmap.h"
#include "op_kernel.h"
#include "tfdev/status.h"

typedef struct tfd_op_segment {
  pthread_mutex_t mu;
  tfd_strmap sessions; /* session handle -> struct segment_item* */
} tfd_op_segment;

/* Makes a kernel for a node; returns NULL and fills status on failure. */
typedef tfd_op_kernel *(*tfd_create_kernel_fn)(void *arg, tfd_status *status);

void tfd_op_segment_init(tfd_op_segment *s);
/* Destroys every kernel of every session. */
void tfd_op_segment_fini(tfd_op_segment *s);
/* Adds a hold on the session (creating its segment on the first hold). */
tfd_code tfd_op_segment_add_hold(tfd_op_segment *s, const char *session, tfd_status *status);
/* Drops a hold; the last one destroys the session's kernels. */
void tfd_op_segment_remove_hold(tfd_op_segment *s, const char *session);
/* The kernel of (session, node), created with create(arg) the first time.
 * NOT_FOUND when the session holds nothing. The kernel stays owned by the
 * segment. */
tfd_code tfd_op_segment_find_or_create(tfd_op_segment *s, const char *session, const char *node,
                                       tfd_create_kernel_fn create, void *arg, tfd_op_kernel **out,
                                       tfd_status *status);
/* Number of kernels held for a session (0 when it holds nothing). */
size_t tfd_op_segment_num_kernels(tfd_op_segment *s, const char *session);

#endif
