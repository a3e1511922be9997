/* Spectral ops, as TensorFlow's core/ops/spectral_ops.cc defines them: FFT, IFFT, RFFT and IRFFT over complex64. Their
 * definitions and shape functions. */
#include "common_shape_fns.h"

static const tfd_attr_def attrs_fft[] = {{"Tcomplex", TFD_ATTR_TYPE, false, TFD_COMPLEX64, 0, NULL}, END};

static const tfd_attr_def attrs_rfft[] = {{"Treal", TFD_ATTR_TYPE, false, TFD_FLOAT32, 0, NULL},
                                          {"Tcomplex", TFD_ATTR_TYPE, false, TFD_COMPLEX64, 0, NULL},
                                          END};

/* FFT, IFFT (same shape), RFFT and IRFFT (the innermost dimension becomes fft_length / 2 + 1, or
 * fft_length, when fft_length is known). */
static tfd_code infer_fft(tfd_infer_ctx *c, tfd_status *st) {
  const char *op = tfd_node_def_op(c->node);
  bool real = c->num_inputs == 2, forward = op[0] == 'F' || op[0] == 'R';
  const tfd_shape *in = &c->in_shapes[0];
  if (in->ndims == 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): Shape must be at least rank 1 but is rank 0",
                           node_name(c), op);
  c->out_shapes[0] = *in;
  c->out_types[0] = TFD_COMPLEX64;
  if (!real) return TFD_OK;
  if (tfd_infer_check_partner_type(c, forward ? "Tcomplex" : "Treal", forward ? TFD_COMPLEX64 : TFD_FLOAT32, st) !=
      TFD_OK)
    return tfd_status_code(st);
  c->out_types[0] = forward ? TFD_COMPLEX64 : TFD_FLOAT32;
  const tfd_shape *len = &c->in_shapes[1];
  if (c->in_types[1] != TFD_INT32)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): fft_length must be int32, got %s", node_name(c),
                           op, tfd_dtype_name(c->in_types[1]));
  if (len->ndims >= 0 && (len->ndims != 1 || (len->dims[0] >= 0 && len->dims[0] != 1)))
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): fft_length must have shape [1]", node_name(c),
                           op);
  const tfd_tensor *v = c->in_values ? c->in_values[1] : NULL;
  if (in->ndims > 0) {
    int64_t n = v && tfd_tensor_numel(v) == 1 ? ((const int32_t *)tfd_tensor_const_data(v))[0] : -1;
    c->out_shapes[0].dims[in->ndims - 1] = n < 0 ? -1 : forward && n ? n / 2 + 1 : n;
  }
  return TFD_OK;
}

/* One row per op: clang-format would give each field a line. */
/* clang-format off */
static const tfd_op_def spectral_ops[] = {
    {.name = "FFT", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .type_attr = "Tcomplex", .allowed_types = C64,
     .attrs = attrs_fft, .infer = infer_fft},
    {.name = "IFFT", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .type_attr = "Tcomplex", .allowed_types = C64,
     .attrs = attrs_fft, .infer = infer_fft},
    {.name = "RFFT", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "Treal",
     .allowed_types = 1u << TFD_FLOAT32, .attrs = attrs_rfft, .infer = infer_fft},
    {.name = "IRFFT", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "Tcomplex", .allowed_types = C64,
     .attrs = attrs_rfft, .infer = infer_fft},
};
/* clang-format on */

const tfd_op_family tfd_spectral_ops = {"spectral", spectral_ops, (int)(sizeof spectral_ops / sizeof spectral_ops[0])};
