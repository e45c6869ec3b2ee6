"""The JSON-lines protocol of `catena-zero analysis`: queries in, checked and replayed.

One JSON object per line (docs/reference/analysis.md). A query::

    {"id": "q1", "rules": "6/komi/standard", "komi": 7, "moves": ["F6", "E6"],
     "analyzeTurns": [0, 2], "maxVisits": 64, "include": {"ownership": true},
     "perspective": "black"}

`parse_query(obj, limits)` checks every field and returns a `Query`; anything wrong raises
`QueryError(message, field, query_id)`, whose `to_json()` is the error line. An illegal
move names its index and why (`catena_zero.rules.explain.refusal_reason`).
`parse_line(line)` reads one line: a `Query` or an `Action` (`query_version`,
`terminate`, `terminate_all`, `clear_cache`), after the bounds of
`catena_zero.play.analysis_input` (length, encoding, nesting, digits). What an error echoes
of the client's values is cut to 40 characters and escaped to ASCII (`echo`), and ids must
be valid text, so every line written back is short and valid UTF-8 JSON.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from catena_zero.play.analysis_input import (
    OverlongLine,
    QueryError,
    echo,
    is_text,
    load_line,
    shown,
)
from catena_zero.rules import Engine, GameState, Rules, Track
from catena_zero.rules.explain import refusal_reason

QUERY_FIELDS = ("id", "rules", "side", "komi", "moves", "analyzeTurns", "maxVisits",
                "maxTime", "reportDuringSearchEvery", "include", "perspective")
MAX_SECONDS = 3600.0  # the longest reporting interval a query may ask
# Partial answers come at most this often: a smaller reportDuringSearchEvery is rounded up
# to it (as KataGo does), since each partial answer costs a line of up to tens of KB.
MIN_REPORT_SECONDS = 0.1
INCLUDE_KEYS = ("ownership", "policy", "pv")
INCLUDE_DEFAULTS = {"ownership": False, "policy": False, "pv": True}
PERSPECTIVES = ("side to move", "black", "white")
ACTIONS = ("query_version", "terminate", "terminate_all", "clear_cache")
DEFAULT_RULES = "komi/standard"
NAME_CHARS = 40  # a move, game type or scoring name longer than this is none (never echoed)


@dataclass(frozen=True)
class QueryLimits:
    """What a query may ask: its default and largest visit count, and its longest maxTime
    (AnalysisConfig's visits, max_visits and max_time)."""

    default_visits: int = 64
    max_visits: int = 5_000
    max_time: float = 60.0


@dataclass
class Query:
    """A checked query: the rules, the moves as actions, and the turns to analyse."""

    id: str
    rules: Rules
    komi: int
    moves: list[int]  # actions, played from the empty board
    analyze_turns: list[int]  # positions after that many moves, 0..len(moves)
    max_visits: int
    include: dict[str, bool] = field(default_factory=lambda: dict(INCLUDE_DEFAULTS))
    perspective: str = "side to move"  # "side to move", "black" or "white"
    max_time: float | None = None  # seconds the search of each turn may take (None: visits)
    report_every: float | None = None  # seconds between partial answers (None: none)

    @property
    def track(self) -> Track:
        return Track.parse(self.rules)


@dataclass
class Action:
    """A control line: `action` one of ACTIONS; terminate names `terminate_id`."""

    id: str
    action: str
    terminate_id: str | None = None
    turn_numbers: list[int] | None = None  # terminate only these turns (None: every turn)


def parse_line(line: str | bytes | OverlongLine, limits: QueryLimits) -> Query | Action:
    """A Query or an Action from one line of JSON (bytes must be UTF-8); QueryError naming
    the field."""
    obj = load_line(line)
    if not isinstance(obj, dict):
        raise QueryError(f"a line must be a JSON object, got {type(obj).__name__}", "json")
    query_id = _query_id(obj)
    if "action" in obj:
        return parse_action(obj, query_id)
    return parse_query(obj, limits, query_id)


def _query_id(obj: dict) -> str:
    if "id" not in obj:
        raise QueryError("the query has no id", "id")
    query_id = obj["id"]
    if not isinstance(query_id, str) or not query_id:
        raise QueryError(f"id must be a non-empty string, got {echo(query_id)}", "id")
    if not is_text(query_id):
        raise QueryError(f"id must be valid Unicode text, got {echo(query_id)} (a lone "
                         f"surrogate)", "id")
    return query_id


def parse_action(obj: dict, query_id: str) -> Action:
    action = obj["action"]
    if action not in ACTIONS:
        raise QueryError(f"unknown action {echo(action)}; expected one of: "
                         f"{', '.join(ACTIONS)}", "action", query_id)
    allowed = {"id", "action"} | ({"terminateId", "turnNumbers"} if action == "terminate"
                                  else {"turnNumbers"} if action == "terminate_all" else set())
    for key in obj:
        if key not in allowed:
            raise QueryError(f"unknown field {echo(key)} for action {action}", shown(key),
                             query_id)
    terminate_id = None
    if action == "terminate":
        terminate_id = obj.get("terminateId")
        if not isinstance(terminate_id, str) or not terminate_id or not is_text(terminate_id):
            raise QueryError("terminate needs terminateId, the id of a query", "terminateId",
                             query_id)
    turns = obj.get("turnNumbers")
    if turns is not None and (not isinstance(turns, list) or not all(_is_int(t) for t in turns)):
        raise QueryError(f"turnNumbers must be a list of integers, got {echo(turns)}",
                         "turnNumbers", query_id)
    return Action(query_id, action, terminate_id, turns)


def parse_query(obj: dict, limits: QueryLimits, query_id: str | None = None) -> Query:
    """Check every field of a query object and replay its moves (QueryError on the first
    bad field)."""
    query_id = query_id if query_id is not None else _query_id(obj)

    def fail(message: str, name: str):
        raise QueryError(message, name, query_id)

    for key in obj:
        if key not in QUERY_FIELDS:
            fail(f"unknown field {echo(key)}; a query has: {', '.join(QUERY_FIELDS)}",
                 shown(key))
    rules = _parse_rules(obj, fail)
    komi = obj.get("komi", 0)
    if not _is_int(komi) and not (isinstance(komi, float) and komi.is_integer()):
        fail(f"komi must be a whole number, got {echo(komi)}", "komi")
    low, high = rules.komi_range
    if not low <= komi <= high:  # (validate_komi would echo a 300-digit komi whole)
        fail(f"komi {echo(komi)} is outside the range {low}..{high} of "
             f"{rules.game_type.value}/{rules.scoring.value}", "komi")
    try:
        komi = int(rules.validate_komi(int(komi)))
    except ValueError as error:
        fail(str(error), "komi")
    moves_text = obj.get("moves", [])
    if not isinstance(moves_text, list):
        fail(f"moves must be a list of move strings, got {type(moves_text).__name__}", "moves")
    engine = Engine(rules)
    moves = replay(engine, komi, moves_text, fail)
    turns = obj.get("analyzeTurns", [len(moves)])
    if not isinstance(turns, list) or not turns:
        fail(f"analyzeTurns must be a non-empty list of turn numbers, got {echo(turns)}",
             "analyzeTurns")
    for turn in turns:
        if not _is_int(turn) or not 0 <= turn <= len(moves):
            fail(f"turn {echo(turn)} is outside 0..{len(moves)} (the query has {len(moves)} "
                 f"moves)", "analyzeTurns")
    if len(set(turns)) != len(turns):
        fail("analyzeTurns lists a turn twice", "analyzeTurns")
    visits = obj.get("maxVisits", limits.default_visits)
    if not _is_int(visits) or not 1 <= visits <= limits.max_visits:
        fail(f"maxVisits must be an integer in 1..{limits.max_visits}, got {echo(visits)}",
             "maxVisits")
    seconds = {}
    for key, longest in (("maxTime", limits.max_time), ("reportDuringSearchEvery",
                                                        MAX_SECONDS)):
        value = obj.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)
                                  or not 0 < value <= longest):
            fail(f"{key} must be a number of seconds in (0, {longest:g}], got "
                 f"{echo(value)}", key)
        seconds[key] = None if value is None else float(value)
    if seconds["reportDuringSearchEvery"] is not None:
        seconds["reportDuringSearchEvery"] = max(seconds["reportDuringSearchEvery"],
                                                 MIN_REPORT_SECONDS)
    include = dict(INCLUDE_DEFAULTS)
    given = obj.get("include", {})
    if not isinstance(given, dict):
        fail(f"include must be an object of flags, e.g. {{\"ownership\": true}}, got "
             f"{echo(given)}", "include")
    for key, value in given.items():
        if key not in INCLUDE_KEYS:
            fail(f"unknown include key {echo(key)}; expected: {', '.join(INCLUDE_KEYS)}",
                 f"include.{shown(key)}")
        if not isinstance(value, bool):
            fail(f"include.{key} must be true or false, got {echo(value)}", f"include.{key}")
        include[key] = value
    perspective = obj.get("perspective", "side to move")
    if perspective not in PERSPECTIVES:
        fail(f"perspective must be one of: {', '.join(PERSPECTIVES)}; got {echo(perspective)}",
             "perspective")
    return Query(query_id, rules, komi, moves, [int(t) for t in turns], int(visits), include,
                 perspective, seconds["maxTime"], seconds["reportDuringSearchEvery"])


def _parse_rules(obj: dict, fail) -> Rules:
    """Rules from `rules` ("6/komi/standard", "komi/standard" or {game_type, scoring}) and
    `side` (required unless the track string names it; both must agree)."""
    given = obj.get("rules", DEFAULT_RULES)
    side = obj.get("side")
    if side is not None and (not _is_int(side) or not 2 <= side <= 10):
        fail(f"side must be an integer in 2..10, got {echo(side)}", "side")
    if isinstance(given, dict):
        unknown = set(given) - {"game_type", "scoring"}
        if unknown:
            fail(f"unknown rules key {echo(sorted(unknown)[0])}; rules has game_type and "
                 f"scoring", "rules")
        game_type, scoring = given.get("game_type", "komi"), given.get("scoring", "standard")
    elif isinstance(given, str):
        parts = [part.strip() for part in given.split("/")]
        if len(parts) == 3:
            # ASCII digits only: int() also reads '²' and refuses 5000 digits, both errors
            if not (parts[0].isascii() and parts[0].isdigit() and len(parts[0]) <= 2
                    and 2 <= int(parts[0]) <= 10):
                fail(f"the track's side must be 2..10, got {echo(given)}", "rules")
            if side is not None and int(parts[0]) != side:
                fail(f"rules {echo(given)} names side {parts[0]} but side is {side}",
                     "rules")
            side = int(parts[0])
            parts = parts[1:]
        if len(parts) != 2:
            fail(f"rules must be 'side/game_type/scoring', 'game_type/scoring' or "
                 f"{{game_type, scoring}}, got {echo(given)}", "rules")
        game_type, scoring = parts
    else:
        fail(f"rules must be a track string or an object, got {echo(given)}", "rules")
    for part in (game_type, scoring):
        # Rules' own error echoes the name whole: a long one is refused here, cut.
        if not isinstance(part, str) or len(part) > NAME_CHARS:
            fail(f"unknown rules {echo(given)}: expected a game type and a scoring, like "
                 f"'komi/standard'", "rules")
    if side is None:
        fail("the query names no board side (give side, or rules like '6/komi/standard')",
             "side")
    try:
        return Rules(side=int(side), game_type=game_type, scoring=scoring)
    except ValueError as error:
        fail(f"unknown rules: {error}", "rules")


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def replay(engine: Engine, komi: int, moves_text: list, fail) -> list[int]:
    """The actions of `moves_text`, each checked on the position before it; `fail(message,
    field)` at the first malformed or illegal move, naming its index and why."""
    board = engine.board
    state = engine.new_games(1, komi)
    actions: list[int] = []
    for index, text in enumerate(moves_text):
        name = f"moves[{index}]"
        if not isinstance(text, str) or len(text) > NAME_CHARS:
            # (parse_action's own error would echo a long name whole)
            fail(f"move {index} must be a string like 'F6' or 'button', got {echo(text)}",
                 name)
        try:
            action = board.parse_action(text)
        except ValueError as error:
            fail(f"move {index} {echo(text)}: {error}", name)
        if not engine.legal_actions(state)[0, action]:
            fail(f"move {index} {board.action_name(action)} is illegal: "
                 f"{refusal_reason(engine.rules, state, action)}", name)
        engine.step(state, np.array([action], dtype=np.int64))
        actions.append(action)
    return actions


def positions(engine: Engine, komi: int, moves: list[int], turns: list[int]) -> GameState:
    """The positions after `turns[k]` of the (legal) `moves`, as one batch [len(turns)]."""
    state = engine.new_games(1, komi)
    snapshots = {0: state.copy()}
    for index, action in enumerate(moves[: max(turns)]):
        engine.step(state, np.array([action], dtype=np.int64))
        snapshots[index + 1] = state.copy()
    return GameState.concatenate([snapshots[turn] for turn in turns])


def finite(value: float, digits: int = 6) -> float | None:
    """A JSON-safe rounded number (None for nan)."""
    value = float(value)
    return None if math.isnan(value) or math.isinf(value) else round(value, digits)
