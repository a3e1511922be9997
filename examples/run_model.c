/* run_model: loads a model (a TensorFlow.js model.json, a binary GraphDef .pb, or a folder holding
 * one), says what it takes and gives, runs it once on inputs of 0.5 and prints what came out.
 *
 *   cc run_model.c -o run_model $(pkg-config --cflags --libs tfdev) && ./run_model path/to/model */
#include <stdio.h>
#include <tfdev/tfdev.h>

static void print_shape(int rank, const int64_t *dims) {
  if (rank < 0) printf("(unknown rank)");
  for (int d = 0; d < rank; d++) printf("%s%lld", d ? " x " : "[", (long long)dims[d]);
  printf(rank > 0 ? "]" : rank == 0 ? "scalar" : "");
}

/* 0.5 in a float dtype; 0 (or false) in the others. */
static const void *half_or_zero(tfd_dtype dt) {
  static const float f = 0.5f;
  static const double d = 0.5;
  static const uint16_t h = 0x3800; /* float16 0.5 */
  static const int64_t zero = 0;    /* zero bytes: an int32, int64, uint8 or bool 0 */
  return dt == TFD_FLOAT32 ? (const void *)&f : dt == TFD_FLOAT64 ? (const void *)&d : dt == TFD_FLOAT16 ? (const void *)&h
                                                                                                       : (const void *)&zero;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s MODEL\n", argv[0]);
    return 2;
  }
  tfd_status *st = tfd_status_new();
  tfd_model *m; /* ours to free */
  if (tfd_model_load(argv[1], NULL, &m, st) != TFD_OK) {
    fprintf(stderr, "%s: %s\n", tfd_code_name(tfd_status_code(st)), tfd_status_message(st));
    tfd_status_free(st);
    return 1;
  }
  int n_in = tfd_model_num_inputs(m), n_out = tfd_model_num_outputs(m), code = 0;
  tfd_tensor *inputs[16] = {NULL}, *outputs[16] = {NULL};
  if (n_in > 16 || n_out > 16) {
    fprintf(stderr, "this example takes models of up to 16 inputs and outputs\n");
    tfd_model_free(m);
    tfd_status_free(st);
    return 1;
  }
  printf("tfdev %s: %s takes %d input(s) and gives %d output(s)\n", tfd_version(), argv[1], n_in, n_out);
  for (int i = 0; i < n_in; i++) {
    int64_t dims[TFD_MAX_DIMS];
    int rank = tfd_model_input_shape(m, i, dims, TFD_MAX_DIMS);
    printf("  in  %-20s %-8s ", tfd_model_input_name(m, i), tfd_dtype_name(tfd_model_input_dtype(m, i)));
    print_shape(rank, dims);
    printf("\n");
    for (int d = 0; d < rank; d++)
      if (dims[d] < 0) dims[d] = 1; /* a batch of one where the size is left open */
    tfd_dtype dt = tfd_model_input_dtype(m, i);
    if (tfd_tensor_new(NULL, dt, dims, rank < 0 ? 0 : rank, &inputs[i], st) != TFD_OK ||
        tfd_tensor_fill(inputs[i], half_or_zero(dt), st) != TFD_OK) {
      code = 1;
      break;
    }
  }
  if (code == 0 && tfd_model_run(m, inputs, n_in, outputs, n_out, st) == TFD_OK) {
    for (int i = 0; i < n_out; i++) {
      int64_t dims[TFD_MAX_DIMS];
      int rank = tfd_tensor_ndims(outputs[i]);
      for (int d = 0; d < rank; d++) dims[d] = tfd_tensor_dim(outputs[i], d);
      printf("  out %-20s %-8s ", tfd_model_output_name(m, i), tfd_dtype_name(tfd_tensor_dtype(outputs[i])));
      print_shape(rank, dims);
      if (tfd_tensor_dtype(outputs[i]) == TFD_FLOAT32 && tfd_tensor_numel(outputs[i]) > 0)
        printf("  first value %g", (double)*(const float *)tfd_tensor_const_data(outputs[i]));
      printf("\n");
      tfd_tensor_unref(outputs[i]); /* each output is ours */
    }
  } else {
    code = 1;
  }
  if (code) fprintf(stderr, "%s: %s\n", tfd_code_name(tfd_status_code(st)), tfd_status_message(st));
  for (int i = 0; i < n_in; i++) tfd_tensor_unref(inputs[i]);
  tfd_model_free(m);
  tfd_status_free(st);
  return code;
}
