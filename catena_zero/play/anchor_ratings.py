"""The anchored part of the bundled ratings table (format version 2): each bundled model's
raw records against anchor players per track, the anchors' own matches, the Elos fitted
from them on one scale per track, and the model that plays each track.

Anchors are outside players that a strong model does not beat nearly every game: UCT with
random rollouts, `uct:N` (uct:200, uct:1000, uct:3000). On each track uct:200 = 0; another
anchor is placed by its own recorded matches against anchors where there are any, else
fitted with the models (`catena_zero.arena.anchored_elo`). In the JSON:

    "anchor_reference": "uct:200 = 0 on every track; ...",
    "anchor_models": {"general.pt": {"sha256": "<the file's SHA-256>",
                                     "training_steps": 216608,
                                     "search": {<the SearchConfig it was rated with>},
                                     "records": {"6/komi/standard": {
                                         "uct:200": {"wins": 150, "draws": 0, "losses": 50,
                                                     "komi": 7}}}}},
    "anchor_matches": {"6/komi/standard": [{"player": "uct:1000", "opponent": "uct:200",
                                            "wins": 120, "draws": 0, "losses": 80,
                                            "komi": 7}]},
    "anchor_elos": {"6/komi/standard": {"uct:200": {"elo": 0.0, "low": 0.0, "high": 0.0},
                                        "general.pt": {"elo": 191.0, ...}}},
    "players": {"6/komi/standard": "general.pt"}

Every record of a model is of the file of its `sha256` searching with its `search`. The
records are the source: `anchor_elos` is the fit written out for a reader, and a table whose
`anchor_elos` do not follow from its records is refused. `players` holds the model that
plays each track, decided by the replacement rule (`catena_zero.play.replacement`) each time
records are added.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from catena_zero.arena.anchored_elo import FIXED_ANCHOR, AnchoredFit, MatchRecord, fit_anchored
from catena_zero.play.replacement import Decision, choose_player
from catena_zero.rules import Track

ANCHOR_SPEC = re.compile(r"uct:[1-9][0-9]{0,6}")
ANCHOR_REFERENCE = (f"{FIXED_ANCHOR} = 0 on every track; other uct:N anchors placed by their "
                    f"own recorded matches, else fitted jointly with the models (logistic "
                    f"Elo, one drawn game per pairing as prior; 95% intervals from the "
                    f"Fisher information)")
SHA256 = re.compile(r"[0-9a-f]{64}")
SETTING_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
MAX_GAMES = 10_000_000
MAX_ANCHORS = 16  # per track
MAX_SEARCH_FIELDS = 64
ELO_DECIMALS = 2
ELO_CHECK_TOLERANCE = 0.05  # recorded Elos are rounded to 0.01; the fit agrees to 1e-9


def is_anchor(spec: str) -> bool:
    """Whether an agent spec names an anchor player (uct:N)."""
    return isinstance(spec, str) and ANCHOR_SPEC.fullmatch(spec) is not None


@dataclass(frozen=True)
class AnchorRecord:
    """A model's (or an anchor's) wins, draws and losses against `anchor` on a track."""

    wins: int
    draws: int
    losses: int
    komi: int | None = None  # the komi the games were played at


@dataclass
class AnchorModel:
    """One bundled file's anchor records: of the file `sha256`, searching with `search`."""

    sha256: str
    training_steps: int | None
    search: dict | None
    records: dict[Track, dict[str, AnchorRecord]] = field(default_factory=dict)


@dataclass(frozen=True)
class AnchorMatch:
    """An anchor's record against another anchor on a track (which places it)."""

    player: str
    opponent: str
    record: AnchorRecord


@dataclass
class AnchorRatings:
    models: dict[str, AnchorModel] = field(default_factory=dict)
    matches: dict[Track, list[AnchorMatch]] = field(default_factory=dict)
    players: dict[Track, str] = field(default_factory=dict)
    _fits: dict[Track, AnchoredFit] = field(default_factory=dict, repr=False, compare=False)

    def __bool__(self) -> bool:
        return bool(self.models or self.matches)

    # Every change goes through these, which forget the fits the change makes stale.

    def put_model(self, name: str, model: AnchorModel) -> None:
        self.models[name] = model
        self._fits.clear()

    def put_match(self, track: Track, match: AnchorMatch) -> None:
        """Add an anchor match, replacing the recorded one of the same two anchors."""
        pair = {match.player, match.opponent}
        self.matches[track] = [kept for kept in self.matches.get(track, [])
                               if {kept.player, kept.opponent} != pair] + [match]
        self._fits.clear()

    def remove_model(self, name: str) -> None:
        self.models.pop(name, None)
        self.players = {track: player for track, player in self.players.items()
                        if player != name}
        self._fits.clear()

    def rename_model(self, old: str, new: str) -> None:
        self.models[new] = self.models.pop(old)
        self.players = {track: new if player == old else player
                        for track, player in self.players.items()}
        self._fits.clear()

    def tracks(self) -> list[Track]:
        """Every track with a record, in order."""
        found = {track for model in self.models.values() for track in model.records}
        return sorted(found | set(self.matches))

    def match_records(self, track: Track) -> list[MatchRecord]:
        records = [MatchRecord(match.player, match.opponent, match.record.wins,
                               match.record.draws, match.record.losses)
                   for match in self.matches.get(track, [])]
        for name, model in sorted(self.models.items()):
            for anchor, record in sorted(model.records.get(track, {}).items()):
                records.append(MatchRecord(name, anchor, record.wins, record.draws,
                                           record.losses))
        return records

    def fit(self, track) -> AnchoredFit:
        """The anchored fit of `track` (kept: the records change only through a new table)."""
        track = Track.parse(track)
        if track not in self._fits:
            records = self.match_records(track)
            anchors = {name for record in records for name in (record.player, record.opponent)
                       if is_anchor(name)}
            self._fits[track] = fit_anchored(records, anchors)
        return self._fits[track]

    def elo(self, name: str, track) -> tuple[float, float, float] | None:
        """(Elo, low, high) of `name` on `track` on the anchored scale; None if unrated."""
        fit = self.fit(track)
        if name not in fit:
            return None
        low, high = fit.interval(name)
        return fit.rating(name), low, high

    def decide(self, track, available: list[str]) -> Decision | None:
        """The player of `track` among the files `available` (the replacement rule from the
        recorded player); None when none of them has an anchored Elo there."""
        track = Track.parse(track)
        candidates = [name for name in available if name in self.models]
        steps = {name: self.models[name].training_steps for name in candidates}
        return choose_player(self.fit(track), candidates, self.players.get(track), steps)

    def elos_document(self) -> dict:
        """`anchor_elos`: every rated player's Elo and 95% interval per track, rounded."""
        document = {}
        for track in self.tracks():
            fit = self.fit(track)
            if fit.names:
                document[str(track)] = {name: _elo_entry(fit, name) for name in fit.names}
        return document

    def to_document(self) -> dict:
        """The table's anchored keys (empty when there is nothing anchored)."""
        if not self:
            return {}
        return {
            "anchor_reference": ANCHOR_REFERENCE,
            "anchor_models": {name: {
                "sha256": model.sha256, "training_steps": model.training_steps,
                "search": model.search,
                "records": {str(track): {anchor: _record_entry(record) for anchor, record in
                                         sorted(by_anchor.items())}
                            for track, by_anchor in sorted(model.records.items())}}
                for name, model in sorted(self.models.items())},
            "anchor_matches": {str(track): [
                {"player": match.player, "opponent": match.opponent,
                 **_record_entry(match.record)} for match in matches]
                for track, matches in sorted(self.matches.items())},
            "anchor_elos": self.elos_document(),
            "players": {str(track): name for track, name in sorted(self.players.items())},
        }


def _record_entry(record: AnchorRecord) -> dict:
    return {"wins": record.wins, "draws": record.draws, "losses": record.losses,
            "komi": record.komi}


def _elo_entry(fit: AnchoredFit, name: str) -> dict:
    low, high = fit.interval(name)
    return {"elo": round(fit.rating(name), ELO_DECIMALS), "low": round(low, ELO_DECIMALS),
            "high": round(high, ELO_DECIMALS)}


ANCHOR_KEYS = ("anchor_reference", "anchor_models", "anchor_matches", "anchor_elos", "players")


def parse_anchor_ratings(document: dict, refuse, model_name: re.Pattern) -> AnchorRatings:
    """The anchored keys of a version-2 table (`refuse(problem)` builds the error;
    `model_name` is the pattern of a bundled file name)."""
    if not isinstance(document.get("anchor_reference"), str):
        raise refuse("anchor_reference must describe the anchored scale")
    ratings = AnchorRatings()
    models = _mapping(document.get("anchor_models"), "anchor_models", 64, refuse)
    for name, entry in models.items():
        if not model_name.fullmatch(name):
            raise refuse(f"anchor_models: {name[:40]!r} is not a plain .pt file name")
        ratings.models[name] = _parse_model(name, entry, refuse)
    for text, matches in _mapping(document.get("anchor_matches"), "anchor_matches", 81,
                                  refuse).items():
        track = _track(text, "anchor_matches", refuse)
        if not isinstance(matches, list) or len(matches) > MAX_ANCHORS * MAX_ANCHORS:
            raise refuse(f"anchor_matches {track}: must be a list of matches")
        seen = set()
        ratings.matches[track] = []
        for match in matches:
            if not isinstance(match, dict):
                raise refuse(f"anchor_matches {track}: each match must be an object")
            player, opponent = match.get("player"), match.get("opponent")
            if not (is_anchor(player) and is_anchor(opponent)) or player == opponent:
                raise refuse(f"anchor_matches {track}: player and opponent must be two "
                             f"anchors uct:N")
            if frozenset((player, opponent)) in seen:
                raise refuse(f"anchor_matches {track}: {player} and {opponent} twice")
            seen.add(frozenset((player, opponent)))
            rest = {key: value for key, value in match.items()
                    if key not in ("player", "opponent")}
            record = _parse_record(rest, f"anchor_matches {track} {player}", refuse)
            ratings.matches[track].append(AnchorMatch(player, opponent, record))
    for text, name in _mapping(document.get("players"), "players", 81, refuse).items():
        track = _track(text, "players", refuse)
        if name not in ratings.models or name not in ratings.fit(track):
            raise refuse(f"players {track}: {str(name)[:40]!r} has no anchored Elo there")
        ratings.players[track] = name
    recorded = document.get("anchor_elos")
    fitted = ratings.elos_document()
    if not isinstance(recorded, dict) or set(recorded) != set(fitted):
        raise refuse("anchor_elos must hold the fitted Elos of every track with records")
    for track, entries in fitted.items():
        given = recorded[track]
        if not isinstance(given, dict) or set(given) != set(entries):
            raise refuse(f"anchor_elos {track}: must rate exactly {', '.join(entries)}")
        for name, entry in entries.items():
            values = given[name]
            if not isinstance(values, dict) or any(
                    not _finite(values.get(key)) or
                    abs(values[key] - entry[key]) > ELO_CHECK_TOLERANCE for key in entry):
                raise refuse(f"anchor_elos {track} {name}: does not follow from the records "
                             f"(fitted {entry['elo']:.2f} [{entry['low']:.2f}, "
                             f"{entry['high']:.2f}])")
    return ratings


def _parse_model(name: str, entry, refuse) -> AnchorModel:
    if not isinstance(entry, dict):
        raise refuse(f"anchor_models {name}: must be an object")
    unknown = sorted(set(entry) - {"sha256", "training_steps", "search", "records"})
    if unknown:
        raise refuse(f"anchor_models {name}: unknown key {unknown[0][:40]!r}")
    sha256 = entry.get("sha256")
    if not isinstance(sha256, str) or not SHA256.fullmatch(sha256):
        raise refuse(f"anchor_models {name}: sha256 must be 64 lower-case hex digits")
    steps = entry.get("training_steps")
    if steps is not None and (isinstance(steps, bool) or not isinstance(steps, int)
                              or steps < 0):
        raise refuse(f"anchor_models {name}: training_steps must be a count or null")
    search = entry.get("search")
    if search is not None:
        search = _mapping(search, f"anchor_models {name} search", MAX_SEARCH_FIELDS, refuse)
        for key, value in search.items():
            if not SETTING_NAME.fullmatch(key) or not (
                    value is None or isinstance(value, bool | str) and len(str(value)) <= 100
                    or _finite(value)):
                raise refuse(f"anchor_models {name} search: {key[:40]!r} must name a "
                             f"setting of a plain value")
    model = AnchorModel(sha256, steps, search)
    records = _mapping(entry.get("records"), f"anchor_models {name} records", 81, refuse)
    for text, by_anchor in records.items():
        track = _track(text, f"anchor_models {name}", refuse)
        by_anchor = _mapping(by_anchor, f"anchor_models {name} {track}", MAX_ANCHORS, refuse)
        model.records[track] = {}
        for anchor, record in by_anchor.items():
            if not is_anchor(anchor):
                raise refuse(f"anchor_models {name} {track}: {anchor[:40]!r} is no anchor "
                             f"uct:N")
            model.records[track][anchor] = _parse_record(
                record, f"anchor_models {name} {track} {anchor}", refuse)
    return model


def _parse_record(record, where: str, refuse) -> AnchorRecord:
    if not isinstance(record, dict) or set(record) != {"wins", "draws", "losses", "komi"}:
        raise refuse(f"{where}: a record is exactly wins, draws, losses and komi")
    counts = [record[key] for key in ("wins", "draws", "losses")]
    if any(isinstance(count, bool) or not isinstance(count, int) or not
           0 <= count <= MAX_GAMES for count in counts) or sum(counts) == 0:
        raise refuse(f"{where}: wins, draws and losses must be counts with a game")
    komi = record["komi"]
    if komi is not None and (isinstance(komi, bool) or not isinstance(komi, int)
                             or abs(komi) > 1000):
        raise refuse(f"{where}: komi must be a whole number or null")
    return AnchorRecord(*counts, komi=komi)


def _mapping(value, where: str, limit: int, refuse) -> dict:
    if not isinstance(value, dict) or len(value) > limit:
        raise refuse(f"{where} must be an object of at most {limit} entries")
    return value


def _track(text, where: str, refuse) -> Track:
    try:
        return Track.parse(text)
    except (ValueError, TypeError):
        raise refuse(f"{where}: {str(text)[:40]!r} is not a track") from None


def _finite(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(
        value)
