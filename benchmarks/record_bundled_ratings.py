"""Record a bundled model's Elos in the bundled ratings table, from which the model library
picks the strongest bundled model per track (`catena_zero.play.bundled_ratings`).

    # from a ratings file written by general_targets --ratings-out (same reference player)
    python -m benchmarks.record_bundled_ratings side4.pt --ratings runs/ratings/side4.json
    # from the per-track Elos a model file records (catena-zero export ratings=...)
    python -m benchmarks.record_bundled_ratings general.pt --from-model
    # the anchor matches (against uct:N) of a general_targets report of this very file
    python -m benchmarks.record_bundled_ratings general.pt --targets runs/targets/general.json
    # an anchor's own match against another anchor, which places it on the track's scale
    python -m benchmarks.record_bundled_ratings --anchor-match 6/komi/standard uct:1000 \
        uct:200 120-0-80
    # a bundled file renamed (git mv general.pt general-step38752.pt): its Elos follow it
    python -m benchmarks.record_bundled_ratings general.pt --rename general-step38752.pt
    # an earlier model that is rated best on no track any more: its Elos go, then the file
    python -m benchmarks.record_bundled_ratings general-stepN.pt --drop
    git rm catena_zero/play/models/general-stepN.pt

The table is `catena_zero/play/models/ratings.json` unless --table says otherwise; the
model file must be bundled beside it. Elos against another reference are refused, and so is
dropping a model still rated best on a track, or general.pt or a side<N>.pt (they also play
the tracks no model is rated on).

`--targets` records the report's matches against anchors (uct:N; its greedy and model
matches are left out), each replacing the model's record of the same track and anchor, then
decides each of those tracks' player again by the replacement rule and prints the decision.
The report must name the model by the SHA-256 of the bundled file (`model_player`), and its
search must be the one the model's earlier records were of, unless --replace discards them.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from catena_zero.data.file_history import file_sha256, same_content_hashes
from catena_zero.export.metadata import ModelFileError
from catena_zero.export.model_file import read_metadata
from catena_zero.export.ratings import read_ratings
from catena_zero.play.anchor_ratings import AnchorModel, AnchorRecord, is_anchor
from catena_zero.play.bundled import BUNDLED_DIRECTORY, FALLBACK_MODEL_NAMES, ModelLibrary
from catena_zero.play.bundled_ratings import (
    RATINGS_NAME,
    drop_ratings,
    record_anchor_match,
    record_anchor_results,
    record_ratings,
    rename_ratings,
)
from catena_zero.rules import Track

TARGETS_FORMAT = "catena_zero.general_targets"
MAX_REPORT_BYTES = 10_000_000
RECORD = re.compile(r"(\d{1,7})-(\d{1,7})-(\d{1,7})")


def report_anchor_records(report_path: Path, model_path: Path) -> AnchorModel:
    """The anchor matches of a general_targets report as the model's records (a track's
    matches against one anchor summed); ValueError naming the report when it is not one,
    names another file than `model_path` or has no anchor match."""
    where = f"--targets {report_path}"
    try:
        if report_path.stat().st_size > MAX_REPORT_BYTES:
            raise ValueError(f"{where}: larger than {MAX_REPORT_BYTES} bytes")
        report = json.loads(report_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as error:
        raise ValueError(f"{where}: unreadable ({' '.join(str(error).split())[:120]})"
                         ) from None
    if not isinstance(report, dict) or report.get("format") != TARGETS_FORMAT:
        raise ValueError(f"{where}: not a {TARGETS_FORMAT} report")
    player = report.get("model_player")
    recorded = player.get("sha256") if isinstance(player, dict) else None
    if not isinstance(recorded, str):
        raise ValueError(f"{where}: names no model file SHA-256 (model_player); play it "
                         f"again with this general_targets")
    bundled = file_sha256(model_path)
    # A file rewritten with the same metadata and weights keeps the matches it played.
    if recorded not in same_content_hashes(bundled):
        raise ValueError(f"{where}: played the file of SHA-256 {recorded[:16]}..., the "
                         f"bundled {model_path.name} is {bundled[:16]}...; refused")
    matches = report.get("matches")
    records: dict[Track, dict[str, AnchorRecord]] = {}
    for name, match in (matches.items() if isinstance(matches, dict) else ()):
        if not isinstance(match, dict):
            raise ValueError(f"{where}: match {str(name)[:40]!r} is not an object")
        described = match.get("opponent_player")
        opponent = described.get("spec") if isinstance(described, dict) else (
            match.get("opponent"))
        if not is_anchor(opponent):
            continue
        try:
            track = Track.parse(match["track"])
            result = match["result"]
            counts = [int(result[key]) for key in ("wins", "draws", "losses")]
            komi = match.get("komi")
            earlier = records.setdefault(track, {}).get(opponent, AnchorRecord(0, 0, 0, komi))
        except (KeyError, TypeError, ValueError):
            raise ValueError(f"{where}: match {str(name)[:40]!r} has no track and "
                             f"wins/draws/losses") from None
        if earlier.komi != komi:
            raise ValueError(f"{where}: {track} against {opponent} at komi {earlier.komi} and "
                             f"{komi}; one komi a record")
        records[track][opponent] = AnchorRecord(earlier.wins + counts[0],
                                                earlier.draws + counts[1],
                                                earlier.losses + counts[2], komi)
    if not records:
        raise ValueError(f"{where}: has no match against an anchor (uct:N)")
    search = player.get("search")
    return AnchorModel(bundled, read_metadata(model_path).training_steps,
                       search if isinstance(search, dict) else None, records)


def print_decisions(decisions) -> None:
    for track, decision in decisions:
        print(f"  {track}: " + (decision.reason if decision is not None else
                                "no bundled model has an anchored Elo; the greedy Elos "
                                "choose"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model", nargs="?", default="",
                        help="the bundled model's file name, e.g. side4.pt")
    parser.add_argument("--ratings", default="", help="a ratings file (general_targets)")
    parser.add_argument("--from-model", action="store_true",
                        help="take the Elos the model file itself records")
    parser.add_argument("--rename", default="", metavar="NEW_NAME",
                        help="move the model's Elos to the bundled file NEW_NAME")
    parser.add_argument("--drop", action="store_true",
                        help="remove the Elos of a model rated best on no track (then "
                             "delete its file)")
    parser.add_argument("--targets", default="", metavar="REPORT",
                        help="a general_targets report of the bundled file: record its "
                             "matches against anchors (uct:N)")
    parser.add_argument("--replace", action="store_true",
                        help="with --targets: discard the model's anchor records of another "
                             "file or search")
    parser.add_argument("--anchor-match", nargs=4, default=None,
                        metavar=("TRACK", "ANCHOR", "OPPONENT", "W-D-L"),
                        help="record an anchor's match against another anchor (no model)")
    parser.add_argument("--table", default=str(BUNDLED_DIRECTORY / RATINGS_NAME))
    args = parser.parse_args(argv)
    table = Path(args.table)
    model_path = table.parent / args.model
    try:
        if sum(map(bool, (args.ratings, args.from_model, args.rename, args.drop,
                          args.targets, args.anchor_match))) != 1:
            raise ValueError("give exactly one of --ratings FILE, --from-model, "
                             "--rename NEW_NAME, --drop, --targets REPORT and --anchor-match")
        if args.replace and not args.targets:
            raise ValueError("--replace goes with --targets")
        if args.anchor_match:
            if args.model:
                raise ValueError("--anchor-match records two anchors; give no model")
            track, player, opponent, text = args.anchor_match
            counts = RECORD.fullmatch(text)
            if counts is None or not sum(map(int, counts.groups())):
                raise ValueError(f"--anchor-match {text!r}: expected WINS-DRAWS-LOSSES of "
                                 f"{player}, e.g. 120-0-80")
            available = ModelLibrary(directory=table.parent).available()
            recorded, decisions = record_anchor_match(
                table, track, player, opponent, AnchorRecord(*map(int, counts.groups())),
                available)
            print(f"{table}: {player} against {opponent} on {Track.parse(track)}: {text}")
            print_decisions(decisions)
            return 0
        if not args.model:
            raise ValueError("give the bundled model's file name")
        if args.drop:
            available = ModelLibrary(directory=table.parent).available()
            recorded = drop_ratings(table, args.model, available, keep=FALLBACK_MODEL_NAMES)
            print(f"{table}: the Elos of {args.model} are dropped; delete its file now; "
                  f"{len(recorded.models)} models in the table")
            return 0
        if args.rename:
            if not (table.parent / args.rename).is_file():
                raise ValueError(f"{table.parent / args.rename} is not a bundled model file")
            recorded = rename_ratings(table, args.model, args.rename)
            print(f"{table}: the Elos of {args.model} now belong to {args.rename}; "
                  f"{len(recorded.models)} models in the table")
            return 0
        if not model_path.is_file():
            raise ValueError(f"{model_path} is not a bundled model file")
        if args.targets:
            model = report_anchor_records(Path(args.targets), model_path)
            available = ModelLibrary(directory=table.parent).available()
            recorded, decisions = record_anchor_results(table, args.model, model, available,
                                                        replace=args.replace)
            count = sum(len(by_anchor) for by_anchor in model.records.values())
            print(f"{table}: {args.model}: {count} anchor records on {len(model.records)} "
                  f"tracks")
            print_decisions(decisions)
            return 0
        if args.ratings:
            ratings = read_ratings(args.ratings)
            reference, elos = ratings.reference, dict(ratings.elos)
        else:
            tracks = [track for track in read_metadata(model_path).tracks
                      if track.elo is not None]
            references = {track.elo_reference for track in tracks}
            if len(references) != 1:
                raise ValueError(f"{model_path} records Elos against {len(references)} "
                                 f"references; one is needed")
            reference, elos = references.pop(), {str(t.track): t.elo for t in tracks}
        recorded = record_ratings(table, args.model, reference, elos)
    except (ValueError, OSError, ModelFileError) as error:
        print(f"record_bundled_ratings: {error}", file=sys.stderr)
        return 1
    print(f"{table}: {args.model} rated on {len(elos)} tracks; "
          f"{len(recorded.models)} models in the table")
    return 0


if __name__ == "__main__":
    sys.exit(main())
