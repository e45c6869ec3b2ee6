"""Several leaves of one tree per network call: the search a single game (GTP, the analysis
engine, the page) needs to keep the network busy.

The batched search evaluates one leaf per tree per call, so a search of one position makes one
call per simulation at batch size 1, far below the network's throughput (side 6 on one core:
about 4x fewer seconds per position at batch 16 than at batch 1). Here each call carries up
to `SearchConfig.leaves_per_call` leaves of each tree.

A *wave* sends up to that many lanes down each tree together, vectorised over all lanes of all
trees (no Python loop over lanes or cells). The lanes of one tree choose their root moves one
after another, each counting the earlier lanes' choices as visits:

- Gumbel root: sequential halving's due rule, each lane at its own simulation index of the
  halving table (the ranking g + logits + sigma(q) is the one at the start of the wave).
- PUCT and UCT roots: virtual visits that keep every mean value and only add to the counts.

The first lane that would repeat a root move an earlier lane of its wave took is cut, with
every later lane of that tree: no two lanes share a subtree, so below the root each subtree is
searched one leaf at a time by the usual rules, and a Gumbel wave is one round of the halving
schedule (every surviving move once). Lanes that did share subtrees, splitting by virtual
visits, were faster and measurably weaker at equal simulations (docs/reference/search.md).
Backups run after the wave's one network call; paths share the root, so they accumulate with
`np.add.at`. Should two lanes ever reach one unexpanded edge, the first keeps it and the others
do not count.

`leaves_per_call = 1` never comes here (`search` keeps the one-leaf loop, bit for bit the
search self-play has always used).
"""

from __future__ import annotations

import numpy as np

from catena_zero.mcts import gumbel, puct
from catena_zero.mcts.search import _BatchedSearch
from catena_zero.mcts.tree import UNVISITED


def group_ranks(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Group equal `keys` [L], keeping the order of first appearance within each group.

    Returns (order [L]: positions sorted by key, stable; starts [G]: where each group begins
    in `order`; sizes [G]). Entry `order[starts[g] + t]` is the t-th member of group g.
    """
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    first = np.ones(keys.size, dtype=bool)
    first[1:] = sorted_keys[1:] != sorted_keys[:-1]
    starts = np.flatnonzero(first)
    sizes = np.diff(np.append(starts, keys.size))
    return order, starts, sizes


class LeafBatchSearch(_BatchedSearch):
    """The batched search with `config.leaves_per_call` lanes per tree per network call."""

    # ------------------------------------------------------------------------ the loop
    def _simulate_all(self, rows: np.ndarray, budget: np.ndarray) -> None:
        """Waves of up to `leaves_per_call` lanes per tree until each budget is spent."""
        done = np.zeros(self.tree.batch_size, dtype=np.int64)  # [B] counted simulations
        width = self.config.leaves_per_call
        while True:
            active = rows[done[rows] < budget[rows]]
            if active.size == 0:
                return
            lanes = np.minimum(width, budget[active] - done[active])  # [R] lanes per tree
            self._ensure_capacity(int(lanes.max()))
            lane_rows = np.repeat(active, lanes)  # [L]
            lane_rank = np.arange(lane_rows.size) - np.repeat(np.cumsum(lanes) - lanes, lanes)
            counted = self._wave(lane_rows, done[lane_rows] + lane_rank)
            # The first lane of a tree cannot collide (nothing is pending when it picks), so
            # every wave counts at least one simulation per tree and the loop ends.
            done += np.bincount(lane_rows[counted], minlength=done.size)
            if self._tick():
                return

    def _wave(self, lane_rows: np.ndarray, lane_simulation: np.ndarray) -> np.ndarray:
        """Descend every lane, expand the new leaves in one call, back up.  # [L] bool counted

        `lane_rows` [L]: each lane's tree, a tree's lanes together and in order;
        `lane_simulation` [L]: the simulation index each lane stands for (Gumbel schedule).
        """
        tree, flat = self.tree, self.flat
        capacity, num_actions = tree.capacity, self.num_actions
        counted = np.ones(lane_rows.size, dtype=bool)
        lanes = np.arange(lane_rows.size)
        nodes = lane_rows * capacity  # flat index of each lane's node: the roots
        path_lanes, path_nodes, path_actions = [], [], []
        expand_lanes, expand_parents, expand_actions = [], [], []
        revisit_lanes, revisit_nodes = [], []
        depth = 0
        while lanes.size:
            actions = self._choose_lanes(lanes, nodes, depth, lane_rows, lane_simulation)
            if depth == 0:  # lanes past the first repeated root move do not run
                cut = actions < 0
                counted[lanes[cut]] = False
                lanes, nodes, actions = lanes[~cut], nodes[~cut], actions[~cut]
            path_lanes.append(lanes)
            path_nodes.append(nodes)
            path_actions.append(actions)
            rows = lane_rows[lanes]
            child = flat.children[nodes, actions]
            unexpanded = child == UNVISITED
            child_flat = rows * capacity + child
            at_terminal = ~unexpanded & flat.terminal[np.where(unexpanded, 0, child_flat)]
            if unexpanded.any():
                edges = nodes[unexpanded] * num_actions + actions[unexpanded]
                _, first = np.unique(edges, return_index=True)  # earliest lane keeps the leaf
                keep = np.zeros(edges.size, dtype=bool)
                keep[first] = True
                new_lanes = lanes[unexpanded]
                counted[new_lanes[~keep]] = False
                expand_lanes.append(new_lanes[keep])
                expand_parents.append((nodes[unexpanded] - rows[unexpanded] * capacity)[keep])
                expand_actions.append(actions[unexpanded][keep])
            if at_terminal.any():
                revisit_lanes.append(lanes[at_terminal])
                revisit_nodes.append(child[at_terminal])
            descend = ~(unexpanded | at_terminal)
            lanes, nodes = lanes[descend], child_flat[descend]
            depth += 1

        leaf_lanes, leaf_nodes, leaf_values = [], [], []
        if expand_lanes:
            new_lanes = np.concatenate(expand_lanes)
            new_nodes, values = self._expand(lane_rows[new_lanes], np.concatenate(expand_parents),
                                             np.concatenate(expand_actions))
            leaf_lanes.append(new_lanes)
            leaf_nodes.append(new_nodes)
            leaf_values.append(values)
        for lanes_here, nodes_here in zip(revisit_lanes, revisit_nodes, strict=True):
            leaf_lanes.append(lanes_here)
            leaf_nodes.append(nodes_here)
            leaf_values.append(tree.raw_value[lane_rows[lanes_here], nodes_here].astype(np.float64))
        self._backup_lanes(lane_rows, counted, path_lanes, path_nodes, path_actions,
                           np.concatenate(leaf_lanes), np.concatenate(leaf_nodes),
                           np.concatenate(leaf_values))
        return counted

    # ------------------------------------------------------------------------ selection
    def _choose_lanes(self, lanes, nodes, depth, lane_rows, lane_simulation) -> np.ndarray:
        """The action of each lane at flat node `nodes[k]`; lanes at one node pick in turn,
        each counting the earlier picks as virtual visits.  # [K] int64"""
        order, starts, sizes = group_ranks(nodes)
        group_nodes = nodes[order[starts]]  # [G]
        group_rows = lane_rows[lanes[order[starts]]]  # [G]
        if depth == 0 and self.config.algorithm == "gumbel":
            pick = self._root_picker(group_nodes, group_rows)
        else:
            pick = self._interior_picker(group_nodes, group_rows, depth == 0)
        actions = np.empty(nodes.size, dtype=np.int64)
        # At the roots a lane that would repeat a move an earlier lane of its wave took is cut,
        # and so is every later lane of that tree: a root child's subtree gets one lane a
        # wave, so each subtree is searched exactly as by the one-leaf search.
        picked = np.zeros((group_nodes.size, self.num_actions), dtype=bool)  # [G, A]
        stopped = np.zeros(group_nodes.size, dtype=bool)  # [G]
        for turn in range(int(sizes.max())):
            groups = np.flatnonzero(sizes > turn)
            members = order[starts[groups] + turn]  # positions in `lanes`
            chosen = pick(groups, lane_simulation[lanes[members]])
            if depth == 0:
                stopped[groups] |= picked[groups, chosen]
                picked[groups, chosen] = True
                chosen = np.where(stopped[groups], -1, chosen)
            actions[members] = chosen
        return actions

    def _interior_picker(self, group_nodes: np.ndarray, group_rows: np.ndarray, at_root: bool):
        """A pick(groups, simulations) for Gumbel interior nodes, PUCT and UCT nodes
        (`at_root`: the nodes are roots, where PUCT uses the noisy prior)."""
        flat, config = self.flat, self.config
        visits = flat.edge_visits[group_nodes].astype(np.float64)  # [G, A]
        value_sums = flat.edge_value_sums[group_nodes]
        legal = flat.legal[group_nodes]
        virtual = np.zeros_like(visits)  # [G, A]
        if config.algorithm == "gumbel":
            # The improved policy moves with Q only, which the pending leaves do not change yet.
            improved = gumbel.interior_policy(
                flat.edge_visits[group_nodes], value_sums, flat.prior[group_nodes], legal,
                flat.raw_value[group_nodes], config,
            )  # fmt: skip

        def pick(groups: np.ndarray, simulations: np.ndarray) -> np.ndarray:
            seen = visits[groups] + virtual[groups]
            if config.algorithm == "gumbel":
                scores = improved[groups] - seen / (1.0 + seen.sum(axis=1, keepdims=True))
                scores = np.where(legal[groups], scores, -np.inf)
            else:
                # Virtual visits keep every mean (edge Q, the parent's mean behind first-play
                # urgency) and only add to the counts, which shrinks the exploration bonus of
                # the edges already picked; a virtual loss of -1 per pick spreads a wave of 16
                # lanes far wider than the sequential search's visits.
                scale = seen / np.maximum(visits[groups], 1.0)
                kept = value_sums[groups] * scale
                node = group_nodes[groups]
                node_visits = flat.visit_counts[node] + virtual[groups].sum(axis=1)
                node_sums = flat.value_sums[node] * (node_visits / np.maximum(
                    flat.visit_counts[node], 1))
                if config.algorithm == "puct":
                    prior = self.root_prior[group_rows[groups]] if at_root else flat.prior[node]
                    scores = puct.puct_scores(seen, kept, prior, legal[groups], node_visits,
                                              node_sums, config)
                else:
                    scores = puct.ucb1_scores(seen, kept, legal[groups], node_visits, config)
            chosen = np.argmax(scores, axis=1)
            virtual[groups, chosen] += 1.0
            return chosen

        return pick

    def _root_picker(self, group_nodes: np.ndarray, group_rows: np.ndarray):
        """A pick(groups, simulations) for Gumbel roots: sequential halving's due rule."""
        flat = self.flat
        columns = self.root_columns[group_rows]  # [G, K]
        edges = (group_nodes * self.num_actions)[:, None] + columns
        visits = flat.edge_visits_1d[edges]
        legal = self.root_columns_legal[group_rows]
        sigma, _ = gumbel.completed_sigma(
            visits, flat.edge_value_sums_1d[edges], flat.prior_1d[edges], legal,
            flat.raw_value[group_nodes], self.config, self.root_unvisited_elsewhere[group_rows],
        )  # fmt: skip
        key = self.root_columns_key[group_rows]
        searched = (visits - self.root_columns_before[group_rows]).astype(np.int64)  # [G, K]
        last = max(self.max_simulations - 1, 0)

        def pick(groups: np.ndarray, simulations: np.ndarray) -> np.ndarray:
            rows = group_rows[groups]
            due = self.visit_table[self.budget_index[rows], self.considered[rows],
                                   np.minimum(simulations, last)]
            scores = gumbel.root_scores(key[groups], 0.0, sigma[groups], searched[groups], due,
                                        legal[groups])
            stuck = ~np.isfinite(scores.max(axis=1))
            if stuck.any():  # defensive, as in the one-leaf search
                fallback = np.where(legal[groups], np.maximum(gumbel.LOW_LOGIT,
                                                              key[groups] + sigma[groups]), -np.inf)
                scores[stuck] = fallback[stuck]
            best = np.argmax(scores, axis=1)
            searched[groups, best] += 1
            return columns[groups, best]

        return pick

    # ------------------------------------------------------------------- expansion, backup
    def _allocate(self, rows: np.ndarray) -> np.ndarray:
        """The next free nodes for `rows` [K], where a tree may appear several times."""
        tree = self.tree
        order, starts, sizes = group_ranks(rows)
        rank = np.empty(rows.size, dtype=np.int64)
        rank[order] = np.arange(rows.size) - np.repeat(starts, sizes)
        new_nodes = (tree.num_nodes[rows] + rank).astype(np.int32)
        np.add.at(tree.num_nodes, rows, 1)
        return new_nodes

    def _backup_lanes(self, lane_rows, counted, path_lanes, path_nodes, path_actions,
                      leaf_lanes, leaf_nodes, leaf_values) -> None:
        """Back up each counted lane's leaf value along its path (signs as in `_backup`)."""
        tree, flat = self.tree, self.flat
        lane_mover = np.zeros(lane_rows.size, dtype=np.int8)  # [L] mover at each lane's leaf
        lane_value = np.zeros(lane_rows.size, dtype=np.float64)  # [L] value, leaf mover's view
        leaf_flat = tree.flat_index(lane_rows[leaf_lanes], leaf_nodes)
        lane_mover[leaf_lanes] = flat.mover[leaf_flat]
        lane_value[leaf_lanes] = leaf_values
        lanes = np.concatenate(path_lanes)
        keep = counted[lanes]
        lanes = lanes[keep]
        nodes = np.concatenate(path_nodes)[keep]
        actions = np.concatenate(path_actions)[keep]
        same_mover = flat.mover[nodes] == lane_mover[lanes]
        signed = np.where(same_mover, lane_value[lanes], -lane_value[lanes])
        edges = nodes * self.num_actions + actions
        np.add.at(flat.edge_visits_1d, edges, 1)
        np.add.at(flat.edge_value_sums_1d, edges, signed)
        np.add.at(flat.visit_counts, nodes, 1)
        np.add.at(flat.value_sums, nodes, signed)
        np.add.at(flat.visit_counts, leaf_flat, 1)
        np.add.at(flat.value_sums, leaf_flat, leaf_values)
