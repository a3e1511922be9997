/* Custom kernels (include/tfdev/custom_op.h): a registration's callbacks behind the kernel
 * interface, the public kernel context, and kernels that run on the thread that started the step.
 *
 * A registration is copied once onto the heap and lives as long as the library (the kernel registry
 * frees it when the library is unloaded); each
 * node's kernel keeps the state its create made. A kernel asking for the caller's thread computes
 * at once when it is already there (partition 0 of a blocking run, synchronous sessions, eager
 * ops), else hands itself to the step's caller queue (runtime/framework/caller_queue.h), which that
 * thread drains while it waits for or polls the step. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/tensor_internal.h"
#include "../core/api_args.h"
#include "../core/status_internal.h"
#include "../framework/caller_queue.h"
#include "kernel.h"

typedef struct custom_reg {
  tfd_custom_kernel spec; /* op and device_type point at the copies below */
  char *op, *device_type;
} custom_reg;

static const tfd_custom_kernel *spec_of(const tfd_kernel *k) { return &((const custom_reg *)k->custom)->spec; }

static void run_compute(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_custom_kernel *spec = spec_of(k);
  c->kernel = k;
  spec->compute(spec->user, k->state, c);
  c->kernel = NULL;
  for (int o = 0; o < c->num_outputs && tfd_status_code(c->status) == TFD_OK; o++)
    if (!c->outputs[o]) tfd_kernel_fail(c, k, TFD_INTERNAL, "the kernel set no output %d", o);
}

static void custom_compute(tfd_kernel *k, tfd_kernel_context *c) { run_compute(k, c); }

typedef struct caller_call {
  tfd_kernel *k;
  tfd_kernel_context *c;
  tfd_done_fn done;
  void *arg;
} caller_call;

static void run_on_caller(void *p) {
  caller_call call = *(caller_call *)p;
  free(p);
  run_compute(call.k, call.c);
  call.done(call.arg);
}

static const char not_run[] = "the session was closed before its kernel could run on the thread that started the step";

/* The queue was closed with the call waiting in it (a closing session): the node fails, unrun. */
static void cancel_on_caller(void *p) {
  caller_call call = *(caller_call *)p;
  free(p);
  tfd_kernel_fail(call.c, call.k, TFD_CANCELLED, "%s", not_run);
  call.done(call.arg);
}

static void custom_compute_async(tfd_kernel *k, tfd_kernel_context *c, tfd_done_fn done, void *arg) {
  if (c->has_caller_thread && pthread_equal(pthread_self(), c->caller_thread)) {
    run_compute(k, c);
    done(arg);
    return;
  }
  caller_call *call = c->caller_queue ? malloc(sizeof *call) : NULL;
  tfd_code posted = TFD_RESOURCE_EXHAUSTED;
  if (call) {
    *call = (caller_call){k, c, done, arg};
    if ((posted = tfd_caller_queue_post(c->caller_queue, run_on_caller, cancel_on_caller, call)) == TFD_OK) return;
    free(call);
  }
  if (!c->caller_queue)
    tfd_kernel_fail(c, k, TFD_FAILED_PRECONDITION, "%s",
                    "its kernel runs on the thread that starts the step, and this step (a partial run) has none to run it");
  else if (posted == TFD_CANCELLED) tfd_kernel_fail(c, k, TFD_CANCELLED, "%s", not_run);
  else tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory");
  done(arg);
}

static void custom_cleanup(tfd_kernel *k) {
  const tfd_custom_kernel *spec = spec_of(k);
  if (spec->destroy && k->state) spec->destroy(spec->user, k->state);
  k->state = NULL;
}

tfd_code tfd_setup_custom(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  const tfd_custom_kernel *spec = spec_of(k);
  k->cleanup = custom_cleanup;
  if (spec->create) {
    tfd_status mine = TFD_STATUS_INIT;
    k->state = spec->create(spec->user, init->node, &mine);
    if (tfd_status_code(&mine) != TFD_OK) {
      tfd_code code = tfd_status_setf(st, tfd_status_code(&mine), "node '%s' (%s): %s", tfd_node_def_name(init->node),
                                      init->op->name, tfd_status_message(&mine));
      tfd_status_clear(&mine);
      return code;
    }
  }
  k->on_caller_thread = spec->on_caller_thread;
  if (spec->on_caller_thread) {
    k->compute = NULL;
    k->compute_async = custom_compute_async;
  } else {
    k->compute = custom_compute;
  }
  return TFD_OK;
}

static void free_reg(void *p) {
  custom_reg *r = p;
  free(r->op);
  free(r->device_type);
  free(r);
}

tfd_code tfd_custom_kernel_register(const tfd_custom_kernel *kernel, tfd_status *st) {
  tfd_status_reset(st);
  static const char fn[] = "tfd_custom_kernel_register";
  if (tfd_arg_required(st, fn, "kernel", kernel) || tfd_arg_required(st, fn, "kernel->op", kernel->op) ||
      tfd_arg_required(st, fn, "kernel->device_type", kernel->device_type) ||
      tfd_arg_required(st, fn, "kernel->compute", (const void *)(uintptr_t)kernel->compute))
    return TFD_INVALID_ARGUMENT;
  if (!*kernel->device_type)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "a custom kernel needs an op, a device type and a compute function");
  if (!tfd_op_lookup(kernel->op))
    return tfd_status_setf(st, TFD_NOT_FOUND, "kernel for unknown op '%s' (%s)", kernel->op, kernel->device_type);
  custom_reg *r = calloc(1, sizeof *r);
  if (r) {
    r->spec = *kernel;
    r->op = strdup(kernel->op);
    r->device_type = strdup(kernel->device_type);
    r->spec.op = r->op;
    r->spec.device_type = r->device_type;
  }
  if (!r || !r->op || !r->device_type) {
    if (r) free(r->op), free(r->device_type);
    free(r);
    return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory registering a kernel");
  }
  bool kept = false;
  tfd_code code =
      tfd_kernel_register_entry(r->op, r->device_type, tfd_setup_custom, kernel->priority, r, free_reg, &kept, st);
  if (!kept) free_reg(r); /* refused or outranked: nothing points at it */
  return code;
}

/* ---- the public kernel context ---- */
int tfd_kernel_context_num_inputs(const tfd_kernel_context *c) { return c->num_inputs; }
tfd_tensor *tfd_kernel_context_input(const tfd_kernel_context *c, int i) {
  return i >= 0 && i < c->num_inputs ? c->inputs[i] : NULL;
}
int tfd_kernel_context_num_outputs(const tfd_kernel_context *c) { return c->num_outputs; }
tfd_device *tfd_kernel_context_device(const tfd_kernel_context *c) { return c->device; }
const char *tfd_kernel_context_node_name(const tfd_kernel_context *c) { return c->kernel ? c->kernel->name : ""; }
bool tfd_kernel_context_failed(const tfd_kernel_context *c) { return tfd_status_code(c->status) != TFD_OK; }

void tfd_kernel_context_fail(tfd_kernel_context *c, tfd_code code, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (tfd_status_code(c->status) != TFD_OK) return; /* the first failure is the one reported */
  if (c->kernel) tfd_kernel_fail(c, c->kernel, code == TFD_OK ? TFD_UNKNOWN : code, "%s", msg);
  else tfd_status_setf(c->status, code == TFD_OK ? TFD_UNKNOWN : code, "%s", msg);
}

tfd_code tfd_kernel_context_set_output(tfd_kernel_context *c, int i, tfd_tensor *t) {
  if (!c) return TFD_INVALID_ARGUMENT; /* no context to fail */
  if (i < 0 || i >= c->num_outputs) {
    tfd_kernel_context_fail(c, TFD_INVALID_ARGUMENT, "output %d is not one of its %d outputs", i, c->num_outputs);
    return TFD_INVALID_ARGUMENT;
  }
  if (!t) {
    tfd_kernel_context_fail(c, TFD_INVALID_ARGUMENT, "tfd_kernel_context_set_output: t is NULL (output %d)", i);
    return TFD_INVALID_ARGUMENT;
  }
  tfd_tensor_unref(c->outputs[i]);
  c->outputs[i] = tfd_tensor_ref(t);
  return TFD_OK;
}

tfd_tensor *tfd_kernel_context_allocate_output(tfd_kernel_context *c, int i, tfd_dtype dtype, const int64_t *dims,
                                               int ndims) {
  if (i < 0 || i >= c->num_outputs) {
    tfd_kernel_context_fail(c, TFD_INVALID_ARGUMENT, "output %d is not one of its %d outputs", i, c->num_outputs);
    return NULL;
  }
  tfd_status tmp = TFD_STATUS_INIT;
  tfd_tensor *t = tfd_tensor_make(c->allocator, dtype, dims, ndims, &tmp);
  if (!t) {
    tfd_kernel_context_fail(c, tfd_status_code(&tmp), "%s", tfd_status_message(&tmp));
    tfd_status_clear(&tmp);
    return NULL;
  }
  tfd_tensor_unref(c->outputs[i]);
  c->outputs[i] = t;
  return t;
}
