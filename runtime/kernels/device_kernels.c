/* The device kernels' registry: which ops have a kernel written over kernels/device_math.h (the
 * dk_*.c files), registered for a device type whose devices carry a tfd_device_math. Every op the
 * CPU registry lists that does arithmetic or rearranges data is here; the rest of a GPU's ops are the
 * data-movement kernels (k_data_movement.c). */
#include <string.h>

#include "device_kernel.h"

typedef struct device_kernel {
  const char *op;
  tfd_kernel_setup_fn setup;
} device_kernel;

static const device_kernel device_kernels[] = {
    /* elementwise (dk_cwise.c) */
    {"Add", tfd_dk_setup_cwise}, {"AddV2", tfd_dk_setup_cwise}, {"Sub", tfd_dk_setup_cwise},
    {"Mul", tfd_dk_setup_cwise}, {"RealDiv", tfd_dk_setup_cwise}, {"Maximum", tfd_dk_setup_cwise},
    {"Minimum", tfd_dk_setup_cwise}, {"Pow", tfd_dk_setup_cwise}, {"SquaredDifference", tfd_dk_setup_cwise},
    {"FloorDiv", tfd_dk_setup_cwise}, {"FloorMod", tfd_dk_setup_cwise}, {"Neg", tfd_dk_setup_cwise},
    {"Abs", tfd_dk_setup_cwise}, {"Square", tfd_dk_setup_cwise}, {"Exp", tfd_dk_setup_cwise},
    {"Log", tfd_dk_setup_cwise}, {"Sqrt", tfd_dk_setup_cwise}, {"Rsqrt", tfd_dk_setup_cwise},
    {"Reciprocal", tfd_dk_setup_cwise}, {"Relu", tfd_dk_setup_cwise}, {"Relu6", tfd_dk_setup_cwise},
    {"Elu", tfd_dk_setup_cwise}, {"Selu", tfd_dk_setup_cwise}, {"Softplus", tfd_dk_setup_cwise},
    {"LeakyRelu", tfd_dk_setup_cwise}, {"Sigmoid", tfd_dk_setup_cwise}, {"Tanh", tfd_dk_setup_cwise},
    {"LogicalNot", tfd_dk_setup_cwise}, {"Equal", tfd_dk_setup_cwise}, {"NotEqual", tfd_dk_setup_cwise},
    {"Less", tfd_dk_setup_cwise}, {"LessEqual", tfd_dk_setup_cwise}, {"Greater", tfd_dk_setup_cwise},
    {"GreaterEqual", tfd_dk_setup_cwise}, {"LogicalAnd", tfd_dk_setup_cwise}, {"LogicalOr", tfd_dk_setup_cwise},
    {"Select", tfd_dk_setup_cwise}, {"SelectV2", tfd_dk_setup_cwise}, {"AddN", tfd_dk_setup_cwise},
    {"FakeQuantWithMinMaxArgs", tfd_dk_setup_fake_quant}, {"FakeQuantWithMinMaxVars", tfd_dk_setup_fake_quant},
    {"BiasAdd", tfd_dk_setup_cwise}, {"Softmax", tfd_dk_setup_cwise}, {"Prelu", tfd_dk_setup_cwise},
    {"Cast", tfd_dk_setup_cwise},
    {"Floor", tfd_dk_setup_cwise}, {"Ceil", tfd_dk_setup_cwise}, {"Sin", tfd_dk_setup_cwise},
    {"Cos", tfd_dk_setup_cwise}, {"Atan2", tfd_dk_setup_cwise},
    /* issue 26's math family (dk_cwise.c) */
    {"Acos", tfd_dk_setup_cwise}, {"Acosh", tfd_dk_setup_cwise}, {"Asin", tfd_dk_setup_cwise},
    {"Asinh", tfd_dk_setup_cwise}, {"Atan", tfd_dk_setup_cwise}, {"Atanh", tfd_dk_setup_cwise},
    {"Cosh", tfd_dk_setup_cwise}, {"Sinh", tfd_dk_setup_cwise}, {"Tan", tfd_dk_setup_cwise},
    {"Erf", tfd_dk_setup_cwise}, {"Expm1", tfd_dk_setup_cwise}, {"Log1p", tfd_dk_setup_cwise},
    {"Round", tfd_dk_setup_cwise}, {"Sign", tfd_dk_setup_cwise}, {"IsNan", tfd_dk_setup_cwise},
    {"IsInf", tfd_dk_setup_cwise}, {"IsFinite", tfd_dk_setup_cwise}, {"Div", tfd_dk_setup_cwise},
    {"DivNoNan", tfd_dk_setup_cwise}, {"Mod", tfd_dk_setup_cwise}, {"BitwiseAnd", tfd_dk_setup_cwise},
    {"ClipByValue", tfd_dk_setup_cwise}, {"LogSoftmax", tfd_dk_setup_cwise},
    /* reductions (dk_reduce.c) */
    {"Sum", tfd_dk_setup_reduce}, {"Mean", tfd_dk_setup_reduce}, {"Max", tfd_dk_setup_reduce},
    {"Min", tfd_dk_setup_reduce}, {"Prod", tfd_dk_setup_reduce}, {"ArgMax", tfd_dk_setup_reduce},
    {"ArgMin", tfd_dk_setup_reduce}, {"TopKV2", tfd_dk_setup_reduce}, {"All", tfd_dk_setup_reduce},
    {"Any", tfd_dk_setup_reduce}, {"EuclideanNorm", tfd_dk_setup_reduce}, {"Cumsum", tfd_dk_setup_reduce},
    {"Cumprod", tfd_dk_setup_reduce},
    /* data movement (dk_shape.c) */
    {"Transpose", tfd_dk_setup_shape}, {"ConcatV2", tfd_dk_setup_shape}, {"Concat", tfd_dk_setup_shape}, {"Pack", tfd_dk_setup_shape},
    {"Unpack", tfd_dk_setup_shape}, {"Slice", tfd_dk_setup_shape}, {"StridedSlice", tfd_dk_setup_shape},
    {"Split", tfd_dk_setup_shape}, {"SplitV", tfd_dk_setup_shape}, {"Tile", tfd_dk_setup_shape},
    {"Pad", tfd_dk_setup_shape}, {"PadV2", tfd_dk_setup_shape}, {"MirrorPad", tfd_dk_setup_shape},
    {"GatherV2", tfd_dk_setup_shape}, {"Gather", tfd_dk_setup_shape}, {"GatherNd", tfd_dk_setup_shape}, {"Range", tfd_dk_setup_shape},
    {"Fill", tfd_dk_setup_shape}, {"ZerosLike", tfd_dk_setup_shape}, {"OnesLike", tfd_dk_setup_shape},
    {"ExpandDims", tfd_dk_setup_shape}, {"Squeeze", tfd_dk_setup_shape}, {"Shape", tfd_dk_setup_shape},
    {"BroadcastTo", tfd_dk_setup_shape}, {"DepthToSpace", tfd_dk_setup_shape}, {"SpaceToDepth", tfd_dk_setup_shape},
    {"SpaceToBatchND", tfd_dk_setup_shape}, {"BatchToSpaceND", tfd_dk_setup_shape},
    {"ReverseV2", tfd_dk_setup_shape}, {"Reverse", tfd_dk_setup_shape}, {"MatrixBandPart", tfd_dk_setup_shape},
    {"OneHot", tfd_dk_setup_shape}, {"LinSpace", tfd_dk_setup_shape},
    {"Size", tfd_dk_setup_metadata}, {"Rank", tfd_dk_setup_metadata}, {"ShapeN", tfd_dk_setup_metadata},
    {"BroadcastArgs", tfd_dk_setup_metadata},
    /* scatters (dk_scatter.c) */
    {"ScatterNd", tfd_dk_setup_scatter}, {"TensorScatterUpdate", tfd_dk_setup_scatter}, {"Where", tfd_dk_setup_where},
    {"SparseToDense", tfd_dk_setup_sparse_to_dense},
    {"SparseSegmentSum", tfd_dk_setup_sparse_segment}, {"SparseSegmentMean", tfd_dk_setup_sparse_segment},
    {"SparseSegmentSqrtN", tfd_dk_setup_sparse_segment}, {"SparseSegmentSumWithNumSegments", tfd_dk_setup_sparse_segment},
    {"SparseSegmentMeanWithNumSegments", tfd_dk_setup_sparse_segment},
    {"SparseSegmentSqrtNWithNumSegments", tfd_dk_setup_sparse_segment},
    {"Bincount", tfd_dk_setup_bincount}, {"DenseBincount", tfd_dk_setup_bincount},
    {"LowerBound", tfd_dk_setup_search_sorted}, {"UpperBound", tfd_dk_setup_search_sorted},
    /* ops that hand their inputs on by reference, touching no element (EnsureShape reads only the
     * shape): their CPU kernels serve a GPU as they are, as TensorFlow registers them for every device */
    {"EnsureShape", tfd_setup_array}, {"StopGradient", tfd_setup_array}, {"Snapshot", tfd_setup_array},
    {"IdentityN", tfd_setup_identity_n},
    /* control flow: k_control_flow.c's kernels serve every device */
    {"Enter", tfd_setup_control_flow}, {"Exit", tfd_setup_control_flow}, {"NextIteration", tfd_setup_control_flow},
    {"LoopCond", tfd_setup_control_flow}, {"Switch", tfd_setup_control_flow}, {"Merge", tfd_setup_control_flow},
    {"ControlTrigger", tfd_setup_control_flow},
    /* products (dk_matmul.c) */
    {"MatMul", tfd_dk_setup_matmul}, {"_FusedMatMul", tfd_dk_setup_matmul}, {"BatchMatMulV2", tfd_dk_setup_matmul},
    {"BatchMatMul", tfd_dk_setup_matmul}, {"Einsum", tfd_dk_setup_einsum},
    /* convolutions and pools (dk_conv.c) */
    {"Conv2D", tfd_dk_setup_conv}, {"_FusedConv2D", tfd_dk_setup_conv}, {"LRN", tfd_dk_setup_lrn},
    {"Dilation2D", tfd_dk_setup_window_max}, {"MaxPoolWithArgmax", tfd_dk_setup_window_max},
    {"DepthwiseConv2dNative", tfd_dk_setup_conv}, {"_FusedDepthwiseConv2dNative", tfd_dk_setup_conv},
    {"FusedDepthwiseConv2dNative", tfd_dk_setup_conv}, {"MaxPool", tfd_dk_setup_conv},
    {"AvgPool", tfd_dk_setup_conv},
    /* 3-D convolution and pools, from the 2-D entries (dk_conv3d.c) */
    /* TensorLists keep their elements in the device's memory (k_tensor_list.c moves and copies them there) */
    {"TensorListReserve", tfd_setup_tensor_list}, {"EmptyTensorList", tfd_setup_tensor_list},
    {"TensorListFromTensor", tfd_setup_tensor_list}, {"TensorListGetItem", tfd_setup_tensor_list},
    {"TensorListSetItem", tfd_setup_tensor_list}, {"TensorListPushBack", tfd_setup_tensor_list},
    {"TensorListPopBack", tfd_setup_tensor_list}, {"TensorListStack", tfd_setup_tensor_list},
    {"TensorListLength", tfd_setup_tensor_list}, {"TensorListElementShape", tfd_setup_tensor_list},
    {"TensorListGather", tfd_setup_tensor_list}, {"TensorListScatter", tfd_setup_tensor_list},
    {"TensorListScatterV2", tfd_setup_tensor_list}, {"TensorListScatterIntoExistingList", tfd_setup_tensor_list},
    {"TensorListResize", tfd_setup_tensor_list}, {"TensorListSplit", tfd_setup_tensor_list},
    {"TensorListConcat", tfd_setup_tensor_list}, {"TensorListConcatV2", tfd_setup_tensor_list},
    /* TensorArrays too: the array lives in the device's resource manager, which the placer's
     * colocation along resource edges makes every op on one array share (k_tensor_array.c) */
    {"TensorArrayV3", tfd_setup_tensor_array}, {"TensorArrayWriteV3", tfd_setup_tensor_array},
    {"TensorArrayReadV3", tfd_setup_tensor_array}, {"TensorArrayGatherV3", tfd_setup_tensor_array},
    {"TensorArrayScatterV3", tfd_setup_tensor_array}, {"TensorArraySizeV3", tfd_setup_tensor_array},
    {"TensorArrayCloseV3", tfd_setup_tensor_array}, {"TensorArrayConcatV3", tfd_setup_tensor_array},
    {"TensorArraySplitV3", tfd_setup_tensor_array},
    {"SparseReshape", tfd_dk_setup_sparse_fill}, {"SparseFillEmptyRows", tfd_dk_setup_sparse_fill},
    {"RaggedGather", tfd_dk_setup_ragged}, {"RaggedRange", tfd_dk_setup_ragged}, {"RaggedTensorToTensor", tfd_dk_setup_ragged},
    /* uniques by sorting; ListDiff and the greedy box selections on the host (dk_unique.c) */
    {"Unique", tfd_dk_setup_unique}, {"UniqueV2", tfd_dk_setup_unique}, {"ListDiff", tfd_dk_setup_unique},
    {"NonMaxSuppressionV2", tfd_dk_setup_nms}, {"NonMaxSuppressionV3", tfd_dk_setup_nms},
    {"NonMaxSuppressionV4", tfd_dk_setup_nms}, {"NonMaxSuppressionV5", tfd_dk_setup_nms},
    {"Complex", tfd_dk_setup_spectral}, {"Real", tfd_dk_setup_spectral}, {"Imag", tfd_dk_setup_spectral},
    {"ComplexAbs", tfd_dk_setup_spectral}, {"FFT", tfd_dk_setup_spectral}, {"IFFT", tfd_dk_setup_spectral},
    {"RFFT", tfd_dk_setup_spectral}, {"IRFFT", tfd_dk_setup_spectral},
    {"Conv3D", tfd_dk_setup_conv3d}, {"MaxPool3D", tfd_dk_setup_conv3d}, {"AvgPool3D", tfd_dk_setup_conv3d},
    /* images and normalisation (dk_image.c) */
    {"Conv2DBackpropInput", tfd_dk_setup_image}, {"FusedBatchNorm", tfd_dk_setup_image},
    {"FusedBatchNormV2", tfd_dk_setup_image}, {"FusedBatchNormV3", tfd_dk_setup_image}, {"ResizeBilinear", tfd_dk_setup_image},
    {"CropAndResize", tfd_dk_setup_crop_and_resize}, {"ImageProjectiveTransformV3", tfd_dk_setup_image_transform},
    {"ResizeNearestNeighbor", tfd_dk_setup_image},
    /* random numbers and variables (dk_state.c) */
    {"RandomUniform", tfd_dk_setup_state}, {"RandomStandardNormal", tfd_dk_setup_state},
    {"TruncatedNormal", tfd_dk_setup_state}, {"RandomUniformInt", tfd_dk_setup_state}, {"Multinomial", tfd_dk_setup_state},
    {"VarHandleOp", tfd_dk_setup_state}, {"ReadVariableOp", tfd_dk_setup_state},
    {"AssignVariableOp", tfd_dk_setup_state}, {"AssignAddVariableOp", tfd_dk_setup_state},
    {NULL, NULL}};

/* Kernels that compute fewer dtypes than their op allows (TensorFlow's TypeConstraint): the placer
 * puts the others on the CPU. The products are written for floating point (device_math.h's matmul). */
static uint32_t types_of(const char *op) {
  static const char *const float_only[] = {"MatMul", "_FusedMatMul", "BatchMatMulV2", "BatchMatMul"};
  for (size_t i = 0; i < sizeof float_only / sizeof *float_only; i++)
    if (strcmp(op, float_only[i]) == 0) return (1u << TFD_FLOAT32) | (1u << TFD_FLOAT64);
  return 0;
}

/* Fill, ZerosLike and OnesLike have data-movement kernels too (they stage through the host): the
 * device kernels are registered above them, whichever comes first. */
static int priority_of(const char *op) {
  return strcmp(op, "Fill") == 0 || strcmp(op, "ZerosLike") == 0 || strcmp(op, "OnesLike") == 0 ? 1 : 0;
}

tfd_code tfd_kernel_register_device_kernels(const char *device_type, tfd_status *st) {
  for (size_t i = 0; device_kernels[i].op; i++)
    if (tfd_kernel_register_typed(device_kernels[i].op, device_type, device_kernels[i].setup,
                                  priority_of(device_kernels[i].op), types_of(device_kernels[i].op), st) != TFD_OK)
      return tfd_status_code(st);
  return tfd_kernel_register_data_movement(device_type, st);
}
