"""The class tree: indexing (leaves first), ancestor/leaf-path matrices, depths, information content.

Notation of the 'To Each Metric Its Decoding' paper (ICML 2025), spec §2.1: a tree with one root ``r``, nodes
``N`` and leaves ``L``; ``A(n)`` is the set of ancestors of ``n`` including ``n`` and the root; ``L(n)`` the
leaves below ``n``; ``d(n)`` the depth (``d(r) = 0``); ``D(n)`` the depth of the deepest leaf below ``n``.
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from icml25.core.files import FileFormatError, read_json

from ._validation import check_leaf_probs

__all__ = ["Hierarchy"]


class Hierarchy:
    """A rooted class tree with leaves indexed first, as used by every decoder of the paper.

    The Bayes-optimal decoders of 'To Each Metric Its Decoding: Post-Hoc Optimal Decision Rules of
    Probabilistic Hierarchical Classifiers' (Plaud et al., ICML 2025) work on the leaf-path matrix
    ``E[l, m] = 1[m ∈ A(l)]`` so that node probabilities are ``p(n) = Σ_{l ∈ L(n)} p(l) = (P_leaves · E)[n]``.

    Parameters
    ----------
    children : mapping
        Parent name -> sequence of child names. Names are any hashable values. Nodes that never appear as a key
        (or map to an empty list) are leaves.
    leaf_order : sequence, optional
        The leaf names in the order of the probability columns. Default: when the names are the integers
        ``0..n_nodes-1`` with the leaves exactly ``0..n_leaves-1`` (the convention of the official data files)
        the names are the indices; otherwise leaves are numbered in depth-first order of ``children``.

    Attributes
    ----------
    n_nodes, n_leaves : int
    root : int
        Index of the root (internal nodes are numbered ``n_leaves..n_nodes-1``).
    names : list
        ``names[i]`` is the user's name of node ``i``.
    parent : ndarray of int, shape (n_nodes,)
        Parent index, ``-1`` for the root.
    depth : ndarray of int, shape (n_nodes,)
    max_leaf_depth_below : ndarray of int, shape (n_nodes,)
        ``D(n)``.
    min_leaf_depth_below : ndarray of int, shape (n_nodes,)
        Depth of the shallowest leaf below ``n``.
    leaf_path_matrix : ndarray of float, shape (n_leaves, n_nodes)
        ``E``.
    ancestor_matrix : ndarray of bool, shape (n_nodes, n_nodes)
        ``A[n, m] = 1[m ∈ A(n)]``; the indicator of the node prediction ``n`` is ``A[n]``.
    n_leaves_below : ndarray of int, shape (n_nodes,)
        ``|L(n)|``.
    ic : ndarray of float, shape (n_nodes,)
        Information content ``IC(n) = ln(|L| / |L(n)|)``.

    Examples
    --------
    >>> h = Hierarchy.from_paths(["animal/dog", "animal/cat", "plant"])
    >>> h.n_nodes, h.n_leaves, h.names[h.root]
    (5, 3, '<root>')
    >>> h.node_probs([[0.5, 0.3, 0.2]]).round(2).tolist()
    [[0.5, 0.3, 0.2, 1.0, 0.8]]
    """

    def __init__(self, children: Mapping[Hashable, Sequence[Hashable]], leaf_order: Sequence[Hashable] | None = None):
        if not isinstance(children, Mapping):
            raise TypeError(f"children must be a mapping parent -> list of children, got {type(children).__name__}")
        kids: dict[Hashable, list[Hashable]] = {}
        parent_of: dict[Hashable, Hashable] = {}
        nodes: list[Hashable] = []
        seen: set[Hashable] = set()

        def _add(x: Hashable) -> None:
            if x not in seen:
                seen.add(x)
                nodes.append(x)

        for p, cs in children.items():
            _add(p)
            if isinstance(cs, (str, bytes)) or not isinstance(cs, Iterable):
                raise TypeError(f"children[{p!r}] must be a list of child names, got {type(cs).__name__}")
            cs = list(cs)
            if len(set(cs)) != len(cs):
                raise ValueError(f"children[{p!r}] lists a child twice: {cs!r}")
            kids[p] = cs
            for c in cs:
                _add(c)
                if c in parent_of:
                    raise ValueError(f"node {c!r} has two parents ({parent_of[c]!r} and {p!r}); a tree needs one")
                parent_of[c] = p
        roots = [x for x in nodes if x not in parent_of]
        if len(roots) != 1:
            what = "no node without a parent (the graph has a cycle)" if not roots else f"{len(roots)} roots {roots[:5]!r}"
            raise ValueError(f"children must describe a tree with exactly one root, got {what}")
        root = roots[0]
        order: list[Hashable] = []  # depth-first preorder from the root; also detects cycles / unreachable nodes
        stack = [root]
        visited: set[Hashable] = set()
        while stack:
            x = stack.pop()
            visited.add(x)
            order.append(x)
            stack.extend(reversed(kids.get(x, [])))
        if len(visited) != len(nodes):
            bad = [x for x in nodes if x not in visited][:5]
            raise ValueError(f"children must describe a tree; nodes {bad!r} are not reachable from root {root!r} "
                             "(they lie on a cycle)")
        if len(nodes) < 2:
            raise ValueError("children must describe a tree with at least one edge (a root and one leaf)")
        leaves = [x for x in order if not kids.get(x)]
        internal = [x for x in order if kids.get(x)]
        if leaf_order is not None:
            leaf_order = list(leaf_order)
            if sorted(map(repr, leaf_order)) != sorted(map(repr, leaves)) or len(leaf_order) != len(leaves):
                raise ValueError(f"leaf_order must list every leaf exactly once ({len(leaves)} leaves), "
                                 f"got {len(leaf_order)} names")
            leaves = leaf_order
        elif all(isinstance(x, (int, np.integer)) for x in nodes) and set(int(x) for x in leaves) == set(
                range(len(leaves))) and set(int(x) for x in nodes) == set(range(len(nodes))):
            leaves = sorted(leaves)
            internal = sorted(internal)
        else:
            # internal nodes in breadth-first order so that the root is index n_leaves
            bfs, queue = [], [root]
            while queue:
                x = queue.pop(0)
                if kids.get(x):
                    bfs.append(x)
                    queue.extend(kids[x])
            internal = bfs
        self.names: list[Hashable] = list(leaves) + list(internal)
        self._index = {x: i for i, x in enumerate(self.names)}
        self.n_leaves = len(leaves)
        self.n_nodes = len(self.names)
        self.root = self._index[root]
        self.children: list[np.ndarray] = [np.array([self._index[c] for c in kids.get(x, [])], dtype=np.int64)
                                           for x in self.names]
        self.parent = np.full(self.n_nodes, -1, dtype=np.int64)
        for x, p in parent_of.items():
            self.parent[self._index[x]] = self._index[p]
        self._build()

    # ------------------------------------------------------------------ construction helpers
    def _build(self) -> None:
        n = self.n_nodes
        depth = np.zeros(n, dtype=np.int64)
        topo = [self.root]  # parents before children
        for x in topo:
            for c in self.children[x]:
                depth[c] = depth[x] + 1
                topo.append(int(c))
        self.depth = depth
        anc = np.zeros((n, n), dtype=bool)
        for x in topo:
            if self.parent[x] >= 0:
                anc[x] = anc[self.parent[x]]
            anc[x, x] = True
        self.ancestor_matrix = anc
        self.leaf_path_matrix = anc[: self.n_leaves].astype(np.float64)
        self.n_leaves_below = anc[: self.n_leaves].sum(axis=0).astype(np.int64)
        leaf_depth = depth[: self.n_leaves]
        self.max_leaf_depth_below = np.where(anc[: self.n_leaves], leaf_depth[:, None], -1).max(axis=0)
        self.min_leaf_depth_below = np.where(anc[: self.n_leaves], leaf_depth[:, None], n).min(axis=0)
        self.ic = np.log(self.n_leaves / self.n_leaves_below)
        # tie-breaking order used by every decoder: shallower first, then smaller index
        self.tie_order = np.lexsort((np.arange(n), depth))
        self._topo = np.array(topo, dtype=np.int64)
        self._lca: np.ndarray | None = None
        self._sparse_E: Any = None

    @classmethod
    def from_parent_children(cls, children: Mapping[Hashable, Sequence[Hashable]],
                             leaf_order: Sequence[Hashable] | None = None) -> Hierarchy:
        """Build from a dict parent -> list of children (see :class:`Hierarchy`)."""
        return cls(children, leaf_order=leaf_order)

    @classmethod
    def from_edges(cls, edges: Iterable[tuple[Hashable, Hashable]], leaf_order: Sequence[Hashable] | None = None
                   ) -> Hierarchy:
        """Build from ``(parent, child)`` pairs."""
        children: dict[Hashable, list[Hashable]] = {}
        for e in edges:
            if not isinstance(e, (tuple, list)) or len(e) != 2:
                raise ValueError(f"edges must be (parent, child) pairs, got {e!r}")
            children.setdefault(e[0], []).append(e[1])
        if not children:
            raise ValueError("edges must contain at least one (parent, child) pair, got none")
        return cls(children, leaf_order=leaf_order)

    @classmethod
    def from_paths(cls, paths: Iterable[str], sep: str = "/", root: str = "<root>",
                   leaf_order: Sequence[Hashable] | None = None) -> Hierarchy:
        """Build from path strings ``"a/b/c"`` (ARFF style): each prefix is a node, the root is implicit.

        Duplicated paths are ignored (first occurrence kept); missing intermediate prefixes are created.
        """
        children: dict[str, list[str]] = {root: []}
        for path in paths:
            if not isinstance(path, str) or not path.strip(sep):
                raise ValueError(f"paths must be non-empty strings like 'a/b/c', got {path!r}")
            parts = path.strip(sep).split(sep)
            prev = root
            for i in range(len(parts)):
                node = sep.join(parts[: i + 1])
                lst = children.setdefault(prev, [])
                if node not in lst:
                    lst.append(node)
                children.setdefault(node, [])
                prev = node
        return cls({k: v for k, v in children.items() if v}, leaf_order=leaf_order)

    # ------------------------------------------------------------------ queries
    def index(self, name: Hashable) -> int:
        """Index of the node called ``name`` (ValueError when unknown)."""
        try:
            return self._index[name]
        except (KeyError, TypeError):
            raise ValueError(f"unknown node name {name!r}") from None

    def leaf_indices(self, labels: Any) -> np.ndarray:
        """Map leaf names (or leaf indices when the names are not found) to leaf indices, shape (n,)."""
        arr = list(np.asarray(labels).ravel().tolist())
        out = np.empty(len(arr), dtype=np.int64)
        for i, y in enumerate(arr):
            j = self._index.get(y) if isinstance(y, Hashable) else None
            if j is None and isinstance(y, (int, np.integer)) and 0 <= int(y) < self.n_leaves:
                j = int(y)
            if j is None or j >= self.n_leaves:
                raise ValueError(f"labels must be leaf names or leaf indices 0..{self.n_leaves - 1}, got {y!r}")
            out[i] = j
        return out

    def ancestors(self, n: int) -> np.ndarray:
        """Indices of ``A(n)`` (including ``n`` and the root), root first."""
        n = self._check_node(n)
        idx = np.flatnonzero(self.ancestor_matrix[n])
        return idx[np.argsort(self.depth[idx])]

    def leaves_below(self, n: int) -> np.ndarray:
        """Indices of ``L(n)``."""
        n = self._check_node(n)
        return np.flatnonzero(self.ancestor_matrix[: self.n_leaves, n])

    def _check_node(self, n: Any) -> int:
        if not isinstance(n, (int, np.integer)) or not 0 <= int(n) < self.n_nodes:
            raise ValueError(f"node must be an index in 0..{self.n_nodes - 1}, got {n!r}")
        return int(n)

    @property
    def sparse_leaf_path_matrix(self) -> Any:
        """``E`` as a ``scipy.sparse.csr_matrix`` (fast ``P @ E`` for large trees)."""
        if self._sparse_E is None:
            from scipy import sparse

            self._sparse_E = sparse.csr_matrix(self.leaf_path_matrix)
        return self._sparse_E

    def node_probs(self, leaf_probs: Any, atol: float = 1e-6) -> np.ndarray:
        """Node marginals ``p(n) = Σ_{l ∈ L(n)} p(l)`` (spec §2.1), shape (n_samples, n_nodes).

        Parameters
        ----------
        leaf_probs : array-like, shape (n_samples, n_leaves) or (n_leaves,)
            Leaf probabilities, rows summing to one within ``atol``.
        """
        P = check_leaf_probs(leaf_probs, self.n_leaves, atol=atol)
        return self._node_probs_unchecked(P)

    def _node_probs_unchecked(self, P: np.ndarray) -> np.ndarray:
        pn = np.asarray(P @ self.sparse_leaf_path_matrix)
        return np.clip(pn, 0.0, 1.0, out=pn)

    def lca_matrix(self) -> np.ndarray:
        """``LCA(n, l)`` for every node ``n`` and leaf ``l``, shape (n_nodes, n_leaves), int."""
        if self._lca is None:
            lca = np.full((self.n_nodes, self.n_leaves), self.root, dtype=np.int64)
            anc = self.ancestor_matrix
            for m in self._topo:  # parents before children: deeper common ancestors overwrite
                rows = np.flatnonzero(anc[:, m])
                cols = np.flatnonzero(anc[: self.n_leaves, m])
                lca[np.ix_(rows, cols)] = m
            self._lca = lca
        return self._lca

    def lca_depth_matrix(self) -> np.ndarray:
        """``d(LCA(n, l))`` for every node ``n`` and leaf ``l``, shape (n_nodes, n_leaves), int."""
        if getattr(self, "_lca_depth", None) is None:
            self._lca_depth = self.depth[self.lca_matrix()]
        return self._lca_depth

    def indicator(self, nodes: Any) -> np.ndarray:
        """Indicator vectors of single-node predictions: row ``i`` is ``A(nodes[i])``, shape (n, n_nodes), bool."""
        nodes = np.asarray(nodes)
        if nodes.ndim != 1 or not np.issubdtype(nodes.dtype, np.integer):
            raise ValueError(f"nodes must be a 1-d integer array of node indices, got shape {nodes.shape} "
                             f"dtype {nodes.dtype}")
        if nodes.size and (nodes.min() < 0 or nodes.max() >= self.n_nodes):
            raise ValueError(f"nodes must be indices in 0..{self.n_nodes - 1}, got {nodes.min()}..{nodes.max()}")
        return self.ancestor_matrix[nodes]

    def indicator_to_node(self, y_pred: Any) -> np.ndarray:
        """Node index of each indicator row that encodes a single node (a root path ``A(n)``), shape (n,).

        Raises ValueError when a row is not the ancestor set of one node.
        """
        Y = np.asarray(y_pred).astype(bool)
        if Y.ndim != 2 or Y.shape[1] != self.n_nodes:
            raise ValueError(f"y_pred must have shape (n_samples, {self.n_nodes}), got {Y.shape}")
        deepest = np.where(Y, self.depth[None, :], -1)
        nodes = deepest.argmax(axis=1)
        ok = (self.ancestor_matrix[nodes] == Y).all(axis=1) & Y.any(axis=1)
        if not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            raise ValueError(f"y_pred row {i} is not a single-node prediction (the ancestor set of one node); "
                             f"got nodes {np.flatnonzero(Y[i]).tolist()}")
        return nodes

    # ------------------------------------------------------------------ serialisation
    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict: ``children`` (by name) and ``leaf_order``; names are kept as given."""
        return {"children": [[self.names[i], [self.names[c] for c in self.children[i]]]
                             for i in range(self.n_nodes) if len(self.children[i])],
                "leaf_order": list(self.names[: self.n_leaves])}

    def to_json(self, path: str | Path | None = None) -> str:
        """Serialise to a JSON string (and write it to ``path`` when given)."""
        text = json.dumps(self.to_dict())
        if path is not None:
            Path(path).write_text(text, encoding="utf-8")
        return text

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Hierarchy:
        """Inverse of :meth:`to_dict`; also accepts ``{"children": {parent: [children]}}`` (official data files,
        whose integer names are given as strings)."""
        if "children" not in d:
            raise ValueError(f"hierarchy dict needs a 'children' entry, got keys {sorted(d)!r}")
        ch = d["children"]
        official = isinstance(ch, Mapping)  # JSON object keys are strings: '719' means node 719
        items = list(ch.items()) if official else [tuple(x) for x in ch]

        def _key(x: Any) -> Any:
            if official and isinstance(x, str) and x.lstrip("-").isdigit():
                return int(x)
            return tuple(x) if isinstance(x, list) else x

        children = {_key(p): [_key(c) for c in cs] for p, cs in items}
        leaf_order = [_key(x) for x in d["leaf_order"]] if d.get("leaf_order") is not None else None
        return cls(children, leaf_order=leaf_order)

    @classmethod
    def from_json(cls, text_or_path: str | Path) -> Hierarchy:
        """Read a hierarchy from a JSON string or file written by :meth:`to_json` (or an official data file).

        A missing or malformed file raises ``FileNotFoundError``/``ValueError`` with one line naming the file (and
        the line of a JSON syntax error) and what was expected.
        """
        s = str(text_or_path)
        if s.lstrip().startswith("{"):
            return cls.from_dict(json.loads(s))
        what = "a hierarchy JSON object {'children': ..., 'leaf_order': ...} (Hierarchy.to_json)"
        d = read_json(s, what)
        if not isinstance(d, dict):
            raise FileFormatError(f"{s}: a JSON {type(d).__name__}; expected {what}")
        try:
            return cls.from_dict(d)
        except (ValueError, TypeError, KeyError, IndexError) as exc:
            raise FileFormatError(f"{s}: {' '.join(str(exc).split())[:200]}; expected {what}") from None

    def __repr__(self) -> str:
        return (f"Hierarchy(n_nodes={self.n_nodes}, n_leaves={self.n_leaves}, "
                f"leaf depths {int(self.depth[: self.n_leaves].min())}..{int(self.depth[: self.n_leaves].max())})")
