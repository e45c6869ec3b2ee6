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
Below the root a lane chooses as the one-leaf search does (its `_choose`). Backups run after
the wave's one network call; paths share the root, so they accumulate with `np.add.at`.

`leaves_per_call = 1` never comes here (`search` keeps the one-leaf loop, bit for bit the
search self-play has always used).
"""

from __future__ import annotations

import numpy as np

from catena_zero.mcts import gumbel, puct
from catena_zero.mcts.batched import BatchedSearch


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


class LeafBatchSearch(BatchedSearch):
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
            # The first lane of a tree is never cut, so every wave counts at least one
            # simulation per tree and the loop ends.
            done += np.bincount(lane_rows[counted], minlength=done.size)
            if self._tick():
                return

    def _wave(self, lane_rows: np.ndarray, lane_simulation: np.ndarray) -> np.ndarray:
        """Descend every lane, expand the new leaves in one call, back up.  # [L] bool ran

        `lane_rows` [L]: each lane's tree, a tree's lanes together and in order;
        `lane_simulation` [L]: the simulation index each lane stands for (Gumbel schedule).
        Lanes cut at the root (`_choose_roots`) do not run.
        """
        tree = self.tree
        capacity = tree.capacity
        actions = self._choose_roots(lane_rows, lane_simulation)
        ran = actions >= 0
        lanes = np.flatnonzero(ran)
        nodes, actions = lane_rows[lanes] * capacity, actions[ran]  # flat roots
        path_lanes, path_nodes, path_actions = [], [], []
        expand_lanes, expand_parents, expand_actions = [], [], []
        revisit_lanes, revisit_nodes = [], []
        depth = 0
        while lanes.size:
            rows = lane_rows[lanes]
            if depth > 0:  # one lane per subtree: the one-leaf search's own rule
                actions = self._choose(rows, nodes, depth, 0)
            path_lanes.append(lanes)
            path_nodes.append(nodes)
            path_actions.append(actions)
            child, child_flat, unexpanded, at_terminal = self._follow(rows, nodes, actions)
            if unexpanded.any():  # lanes never share a subtree, so these edges are distinct
                expand_lanes.append(lanes[unexpanded])
                expand_parents.append(nodes[unexpanded] - rows[unexpanded] * capacity)
                expand_actions.append(actions[unexpanded])
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
        self._backup_lanes(lane_rows, path_lanes, path_nodes, path_actions,
                           np.concatenate(leaf_lanes), np.concatenate(leaf_nodes),
                           np.concatenate(leaf_values))
        return ran

    # ------------------------------------------------------------------------ selection
    def _choose_roots(self, lane_rows: np.ndarray, lane_simulation: np.ndarray) -> np.ndarray:
        """The root move of each lane; a tree's lanes pick in turn, each counting the earlier
        picks as visits. A lane that would repeat a move an earlier lane of its wave took is
        cut (-1), and so is every later lane of that tree: a root child's subtree gets one
        lane a wave, so each subtree is searched exactly as by the one-leaf search.  # [L]"""
        order, starts, sizes = group_ranks(lane_rows)
        group_rows = lane_rows[order[starts]]  # [G]
        group_nodes = group_rows * self.tree.capacity  # the flat roots
        if self.config.algorithm == "gumbel":
            pick = self._gumbel_root_picker(group_rows, group_nodes)
        else:
            pick = self._virtual_visit_picker(group_rows, group_nodes)
        actions = np.empty(lane_rows.size, dtype=np.int64)
        picked = np.zeros((group_rows.size, self.num_actions), dtype=bool)  # [G, A]
        stopped = np.zeros(group_rows.size, dtype=bool)  # [G]
        for turn in range(int(sizes.max())):
            groups = np.flatnonzero(sizes > turn)
            members = order[starts[groups] + turn]  # lanes
            chosen = pick(groups, lane_simulation[members])
            stopped[groups] |= picked[groups, chosen]
            picked[groups, chosen] = True
            actions[members] = np.where(stopped[groups], -1, chosen)
        return actions

    def _virtual_visit_picker(self, group_rows: np.ndarray, group_nodes: np.ndarray):
        """A pick(groups, simulations) for PUCT and UCT roots: virtual visits that keep
        every mean (edge Q, the parent's mean behind first-play urgency) and only add to the
        counts, which shrinks the exploration bonus of the moves already picked; a virtual
        loss of -1 per pick spreads a wave of 16 lanes far wider than the one-leaf search's
        visits."""
        flat, config = self.flat, self.config
        visits = flat.edge_visits[group_nodes].astype(np.float64)  # [G, A]
        value_sums = flat.edge_value_sums[group_nodes]
        legal = flat.legal[group_nodes]
        node_visits = flat.visit_counts[group_nodes]  # [G]
        node_means = flat.value_sums[group_nodes] / np.maximum(node_visits, 1)
        virtual = np.zeros_like(visits)  # [G, A]

        def pick(groups: np.ndarray, simulations: np.ndarray) -> np.ndarray:
            seen = visits[groups] + virtual[groups]
            kept = value_sums[groups] * (seen / np.maximum(visits[groups], 1.0))
            total = node_visits[groups] + virtual[groups].sum(axis=1)
            if config.algorithm == "puct":
                scores = puct.puct_scores(seen, kept, self.root_prior[group_rows[groups]],
                                          legal[groups], total, node_means[groups] * total,
                                          config)
            else:
                scores = puct.ucb1_scores(seen, kept, legal[groups], total, config)
            chosen = np.argmax(scores, axis=1)
            virtual[groups, chosen] += 1.0
            return chosen

        return pick

    def _gumbel_root_picker(self, group_rows: np.ndarray, group_nodes: np.ndarray):
        """A pick(groups, simulations) for Gumbel roots: sequential halving's due rule, each
        lane at its own simulation index, the earlier lanes' picks counted as visits."""
        columns, legal, key, sigma, searched = self._gumbel_root_state(group_rows, group_nodes)
        searched = searched.astype(np.int64)  # [G, K], grows with the wave's picks
        last = max(self.max_simulations - 1, 0)

        def pick(groups: np.ndarray, simulations: np.ndarray) -> np.ndarray:
            rows = group_rows[groups]
            due = self.visit_table[self.budget_index[rows], self.considered[rows],
                                   np.minimum(simulations, last)]
            best = gumbel.due_choice(key[groups], sigma[groups], searched[groups], due,
                                     legal[groups])
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

    def _backup_lanes(self, lane_rows, path_lanes, path_nodes, path_actions, leaf_lanes,
                      leaf_nodes, leaf_values) -> None:
        """Back up each lane's leaf value along its path (signs as in `_backup`)."""
        tree, flat = self.tree, self.flat
        lane_mover = np.zeros(lane_rows.size, dtype=np.int8)  # [L] mover at each lane's leaf
        lane_value = np.zeros(lane_rows.size, dtype=np.float64)  # [L] value, leaf mover's view
        leaf_flat = tree.flat_index(lane_rows[leaf_lanes], leaf_nodes)
        lane_mover[leaf_lanes] = flat.mover[leaf_flat]
        lane_value[leaf_lanes] = leaf_values
        lanes = np.concatenate(path_lanes)
        nodes = np.concatenate(path_nodes)
        actions = np.concatenate(path_actions)
        same_mover = flat.mover[nodes] == lane_mover[lanes]
        signed = np.where(same_mover, lane_value[lanes], -lane_value[lanes])
        edges = nodes * self.num_actions + actions
        np.add.at(flat.edge_visits_1d, edges, 1)
        np.add.at(flat.edge_value_sums_1d, edges, signed)
        np.add.at(flat.visit_counts, nodes, 1)
        np.add.at(flat.value_sums, nodes, signed)
        np.add.at(flat.visit_counts, leaf_flat, 1)
        np.add.at(flat.value_sums, leaf_flat, leaf_values)
