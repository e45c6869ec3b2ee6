"""B search trees held in arrays: `[B, N]` per node, `[B, N, A]` per (node, action) edge.

A node's index is the simulation that created it (the root is simulation 0, `ROOT_INDEX`);
`num_nodes[b]` is the next free index of tree b. Every node's engine `GameState` lives in one
flat store of batch size B*N, node n of tree b at flat index `b * N + n`.

Values: `value_sums`/`raw_value` of a node are from the view of that node's `mover` (the player
to move there); `edge_value_sums[b, n, a]` are from the view of `mover[b, n]`, the player who
chooses `a`, so a Q-value reads without sign fixes. Signs flip only where the mover changes
(double placement: the same player moves twice in a row).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from catena_zero.rules import NO_ACTION, GameState

UNVISITED = -1  # children entry of an action whose child node does not exist yet
NO_PARENT = -1  # parent of a root node
ROOT_INDEX = 0  # index of the root node of every tree


@dataclass
class Tree:
    """Struct of arrays for B trees of capacity N over A actions."""

    children: np.ndarray  # [B, N, A] int32 child node index, UNVISITED if not expanded
    prior: np.ndarray  # [B, N, A] float32 network prior (0 on illegal actions)
    legal: np.ndarray  # [B, N, A] bool legal actions of the node's state
    edge_visits: np.ndarray  # [B, N, A] int32 simulations that went through the edge
    edge_value_sums: np.ndarray  # [B, N, A] float64 backed-up values, view of mover[b, n]
    visit_counts: np.ndarray  # [B, N] int32 simulations that reached the node
    value_sums: np.ndarray  # [B, N] float64 backed-up values, view of mover[b, n]
    raw_value: np.ndarray  # [B, N] float32 network value or exact result, mover's view
    parent: np.ndarray  # [B, N] int32 parent node, NO_PARENT for the root
    action_from_parent: np.ndarray  # [B, N] int32 action leading here, NO_ACTION for the root
    mover: np.ndarray  # [B, N] int8 player to move (terminal nodes: the parent's mover)
    terminal: np.ndarray  # [B, N] bool game over at the node
    num_nodes: np.ndarray  # [B] int32 nodes in use (0: empty tree, root not expanded)
    states: GameState  # [B * N] engine state of every node

    @property
    def batch_size(self) -> int:
        return int(self.children.shape[0])

    @property
    def capacity(self) -> int:
        return int(self.children.shape[1])

    @property
    def num_actions(self) -> int:
        return int(self.children.shape[2])

    @classmethod
    def allocate(cls, root_states: GameState, capacity: int, num_actions: int) -> Tree:
        """Empty trees (`num_nodes == 0`) whose state store holds the root states."""
        batch_size = int(root_states.to_move.shape[0])
        if capacity < 1:
            raise ValueError(f"tree capacity {capacity} must be >= 1")
        shape_nodes = (batch_size, capacity)
        shape_edges = (batch_size, capacity, num_actions)
        return cls(
            children=np.full(shape_edges, UNVISITED, dtype=np.int32),
            prior=np.zeros(shape_edges, dtype=np.float32),
            legal=np.zeros(shape_edges, dtype=bool),
            edge_visits=np.zeros(shape_edges, dtype=np.int32),
            edge_value_sums=np.zeros(shape_edges, dtype=np.float64),
            visit_counts=np.zeros(shape_nodes, dtype=np.int32),
            value_sums=np.zeros(shape_nodes, dtype=np.float64),
            raw_value=np.zeros(shape_nodes, dtype=np.float32),
            parent=np.full(shape_nodes, NO_PARENT, dtype=np.int32),
            action_from_parent=np.full(shape_nodes, NO_ACTION, dtype=np.int32),
            mover=np.zeros(shape_nodes, dtype=np.int8),
            terminal=np.zeros(shape_nodes, dtype=bool),
            num_nodes=np.zeros(batch_size, dtype=np.int32),
            states=_state_store(root_states, capacity),
        )

    def flat_index(self, rows: np.ndarray, nodes: np.ndarray) -> np.ndarray:
        """Index into `states` of node `nodes[k]` of tree `rows[k]`.  # [K]"""
        return rows * self.capacity + nodes

    def root_states(self) -> GameState:
        """States of the B roots.  # [B]"""
        return self.states.take(self.flat_index(np.arange(self.batch_size), ROOT_INDEX))

    def with_capacity(self, capacity: int) -> Tree:
        """A copy of the trees with room for `capacity` nodes each (never fewer than in use)."""
        needed = int(self.num_nodes.max(initial=0))
        if capacity < max(needed, 1):
            raise ValueError(f"tree capacity {capacity} is below the {needed} nodes in use")
        batch_size, old_capacity = self.batch_size, self.capacity
        grown = Tree.allocate(self.root_states(), capacity, self.num_actions)
        keep = min(old_capacity, capacity)
        for name in _NODE_FIELDS + _EDGE_FIELDS:
            getattr(grown, name)[:, :keep] = getattr(self, name)[:, :keep]
        grown.num_nodes[:] = self.num_nodes
        rows = np.repeat(np.arange(batch_size), keep)
        nodes = np.tile(np.arange(keep), batch_size)
        grown.states.put(
            grown.flat_index(rows, nodes), self.states.take(rows * old_capacity + nodes)
        )
        return grown

    def reroot(self, actions: np.ndarray, max_nodes: int | None = None) -> Tree:
        """The subtree under each root's child `actions[b]`, renumbered in creation order.

        `actions`: int [B]. A game whose action is NO_ACTION, leads to an unexpanded or terminal
        child, or whose subtree has more than `max_nodes` nodes gets an empty tree (searched
        from scratch next time). The trees keep their capacity; `search` grows them as needed.
        """
        actions = np.asarray(actions)
        batch_size, capacity, num_actions = self.batch_size, self.capacity, self.num_actions
        if actions.shape != (batch_size,):
            raise ValueError(f"reroot actions have shape {actions.shape}; expected ({batch_size},)")
        bad = (actions != NO_ACTION) & ((actions < 0) | (actions >= num_actions))
        if bad.any():
            game = int(np.flatnonzero(bad)[0])
            raise ValueError(f"reroot action {int(actions[game])} of game {game} is out of range")
        rows = np.arange(batch_size)
        usable = (actions != NO_ACTION) & (self.num_nodes > 0)
        new_root = np.where(
            usable, self.children[rows, ROOT_INDEX, np.where(usable, actions, 0)], UNVISITED
        )
        new_root = np.where(
            (new_root >= 0) & ~self.terminal[rows, np.maximum(new_root, 0)], new_root, UNVISITED
        )
        in_subtree = self._descendants_of(new_root)  # [B, N]
        sizes = in_subtree.sum(axis=1)
        limit = capacity if max_nodes is None else max_nodes
        too_big = sizes > limit
        in_subtree[too_big] = False
        sizes[too_big] = 0

        # Old index of each new slot (subtree nodes first, in creation order).  # [B, N]
        old_of_new = np.argsort(~in_subtree, axis=1, kind="stable").astype(np.int32)
        new_of_old = np.where(in_subtree, np.cumsum(in_subtree, axis=1) - 1, UNVISITED)
        used = np.arange(capacity)[None, :] < sizes[:, None]  # [B, N]

        out = Tree.allocate(self.root_states(), capacity, num_actions)
        row_grid = rows[:, None]
        for name in _NODE_FIELDS:
            source = getattr(self, name)[row_grid, old_of_new]
            target = getattr(out, name)
            target[used] = source[used]
        for name in _EDGE_FIELDS:
            source = getattr(self, name)[row_grid, old_of_new]
            target = getattr(out, name)
            target[used] = source[used]
        children = out.children
        expanded = (children >= 0) & used[:, :, None]
        remapped = new_of_old[rows[:, None, None], np.maximum(children, 0)]
        out.children[:] = np.where(expanded, remapped, UNVISITED)
        parents = out.parent
        has_parent = (parents >= 0) & used
        out.parent[:] = np.where(
            has_parent, new_of_old[row_grid, np.maximum(parents, 0)], NO_PARENT
        )
        out.parent[:, ROOT_INDEX] = NO_PARENT
        out.action_from_parent[:, ROOT_INDEX] = NO_ACTION
        out.num_nodes[:] = sizes
        flat_rows = np.repeat(rows, capacity)
        flat_old = np.where(used, old_of_new, ROOT_INDEX).reshape(-1)
        out.states = self.states.take(flat_rows * capacity + flat_old)
        return out

    def _descendants_of(self, new_root: np.ndarray) -> np.ndarray:
        """Mask of the nodes in the subtree of `new_root[b]` (none where UNVISITED).  # [B, N]"""
        capacity = self.capacity
        node_ids = np.arange(capacity)[None, :]
        in_use = node_ids < self.num_nodes[:, None]
        in_subtree = (node_ids == new_root[:, None]) & in_use
        # Pointer jumping: after step k, in_subtree covers ancestors up to 2**k - 1 levels up.
        ancestor = np.where(in_use & (self.parent >= 0), self.parent, ROOT_INDEX)
        for _ in range(max(1, math.ceil(math.log2(capacity))) + 1):
            in_subtree |= np.take_along_axis(in_subtree, ancestor, axis=1)
            ancestor = np.take_along_axis(ancestor, ancestor, axis=1)
        return in_subtree & in_use


def _state_store(root_states: GameState, capacity: int) -> GameState:
    """A store of B * capacity states with root b at flat index b * capacity; the other slots
    are uninitialised (each is written by the expansion that creates its node)."""
    batch_size = int(root_states.to_move.shape[0])
    store = GameState(
        **{
            field.name: np.empty(
                (batch_size * capacity, *getattr(root_states, field.name).shape[1:]),
                dtype=getattr(root_states, field.name).dtype,
            )
            for field in dataclasses.fields(root_states)
        }
    )
    store.put(np.arange(batch_size) * capacity, root_states)
    return store


_NODE_FIELDS = (
    "visit_counts",
    "value_sums",
    "raw_value",
    "parent",
    "action_from_parent",
    "mover",
    "terminal",
)
_EDGE_FIELDS = ("children", "prior", "legal", "edge_visits", "edge_value_sums")


class FlatViews:
    """Views of a Tree's arrays with the tree and node axes merged (flat node = b * N + n),
    so gathers and scatters index one axis instead of two."""

    def __init__(self, tree: Tree) -> None:
        batch_nodes = tree.batch_size * tree.capacity
        for name in ("children", "prior", "legal", "edge_visits", "edge_value_sums"):
            setattr(self, name, _view(getattr(tree, name), (batch_nodes, tree.num_actions)))
        for name in ("visit_counts", "value_sums", "raw_value", "parent", "action_from_parent",
                     "mover", "terminal"):  # fmt: skip
            setattr(self, name, _view(getattr(tree, name), (batch_nodes,)))
        self.edge_visits_1d = _view(tree.edge_visits, (-1,))
        self.prior_1d = _view(tree.prior, (-1,))
        self.edge_value_sums_1d = _view(tree.edge_value_sums, (-1,))


def _view(array: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """A reshaped view that shares memory (raises rather than silently copying)."""
    return np.reshape(array, shape, copy=False)
