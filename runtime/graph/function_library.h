/* A graph's function library (TensorFlow's FunctionDefLibrary) as the loaders read it, and the pass
 * that inlines it: every call of a function (PartitionedCall, StatefulPartitionedCall, a node whose
 * op is the function's name) is replaced by the function's body, and the functional control flow
 * (If, StatelessIf, While, StatelessWhile) is lowered to TensorFlow 1's frames (Switch, Merge, Enter,
 * Exit, NextIteration, LoopCond), as TensorFlow's LowerFunctionalOpsPass does. The loaders run it
 * before they return a graph, so a graph def never holds a library: sessions, the Lua tables and
 * tfd_graph_def_serialize see the lowered graph. */
#ifndef TFDEV_RUNTIME_FUNCTION_LIBRARY_H
#define TFDEV_RUNTIME_FUNCTION_LIBRARY_H

#include <stdbool.h>
#include <stddef.h>

#include "tfdev/graph_def.h"

/* One FunctionDef: its signature's arguments, its body (the nodes, whose inputs use the function
 * syntax: an argument's name, "node:output_arg:index", "^node"), and what each output returns. */
typedef struct tfd_function_def {
  char *name;
  size_t n_in, n_out;
  char **in_names, **out_names;
  tfd_dtype *out_types; /* 0 where the signature names a type attr instead */
  char **out_type_attrs; /* that attr's name, or NULL */
  char **ret;            /* per output (NULL until set): "node:output_arg:index", or an input's name */
  tfd_graph_def *body;
} tfd_function_def;

typedef struct tfd_function_library {
  tfd_function_def **fns;
  size_t n, cap;
} tfd_function_library;

#define TFD_FUNCTION_LIBRARY_INIT {NULL, 0, 0}

/* A new function named name (its body empty), owned by lib; NULL with RESOURCE_EXHAUSTED, or
 * INVALID_ARGUMENT for a name the library already has. */
tfd_function_def *tfd_function_library_add(tfd_function_library *lib, const char *name, tfd_status *status);
/* Appends an input (output false) or output argument: its name and dtype, or the type attr it takes
 * its dtype from. */
tfd_code tfd_function_def_add_arg(tfd_function_def *f, bool output, const char *name, tfd_dtype dtype, const char *type_attr,
                                  tfd_status *status);
/* What output out_name returns (INVALID_ARGUMENT naming the function when it has no such output). */
tfd_code tfd_function_def_set_ret(tfd_function_def *f, const char *out_name, const char *tensor, tfd_status *status);
void tfd_function_library_free(tfd_function_library *lib);

/* Whether attr `attr` of an `op` node names a function the pass reads (If's then_branch and
 * else_branch, While's cond and body, PartitionedCall's f): the loaders keep such an attr as a
 * TFD_ATTR_STRING holding the function's name, and refuse function-valued attrs elsewhere. */
bool tfd_function_attr(const char *op, const char *attr);
/* Whether the pass replaces an `op` node (the ops above); a loader skips such nodes' output_shapes. */
bool tfd_function_op(const char *op);

/* Inlines every call into lib and lowers the functional control flow, in place: g's nodes are
 * replaced (a call or control-flow node named n becomes nodes named n/..., and an IdentityN named n
 * gives its outputs, so that "n:k" and "^n" still name them); the signature stays. With an empty
 * library, If and While nodes are still refused. Errors name the node and the function:
 * NOT_FOUND for a function the library lacks, INVALID_ARGUMENT for arity and output-count
 * mismatches and for a function that calls itself, UNIMPLEMENTED for an output type the pass cannot
 * tell. On error g is left as it was. */
tfd_code tfd_function_library_inline(tfd_graph_def *g, const tfd_function_library *lib, tfd_status *status);

#endif
