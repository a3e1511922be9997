/* tfdev ops: what the op registry knows, for hosts and bindings that build graphs. */
#ifndef TFDEV_OPS_H
#define TFDEV_OPS_H

#include <stdbool.h>

#include "tfdev/graph_def.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Number of registered ops (internal ones, named "_X", included) and their names. */
int tfd_ops_count(void);
const char *tfd_ops_name(int i);
bool tfd_ops_exists(const char *op);
/* The type op declares for attribute attr, or 0 when it declares none (or op is unknown). */
int tfd_ops_attr_type(const char *op, const char *attr);
/* Whether op keeps state between runs (variables, random generators). */
bool tfd_ops_is_stateful(const char *op);

#ifdef __cplusplus
}
#endif
#endif
