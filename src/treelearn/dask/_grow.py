"""Growing one tree level by level as pure Dask tasks (see :mod:`treelearn.dask`).

Every task is a plain function of its inputs (no state on workers, no pinned workers, no
actors), submitted with a key derived from its inputs, so the scheduler can recompute any lost
result from its lineage. Per level:

* ``_part_hist`` per partition: histograms of the level's nodes to build, from the partition's
  rows (grouped by node; a forest's partition holds one copy per tree of the rows in its
  sample, so one task serves every tree of the pass); of a small node (deep in a fully grown
  tree, or a forest's) it sends the rows instead, which cost fewer bytes than one histogram
  per partition (the constant cost per node: zeroing, adding and sending mostly empty
  histograms);
* ``_sum`` in a tree of ``split_every`` inputs: the partitions' histograms added, small
  nodes' rows joined (the split task makes their histograms);
* ``_split_level`` once, on a worker: the full histograms of the open nodes (built, or the
  parent's minus its built siblings'), each node's values and best split; it returns the small
  split records (what the client reads: one round trip per level) and keeps the full
  histograms for the next level's subtraction (a future the client never gathers);
* ``_part_split`` per partition: its rows moved into the children's ranges, a new state made
  from the previous one and the level's splits.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..engine.build import KIND_NUMERIC, node_impurity, search_work
from ..engine.hist import RowBuffers
from ..engine.levelwise import (
    L_FEATURE,
    L_FOUND,
    L_KIND,
    L_NB,
    N_L,
    partition_histograms,
    partition_level,
    split_node,
    split_node_rows,
)


def _ranges(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The row indices of the ranges ``[lo[j], hi[j])`` one after the other."""
    lens = hi - lo
    total = int(lens.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.repeat(lo - np.concatenate([[0], np.cumsum(lens)[:-1]]), lens)
    return starts + np.arange(total)


def _take(a, idx):
    return None if a is None else a[idx]


def _part_hist(state, builds, n_cols, lay):
    """What one partition gives of the nodes to build: ``builds`` lists ``(tree, positions,
    small)`` (positions index the tree's node ranges of the level; ``small`` marks nodes
    whose rows cost fewer bytes than histograms). Returns ``(hists, rows)``: the histograms
    of the other nodes stacked in order (None: none), and the small nodes' rows as
    ``(node, bins, codes, targets, weights)`` with each row's index among the small nodes
    (None: none)."""
    hoff, nbins, fcol, fwide = lay
    hists, rows = [], []
    k = 0
    for t, pos, small in builds:
        B, C, R, W, lo, hi = state[t]
        big = pos[~small]
        if big.size:
            hists.append(partition_histograms(B, C, R, W, lo[big], hi[big], hoff, fcol,
                                              fwide, n_cols))
        few = pos[small]
        if few.size:
            idx = _ranges(lo[few], hi[few])
            node = np.repeat(np.arange(k, k + few.size, dtype=np.int32), hi[few] - lo[few])
            rows.append((node, B[idx], _take(C, idx), _take(R, idx), _take(W, idx)))
            k += few.size
    return (np.concatenate(hists) if hists else None,
            _join_rows(rows) if rows else None)


def _join_rows(rows: list):
    """Row packs of :func:`_part_hist` one after the other."""
    if len(rows) == 1:
        return rows[0]
    return tuple(None if parts[0] is None else np.concatenate(parts)
                 for parts in zip(*rows, strict=True))


def _sum(*parts):
    """Partitions' ``(hists, rows)`` added: histograms summed, rows joined."""
    hs = [h for h, _ in parts if h is not None]
    out = None
    if hs:
        out = hs[0].copy()
        for h in hs[1:]:
            out += h
    rows = [r for _, r in parts if r is not None]
    return out, (_join_rows(rows) if rows else None)


def small_rows(summed, n_small: int):
    """The rows the partitions sent of a group's small nodes, node after node (in partition
    order within a node), and each small node's range ``[lo, hi)`` of them."""
    node, B, C, R, W = summed[1]
    order = np.argsort(node, kind="stable")
    counts = np.bincount(node, minlength=n_small)
    hi = np.cumsum(counts)
    return (B[order], _take(C, order), _take(R, order), _take(W, order)), hi - counts, hi


def built_histograms(summed, kinds, need, rows, n_cols: int, lay) -> dict:
    """The histograms of a group's built nodes ``need``: ``kinds[b] >= 0`` is the index of
    node ``b``'s among the summed histograms, ``-1 - s`` the small node ``s``, whose
    histogram is made here from its rows (``rows``: :func:`small_rows`)."""
    hoff, nbins, fcol, fwide = lay
    out = {b: summed[0][kinds[b]] for b in need if kinds[b] >= 0}
    few = [b for b in need if kinds[b] < 0]
    if few:
        (B, C, R, W), lo, hi = rows
        s = np.array([-1 - kinds[b] for b in few], dtype=np.int64)
        hists = partition_histograms(B, C, R, W, lo[s], hi[s], hoff, fcol, fwide, n_cols)
        out.update(zip(few, hists, strict=True))
    return out


def _empty_bufs(classification: bool, weighted: bool):
    """The local grower's row buffers, empty (the search reads histograms only; these fix the
    compiled types)."""
    b = np.zeros((0, 8), dtype=np.uint8)
    c = np.zeros(0, dtype=np.int32) if classification else None
    r = None if classification else np.zeros(0)
    w = np.zeros(0) if weighted else None
    v = b.view(np.uint64)
    return RowBuffers(b, b, c, c, r, r, w, w, v, v)


#: What every task of the level loop reads (:func:`treelearn.dask._estimators.level_config`):
#: the table layout ``lay`` and bin ``edges``, the search's settings ``cfg``
#: (:data:`treelearn.engine.search.Config`), feature ``costs``, the criterion ``crit``, the
#: stopping rules ``params`` (:data:`treelearn.engine.nodes.Scalars`), the histogram's kind
#: (``classification``, ``weighted``) and the widths of the statistics, the values and a
#: split (``n_stats``, ``n_values``, ``width``).
LevelConfig = namedtuple("LevelConfig", ("lay", "edges", "cfg", "costs", "crit", "params",
                                         "classification", "weighted", "n_stats",
                                         "n_values", "width"))


def _split_level(summed, kinds, n_small, plan, depth, nconst, perms, seeds, cfg_all, n_cols,
                 *prev_full):
    """A group of a level's open nodes: full histograms, values and splits.

    ``summed``, ``kinds`` and ``n_small``: the built nodes' histograms and rows summed over
    the partitions (:func:`built_histograms`). A small built node that no sibling subtracts
    is searched from its rows (:func:`treelearn.engine.levelwise.split_node_rows`) and gets
    no full histogram: ``full`` holds the others', in order.

    ``plan[j] = (build_index, (group, index), sibling builds)``: node ``j``'s histogram was
    built (``build_index >= 0``) or is its parent's full histogram (``prev_full[group]
    [index]``: the parents' groups of the previous level) minus the built siblings listed.
    ``perms[j]`` is the feature order the node's search starts from: its parent's after
    the parent's search, whose first ``nconst[j]`` features are the ones known constant
    there (scikit-learn's bookkeeping, which the local grower keeps in one array because it
    goes depth first); ``seeds[j]`` the state of its feature draw (a function of the tree and
    node, so that grouping and partitioning do not change the draw). Returns
    ``(records, full)``: the records ``(res, values, fmaps, cstats, cw, cn, perms)`` and the
    full histograms."""
    lay, edges, cfg, costs = cfg_all.lay, cfg_all.edges, cfg_all.cfg, cfg_all.costs
    crit, params = cfg_all.crit, cfg_all.params
    classification, weighted = cfg_all.classification, cfg_all.weighted
    n_stats, n_values, width = cfg_all.n_stats, cfg_all.n_values, cfg_all.width
    m = len(plan)
    btot = int(lay.hoff[-1])
    sources = {sb for _, _, sibs in plan for sb in sibs}
    # a small built node that no sibling subtracts is searched from its rows, without a full
    # histogram; the others get one (built, or the parent's minus the built siblings')
    by_rows = [b >= 0 and kinds[b] < 0 and b not in sources for b, _, _ in plan]
    rows = small_rows(summed, n_small) if n_small else None
    built = built_histograms(summed, kinds, sorted({b for b, _, _ in plan if b >= 0} | sources),
                             rows, n_cols, lay)
    full = np.empty((m - sum(by_rows), btot, n_cols))
    at = np.cumsum([not r for r in by_rows]) - 1  # node j's index in ``full``
    for j, (b, parent, sibs) in enumerate(plan):
        if by_rows[j]:
            continue
        if b >= 0:
            full[at[j]] = built[b]
        else:
            full[at[j]] = prev_full[parent[0]][parent[1]]
            for sb in sibs:
                full[at[j]] -= built[sb]
    del built
    p = len(lay.nbins)
    work = search_work(0, p, n_stats, width, 1, False, hist=True)
    bufs = _empty_bufs(classification, weighted)
    if rows is not None:
        (Bs, Cs, Rs, Ws), lo, hi = rows
        Vs = Bs.view(np.uint64)
        row_bufs = RowBuffers(Bs, Bs, Cs, Cs, Rs, Rs, Ws, Ws, Vs, Vs)
        scratch = np.zeros((btot, n_cols))
    kmax = width
    res = np.zeros((m, N_L))
    values = np.zeros((m, n_values))
    fmaps = np.full((m, width), -1, dtype=np.int64)
    cstats = np.zeros((m, kmax, n_stats))
    cw = np.zeros((m, kmax))
    cn = np.zeros((m, kmax))
    perm = work.perm
    rng = work.rng
    out_perms = np.empty((m, p), dtype=perm.dtype)
    for j in range(m):
        perm[:] = perms[j]
        rng[0] = seeds[j]
        if by_rows[j]:
            sm = -1 - kinds[plan[j][0]]
            split_node_rows(row_bufs, lo[sm], hi[sm], scratch, np.int64(depth[j]),
                            np.int64(nconst[j]), lay, edges, cfg, costs, crit, params, work,
                            classification, weighted, res[j], fmaps[j],
                            values[j], cstats[j], cw[j], cn[j])
        else:
            split_node(full[at[j]], np.int64(depth[j]), np.int64(nconst[j]), lay, edges, cfg,
                       costs, crit, params, work, classification, weighted, bufs,
                       res[j], fmaps[j], values[j], cstats[j], cw[j], cn[j])
        out_perms[j] = perm
    # the records as small as they can be: branches up to the widest split of the group,
    # level maps only as wide as the widest categorical split's (none: no columns)
    found = res[:, L_FOUND] > 0
    k_used = max(2, int(res[found, L_NB].max())) if found.any() else 2
    cat = found & (res[:, L_KIND] != KIND_NUMERIC)
    f_used = int(lay.nbins[res[cat, L_FEATURE].astype(np.int64)].max()) if cat.any() else 0
    return (res, values, fmaps[:, :f_used], cstats[:, :k_used], cw[:, :k_used],
            cn[:, :k_used], out_perms.astype(np.int32)), full


def join_records(parts: list) -> list:
    """The groups' records of a level joined node after node (:func:`_split_level` trims
    each group's to its own widths: padded here, level maps with -1, statistics with 0)."""
    out = []
    for i in range(7):
        arrs = [r[i] for r in parts]
        if arrs[0].ndim >= 2:
            wide = max(a.shape[1] for a in arrs)
            fill = -1 if i == 2 else 0
            arrs = [a if a.shape[1] == wide else np.concatenate(
                [a, np.full((a.shape[0], wide - a.shape[1]) + a.shape[2:], fill,
                            dtype=a.dtype)], axis=1) for a in arrs]
        out.append(np.concatenate(arrs))
    return out


def _part_split(state, splits, cat_maps, lay, width):
    """One partition's rows moved into the children of the level's splits, tree by tree
    (``splits[t]`` None: tree ``t`` has no next level, its rows are let go).
    ``cat_maps[t]`` holds the level maps of tree ``t``'s categorical splits only, as
    ``(positions, maps)``: the task's arguments stay small when splits are numeric."""
    out = []
    for st, sp, cm in zip(state, splits, cat_maps, strict=True):
        if sp is None or st is None:
            out.append(None)
            continue
        fm = np.full((sp.shape[0], width), -1, dtype=np.int64)
        if cm is not None:
            fm[cm[0], :cm[1].shape[1]] = cm[1]
        B, C, R, W, lo, hi = st
        out.append(partition_level(B, C, R, W, B.view(np.uint64), lo, hi, sp, fm, lay))
    return tuple(out)


def _first(x):
    return x[0]


def _second(x):
    return x[1]


def _tree_sum(client, futures, split_every: int, places: list | None = None):
    """The sum of the futures' arrays by a tree of ``split_every`` inputs per task.

    ``places`` (optional) groups the futures' indices by the worker that held their
    partition when the fit began: each group is summed first, so its partial sum is made
    where its inputs lie (the scheduler runs a task where most of its input bytes are) and
    one histogram per worker crosses the network instead of one per partition. It is a
    hint, not a pin: a worker lost since only makes a group's sum fetch its inputs."""
    if places is None or len(places) < 2:
        level = list(futures)
    else:
        level = [_tree_sum(client, [futures[i] for i in g], split_every) for g in places if g]
    while len(level) > 1:
        level = [client.submit(_sum, *level[i:i + split_every], pure=True)
                 for i in range(0, len(level), split_every)]
    return level[0]


def leaf_values(cstats: np.ndarray, cw: float, crit: int, classification: bool):
    """A leaf's values and impurity from the statistics its parent's split gave it."""
    imp = node_impurity(cstats, cw, crit)
    if classification:
        return cstats / cw, imp
    return np.array([cstats[0] / cw]), imp


__all__ = ["_part_hist", "_sum", "small_rows", "built_histograms", "_split_level", "join_records",
           "_part_split", "_tree_sum", "_first", "_second", "leaf_values"]
