"""Nice tree decompositions checked from the definition (not with the class's own validate): every vertex and
edge is covered, each vertex's bags form a connected subtree, and the node types change bags as they must."""

from __future__ import annotations

import networkx as nx
import pytest

from icml25.sis_vaccination import nice_tree_decomposition, random_partial_k_tree


@pytest.mark.parametrize("graph", [random_partial_k_tree(14, 2, keep=0.8, seed=3), nx.cycle_graph(7),
                                   nx.Graph(nx.karate_club_graph().edges), nx.grid_2d_graph(3, 4)],
                         ids=["partial-2-tree", "cycle", "karate", "grid"])
def test_definition_of_a_nice_tree_decomposition(graph: nx.Graph) -> None:
    ntd = nice_tree_decomposition(graph)
    nodes = ntd.nodes
    tree = nx.Graph()
    tree.add_nodes_from(range(len(nodes)))
    tree.add_edges_from((i, c) for i, node in enumerate(nodes) for c in node.children)
    assert nx.is_tree(tree)
    assert all(c < i for i, node in enumerate(nodes) for c in node.children)  # children first
    for v in graph:
        holding = [i for i, node in enumerate(nodes) if v in node.bag]
        assert holding and nx.is_connected(tree.subgraph(holding))  # coverage and running intersection
    for a, b in graph.edges:
        assert any(a in node.bag and b in node.bag for node in nodes)
    for node in nodes:
        kids = [nodes[c].bag for c in node.children]
        if node.kind == "leaf":
            assert not node.bag and not kids
        elif node.kind == "introduce":
            assert kids == [node.bag - {node.vertex}] and node.vertex in node.bag
        elif node.kind == "forget":
            assert kids == [node.bag | {node.vertex}] and node.vertex not in node.bag
        else:
            assert node.kind == "join" and kids == [node.bag, node.bag]
    assert not nodes[ntd.root].bag
    assert ntd.width == max(len(node.bag) for node in nodes) - 1
    assert ntd.width >= max(nx.core_number(graph).values())  # treewidth ≥ degeneracy
