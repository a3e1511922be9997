/* The kernel registry: which (op, device type) pairs have a kernel, and kernel creation. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/allocator_internal.h"
#include "../core/status_internal.h"
#include "../core/tensor_internal.h"
#include "../device/backend_module.h"
#include "../framework/cancellation.h"
#include "kernel.h"

typedef struct kernel_entry {
  const char *op;
  const char *device_type;
  tfd_kernel_setup_fn setup;
  int priority;        /* built-in: 0 */
  const void *custom;  /* a custom kernel's registration (custom_kernel.c), handed to its setup */
  uint32_t types;      /* the dtypes of the op's type attr this kernel computes (bit per tfd_dtype); 0: all */
} kernel_entry;

#define CPU(op, fn) {op, "CPU", fn, 0, NULL, 0}

static const kernel_entry kernels[] = {
    CPU("Const", tfd_setup_basic), CPU("Placeholder", tfd_setup_basic), CPU("PlaceholderWithDefault", tfd_setup_basic),
    CPU("Identity", tfd_setup_basic), CPU("NoOp", tfd_setup_basic), CPU("Reshape", tfd_setup_basic),
    CPU("Transpose", tfd_setup_basic), CPU("Cast", tfd_setup_basic), CPU("Fill", tfd_setup_basic),
    CPU("ZerosLike", tfd_setup_basic), CPU("OnesLike", tfd_setup_basic), CPU("Shape", tfd_setup_basic),
    CPU("Size", tfd_setup_basic), CPU("BroadcastTo", tfd_setup_basic),
    /* issue 26, image/einsum family */
    CPU("Einsum", tfd_setup_einsum), CPU("CropAndResize", tfd_setup_crop_and_resize),
    CPU("ImageProjectiveTransformV3", tfd_setup_image_transform), CPU("IdentityN", tfd_setup_identity_n),
    CPU("ShapeN", tfd_setup_identity_n), CPU("Print", tfd_setup_identity_n),
    CPU("FakeQuantWithMinMaxArgs", tfd_setup_fake_quant), CPU("FakeQuantWithMinMaxVars", tfd_setup_fake_quant),
    /* end of the image/einsum family */
    CPU("DepthToSpace", tfd_setup_depth_space), CPU("SpaceToDepth", tfd_setup_depth_space),
    CPU("SpaceToBatchND", tfd_setup_space_batch), CPU("BatchToSpaceND", tfd_setup_space_batch),
    CPU("SparseToDense", tfd_setup_sparse_to_dense),
    /* sparse and ragged ops (issue 26; k_sparse_segment.c, k_sparse_fill.c, k_ragged.c) */
    CPU("SparseSegmentSum", tfd_setup_sparse_segment), CPU("SparseSegmentMean", tfd_setup_sparse_segment),
    CPU("SparseSegmentSqrtN", tfd_setup_sparse_segment), CPU("SparseSegmentSumWithNumSegments", tfd_setup_sparse_segment),
    CPU("SparseSegmentMeanWithNumSegments", tfd_setup_sparse_segment),
    CPU("SparseSegmentSqrtNWithNumSegments", tfd_setup_sparse_segment),
    CPU("SparseFillEmptyRows", tfd_setup_sparse_fill), CPU("SparseReshape", tfd_setup_sparse_fill),
    CPU("RaggedGather", tfd_setup_ragged), CPU("RaggedRange", tfd_setup_ragged), CPU("RaggedTensorToTensor", tfd_setup_ragged),
    /* end of the sparse and ragged ops */
    /* TensorFlow 1's TensorArrays (k_tensor_array.c) */
    CPU("TensorArrayV3", tfd_setup_tensor_array), CPU("TensorArrayWriteV3", tfd_setup_tensor_array),
    CPU("TensorArrayReadV3", tfd_setup_tensor_array), CPU("TensorArrayGatherV3", tfd_setup_tensor_array),
    CPU("TensorArrayScatterV3", tfd_setup_tensor_array), CPU("TensorArraySizeV3", tfd_setup_tensor_array),
    CPU("TensorArrayCloseV3", tfd_setup_tensor_array), CPU("TensorArrayConcatV3", tfd_setup_tensor_array),
    CPU("TensorArraySplitV3", tfd_setup_tensor_array),
    /* graph utilities and array ops (issue 26's array family) */
    CPU("Rank", tfd_setup_array), CPU("StopGradient", tfd_setup_array), CPU("Snapshot", tfd_setup_array),
    CPU("EnsureShape", tfd_setup_array), CPU("ReverseV2", tfd_setup_array), CPU("Reverse", tfd_setup_array),
    CPU("OneHot", tfd_setup_array), CPU("LinSpace", tfd_setup_array), CPU("Cumsum", tfd_setup_array),
    CPU("Cumprod", tfd_setup_array), CPU("All", tfd_setup_array), CPU("Any", tfd_setup_array),
    CPU("BroadcastArgs", tfd_setup_array), CPU("MatrixBandPart", tfd_setup_array),
    CPU("ConcatV2", tfd_setup_basic), CPU("Concat", tfd_setup_basic), CPU("Gather", tfd_setup_gather),
    /* shapes, slicing, gathering */
    CPU("ExpandDims", tfd_setup_shape), CPU("Squeeze", tfd_setup_shape), CPU("Pack", tfd_setup_shape),
    CPU("Unpack", tfd_setup_shape), CPU("Slice", tfd_setup_shape), CPU("StridedSlice", tfd_setup_shape),
    CPU("Tile", tfd_setup_shape), CPU("Range", tfd_setup_shape), CPU("Split", tfd_setup_shape),
    CPU("SplitV", tfd_setup_shape), CPU("GatherV2", tfd_setup_gather), CPU("GatherNd", tfd_setup_gather),
    CPU("ArgMax", tfd_setup_gather), CPU("ArgMin", tfd_setup_gather), CPU("TopKV2", tfd_setup_gather),
    CPU("Min", tfd_setup_reduce), CPU("Prod", tfd_setup_reduce),
    CPU("_Feed", tfd_setup_basic), CPU("_Fetch", tfd_setup_basic),
    CPU("Add", tfd_setup_cwise), CPU("AddV2", tfd_setup_cwise), CPU("Sub", tfd_setup_cwise), CPU("Mul", tfd_setup_cwise),
    CPU("RealDiv", tfd_setup_cwise), CPU("Maximum", tfd_setup_cwise), CPU("Minimum", tfd_setup_cwise),
    CPU("Neg", tfd_setup_cwise), CPU("Abs", tfd_setup_cwise), CPU("Exp", tfd_setup_cwise), CPU("Log", tfd_setup_cwise),
    CPU("Sqrt", tfd_setup_cwise), CPU("Square", tfd_setup_cwise), CPU("Relu", tfd_setup_cwise),
    CPU("Relu6", tfd_setup_cwise),
    /* elementwise math, comparisons, logic */
    CPU("Selu", tfd_setup_logic), CPU("Softplus", tfd_setup_logic), CPU("Rsqrt", tfd_setup_logic),
    CPU("Reciprocal", tfd_setup_logic), CPU("Floor", tfd_setup_logic), CPU("Ceil", tfd_setup_logic),
    CPU("Sin", tfd_setup_logic), CPU("Cos", tfd_setup_logic), CPU("Atan2", tfd_setup_logic), CPU("Pow", tfd_setup_logic),
    CPU("SquaredDifference", tfd_setup_logic),
    CPU("FloorDiv", tfd_setup_logic), CPU("FloorMod", tfd_setup_logic), CPU("Equal", tfd_setup_logic),
    CPU("NotEqual", tfd_setup_logic), CPU("Less", tfd_setup_logic), CPU("LessEqual", tfd_setup_logic),
    CPU("Greater", tfd_setup_logic), CPU("GreaterEqual", tfd_setup_logic), CPU("LogicalAnd", tfd_setup_logic),
    CPU("LogicalOr", tfd_setup_logic), CPU("LogicalNot", tfd_setup_logic), CPU("Select", tfd_setup_logic),
    CPU("SelectV2", tfd_setup_logic), CPU("AddN", tfd_setup_logic), CPU("Elu", tfd_setup_cwise), CPU("LeakyRelu", tfd_setup_cwise),
    CPU("Sigmoid", tfd_setup_cwise), CPU("Tanh", tfd_setup_cwise), CPU("Softmax", tfd_setup_cwise),
    CPU("BiasAdd", tfd_setup_cwise), CPU("Sum", tfd_setup_reduce), CPU("Mean", tfd_setup_reduce),
    CPU("Max", tfd_setup_reduce), CPU("MatMul", tfd_setup_matmul), CPU("_FusedMatMul", tfd_setup_matmul),
    CPU("Conv2D", tfd_setup_conv), CPU("_FusedConv2D", tfd_setup_conv), CPU("DepthwiseConv2dNative", tfd_setup_conv),
    CPU("MaxPool", tfd_setup_conv), CPU("AvgPool", tfd_setup_conv), CPU("Pad", tfd_setup_conv),
    CPU("PadV2", tfd_setup_conv), CPU("Prelu", tfd_setup_conv), CPU("RandomUniform", tfd_setup_random),
    /* images, normalisation, batched products */
    CPU("FusedBatchNorm", tfd_setup_image), CPU("FusedBatchNormV3", tfd_setup_image),
    CPU("ResizeBilinear", tfd_setup_image), CPU("ResizeNearestNeighbor", tfd_setup_image),
    CPU("BatchMatMulV2", tfd_setup_batch_matmul), CPU("Conv2DBackpropInput", tfd_setup_image),
    CPU("MirrorPad", tfd_setup_image), CPU("_FusedDepthwiseConv2dNative", tfd_setup_conv),
    CPU("FusedDepthwiseConv2dNative", tfd_setup_conv),
    CPU("RandomStandardNormal", tfd_setup_random), CPU("VarHandleOp", tfd_setup_variable),
    CPU("ReadVariableOp", tfd_setup_variable), CPU("AssignVariableOp", tfd_setup_variable),
    CPU("AssignAddVariableOp", tfd_setup_variable), CPU("_Send", tfd_setup_sendrecv), CPU("_Recv", tfd_setup_sendrecv),
    CPU("FIFOQueueV2", tfd_setup_queue), CPU("QueueEnqueueV2", tfd_setup_queue), CPU("QueueDequeueV2", tfd_setup_queue),
    CPU("QueueSizeV2", tfd_setup_queue), CPU("QueueCloseV2", tfd_setup_queue),
    CPU("GetSessionHandle", tfd_setup_session_tensor), CPU("GetSessionTensor", tfd_setup_session_tensor),
    CPU("DeleteSessionTensor", tfd_setup_session_tensor),
    /* control flow; TensorList; detection */
    CPU("Enter", tfd_setup_control_flow), CPU("Exit", tfd_setup_control_flow), CPU("NextIteration", tfd_setup_control_flow),
    CPU("LoopCond", tfd_setup_control_flow), CPU("Switch", tfd_setup_control_flow), CPU("Merge", tfd_setup_control_flow),
    CPU("ControlTrigger", tfd_setup_control_flow), CPU("TensorListReserve", tfd_setup_tensor_list),
    CPU("EmptyTensorList", tfd_setup_tensor_list), CPU("TensorListFromTensor", tfd_setup_tensor_list),
    CPU("TensorListGetItem", tfd_setup_tensor_list), CPU("TensorListSetItem", tfd_setup_tensor_list),
    CPU("TensorListPushBack", tfd_setup_tensor_list), CPU("TensorListPopBack", tfd_setup_tensor_list),
    CPU("TensorListStack", tfd_setup_tensor_list), CPU("TensorListLength", tfd_setup_tensor_list),
    CPU("TensorListElementShape", tfd_setup_tensor_list), CPU("NonMaxSuppressionV2", tfd_setup_nms),
    /* TensorList gather/scatter/split/concat/resize (issue 26, lists helper) */
    CPU("TensorListGather", tfd_setup_tensor_list), CPU("TensorListScatter", tfd_setup_tensor_list),
    CPU("TensorListScatterV2", tfd_setup_tensor_list), CPU("TensorListScatterIntoExistingList", tfd_setup_tensor_list),
    CPU("TensorListResize", tfd_setup_tensor_list), CPU("TensorListSplit", tfd_setup_tensor_list),
    CPU("TensorListConcat", tfd_setup_tensor_list), CPU("TensorListConcatV2", tfd_setup_tensor_list),
    /* ---- end of the TensorList gather/scatter kernels ---- */
    /* hash tables (issue 26, lists helper) */
    CPU("HashTableV2", tfd_setup_lookup_table), CPU("MutableHashTableV2", tfd_setup_lookup_table),
    CPU("InitializeTableV2", tfd_setup_lookup_table), CPU("LookupTableImportV2", tfd_setup_lookup_table),
    CPU("LookupTableInsertV2", tfd_setup_lookup_table), CPU("LookupTableRemoveV2", tfd_setup_lookup_table),
    CPU("LookupTableFindV2", tfd_setup_lookup_table), CPU("LookupTableSizeV2", tfd_setup_lookup_table),
    CPU("LookupTableExportV2", tfd_setup_lookup_table),
    CPU("HashTable", tfd_setup_lookup_table), CPU("MutableHashTable", tfd_setup_lookup_table),
    CPU("InitializeTable", tfd_setup_lookup_table), CPU("LookupTableImport", tfd_setup_lookup_table),
    CPU("LookupTableInsert", tfd_setup_lookup_table), CPU("LookupTableFind", tfd_setup_lookup_table),
    CPU("LookupTableSize", tfd_setup_lookup_table), CPU("LookupTableExport", tfd_setup_lookup_table),
    /* ---- end of the hash table kernels ---- */
    CPU("NonMaxSuppressionV3", tfd_setup_nms), CPU("NonMaxSuppressionV4", tfd_setup_nms),
    CPU("NonMaxSuppressionV5", tfd_setup_nms), CPU("Where", tfd_setup_where),
    /* scatters, searches, uniques (k_scatter.c); FusedBatchNormV2 is FusedBatchNorm's kernel */
    CPU("ScatterNd", tfd_setup_scatter), CPU("TensorScatterUpdate", tfd_setup_scatter),
    CPU("BatchMatMul", tfd_setup_scatter), CPU("LowerBound", tfd_setup_scatter), CPU("UpperBound", tfd_setup_scatter),
    CPU("Unique", tfd_setup_scatter), CPU("UniqueV2", tfd_setup_scatter), CPU("ListDiff", tfd_setup_scatter),
    CPU("FusedBatchNormV2", tfd_setup_image),
    /* complex numbers and Fourier transforms (k_spectral.c) */
    CPU("Complex", tfd_setup_spectral), CPU("Real", tfd_setup_spectral), CPU("Imag", tfd_setup_spectral),
    CPU("ComplexAbs", tfd_setup_spectral), CPU("FFT", tfd_setup_spectral), CPU("IFFT", tfd_setup_spectral),
    CPU("RFFT", tfd_setup_spectral), CPU("IRFFT", tfd_setup_spectral),
    /* string ops (k_string.c) */
    CPU("StringToHashBucketFast", tfd_setup_string), CPU("StringSplit", tfd_setup_string),
    CPU("StringNGrams", tfd_setup_string), CPU("StaticRegexReplace", tfd_setup_string),
    /* counts, randoms, normalisation (k_count_norm.c, k_random_ext.c) */
    CPU("Bincount", tfd_setup_count_norm), CPU("DenseBincount", tfd_setup_count_norm), CPU("LRN", tfd_setup_count_norm),
    CPU("EuclideanNorm", tfd_setup_count_norm), CPU("TruncatedNormal", tfd_setup_random_ext),
    CPU("RandomUniformInt", tfd_setup_random_ext), CPU("Multinomial", tfd_setup_random_ext),
    /* issue 26, elementwise math */
    CPU("Acos", tfd_setup_math), CPU("Acosh", tfd_setup_math), CPU("Asin", tfd_setup_math), CPU("Asinh", tfd_setup_math),
    CPU("Atan", tfd_setup_math), CPU("Atanh", tfd_setup_math), CPU("Cosh", tfd_setup_math), CPU("Sinh", tfd_setup_math),
    CPU("Tan", tfd_setup_math), CPU("Erf", tfd_setup_math), CPU("Expm1", tfd_setup_math), CPU("Log1p", tfd_setup_math),
    CPU("Round", tfd_setup_math), CPU("Sign", tfd_setup_math), CPU("IsFinite", tfd_setup_math),
    CPU("IsInf", tfd_setup_math), CPU("IsNan", tfd_setup_math), CPU("Div", tfd_setup_math),
    CPU("DivNoNan", tfd_setup_math), CPU("Mod", tfd_setup_math), CPU("BitwiseAnd", tfd_setup_math),
    CPU("ClipByValue", tfd_setup_math), CPU("LogSoftmax", tfd_setup_math),
    /* issue 26, convolution family (k_conv3d.c, k_dilation.c) */
    CPU("Conv3D", tfd_setup_conv3d), CPU("MaxPool3D", tfd_setup_conv3d), CPU("AvgPool3D", tfd_setup_conv3d),
    CPU("Dilation2D", tfd_setup_dilation), CPU("MaxPoolWithArgmax", tfd_setup_dilation),
};

/* Kernels registered at run time (backend modules', custom ones), searched before the built-in
 * table, newest first: an entry is only ever added above every entry for its pair, so the first
 * found is the one of highest priority. Entries are never removed, so a found entry stays valid once
 * the lock is dropped. */
typedef struct added_kernel {
  kernel_entry e;
  void (*release)(void *custom); /* frees e.custom when the library goes */
  struct added_kernel *next;
} added_kernel;

static pthread_mutex_t added_mu = PTHREAD_MUTEX_INITIALIZER;
static added_kernel *added;

/* The highest entry for a pair, with added_mu held. */
static const kernel_entry *find_locked(const char *op, const char *device_type) {
  for (const added_kernel *a = added; a; a = a->next)
    if (strcmp(a->e.op, op) == 0 && strcmp(a->e.device_type, device_type) == 0) return &a->e;
  for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++)
    if (strcmp(kernels[i].op, op) == 0 && strcmp(kernels[i].device_type, device_type) == 0) return &kernels[i];
  return NULL;
}

static const kernel_entry *find_registered(const char *op, const char *device_type) {
  pthread_mutex_lock(&added_mu);
  const added_kernel *a = added;
  while (a && (strcmp(a->e.op, op) != 0 || strcmp(a->e.device_type, device_type) != 0)) a = a->next;
  pthread_mutex_unlock(&added_mu);
  if (a) return &a->e;
  for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++)
    if (strcmp(kernels[i].op, op) == 0 && strcmp(kernels[i].device_type, device_type) == 0) return &kernels[i];
  return NULL;
}

static const tfd_backend_kernel_api backend_api = {tfd_kernel_register_data_movement, tfd_kernel_register_device_kernels};

tfd_code tfd_kernel_registry_ready(tfd_status *st) { return tfd_backend_register_kernels(&backend_api, st); }

/* A miss first lets backend modules loaded since the last one register their kernels (a failure
 * here reads as a miss: callers that can report it ask tfd_kernel_registry_ready first). */
static const kernel_entry *find(const char *op, const char *device_type) {
  const kernel_entry *e = find_registered(op, device_type);
  if (e || strcmp(device_type, "CPU") == 0) return e;
  tfd_backend_register_kernels(&backend_api, NULL);
  return find_registered(op, device_type);
}

/* Adds (op, device_type) -> setup at priority: above every entry of the pair when priority beats
 * them all; equal priority is ALREADY_EXISTS (unless it is the very same setup, which changes
 * nothing), lower is ignored. */
static tfd_code add_entry(const char *op, const char *device_type, tfd_kernel_setup_fn setup, int priority,
                          uint32_t types, void *custom, void (*release)(void *), bool *kept, tfd_status *st) {
  if (kept) *kept = false;
  if (!op || !*op || !device_type || !*device_type || !setup)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "a kernel registration needs an op, a device type and a setup");
  if (!tfd_op_lookup(op)) return tfd_status_setf(st, TFD_NOT_FOUND, "kernel for unknown op '%s' (%s)", op, device_type);
  added_kernel *a = calloc(1, sizeof *a);
  char *o = strdup(op), *d = strdup(device_type);
  if (!a || !o || !d) {
    free(a), free(o), free(d);
    return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory registering a kernel");
  }
  a->e = (kernel_entry){o, d, setup, priority, custom, types};
  a->release = release;
  pthread_mutex_lock(&added_mu); /* found and added under one lock: racing registrations of a pair agree */
  const kernel_entry *top = find_locked(op, device_type);
  tfd_code code = TFD_OK;
  bool keep = !top || priority > top->priority;
  if (top && priority == top->priority && !(top->setup == setup && top->custom == custom))
    code = tfd_status_setf(st, TFD_ALREADY_EXISTS, "a %s kernel for op %s is already registered at priority %d", device_type,
                           op, priority);
  if (keep) {
    a->next = added;
    added = a;
  }
  pthread_mutex_unlock(&added_mu);
  if (!keep) free(a), free(o), free(d);
  if (kept) *kept = keep;
  return code;
}

tfd_code tfd_kernel_register_entry(const char *op, const char *device_type, tfd_kernel_setup_fn setup, int priority,
                                   void *custom, void (*release)(void *), bool *kept, tfd_status *st) {
  return add_entry(op, device_type, setup, priority, 0, custom, release, kept, st);
}

tfd_code tfd_kernel_register_typed(const char *op, const char *device_type, tfd_kernel_setup_fn setup, int priority,
                                   uint32_t types, tfd_status *st) {
  return add_entry(op, device_type, setup, priority, types, NULL, NULL, NULL, st);
}

tfd_code tfd_kernel_register(const char *op, const char *device_type, tfd_kernel_setup_fn setup, tfd_status *st) {
  return add_entry(op, device_type, setup, 0, 0, NULL, NULL, NULL, st);
}

/* Registrations are permanent while the library is loaded; when a Lua state that loaded core.so
 * closes, Lua unloads it (and libtfdev with it), and what was registered goes too. */
__attribute__((destructor)) static void free_added_kernels(void) {
  while (added) {
    added_kernel *a = added;
    added = a->next;
    if (a->release) a->release((void *)a->e.custom);
    free((char *)a->e.op);
    free((char *)a->e.device_type);
    free(a);
  }
}

tfd_allocator *tfd_kernel_memory_for(tfd_device *d, tfd_dtype dt) {
  tfd_allocator *a = d->ops->get_allocator(d, (tfd_alloc_attrs){.on_host = false});
  if (a->device_memory && (dt == TFD_INT32 || dt == TFD_RESOURCE || dt == TFD_VARIANT || dt == TFD_STRING))
    return d->ops->get_allocator(d, (tfd_alloc_attrs){.on_host = true});
  return a;
}

bool tfd_kernel_supported(const char *op, const char *device_type) { return find(op, device_type) != NULL; }
/* Strings live in host memory and only CPU kernels read them: another device's kernel takes a string
 * only when its op just passes tensors on (Identity, control flow), as TensorFlow's HostMemory ones. */
static bool computes(const kernel_entry *e, tfd_dtype t) {
  if (t == TFD_STRING && strcmp(e->device_type, "CPU") != 0) {
    const tfd_op_def *op = tfd_op_lookup(e->op);
    if (!op || op->allowed_types != TFD_TYPES_ANY_AND_VARIANT) return false;
  }
  return !e->types || !t || (t < 32 && (e->types & (1u << t)));
}
bool tfd_kernel_supported_for(const char *op, const char *device_type, tfd_dtype t) {
  const kernel_entry *e = find(op, device_type);
  return e && computes(e, t);
}
bool tfd_kernel_exists(const char *op, const char *device_type) {
  return op && device_type && tfd_kernel_supported(op, device_type);
}

/* Runs a kernel that moves string elements, then has each output it allocated take its elements. */
static void compute_moving_strings(tfd_kernel *k, tfd_kernel_ctx *c) {
  k->moved_compute(k, c);
  for (int o = 0; o < c->num_outputs; o++)
    if (c->outputs[o]) tfd_tensor_adopt_elements(c->outputs[o]);
}

static void kernel_op_compute(tfd_op_kernel *base, tfd_op_kernel_context *c) {
  tfd_kernel *k = (tfd_kernel *)base;
  k->compute(k, c);
}

static void kernel_op_compute_async(tfd_op_kernel *base, tfd_op_kernel_context *c, tfd_done_fn done, void *arg) {
  tfd_kernel *k = (tfd_kernel *)base;
  if (k->compute_async) {
    k->compute_async(k, c, done, arg);
  } else {
    k->compute(k, c);
    done(arg);
  }
}

static void kernel_destroy(tfd_op_kernel *base) {
  tfd_kernel *k = (tfd_kernel *)base;
  if (k->cleanup) k->cleanup(k);
  tfd_tensor_unref(k->value);
  free(k->dk_params);
  free(k->key);
  free(k->name);
  free(k);
}

static const tfd_op_kernel_ops kernel_ops = {kernel_op_compute, kernel_op_compute_async, kernel_destroy};

tfd_kernel *tfd_kernel_create(const tfd_kernel_init *init, tfd_status *st) {
  const char *op = tfd_node_def_op(init->node), *type = tfd_device_type(init->device);
  const kernel_entry *e = find(op, type);
  if (!e) {
    tfd_status_setf(st, TFD_NOT_FOUND, "node '%s': no %s kernel for op %s", tfd_node_def_name(init->node), type, op);
    return NULL;
  }
  tfd_dtype t = init->op->type_attr ? tfd_attr_dtype(init->node, init->op->type_attr, 0) : 0;
  if (!computes(e, t)) {
    tfd_status_setf(st, TFD_NOT_FOUND, "node '%s': no %s kernel for op %s with %s=%s", tfd_node_def_name(init->node), type,
                    op, init->op->type_attr, tfd_dtype_name(t));
    return NULL;
  }
  tfd_kernel *k = calloc(1, sizeof *k);
  if (!k || !(k->name = strdup(tfd_node_def_name(init->node)))) {
    free(k);
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory creating a kernel");
    return NULL;
  }
  k->base.ops = &kernel_ops;
  k->op = init->op;
  k->custom = e->custom;
  k->num_inputs = init->num_inputs;
  k->T = init->op->type_attr ? tfd_attr_dtype(init->node, init->op->type_attr, 0) : 0;
  if (!k->T && init->op->num_outputs > 0) k->T = init->out_types[0];
  if (e->setup(k, init, st) != TFD_OK) {
    kernel_destroy(&k->base);
    return NULL;
  }
  bool string_out = false;
  for (int o = 0; o < init->num_outputs; o++) string_out |= init->out_types[o] == TFD_STRING;
  if (string_out && !k->makes_strings && k->compute && !k->compute_async) {
    k->moved_compute = k->compute;
    k->compute = compute_moving_strings;
    k->borrows_elements = true;
  }
  return k;
}

void tfd_kernel_fail(tfd_kernel_ctx *c, const tfd_kernel *k, tfd_code code, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  tfd_status_setf(c->status, code, "node '%s' (%s): %s", k->name, k->op->name, msg);
}

bool tfd_kernel_should_stop(const tfd_kernel_ctx *c) {
  int64_t deadline = tfd_kernel_deadline(c);
  if (deadline > 0 && tfd_kernel_clock_micros() >= deadline) return true;
  return c->cancellation && tfd_cancellation_is_cancelled(c->cancellation);
}

void tfd_kernel_timeout_status(const tfd_kernel_ctx *c, tfd_status *st) {
  const tfd_deadline *d = c->deadline;
  tfd_status_setf(st, TFD_DEADLINE_EXCEEDED, "Timed out waiting for %s (%lld ms)", d && d->what ? d->what : "the step",
                  d ? (long long)d->timeout_ms : 0LL);
}

void tfd_kernel_fail_stopped(tfd_kernel_ctx *c) {
  const char *why = NULL;
  tfd_code code = c->cancellation ? tfd_cancellation_reason(c->cancellation, &why) : TFD_OK;
  /* Cancelled: the reason the step reports anyway. Else the deadline passed (the only other reason
   * to stop), and the step's own timeout text says so, as a waiter would have. */
  if (code != TFD_OK) tfd_status_setf(c->status, code, "%s", why);
  else tfd_kernel_timeout_status(c, c->status);
}

tfd_tensor *tfd_kernel_alloc(tfd_kernel_ctx *c, const tfd_kernel *k, tfd_dtype dt, const int64_t *dims, int ndims) {
  tfd_status tmp = TFD_STATUS_INIT;
  tfd_tensor *t = tfd_tensor_new(c->allocator, dt, dims, ndims, &tmp);
  if (!t) {
    tfd_kernel_fail(c, k, tfd_status_code(&tmp), "%s", tfd_status_message(&tmp));
    tfd_status_clear(&tmp);
  } else if (dt == TFD_STRING && k && k->borrows_elements) {
    tfd_tensor_borrow_elements(t);
  }
  return t;
}

tfd_tensor *tfd_kernel_forward_input(tfd_kernel_ctx *c, int i, tfd_dtype dt, const int64_t *dims, int ndims) {
  tfd_tensor *t = i < c->num_inputs ? c->inputs[i] : NULL;
  if (!c->owns_inputs || !t || tfd_tensor_dtype(t) != dt || tfd_tensor_ndims(t) != ndims) return NULL;
  for (int d = 0; d < ndims; d++)
    if (tfd_tensor_dim(t, d) != dims[d]) return NULL;
  for (int j = 0; j < c->num_inputs; j++) /* the same tensor read twice by this node */
    if (j != i && c->inputs[j] == t) return NULL;
  return tfd_tensor_is_exclusive(t) ? tfd_tensor_ref(t) : NULL;
}

tfd_tensor *tfd_kernel_forward_or_alloc(tfd_kernel_ctx *c, const tfd_kernel *k, int i, tfd_dtype dt, const int64_t *dims,
                                        int ndims) {
  /* A kernel writing string references into its input would drop none of those it overwrites. */
  tfd_tensor *t = dt == TFD_STRING ? NULL : tfd_kernel_forward_input(c, i, dt, dims, ndims);
  return t ? t : tfd_kernel_alloc(c, k, dt, dims, ndims);
}

tfd_tensor *tfd_kernel_alloc_like(tfd_kernel_ctx *c, const tfd_kernel *k, tfd_dtype dt, const tfd_tensor *like) {
  int64_t dims[TFD_MAX_DIMS];
  for (int i = 0; i < tfd_tensor_ndims(like); i++) dims[i] = tfd_tensor_dim(like, i);
  return tfd_kernel_alloc(c, k, dt, dims, tfd_tensor_ndims(like));
}

bool tfd_kernel_check_index(tfd_kernel_ctx *c, const tfd_kernel *k, const tfd_tensor *t, const char *what) {
  tfd_dtype dt = tfd_tensor_dtype(t);
  if (dt == TFD_INT32 || dt == TFD_INT64) return true;
  tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "%s must be int32 or int64, got %s", what, tfd_dtype_name(dt));
  return false;
}

bool tfd_kernel_check_scalar(tfd_kernel_ctx *c, const tfd_kernel *k, const tfd_tensor *t, const char *what) {
  if (tfd_tensor_ndims(t) == 0) return true;
  tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "%s must be a scalar, got a tensor of rank %d with %lld elements", what,
                  tfd_tensor_ndims(t), (long long)tfd_tensor_numel(t));
  return false;
}

bool tfd_attr_bool(const tfd_node_def *n, const char *name, bool dflt) {
  const tfd_attr_value *v = tfd_node_def_attr(n, name);
  return v && v->type == TFD_ATTR_BOOL ? v->b : dflt;
}

int64_t tfd_attr_int(const tfd_node_def *n, const char *name, int64_t dflt) {
  const tfd_attr_value *v = tfd_node_def_attr(n, name);
  return v && v->type == TFD_ATTR_INT ? v->i : dflt;
}

double tfd_attr_float(const tfd_node_def *n, const char *name, double dflt) {
  const tfd_attr_value *v = tfd_node_def_attr(n, name);
  return v && v->type == TFD_ATTR_FLOAT ? v->f : dflt;
}

tfd_dtype tfd_attr_dtype(const tfd_node_def *n, const char *name, tfd_dtype dflt) {
  const tfd_attr_value *v = tfd_node_def_attr(n, name);
  return v && v->type == TFD_ATTR_TYPE ? v->dtype : dflt;
}

const char *tfd_attr_string(const tfd_node_def *n, const char *name, const char *dflt) {
  const tfd_attr_value *v = tfd_node_def_attr(n, name);
  return v && v->type == TFD_ATTR_STRING ? v->s : dflt;
}
