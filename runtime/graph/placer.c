/* Placement as TensorFlow's Placer and ColocationGraph do it: colocation groups, merged device
 * requests, kernel availability, type priority, the metadata and generator heuristics, and
 * TensorFlow's error texts. */
#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../core/log.h"
#include "../core/status_internal.h"
#include "../kernels/kernel.h"
#include "control_flow.h"
#include "placer.h"

/* ---- a growable string for the long messages (debug info lists every group member) ---- */
typedef struct sbuf {
  char *s;
  size_t len, cap;
  bool oom;
} sbuf;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void sb_printf(sbuf *b, const char *fmt, ...) {
  if (b->oom) return;
  va_list ap;
  va_start(ap, fmt);
  char *piece = tfd_vformat(fmt, ap);
  va_end(ap);
  size_t n = piece ? strlen(piece) : 0;
  if (!piece || b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (piece && cap < b->len + n + 1) cap *= 2;
    char *s = piece ? realloc(b->s, cap) : NULL;
    if (!s) {
      free(piece);
      b->oom = true;
      return;
    }
    b->s = s;
    b->cap = cap;
  }
  memcpy(b->s + b->len, piece, n + 1);
  b->len += n;
  free(piece);
}

static const char *sb_str(const sbuf *b) { return b->oom ? "(out of memory building the message)" : b->s ? b->s : ""; }

/* ---- DeviceNameUtils helpers the colocation graph needs beyond tfdev's public ones ---- */
static bool has_some_details(const tfd_parsed_name *p) {
  return p->has_job || p->has_replica || p->has_task || p->has_type || p->has_id;
}

static bool names_equal(const tfd_parsed_name *a, const tfd_parsed_name *b) {
  return a->has_job == b->has_job && (!a->has_job || strcmp(a->job, b->job) == 0) && a->has_replica == b->has_replica &&
         (!a->has_replica || a->replica == b->replica) && a->has_task == b->has_task &&
         (!a->has_task || a->task == b->task) && a->has_type == b->has_type &&
         (!a->has_type || strcmp(a->type, b->type) == 0) && a->has_id == b->has_id && (!a->has_id || a->id == b->id);
}

/* AreCompatibleDevNames: no part both set to different values. */
static bool compatible(const tfd_parsed_name *a, const tfd_parsed_name *b) {
  if (a->has_job && b->has_job && strcmp(a->job, b->job) != 0) return false;
  if (a->has_replica && b->has_replica && a->replica != b->replica) return false;
  if (a->has_task && b->has_task && a->task != b->task) return false;
  if (a->has_type && b->has_type && strcmp(a->type, b->type) != 0) return false;
  if (a->has_id && b->has_id && a->id != b->id) return false;
  return true;
}

/* EnsureSpecification (every part `less` sets, `more` takes) and MergeOverrideDevNames alike:
 * the parts `from` sets replace those of `to`. */
static void take_parts(tfd_parsed_name *to, const tfd_parsed_name *from) {
  if (from->has_job) to->has_job = true, strcpy(to->job, from->job);
  if (from->has_replica) to->has_replica = true, to->replica = from->replica;
  if (from->has_task) to->has_task = true, to->task = from->task;
  if (from->has_type) to->has_type = true, strcpy(to->type, from->type);
  if (from->has_id) to->has_id = true, to->id = from->id;
}

/* ---- the colocation graph ---- */
typedef struct member {
  int parent, rank;
  /* requested is always a specification of assigned and resource, as TensorFlow keeps it. */
  tfd_parsed_name requested, assigned, resource;
  int assigned_index;       /* the device this group was pinned to, or -1 */
  unsigned char *supported; /* per device type (placer.types order): has a kernel for every member */
  int *possible;            /* cached GetDevicesForNode answer for a root, or NULL */
  int num_possible;
} member;

typedef struct placer {
  const tfd_graph *g;
  const tfd_placer_options *o;
  member *m;
  unsigned char *supported_store; /* n * ntypes */
  int ntypes;
  const char **types; /* distinct device types, by priority (high first), then name */
  int *device_type;   /* device -> index into types */
  int *order;         /* devices by type priority, then full name: FilterSupportedDevices' order */
  int *scratch;       /* num_devices ints */
} placer;

static int find_root(placer *p, int i) {
  int r = i;
  while (p->m[r].parent != r) r = p->m[r].parent;
  while (p->m[i].parent != r) {
    int next = p->m[i].parent;
    p->m[i].parent = r;
    i = next;
  }
  return r;
}

static const char *node_name(const placer *p, int i) { return tfd_gnode_name(&p->g->nodes[i]); }
static const char *node_op(const placer *p, int i) { return p->g->nodes[i].op->name; }

/* Whether device_type has a kernel for node n's op that computes its dtype (a kernel may be
 * registered for some dtypes of the op's type attr only, as TensorFlow's TypeConstraint). */
static bool node_supported(const tfd_gnode *n, const char *device_type) {
  const tfd_op_def *op = n->op;
  tfd_dtype dt = op->type_attr ? tfd_attr_dtype(n->def, op->type_attr, 0) : 0;
  if (!dt && op->type_attr && op->type_input >= 0 && op->type_input < n->num_inputs) dt = n->in_types[op->type_input];
  return tfd_kernel_supported_for(op->name, device_type, dt);
}
static const char *node_device(const placer *p, int i) { return tfd_node_def_device(p->g->nodes[i].def); }

/* AttachDef: TensorFlow appends the node's tag, or just its name when the message already has one. */
static tfd_code fail_attached(placer *p, tfd_status *st, tfd_code code, int node, const char *msg) {
  const char *name = node_name(p, node);
  if (strstr(msg, "{{node "))
    return tfd_status_setf(st, code, "%s\n\t [[%s]]", msg, name);
  return tfd_status_setf(st, code, "%s\n\t [[{{node %s}}]]", msg, name);
}

static void canonical(const tfd_parsed_name *n, char *out) { tfd_device_name_canonical(n, out); }

static void member_debug(const placer *p, const member *m, sbuf *b) {
  char req[TFD_DEVICE_NAME_MAX], asg[TFD_DEVICE_NAME_MAX], res[TFD_DEVICE_NAME_MAX];
  canonical(&m->requested, req);
  canonical(&m->assigned, asg);
  canonical(&m->resource, res);
  sb_printf(b,
            "Member(assigned_device_name_index_=%d requested_device_name_='%s' assigned_device_name_='%s' "
            "resource_device_name_='%s' supported_device_types_=[",
            m->assigned_index, req, asg, res);
  bool first = true;
  for (int t = 0; t < p->ntypes; t++)
    if (m->supported[t]) sb_printf(b, "%s%s", first ? "" : ", ", p->types[t]), first = false;
  sb_printf(b, "] possible_devices_=[");
  for (int k = 0; k < m->num_possible; k++)
    sb_printf(b, "%s%s", k ? ", " : "", tfd_device_name(p->o->devices[m->possible[k]]));
  sb_printf(b, "]");
}

/* ColocationGraph::DebugInfo: the group's op types with the device types that run them, and its
 * members with their requested devices. Uses no path compression: it runs while merging. */
static void debug_info(const placer *p, int root, sbuf *b) {
  sb_printf(b, "\nColocation Debug Info:\nColocation group had the following types and supported devices: ");
  sb_printf(b, "\nRoot ");
  member_debug(p, &p->m[root], b);
  const tfd_graph *g = p->g;
  tfd_strmap seen = TFD_STRMAP_INIT; /* one line per op type */
  for (int i = 0; i < g->n; i++) {
    int r = i;
    while (p->m[r].parent != r) r = p->m[r].parent;
    if (r != root || tfd_strmap_get(&seen, node_op(p, i))) continue;
    if (!tfd_strmap_put(&seen, node_op(p, i), (void *)1)) b->oom = true;
    sb_printf(b, "\n%s: ", node_op(p, i));
    for (int t = 0; t < p->ntypes; t++) /* the op's own kernels: a root's row holds its group's intersection */
      if (node_supported(&g->nodes[i], p->types[t])) sb_printf(b, "%s ", p->types[t]);
  }
  tfd_strmap_free(&seen);
  sb_printf(b, "\n\nColocation members, user-requested devices, and framework assigned devices, if any:");
  for (int i = 0; i < g->n; i++) {
    int r = i;
    while (p->m[r].parent != r) r = p->m[r].parent;
    if (r != root) continue;
    sb_printf(b, "\n  %s (%s) %s", node_name(p, i), node_op(p, i), node_device(p, i));
    intptr_t f = p->o->fixed ? (intptr_t)tfd_strmap_get(p->o->fixed, node_name(p, i)) : 0;
    if (f > 0) sb_printf(b, " framework assigned device=%s", tfd_device_name(p->o->devices[f - 1]));
  }
  sb_printf(b, "\n");
}

static tfd_code oom(tfd_status *st) { return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory placing the graph"); }

/* ColocationGraph::ColocateNodes: merges the groups of x and y, or says why they cannot share a
 * device. Nothing changes on error. */
static tfd_code colocate(placer *p, int x, int y, tfd_status *st) {
  int xr = find_root(p, x), yr = find_root(p, y);
  if (xr == yr) return TFD_OK;
  /* Union by rank; ties make x's root the root, as TensorFlow does. */
  int nr = p->m[xr].rank < p->m[yr].rank ? yr : xr, orr = nr == xr ? yr : xr;
  member *n = &p->m[nr], *o = &p->m[orr];
  tfd_parsed_name asg = n->assigned, res = n->resource, req = n->requested;
  tfd_status tmp = TFD_STATUS_INIT;
  if (tfd_device_name_merge(&asg, &o->assigned, false, &tmp) != TFD_OK ||
      tfd_device_name_merge(&res, &o->resource, false, &tmp) != TFD_OK ||
      tfd_device_name_merge(&req, &o->requested, p->o->allow_soft_placement, &tmp) != TFD_OK) {
    tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Cannot colocate nodes {{colocation_node %s}} and {{colocation_node %s}}: %s",
                    node_name(p, x), node_name(p, y), tfd_status_message(&tmp));
    tfd_status_clear(&tmp);
    return TFD_INVALID_ARGUMENT;
  }
  take_parts(&req, &asg);
  take_parts(&req, &res);
  bool any = false;
  for (int t = 0; t < p->ntypes; t++) any |= n->supported[t] && o->supported[t];
  if (!any) {
    sbuf b = {0};
    debug_info(p, xr, &b);
    debug_info(p, yr, &b);
    tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                    "Cannot colocate nodes {{colocation_node %s}} and {{colocation_node %s}} because no device type "
                    "supports both of those nodes and the other nodes colocated with them.%s",
                    node_name(p, x), node_name(p, y), sb_str(&b));
    free(b.s);
    return TFD_INVALID_ARGUMENT;
  }
  for (int t = 0; t < p->ntypes; t++) n->supported[t] = n->supported[t] && o->supported[t];
  n->assigned = asg;
  n->resource = res;
  n->requested = req;
  if (n->assigned_index < 0) n->assigned_index = o->assigned_index;
  o->parent = nr;
  if (p->m[xr].rank == p->m[yr].rank) n->rank++;
  free(n->possible), n->possible = NULL, n->num_possible = 0;
  free(o->possible), o->possible = NULL, o->num_possible = 0;
  return TFD_OK;
}

/* ColocationGraph::ColocateResourceOrRefEdge: the consumer of a resource joins its producer's
 * group. A consumer whose own request conflicts with the producer group's is overridden toward
 * it (TensorFlow's IgnoreInfeasible case); conflicting resource or framework-assigned devices are
 * an error. */
static tfd_code colocate_resource_edge(placer *p, int src, int dst, tfd_status *st) {
  int sr = find_root(p, src), dr = find_root(p, dst);
  member *s = &p->m[sr], *d = &p->m[dr];
  char a[TFD_DEVICE_NAME_MAX], b[TFD_DEVICE_NAME_MAX];
  if (!compatible(&s->assigned, &d->assigned) || !compatible(&s->resource, &d->resource)) {
    bool assigned = !compatible(&s->assigned, &d->assigned);
    canonical(assigned ? &s->assigned : &s->resource, a);
    canonical(assigned ? &d->assigned : &d->resource, b);
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "Cannot place the graph because a reference or resource edge connects colocation groups "
                           "with incompatible %s devices: %s vs %s. The edge src node is %s , and the dst node is %s",
                           assigned ? "assigned" : "resource", a, b, node_name(p, src), node_name(p, dst));
  }
  if (sr != dr && !compatible(&s->requested, &d->requested)) {
    canonical(&d->requested, a);
    canonical(&s->requested, b);
    if (p->o->log_device_placement)
      tfd_log(TFD_LOG_INFO,
              "Ignoring device specification %s for node '%s' because the input edge from '%s' is a reference "
              "connection and already has a device field set to %s",
              a, node_name(p, dst), node_name(p, src), b);
    d->requested = s->requested;
    take_parts(&d->requested, &d->assigned);
    take_parts(&d->requested, &d->resource);
  }
  tfd_status tmp = TFD_STATUS_INIT;
  if (colocate(p, src, dst, &tmp) != TFD_OK) {
    char *msg = tfd_format("Nodes were connected by a reference connection (requiring them to be on the same device), "
                           "but the two nodes were assigned two different devices: %s",
                           tfd_status_message(&tmp));
    tfd_status_clear(&tmp);
    if (!msg) return oom(st);
    fail_attached(p, st, TFD_INVALID_ARGUMENT, dst, msg);
    free(msg);
    return TFD_INVALID_ARGUMENT;
  }
  return TFD_OK;
}

/* ColocationGraph::ColocateNodeToGroup: the first node naming a group is its root; later ones
 * join it. With soft placement, a node that cannot join stays out of the group. */
static tfd_code colocate_to_group(placer *p, tfd_strmap *roots, int node, const char *group, tfd_status *st) {
  intptr_t r = (intptr_t)tfd_strmap_get(roots, group);
  if (!r) return tfd_strmap_put(roots, group, (void *)(intptr_t)(node + 1)) ? TFD_OK : oom(st);
  tfd_status tmp = TFD_STATUS_INIT;
  if (colocate(p, node, (int)r - 1, &tmp) == TFD_OK) return TFD_OK;
  if (!p->o->allow_soft_placement) {
    fail_attached(p, st, tfd_status_code(&tmp), node, tfd_status_message(&tmp));
    tfd_status_clear(&tmp);
    return tfd_status_code(st);
  }
  if (p->o->log_device_placement)
    tfd_log(TFD_LOG_INFO,
            "Ignoring request to colocate node '%s' with nodes in colocation group '%s' because soft placement is on "
            "and an attempt at doing so resulted in the following error: %s",
            node_name(p, node), group, tfd_status_message(&tmp));
  tfd_status_clear(&tmp);
  return TFD_OK;
}

/* ColocationGraph::ColocateAllNodes: every node joins the groups its `_class` attribute names
 * ("loc:@name"; other entries are not groups) and the group of its own name. */
static tfd_code colocate_all(placer *p, tfd_status *st) {
  tfd_strmap roots = TFD_STRMAP_INIT;
  tfd_code code = TFD_OK;
  for (int i = 0; i < p->g->n && code == TFD_OK; i++) {
    const tfd_attr_value *cls = tfd_node_def_attr(p->g->nodes[i].def, "_class");
    if (cls && cls->type == TFD_ATTR_LIST_STRING) {
      for (size_t k = 0; k < cls->list_len && code == TFD_OK; k++) {
        const char *s = cls->list_s[k];
        if (s && strncmp(s, "loc:@", 5) == 0) code = colocate_to_group(p, &roots, i, s + 5, st);
      }
    } else if (cls && cls->type == TFD_ATTR_STRING && cls->s && *cls->s) {
      tfd_log(TFD_LOG_ERROR,
              "The value for colocation attribute '_class' must be a list of strings, not a single string: node '%s'",
              node_name(p, i));
    }
    /* Each node belongs to the group of its own name. */
    if (code == TFD_OK) code = colocate_to_group(p, &roots, i, node_name(p, i), st);
  }
  tfd_strmap_free(&roots);
  return code;
}

/* GraphConstructor's check of imported graphs: a `_class` entry must name a node of the graph. */
static tfd_code check_colocation_targets(const placer *p, tfd_status *st) {
  for (int i = 0; i < p->g->n; i++) {
    const tfd_attr_value *cls = tfd_node_def_attr(p->g->nodes[i].def, "_class");
    if (!cls || cls->type != TFD_ATTR_LIST_STRING) continue;
    for (size_t k = 0; k < cls->list_len; k++) {
      const char *s = cls->list_s[k];
      if (s && strncmp(s, "loc:@", 5) == 0 && tfd_graph_find(p->g, s + 5) < 0)
        return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Node '%s' expects to be colocated with unknown node '%s'",
                               node_name(p, i), s + 5);
    }
  }
  return TFD_OK;
}

static bool is_resource_generator(const tfd_gnode *n) {
  return n->num_inputs == 0 && n->num_outputs == 1 && n->out_types[0] == TFD_RESOURCE;
}

/* Placer's IsGeneratorNode: no inputs, one output (tfdev has no reference dtypes to exclude). */
static bool is_generator(const tfd_gnode *n) { return n->num_inputs == 0 && n->num_outputs == 1; }

/* Node::IsMetadata: ops that read only their input's shape. */
static bool is_metadata(const tfd_gnode *n) {
  const char *op = n->op->name;
  return n->num_inputs > 0 && (strcmp(op, "Shape") == 0 || strcmp(op, "ShapeN") == 0 || strcmp(op, "Size") == 0 ||
                               strcmp(op, "Rank") == 0);
}

static void attrs_summary(const tfd_node_def *def, sbuf *b) {
  for (size_t k = 0; k < tfd_node_def_num_attrs(def); k++) {
    const tfd_attr_value *v = tfd_node_def_attr_at(def, k);
    sb_printf(b, "%s%s=", k ? ", " : "", tfd_node_def_attr_name(def, k));
    switch (v->type) {
      case TFD_ATTR_INT: sb_printf(b, "%lld", (long long)v->i); break;
      case TFD_ATTR_FLOAT: sb_printf(b, "%g", v->f); break;
      case TFD_ATTR_BOOL: sb_printf(b, "%s", v->b ? "true" : "false"); break;
      case TFD_ATTR_STRING: sb_printf(b, "\"%s\"", v->s ? v->s : ""); break;
      case TFD_ATTR_TYPE: sb_printf(b, "%s", tfd_dtype_name(v->dtype)); break;
      default: sb_printf(b, "..."); break;
    }
  }
}

/* KernelsRegisteredForOp, over the device types this placement knows. */
static void kernels_for_op(const placer *p, const char *op, sbuf *b) {
  bool any = false;
  for (int t = 0; t < p->ntypes; t++)
    if (tfd_kernel_supported(op, p->types[t])) sb_printf(b, "  device='%s'\n", p->types[t]), any = true;
  if (!any) sb_printf(b, "  <no registered kernels>\n");
}

/* ColocationGraph::InitializeMember. */
static tfd_code init_member(placer *p, int i, tfd_status *st) {
  const tfd_gnode *n = &p->g->nodes[i];
  member *m = &p->m[i];
  m->parent = i;
  m->assigned_index = -1;
  m->supported = p->supported_store + (size_t)i * (size_t)p->ntypes;
  bool any = false;
  for (int t = 0; t < p->ntypes; t++) any |= m->supported[t] = node_supported(n, p->types[t]);
  intptr_t f = p->o->fixed ? (intptr_t)tfd_strmap_get(p->o->fixed, tfd_gnode_name(n)) : 0;
  if (f > 0 && f <= p->o->num_devices) {
    /* Placed by an earlier run: kept, after checking it still makes sense (INTERNAL, as the
     * framework, not the user, made it). */
    tfd_device *d = p->o->devices[f - 1];
    m->assigned = *tfd_device_parsed_name(d);
    m->requested = m->assigned;
    m->assigned_index = (int)f - 1;
    if (!m->supported[p->device_type[f - 1]])
      return tfd_status_setf(st, TFD_INTERNAL, "Assigned device '%s' does not have registered OpKernel support for %s",
                             tfd_device_name(d), n->op->name);
    return TFD_OK;
  }
  const char *dev = tfd_node_def_device(n->def);
  tfd_parsed_name req = {0};
  if (*dev && tfd_device_name_parse(dev, &req, NULL) != TFD_OK) {
    char *msg = tfd_format("Malformed device specification '%s' in node: {name:'%s' op:'%s' device:'%s'}", dev,
                           tfd_gnode_name(n), n->op->name, dev);
    if (!msg) return oom(st);
    fail_attached(p, st, TFD_INVALID_ARGUMENT, i, msg);
    free(msg);
    return TFD_INVALID_ARGUMENT;
  }
  if (!any) {
    sbuf b = {0};
    sb_printf(&b, "No OpKernel was registered to support Op '%s' used by {{node %s}} with these attrs: [", n->op->name,
              tfd_gnode_name(n));
    attrs_summary(n->def, &b);
    sb_printf(&b, "]\nRegistered devices: [");
    /* std::set order: sorted by name */
    const char *prev = "";
    for (int k = 0; k < p->ntypes; k++) {
      const char *next = NULL;
      for (int t = 0; t < p->ntypes; t++)
        if (strcmp(p->types[t], prev) > 0 && (!next || strcmp(p->types[t], next) < 0)) next = p->types[t];
      if (!next) break;
      sb_printf(&b, "%s%s", k ? ", " : "", next);
      prev = next;
    }
    sb_printf(&b, "]\nRegistered kernels:\n");
    kernels_for_op(p, n->op->name, &b);
    fail_attached(p, st, TFD_INVALID_ARGUMENT, i, sb_str(&b));
    free(b.s);
    return TFD_INVALID_ARGUMENT;
  }
  if (*dev) {
    m->requested = req;
    /* A request on a resource's maker is treated as where the resource lives: never overridden. */
    if (is_resource_generator(n)) m->resource = req;
  }
  return TFD_OK;
}

/* FilterSupportedDevices over the devices matching spec, in placement order. Returns the count. */
static int matching_supported(const placer *p, const tfd_parsed_name *spec, const unsigned char *supported, int *out) {
  int k = 0;
  for (int j = 0; j < p->o->num_devices; j++) {
    int d = p->order[j];
    if (tfd_device_name_is_specification(spec, tfd_device_parsed_name(p->o->devices[d])) &&
        (!supported || supported[p->device_type[d]]))
      out[k++] = d;
  }
  return k;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* ColocationGraph::GetDevicesForNode: the devices node's group may go to, best first, cached on the
 * group's root; or TensorFlow's error saying why there are none. */
static tfd_code devices_for(placer *p, int node, const int **devs, int *count, tfd_status *st) {
  int r = find_root(p, node);
  member *m = &p->m[r];
  if (m->possible) {
    *devs = m->possible;
    *count = m->num_possible;
    return TFD_OK;
  }
  int *out = p->scratch, k;
  const tfd_graph *g = p->g;
  if (has_some_details(&m->requested)) {
    k = matching_supported(p, &m->requested, m->supported, out);
    if (k == 0 && p->o->allow_soft_placement) {
      /* Soft placement lets go of the type and id (unless the group's resource or framework-assigned
       * device fixes them); the job, replica and task stay. */
      tfd_parsed_name soft = m->requested;
      if (!m->assigned.has_type && !m->resource.has_type) soft.has_type = false;
      if (!m->assigned.has_id && !m->resource.has_id) soft.has_id = false;
      k = matching_supported(p, &soft, m->supported, out);
      if (k == 0) {
        soft = m->requested;
        if (!m->assigned.has_type) soft.has_type = false;
        if (!m->assigned.has_id) soft.has_id = false;
        k = matching_supported(p, &soft, m->supported, out);
        if (k > 0 && tfd_log_enabled(TFD_LOG_WARNING)) {
          sbuf b = {0};
          for (int c = 0; c < k; c++) sb_printf(&b, "%s%s", c ? "\n  " : "", tfd_device_name(p->o->devices[out[c]]));
          sb_printf(&b, "].\nSee below for details of this colocation group:");
          debug_info(p, r, &b);
          tfd_log(TFD_LOG_WARNING,
                  "Failed to place the graph without changing the devices of some resources. Some of the operations "
                  "(that had to be colocated with resource generating operations) are not supported on the "
                  "resources' devices. Current candidate devices are [\n  %s",
                  sb_str(&b));
          free(b.s);
        }
      }
    }
    if (k == 0) {
      const char *asked = node_device(p, node);
      tfd_parsed_name specified = {0};
      bool parsed = tfd_device_name_parse(asked, &specified, NULL) == TFD_OK;
      sbuf b = {0}, info = {0};
      debug_info(p, r, &info);
      if (parsed && names_equal(&specified, &m->requested)) {
        if (matching_supported(p, &specified, NULL, out) == 0) {
          /* Sometimes the problem is clear only with the list of devices in front of you. */
          const char **names = malloc((size_t)p->o->num_devices * sizeof *names);
          if (!names) {
            free(info.s);
            return oom(st);
          }
          for (int d = 0; d < p->o->num_devices; d++) names[d] = tfd_device_name(p->o->devices[d]);
          qsort(names, (size_t)p->o->num_devices, sizeof *names, cmp_str);
          sb_printf(&b, "{{node %s}} was explicitly assigned to %s but available devices are [ ", node_name(p, node), asked);
          for (int d = 0; d < p->o->num_devices; d++) sb_printf(&b, "%s%s", d ? ", " : "", names[d]);
          sb_printf(&b, " ]. Make sure the device specification refers to a valid device.");
          free(names);
          char lower[4] = {0};
          for (int c = 0; c < 3 && specified.type[c]; c++) lower[c] = (char)tolower((unsigned char)specified.type[c]);
          if (specified.has_type && strlen(specified.type) == 3 && strcmp(lower, "gpu") == 0 &&
              tfd_factory_registry_priority(p->o->registry, "GPU") < 0)
            sb_printf(&b, " The requested device appears to be a GPU, but CUDA is not enabled.");
          /* TensorFlow's C++ runtime keeps a type as written (its Python front end upper-cases cpu and gpu):
           * say so when only the case keeps the request from a device. */
          for (int d = 0; d < p->o->num_devices && specified.has_type; d++) {
            const char *type = tfd_device_type(p->o->devices[d]);
            if (strcasecmp(type, specified.type) == 0 && strcmp(type, specified.type) != 0) {
              sb_printf(&b, " Device types are case-sensitive: did you mean %s rather than %s?", type, specified.type);
              break;
            }
          }
        } else if (specified.has_type) {
          sb_printf(&b,
                    "Could not satisfy explicit device specification '%s' because no supported kernel for %s devices "
                    "is available.%s\nOp: %s\nNode attrs: ",
                    asked, specified.type, sb_str(&info), node_op(p, node));
          attrs_summary(g->nodes[node].def, &b);
          sb_printf(&b, "\nRegistered kernels:\n");
          kernels_for_op(p, node_op(p, node), &b);
        } else {
          sb_printf(&b, "Could not satisfy explicit device specification '%s%s", asked, sb_str(&info));
        }
      } else {
        char want[TFD_DEVICE_NAME_MAX];
        canonical(&m->requested, want);
        sb_printf(&b,
                  "Could not satisfy explicit device specification '%s' because the node {{colocation_node %s}} was "
                  "colocated with a group of nodes that required incompatible device '%s'. All available devices [",
                  asked, node_name(p, node), want);
        for (int d = 0; d < p->o->num_devices; d++)
          sb_printf(&b, "%s%s", d ? ", " : "", tfd_device_name(p->o->devices[d]));
        sb_printf(&b, "]. %s", sb_str(&info));
      }
      tfd_status_setf(st, TFD_INVALID_ARGUMENT, "%s", sb_str(&b));
      free(b.s);
      free(info.s);
      return TFD_INVALID_ARGUMENT;
    }
  } else {
    k = matching_supported(p, &m->requested, m->supported, out);
    if (k == 0) {
      sbuf b = {0};
      sb_printf(&b, "Node had no OpKernel registered to support this operation: Operation was %s and inputs were [",
                node_op(p, node));
      const tfd_gnode *n = &g->nodes[node];
      for (int in = 0; in < n->num_inputs; in++) sb_printf(&b, "%s%s", in ? ", " : "", tfd_dtype_name(n->in_types[in]));
      sb_printf(&b, "].\n");
      debug_info(p, r, &b);
      tfd_status_setf(st, TFD_INVALID_ARGUMENT, "%s", sb_str(&b));
      free(b.s);
      return TFD_INVALID_ARGUMENT;
    }
  }
  m->possible = malloc((size_t)k * sizeof *m->possible);
  if (!m->possible) return oom(st);
  memcpy(m->possible, out, (size_t)k * sizeof *out);
  m->num_possible = k;
  *devs = m->possible;
  *count = k;
  return TFD_OK;
}

/* Member::AssignDevice: the whole group is now bound to device d. */
static void assign(placer *p, int node, int d, int *device_of) {
  device_of[node] = d;
  member *m = &p->m[find_root(p, node)];
  if (m->assigned_index == d) return;
  const tfd_parsed_name *name = tfd_device_parsed_name(p->o->devices[d]);
  take_parts(&m->assigned, name);
  take_parts(&m->resource, name);
  take_parts(&m->requested, name);
  m->assigned_index = d;
  free(m->possible), m->possible = NULL, m->num_possible = 0;
}

static bool contains(const int *devs, int count, int d) {
  for (int k = 0; k < count; k++)
    if (devs[k] == d) return true;
  return false;
}

/* "Cannot assign a device for operation X: ..." with the node's tag, as Placer::Run reports. */
static tfd_code cannot_assign(placer *p, int node, tfd_status *st) {
  if (tfd_status_code(st) == TFD_RESOURCE_EXHAUSTED) return TFD_RESOURCE_EXHAUSTED; /* no fault of the node's */
  char *msg = tfd_format("Cannot assign a device for operation %s: %s", node_name(p, node), tfd_status_message(st));
  if (!msg) return oom(st);
  fail_attached(p, st, TFD_INVALID_ARGUMENT, node, msg);
  free(msg);
  return TFD_INVALID_ARGUMENT;
}

static int cmp_devices(const void *a, const void *b, void *ctx);

/* Devices by type priority (highest first), then by full name: DeviceSet's order. */
static void sort_devices(placer *p) {
  const tfd_placer_options *o = p->o;
  for (int j = 0; j < o->num_devices; j++) p->order[j] = j;
  for (int j = 1; j < o->num_devices; j++) { /* insertion sort: device lists are short */
    int d = p->order[j], k = j - 1;
    while (k >= 0 && cmp_devices(&p->order[k], &d, p) > 0) {
      p->order[k + 1] = p->order[k];
      k--;
    }
    p->order[k + 1] = d;
  }
}

static int cmp_devices(const void *a, const void *b, void *ctx) {
  const placer *p = ctx;
  int da = *(const int *)a, db = *(const int *)b;
  int ta = p->device_type[da], tb = p->device_type[db];
  if (ta != tb) {
    int pa = tfd_factory_registry_priority(p->o->registry, p->types[ta]);
    int pb = tfd_factory_registry_priority(p->o->registry, p->types[tb]);
    if (pa != pb) return pa > pb ? -1 : 1;
  }
  return strcmp(tfd_device_name(p->o->devices[da]), tfd_device_name(p->o->devices[db]));
}

/* The distinct device types, by factory priority then name (PrioritizedDeviceTypeList). */
static void collect_types(placer *p) {
  const tfd_placer_options *o = p->o;
  for (int d = 0; d < o->num_devices; d++) {
    const char *t = tfd_device_type(o->devices[d]);
    int k = 0;
    while (k < p->ntypes && strcmp(p->types[k], t) != 0) k++;
    if (k == p->ntypes) p->types[p->ntypes++] = t;
  }
  for (int j = 1; j < p->ntypes; j++) {
    const char *t = p->types[j];
    int pt = tfd_factory_registry_priority(o->registry, t), k = j - 1;
    while (k >= 0) {
      int pk = tfd_factory_registry_priority(o->registry, p->types[k]);
      if (pk > pt || (pk == pt && strcmp(p->types[k], t) < 0)) break;
      p->types[k + 1] = p->types[k];
      k--;
    }
    p->types[k + 1] = t;
  }
  for (int d = 0; d < o->num_devices; d++) {
    int k = 0;
    while (strcmp(p->types[k], tfd_device_type(o->devices[d])) != 0) k++;
    p->device_type[d] = k;
  }
}

/* Soft placement's info lines (one per node that did not get what it asked for) and
 * log_device_placement's listing. */
static void report(const placer *p, const int *device_of) {
  const tfd_graph *g = p->g;
  const tfd_placer_options *o = p->o;
  for (int i = 0; i < g->n; i++) {
    const tfd_gnode *n = &g->nodes[i];
    tfd_device *d = o->devices[device_of[i]];
    if (o->allow_soft_placement && n->has_requested && tfd_log_enabled(TFD_LOG_INFO) &&
        !tfd_device_name_is_specification(&n->requested, tfd_device_parsed_name(d))) {
      char want[TFD_DEVICE_NAME_MAX];
      canonical(&n->requested, want);
      tfd_log(TFD_LOG_INFO, "soft placement: node '%s' (%s) asked for '%s', which cannot run it here; it runs on %s",
              tfd_gnode_name(n), n->op->name, want, tfd_device_name(d));
    }
    if (o->log_device_placement && n->op->name[0] != '_')
      fprintf(stderr, "%s: (%s): %s\n", tfd_gnode_name(n), n->op->name, tfd_device_name(d));
  }
}

/* Every node of a while loop, its nested loops and Enter nodes included, goes to one device: the
 * executor runs a loop's frames within one partition, so no transfer between devices sits inside a
 * loop (TensorFlow instead adds control loops to each partition; tfdev keeps loops whole). A
 * malformed loop is reported here, naming the node. */
static tfd_code colocate_loops(placer *p, tfd_status *st) {
  if (!tfd_graph_has_control_flow(p->g)) return TFD_OK;
  tfd_control_flow cf;
  tfd_code code = tfd_control_flow_build(p->g, &cf, st);
  int *anchor = code == TFD_OK ? malloc((size_t)cf.num_frames * sizeof *anchor) : NULL;
  if (code == TFD_OK && !anchor) code = oom(st);
  for (int f = 0; anchor && f < cf.num_frames; f++) anchor[f] = -1;
  for (int i = 0; code == TFD_OK && i < p->g->n; i++) {
    int f = cf.frame_of[i] ? cf.frame_of[i] : cf.enter_frame[i];
    if (f <= 0) continue;
    while (cf.frames[f].parent > 0) f = cf.frames[f].parent; /* the outermost loop */
    if (anchor[f] < 0) anchor[f] = i;
    else code = colocate(p, anchor[f], i, st);
  }
  free(anchor);
  tfd_control_flow_free(&cf);
  return code;
}

static tfd_code place(placer *p, int *device_of, tfd_status *st) {
  const tfd_graph *g = p->g;
  const tfd_placer_options *o = p->o;
  tfd_code code = TFD_OK;
  collect_types(p);
  sort_devices(p);
  if (!o->pruned && (code = check_colocation_targets(p, st)) != TFD_OK) return code;
  for (int i = 0; i < g->n; i++)
    if ((code = init_member(p, i, st)) != TFD_OK) return code;
  /* Resource edges first, then fetches with what they fetch (tfdev copies fetches to the host from
   * wherever they were made), then the `_class` groups, as ColocationGraph::Initialize orders them. */
  for (int i = 0; i < g->n; i++) {
    const tfd_gnode *n = &g->nodes[i];
    for (int k = 0; k < n->num_inputs; k++)
      if (n->in_types[k] == TFD_RESOURCE && (code = colocate_resource_edge(p, n->inputs[k].node, i, st)) != TFD_OK)
        return code;
  }
  for (int i = 0; i < g->n; i++) {
    const tfd_gnode *n = &g->nodes[i];
    if (strcmp(n->op->name, "_Fetch") != 0 || n->num_inputs < 1) continue;
    tfd_status tmp = TFD_STATUS_INIT;
    if (colocate(p, n->inputs[0].node, i, &tmp) != TFD_OK) {
      fail_attached(p, st, tfd_status_code(&tmp), i, tfd_status_message(&tmp));
      tfd_status_clear(&tmp);
      return tfd_status_code(st);
    }
  }
  if ((code = colocate_all(p, st)) != TFD_OK || (code = colocate_loops(p, st)) != TFD_OK) return code;

  for (int i = 0; i < g->n; i++) device_of[i] = -1;
  /* First pass in topological order, so a metadata op's input is placed before it; generators
   * wait for the second pass, to follow their consumers. */
  for (int t = 0; t < g->n; t++) {
    int i = g->topo[t];
    const tfd_gnode *n = &g->nodes[i];
    if (p->m[i].assigned_index >= 0 && o->fixed && tfd_strmap_get(o->fixed, tfd_gnode_name(n))) {
      assign(p, i, p->m[i].assigned_index, device_of);
      continue;
    }
    if (is_generator(n)) continue;
    const int *devs;
    int count;
    if (devices_for(p, i, &devs, &count, st) != TFD_OK) return cannot_assign(p, i, st);
    int d = devs[0];
    /* Heuristic B: an op that only reads its input's metadata stays with the input. */
    if (is_metadata(n)) {
      int in = device_of[n->inputs[0].node];
      if (in >= 0 && contains(devs, count, in)) d = in;
    }
    assign(p, i, d, device_of);
  }
  for (int t = 0; t < g->n; t++) {
    int i = g->topo[t];
    const tfd_gnode *n = &g->nodes[i];
    if (device_of[i] >= 0) continue;
    const int *devs;
    int count;
    if (devices_for(p, i, &devs, &count, st) != TFD_OK) return cannot_assign(p, i, st);
    int d = devs[0];
    /* Heuristic A: a generator whose consumers all sit on one device it can use goes there. */
    if (n->num_out_edges > 0) {
      int first = device_of[n->out_edges[0].dst];
      bool same = first >= 0;
      for (int e = 1; e < n->num_out_edges && same; e++) same = device_of[n->out_edges[e].dst] == first;
      if (same && contains(devs, count, first)) d = first;
    }
    assign(p, i, d, device_of);
  }
  report(p, device_of);
  return TFD_OK;
}

tfd_code tfd_place(const tfd_graph *g, const tfd_placer_options *o, int *device_of, tfd_status *st) {
  if (o->num_devices <= 0) return tfd_status_setf(st, TFD_FAILED_PRECONDITION, "No devices are registered");
  /* Kernels a backend has yet to register would read as missing (wrongly refusing its devices). */
  if (tfd_kernel_registry_ready(st) != TFD_OK) return tfd_status_code(st);
  size_t n = g->n ? (size_t)g->n : 1, nd = (size_t)o->num_devices;
  placer p = {.g = g, .o = o};
  p.m = calloc(n, sizeof *p.m);
  p.types = calloc(nd, sizeof *p.types);
  p.device_type = calloc(nd, sizeof *p.device_type);
  p.order = calloc(nd, sizeof *p.order);
  p.scratch = calloc(nd, sizeof *p.scratch);
  p.supported_store = calloc(n * nd, 1); /* at most one type per device */
  tfd_code code = p.m && p.types && p.device_type && p.order && p.scratch && p.supported_store ? place(&p, device_of, st)
                                                                                                : oom(st);
  if (p.m)
    for (int i = 0; i < g->n; i++) free(p.m[i].possible);
  free(p.m);
  free(p.types);
  free(p.device_type);
  free(p.order);
  free(p.scratch);
  free(p.supported_store);
  return code;
}
