"""Start positions of interest: self-play games that begin inside recorded games.

The net's own self-play never reaches the positions where outside players beat it (the
loss study of the side-6 player found 92% of its losses already lost with about 14 legal
cells left while its value still said it was winning). With `selfplay.start_positions` a
share of new self-play games starts from a position of such a recorded game instead of
the empty board, so the value and policy are trained there (KataGo's "start positions of
interest"). The moves played from there are ordinary training samples; the recorded moves
before the start are not.

The games file is the loss study's (`benchmarks/loss_study.py` writes it)::

    {"format": "catena_zero.loss_study_games", "format_version": 1,
     "track": "6/komi/standard",
     "matches": {"side6-uct1000": {"games": [{"actions": [57, 43, ...], "a_points": 0.0},
                                            ...]}, ...}}

`a_points` is the model's score in the game (0 lost, 0.5 drawn, 1 won). Every action
sequence is replayed with the batched engine once, when the file is read; a damaged or
foreign file raises StartPositionsError naming the file and what is wrong.
"""

from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from catena_zero.data.atomic import NotRegularFileError, read_regular_file
from catena_zero.rules import NO_ACTION, Engine, GameState, Rules, Track

FORMAT = "catena_zero.loss_study_games"
FORMAT_VERSION = 1
MAX_FILE_BYTES = 64 << 20  # 400 side-6 games take about 100 kB
LOST = 0.0  # a_points of a game the model lost


class StartPositionsError(ValueError):
    """A games file of start positions is missing, unreadable, or not a valid games file."""


@dataclass(frozen=True)
class StartDraw:
    """Positions drawn from a games file, batch first."""

    state: GameState  # [n] the positions, ready to play on
    games: np.ndarray  # int64 [n] row of each position's game in StartPositions.actions
    plies: np.ndarray  # int64 [n] moves of that game played to reach the position


class StartPositions:
    """The games of one track, their actions padded with NO_ACTION: `actions` int64
    [G, L] (L the longest game), `lengths` int64 [G]."""

    def __init__(self, track: Track, actions: np.ndarray, lengths: np.ndarray, source: str):
        self.track = track
        self.actions = actions  # [G, L]
        self.lengths = lengths  # [G]
        self.source = source  # the file they were read from, for messages

    @property
    def num_games(self) -> int:
        return int(self.lengths.shape[0])

    def applies_to(self, rules: Rules) -> bool:
        """Whether games of `rules` may start from these positions: the same side and game
        type (the moves are legal there; the scoring only changes the count at the end)."""
        track = Track.from_rules(rules)
        return track.side == self.track.side and track.game_type == self.track.game_type

    def draw(self, engine: Engine, komi: np.ndarray, rng: np.random.Generator,
             low_share: float = 0.5, high_share: float = 0.9) -> StartDraw:
        """One position for each komi of `komi` int [n]: a game drawn uniformly, then a ply
        drawn uniformly among the whole plies in [low_share, high_share] x its length, at
        most its length - 1 so that a move is left to play."""
        komi = np.asarray(komi).reshape(-1)
        games = rng.integers(self.num_games, size=komi.size)  # [n]
        lengths = self.lengths[games]  # [n]
        high = np.minimum(np.floor(high_share * lengths), lengths - 1).astype(np.int64)
        low = np.minimum(np.ceil(low_share * lengths), high).astype(np.int64)
        plies = rng.integers(low, high + 1) if komi.size else low  # [n]
        return StartDraw(self.replay(engine, games, plies, komi), games, plies)

    def replay(self, engine: Engine, games: np.ndarray, plies: np.ndarray,
               komi: np.ndarray) -> GameState:
        """New games at `komi` [n] with the first `plies` [n] moves of games `games` [n]
        played, ply by ply for the games that still have moves. `engine` plays the track
        the positions go to (`applies_to` its rules)."""
        games = np.asarray(games, dtype=np.int64)
        plies = np.asarray(plies, dtype=np.int64)
        state = engine.new_games(int(games.size), komi=komi)
        rows = self.actions[games]  # [n, L]
        for ply in range(int(plies.max(initial=0))):
            engine.step(state, np.where(ply < plies, rows[:, ply], NO_ACTION))
        return state

    def prefix(self, game: int, ply: int) -> tuple[int, ...]:
        """The first `ply` actions of game `game`, in order."""
        return tuple(int(action) for action in self.actions[game, :ply])


@functools.lru_cache(maxsize=8)
def _cached(path: str, lost_only: bool) -> StartPositions:
    return read_start_positions(path, lost_only)


def load_start_positions(path: str | os.PathLike, lost_only: bool = True) -> StartPositions:
    """`read_start_positions`, read once per process and path: every self-play call of a
    worker shares the positions (nothing changes them)."""
    return _cached(str(Path(path).expanduser().resolve()), bool(lost_only))


def read_start_positions(path: str | os.PathLike, lost_only: bool = True) -> StartPositions:
    """The games of the file at `path` (with `lost_only`, those the model lost: a_points 0),
    each replayed once; StartPositionsError naming the file and the problem."""
    path = Path(path)

    def refuse(problem: str) -> StartPositionsError:
        return StartPositionsError(f"start positions file {path}: {problem}")

    try:
        data = read_regular_file(path, MAX_FILE_BYTES)
    except FileNotFoundError:
        raise refuse("no such file") from None
    except NotRegularFileError as error:
        raise refuse(str(error.strerror)) from None
    except OSError as error:
        raise refuse(f"cannot be read: {error.strerror or error}") from None
    if len(data) > MAX_FILE_BYTES:
        raise refuse(f"larger than {MAX_FILE_BYTES} bytes")
    try:
        document = json.loads(data.decode("utf-8"), parse_constant=_refuse_constant)
    except UnicodeDecodeError as error:
        raise refuse(f"not UTF-8 text (byte {error.start})") from None
    except ValueError as error:
        raise refuse(f"not valid JSON: {error}") from None
    track, games = _games_of(document, refuse)
    kept = [(where, actions) for where, actions, points in games
            if points == LOST or not lost_only]
    if not kept:
        raise refuse("holds no game the model lost (a_points 0); start_lost_only=false "
                     "starts from every game" if lost_only else "holds no game")
    lengths = np.array([len(actions) for _, actions in kept], dtype=np.int64)  # [G]
    table = np.full((len(kept), int(lengths.max())), NO_ACTION, dtype=np.int64)  # [G, L]
    for row, (_, actions) in enumerate(kept):
        table[row, :len(actions)] = actions
    _check_replay(Engine(track.rules()), table, [where for where, _ in kept], refuse)
    return StartPositions(track, table, lengths, str(path))


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number of a games file")


def _games_of(document: object, refuse) -> tuple[Track, list[tuple[str, list[int], float]]]:
    """The track and every game's (where: its match and index, actions, a_points), in file
    order, checked for shape and type."""
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise refuse(f"not a games file (its format is not {FORMAT!r})")
    version = document.get("format_version")
    if version != FORMAT_VERSION:
        raise refuse(f"format version {version!r:.20} is not {FORMAT_VERSION}, the one this "
                     f"program reads")
    try:
        track = Track.parse(document.get("track"))
    except ValueError as error:
        raise refuse(f"track: {error}") from None
    matches = document.get("matches")
    if not isinstance(matches, dict) or not matches:
        raise refuse("matches must map one or more match names to their games")
    cells = track.rules().board.num_cells
    games = []
    for name, match in matches.items():
        if not isinstance(match, dict) or not isinstance(match.get("games"), list):
            raise refuse(f"match {name!r:.40} has no list of games")
        for index, game in enumerate(match["games"]):
            where = f"match {name!r:.40} game {index}"
            if not isinstance(game, dict):
                raise refuse(f"{where} is not an object")
            actions = game.get("actions")
            if not isinstance(actions, list) or not actions:
                raise refuse(f"{where}: actions must be a non-empty list")
            for ply, action in enumerate(actions):
                if (isinstance(action, bool) or not isinstance(action, int)
                        or not 0 <= action <= cells):
                    raise refuse(f"{where}: action {ply} is {action!r:.20}, not an action "
                                 f"0..{cells} of side {track.side}")
            points = game.get("a_points")
            if isinstance(points, bool) or points not in (0, 0.5, 1):
                raise refuse(f"{where}: a_points must be 0, 0.5 or 1, got {points!r:.20}")
            games.append((where, actions, float(points)))
    return track, games


def _check_replay(engine: Engine, table: np.ndarray, names: list[str], refuse) -> None:
    """Replay every game (`table` [G, L], NO_ACTION after its end) together; the first
    illegal action is refused, naming its match, game (`names` [G]) and ply."""
    count = int(table.shape[0])
    state = engine.new_games(count, komi=engine.rules.komi_range[0])
    rows = np.arange(count)
    for ply in range(table.shape[1]):
        actions = table[:, ply]  # [G]
        playing = actions != NO_ACTION
        legal = engine.legal_actions(state)[rows, np.where(playing, actions, 0)]  # [G]
        bad = np.flatnonzero(playing & ~legal)
        if bad.size:
            action = int(actions[bad[0]])
            raise refuse(f"{names[int(bad[0])]}: action {ply} "
                         f"({engine.board.action_name(action)}) is illegal "
                         f"{'after the game ended' if state.terminal[bad[0]] else 'there'}")
        engine.step(state, actions)
