/* Unit tests for the placer against TensorFlow's placer_test.cc: each test is named after the
 * TensorFlow test it reproduces, with FakeGPU devices (CPU-backed, priority 51 above CPU's 50, as
 * TensorFlow's test registers them) and test ops whose kernels exist on CPU, FakeGPU or both. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/graph/placer.h"
#include "runtime/testing/harness.h"
#include "tfdev/custom_op.h"
#include "tfdev/device.h"

#define FULL "/job:a/replica:0/task:0"
#define NDEV 3

/* ---- ops and kernels (process-wide, as TensorFlow's REGISTER_OP; registered once) ---- */
static void never_runs(void *user, void *state, tfd_kernel_context *ctx) { (void)user, (void)state, (void)ctx; }

static tfd_code infer_resource(void *user, tfd_infer_context *c, tfd_status *st) {
  (void)user, (void)st;
  tfd_infer_set_output(c, 0, TFD_RESOURCE, NULL);
  return TFD_OK;
}

/* kinds: 1 CPU kernel, 2 FakeGPU kernel, 3 both, 0 none */
static void op(const char *name, int ins, int outs, bool resource_out, int kinds) {
  tfd_custom_op o = {.name = name, .num_inputs = ins, .num_outputs = outs,
                     .infer = resource_out ? infer_resource : NULL};
  tfd_status *st = tfd_status_new();
  tfd_custom_op_register(&o, st); /* ALREADY_EXISTS when a test registered it before: fine */
  tfd_status_reset(st);
  for (int k = 0; k < 2; k++) {
    if (!(kinds & (1 << k))) continue;
    tfd_custom_kernel kern = {.op = name, .device_type = k ? "FakeGPU" : "CPU", .compute = never_runs};
    tfd_custom_kernel_register(&kern, st);
    tfd_status_reset(st);
  }
  tfd_status_free(st);
}

static void register_ops(void) {
  op("PlInput", 0, 2, false, 1);         /* TestInput: two outputs, CPU only */
  op("PlCpuGpuOutput", 0, 1, false, 3);  /* TestCPUGPUOutput */
  op("PlGpuOutput", 0, 1, false, 2);     /* TestGPUOutput */
  op("PlDevice", 0, 2, false, 2);        /* TestDevice: two outputs, GPU only */
  op("PlRelu", 1, 1, false, 3);          /* TestRelu */
  op("PlReluCPU", 1, 1, false, 1);       /* ReluCPU */
  op("PlReluGPU", 1, 1, false, 2);       /* ReluGPU */
  op("PlVar", 0, 1, true, 3);            /* TestHandleVariable */
  op("PlVarCPU", 0, 1, true, 1);         /* HandleVariableCPU */
  op("PlVarGPU", 0, 1, true, 2);         /* HandleVariableGPU */
  op("PlAssign", 2, 0, false, 3);        /* TestHandleAssign */
  op("PlAssignCPU", 2, 0, false, 1);     /* HandleAssignCPU */
  op("PlAssignGPU", 2, 0, false, 2);     /* HandleAssignGPU */
  op("PlTwoHandlesIn", 2, 0, false, 3);  /* TestTwoHandlesIn */
  op("PlResId", 1, 1, false, 3);         /* Identity of a resource */
  op("PlNoKernels", 0, 1, false, 0);     /* VariableNoKernels */
  /* Shape has a built-in CPU kernel; TensorFlow's test gives it a FakeGPU one too. */
  tfd_custom_kernel shape = {.op = "Shape", .device_type = "FakeGPU", .compute = never_runs};
  tfd_status *st = tfd_status_new();
  tfd_custom_kernel_register(&shape, st);
  tfd_status_free(st);
}

/* ---- the environment: CPU:0..2 and FakeGPU:0..2 of job a, a registry with their priorities ---- */
typedef struct env {
  tfd_factory_registry *reg;
  tfd_device *devs[2 * NDEV + 2];
  int n;
  tfd_graph_def *def;
  tfd_graph *g;
  int where[64];
  tfd_strmap fixed;
  tfd_status *st;
} env;

static void add_device(env *e, const char *name, const char *type) {
  tfd_cpu_device_config c = {.name = name, .device_type = type, .num_threads = 1};
  tfd_cpu_device_new(&c, &e->devs[e->n], e->st);
  CHECK(e->devs[e->n] != NULL);
  if (e->devs[e->n]) e->n++;
}

static env *env_new(bool devices) {
  register_ops();
  env *e = calloc(1, sizeof *e);
  e->st = tfd_status_new();
  e->reg = tfd_factory_registry_new();
  tfd_device_factory *f = NULL;
  tfd_threadpool_device_factory_new(&f, e->st);
  tfd_factory_registry_register(e->reg, "CPU", f, 50, e->st);
  tfd_factory_registry_register(e->reg, "FakeGPU", f, 51, e->st);
  tfd_device_factory_unref(f);
  e->def = tfd_graph_def_new();
  for (int i = 0; devices && i < NDEV; i++) {
    char name[128];
    snprintf(name, sizeof name, FULL "/device:CPU:%d", i);
    add_device(e, name, "CPU");
    /* TensorFlow's test inserts the GPUs in reverse order: the placer's order must not care. */
    snprintf(name, sizeof name, FULL "/device:FakeGPU:%d", NDEV - 1 - i);
    add_device(e, name, "FakeGPU");
  }
  return e;
}

static void env_free(env *e) {
  for (int i = 0; i < e->n; i++) tfd_device_unref(e->devs[i]);
  tfd_graph_free(e->g);
  tfd_graph_def_free(e->def);
  tfd_factory_registry_free(e->reg);
  tfd_strmap_free(&e->fixed);
  tfd_status_free(e->st);
  free(e);
}

/* Adds a node: inputs comma-separated, device may be NULL, classes a NULL-ended list or NULL. */
static tfd_node_def *add(env *e, const char *name, const char *opname, const char *inputs, const char *device,
                         const char *const *classes) {
  tfd_node_def *n = tfd_graph_def_add_node(e->def, name, opname, NULL);
  char buf[256];
  snprintf(buf, sizeof buf, "%s", inputs ? inputs : "");
  for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) tfd_node_def_add_input(n, tok, NULL);
  if (device) tfd_node_def_set_device(n, device, NULL);
  if (classes) {
    size_t k = 0;
    while (classes[k]) k++;
    tfd_attr_value v = {.type = TFD_ATTR_LIST_STRING, .list_len = k, .list_s = classes};
    tfd_node_def_set_attr(n, "_class", &v, NULL);
  }
  return n;
}

/* Builds the graph and places it. */
static tfd_code place(env *e, bool soft) {
  tfd_graph_free(e->g);
  e->g = tfd_graph_build(e->def, e->st);
  CHECK_STR(tfd_status_message(e->st), "");
  if (!e->g) return TFD_INTERNAL;
  tfd_placer_options o = {e->devs, e->n, e->reg, soft, false, &e->fixed, false};
  return tfd_place(e->g, &o, e->where, e->st);
}

static const char *dev_of(env *e, const char *node) {
  int i = tfd_graph_find(e->g, node);
  return i >= 0 && e->where[i] >= 0 ? tfd_device_name(e->devs[e->where[i]]) : "?";
}
static const char *type_of(env *e, const char *node) {
  int i = tfd_graph_find(e->g, node);
  return i >= 0 && e->where[i] >= 0 ? tfd_device_type(e->devs[e->where[i]]) : "?";
}
#define CHECK_TYPE(e, node, type) CHECK_STR(type_of(e, node), type)
#define CHECK_COLOCATED(e, a, b) CHECK_STR(dev_of(e, a), dev_of(e, b))

static void fix(env *e, const char *node, const char *device) {
  for (int d = 0; d < e->n; d++)
    if (strcmp(tfd_device_name(e->devs[d]), device) == 0) tfd_strmap_put(&e->fixed, node, (void *)(intptr_t)(d + 1));
}

#define CLS(...) ((const char *const[]){__VA_ARGS__, NULL})

static void test_no_constraints(void) { /* TestNoConstraints */
  env *e = env_new(true);
  add(e, "in", "PlInput", NULL, NULL, NULL);
  add(e, "n1", "PlRelu", "in", NULL, NULL);
  add(e, "n2", "PlRelu", "in:1", NULL, NULL);
  CHECK_INT(place(e, true), TFD_OK);
  CHECK_TYPE(e, "in", "CPU");
  CHECK_TYPE(e, "n1", "FakeGPU");
  CHECK_STR(dev_of(e, "n2"), FULL "/device:FakeGPU:0"); /* by name, not by the order devices came in */
  env_free(e);
}

static void test_colocation_group(void) { /* TestColocationGroup, TestMultipleColocationGroups */
  env *e = env_new(true);
  add(e, "in", "PlInput", NULL, NULL, NULL);
  add(e, "colocated_1", "PlRelu", "in", NULL, CLS("loc:@in"));
  add(e, "foo", "PlRelu", "in", NULL, NULL);
  add(e, "bar", "PlRelu", "in", NULL, CLS("loc:@in", "loc:@colocated_1"));
  CHECK_INT(place(e, true), TFD_OK);
  CHECK_COLOCATED(e, "in", "colocated_1");
  CHECK_COLOCATED(e, "in", "bar");
  CHECK_TYPE(e, "foo", "FakeGPU");
  env_free(e);
}

static void test_invalid_multiple_groups(void) { /* TestInvalidMultipleColocationGroups */
  for (int soft = 0; soft < 2; soft++) {
    env *e = env_new(true);
    add(e, "in", "PlInput", NULL, NULL, NULL);
    add(e, "colocated_1", "PlReluCPU", "in", NULL, CLS("loc:@in"));
    add(e, "foo", "PlReluGPU", "in", NULL, CLS("loc:@in", "loc:@colocated_1"));
    if (soft) {
      CHECK_INT(place(e, true), TFD_OK);
      CHECK_TYPE(e, "in", "CPU");
      CHECK_TYPE(e, "colocated_1", "CPU");
      CHECK_TYPE(e, "foo", "FakeGPU");
    } else {
      CHECK_INT(place(e, false), TFD_INVALID_ARGUMENT);
      CHECK_CONTAINS(tfd_status_message(e->st), "Colocation Debug Info:");
      CHECK_CONTAINS(tfd_status_message(e->st), "PlReluGPU: FakeGPU \n");
      CHECK_STATUS(e->st, TFD_INVALID_ARGUMENT,
                   "Cannot colocate nodes {{colocation_node foo}} and {{colocation_node in}} because no device type "
                   "supports both of those nodes and the other nodes colocated with them");
    }
    env_free(e);
  }
}

static void test_chains_and_meeting_groups(void) { /* TestColocationAndReferenceConnections */
  env *e = env_new(true);
  /* a chain: b with a, c with b; d's request pins the whole chain */
  add(e, "a", "PlCpuGpuOutput", NULL, NULL, NULL);
  add(e, "b", "PlRelu", "a", NULL, CLS("loc:@a"));
  add(e, "c", "PlRelu", "b", NULL, CLS("loc:@b"));
  add(e, "d", "PlRelu", "c", "/device:CPU:2", CLS("loc:@c"));
  /* two groups that meet: x and y start apart, z joins both; the requests merge */
  add(e, "x", "PlCpuGpuOutput", NULL, "/job:a/replica:0", NULL);
  add(e, "y", "PlRelu", "x", "/device:FakeGPU:2", NULL);
  add(e, "z", "PlRelu", "y", NULL, CLS("loc:@x", "loc:@y"));
  /* a cycle of colocation: p names q, q names p */
  add(e, "p", "PlRelu", "a", NULL, CLS("loc:@q"));
  add(e, "q", "PlRelu", "p", "/device:CPU:1", CLS("loc:@p"));
  CHECK_INT(place(e, false), TFD_OK);
  CHECK_STR(dev_of(e, "a"), FULL "/device:CPU:2");
  CHECK_COLOCATED(e, "a", "b");
  CHECK_COLOCATED(e, "a", "c");
  CHECK_COLOCATED(e, "a", "d");
  CHECK_STR(dev_of(e, "x"), FULL "/device:FakeGPU:2");
  CHECK_COLOCATED(e, "x", "y");
  CHECK_COLOCATED(e, "x", "z");
  CHECK_STR(dev_of(e, "p"), FULL "/device:CPU:1");
  CHECK_COLOCATED(e, "p", "q");
  env_free(e);
}

static void test_incompatible_requests(void) { /* RequestedDeviceOnResourceGeneratorIsTreatedAsAssigned */
  for (int soft = 0; soft < 2; soft++) {
    env *e = env_new(true);
    add(e, "a", "PlVar", NULL, "/device:FakeGPU:0", NULL);
    add(e, "b", "PlVar", NULL, "/device:CPU:0", NULL);
    add(e, "id1", "PlResId", "a", NULL, CLS("loc:@id2"));
    add(e, "id2", "PlResId", "b", NULL, NULL);
    if (soft) {
      CHECK_INT(place(e, true), TFD_OK);
      CHECK_TYPE(e, "a", "FakeGPU");
      CHECK_TYPE(e, "id1", "FakeGPU");
      CHECK_TYPE(e, "b", "CPU");
      CHECK_TYPE(e, "id2", "CPU");
    } else {
      CHECK_INT(place(e, false), TFD_INVALID_ARGUMENT);
      CHECK_CONTAINS(tfd_status_message(e->st), "\n\t [[{{node id2}}]]");
      CHECK_STATUS(e->st, TFD_INVALID_ARGUMENT,
                   "Cannot colocate nodes {{colocation_node id2}} and {{colocation_node id1}}: Cannot merge devices "
                   "with incompatible types: '/device:CPU:0' and '/device:FakeGPU:0'");
    }
    env_free(e);
  }
  /* two plain requests that disagree on the id; soft placement drops the id */
  for (int soft = 0; soft < 2; soft++) {
    env *e = env_new(true);
    add(e, "a", "PlCpuGpuOutput", NULL, "/device:CPU:0", NULL);
    add(e, "b", "PlRelu", "a", "/device:CPU:1", CLS("loc:@a"));
    if (soft) {
      CHECK_INT(place(e, true), TFD_OK);
      CHECK_COLOCATED(e, "a", "b");
      CHECK_TYPE(e, "b", "CPU");
    } else {
      CHECK_INT(place(e, false), TFD_INVALID_ARGUMENT);
      CHECK_STATUS(e->st, TFD_INVALID_ARGUMENT,
                   "Cannot colocate nodes {{colocation_node b}} and {{colocation_node a}}: Cannot merge devices with "
                   "incompatible ids: '/device:CPU:1' and '/device:CPU:0'");
    }
    env_free(e);
  }
}

static void test_bad_class_values(void) { /* ColocateAllNodes' leniency and GraphConstructor's check */
  env *e = env_new(true);
  add(e, "a", "PlCpuGpuOutput", NULL, "/device:CPU:1", NULL);
  add(e, "b", "PlRelu", "a", NULL, CLS("loc:@nope"));
  CHECK_INT(place(e, false), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(e->st, TFD_INVALID_ARGUMENT, "Node 'b' expects to be colocated with unknown node 'nope'");
  /* in a run's pruned graph the missing node was pruned away: ignored */
  tfd_graph *g = tfd_graph_build(e->def, e->st);
  tfd_placer_options o = {e->devs, e->n, e->reg, false, false, NULL, true};
  CHECK_INT(tfd_place(g, &o, e->where, e->st), TFD_OK);
  tfd_graph_free(g);
  env_free(e);
  /* "loc:@" with no name names no node */
  e = env_new(true);
  add(e, "a", "PlCpuGpuOutput", NULL, NULL, CLS("loc:@"));
  CHECK_INT(place(e, false), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(e->st, TFD_INVALID_ARGUMENT, "Node 'a' expects to be colocated with unknown node ''");
  env_free(e);

  e = env_new(true);
  add(e, "a", "PlCpuGpuOutput", NULL, "/device:CPU:1", NULL);
  /* entries without the prefix, an empty name, a single string and a list of ints are not groups */
  add(e, "b", "PlRelu", "a", NULL, CLS("a", "loc:", "@a", "", "LOC:@a"));
  tfd_attr_value one = {.type = TFD_ATTR_STRING, .s = "loc:@a"};
  tfd_node_def_set_attr(add(e, "c", "PlRelu", "a", NULL, NULL), "_class", &one, NULL);
  int64_t ints[] = {1, 2};
  tfd_attr_value li = {.type = TFD_ATTR_LIST_INT, .list_len = 2, .list_i = ints};
  tfd_node_def_set_attr(add(e, "d", "PlRelu", "a", NULL, NULL), "_class", &li, NULL);
  CHECK_INT(place(e, false), TFD_OK);
  CHECK_STR(tfd_status_message(e->st), "");
  CHECK_TYPE(e, "b", "FakeGPU");
  CHECK_TYPE(e, "c", "FakeGPU");
  CHECK_TYPE(e, "d", "FakeGPU");
  env_free(e);
}

static void test_metadata(void) { /* TestMetadataColocatedWithInput */
  env *e = env_new(true);
  add(e, "in", "PlInput", NULL, NULL, NULL);
  tfd_attr_value t = {.type = TFD_ATTR_TYPE, .dtype = TFD_FLOAT32};
  tfd_node_def_set_attr(add(e, "shape_op", "Shape", "in", NULL, NULL), "T", &t, NULL);
  add(e, "relu", "PlRelu", "in", NULL, NULL);
  CHECK_INT(place(e, false), TFD_OK);
  CHECK_TYPE(e, "in", "CPU");
  CHECK_COLOCATED(e, "in", "shape_op"); /* it has a FakeGPU kernel, which would win otherwise */
  CHECK_TYPE(e, "relu", "FakeGPU");
  env_free(e);
}

static void test_generators(void) {
  /* TestHeuristicGeneratorFollowsSingleConsumer */
  env *e = env_new(true);
  add(e, "var_cpu", "PlVarCPU", NULL, NULL, NULL);
  add(e, "in", "PlCpuGpuOutput", NULL, NULL, NULL);
  add(e, "assign", "PlAssign", "var_cpu,in", NULL, NULL);
  CHECK_INT(place(e, false), TFD_OK);
  CHECK_COLOCATED(e, "var_cpu", "in");
  CHECK_COLOCATED(e, "assign", "in");
  CHECK_TYPE(e, "in", "CPU");
  env_free(e);
  /* TestIgnoreGeneratorHeuristicIfWrongDevice */
  e = env_new(true);
  add(e, "var_cpu", "PlVarCPU", NULL, NULL, NULL);
  add(e, "in", "PlGpuOutput", NULL, NULL, NULL);
  add(e, "assign", "PlAssign", "var_cpu,in", NULL, NULL);
  CHECK_INT(place(e, false), TFD_OK);
  CHECK_TYPE(e, "in", "FakeGPU");
  CHECK_TYPE(e, "var_cpu", "CPU");
  CHECK_COLOCATED(e, "var_cpu", "assign");
  env_free(e);
  /* TestGeneratorNodeFollowsConsumerNode, TestGeneratorNodeDoesntFollowNonColocatedConsumers */
  for (int apart = 0; apart < 2; apart++) {
    e = env_new(true);
    add(e, "var1_cpu", "PlVarCPU", NULL, NULL, NULL);
    add(e, "var2_cpu", "PlVarCPU", NULL, NULL, NULL);
    add(e, "in", "PlCpuGpuOutput", NULL, NULL, NULL);
    add(e, "assign1", "PlAssign", "var1_cpu,in", NULL, NULL);
    add(e, "assign2", "PlAssign", "var2_cpu,in", NULL, NULL);
    if (apart) { /* placed by earlier runs on two CPUs */
      fix(e, "var1_cpu", FULL "/device:CPU:1");
      fix(e, "var2_cpu", FULL "/device:CPU:2");
    }
    CHECK_INT(place(e, false), TFD_OK);
    CHECK_COLOCATED(e, "assign1", "var1_cpu");
    CHECK_COLOCATED(e, "assign2", "var2_cpu");
    if (apart) {
      CHECK_STR(dev_of(e, "assign2"), FULL "/device:CPU:2");
      CHECK_TYPE(e, "in", "FakeGPU");
    } else {
      CHECK_COLOCATED(e, "in", "var1_cpu");
      CHECK_COLOCATED(e, "in", "var2_cpu");
    }
    env_free(e);
  }
}

static void test_resource_edges(void) {
  /* TestReferenceConnectionIgnoreInfeasible: the consumer's request gives way, soft placement off */
  env *e = env_new(true);
  add(e, "in", "PlDevice", NULL, "/job:a/task:0/device:FakeGPU:0", NULL);
  add(e, "var_0", "PlVar", NULL, "/job:a/task:0/device:FakeGPU:0", NULL);
  add(e, "assign", "PlAssign", "var_0,in", "/job:a/task:0/device:CPU:0", NULL);
  CHECK_INT(place(e, false), TFD_OK);
  CHECK_TYPE(e, "var_0", "FakeGPU");
  CHECK_TYPE(e, "assign", "FakeGPU");
  env_free(e);
  /* TestReferenceConnectionNoSourceDevice */
  e = env_new(true);
  add(e, "in", "PlDevice", NULL, "/job:a/task:0/device:FakeGPU:0", NULL);
  add(e, "var_0", "PlVar", NULL, NULL, NULL);
  add(e, "assign", "PlAssign", "var_0,in", "/job:a/task:0/device:CPU:0", NULL);
  CHECK_INT(place(e, false), TFD_OK);
  CHECK_TYPE(e, "var_0", "CPU");
  CHECK_TYPE(e, "assign", "CPU");
  env_free(e);
  /* TestDeviceTypeConstraintsAllowSoftPlacement */
  e = env_new(true);
  add(e, "in", "PlCpuGpuOutput", NULL, NULL, NULL);
  add(e, "var_gpu", "PlVarGPU", NULL, NULL, NULL);
  add(e, "force_gpu", "PlAssign", "var_gpu,in", "/device:CPU:0", NULL);
  add(e, "var_cpu", "PlVarCPU", NULL, NULL, NULL);
  add(e, "force_cpu", "PlAssign", "var_cpu,in", "/device:FakeGPU:0", NULL);
  CHECK_INT(place(e, true), TFD_OK);
  CHECK_TYPE(e, "force_gpu", "FakeGPU");
  CHECK_COLOCATED(e, "var_gpu", "force_gpu");
  CHECK_TYPE(e, "force_cpu", "CPU");
  CHECK_COLOCATED(e, "var_cpu", "force_cpu");
  env_free(e);
  /* TestResourceHandle's failing pairs, TestUnsatisfiableConstraintWithReferenceConnections */
  e = env_new(true);
  add(e, "in", "PlInput", NULL, NULL, NULL);
  add(e, "var", "PlVarGPU", NULL, NULL, NULL);
  add(e, "assign", "PlAssignCPU", "var,in", NULL, NULL);
  CHECK_INT(place(e, true), TFD_INVALID_ARGUMENT);
  CHECK_CONTAINS(tfd_status_message(e->st), "Nodes were connected by a reference connection (requiring them to be on "
                                            "the same device), but the two nodes were assigned two different devices");
  CHECK_STATUS(e->st, TFD_INVALID_ARGUMENT,
               "Cannot colocate nodes {{colocation_node var}} and {{colocation_node assign}} because no device type "
               "supports both of those nodes");
  env_free(e);
  /* TestResourceHandlesOnDifferentDevicesFails, requested and assigned */
  for (int assigned = 0; assigned < 2; assigned++) {
    e = env_new(true);
    add(e, "var_cpu", "PlVar", NULL, assigned ? NULL : FULL "/device:CPU:0", NULL);
    add(e, "var_gpu", "PlVar", NULL, assigned ? NULL : FULL "/device:FakeGPU:0", NULL);
    add(e, "two_handles_in", "PlTwoHandlesIn", "var_cpu,var_gpu", NULL, NULL);
    if (assigned) {
      fix(e, "var_cpu", FULL "/device:CPU:0");
      fix(e, "var_gpu", FULL "/device:FakeGPU:0");
    }
    CHECK_INT(place(e, true), TFD_INVALID_ARGUMENT);
    CHECK_STATUS(e->st, TFD_INVALID_ARGUMENT,
                 assigned ? "Cannot place the graph because a reference or resource edge connects colocation groups "
                            "with incompatible assigned devices: " FULL "/device:FakeGPU:0 vs " FULL "/device:CPU:0"
                          : "Cannot place the graph because a reference or resource edge connects colocation groups "
                            "with incompatible resource devices: " FULL "/device:FakeGPU:0 vs " FULL "/device:CPU:0");
    env_free(e);
  }
}

static void test_requests(void) {
  /* TestPartialSpec */
  env *e = env_new(true);
  add(e, "in", "PlInput", NULL, "/job:a", NULL);
  add(e, "var", "PlVar", NULL, "/job:a", NULL);
  CHECK_INT(place(e, false), TFD_OK);
  CHECK_TYPE(e, "in", "CPU");
  CHECK_TYPE(e, "var", "FakeGPU");
  env_free(e);
  /* TestUnknownDevice, TestUnknownMergedDevice: soft placement does not invent a job */
  for (int soft = 0; soft < 2; soft++) {
    e = env_new(true);
    add(e, "in", "PlInput", NULL, "/job:foo", NULL);
    CHECK_INT(place(e, soft), TFD_INVALID_ARGUMENT);
    CHECK_STATUS(e->st, TFD_INVALID_ARGUMENT,
                 "Cannot assign a device for operation in: {{node in}} was explicitly assigned to /job:foo but available "
                 "devices are [ " FULL "/device:CPU:0, " FULL "/device:CPU:1, " FULL "/device:CPU:2, " FULL
                 "/device:FakeGPU:0, " FULL "/device:FakeGPU:1, " FULL "/device:FakeGPU:2 ]. Make sure the device "
                 "specification refers to a valid device.\n\t [[in]]");
    env_free(e);
  }
  /* TestMalformedDeviceSpecification */
  e = env_new(true);
  add(e, "in", "PlInput", NULL, "/foo:bar", NULL);
  CHECK_INT(place(e, true), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(e->st, TFD_INVALID_ARGUMENT, "Malformed device specification '/foo:bar' in node: {name:'in'");
  env_free(e);
  /* TestNonexistentGpuAllowSoftPlacement, TestNonexistentGpuNoAllowSoftPlacement(FormatTag) */
  for (int soft = 0; soft < 2; soft++) {
    e = env_new(true);
    add(e, "in", "PlDevice", NULL, "/device:FakeGPU:11", NULL);
    if (soft) {
      CHECK_INT(place(e, true), TFD_OK);
      CHECK_STR(dev_of(e, "in"), FULL "/device:FakeGPU:0");
    } else {
      CHECK_INT(place(e, false), TFD_INVALID_ARGUMENT);
      CHECK_CONTAINS(tfd_status_message(e->st), "{{node in}}");
      CHECK_STATUS(e->st, TFD_INVALID_ARGUMENT, "Cannot assign a device for operation in");
    }
    env_free(e);
  }
  /* TestUnsupportedDeviceNoAllowSoftPlacement, TestUnsupportedDeviceAllowSoftPlacement */
  for (int soft = 0; soft < 2; soft++) {
    e = env_new(true);
    add(e, "var", "PlVarGPU", NULL, "/device:CPU:0", NULL);
    if (soft) {
      CHECK_INT(place(e, true), TFD_OK);
      CHECK_TYPE(e, "var", "FakeGPU");
    } else {
      CHECK_INT(place(e, false), TFD_INVALID_ARGUMENT);
      CHECK_CONTAINS(tfd_status_message(e->st), "Registered kernels:\n  device='FakeGPU'\n");
      CHECK_STATUS(e->st, TFD_INVALID_ARGUMENT,
                   "Could not satisfy explicit device specification '/device:CPU:0' because no supported kernel for "
                   "CPU devices is available.");
    }
    env_free(e);
  }
  /* TestNonExistentDevice */
  e = env_new(true);
  add(e, "var", "PlVarGPU", NULL, "/job:foo/replica:17", NULL);
  CHECK_INT(place(e, false), TFD_INVALID_ARGUMENT);
  CHECK_CONTAINS(tfd_status_message(e->st), "but available devices");
  CHECK_STATUS(e->st, TFD_INVALID_ARGUMENT, "was explicitly assigned to /job:foo/replica:17");
  env_free(e);
}

static void test_heterogeneous(void) { /* TestHeterogeneousDeviceSetFailure */
  env *e = env_new(false);
  add_device(e, "/job:b/replica:0/task:0/device:FakeGPU:0", "FakeGPU");
  add_device(e, "/job:b/replica:0/task:1/device:CPU:0", "CPU");
  add(e, "in", "PlCpuGpuOutput", NULL, NULL, NULL);
  add(e, "var", "PlReluGPU", "in", NULL, NULL);
  add(e, "assign", "PlRelu", "in", "/job:b/task:1", CLS("loc:@var"));
  CHECK_INT(place(e, true), TFD_INVALID_ARGUMENT);
  const char *m = tfd_status_message(e->st);
  CHECK_CONTAINS(m, "Cannot assign a device for operation var: Could not satisfy explicit device specification '' "
                    "because the node {{colocation_node var}} was colocated with a group of nodes that required "
                    "incompatible device '/job:b/task:1'. All available devices [/job:b/replica:0/task:0/device:FakeGPU:0, "
                    "/job:b/replica:0/task:1/device:CPU:0]. ");
  CHECK_CONTAINS(m, "PlReluGPU: FakeGPU \n");
  CHECK_CONTAINS(m, "PlRelu: FakeGPU CPU \n");
  CHECK_CONTAINS(m, "Colocation members, user-requested devices, and framework assigned devices, if any:\n"
                    "  var (PlReluGPU) \n  assign (PlRelu) /job:b/task:1\n");
  CHECK_STATUS(e->st, TFD_INVALID_ARGUMENT, "\n\t [[{{node var}}]]");
  env_free(e);
}

static void test_no_kernels_and_devices(void) {
  /* TestNoKernelsRegisteredWithNoRequstedDevice */
  env *e = env_new(true);
  add(e, "var", "PlNoKernels", NULL, NULL, NULL);
  CHECK_INT(place(e, false), TFD_INVALID_ARGUMENT);
  CHECK_CONTAINS(tfd_status_message(e->st), "<no registered kernels>");
  CHECK_CONTAINS(tfd_status_message(e->st), "Registered devices: [CPU, FakeGPU]");
  CHECK_STATUS(e->st, TFD_INVALID_ARGUMENT, "No OpKernel was registered to support Op 'PlNoKernels' used by {{node var}}");
  env_free(e);
  /* TestNoDevicesRegistered: a kernel, but not for any device there is */
  e = env_new(false);
  add_device(e, FULL "/device:CPU:0", "CPU");
  add(e, "var", "PlVarGPU", NULL, NULL, NULL);
  CHECK_INT(place(e, true), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(e->st, TFD_INVALID_ARGUMENT, "No OpKernel was registered to support Op 'PlVarGPU' used by {{node var}}");
  env_free(e);
  /* TestEmptyDeviceSet */
  e = env_new(false);
  add(e, "in", "PlInput", NULL, NULL, NULL);
  CHECK_INT(place(e, true), TFD_FAILED_PRECONDITION);
  CHECK_STATUS(e->st, TFD_FAILED_PRECONDITION, "No devices are registered");
  env_free(e);
  /* TestAssignedGpuDeviceToCpuDevice: an earlier placement the kernels no longer allow */
  e = env_new(true);
  add(e, "in", "PlInput", NULL, NULL, NULL);
  fix(e, "in", FULL "/device:FakeGPU:0");
  CHECK_INT(place(e, true), TFD_INTERNAL);
  CHECK_STATUS(e->st, TFD_INTERNAL,
               "Assigned device '" FULL "/device:FakeGPU:0' does not have registered OpKernel support for PlInput");
  env_free(e);
  /* TestAssignedDevicePreserved */
  e = env_new(true);
  add(e, "in", "PlInput", NULL, NULL, NULL);
  fix(e, "in", FULL "/device:CPU:2");
  CHECK_INT(place(e, true), TFD_OK);
  CHECK_STR(dev_of(e, "in"), FULL "/device:CPU:2");
  env_free(e);
}

static const tfd_test tests[] = {
    {"TestNoConstraints", test_no_constraints},
    {"TestColocationGroup, TestMultipleColocationGroups", test_colocation_group},
    {"TestInvalidMultipleColocationGroups", test_invalid_multiple_groups},
    {"TestColocationAndReferenceConnections: chains, meeting groups, cycles", test_chains_and_meeting_groups},
    {"RequestedDeviceOnResourceGeneratorIsTreatedAsAssigned: incompatible requests", test_incompatible_requests},
    {"bad _class values (ColocateAllNodes, GraphConstructor)", test_bad_class_values},
    {"TestMetadataColocatedWithInput", test_metadata},
    {"TestHeuristicGeneratorFollowsSingleConsumer and the generator tests", test_generators},
    {"TestReferenceConnectionIgnoreInfeasible and the resource-edge tests", test_resource_edges},
    {"TestPartialSpec, TestUnknownDevice, TestMalformedDeviceSpecification, TestNonexistentGpu*", test_requests},
    {"TestHeterogeneousDeviceSetFailure", test_heterogeneous},
    {"TestNoKernelsRegistered*, TestEmptyDeviceSet, TestAssignedDevice*", test_no_kernels_and_devices},
};
TFD_TEST_MAIN(tests)
