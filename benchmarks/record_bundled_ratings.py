"""Record a bundled model's Elos in the bundled ratings table, from which the model library
picks the strongest bundled model per track (`catena_zero.play.bundled_ratings`).

    # from a ratings file written by general_targets --ratings-out (same reference player)
    python -m benchmarks.record_bundled_ratings side4.pt --ratings runs/ratings/side4.json
    # from the per-track Elos a model file records (catena-zero export ratings=...)
    python -m benchmarks.record_bundled_ratings general.pt --from-model
    # a bundled file renamed (git mv general.pt general-step38752.pt): its Elos follow it
    python -m benchmarks.record_bundled_ratings general.pt --rename general-step38752.pt
    # an earlier model that is rated best on no track any more: its Elos go, then the file
    python -m benchmarks.record_bundled_ratings general-stepN.pt --drop
    git rm catena_zero/play/models/general-stepN.pt

The table is `catena_zero/play/models/ratings.json` unless --table says otherwise; the
model file must be bundled beside it. Elos against another reference are refused, and so is
dropping a model still rated best on a track, or general.pt or a side<N>.pt (they also play
the tracks no model is rated on).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from catena_zero.export.metadata import ModelFileError
from catena_zero.export.model_file import read_metadata
from catena_zero.export.ratings import read_ratings
from catena_zero.play.bundled import BUNDLED_DIRECTORY, FALLBACK_MODEL_NAMES, ModelLibrary
from catena_zero.play.bundled_ratings import (
    RATINGS_NAME,
    drop_ratings,
    record_ratings,
    rename_ratings,
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model", help="the bundled model's file name, e.g. side4.pt")
    parser.add_argument("--ratings", default="", help="a ratings file (general_targets)")
    parser.add_argument("--from-model", action="store_true",
                        help="take the Elos the model file itself records")
    parser.add_argument("--rename", default="", metavar="NEW_NAME",
                        help="move the model's Elos to the bundled file NEW_NAME")
    parser.add_argument("--drop", action="store_true",
                        help="remove the Elos of a model rated best on no track (then "
                             "delete its file)")
    parser.add_argument("--table", default=str(BUNDLED_DIRECTORY / RATINGS_NAME))
    args = parser.parse_args(argv)
    table = Path(args.table)
    model_path = table.parent / args.model
    try:
        if sum(map(bool, (args.ratings, args.from_model, args.rename, args.drop))) != 1:
            raise ValueError("give exactly one of --ratings FILE, --from-model, "
                             "--rename NEW_NAME and --drop")
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
