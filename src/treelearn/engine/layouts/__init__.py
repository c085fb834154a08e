"""The data layouts: one module per way of holding a tree's rows, each with its preparation
(from Python), its node steps and the kernels it compiles late.

==============  ========================================  =====================================
module          the rows as                               grows
==============  ========================================  =====================================
``presorted``   each feature's values sorted once, with   ``splitter="best"``/``"random"``: a
                the row ids; partitioned stably per node  feature of a small node in O(rows)
``bins``        a bin matrix (a byte per cell) and        ``splitter="hist"``: O(bins) per
                histograms, one child by subtraction      feature whatever the rows
``ranked``      ranks of the values shared by a forest's  forests whose nodes draw few
                trees; each node sorts what it draws      features (:func:`ranked.ranked_applies`)
``sparse``      the CSR entries of the node's rows        sparse input, the criterion alone
``samples``     (what ``ranked`` and ``sparse``, the
                layouts over a list of row ids, share)
==============  ========================================  =====================================

Each layout module defines its layout class with :func:`treelearn.engine.builder.layout` from
its node steps (the builder's :data:`~treelearn.engine.builder.STEPS`, checked when the
class is made, at import) and a ``grow_*`` function that prepares the rows and calls the one
driver, :func:`treelearn.engine.fit.drive`. Which layout grows a tree is decided in one
place, :func:`treelearn.engine.build.grow`. A node's search is the one of
:mod:`treelearn.engine.search` (the feature draw, a search per drawn feature, the winner),
compiled per layout with the layout's step for one feature (``presorted``, ``bins``,
``sparse``); ``ranked`` keeps a loop of its own, which sorts each drawn feature's rows
before searching it (see its module notes). The column kernels the layouts share stay in the
engine (:mod:`~treelearn.engine.exact` the scans and partitions of sorted lists,
:mod:`~treelearn.engine.hist` histograms and row moves, :mod:`~treelearn.engine.levels`
category and missing-value searches).
"""
