/* Runtimes for the rest of the runtime: references and the hooks, read by the CPU device factory,
 * sessions and the Lua bindings. */
#ifndef TFDEV_RUNTIME_RUNTIME_INTERNAL_H
#define TFDEV_RUNTIME_RUNTIME_INTERNAL_H

#include "tfdev/runtime.h"
#include "tfdev/threadpool.h"

/* The pool over the host's scheduler, or NULL (tfdev's own pools). Borrowed. */
tfd_threadpool *tfd_runtime_pool(const tfd_runtime *rt);
/* The runtime's inter-op pool named `name` (session_inter_op_thread_pool's global_name), made with
 * `threads` threads the first time; num_threads is what the session option asked for (0: the
 * default), and a later ask for another count is INVALID_ARGUMENT, TensorFlow's "Pool NAME configured
 * previously with num_threads=...". Borrowed: the runtime frees it. NULL on error (st set). */
tfd_threadpool *tfd_runtime_named_pool(tfd_runtime *rt, const char *name, int num_threads, int threads, tfd_status *st);
/* The session factory of the runtime: an object of the session layer, opaque to this one, made by
 * make on first use (NULL when make fails) and freed by destroy when the runtime goes. Borrowed. */
void *tfd_runtime_session_factory(tfd_runtime *rt, void *(*make)(void), void (*destroy)(void *));
/* The hooks, or NULL for tfdev's defaults (rt may be NULL: the defaults). Borrowed. */
const tfd_host_allocator *tfd_runtime_allocator(const tfd_runtime *rt);
const tfd_host_logger *tfd_runtime_logger(const tfd_runtime *rt);

/* tfd_runtime_new's work (builtin_factories.c gives the registry): a runtime over config (NULL: the
 * defaults) that takes registry (freed on failure; NULL reads as out of memory). */
tfd_runtime *tfd_runtime_make(const tfd_runtime_config *config, tfd_factory_registry *registry, tfd_status *st);

/* The runtime a registry belongs to (NULL: none, tfdev's defaults), and how to hold it (the registry
 * sits below the runtime and calls it only through ref and unref). A registry's copies keep its
 * runtime: with `owned` they hold a reference, which tfd_factory_registry_free drops. */
void tfd_factory_registry_set_runtime(tfd_factory_registry *r, tfd_runtime *rt, bool owned,
                                      tfd_runtime *(*ref)(tfd_runtime *), void (*unref)(tfd_runtime *));
tfd_runtime *tfd_factory_registry_runtime(const tfd_factory_registry *r);

#endif
