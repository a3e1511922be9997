/* DirectSession's cost model: per (device, node), how often it ran, its mean and largest time, its
 * output bytes and, per output, the largest size seen with its dtype and shape (TensorFlow's
 * MaxMemorySize/MaxMemoryShape and CostGraphDef output_info), gathered from traced runs (or every
 * run with build_cost_model) once a bundle is past build_cost_model_after runs; exported whole, or
 * as the cost graph of one run's metadata. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session_internal.h"

/* "device\x1fnode" (any length; the caller frees it), NULL when out of memory. */
static char *cost_key(const char *device, const char *node) { return tfd_format("%s\x1f%s", device, node); }

_Static_assert(TFD_COST_MAX_OUTPUTS == TFD_MAX_OP_OUTPUTS, "cost entries hold every output of an op");

static void entry_of(const cost_item *c, tfd_cost_entry *e) {
  *e = (tfd_cost_entry){c->device, c->node, c->op, c->runs, c->runs ? (double)c->total_micros / (double)c->runs : 0,
                        c->max_micros, c->output_bytes, c->num_outputs > 0 ? c->num_outputs : 0, {{0}}};
  for (int o = 0; o < e->num_outputs; o++) e->outputs[o] = c->outputs[o];
}

/* One step's outputs into the item: the largest size wins, with its dtype and shape. */
static void record_outputs(cost_item *c, const tfd_node_stats *ns) {
  if (c->num_outputs < 0) {
    c->num_outputs = ns->num_outputs;
    for (int o = 0; o < c->num_outputs; o++) c->outputs[o] = (tfd_output_info){-1, -1, ns->outputs[o].dtype, {-1, {0}}};
  }
  for (int o = 0; o < c->num_outputs && o < ns->num_outputs; o++) {
    const tfd_output_stats *os = &ns->outputs[o];
    tfd_output_info *oi = &c->outputs[o];
    oi->alias_input_slot = os->alias_input_slot;
    if (os->bytes < oi->size || os->shape.ndims < 0) continue;
    oi->size = os->bytes;
    oi->dtype = os->dtype;
    oi->shape = os->shape;
  }
}

/* Adds a run's timings to the session's cost model. */
void tfd_ds_record_costs(tfd_session *s, bundle *b, tfd_node_stats **stats) {
  pthread_mutex_lock(&s->cost_mu);
  for (int p = 0; p < b->num_parts; p++) {
    const tfd_graph *g = tfd_executor_graph(b->execs[p]);
    const char *dev = tfd_device_name(tfd_executor_device(b->execs[p]));
    for (int i = 0; i < g->n; i++) {
      if (!stats[p][i].ran) continue;
      char *key = cost_key(dev, tfd_gnode_name(&g->nodes[i]));
      if (!key) continue; /* out of memory: the model just misses this node */
      cost_item *c = tfd_strmap_get(&s->costs, key);
      if (!c) {
        c = calloc(1, sizeof *c);
        if (!c || !(c->device = strdup(dev)) || !(c->node = strdup(tfd_gnode_name(&g->nodes[i]))) ||
            !tfd_strmap_put(&s->costs, key, c)) {
          if (c) {
            free(c->device);
            free(c->node);
          }
          free(c);
          free(key);
          continue; /* out of memory: the model just misses this node */
        }
        c->op = g->nodes[i].op->name;
        c->num_outputs = -1;
      }
      free(key);
      for (const tfd_node_stats *ns = &stats[p][i]; ns; ns = ns->next) { /* every run (a loop's: one per iteration) */
        if (!ns->ran) continue;
        int64_t us = ns->all_end_rel_micros;
        c->runs++;
        c->total_micros += us;
        if (us > c->max_micros) c->max_micros = us;
        c->output_bytes = ns->output_bytes;
        record_outputs(c, ns);
      }
    }
  }
  pthread_mutex_unlock(&s->cost_mu);
}

static int cmp_entry(const void *a, const void *b) {
  const tfd_cost_entry *x = a, *y = b;
  int d = strcmp(x->device, y->device);
  return d ? d : strcmp(x->node, y->node);
}

int tfd_session_export_cost_models(tfd_session *s, tfd_cost_entry *out, int cap) {
  pthread_mutex_lock(&s->cost_mu);
  int n = (int)s->costs.size, i = 0;
  tfd_cost_entry *all = malloc(((size_t)n + 1) * sizeof *all);
  size_t it = 0;
  const char *k;
  void *v;
  while (all && tfd_strmap_next(&s->costs, &it, &k, &v)) entry_of(v, &all[i++]);
  pthread_mutex_unlock(&s->cost_mu);
  if (!all) return 0;
  qsort(all, (size_t)i, sizeof *all, cmp_entry);
  for (int j = 0; j < i && j < cap; j++) out[j] = all[j];
  free(all);
  return n;
}

/* The cost graph of a run: the model's entries for the nodes it ran. */
void tfd_ds_fill_cost_graph(tfd_session *s, tfd_run_metadata *m, bundle *b) {
  int total = 0;
  for (int p = 0; p < b->num_parts; p++) total += tfd_executor_graph(b->execs[p])->n;
  m->costs = calloc((size_t)total + 1, sizeof *m->costs);
  if (!m->costs) return;
  pthread_mutex_lock(&s->cost_mu);
  for (int p = 0; p < b->num_parts; p++) {
    const tfd_graph *g = tfd_executor_graph(b->execs[p]);
    const char *dev = tfd_device_name(tfd_executor_device(b->execs[p]));
    for (int i = 0; i < g->n; i++) {
      char *key = cost_key(dev, tfd_gnode_name(&g->nodes[i]));
      cost_item *c = key ? tfd_strmap_get(&s->costs, key) : NULL;
      free(key);
      if (c) entry_of(c, &m->costs[m->num_costs++]);
    }
  }
  pthread_mutex_unlock(&s->cost_mu);
  for (int i = 0; i < m->num_costs; i++) {
    m->costs[i].device = tfd_ds_keep_name(m, m->costs[i].device);
    m->costs[i].node = tfd_ds_keep_name(m, m->costs[i].node);
  }
}

/* Frees the session's cost model (tfd_session_free). */
void tfd_ds_costs_free(tfd_session *s) {
  size_t it = 0;
  const char *ck;
  void *cv;
  while (tfd_strmap_next(&s->costs, &it, &ck, &cv)) {
    cost_item *c = cv;
    free(c->device);
    free(c->node);
    free(c);
  }
  tfd_strmap_free(&s->costs);
}
