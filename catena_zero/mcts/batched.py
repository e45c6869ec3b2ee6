"""The batched MCTS runner: B trees searched together, one evaluate_fn call per simulation for
all leaves (`catena_zero.mcts.search.search` builds it and checks the inputs).

Each simulation descends every tree from its root (a loop over depth, vectorised over the
trees still descending), expands one leaf per tree with the real engine, evaluates all new
non-terminal leaves in one call (terminal leaves get the exact result) and backs the values
up, flipping the sign only where the mover changes along the path.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from catena_zero.mcts import gumbel, puct
from catena_zero.mcts.config import SearchConfig
from catena_zero.mcts.endgame import exact_endgame
from catena_zero.mcts.evaluation import EvaluateFn, Evaluation
from catena_zero.mcts.policy import masked_softmax
from catena_zero.mcts.tree import ROOT_INDEX, UNVISITED, FlatViews, Tree
from catena_zero.rules import BLACK, EMPTY, NO_ACTION, GameState


@dataclass
class SearchOutput:
    """Result of one batched search. Games already over get NO_ACTION and zero arrays."""

    action: np.ndarray  # [B] int64 chosen move (argmax visits, or the Gumbel choice)
    visit_counts: np.ndarray  # [B, A] int32 root visits per action (reused visits included)
    policy_target: np.ndarray  # [B, A] float32 Gumbel improved policy or visit distribution
    root_value: np.ndarray  # [B] float32 mean backed-up value at the root, mover's view
    q_values: np.ndarray  # [B, A] float32 completed Q (unvisited: mixed value), mover's view
    prior: np.ndarray  # [B, A] float32 network prior at the root (without noise)
    root_evaluation: Evaluation  # network output at the roots, batch B
    tree: Tree  # the searched trees (owned by this output; pass a rerooted copy back in)
    config: SearchConfig  # the settings used

    def reroot(self, actions: np.ndarray) -> Tree:
        """Trees re-rooted on the played `actions` [B], to pass as `search(..., tree=...)`.

        Call once per ply played (twice when an opponent also moved). NO_ACTION drops a game's
        tree, e.g. when a new game starts in that slot.
        """
        return self.tree.reroot(actions, max_nodes=self.config.tree_reuse_max_nodes)


class BatchedSearch:
    def __init__(self, engine, evaluate_fn: EvaluateFn, config: SearchConfig, rng,
                 deadline: float | None = None, progress_every: float = 1.0,
                 on_progress: Callable[[SearchOutput], None] | None = None, *,
                 initial_nodes: int) -> None:
        self.engine = engine
        self.evaluate_fn = evaluate_fn
        self.config = config
        self.rng = rng
        self.num_actions = int(engine.rules.board.num_actions)
        self.deadline = deadline  # time.monotonic() after which no simulation starts
        self.progress_every = float(progress_every)  # seconds between on_progress calls
        self.on_progress = on_progress
        self.initial_nodes = initial_nodes  # nodes a tree starts with (it grows past them)

    # ----------------------------------------------------------------------------- setup
    def run(self, states: GameState, tree: Tree | None, budget: np.ndarray) -> SearchOutput:
        config = self.config
        batch_size = int(states.to_move.shape[0])
        self.budget = budget  # [B] simulations of each game
        self.max_simulations = int(budget.max(initial=0))
        needed = min(self.max_simulations, self.initial_nodes) + 1
        if tree is None:
            tree = Tree.allocate(states, needed, self.num_actions)
        else:
            tree = self._adopt(tree, states)
        self.tree = tree
        self.flat = FlatViews(tree)

        root_evaluation = self._expand_roots(states)
        self.search_rows = np.flatnonzero((tree.num_nodes > 0) & ~states.terminal)
        rows = self.search_rows
        root_legal = tree.legal[:, ROOT_INDEX]
        root_prior = tree.prior[:, ROOT_INDEX]
        self.visits_before = tree.edge_visits[:, ROOT_INDEX].copy()  # [B, A]
        if config.algorithm == "puct":
            self.root_prior = root_prior.copy()
            self.root_prior[rows] = puct.noisy_root_prior(
                root_prior[rows], root_legal[rows], config, self.rng
            )
        if config.algorithm == "gumbel":
            self.root_logits = gumbel.prior_logits(root_prior, root_legal)  # [B, A]
            self.gumbel_noise = np.zeros((batch_size, self.num_actions))
            if config.gumbel_scale > 0:
                self.gumbel_noise[rows] = config.gumbel_scale * self.rng.gumbel(
                    size=(rows.size, self.num_actions)
                )
            self.considered = gumbel.num_considered(root_legal, config)  # [B]
            self._gumbel_visit_tables(budget)
            self._gumbel_root_columns(root_legal)
        self.states, self.root_evaluation = states, root_evaluation
        self.next_report = time.monotonic() + self.progress_every
        self._simulate_all(rows, budget)
        return self._output(states, root_evaluation)

    def _simulate_all(self, rows: np.ndarray, budget: np.ndarray) -> None:
        """Run the simulations of trees `rows` [R], one leaf per tree per network call."""
        for simulation in range(self.max_simulations):
            self.simulating = rows[budget[rows] > simulation]  # trees with budget left
            if self.simulating.size == 0:
                break
            self._ensure_capacity(1)
            self._simulate(simulation)
            if self._tick():
                break

    def _ensure_capacity(self, extra: int) -> None:
        """Grow the trees (doubling) when `extra` more nodes might not fit; a search sized by
        a time bound can have a budget far beyond what it will use."""
        if self.max_simulations <= self.initial_nodes:
            return  # the trees were sized for the whole budget (self-play always is)
        needed = int(self.tree.num_nodes.max(initial=0)) + extra
        if needed > self.tree.capacity:
            self.tree = self.tree.with_capacity(max(needed, 2 * self.tree.capacity))
            self.flat = FlatViews(self.tree)

    def _tick(self) -> bool:
        """Report progress when due; True once the deadline has passed."""
        if self.deadline is None and self.on_progress is None:
            return False
        now = time.monotonic()
        if self.on_progress is not None and now >= self.next_report:
            self.on_progress(self._output(self.states, self.root_evaluation))
            self.next_report = time.monotonic() + self.progress_every
        return self.deadline is not None and now >= self.deadline

    def _gumbel_visit_tables(self, budget: np.ndarray) -> None:
        """One sequential-halving table per distinct budget: `visit_table[budget_index[b],
        considered, simulation]` is the visit count due at that simulation of game b."""
        distinct, self.budget_index = np.unique(budget, return_inverse=True)
        max_considered = self.config.max_considered_actions
        tables = np.zeros((distinct.size, max_considered + 1, max(self.max_simulations, 1)),
                          dtype=np.int32)
        for index, simulations in enumerate(distinct):
            if simulations > 0:
                tables[index, :, :simulations] = gumbel.considered_visit_table(
                    max_considered, int(simulations))
        self.visit_table = tables

    def _gumbel_root_columns(self, root_legal: np.ndarray) -> None:
        """The root actions the Gumbel root rule can pick, so each simulation scores [B, K]
        columns instead of [B, A]: the top `max_considered_actions` by g + logits, plus the
        actions visited in a reused tree. The first halving phase visits the top-k by
        g + logits (unvisited actions share one completed Q), and later phases only revisit
        actions visited in this search, so nothing outside these columns is ever due.
        """
        reused = self.visits_before > 0  # [B, A]
        key = self.gumbel_noise + self.root_logits  # -inf on illegal actions
        width = self.config.max_considered_actions + int(reused.sum(axis=1).max(initial=0))
        width = min(width, self.num_actions)
        rank = np.where(reused, np.inf, key)
        columns = np.argsort(-rank, axis=1, kind="stable")[:, :width]  # [B, K]
        self.root_columns = columns
        self.root_columns_legal = np.take_along_axis(root_legal, columns, axis=1)
        self.root_columns_key = np.take_along_axis(key, columns, axis=1)
        self.root_columns_before = np.take_along_axis(self.visits_before, columns, axis=1)
        legal_outside = root_legal.sum(axis=1) - self.root_columns_legal.sum(axis=1)
        self.root_unvisited_elsewhere = legal_outside > 0  # [B]

    def _adopt(self, tree: Tree, states: GameState) -> Tree:
        """Check a reused tree against the positions and make room for this search."""
        batch_size = int(states.to_move.shape[0])
        if tree.batch_size != batch_size or tree.num_actions != self.num_actions:
            raise ValueError(
                f"reused tree has batch {tree.batch_size} and {tree.num_actions} actions; "
                f"expected batch {batch_size} and {self.num_actions} actions"
            )
        reused = np.flatnonzero(tree.num_nodes > 0)
        if reused.size:
            old_roots = tree.states.take(tree.flat_index(reused, ROOT_INDEX))
            same = (old_roots.stones == states.stones[reused]).all(axis=1)
            for name in ("to_move", "stones_left", "button", "move_number", "komi"):
                same &= getattr(old_roots, name) == getattr(states, name)[reused]
            if not same.all():
                game = int(reused[np.flatnonzero(~same)[0]])
                raise ValueError(
                    f"reused tree of game {game} is rooted at a different position than "
                    f"states[{game}]; reroot it on the moves played, or drop it with NO_ACTION"
                )
        needed = max(int(tree.num_nodes.max(initial=0)), 1) + min(self.max_simulations,
                                                                   self.initial_nodes)
        if tree.capacity < needed:
            tree = tree.with_capacity(needed)
        fresh = np.flatnonzero(tree.num_nodes == 0)
        if fresh.size:
            tree.states.put(tree.flat_index(fresh, ROOT_INDEX), states.take(fresh))
        return tree

    def _expand_roots(self, states: GameState) -> Evaluation:
        """Evaluate every live root; expand the roots of empty trees."""
        tree = self.tree
        batch_size = int(states.to_move.shape[0])
        live = np.flatnonzero(~states.terminal)
        if live.size == 0:
            return Evaluation.concatenate_into(batch_size, [], self.num_actions)
        live_states = states if live.size == batch_size else states.take(live)
        evaluation = self._evaluate(live_states)
        # The score term of the utility is centred on each root's expected margin (its mover's
        # view), so it still ranks moves where the win probability is already near 0 or 1.
        self.root_score = np.zeros(batch_size)  # [B]
        self.root_mover = states.to_move.copy()  # [B]
        if self.config.score_utility_weight > 0 and self.config.score_utility_centered:
            self.root_score[live] = evaluation.score
        fresh = tree.num_nodes[live] == 0
        rows = live[fresh]
        if rows.size:
            legal = self.engine.legal_actions(live_states)[fresh]
            tree.legal[rows, ROOT_INDEX] = legal
            tree.prior[rows, ROOT_INDEX] = masked_softmax(evaluation.policy_logits[fresh], legal)
            score = None if evaluation.score is None else evaluation.score[fresh]
            value = self._utility(rows, evaluation.value[fresh], score, states.to_move[rows])
            tree.raw_value[rows, ROOT_INDEX] = value
            tree.value_sums[rows, ROOT_INDEX] = value
            tree.visit_counts[rows, ROOT_INDEX] = 1
            tree.mover[rows, ROOT_INDEX] = states.to_move[rows]
            tree.num_nodes[rows] = 1
        return Evaluation.concatenate_into(batch_size, [(live, evaluation)], self.num_actions)

    def _evaluate(self, states: GameState) -> Evaluation:
        evaluation = self.evaluate_fn(states)
        evaluation.check(int(states.to_move.shape[0]), self.num_actions)
        evaluation.value = np.minimum(
            np.maximum(np.asarray(evaluation.value, np.float32), -1.0), 1.0
        )
        evaluation.policy_logits = np.asarray(evaluation.policy_logits, dtype=np.float32)
        if self.config.score_utility_weight > 0:
            batch_size = int(states.to_move.shape[0])
            if evaluation.score is None or np.shape(evaluation.score) != (batch_size,):
                shape = None if evaluation.score is None else np.shape(evaluation.score)
                raise ValueError(
                    f"SearchConfig.score_utility_weight > 0 needs Evaluation.score of shape "
                    f"{(batch_size,)}; the evaluate_fn gave {shape}"
                )
            evaluation.score = np.asarray(evaluation.score, dtype=np.float64)
        if self.config.exact_endgame_cells > 0:
            self._exact_endgame(states, evaluation)
        return evaluation

    def _exact_endgame(self, states: GameState, evaluation: Evaluation) -> None:
        """Replace the net's value (and score) by the exact ones where few cells are left."""
        small = states.legal_cells.sum(axis=1) <= self.config.exact_endgame_cells  # [B]
        rows = np.flatnonzero(small & ~states.terminal)
        if rows.size == 0:
            return
        value, margin = exact_endgame(self.engine.rules).mover_values(states, rows)
        evaluation.value[rows] = value  # _evaluate's clipped copy, not the evaluate_fn's array
        if evaluation.score is not None:
            evaluation.score = np.array(evaluation.score, dtype=np.float64)
            evaluation.score[rows] = margin

    def _utility(self, rows: np.ndarray, value: np.ndarray, score: np.ndarray | None,
                 mover: np.ndarray) -> np.ndarray:
        """What the search maximises, for leaves of trees `rows` seen by `mover`.  # [R]

        (1 - w) value + w tanh((score - centre) / scale): the value alone when w = 0; the
        centre is the root's expected margin turned to `mover`'s view (0 when not centred).
        """
        config = self.config
        weight = config.score_utility_weight
        value = np.asarray(value, dtype=np.float64)
        if weight == 0:
            return value
        sign = np.where(mover == self.root_mover[rows], 1.0, -1.0)
        centre = sign * self.root_score[rows]
        term = np.tanh((score - centre) / config.score_utility_scale)
        return (1.0 - weight) * value + weight * term

    # ------------------------------------------------------------------------ simulation
    def _simulate(self, simulation: int) -> None:
        """Descend, expand one leaf per tree, evaluate all new leaves at once, back up."""
        tree = self.tree
        capacity = tree.capacity
        rows = self.simulating
        nodes = rows * capacity  # flat index of each tree's current node (the root)
        path_rows, path_nodes, path_actions = [], [], []
        expand_parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        revisit_parts: list[tuple[np.ndarray, np.ndarray]] = []
        depth = 0
        while rows.size:
            actions = self._choose(rows, nodes, depth, simulation)
            path_rows.append(rows)
            path_nodes.append(nodes)
            path_actions.append(actions)
            child, child_flat, unexpanded, at_terminal = self._follow(rows, nodes, actions)
            if unexpanded.any():
                expand_parts.append(
                    (rows[unexpanded], nodes[unexpanded] - rows[unexpanded] * capacity,
                     actions[unexpanded])
                )  # fmt: skip
            if at_terminal.any():
                revisit_parts.append((rows[at_terminal], child[at_terminal]))
            descend = ~(unexpanded | at_terminal)
            rows, nodes = rows[descend], child_flat[descend]
            depth += 1

        leaf_rows, leaf_nodes, leaf_values = [], [], []
        if expand_parts:
            expand_rows, parents, actions = (
                np.concatenate(part) for part in zip(*expand_parts, strict=True)
            )
            new_nodes, values = self._expand(expand_rows, parents, actions)
            leaf_rows.append(expand_rows)
            leaf_nodes.append(new_nodes)
            leaf_values.append(values)
        for revisit_rows, revisit_nodes in revisit_parts:
            leaf_rows.append(revisit_rows)
            leaf_nodes.append(revisit_nodes)
            leaf_values.append(tree.raw_value[revisit_rows, revisit_nodes].astype(np.float64))
        self._backup(
            np.concatenate(path_rows),
            np.concatenate(path_nodes),
            np.concatenate(path_actions),
            np.concatenate(leaf_rows),
            np.concatenate(leaf_nodes),
            np.concatenate(leaf_values),
        )

    def _follow(self, rows: np.ndarray, nodes: np.ndarray, actions: np.ndarray):
        """The edge `actions[k]` out of flat node `nodes[k]` of tree `rows[k]`: (child node
        index [R] (UNVISITED where not expanded), its flat index [R], unexpanded [R] bool,
        at_terminal [R] bool: an expanded child where the game is over)."""
        flat = self.flat
        child = flat.children[nodes, actions]
        unexpanded = child == UNVISITED
        child_flat = rows * self.tree.capacity + child
        at_terminal = ~unexpanded & flat.terminal[np.where(unexpanded, 0, child_flat)]
        return child, child_flat, unexpanded, at_terminal

    def _choose(self, rows: np.ndarray, nodes: np.ndarray, depth: int, simulation: int):
        """Action to descend at flat node `nodes[k]` of tree `rows[k]`.  # [R] int"""
        flat, config = self.flat, self.config
        if depth == 0 and config.algorithm == "gumbel":
            return self._choose_gumbel_root(rows, nodes, simulation)
        visits = flat.edge_visits[nodes]
        value_sums = flat.edge_value_sums[nodes]
        legal = flat.legal[nodes]
        if config.algorithm == "uct":
            scores = puct.ucb1_scores(visits, value_sums, legal, flat.visit_counts[nodes], config)
        elif config.algorithm == "puct":
            prior = self.root_prior[rows] if depth == 0 else flat.prior[nodes]
            scores = puct.puct_scores(
                visits, value_sums, prior, legal, flat.visit_counts[nodes],
                flat.value_sums[nodes], config,
            )  # fmt: skip
        else:
            scores = gumbel.interior_scores(
                visits, value_sums, flat.prior[nodes], legal, flat.raw_value[nodes], config
            )
        return np.argmax(scores, axis=1)

    def _choose_gumbel_root(self, rows: np.ndarray, nodes: np.ndarray, simulation: int):
        """Sequential halving at the roots, scored on the root columns only.  # [R] int"""
        columns, legal, key, sigma, search_visits = self._gumbel_root_state(rows, nodes)
        considered_visit = self.visit_table[self.budget_index[rows], self.considered[rows],
                                            simulation]
        best = gumbel.due_choice(key, sigma, search_visits, considered_visit, legal)
        return columns[np.arange(rows.size), best]

    def _gumbel_root_state(self, rows: np.ndarray, nodes: np.ndarray):
        """What the root rule scores at roots `nodes` (flat) of trees `rows`, on the root
        columns: (columns, legal, key g + logits, sigma(q), visits gained in this search),
        each [R, K]."""
        flat = self.flat
        columns = self.root_columns[rows]  # [R, K]
        edges = (nodes * self.num_actions)[:, None] + columns
        visits = flat.edge_visits_1d[edges]
        legal = self.root_columns_legal[rows]
        sigma, _ = gumbel.completed_sigma(
            visits, flat.edge_value_sums_1d[edges], flat.prior_1d[edges], legal,
            flat.raw_value[nodes], self.config, self.root_unvisited_elsewhere[rows],
        )  # fmt: skip
        search_visits = visits - self.root_columns_before[rows]
        return columns, legal, self.root_columns_key[rows], sigma, search_visits

    def _expand(self, rows: np.ndarray, parents: np.ndarray, actions: np.ndarray):
        """Create child `actions[k]` of node `parents[k]` in tree `rows[k]`; evaluate it.

        Returns (new node indices [K], leaf values [K] float64 from the new node's mover's view).
        """
        tree = self.tree
        new_nodes = self._allocate(rows)
        parent_flat = tree.flat_index(rows, parents)
        new_flat = tree.flat_index(rows, new_nodes)
        child_states = tree.states.take(parent_flat)
        self.engine.step(child_states, actions)
        tree.states.put(new_flat, child_states)
        flat = self.flat
        flat.children[parent_flat, actions] = new_nodes
        flat.parent[new_flat] = parents
        flat.action_from_parent[new_flat] = actions
        terminal = np.asarray(child_states.terminal, dtype=bool)
        # A finished game has no meaningful player to move; score it for the last chooser.
        mover = np.where(terminal, flat.mover[parent_flat], child_states.to_move).astype(np.int8)
        flat.mover[new_flat] = mover
        flat.terminal[new_flat] = terminal
        values = np.zeros(rows.size, dtype=np.float64)
        ended = np.flatnonzero(terminal)
        if ended.size:
            ended_states = child_states if ended.size == rows.size else child_states.take(ended)
            result = self.engine.result(ended_states)
            winner = result.winner
            outcome = np.where(winner == EMPTY, 0.0, np.where(winner == mover[ended], 1.0, -1.0))
            margin = np.where(mover[ended] == BLACK, 1.0, -1.0) * result.margin  # mover's view
            values[ended] = self._utility(rows[ended], outcome, margin, mover[ended])
        live = np.flatnonzero(~terminal)
        if live.size:
            live_states = child_states if live.size == rows.size else child_states.take(live)
            legal = self.engine.legal_actions(live_states)
            evaluation = self._evaluate(live_states)
            live_flat = new_flat[live]
            flat.legal[live_flat] = legal
            flat.prior[live_flat] = masked_softmax(evaluation.policy_logits, legal)
            values[live] = self._utility(rows[live], evaluation.value, evaluation.score,
                                         mover[live])
        flat.raw_value[new_flat] = values
        return new_nodes, values

    def _allocate(self, rows: np.ndarray) -> np.ndarray:
        """The next free node of each tree in `rows` (distinct trees).  # [K] int32"""
        new_nodes = self.tree.num_nodes[rows].copy()
        self.tree.num_nodes[rows] += 1
        return new_nodes

    def _backup(self, path_rows, path_nodes, path_actions, leaf_rows, leaf_nodes, leaf_values):
        """Add each leaf value along its path, negated where the mover differs from the leaf's.

        `path_*` hold every (tree, flat node, action) step of this simulation; a path visits a
        node once and trees are distinct, so the flat indices are unique and `+=` is exact.
        """
        tree, flat = self.tree, self.flat
        leaf_flat = tree.flat_index(leaf_rows, leaf_nodes)
        leaf_mover = np.zeros(tree.batch_size, dtype=np.int8)
        leaf_mover[leaf_rows] = flat.mover[leaf_flat]
        value = np.zeros(tree.batch_size, dtype=np.float64)
        value[leaf_rows] = leaf_values
        same_mover = flat.mover[path_nodes] == leaf_mover[path_rows]
        signed = np.where(same_mover, value[path_rows], -value[path_rows])
        edges = path_nodes * self.num_actions + path_actions
        flat.edge_visits_1d[edges] += 1
        flat.edge_value_sums_1d[edges] += signed
        flat.visit_counts[path_nodes] += 1
        flat.value_sums[path_nodes] += signed
        flat.visit_counts[leaf_flat] += 1
        flat.value_sums[leaf_flat] += leaf_values

    # ---------------------------------------------------------------------------- output
    def _output(self, states: GameState, root_evaluation: Evaluation) -> SearchOutput:
        tree, config = self.tree, self.config
        batch_size = tree.batch_size
        searched = np.zeros(batch_size, dtype=bool)
        searched[self.search_rows] = True
        visits = tree.edge_visits[:, ROOT_INDEX]
        legal = tree.legal[:, ROOT_INDEX] & searched[:, None]
        prior = tree.prior[:, ROOT_INDEX]
        sigma, completed = gumbel.completed_sigma(
            visits, tree.edge_value_sums[:, ROOT_INDEX], prior, legal,
            tree.raw_value[:, ROOT_INDEX], config,
        )  # fmt: skip
        if config.algorithm == "gumbel":
            search_visits = visits - self.visits_before
            considered_visit = search_visits.max(axis=1)
            scores = gumbel.root_scores(
                self.gumbel_noise, self.root_logits, sigma, search_visits, considered_visit, legal
            )
            action = np.argmax(scores, axis=1)
            policy = gumbel.improved_policy(self.root_logits, sigma, legal).astype(np.float32)
        else:
            action = puct.most_visited(visits, completed, legal)
            policy = puct.visit_policy(visits)
        root_visits = np.maximum(tree.visit_counts[:, ROOT_INDEX], 1)
        root_value = tree.value_sums[:, ROOT_INDEX] / root_visits
        return SearchOutput(
            action=np.where(searched, action, NO_ACTION).astype(np.int64),
            visit_counts=np.where(searched[:, None], visits, 0).astype(np.int32),
            policy_target=np.where(searched[:, None], policy, 0.0).astype(np.float32),
            root_value=np.where(searched, root_value, 0.0).astype(np.float32),
            q_values=np.where(legal, completed, 0.0).astype(np.float32),
            prior=np.where(searched[:, None], prior, 0.0).astype(np.float32),
            root_evaluation=root_evaluation,
            tree=tree,
            config=config,
        )
