/* Placement: colocation groups, requested specs, kernel availability and type priority. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/log.h"
#include "../core/status_internal.h"
#include "../kernels/kernel.h"
#include "placer.h"

static int find_root(int *parent, int i) {
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
}

static void unite(int *parent, int a, int b) {
  a = find_root(parent, a);
  b = find_root(parent, b);
  if (a != b) parent[b] = a;
}

/* Groups as linked lists of members: first[root] then next[node], -1 ending. */
typedef struct groups {
  int *first, *next;
} groups;

/* Whether device d can run every node of group root. */
static bool group_supported(const tfd_graph *g, const groups *gr, int root, tfd_device *d) {
  for (int i = gr->first[root]; i >= 0; i = gr->next[i])
    if (!tfd_kernel_supported(g->nodes[i].op->name, tfd_device_type(d))) return false;
  return true;
}

/* The best device matching spec that supports the group: highest type priority, then session order. */
static int choose(const tfd_graph *g, const groups *gr, int root, const tfd_parsed_name *spec,
                  const tfd_placer_options *o) {
  int best = -1, best_prio = 0;
  for (int d = 0; d < o->num_devices; d++) {
    tfd_device *dev = o->devices[d];
    if (!tfd_device_name_is_specification(spec, tfd_device_parsed_name(dev))) continue;
    if (!group_supported(g, gr, root, dev)) continue;
    int prio = tfd_factory_registry_priority(o->registry, tfd_device_type(dev));
    if (best < 0 || prio > best_prio ||
        (prio == best_prio && strcmp(tfd_device_type(dev), tfd_device_type(o->devices[best])) < 0)) {
      best = d;
      best_prio = prio;
    }
  }
  return best;
}

static void list_devices(const tfd_placer_options *o, char *buf, size_t cap) {
  size_t n = 0;
  buf[0] = 0;
  for (int d = 0; d < o->num_devices && n < cap; d++)
    n += (size_t)snprintf(buf + n, cap - n, "%s%s", d ? ", " : "", tfd_device_name(o->devices[d]));
}

tfd_code tfd_place(const tfd_graph *g, const tfd_placer_options *o, int *device_of, tfd_status *st) {
  int *parent = malloc((g->n ? (size_t)g->n : 1) * sizeof *parent);
  tfd_parsed_name *spec = calloc(g->n ? (size_t)g->n : 1, sizeof *spec);
  int *fixed = malloc((g->n ? (size_t)g->n : 1) * sizeof *fixed);
  int *spec_from = malloc((g->n ? (size_t)g->n : 1) * sizeof *spec_from);
  groups gr = {malloc((g->n ? (size_t)g->n : 1) * sizeof(int)), malloc((g->n ? (size_t)g->n : 1) * sizeof(int))};
  tfd_code code = TFD_OK;
  if (!parent || !spec || !fixed || !spec_from || !gr.first || !gr.next) {
    code = tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory placing the graph");
    goto done;
  }
  for (int i = 0; i < g->n; i++) {
    parent[i] = i;
    fixed[i] = -1;
    spec_from[i] = -1;
  }
  /* Resource users and fetches live with the node whose output they use. */
  for (int i = 0; i < g->n; i++) {
    const tfd_gnode *n = &g->nodes[i];
    for (int k = 0; k < n->num_inputs; k++)
      if (n->in_types[k] == TFD_RESOURCE) unite(parent, n->inputs[k].node, i);
    if (strcmp(n->op->name, "_Fetch") == 0) unite(parent, n->inputs[0].node, i);
  }
  for (int i = 0; i < g->n; i++) gr.first[i] = -1;
  for (int i = g->n - 1; i >= 0; i--) {
    int r = find_root(parent, i);
    gr.next[i] = gr.first[r];
    gr.first[r] = i;
  }
  /* Merge each group's requests; a device fixed by an earlier run wins. */
  for (int i = 0; i < g->n; i++) {
    const tfd_gnode *n = &g->nodes[i];
    int r = find_root(parent, i);
    intptr_t f = o->fixed ? (intptr_t)tfd_strmap_get(o->fixed, tfd_gnode_name(n)) : 0;
    if (f > 0) {
      if (fixed[r] >= 0 && fixed[r] != (int)f - 1) {
        code = tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' must stay on %s but its group is on %s",
                               tfd_gnode_name(n), tfd_device_name(o->devices[f - 1]),
                               tfd_device_name(o->devices[fixed[r]]));
        goto done;
      }
      fixed[r] = (int)f - 1;
    }
    if (!n->has_requested) continue;
    tfd_status tmp = TFD_STATUS_INIT;
    if (tfd_device_name_merge(&spec[r], &n->requested, o->allow_soft_placement, &tmp) != TFD_OK) {
      code = tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Cannot colocate node '%s' with node '%s': %s",
                             tfd_gnode_name(n), tfd_gnode_name(&g->nodes[spec_from[r] >= 0 ? spec_from[r] : r]),
                             tfd_status_message(&tmp));
      tfd_status_clear(&tmp);
      goto done;
    }
    spec_from[r] = i;
  }
  for (int i = 0; i < g->n; i++) {
    int r = find_root(parent, i);
    if (i != r) continue;
    int d = fixed[r];
    if (d < 0) d = choose(g, &gr, r, &spec[r], o);
    if (d < 0 && o->allow_soft_placement) {
      /* Keep the job/replica/task part of the request, drop the type and id; then drop everything. */
      tfd_parsed_name relaxed = spec[r];
      relaxed.has_type = relaxed.has_id = false;
      d = choose(g, &gr, r, &relaxed, o);
      if (d < 0) {
        memset(&relaxed, 0, sizeof relaxed);
        d = choose(g, &gr, r, &relaxed, o);
      }
      /* Every node that asked for what it did not get says so, once per placement. */
      char want[TFD_DEVICE_NAME_MAX];
      tfd_device_name_canonical(&spec[r], want);
      for (int m = gr.first[r]; d >= 0 && m >= 0 && tfd_log_enabled(TFD_LOG_INFO); m = gr.next[m])
        if (g->nodes[m].has_requested)
          tfd_log(TFD_LOG_INFO, "soft placement: node '%s' (%s) asked for '%s', which cannot run it here; it runs on %s",
                  tfd_gnode_name(&g->nodes[m]), g->nodes[m].op->name, want, tfd_device_name(o->devices[d]));
    }
    if (d < 0) {
      const tfd_gnode *who = &g->nodes[spec_from[r] >= 0 ? spec_from[r] : r];
      char want[TFD_DEVICE_NAME_MAX], avail[1024];
      tfd_device_name_canonical(&spec[r], want);
      list_devices(o, avail, sizeof avail);
      bool any_match = false;
      for (int k = 0; k < o->num_devices && !any_match; k++)
        any_match = tfd_device_name_is_specification(&spec[r], tfd_device_parsed_name(o->devices[k]));
      if (!want[0])
        code = tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                               "Cannot assign a device for operation '%s' (%s): no device has a kernel for every op "
                               "colocated with it; available devices: %s",
                               tfd_gnode_name(who), who->op->name, avail);
      else if (!any_match)
        code = tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                               "Cannot assign a device for operation '%s': Could not satisfy explicit device "
                               "specification '%s' because no devices matching that specification are registered in "
                               "this process; available devices: %s",
                               tfd_gnode_name(who), want, avail);
      else
        code = tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                               "Cannot assign a device for operation '%s' (%s): Could not satisfy explicit device "
                               "specification '%s' because no device matching it has a kernel for every op "
                               "colocated with it; available devices: %s",
                               tfd_gnode_name(who), who->op->name, want, avail);
      goto done;
    }
    fixed[r] = d;
  }
  for (int i = 0; i < g->n; i++) {
    device_of[i] = fixed[find_root(parent, i)];
    if (o->log_device_placement && g->nodes[i].op->name[0] != '_')
      fprintf(stderr, "%s: (%s): %s\n", tfd_gnode_name(&g->nodes[i]), g->nodes[i].op->name,
              tfd_device_name(o->devices[device_of[i]]));
  }
done:
  free(gr.first);
  free(gr.next);
  free(parent);
  free(spec);
  free(fixed);
  free(spec_from);
  return code;
}
