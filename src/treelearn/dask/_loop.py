"""The client's level loop: one or several trees grown level by level from partition states.

The client keeps each tree's node table in Python (a tree has few levels; nodes are appended as
children appear) and submits per level, for every tree of the pass at once: the histogram
tasks of each partition, their tree reductions, the split tasks of each node group and the
partitions' moves (:mod:`treelearn.dask._grow`). It waits once per level, for the small split
records. A forest's trees share every task of a level, so a pass of many trees costs the
round trips of its deepest tree, not their sum.

Why this is a loop of its own and not the builder's (:mod:`treelearn.engine.builder`; the
engine-rooms issue asked for one growth loop): the builder's loops are compiled kernels that
call a layout's steps node by node inside one process, while a level here is a round of Dask
tasks in other processes, and the client must give control back to Dask and wait for their
results between levels, which compiled code cannot do. What the engine decides is the
engine's own: the depth rule (:func:`treelearn.engine.nodes.may_split`) and the split search
(the histogram layout's ``search_node_hist``, through :mod:`treelearn.engine.levelwise`).
What the client does itself per level (planning the node groups, building the graph,
recording the splits) is small: ``benchmarks/bench_dask.py`` (two-worker ``LocalCluster``,
2026-12-05) timed 0.13-0.18 s of Python in the loop's 1.6-2.4 s for a depth-10 tree on
2,000,000 x 28 in 8 or 16 partitions (11 levels: 12-16 ms a level, the rest waiting for the
workers), and 0.47-0.80 s of 5.2-6.1 s for a 10-tree forest on 500,000 x 28; a compiled
level loop could save no more than that.
"""

from __future__ import annotations

import numpy as np

from .._tree import Tree
from ..engine.build import KIND_NUMERIC, assemble
from ..engine.counter_random import node_seeds
from ..engine.levelwise import (
    L_COUNT,
    L_FEATURE,
    L_FOUND,
    L_IMPURITY,
    L_KIND,
    L_LO_BIN,
    L_MB,
    L_NB,
    L_NCONST,
    L_SEEN,
    L_THR,
    L_WEIGHT,
)
from ..engine.nodes import (
    G_NODES,
    N_BRANCH,
    N_CATLEN,
    N_CATOFF,
    N_FEATURE,
    N_GSTATE,
    N_ICOLS,
    N_KIND,
    N_MB,
    N_NB,
    N_NSAMP,
    N_PARENT,
    N_SEEN,
    T_IMPURITY,
    T_THRESHOLD,
    T_WEIGHT,
    TREE_UNDEFINED,
    may_split,
)
from ._grow import (
    _first,
    _part_hist,
    _part_split,
    _second,
    _split_level,
    _tree_sum,
    join_records,
    leaf_values,
)

#: Called as ``hook(level, client)`` before each level is submitted, and with level -1 while
#: the partitions are being read and binned (tests kill a worker there); None in use.
LEVEL_HOOK = None
#: A node to build sends its rows from the partitions instead of a histogram per partition
#: when its rows take at most this times the histograms' bytes (0: histograms always). Deep
#: in a fully grown tree a node has few rows and a mostly empty histogram, which every
#: partition would zero, fill and send, and every reduction add (forest of 20 trees, 2M x 28,
#: depth 10: SEE_BENCH).
ROWS_LIMIT = 1.0


def _lost_data(exc: BaseException) -> RuntimeError:
    """The error for data the cluster lost and cannot recompute."""
    return RuntimeError(
        "the Dask cluster lost data this fit needs and cannot recompute it (data scattered "
        "to the workers, or persisted, has no graph to rebuild it when a worker dies); load "
        "the data with Dask (from files or arrays) so it can be recomputed, and fit again. "
        f"Dask said: {exc}")


def _wait(future):
    """The future's result; data the cluster lost and cannot recompute (it has no lineage:
    scattered, or computed by a graph that is gone) is a clear error, not Dask's message
    about a cancelled internal key."""
    from distributed.client import CancelledError

    try:
        return future.result()
    except CancelledError as exc:
        raise _lost_data(exc) from exc


def _wait_all(client, futures):
    """:func:`_wait` for many futures at once (one wait)."""
    from distributed.client import CancelledError

    try:
        return client.gather(futures)
    except CancelledError as exc:
        raise _lost_data(exc) from exc


def _node_groups(families: list, sizes: list, budget: float) -> list:
    """The level's open nodes (their family keys in order: equal keys for children of one
    parent, None for a node without siblings to subtract; ``sizes``: the bytes each needs
    in the split task) as groups of positions of at most ``budget`` bytes, a family never
    apart (a sibling's histogram is subtracted within its group); a family larger than
    ``budget`` is a group of its own."""
    groups: list = []
    cur: list = []
    held = 0.0
    i = 0
    while i < len(families):
        j = i + 1
        if families[i] is not None:
            while j < len(families) and families[j] == families[i]:
                j += 1
        family = list(range(i, j))
        size = sum(sizes[k] for k in family)
        if cur and held + size > budget:
            groups.append(cur)
            cur, held = [], 0.0
        cur = cur + family
        held += size
        i = j
    if cur:
        groups.append(cur)
    return groups


class _Book:
    """One tree's nodes and its current level, as the client grows them."""

    def __init__(self, p: int, seed: int, n_rows: int):
        self.seed = seed  # the tree's seed: its feature draws are keyed on it and the node
        self.n_rows = n_rows
        self.parent, self.branch, self.depth = [-1], [0], [0]
        self.res_rows: list = [None]
        self.values: list = [None]
        self.fmap_rows: list = [None]
        self.nconst = {0: 0}
        self.perm = {0: np.arange(p)}  # the feature order each node's search starts from
        # the current level: node ids, whether open, its histogram plan (build id or -1, the
        # parent's index among the previous level's open nodes, the built siblings' ids)
        self.level, self.is_open = [0], [True]
        self.build, self.plan_parent, self.sibs = [0], [-1], [()]
        self.where: dict = {}  # the previous level's open nodes: index -> (group, index)

    def rows(self, q: int) -> int:
        """The rows of node ``level[q]`` (the root: all of the data's, ``n_rows``)."""
        v = self.values[self.level[q]]
        return v[2] if isinstance(v, tuple) else self.n_rows

    def open_positions(self) -> list:
        return [q for q in range(len(self.level)) if self.is_open[q]]

    def record(self, q: int, j: int, rec: tuple, crit: int, classification: bool,
               params: tuple, has_full: bool):
        """Node ``level[q]`` (the ``j``-th open one) searched: its result ``rec``; returns its
        split for the partitions (or None) and its children as
        ``(node, open, build, parent index, siblings)`` with provisional build ids.
        ``has_full``: the node has a full histogram to subtract a built child's from (else
        every open child is built). Subtraction stays the rule where it can be: building
        both small children from their rows (no histogram at all for either) sent more rows
        and was no faster (20-tree pass, 2M x 28: 19-20 s against 18 s)."""
        res, vals, fmap, cstats, cw, cn, after = rec
        node = self.level[q]
        self.res_rows[node] = res
        self.values[node] = vals
        self.nconst[node] = int(res[L_NCONST])
        if res[L_FOUND] == 0.0:
            return None, []
        k = int(res[L_NB])
        self.fmap_rows[node] = fmap.copy()
        split = (k, int(res[L_FEATURE]), int(res[L_KIND]), int(res[L_LO_BIN]), int(res[L_MB]))
        kids = []
        for b in range(k):
            kid = len(self.parent)
            self.parent.append(node)
            self.branch.append(b)
            self.depth.append(self.depth[node] + 1)
            self.res_rows.append(None)
            self.fmap_rows.append(None)
            self.nconst[kid] = int(res[L_NCONST])
            self.perm[kid] = after
            lv, limp = leaf_values(cstats[b], cw[b], crit, classification)
            self.values.append((lv, limp, int(round(cn[b])), float(cw[b])))
            kids.append((kid, int(round(cn[b]))))
        opens = [may_split(c, self.depth[node] + 1, params) and c > 0 for _, c in kids]
        builds, sibs = [-1] * k, [()] * k
        if k == 2 and all(opens) and has_full:
            # the smaller child is built, its sibling subtracted
            small = 0 if kids[0][1] <= kids[1][1] else 1
            builds[small] = 1
            sibs[1 - small] = (small,)
        else:
            builds = [1 if o else -1 for o in opens]
        return split, [(kid, opens[b], builds[b], j, sibs[b]) for b, (kid, _) in enumerate(kids)]

    def next_level(self, kids: list, where: dict) -> None:
        """Make ``kids`` (from :meth:`record`, in level order) the current level: build ids
        count from 0 in level order; sibling references become build ids."""
        self.level = [k[0] for k in kids]
        self.is_open = [k[1] for k in kids]
        self.plan_parent = [k[3] for k in kids]
        ids: dict = {}
        for i, k in enumerate(kids):
            if k[2] >= 0:
                ids[i] = len(ids)
        self.build = [ids.get(i, -1) for i in range(len(kids))]
        self.sibs, first = [], 0
        for i, k in enumerate(kids):
            if i == 0 or kids[i - 1][3] != k[3]:
                first = i  # a family's children are consecutive
            self.sibs.append(tuple(ids[first + s] for s in k[4]))
        self.where = where

    def tree(self, p: int, n_classes: int, n_values: int, n_levels) -> Tree:
        return _assemble(self.parent, self.branch, self.res_rows, self.values,
                         self.fmap_rows, p, n_classes, n_values, n_levels)


def partition_places(client, states) -> list:
    """The partitions' indices grouped by the worker holding their state (one wait: the
    states are made; used to sum each worker's histograms first, see
    :func:`treelearn.dask._grow._tree_sum`)."""
    from distributed import wait
    from distributed.client import CancelledError

    try:
        wait(states)
    except CancelledError as exc:
        raise _lost_data(exc) from exc
    where = client.who_has(states)
    groups: dict = {}
    for i, f in enumerate(states):
        held = where.get(f.key) or ("",)
        groups.setdefault(sorted(held)[0], []).append(i)
    return list(groups.values())


def grow_trees(client, states, books: list, cfg_all, n_cols: int, split_every: int, p: int,
               n_classes: int, n_levels, budget: int, row_bytes: int) -> list:
    """Grow the trees of ``books`` level by level (``states``: one future per partition, a
    tuple of one state per tree); returns their flat trees. A level's open nodes, every tree's
    together, are processed in groups whose histograms take at most ``budget`` bytes (one
    node at least); the client waits once per level, and once before the first for the
    states' places. ``row_bytes``: what a row of a small node costs to send."""
    lay, crit, params = cfg_all.lay, cfg_all.crit, cfg_all.params
    classification, n_values, width = cfg_all.classification, cfg_all.n_values, cfg_all.width
    node_bytes = int(lay.hoff[-1]) * n_cols * 8  # one node's histogram
    prev_fulls: list = []  # the previous level's full histograms, one future per group
    depth_now = 0
    if LEVEL_HOOK is not None:  # tests: level -1, the partitions being read and binned
        LEVEL_HOOK(-1, client)
    places = partition_places(client, states)
    # the most rows of a node built from its rows (see :data:`ROWS_LIMIT`)
    small_max = ROWS_LIMIT * len(states) * node_bytes / row_bytes
    while True:
        entries = [(t, q) for t, bk in enumerate(books) for q in bk.open_positions()]
        if not entries:
            break
        if LEVEL_HOOK is not None:  # tests: stop a worker at a chosen level
            LEVEL_HOOK(depth_now, client)
        depth_now += 1
        families = [(t, books[t].plan_parent[q]) if books[t].plan_parent[q] >= 0 else None
                    for t, q in entries]
        # a built node whose rows cost fewer bytes than a histogram from every partition
        # sends its rows (see :data:`ROWS_LIMIT`); it gets no full histogram unless a
        # sibling is subtracted from it. What a node takes in the split task follows.
        small = {(t, q) for t, q in entries
                 if books[t].build[q] >= 0 and books[t].rows(q) <= small_max}
        sources = {(t, sb) for t, q in entries for sb in books[t].sibs[q]}
        no_full = {(t, q) for t, q in small if (t, books[t].build[q]) not in sources}
        sizes = [books[t].rows(q) * row_bytes if (t, q) in no_full else node_bytes
                 for t, q in entries]
        groups = _node_groups(families, sizes, budget)
        outs, where = [], {}
        for g, group in enumerate(groups):
            ents = [entries[i] for i in group]
            built = [(t, q) for t, q in ents if books[t].build[q] >= 0]
            local = {(t, books[t].build[q]): i for i, (t, q) in enumerate(built)}
            spec: list = []  # (tree, positions, small) runs, in the order of ``built``
            for t, q in built:
                sm = (t, q) in small
                if spec and spec[-1][0] == t:
                    spec[-1][1].append(q)
                    spec[-1][2].append(sm)
                else:
                    spec.append((t, [q], [sm]))
            spec = [(t, np.array(qs, dtype=np.int64), np.array(sm, dtype=bool))
                    for t, qs, sm in spec]
            # built node b: its index among the histograms, or -1 - its index among the
            # small nodes (each numbered in the order of ``built``, as _part_hist makes them)
            kinds_arr = np.zeros(len(built), dtype=np.int64)
            n_big = n_small = 0
            for b, e in enumerate(built):
                if e in small:
                    kinds_arr[b] = -1 - n_small
                    n_small += 1
                else:
                    kinds_arr[b] = n_big
                    n_big += 1
            hist_futs = [client.submit(_part_hist, s, spec, n_cols, lay, pure=True)
                         for s in states] if built else []
            summed = _tree_sum(client, hist_futs, split_every, places) if hist_futs \
                else (None, None)
            # the parents' full histograms, of the nodes that subtract (built nodes need none)
            parent_at = {(t, q): books[t].where[books[t].plan_parent[q]]
                         for t, q in ents if books[t].build[q] < 0}
            pgroups = sorted({pg for pg, _ in parent_at.values()})
            slot = {pg: i for i, pg in enumerate(pgroups)}
            plan = [(local.get((t, books[t].build[q]), -1),
                     (slot[parent_at[(t, q)][0]], parent_at[(t, q)][1])
                     if (t, q) in parent_at else None,
                     tuple(local[(t, sb)] for sb in books[t].sibs[q])) for t, q in ents]
            depths = [books[t].depth[books[t].level[q]] for t, q in ents]
            nconsts = [books[t].nconst[books[t].level[q]] for t, q in ents]
            perms = np.stack([books[t].perm[books[t].level[q]] for t, q in ents])
            # the nodes' draw seeds, one vector call per tree (the group's nodes come tree
            # after tree)
            seeds = np.concatenate([
                node_seeds(books[t].seed, 0,
                           np.array([books[t].level[q] for t2, q in ents if t2 == t]))
                for t in dict.fromkeys(t for t, _ in ents)])
            outs.append(client.submit(_split_level, summed, kinds_arr, n_small, plan, depths,
                                      nconsts, perms, seeds, cfg_all, n_cols,
                                      *[prev_fulls[pg] for pg in pgroups], pure=True))
            i = 0
            for e in ents:  # the nodes' places in the group's full histograms
                if e not in no_full:
                    where[e] = (g, i)
                    i += 1
        # one wait per level: every group's split records at once
        parts_ = _wait_all(client, [client.submit(_first, o, pure=True) for o in outs])
        fulls = [client.submit(_second, o, pure=True) for o in outs]
        recs = join_records(parts_)
        e_index = {e: i for i, e in enumerate(entries)}
        splits: list = []
        fmaps: list = []
        any_next = False
        for t, bk in enumerate(books):
            opens = bk.open_positions()
            if not opens:
                splits.append(None)
                fmaps.append(None)
                continue
            sp = np.zeros((len(bk.level), 5), dtype=np.int64)
            cat_q, cat_rows = [], []
            kids: list = []
            t_where = {}
            for j, q in enumerate(opens):
                i = e_index[(t, q)]
                if (t, q) in where:
                    t_where[j] = where[(t, q)]
                split, k_kids = bk.record(q, j, tuple(r[i] for r in recs), crit,
                                          classification, params, (t, q) in where)
                if split is not None:
                    sp[q] = split
                    if split[2] != KIND_NUMERIC:
                        cat_q.append(q)
                        cat_rows.append(recs[2][i])
                kids += k_kids
            bk.next_level(kids, t_where)
            if any(k[1] for k in kids):  # rows move only for a level with open nodes
                any_next = True
                splits.append(sp)
                fmaps.append((np.array(cat_q, dtype=np.int64), np.stack(cat_rows))
                             if cat_q else None)
            else:
                splits.append(None)
                fmaps.append(None)
        if not any_next:
            break
        states = [client.submit(_part_split, s, splits, fmaps, lay, width, pure=True)
                  for s in states]
        prev_fulls = fulls
    return [bk.tree(p, n_classes, n_values, n_levels) for bk in books]


def _assemble(parent, branch, res_rows, values, fmap_rows, p, n_classes, n_values,
              n_levels) -> Tree:
    """The flat tree of a book's node table."""
    count = len(parent)
    ti = np.zeros((count, N_ICOLS), dtype=np.int64)
    tf = np.zeros((count, 4))
    tv = np.zeros((count, n_values))
    ti[:, N_PARENT] = parent
    ti[:, N_BRANCH] = branch
    ti[:, N_FEATURE] = TREE_UNDEFINED
    ti[:, N_MB] = TREE_UNDEFINED
    ti[:, N_CATOFF] = -1
    tf[:, T_THRESHOLD] = TREE_UNDEFINED
    kid_count = np.bincount(np.asarray(parent[1:], dtype=np.int64), minlength=count)
    cats: list = []
    n_cats = 0
    for node in range(count):
        r = res_rows[node]
        v = values[node]
        if r is None:  # a leaf made from its parent's split statistics
            tv[node] = v[0]
            tf[node, T_IMPURITY] = v[1]
            ti[node, N_NSAMP] = v[2]
            tf[node, T_WEIGHT] = v[3]
            continue
        tv[node] = v
        tf[node, T_IMPURITY] = r[L_IMPURITY]
        tf[node, T_WEIGHT] = r[L_WEIGHT]
        ti[node, N_NSAMP] = int(r[L_COUNT])
        if r[L_FOUND] and kid_count[node] > 0:
            ti[node, N_FEATURE] = int(r[L_FEATURE])
            ti[node, N_NB] = int(r[L_NB])
            ti[node, N_MB] = int(r[L_MB])
            ti[node, N_KIND] = int(r[L_KIND])
            ti[node, N_SEEN] = int(r[L_SEEN])
            tf[node, T_THRESHOLD] = r[L_THR]
            if r[L_KIND] != KIND_NUMERIC:  # the level -> branch map of a categorical split
                L = int(n_levels[int(r[L_FEATURE])])
                cats.append(fmap_rows[node][:L])
                ti[node, N_CATOFF] = n_cats
                ti[node, N_CATLEN] = L
                n_cats += L
    gs = np.zeros(N_GSTATE, dtype=np.int64)
    gs[G_NODES] = count
    store = np.concatenate(cats).astype(np.int64) if cats else np.zeros(0, dtype=np.int64)
    return assemble(ti, tf, tv, store, gs, p, n_classes)


__all__ = ["LEVEL_HOOK", "grow_trees", "_Book", "_node_groups", "_wait", "_wait_all"]
