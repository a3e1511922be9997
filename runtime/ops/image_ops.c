/* Image ops, as TensorFlow's core/ops/image_ops.cc defines them: resizing, crops, projective transforms and non-maximum
 * suppression. Their definitions and shape functions. */
#include <string.h>

#include "common_shape_fns.h"

/* ResizeBilinear, ResizeNearestNeighbor: images [N, H, W, C] and size, int32 [2] > 0. */
static tfd_code infer_resize(tfd_infer_ctx *c, tfd_status *st) {
  const char *op = tfd_node_def_op(c->node);
  if (attr(c, "align_corners")->b && attr(c, "half_pixel_centers")->b)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (%s): If half_pixel_centers is True, align_corners must be False.", node_name(c),
                           op);
  if (tfd_infer_need_rank(c, 0, 4, "images", st) != TFD_OK || tfd_infer_need_rank(c, 1, 1, "size", st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  if (c->in_types[1] != TFD_INT32 ||
      (c->in_shapes[1].ndims == 1 && c->in_shapes[1].dims[0] >= 0 && c->in_shapes[1].dims[0] != 2))
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (%s): size (input 1) must be an int32 vector of 2 elements", node_name(c), op);
  const tfd_shape *x = &c->in_shapes[0];
  const tfd_tensor *size = c->in_values ? c->in_values[1] : NULL;
  tfd_shape *o = &c->out_shapes[0];
  o->ndims = 4;
  for (int d = 0; d < 4; d++) o->dims[d] = x->ndims == 4 && (d == 0 || d == 3) ? x->dims[d] : -1;
  if (size && tfd_tensor_numel(size) == 2) {
    for (int d = 0; d < 2; d++) {
      o->dims[1 + d] = tfd_tensor_get_index(size, d);
      if (o->dims[1 + d] <= 0)
        return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): size must be positive, got [%lld, %lld]",
                               node_name(c), op, (long long)tfd_tensor_get_index(size, 0),
                               (long long)tfd_tensor_get_index(size, 1));
    }
  }
  c->out_types[0] = strcmp(op, "ResizeBilinear") == 0 ? TFD_FLOAT32 : c->in_types[0];
  return TFD_OK;
}

static const tfd_attr_def attrs_resize[] = {{"T", TFD_ATTR_TYPE, false, 0, 0, NULL},
                                            {"align_corners", TFD_ATTR_BOOL, false, 0, 0, NULL},
                                            {"half_pixel_centers", TFD_ATTR_BOOL, false, 0, 0, NULL},
                                            {NULL, 0, false, 0, 0, NULL}};

static tfd_code infer_nms(tfd_infer_ctx *c, tfd_status *st) {
  const char *op = op_name(c);
  int version = op[strlen(op) - 1] - '0'; /* "NonMaxSuppressionV5" -> 5 */
  if (tfd_infer_same_types(c, 0, 1, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  const tfd_shape *boxes = &c->in_shapes[0];
  if (boxes->ndims >= 0 && boxes->ndims != 2)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (%s): boxes must be 2-D (Shape must be rank 2 but is rank %d)", node_name(c), op,
                           boxes->ndims);
  if (boxes->ndims == 2 && boxes->dims[1] >= 0 && boxes->dims[1] != 4)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (%s): boxes must have 4 columns (Dimension must be 4 but is %lld)", node_name(c),
                           op, (long long)boxes->dims[1]);
  if (tfd_infer_need_rank(c, 1, 1, "scores", st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  if (boxes->ndims == 2 && boxes->dims[0] >= 0 && c->in_shapes[1].ndims == 1 && c->in_shapes[1].dims[0] >= 0 &&
      boxes->dims[0] != c->in_shapes[1].dims[0])
    return tfd_status_setf(
        st, TFD_INVALID_ARGUMENT,
        "node '%s' (%s): scores has incompatible shape (Dimensions must be equal, but are %lld and %lld)", node_name(c),
        op, (long long)boxes->dims[0], (long long)c->in_shapes[1].dims[0]);
  if (tfd_infer_need_int32(c, 2, "max_output_size", st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  static const char *const names[] = {"boxes",         "scores",          "max_output_size",
                                      "iou_threshold", "score_threshold", "soft_nms_sigma"};
  for (int i = 2; i < c->num_inputs; i++)
    if (tfd_infer_need_rank(c, i, 0, names[i], st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  /* Thresholds: T in V5; T_threshold (V3, V4: float32 or float16); float32 in V2. */
  for (int i = 3; i < c->num_inputs; i++) {
    tfd_dtype want = version == 5 ? c->in_types[0] : version == 2 ? TFD_FLOAT32 : attr(c, "T_threshold")->dtype;
    if (c->in_types[i] != want)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): %s (input %d) must be %s, got %s", node_name(c),
                             op, names[i], i, tfd_dtype_name(want), tfd_dtype_name(c->in_types[i]));
  }
  bool pad = version >= 4 && attr(c, "pad_to_max_output_size")->b;
  const tfd_tensor *m = c->in_values ? c->in_values[2] : NULL;
  c->out_types[0] = TFD_INT32;
  c->out_shapes[0].ndims = 1;
  c->out_shapes[0].dims[0] =
      pad && m && tfd_tensor_numel(m) == 1 && tfd_tensor_get_index(m, 0) >= 0 ? tfd_tensor_get_index(m, 0) : -1;
  if (version == 5) {
    c->out_types[1] = c->in_types[0];
    c->out_shapes[1] = c->out_shapes[0];
  }
  if (version >= 4) {
    c->out_types[version == 5 ? 2 : 1] = TFD_INT32;
    c->out_shapes[version == 5 ? 2 : 1].ndims = 0;
  }
  return TFD_OK;
}

static const tfd_attr_def attrs_nms_v2[] = {A_T, END};

static const tfd_attr_def attrs_nms_v3[] = {A_T, {"T_threshold", TFD_ATTR_TYPE, false, TFD_FLOAT32, 0, NULL}, END};

static const tfd_attr_def attrs_nms_v4[] = {A_T,
                                            {"T_threshold", TFD_ATTR_TYPE, false, TFD_FLOAT32, 0, NULL},
                                            {"pad_to_max_output_size", TFD_ATTR_BOOL, false, 0, 0, NULL},
                                            END};

static const tfd_attr_def attrs_nms_v5[] = {A_T, {"pad_to_max_output_size", TFD_ATTR_BOOL, false, 0, 0, NULL}, END};

/* CropAndResize: image [batch, h, w, depth], boxes [n, 4], box_ind [n], crop_size [2] -> float32
 * [n, crop_h, crop_w, depth] (TensorFlow's shape function's checks). */
static tfd_code infer_crop_and_resize(tfd_infer_ctx *c, tfd_status *st) {
  const char *op = "CropAndResize", *method = attr(c, "method")->s;
  if (strcmp(method, "bilinear") != 0 && strcmp(method, "nearest") != 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (%s): Value for attr 'method' of \"%s\" is not in the list of allowed values: "
                           "\"bilinear\", \"nearest\"",
                           node_name(c), op, method);
  if (tfd_infer_need_rank(c, 0, 4, "image", st) != TFD_OK || tfd_infer_need_rank(c, 1, 2, "boxes", st) != TFD_OK ||
      tfd_infer_need_rank(c, 2, 1, "box_ind", st) != TFD_OK || tfd_infer_need_rank(c, 3, 1, "crop_size", st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  if (c->in_types[1] != TFD_FLOAT32 || c->in_types[2] != TFD_INT32 || c->in_types[3] != TFD_INT32)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (%s): boxes must be float32, box_ind and crop_size int32; got %s, %s, %s",
                           node_name(c), op, tfd_dtype_name(c->in_types[1]), tfd_dtype_name(c->in_types[2]),
                           tfd_dtype_name(c->in_types[3]));
  const tfd_shape *b = &c->in_shapes[1], *bi = &c->in_shapes[2], *cs = &c->in_shapes[3];
  if (b->ndims == 2 && b->dims[1] >= 0 && b->dims[1] != 4)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): Dimension must be 4 but is %lld", node_name(c),
                           op, (long long)b->dims[1]);
  if (cs->ndims == 1 && cs->dims[0] >= 0 && cs->dims[0] != 2)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): Dimension must be 2 but is %lld", node_name(c),
                           op, (long long)cs->dims[0]);
  int64_t n = b->ndims == 2 ? b->dims[0] : -1, nb = bi->ndims == 1 ? bi->dims[0] : -1;
  if (n >= 0 && nb >= 0 && n != nb)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): Dimensions must be equal, but are %lld and %lld",
                           node_name(c), op, (long long)n, (long long)nb);
  c->out_types[0] = TFD_FLOAT32;
  tfd_shape *o = &c->out_shapes[0];
  o->ndims = 4;
  o->dims[0] = n >= 0 ? n : nb;
  o->dims[1] = o->dims[2] = -1;
  o->dims[3] = c->in_shapes[0].ndims == 4 ? c->in_shapes[0].dims[3] : -1;
  const tfd_tensor *size = c->in_values ? c->in_values[3] : NULL;
  if (size && tfd_tensor_numel(size) == 2)
    for (int i = 0; i < 2; i++) o->dims[1 + i] = ((const int32_t *)tfd_tensor_const_data(size))[i];
  for (int i = 1; i < 3; i++)
    if (o->dims[i] < -1) o->dims[i] = -1; /* the kernel reports a negative size */
  return TFD_OK;
}

/* ImageProjectiveTransformV3: images [n, h, w, c] of dtype, transforms [1 or n, 8], output_shape int32 [2],
 * fill_value a float32 scalar -> [n, out_h, out_w, c]. */
static tfd_code infer_image_transform(tfd_infer_ctx *c, tfd_status *st) {
  const char *op = "ImageProjectiveTransformV3";
  const char *interp = attr(c, "interpolation")->s, *fill = attr(c, "fill_mode")->s;
  if (strcmp(interp, "NEAREST") != 0 && strcmp(interp, "BILINEAR") != 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (%s): Invalid interpolation %s. Supported types: NEAREST, BILINEAR", node_name(c),
                           op, interp);
  if (strcmp(fill, "CONSTANT") != 0 && strcmp(fill, "REFLECT") != 0 && strcmp(fill, "WRAP") != 0 &&
      strcmp(fill, "NEAREST") != 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (%s): Invalid mode %s. Supported types: REFLECT, WRAP, CONSTANT, NEAREST",
                           node_name(c), op, fill);
  if (tfd_infer_need_rank(c, 0, 4, "images", st) != TFD_OK ||
      tfd_infer_need_rank(c, 1, 2, "transforms", st) != TFD_OK ||
      tfd_infer_need_rank(c, 2, 1, "output_shape", st) != TFD_OK ||
      tfd_infer_need_rank(c, 3, 0, "fill_value", st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  if (c->in_types[1] != TFD_FLOAT32 || c->in_types[2] != TFD_INT32 || c->in_types[3] != TFD_FLOAT32)
    return tfd_status_setf(
        st, TFD_INVALID_ARGUMENT,
        "node '%s' (%s): transforms and fill_value must be float32, output_shape int32; got %s, %s, %s", node_name(c),
        op, tfd_dtype_name(c->in_types[1]), tfd_dtype_name(c->in_types[2]), tfd_dtype_name(c->in_types[3]));
  c->out_types[0] = c->in_types[0];
  tfd_shape *o = &c->out_shapes[0];
  const tfd_shape *in = &c->in_shapes[0];
  o->ndims = 4;
  o->dims[0] = in->ndims == 4 ? in->dims[0] : -1;
  o->dims[3] = in->ndims == 4 ? in->dims[3] : -1;
  o->dims[1] = o->dims[2] = -1;
  const tfd_tensor *size = c->in_values ? c->in_values[2] : NULL;
  if (size && tfd_tensor_numel(size) == 2)
    for (int i = 0; i < 2; i++) {
      int32_t v = ((const int32_t *)tfd_tensor_const_data(size))[i];
      o->dims[1 + i] = v >= 0 ? v : -1;
    }
  return TFD_OK;
}

static const tfd_attr_def attrs_crop_and_resize[] = {A_T,
                                                     {"method", TFD_ATTR_STRING, false, 0, 0, "bilinear"},
                                                     {"extrapolation_value", TFD_ATTR_FLOAT, false, 0, 0, NULL},
                                                     END};

static const tfd_attr_def attrs_image_transform[] = {{"dtype", TFD_ATTR_TYPE, false, 0, 0, NULL},
                                                     {"interpolation", TFD_ATTR_STRING, true, 0, 0, NULL},
                                                     {"fill_mode", TFD_ATTR_STRING, false, 0, 0, "CONSTANT"},
                                                     END};

/* One row per op: clang-format would give each field a line. */
/* clang-format off */
static const tfd_op_def image_ops[] = {
    {.name = "ResizeBilinear", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T",
     .allowed_types = REAL, .attrs = attrs_resize, .infer = infer_resize},
    {.name = "ResizeNearestNeighbor", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T",
     .allowed_types = REAL, .attrs = attrs_resize, .infer = infer_resize},
    {.name = "NonMaxSuppressionV2", .min_inputs = 4, .max_inputs = 4, .num_outputs = 1, .type_attr = "T",
     .allowed_types = F16 | (1u << TFD_FLOAT32), .attrs = attrs_nms_v2, .infer = infer_nms},
    {.name = "NonMaxSuppressionV3", .min_inputs = 5, .max_inputs = 5, .num_outputs = 1, .type_attr = "T",
     .allowed_types = F16 | (1u << TFD_FLOAT32), .attrs = attrs_nms_v3, .infer = infer_nms},
    {.name = "NonMaxSuppressionV4", .min_inputs = 5, .max_inputs = 5, .num_outputs = 2, .type_attr = "T",
     .allowed_types = F16 | (1u << TFD_FLOAT32), .attrs = attrs_nms_v4, .infer = infer_nms},
    {.name = "NonMaxSuppressionV5", .min_inputs = 6, .max_inputs = 6, .num_outputs = 3, .type_attr = "T",
     .allowed_types = F16 | (1u << TFD_FLOAT32), .attrs = attrs_nms_v5, .infer = infer_nms},
    {.name = "CropAndResize", .min_inputs = 4, .max_inputs = 4, .num_outputs = 1, .type_attr = "T",
     .allowed_types = REAL, .attrs = attrs_crop_and_resize, .infer = infer_crop_and_resize},
    {.name = "ImageProjectiveTransformV3", .min_inputs = 4, .max_inputs = 4, .num_outputs = 1, .type_attr = "dtype",
     .allowed_types = REAL, .attrs = attrs_image_transform, .infer = infer_image_transform},
};
/* clang-format on */

const tfd_op_family tfd_image_ops = {"image", image_ops, (int)(sizeof image_ops / sizeof image_ops[0])};
