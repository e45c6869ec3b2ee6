"""Batched self-play: B games advance together, one batched search per move for all of them.

Each move every game draws whether it gets a full search (recorded, trained on) or a cheap
one (played, not recorded): playout cap randomisation (KataGo). Recorded positions wait in a
pending buffer until their game ends; then the final targets (win/draw/loss and score margin
from the side to move's view, final ownership) are filled in for all of them at once. A
finished game is replaced by a new one with a freshly drawn komi until the requested number
of games has started, so the batch stays full; then the batch drains. With
`start_positions`, a share of the new games starts inside a recorded game instead of on the
empty board (`selfplay/start_positions.py`). With `opponent_share`, a share of the new games
is played against an opponent that is not the current network (a league): one of the agents
given (anything with the arena's `select_actions(engine, states, rng)`: a rollout MCTS
`uct:N`, a past checkpoint; the pipeline builds them from `opponents`), drawn a game, takes
one colour, drawn at random. Only the network's moves are recorded, with the game's real
outcome, so the net learns the positions such players lead it into and what they are worth
(`stats.opponent_score`: the net's score in those games, `stats.opponent_results` by
opponent).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field

import numpy as np

from catena_zero.mcts.search import sample_actions, search
from catena_zero.rules import BLACK, EMPTY, NO_ACTION, WHITE, Engine, GameState, observe
from catena_zero.selfplay.config import SelfPlayConfig
from catena_zero.selfplay.records import (
    PositionRecords,
    finalise_records,
    symmetry_augment,
    to_samples,
)
from catena_zero.selfplay.start_positions import StartPositions, load_start_positions


@dataclass(frozen=True)
class SampleGame:
    """One self-play game kept whole (for a game record): its serial, komi and actions."""

    game_id: int  # serial of the game in its play_games call
    komi: int
    actions: tuple[int, ...]  # every action, in order
    opponent: int = EMPTY  # colour an opponent played (EMPTY: the net played both colours)
    opponent_name: str = ""  # that opponent's name ("": none)


@dataclass
class SelfPlayStats:
    """What one `play_games` call produced."""

    games: int = 0  # games finished
    positions: int = 0  # positions recorded (before symmetry copies)
    moves: int = 0  # moves played in all games (full and cheap searches)
    evaluations: int = 0  # search evaluations, batch x (sims + 1): an upper bound on net calls
    black_wins: int = 0  # finished games won by Black
    draws: int = 0  # finished games drawn
    start_games: int = 0  # games started inside a recorded game (start_positions)
    opponent_games: int = 0  # finished games against an opponent (opponent_share)
    opponent_score: float = 0.0  # the network's wins + draws / 2 in those games
    # opponent name -> [games, the network's score]
    opponent_results: dict[str, list[float]] = field(default_factory=dict)
    game_lengths: list[int] = field(default_factory=list)  # actions per finished game
    komis: list[int] = field(default_factory=list)  # komi of each finished game
    sample_games: list[SampleGame] = field(default_factory=list)  # kept whole, by game id
    seconds: float = 0.0  # wall-clock time of the call

    @property
    def black_win_rate(self) -> float:
        decided = self.games - self.draws
        return self.black_wins / decided if decided else 0.5

    @property
    def mean_game_length(self) -> float:
        return float(np.mean(self.game_lengths)) if self.game_lengths else 0.0


class KomiSampler:
    """Draws integer komis around a fair-komi estimate, with occasional uniform wide draws."""

    def __init__(self, engine: Engine, config: SelfPlayConfig, fair_komi: float | None = None):
        self.low, self.high = engine.rules.komi_range
        self.config = config
        self.fair_komi = float(self.low if fair_komi is None else fair_komi)
        if config.fixed_komi is not None:
            engine.rules.validate_komi(config.fixed_komi)

    def sample(self, count: int, rng: np.random.Generator) -> np.ndarray:
        """Komis for `count` new games.  # [count] int32"""
        if self.config.fixed_komi is not None:
            return np.full(count, self.config.fixed_komi, dtype=np.int32)
        if self.low == self.high:
            return np.full(count, self.low, dtype=np.int32)
        centre = rng.normal(self.fair_komi, self.config.komi_spread, size=count)
        wide = rng.integers(self.low, self.high + 1, size=count)
        komi = np.where(rng.random(count) < self.config.komi_wide_probability, wide,
                        np.rint(centre))
        return np.clip(komi, self.low, self.high).astype(np.int32)


class SelfPlay:
    """Plays batches of self-play games with a batched search and an EvaluateFn."""

    def __init__(self, engine: Engine, evaluate_fn, search_config, config: SelfPlayConfig,
                 komi_sampler: KomiSampler | None = None, opponents=None):
        """`opponents`: the agents of `config.opponents`, in order (objects with
        `select_actions(engine, states, rng)` and a `name`); needed when opponents play on
        this engine's side."""
        self.engine = engine
        self.evaluate_fn = evaluate_fn
        self.config = config
        self.search_config = dataclasses.replace(
            search_config, num_simulations=max(config.full_simulations, config.cheap_simulations))
        self.komi_sampler = komi_sampler or KomiSampler(engine, config)
        self.start_positions = self._start_positions()
        self.opponents = list(opponents or []) if config.opponents_play(engine.rules.side) \
            else []
        if config.opponents_play(engine.rules.side) and not self.opponents:
            raise ValueError("opponent_share > 0 needs the opponents' agents (the pipeline "
                             "builds them from selfplay.opponents)")

    def _start_positions(self) -> StartPositions | None:
        """The recorded games new games may start inside: None when the share is 0 or the
        file's games are of another side or game type than this engine's."""
        if self.config.start_share == 0.0:
            return None
        positions = load_start_positions(self.config.start_positions,
                                         self.config.start_lost_only)
        return positions if positions.applies_to(self.engine.rules) else None

    def play_games(self, num_games: int, rng: np.random.Generator, sample_games: int = 0):
        """Play `num_games` complete games; returns (Samples, SelfPlayStats).

        The Samples hold every full-search position (times `symmetry_copies` when augmenting)
        with its final targets. The first `sample_games` games (by serial) are also kept
        whole in `stats.sample_games`, sorted by serial.
        """
        if num_games < 1:
            raise ValueError(f"num_games must be >= 1, got {num_games}")
        start_time = time.perf_counter()
        engine = self.engine
        batch = min(self.config.games_in_batch, num_games)
        stats = SelfPlayStats()
        state, prefixes = self._new_games(batch, rng, stats)
        # [B] colour an opponent plays in each slot's game (EMPTY: none) and which one
        opponent_colour, opponent_index = self._draw_opponents(batch, rng)
        game_ids = np.arange(batch)  # [B] serial of the game in each slot
        started = batch
        active = np.ones(batch, dtype=bool)  # [B] slot holds a game still to be played
        records = PositionRecords(engine.rules.board, self.config.search_value_weight)
        finished_chunks = []
        reuse = self.config.tree_reuse
        tree = None  # [B] trees kept between moves when reusing
        # slot -> actions of a sample game in it (few games: a Python list each is cheap)
        # (a game started inside a recorded one begins with the recorded moves before it)
        kept = {int(slot): prefixes(slot) for slot in range(batch)
                if game_ids[slot] < sample_games}
        while active.any():
            moving = np.flatnonzero(active & ~state.terminal)  # [M]
            actions = np.full(batch, NO_ACTION, dtype=np.int64)
            theirs = opponent_colour[moving] == state.to_move[moving]  # [M] opponent to move
            if theirs.any():
                opponent_slots = moving[theirs]
                actions[opponent_slots] = self._opponent_actions(
                    state.take(opponent_slots), opponent_index[opponent_slots], rng)
            slots = moving[~theirs]  # [S] the network to move
            if slots.size:
                output = self._network_moves(state, slots, game_ids, tree, records, actions,
                                             stats, rng)
                if reuse:  # (no opponents then) the whole batch was searched: rows are slots
                    tree = output.reroot(actions)
            for slot, kept_actions in kept.items():
                if actions[slot] != NO_ACTION:
                    kept_actions.append(int(actions[slot]))
            engine.step(state, actions)
            stats.moves += moving.size
            done = np.flatnonzero(active & state.terminal)
            if done.size:
                self._keep_samples(state, done, game_ids, kept, stats, opponent_colour,
                                   opponent_index)
                self._count_opponent_games(state, done, opponent_colour, opponent_index, stats)
                finished_chunks.append(self._finish(state, done, game_ids, records, stats))
                still_to_start = num_games - started
                restart = done[:still_to_start]
                if restart.size:
                    fresh, prefixes = self._new_games(restart.size, rng, stats)
                    state.put(restart, fresh)
                    opponent_colour[restart], opponent_index[restart] = \
                        self._draw_opponents(restart.size, rng)
                    game_ids[restart] = np.arange(started, started + restart.size)
                    started += restart.size
                    kept.update({int(slot): prefixes(row) for row, slot in enumerate(restart)
                                 if game_ids[slot] < sample_games})
                    if tree is not None:
                        tree.num_nodes[restart] = 0  # a new game: its old tree is dropped
                active[done[still_to_start:] if still_to_start > 0 else done] = False
        samples = to_samples(finalise_records(finished_chunks, engine.rules.board))
        if self.config.augment_symmetries:
            samples = symmetry_augment(samples, engine.rules.board, self.config.symmetry_copies,
                                       rng)
        stats.sample_games.sort(key=lambda game: game.game_id)
        stats.seconds = time.perf_counter() - start_time
        stats.positions = int(sum(chunk["positions"] for chunk in finished_chunks))
        return samples, stats

    def _network_moves(self, state: GameState, slots: np.ndarray, game_ids: np.ndarray, tree,
                       records: PositionRecords, actions: np.ndarray, stats: SelfPlayStats,
                       rng: np.random.Generator):
        """The network's moves in the games of `slots` [S] into `actions` [B], its full
        searches recorded; returns the search's output. Each move draws a full search
        (recorded) or a cheap one; both share one search call, so each network call holds
        the leaves of every game still searching, not two half batches."""
        engine = self.engine
        full = rng.random(slots.size) < self.config.full_search_probability  # [S]
        budget = np.where(full, self.config.full_simulations, self.config.cheap_simulations)
        sub_state = state.take(slots)
        output, rows = self._search(state, sub_state, slots, budget, tree, rng)
        stats.evaluations += int((budget + 1).sum())
        legal = engine.legal_actions(sub_state)  # [S, A]
        policy_target = output.policy_target[rows]  # [S, A]
        actions[slots] = self._select_actions(sub_state, output.action[rows], policy_target,
                                              legal, rng)
        if full.any():
            recorded = sub_state.take(np.flatnonzero(full))
            planes, globals_ = observe(engine, recorded)
            records.add(planes, globals_, policy_target[full], legal[full],
                        recorded.to_move, game_ids[slots[full]],
                        output.root_value[rows][full])
        return output

    def _draw_opponents(self, count: int, rng: np.random.Generator):
        """For `count` new games: the colour an opponent plays (EMPTY: none) and which of
        the opponents (-1: none), drawn with probability `opponent_share` (nothing is drawn
        from `rng` when opponents do not play here, so such self-play plays as it always
        did). Returns (colour [count] int8, index [count] int64)."""
        colour = np.full(count, EMPTY, dtype=np.int8)
        index = np.full(count, -1, dtype=np.int64)
        if not self.opponents:
            return colour, index
        chosen = np.flatnonzero(rng.random(count) < self.config.opponent_share)  # [k]
        colour[chosen] = np.where(rng.random(chosen.size) < 0.5, BLACK, WHITE)
        index[chosen] = rng.integers(len(self.opponents), size=chosen.size)
        return colour, index

    def _opponent_actions(self, states: GameState, index: np.ndarray,
                          rng: np.random.Generator) -> np.ndarray:
        """The opponents' moves in `states` [K], game k played by opponent `index[k]`; the
        games of one opponent are searched together.  # [K] int64"""
        actions = np.full(index.size, NO_ACTION, dtype=np.int64)
        for which in np.unique(index).tolist():
            rows = np.flatnonzero(index == which)
            actions[rows] = self.opponents[which].select_actions(self.engine, states.take(rows),
                                                                 rng)
        return actions

    def _count_opponent_games(self, state: GameState, done: np.ndarray,
                              opponent_colour: np.ndarray, opponent_index: np.ndarray,
                              stats: SelfPlayStats) -> None:
        """Add the finished games of `done` [k] played against an opponent to the stats:
        their number and the network's score in them, in all and by opponent."""
        against = done[opponent_colour[done] != EMPTY]  # [j]
        if not against.size:
            return
        winner = np.asarray(self.engine.result(state.take(against)).winner)  # [j]
        network = np.where(opponent_colour[against] == BLACK, WHITE, BLACK)  # [j]
        points = (winner == network) + 0.5 * (winner == EMPTY)  # [j]
        stats.opponent_games += int(against.size)
        stats.opponent_score += float(points.sum())
        for which, score in zip(opponent_index[against].tolist(), points.tolist(), strict=True):
            games_and_score = stats.opponent_results.setdefault(self.opponents[which].name,
                                                                [0, 0.0])
            games_and_score[0] += 1
            games_and_score[1] += score

    def _new_games(self, count: int, rng: np.random.Generator, stats: SelfPlayStats):
        """`count` new games at freshly drawn komis, each started inside a recorded game
        with probability `start_share` (nothing more is drawn from `rng` without start
        positions, so such self-play plays as it always did). Returns (GameState [count],
        prefixes: row -> list of the recorded actions before that game's start)."""
        komi = self.komi_sampler.sample(count, rng)  # [count]
        state = self.engine.new_games(count, komi=komi)
        game = np.full(count, -1, dtype=np.int64)  # [count] recorded game started in, or -1
        ply = np.zeros(count, dtype=np.int64)  # [count] its moves before the start
        if self.start_positions is not None:
            chosen = np.flatnonzero(rng.random(count) < self.config.start_share)  # [k]
            if chosen.size:
                low, high = self.config.start_plies
                drawn = self.start_positions.draw(self.engine, komi[chosen], rng, low, high)
                state.put(chosen, drawn.state)
                game[chosen], ply[chosen] = drawn.games, drawn.plies
                stats.start_games += int(chosen.size)
        positions = self.start_positions

        def prefixes(row) -> list[int]:
            if game[row] < 0:
                return []
            return list(positions.prefix(int(game[row]), int(ply[row])))

        return state, prefixes

    def _keep_samples(self, state: GameState, done: np.ndarray, game_ids: np.ndarray,
                      kept: dict[int, list[int]], stats: SelfPlayStats,
                      opponent_colour: np.ndarray, opponent_index: np.ndarray) -> None:
        """Move the finished sample games of `done` [k] out of `kept` into the stats."""
        for slot in done.tolist():
            if slot in kept:
                which = int(opponent_index[slot])
                stats.sample_games.append(SampleGame(
                    int(game_ids[slot]), int(state.komi[slot]), tuple(kept.pop(slot)),
                    int(opponent_colour[slot]), self.opponents[which].name if which >= 0 else ""))

    def _search(self, state: GameState, sub_state: GameState, slots: np.ndarray,
                budget: np.ndarray, tree, rng: np.random.Generator):
        """Search the games in `slots` [S] (`sub_state`: their states) with `budget` [S]
        simulations each.

        Returns (SearchOutput, rows [S]: the output's row of each slot's game). With tree reuse
        the whole batch is searched, so a tree keeps its slot's row from move to move; the
        other slots hold finished games, which the search skips.
        """
        if not self.config.tree_reuse:
            output = search(self.engine, sub_state, self.evaluate_fn, self.search_config, rng,
                            simulations=budget)
            return output, np.arange(slots.size)
        batch_budget = np.zeros(int(state.to_move.shape[0]), dtype=np.int64)  # [B]
        batch_budget[slots] = budget
        output = search(self.engine, state, self.evaluate_fn, self.search_config, rng,
                        tree=tree, simulations=batch_budget)
        return output, slots

    def _select_actions(self, state: GameState, action: np.ndarray, policy_target: np.ndarray,
                        legal: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The search's `action` [S], or a sample of its `policy_target` [S, A] at the
        scheduled temperature (`legal` [S, A]: the legal mask of `state`)."""
        actions = np.asarray(action).astype(np.int64)  # [S]
        temperature = np.asarray(self.config.temperature(state.move_number), dtype=np.float64)
        sample = temperature > 1e-3
        if not sample.any():
            return actions
        policy = np.asarray(policy_target, dtype=np.float64)[sample]  # [m, A]
        policy = np.where(legal[sample], np.maximum(policy, 0.0), 0.0)
        actions[sample] = sample_actions(policy, temperature[sample], rng)
        return actions

    def _finish(self, state: GameState, done: np.ndarray, game_ids: np.ndarray,
                records: PositionRecords, stats: SelfPlayStats) -> dict:
        """Pop the finished games' pending positions and fill in their final targets."""
        finished = state.take(done)
        result = self.engine.result(finished)
        winner = np.asarray(result.winner)
        stats.games += done.size
        stats.black_wins += int((winner == BLACK).sum())
        stats.draws += int((winner == EMPTY).sum())
        stats.game_lengths.extend(np.asarray(finished.move_number).tolist())
        stats.komis.extend(np.asarray(finished.komi).tolist())
        return records.pop_finished(game_ids[done], winner, np.asarray(result.margin),
                                    np.asarray(finished.stones))
