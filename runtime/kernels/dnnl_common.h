/* What the oneDNN matmul and convolution wrappers share: an engine, stream and lock per kernel, the
 * table of shapes each caches, the activations as eltwise post-ops, and the refusal of oneDNN's
 * reference implementations. All but the shape table is compiled only with oneDNN (TFDEV_WITH_ONEDNN). */
#ifndef TFDEV_RUNTIME_DNNL_COMMON_H
#define TFDEV_RUNTIME_DNNL_COMMON_H

#include <stddef.h>

/* The table of shapes involves no oneDNN call, so it is built (and tested) in every build. */
/* Shapes kept per kernel: a model run at a few batch sizes keeps them all; beyond that the least
 * recently used is dropped. */
#define TFD_DNNL_CACHED_SHAPES 4

/* A kernel's table of cached shapes: *num entries in use, kept dense, each `size` bytes with its
 * last-use tick (uint64_t) at used_offset; an unused entry is all zero. The index a new shape
 * takes: the next unused entry (counted in *num), else the least recently used, which the caller
 * clears first. */
int tfd_dnnl_slot_for_new(const void *entries, size_t size, size_t used_offset, int *num);
/* After a failed make: entry i leaves the table, the last entry takes its place and the last
 * place is zeroed. */
void tfd_dnnl_slot_drop(void *entries, size_t size, int i, int *num);

#ifdef TFDEV_WITH_ONEDNN
#include <dnnl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "nn/activation.h"

/* What each kernel holds beside its cached shapes: a CPU engine and a stream on it, and a lock (a
 * cached primitive's memory objects carry one run's pointers at a time). */
typedef struct tfd_dnnl_base {
  pthread_mutex_t mu;
  dnnl_engine_t engine;
  dnnl_stream_t stream;
  uint64_t tick; /* runs so far: each cached shape keeps the tick of its last run */
} tfd_dnnl_base;

/* false (nothing made) when oneDNN cannot make an engine or stream. */
bool tfd_dnnl_base_init(tfd_dnnl_base *b);
void tfd_dnnl_base_destroy(tfd_dnnl_base *b);


/* Appends act as an eltwise post-op (nothing for TFD_ACT_NONE); alpha is LeakyRelu's slope. */
dnnl_status_t tfd_dnnl_append_activation(dnnl_post_ops_t po, tfd_activation act, float alpha);

/* dnnl_unimplemented when oneDNN chose a reference implementation ("ref:..."), which is for checking,
 * not speed (a 3-channel first layer with a Prelu epilogue measured 40 ms there against 0.5 ms on
 * tfdev's own path): the kernel then keeps its own path for that shape. */
dnnl_status_t tfd_dnnl_refuse_reference(const_dnnl_primitive_desc_t pd);

#endif
#endif
