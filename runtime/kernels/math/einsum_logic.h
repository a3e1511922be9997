/* Einsum's one algorithm (k_einsum.c's tfd_einsum_run: TensorFlow's einsum_op_impl.h) over an
 * executor that holds the memory and the arithmetic: the CPU's (malloc, strided loops, cblas) or a
 * device's (dk_matmul.c: the math's copy_walk, reduce and matmul). */
#ifndef TFDEV_RUNTIME_EINSUM_LOGIC_H
#define TFDEV_RUNTIME_EINSUM_LOGIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../framework/einsum_spec.h"
#include "../kernel.h"
#include "matmul_logic.h"

/* The most axes a walk has: every label, and the broadcast dimensions of an ellipsis. */
#define TFD_EINSUM_MAX_AXES (TFD_EINSUM_MAX_LABELS + TFD_MAX_DIMS)

/* dst[dst_off(keep idx)] = sum over the summed indices of src[src_off(keep idx, sum idx)]: the one
 * strided walk behind reduction, diagonals, transposition and inflation. */
typedef struct tfd_einsum_walk {
  int nk, ns;
  int64_t ksize[TFD_EINSUM_MAX_AXES], ksrc[TFD_EINSUM_MAX_AXES], kdst[TFD_EINSUM_MAX_AXES];
  int64_t ssize[TFD_EINSUM_MAX_AXES], ssrc[TFD_EINSUM_MAX_AXES];
} tfd_einsum_walk;

/* What the algorithm asks of the memory it runs in. Each returns false (NULL) after reporting the
 * error against the kernel (k, c). dense: the walk's destination is row-major in its keep order
 * (an operand's layout), else it is the output's order (a permutation, maybe inflated). release
 * frees the temporaries, once, at the end of a run. */
typedef struct tfd_einsum_exec tfd_einsum_exec;
struct tfd_einsum_exec {
  void *(*temp)(tfd_einsum_exec *ex, size_t bytes);
  tfd_tensor *(*output)(tfd_einsum_exec *ex, tfd_dtype dt, const int64_t *dims, int nd);
  bool (*walk)(tfd_einsum_exec *ex, tfd_dtype dt, const tfd_einsum_walk *w, const void *src, void *dst, bool dense);
  bool (*copy)(tfd_einsum_exec *ex, void *dst, const void *src, size_t bytes);
  bool (*zero)(tfd_einsum_exec *ex, void *dst, size_t bytes);
  /* batches products C_b = op(A at a_offset(b)) op(B at b_offset(b)) of s (tfd_batch_matmul_offsets) */
  bool (*matmul)(tfd_einsum_exec *ex, tfd_dtype dt, const tfd_batch_matmul_shape *s, int64_t batches, bool ta, bool tb,
                 const void *a, const void *b, void *c);
  void (*release)(tfd_einsum_exec *ex);
  tfd_kernel *k;
  tfd_kernel_context *c;
  void *state; /* the executor's own */
};

/* Runs k's equation (k->state, tfd_setup_einsum) on c's inputs through ex; the output in
 * c->outputs[0], or the error reported. */
void tfd_einsum_run(tfd_kernel *k, tfd_kernel_context *c, tfd_einsum_exec *ex);

#endif
