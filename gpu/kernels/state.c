/* What every entry of the CUDA device math does first and on failure (cuda_kernels.h). It knows no
 * family of kernels: attach.c makes and frees their per-device state. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_kernels.h"

const char tfd_cuda_math_name[] = "cuda";

tfd_code tfd_cuda_begin(struct tfd_device *d, const char *entry, tfd_dtype dtype, int64_t count, tfd_cuda_call *c,
                        tfd_status *st) {
  c->entry = entry;
  c->dtype = dtype;
  c->count = count;
  /* by name, not by the table's address: the table (math.c) sits above the families that call here */
  if (!d || !d->math || !d->math->name || strcmp(d->math->name, tfd_cuda_math_name) != 0)
    return tfd_status_setf(st, TFD_INTERNAL, "cuda %s: device %s is not a GPU of the CUDA backend", entry,
                           d && d->name ? d->name : "(null)");
  c->g = (tfd_gpu_device *)d;
  c->ctx = c->g->ctx;
  c->k = c->ctx->kernels;
  if (!c->k) return tfd_status_setf(st, TFD_INTERNAL, "%s: %s: the CUDA kernels were not set up", c->ctx->name, entry);
  c->l.stream = tfd_gpu_ctx_stream(c->ctx); /* a capture stream while this thread records a graph */
  c->l.sm_count = c->k->sm_count;
  c->l.max_blocks = tfd_cuda_max_blocks(c->k->sm_count);
  cudaError_t err = cudaSetDevice(c->ctx->cuda_id);
  return err == cudaSuccess ? TFD_OK : tfd_cuda_fail(c, "cudaSetDevice", err, st);
}

static int prefix(const tfd_cuda_call *c, char *buf, size_t cap) {
  return snprintf(buf, cap, "%s: %s (%s, %lld elements)", c->ctx->name, c->entry, tfd_cuda_dtype_name(c->dtype),
                  (long long)c->count);
}

tfd_code tfd_cuda_fail(const tfd_cuda_call *c, const char *what, cudaError_t err, tfd_status *st) {
  (void)cudaGetLastError(); /* clear a non-sticky error so later calls start clean */
  char head[512];
  prefix(c, head, sizeof head);
  return tfd_status_setf(st, TFD_INTERNAL, "%s: %s failed: %s", head, what, cudaGetErrorString(err));
}

tfd_code tfd_cuda_failf(const tfd_cuda_call *c, tfd_code code, tfd_status *st, const char *fmt, ...) {
  char head[512], msg[512];
  prefix(c, head, sizeof head);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return tfd_status_setf(st, code, "%s: %s", head, msg);
}

tfd_code tfd_cuda_unimplemented(struct tfd_device *d, const char *entry, tfd_dtype dtype, tfd_status *st) {
  return tfd_status_setf(st, TFD_UNIMPLEMENTED, "%s: cuda %s does not take %s", d && d->name ? d->name : "GPU", entry,
                         tfd_cuda_dtype_name(dtype));
}

void *tfd_cuda_workspace(const tfd_cuda_call *c, size_t bytes, tfd_status *st) {
  if (bytes == 0) return NULL;
  void *p = tfd_allocator_allocate(c->g->allocator, 256, bytes, st);
  if (!p && st) { /* the allocator's message names the allocator, the request and its limit: keep it */
    char head[512], why[512];
    prefix(c, head, sizeof head);
    snprintf(why, sizeof why, "%s", st->msg ? st->msg : "out of device memory");
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "%s: workspace of %zu bytes: %s", head, bytes, why);
  }
  return p;
}

void tfd_cuda_workspace_free(const tfd_cuda_call *c, void *p, size_t bytes) {
  if (p) tfd_allocator_deallocate(c->g->allocator, p, bytes);
}
