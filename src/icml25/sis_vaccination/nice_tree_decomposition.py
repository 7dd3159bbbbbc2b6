"""Nice tree decompositions (leaf / introduce / forget / join nodes) built from networkx's treewidth heuristics.

SageMath's ``treewidth(certificate=True, nice=True)`` and the PACE-2017 exact solver used by the official code
are not available; networkx's min-fill-in (or min-degree) elimination heuristic gives a valid decomposition
whose width may exceed the treewidth.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import networkx as nx
from networkx.algorithms.approximation import treewidth_min_degree, treewidth_min_fill_in

from ._validation import check_graph

__all__ = ["NiceNode", "NiceTreeDecomposition", "nice_tree_decomposition"]


@dataclass(frozen=True)
class NiceNode:
    """One node of a nice tree decomposition.

    Attributes
    ----------
    kind : {"leaf", "introduce", "forget", "join"}
    bag : frozenset
        The bag X_t (empty for leaves and the root).
    vertex : object or None
        The introduced or forgotten vertex.
    children : tuple of int
        Indices of the child nodes (always smaller than this node's index).
    """

    kind: str
    bag: frozenset
    vertex: Any = None
    children: tuple[int, ...] = field(default_factory=tuple)


@dataclass
class NiceTreeDecomposition:
    """A nice tree decomposition: ``nodes`` in topological order (children first), the root is the last node.

    Attributes
    ----------
    nodes : list of NiceNode
    width : int
        max |bag| − 1.
    """

    nodes: list[NiceNode]
    width: int

    @property
    def root(self) -> int:
        """Index of the root (empty bag)."""
        return len(self.nodes) - 1

    def validate(self, graph: nx.Graph) -> None:
        """Raise ValueError unless this is a valid nice tree decomposition of ``graph``."""
        forgotten: list[Any] = []
        for node in self.nodes:
            kids = [self.nodes[c] for c in node.children]
            if node.kind == "leaf" and (node.bag or kids):
                raise ValueError("leaf nodes must have an empty bag and no children")
            if node.kind == "introduce" and (len(kids) != 1 or node.bag != kids[0].bag | {node.vertex}
                                             or node.vertex in kids[0].bag):
                raise ValueError("bad introduce node")
            if node.kind == "forget":
                forgotten.append(node.vertex)
            if node.kind == "forget" and (len(kids) != 1 or kids[0].bag != node.bag | {node.vertex}
                                          or node.vertex in node.bag):
                raise ValueError("bad forget node")
            if node.kind == "join" and (len(kids) != 2 or any(k.bag != node.bag for k in kids)):
                raise ValueError("bad join node")
        if self.nodes[self.root].bag:
            raise ValueError("the root bag must be empty")
        if len(forgotten) != len(set(forgotten)) or set(forgotten) != set(graph.nodes):
            raise ValueError("every vertex must be forgotten exactly once")
        bags = [n.bag for n in self.nodes]
        for u, v in graph.edges:
            if not any(u in b and v in b for b in bags):
                raise ValueError(f"edge ({u!r}, {v!r}) is in no bag")


def nice_tree_decomposition(graph: nx.Graph, decomposition: tuple[int, nx.Graph] | None = None,
                            heuristic: str = "min_fill_in") -> NiceTreeDecomposition:
    """Convert a tree decomposition of ``graph`` into a nice one.

    Parameters
    ----------
    graph : networkx.Graph
        Undirected simple graph.
    decomposition : (width, tree), optional
        A tree decomposition as returned by ``networkx.algorithms.approximation.treewidth_min_fill_in``
        (tree nodes are frozenset bags). Computed with ``heuristic`` when omitted.
    heuristic : {"min_fill_in", "min_degree"}
        networkx elimination heuristic.

    Returns
    -------
    NiceTreeDecomposition
        Rooted at an empty bag; joins are binary with equal child bags; bags of adjacent nodes differ by
        exactly one vertex (introduce/forget chains); every leaf has an empty bag.
    """
    check_graph(graph)
    if decomposition is None:
        if heuristic not in ("min_fill_in", "min_degree"):
            raise ValueError(f"heuristic must be 'min_fill_in' or 'min_degree', got {heuristic!r}")
        decomposition = (treewidth_min_fill_in if heuristic == "min_fill_in" else treewidth_min_degree)(graph)
    _, tree = decomposition
    tree = nx.Graph(tree)
    if graph.number_of_nodes() == 0:
        return NiceTreeDecomposition([NiceNode("leaf", frozenset())], width=-1)
    comps = [next(iter(c)) for c in nx.connected_components(tree)]
    for a, b in zip(comps[:-1], comps[1:]):  # disjoint vertex sets: linking them keeps running intersection
        tree.add_edge(a, b)
    nodes: list[NiceNode] = []

    def add(node: NiceNode) -> int:
        nodes.append(node)
        return len(nodes) - 1

    def walk(start: int, from_bag: frozenset, to_bag: frozenset) -> int:
        cur, bag = start, from_bag
        for v in sorted(from_bag - to_bag, key=repr):
            bag = bag - {v}
            cur = add(NiceNode("forget", bag, v, (cur,)))
        for v in sorted(to_bag - from_bag, key=repr):
            bag = bag | {v}
            cur = add(NiceNode("introduce", bag, v, (cur,)))
        return cur

    root_bag = next(iter(tree.nodes))
    parent = {root_bag: None}
    order = []
    stack = [root_bag]
    while stack:  # iterative DFS pre-order; processing it reversed visits children before parents
        b = stack.pop()
        order.append(b)
        for c in tree[b]:
            if c != parent[b]:
                parent[c] = b
                stack.append(c)
    top: dict[frozenset, int] = {}
    for b in reversed(order):
        kids = [c for c in tree[b] if parent.get(c) == b and c != parent[b]]
        if not kids:
            leaf = add(NiceNode("leaf", frozenset()))
            top[b] = walk(leaf, frozenset(), frozenset(b))
            continue
        subs = [walk(top[c], frozenset(c), frozenset(b)) for c in kids]
        while len(subs) > 1:
            subs = [add(NiceNode("join", frozenset(b), None, (subs[i], subs[i + 1]))) if i + 1 < len(subs)
                    else subs[i] for i in range(0, len(subs), 2)]
        top[b] = subs[0]
    walk(top[root_bag], frozenset(root_bag), frozenset())
    if nodes[-1].bag:
        raise RuntimeError("internal error: root bag not empty")
    width = max(len(n.bag) for n in nodes) - 1
    return NiceTreeDecomposition(nodes, width)
