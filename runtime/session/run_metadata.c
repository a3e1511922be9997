/* Run metadata (TensorFlow's RunMetadata): a traced run's step stats per device, its partition
 * graphs and its cost graph, owned by the caller's tfd_run_metadata. */
#include <stdlib.h>
#include <string.h>

#include "../core/tracking_allocator.h"
#include "session_internal.h"

tfd_run_metadata *tfd_run_metadata_new(void) { return calloc(1, sizeof(tfd_run_metadata)); }

static void metadata_clear(tfd_run_metadata *m) {
  for (int d = 0; d < m->num_devices; d++) {
    free(m->devices[d]);
    free(m->nodes[d]);
  }
  free(m->devices);
  free(m->num_nodes);
  free(m->nodes);
  for (int i = 0; i < m->num_names; i++) free(m->names[i]);
  free(m->names);
  for (int i = 0; i < m->num_parts; i++) tfd_graph_def_free(m->parts[i]);
  free(m->parts);
  free(m->costs);
  for (int i = 0; i < m->num_records; i++) free(m->records[i]);
  free(m->records);
  memset(m, 0, sizeof *m);
}

void tfd_run_metadata_free(tfd_run_metadata *m) {
  if (!m) return;
  metadata_clear(m);
  free(m);
}

int64_t tfd_run_metadata_step_id(const tfd_run_metadata *m) { return m->step_id; }
int tfd_run_metadata_num_devices(const tfd_run_metadata *m) { return m->num_devices; }
const char *tfd_run_metadata_device(const tfd_run_metadata *m, int d) { return m->devices[d]; }
int tfd_run_metadata_num_nodes(const tfd_run_metadata *m, int d) { return m->num_nodes[d]; }
void tfd_run_metadata_node(const tfd_run_metadata *m, int d, int i, tfd_node_exec_stats *out) { *out = m->nodes[d][i]; }
int tfd_run_metadata_num_partition_graphs(const tfd_run_metadata *m) { return m->num_parts; }
int tfd_run_metadata_num_cost_nodes(const tfd_run_metadata *m) { return m->num_costs; }
void tfd_run_metadata_cost_node(const tfd_run_metadata *m, int i, tfd_cost_entry *out) { *out = m->costs[i]; }
const tfd_graph_def *tfd_run_metadata_partition_graph(const tfd_run_metadata *m, int i) { return m->parts[i]; }

const char *tfd_ds_keep_name(tfd_run_metadata *m, const char *s) {
  char **names = realloc(m->names, ((size_t)m->num_names + 1) * sizeof *names);
  if (!names) return "";
  m->names = names;
  char *copy = strdup(s);
  if (!copy) return "";
  m->names[m->num_names++] = copy;
  return copy;
}

/* The tracker's allocation records so far (TensorFlow reads them when the step ends, so frees after
 * the node are in them), copied into the metadata. Out of memory: the node just has none. */
static void keep_records(tfd_run_metadata *m, tfd_node_exec_stats *ns, tfd_allocator *tracker) {
  int n = 0;
  tfd_alloc_record *raw = tfd_tracking_allocator_records(tracker, &n);
  tfd_allocation_record *out = n ? malloc((size_t)n * sizeof *out) : NULL;
  tfd_allocation_record **list = out ? realloc(m->records, ((size_t)m->num_records + 1) * sizeof *list) : NULL;
  if (list) {
    m->records = list;
    m->records[m->num_records++] = out;
    for (int i = 0; i < n; i++) out[i] = (tfd_allocation_record){raw[i].micros, raw[i].bytes};
    ns->allocation_records = out;
    ns->num_allocation_records = n;
  } else {
    free(out);
  }
  free(raw);
}

void tfd_ds_fill_metadata(tfd_run_metadata *m, bundle *b, tfd_node_stats **stats, bool partition_graphs) {
  metadata_clear(m);
  if (stats) {
    m->devices = calloc((size_t)b->num_parts, sizeof *m->devices);
    m->num_nodes = calloc((size_t)b->num_parts, sizeof *m->num_nodes);
    m->nodes = calloc((size_t)b->num_parts, sizeof *m->nodes);
    if (!m->devices || !m->num_nodes || !m->nodes) return;
    m->num_devices = b->num_parts;
    for (int p = 0; p < b->num_parts; p++) {
      const tfd_graph *g = tfd_executor_graph(b->execs[p]);
      m->devices[p] = strdup(tfd_device_name(tfd_executor_device(b->execs[p])));
      size_t runs = 1; /* a node in a loop has one entry per iteration it ran in, as TensorFlow's stats do */
      for (int i = 0; i < g->n; i++)
        for (const tfd_node_stats *x = &stats[p][i]; x; x = x->next) runs += x->ran;
      m->nodes[p] = calloc(runs, sizeof **m->nodes);
      if (!m->nodes[p]) continue;
      for (int i = 0; i < g->n; i++) {
        const char *name = NULL;
        for (const tfd_node_stats *x = &stats[p][i]; x; x = x->next) {
          if (!x->ran) continue;
          tfd_node_exec_stats *ns = &m->nodes[p][m->num_nodes[p]++];
          ns->node_name = name ? name : (name = tfd_ds_keep_name(m, tfd_gnode_name(&g->nodes[i])));
          ns->op = g->nodes[i].op->name; /* static */
          ns->all_start_micros = x->all_start_micros;
          ns->all_end_rel_micros = x->all_end_rel_micros;
          ns->output_bytes = x->output_bytes;
          ns->allocator_bytes_in_use = x->allocator_bytes_in_use;
          ns->allocator_name = m->devices[p];
          ns->thread_id = x->thread_id;
          ns->total_bytes = x->total_bytes;
          ns->peak_bytes = x->peak_bytes;
          ns->live_bytes = x->live_bytes;
          if (x->tracker) keep_records(m, ns, x->tracker);
        }
      }
    }
  }
  if (partition_graphs && (m->parts = calloc((size_t)b->num_parts, sizeof *m->parts))) {
    for (int p = 0; p < b->num_parts; p++)
      if ((m->parts[m->num_parts] = tfd_graph_def_copy(b->part_defs[p]))) m->num_parts++;
  }
}
