/* The device kernels' registry: which ops have a kernel written over kernels/device_math.h (the
 * dk_*.c files), registered for a device type whose devices carry a tfd_device_math. Until an op
 * family's device kernels exist, such a device runs the data-movement kernels only. */
#include "kernel.h"

typedef struct device_kernel {
  const char *op;
  tfd_kernel_setup_fn setup;
} device_kernel;

/* One entry per op, added as each family's dk_*.c file lands. */
static const device_kernel device_kernels[] = {{NULL, NULL}};

tfd_code tfd_kernel_register_device_kernels(const char *device_type, tfd_status *st) {
  if (tfd_kernel_register_data_movement(device_type, st) != TFD_OK) return tfd_status_code(st);
  for (size_t i = 0; device_kernels[i].op; i++)
    if (tfd_kernel_register(device_kernels[i].op, device_type, device_kernels[i].setup, st) != TFD_OK)
      return tfd_status_code(st);
  return TFD_OK;
}
