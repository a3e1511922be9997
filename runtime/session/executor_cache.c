/* DirectSession's executor cache (GetOrCreateExecutors): a run's signature (feeds, fetches,
 * targets) picks a bundle of executors, first by the names in the order given (fast path), then by
 * the sorted names, and only then is a new one built: rewrite for feeds and fetches, prune, place,
 * partition, optimise, and compile one executor per partition. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../core/log.h"
#include "../framework/graph_def_internal.h"
#include "../graph/control_flow.h"
#include "../graph/placer.h"
#include "../graph/subgraph.h"
#include "../optimize/graph_optimizer.h"
#include "session_internal.h"

void tfd_ds_bundle_free(bundle *b) {
  if (!b) return;
  /* A bundle whose build ran out of memory may lack any of its arrays. */
  for (int p = 0; p < b->num_parts; p++) {
    if (b->execs) tfd_executor_free(b->execs[p]);
    if (b->part_defs) tfd_graph_def_free(b->part_defs[p]);
  }
  free(b->execs);
  free(b->part_defs);
  for (int k = 0; b->feed_names && k < b->num_feeds; k++) free(b->feed_names[k]);
  for (int k = 0; b->fetch_names && k < b->num_fetches; k++) free(b->fetch_names[k]);
  free(b->feed_names);
  free(b->fetch_names);
  free(b->feed_types);
  free(b->feed_shapes);
  tfd_strmap_free(&b->feed_index);
  tfd_strmap_free(&b->fetch_index);
  tfd_graph_free(b->client);
  free(b);
}

/* Canonical tensor names ("x" -> "x:0") so "x" and "x:0" share a signature. */
char **tfd_ds_canonical_names(const char *const *names, int n, bool tensors, tfd_status *st) {
  char **out = calloc((size_t)n + 1, sizeof *out);
  for (int i = 0; out && i < n; i++) {
    int index = 0;
    if (!names[i]) {
      tfd_status_setf(st, TFD_INVALID_ARGUMENT, "name %d of %d is NULL", i, n);
      goto fail;
    }
    if (tensors) {
      char *node = tfd_parse_tensor_name(names[i], &index, st);
      if (!node) goto fail;
      out[i] = tfd_format("%s:%d", node, index);
      free(node);
    } else {
      out[i] = strdup(names[i][0] == '^' ? names[i] + 1 : names[i]);
    }
    if (!out[i]) goto oom;
  }
  if (!out) goto oom;
  return out;
oom:
  tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
fail:
  for (int i = 0; out && i < n; i++) free(out[i]);
  free(out);
  return NULL;
}

void tfd_ds_free_names(char **names, int n) {
  for (int i = 0; names && i < n; i++) free(names[i]);
  free(names);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* "a:0,b:0->c:0//t" with each list sorted or not. Caller frees. */
static char *signature(char **feeds, int nf, char **fetches, int nfe, char **targets, int nt, bool sorted,
                       bool partial) {
  char **lists[3] = {feeds, fetches, targets};
  int counts[3] = {nf, nfe, nt};
  size_t len = 32;
  for (int l = 0; l < 3; l++)
    for (int i = 0; i < counts[l]; i++) len += strlen(lists[l][i]) + 1;
  char *key = malloc(len);
  if (!key) return NULL;
  strcpy(key, partial ? "partial:" : ""); /* partial runs need their own executors */
  for (int l = 0; l < 3; l++) {
    char **names = lists[l];
    char **copy = NULL;
    if (sorted && counts[l] > 1 && (copy = malloc((size_t)counts[l] * sizeof *copy))) {
      memcpy(copy, names, (size_t)counts[l] * sizeof *copy);
      qsort(copy, (size_t)counts[l], sizeof *copy, cmp_str);
      names = copy;
    }
    for (int i = 0; i < counts[l]; i++) {
      strcat(key, names[i]);
      strcat(key, ",");
    }
    free(copy);
    strcat(key, l == 0 ? "->" : l == 1 ? "//" : "");
  }
  return key;
}

static bundle *build_bundle(tfd_session *s, char **feeds, int nf, char **fetches, int nfe, char **targets, int nt,
                            bool partial, char **conn_from, char **conn_to, int nconn, tfd_status *st) {
  bundle *b = calloc(1, sizeof *b);
  if (!b) {
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
    return NULL;
  }
  b->num_feeds = nf;
  b->num_fetches = nfe;
  b->feed_names = calloc((size_t)nf + 1, sizeof(char *));
  b->fetch_names = calloc((size_t)nfe + 1, sizeof(char *));
  b->feed_types = calloc((size_t)nf + 1, sizeof(tfd_dtype));
  b->feed_shapes = calloc((size_t)nf + 1, sizeof(tfd_shape));
  b->execs = calloc((size_t)s->num_devices, sizeof(tfd_executor *));
  b->part_defs = calloc((size_t)s->num_devices, sizeof(tfd_graph_def *));
  int *device_of = NULL;
  tfd_graph *pg = NULL;
  tfd_graph_def *sub = NULL;
  if (!b->feed_names || !b->fetch_names || !b->feed_types || !b->feed_shapes || !b->execs || !b->part_defs) goto oom;
  for (int k = 0; k < nf; k++) {
    if (!(b->feed_names[k] = strdup(feeds[k])) || !tfd_strmap_put(&b->feed_index, feeds[k], (void *)(intptr_t)(k + 1)))
      goto oom;
  }
  for (int k = 0; k < nfe; k++) {
    if (!(b->fetch_names[k] = strdup(fetches[k]))) goto oom;
    if (!tfd_strmap_get(&b->fetch_index, fetches[k]) &&
        !tfd_strmap_put(&b->fetch_index, fetches[k], (void *)(intptr_t)(k + 1)))
      goto oom;
  }
  pthread_mutex_lock(&s->graph_mu);
  if (!s->graph) {
    pthread_mutex_unlock(&s->graph_mu);
    tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Session was not created with a graph before Run()!");
    goto fail;
  }
  if (s->finalized) { /* GetOrCreateExecutors after the cache missed */
    pthread_mutex_unlock(&s->graph_mu);
    tfd_status_setf(st, TFD_FAILED_PRECONDITION, "Session has been finalized.");
    goto fail;
  }
  sub = tfd_subgraph_for_run_connected(s->graph, (const char *const *)feeds, nf, (const char *const *)fetches, nfe,
                                       (const char *const *)targets, nt, (const char *const *)conn_from,
                                       (const char *const *)conn_to, nconn, b->feed_types, b->feed_shapes, st);
  if (sub && partial && tfd_subgraph_for_partial_run(sub, feeds, fetches, b->feed_types, st) != TFD_OK) {
    tfd_graph_def_free(sub);
    sub = NULL;
  }
  pg = sub ? tfd_graph_build(sub, st) : NULL;
  device_of = pg ? malloc(((size_t)pg->n + 1) * sizeof *device_of) : NULL;
  tfd_code code = pg && device_of ? TFD_OK : TFD_RESOURCE_EXHAUSTED;
  if (pg && !device_of) tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  if (code == TFD_OK) {
    tfd_placer_options po = {s->devices,
                             s->num_devices,
                             s->registry,
                             tfd_session_options_allow_soft_placement(s->options),
                             tfd_session_options_log_device_placement(s->options),
                             /* the whole graph's placement unless place_pruned_graph */
                             tfd_session_options_place_pruned_graph(s->options) ? &s->stateful : &s->whole,
                             true /* pruned: Create checked the whole graph's colocations */};
    const tfd_host_logger *outer = tfd_log_use(s->logger); /* placement's lines go to the runtime's */
    code = tfd_place(pg, &po, device_of, st);
    tfd_log_use(outer);
  }
  if (code == TFD_OK) {
    /* A stateful node's device must be remembered (its state lives there); the placements are
     * what session:placement() reports. */
    for (int i = 0; i < pg->n && code == TFD_OK; i++) {
      const tfd_gnode *n = &pg->nodes[i];
      void *dev = (void *)(intptr_t)(device_of[i] + 1);
      if (!tfd_strmap_put(&s->placements, tfd_gnode_name(n), dev) ||
          (n->op->stateful && !tfd_strmap_get(&s->stateful, tfd_gnode_name(n)) &&
           !tfd_strmap_put(&s->stateful, tfd_gnode_name(n), dev)))
        code = tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory recording placements");
    }
  }
  pthread_mutex_unlock(&s->graph_mu);
  if (code != TFD_OK) goto fail;
  tfd_graph_def **parts = b->part_defs;
  if (tfd_partition(pg, device_of, s->devices, s->num_devices, parts, st) != TFD_OK) goto fail;
  /* With control flow anywhere, every partition runs frame-aware: a _Recv may bring a dead tensor. */
  b->control_flow = tfd_graph_has_control_flow(pg);
  for (int i = 0; i < pg->n && !b->step_resources; i++)
    b->step_resources = strcmp(pg->nodes[i].op->name, "TensorArrayV3") == 0;
  /* Compact the non-empty partitions to the front, one executor each. */
  for (int d = 0; d < s->num_devices; d++) {
    if (!parts[d]) continue;
    if (tfd_session_options_optimize_graph(s->options) && tfd_optimize_partition(&parts[d], s->devices[d], st) != TFD_OK) {
      tfd_status_prefixf(st, "optimizing the partition for %s: ", tfd_device_name(s->devices[d]));
      goto fail;
    }
    tfd_graph *part = tfd_graph_build(parts[d], st);
    if (!part) {
      tfd_status_prefixf(st, "partition for %s: ", tfd_device_name(s->devices[d]));
      goto fail;
    }
    tfd_executor *e = tfd_executor_new_with(part, s->devices[d], s->handle, b->control_flow, st);
    if (!e) goto fail;
    /* A partial run keeps its step open across calls, which a replayed graph cannot. */
    if (!partial && tfd_session_options_gpu_graphs(s->options)) tfd_executor_use_step_graphs(e);
    b->part_defs[b->num_parts] = parts[d];
    if (b->num_parts != d) parts[d] = NULL;
    b->execs[b->num_parts++] = e;
  }
  for (int d = b->num_parts; d < s->num_devices; d++) parts[d] = NULL;
  if (partial) {
    b->client = pg; /* CheckFetch walks it */
    pg = NULL;
  }
  tfd_graph_free(pg);
  tfd_graph_def_free(sub);
  free(device_of);
  return b;
oom:
  tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory building executors");
fail:
  /* Partition defs beyond num_parts were not handed to an executor yet. */
  for (int d = b->num_parts; d < s->num_devices && b->part_defs; d++) {
    tfd_graph_def_free(b->part_defs[d]);
    b->part_defs[d] = NULL;
  }
  tfd_graph_free(pg);
  tfd_graph_def_free(sub);
  free(device_of);
  tfd_ds_bundle_free(b);
  return NULL;
}

/* A signature with the callable's tensor connections after it, in the order given ("|from>to"); takes
 * key (NULL stays NULL, as out of memory). */
static char *with_connections(char *key, char **conn_from, char **conn_to, int nconn) {
  for (int k = 0; key && k < nconn; k++) {
    char *longer = tfd_format("%s|%s>%s", key, conn_from[k], conn_to[k]);
    free(key);
    key = longer;
  }
  return key;
}

/* GetOrCreateExecutors: fast key, then sorted key, then build (and remember under both). */
bundle *tfd_ds_get_bundle_connected(tfd_session *s, char **feeds, int nf, char **fetches, int nfe, char **targets,
                                    int nt, bool partial, char **conn_from, char **conn_to, int nconn, tfd_status *st) {
  char *fast = with_connections(signature(feeds, nf, fetches, nfe, targets, nt, false, partial), conn_from, conn_to, nconn);
  char *sorted = with_connections(signature(feeds, nf, fetches, nfe, targets, nt, true, partial), conn_from, conn_to, nconn);
  bundle *b = NULL;
  if (!fast || !sorted) {
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
    goto done;
  }
  pthread_mutex_lock(&s->exec_mu);
  b = tfd_strmap_get(&s->cache, fast);
  if (!b && (b = tfd_strmap_get(&s->cache, sorted))) tfd_strmap_put(&s->cache, fast, b);
  pthread_mutex_unlock(&s->exec_mu);
  if (b) goto done;
  /* Build outside the cache lock: other signatures keep running meanwhile. */
  bundle *made = build_bundle(s, feeds, nf, fetches, nfe, targets, nt, partial, conn_from, conn_to, nconn, st);
  if (!made) goto done;
  pthread_mutex_lock(&s->exec_mu);
  b = tfd_strmap_get(&s->cache, sorted);
  bundle **grown = b ? NULL : realloc(s->bundles, ((size_t)s->num_bundles + 1) * sizeof *grown);
  if (b) {
    tfd_ds_bundle_free(made); /* another thread built it first */
  } else if (!grown) {
    tfd_ds_bundle_free(made);
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  } else {
    s->bundles = grown;
    s->bundles[s->num_bundles++] = made;
    tfd_strmap_put(&s->cache, sorted, made); /* a key the cache cannot keep costs a rebuild, no more */
    b = made;
  }
  if (b) tfd_strmap_put(&s->cache, fast, b);
  pthread_mutex_unlock(&s->exec_mu);
done:
  free(fast);
  free(sorted);
  return b;
}

bundle *tfd_ds_get_bundle(tfd_session *s, char **feeds, int nf, char **fetches, int nfe, char **targets, int nt,
                          bool partial, tfd_status *st) {
  return tfd_ds_get_bundle_connected(s, feeds, nf, fetches, nfe, targets, nt, partial, NULL, NULL, 0, st);
}
