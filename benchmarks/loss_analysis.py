"""The study of a loss file's games (`python -m benchmarks.loss_study analyse`).

For every game of `games.json` (written by `loss_study play`) the positions are replayed in
one batch, ply by ply, and the model's network evaluates each (value from the side to move,
policy entropy over the legal moves). Then, for each lost game:

- the turning point: the first ply from which the network's value, seen from the model's
  colour, stays below zero to the end (it "left the final result" for good there);
- its phase, by the share of the board's cells still legal at that ply (opening above two
  thirds, endgame at most a third: claimed ribbons and their neighbours leave play long
  before the board is full, so stones placed would not tell the endgame);
- who moved into it: the opponent's move (the net did not see it coming) or the model's own;
- the model's last move before it, searched again at `--deep-factor` times the player's
  simulations with exact values for leaves of at most `--exact-cells` legal cells (so near
  the end the deep search is the solver): does it choose another move, and by how much does
  it prefer its move to the one played (its Q values, the model's view);
- where the game was lost under perfect play: walking back from the end through the
  positions with at most `--solve-cells` legal cells, the exact solver's value of each; the
  decisive move is the model's last move that turned a position it could still hold (a win
  or draw with perfect play) into a lost one, or, when every solved position is already
  lost, the loss was decided before the solver's horizon;
- the network's value error (squared, against the game's outcome) and policy entropy on the
  positions of lost games, of won games, and of the run's own self-play positions of the
  same track (`--shards`), by phase.

The figures go to `study.json` and a gallery of turning points is drawn as PNG boards.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from catena_zero.arena.specs import AgentFactory
from catena_zero.data.atomic import atomic_write_text
from catena_zero.data.shards import list_shards, read_shard
from catena_zero.export.evaluator import read_model_network
from catena_zero.mcts.config import SearchConfig
from catena_zero.mcts.endgame import ExactEndgame
from catena_zero.mcts.search import search
from catena_zero.mcts.solver import SolverBudgetExceeded
from catena_zero.network.output import wdl_to_value
from catena_zero.rules import BLACK, NO_ACTION, WHITE, Engine, GameState, Track

PHASES = ("opening", "middle", "endgame")
EVALUATION_BATCH = 512


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--games-file", default="runs/loss/games.json")
    parser.add_argument("--shards", default="",
                        help="self-play shards folder to compare with (e.g. runs/NAME/shards)")
    parser.add_argument("--max-shard-samples", type=int, default=20000,
                        help="most self-play positions compared (newest shards first)")
    parser.add_argument("--deep-factor", type=int, default=16,
                        help="the deep search's simulations: this many times the player's")
    parser.add_argument("--exact-cells", type=int, default=10,
                        help="the deep search solves leaves with at most this many legal cells")
    parser.add_argument("--solve-cells", type=int, default=14,
                        help="the exact scan solves positions with at most this many legal "
                             "cells")
    parser.add_argument("--solve-budget", type=int, default=2_000_000,
                        help="most positions one exact solve may visit")
    parser.add_argument("--gallery", type=int, default=6, help="turning points drawn")
    parser.add_argument("--images", default="", help="folder for the gallery's PNG files "
                        "(default: OUT/gallery)")
    parser.add_argument("--out", default="runs/loss")


def phase_of(legal_share: np.ndarray) -> np.ndarray:
    """0 opening (more than two thirds of the cells legal), 1 middle, 2 endgame (at most a
    third legal), by the share of cells still legal ([...] float)."""
    return 2 - np.digitize(legal_share, [1 / 3, 2 / 3], right=True)


def replay_positions(engine: Engine, komi: int, games: list[list[int]]
                     ) -> tuple[list[GameState], np.ndarray]:
    """Every game's positions, batched by ply: `positions[t]` holds ply t of every game
    (a finished game repeats its last position); `alive [G, T]` marks real positions."""
    num_games = len(games)
    length = max(len(actions) for actions in games)
    history = np.full((num_games, length), NO_ACTION, dtype=np.int64)  # [G, T]
    for index, actions in enumerate(games):
        history[index, :len(actions)] = actions
    alive = history != NO_ACTION  # [G, T]
    states = engine.new_games(num_games, komi)
    positions = []
    for ply in range(length):
        positions.append(states.copy())
        engine.step(states, history[:, ply])
    return positions, alive


def legal_entropy(logits: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """Entropy (nats) of softmax(logits) over the legal actions: [B, A] -> [B]."""
    masked = np.where(legal, logits, -np.inf)
    masked = masked - masked.max(axis=1, keepdims=True)
    probabilities = np.exp(masked)
    probabilities /= probabilities.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(probabilities > 0, probabilities * np.log(probabilities), 0.0)
    return -terms.sum(axis=1)


def turning_point(model_values: np.ndarray) -> int:
    """The first ply from which `model_values [T]` stays below zero to the end."""
    above = np.flatnonzero(model_values >= 0)
    return 0 if len(above) == 0 else int(above[-1]) + 1


def evaluate_positions(engine: Engine, evaluator, positions: list[GameState],
                       alive: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Value (side to move) and legal-policy entropy of every position: two [G, T]."""
    num_games, length = alive.shape
    values = np.zeros((num_games, length), dtype=np.float64)
    entropies = np.zeros((num_games, length), dtype=np.float64)
    for ply, states in enumerate(positions):
        index = np.flatnonzero(alive[:, ply])
        if not len(index):
            continue
        batch = states.take(index)
        evaluation = evaluator(batch)
        values[index, ply] = evaluation.value
        entropies[index, ply] = legal_entropy(np.asarray(evaluation.policy_logits),
                                              engine.legal_actions(batch))
    return values, entropies


def shard_figures(directory: str, track: Track, model_path: str, limit: int) -> dict:
    """Value error and policy entropy of the model's network on the run's self-play
    positions of `track` (newest shards first, at most `limit` positions), by phase."""
    chosen = []
    count = 0
    for path in reversed(list_shards(directory)):
        samples, meta = read_shard(path)
        if (meta.side, meta.game_type, meta.scoring) != (track.side, str(track.game_type),
                                                          str(track.scoring)):
            continue
        chosen.append(samples)
        count += len(samples.weight)
        if count >= limit:
            break
    if not chosen:
        return {}
    model = read_model_network(Path(model_path), "cpu").model  # an InferenceModel
    rows = {"value_error": [], "entropy": [], "legal": []}
    num_cells = track.rules().board.num_cells
    for samples in chosen:
        for start in range(0, len(samples.weight), EVALUATION_BATCH):
            stop = min(start + EVALUATION_BATCH, len(samples.weight), start + limit)
            planes = samples.planes[start:stop].astype(np.float32)
            output = model(planes, samples.globals[start:stop])
            value = np.asarray(wdl_to_value(output.value_logits.float().numpy()
                                            if hasattr(output.value_logits, "float")
                                            else output.value_logits))
            target = samples.value_target[start:stop]
            outcome = target[:, 0] - target[:, 2]
            logits = np.asarray(output.policy_logits.float().numpy()
                                if hasattr(output.policy_logits, "float")
                                else output.policy_logits)
            rows["value_error"].append((value - outcome) ** 2)
            rows["entropy"].append(legal_entropy(logits, samples.legal_mask[start:stop]))
            legal_cells = samples.legal_mask[start:stop, :num_cells].sum(axis=1)
            rows["legal"].append(legal_cells / num_cells)
            limit -= stop - start
            if limit <= 0:
                break
        if limit <= 0:
            break
    value_error = np.concatenate(rows["value_error"])
    entropy = np.concatenate(rows["entropy"])
    phases = phase_of(np.concatenate(rows["legal"]))
    return by_phase(value_error, entropy, phases)


def by_phase(value_error: np.ndarray, entropy: np.ndarray, phases: np.ndarray) -> dict:
    """Mean value error and entropy overall and per phase ([N] arrays)."""
    figures = {"all": {"positions": int(len(value_error)),
                       "value_error": float(value_error.mean()),
                       "entropy": float(entropy.mean())}}
    for number, name in enumerate(PHASES):
        chosen = phases == number
        if chosen.any():
            figures[name] = {"positions": int(chosen.sum()),
                             "value_error": float(value_error[chosen].mean()),
                             "entropy": float(entropy[chosen].mean())}
    return figures


def analyse(arguments: argparse.Namespace, log=print) -> dict:
    """Study the games of `arguments.games_file`; the study (also written to OUT)."""
    report = json.loads(Path(arguments.games_file).read_text())
    if report.get("format") != "catena_zero.loss_study_games":
        raise ValueError(f"{arguments.games_file}: not a loss study games file")
    track = Track.parse(report["track"])
    rules = track.rules()
    engine = Engine(rules)
    komi = int(report["komi"])
    model_path = report["model"]["file"]
    search_settings = dict(report["model"]["search"])
    factory = AgentFactory(rules, None, "cpu", model_reader=read_model_network)
    evaluator = factory.evaluator(model_path)
    records = [(match["opponent"]["spec"], game) for match in report["matches"].values()
               for game in match["games"]]
    games = [game["actions"] for _, game in records]
    positions, alive = replay_positions(engine, komi, games)
    values, entropies = evaluate_positions(engine, evaluator, positions, alive)
    num_games, length = alive.shape
    model_colour = np.array([BLACK if game["a_colour"] == "black" else WHITE
                             for _, game in records])  # [G]
    to_move = np.stack([states.to_move for states in positions], axis=1)  # [G, T]
    legal_cells = np.stack([engine.legal_actions(states)[:, :-1].sum(axis=1)
                            for states in positions], axis=1)  # [G, T]
    legal_share = legal_cells / rules.board.num_cells  # [G, T]
    model_values = np.where(to_move == model_colour[:, None], values, -values)  # [G, T]
    points = np.array([game["a_points"] for _, game in records])  # [G]
    outcome = np.where(points == 1.0, 1.0, np.where(points == 0.0, -1.0, 0.0))  # [G]
    mover_outcome = np.where(to_move == model_colour[:, None], outcome[:, None],
                             -outcome[:, None])  # [G, T] the side to move's result
    value_error = (values - mover_outcome) ** 2  # [G, T]
    phases = phase_of(legal_share)

    lost = np.flatnonzero(points == 0.0)
    won = np.flatnonzero(points == 1.0)
    losses = []
    deep_index = []  # (game, ply) of the model's last move before each turning point
    for game in lost:
        plies = int(alive[game].sum())
        turn = turning_point(model_values[game, :plies])
        moved_by_model = turn > 0 and to_move[game, turn - 1] == model_colour[game]
        model_plies = [ply for ply in range(min(turn, plies))
                       if to_move[game, ply] == model_colour[game]
                       and ply >= records[game][1]["opening_plies"]]
        last_model_ply = model_plies[-1] if model_plies else None
        losses.append({"game": int(game), "opponent": records[game][0],
                       "model_colour": "black" if model_colour[game] == BLACK else "white",
                       "plies": plies, "turning_ply": turn,
                       "legal_share": float(legal_share[game, min(turn, plies - 1)]),
                       "phase": PHASES[int(phases[game, min(turn, plies - 1)])],
                       "turned_by": "model" if moved_by_model else "opponent",
                       "value_before": float(model_values[game, turn - 1]) if turn else None,
                       "last_model_ply": last_model_ply,
                       "result": records[game][1]["result"]})
        if last_model_ply is not None:
            deep_index.append((len(losses) - 1, int(game), last_model_ply))
        exact = exact_decision(engine, positions, int(game), plies, int(model_colour[game]),
                               legal_cells[game], arguments.solve_cells, arguments.solve_budget)
        if exact["verdict"] == "thrown away":  # what the network thought of the position
            exact["net_value_before"] = float(model_values[game, exact["ply"]])
            exact["move"] = rules.board.action_name(int(games[game][exact["ply"]]))
        losses[-1]["exact"] = exact
    deep = deep_searches(engine, evaluator, positions, games, deep_index, search_settings,
                         arguments.deep_factor, arguments.exact_cells)
    for (loss_number, _, _), found in zip(deep_index, deep, strict=True):
        losses[loss_number]["deep"] = found

    study = {"format": "catena_zero.loss_study", "format_version": 1,
             "games_file": str(arguments.games_file), "model": report["model"],
             "track": str(track), "komi": komi,
             "deep_search": {"simulations": search_settings["num_simulations"]
                             * arguments.deep_factor,
                             "exact_endgame_cells": arguments.exact_cells},
             "games": int(num_games), "lost": int(len(lost)), "won": int(len(won)),
             "losses": losses, "summary": summarise(losses),
             "network": {"lost_games": masked_by_phase(value_error, entropies, phases,
                                                       alive, lost),
                         "won_games": masked_by_phase(value_error, entropies, phases,
                                                      alive, won)}}
    if arguments.shards:
        study["network"]["self_play"] = shard_figures(arguments.shards, track, model_path,
                                                      arguments.max_shard_samples)
    out = Path(arguments.out)
    out.mkdir(parents=True, exist_ok=True)
    images = Path(arguments.images) if arguments.images else out / "gallery"
    study["gallery"] = draw_gallery(rules, positions, games, losses, arguments.gallery,
                                    images)
    atomic_write_text(out / "study.json", json.dumps(study, indent=1) + "\n")
    log(json.dumps(study["summary"], indent=1))
    log(json.dumps(study["network"], indent=1))
    return study


def masked_by_phase(value_error, entropies, phases, alive, games) -> dict:
    mask = np.zeros_like(alive)
    mask[games] = alive[games]
    return by_phase(value_error[mask], entropies[mask], phases[mask])


def deep_searches(engine: Engine, evaluator, positions: list[GameState], games, chosen,
                  search_settings: dict, factor: int, exact_cells: int) -> list[dict]:
    """Search each chosen (loss, game, ply) position again, deeper, in one batch; what the
    deep search says of the move the model played there."""
    if not chosen:
        return []
    states = GameState.concatenate([positions[ply].take(np.array([game]))
                                    for _, game, ply in chosen])
    played = np.array([games[game][ply] for _, game, ply in chosen])  # [B]
    settings = {key: value for key, value in search_settings.items()
                if key in SearchConfig.__dataclass_fields__}
    settings.update(num_simulations=int(search_settings["num_simulations"]) * factor,
                    exact_endgame_cells=exact_cells)
    config = SearchConfig(**settings)
    output = search(engine, states, evaluator, config, np.random.default_rng(0))
    legal_cells = engine.legal_actions(states)[:, :-1].sum(axis=1)  # [B]
    found = []
    for row in range(len(chosen)):
        q_values = np.asarray(output.q_values[row])
        best = int(output.action[row])
        found.append({"played": engine.rules.board.action_name(int(played[row])),
                      "deep_choice": engine.rules.board.action_name(best),
                      "agrees": bool(best == played[row]),
                      "q_played": float(q_values[played[row]]),
                      "q_deep_choice": float(q_values[best]),
                      "root_value": float(output.root_value[row]),
                      "legal_cells": int(legal_cells[row]),
                      "exact": bool(legal_cells[row] <= exact_cells)})
    return found


def summarise(losses: list[dict]) -> dict:
    """Counts of the losses by phase, by who turned them, and what the deep search says."""
    summary: dict = {"losses": len(losses)}
    for key in ("phase", "turned_by", "opponent"):
        counts: dict[str, int] = {}
        for loss in losses:
            counts[loss[key]] = counts.get(loss[key], 0) + 1
        summary[f"by_{key}"] = counts
    with_deep = [loss["deep"] for loss in losses if "deep" in loss]
    summary["deep_checked"] = len(with_deep)
    summary["deep_disagrees"] = sum(not found["agrees"] for found in with_deep)
    summary["deep_disagrees_exact"] = sum(not found["agrees"] and found["exact"]
                                          for found in with_deep)
    gains = [found["q_deep_choice"] - found["q_played"] for found in with_deep
             if not found["agrees"]]
    summary["deep_mean_q_gain"] = float(np.mean(gains)) if gains else 0.0
    summary["mean_turning_legal_share"] = float(np.mean(
        [loss["legal_share"] for loss in losses])) if losses else 0.0
    summary["mean_turning_game_share"] = float(np.mean(
        [loss["turning_ply"] / loss["plies"] for loss in losses])) if losses else 0.0
    exact = [loss["exact"] for loss in losses if "exact" in loss]
    verdicts: dict[str, int] = {}
    for found in exact:
        verdicts[found["verdict"]] = verdicts.get(found["verdict"], 0) + 1
    summary["exact_verdicts"] = verdicts
    thrown = [found for found in exact if found["verdict"] == "thrown away"]
    summary["thrown_away_legal_cells"] = [found["legal_cells"] for found in thrown]
    summary["thrown_away_net_value"] = [found["net_value_before"] for found in thrown]
    return summary


def exact_decision(engine: Engine, positions: list[GameState], game: int, plies: int,
                   model_colour: int, legal_cells: np.ndarray, max_cells: int,
                   budget: int) -> dict:
    """Walk one lost game back from its end through its positions of at most `max_cells`
    legal cells, solving each exactly (the model's view: 1 win, 0 draw, -1 loss); the
    decisive move is the model's last move from a position it could hold (>= 0) into a
    lost one. `verdict`: "thrown away" (that move is found), "lost before the horizon"
    (every solved position already lost) or "unsolved" (none solved within the budget)."""
    solver = ExactEndgame(engine.rules, max_positions=budget)
    values: dict[int, float] = {}
    for ply in range(plies - 1, -1, -1):
        if legal_cells[ply] > max_cells:
            break
        states = positions[ply].take(np.array([game]))
        if states.terminal[0]:
            continue
        try:
            margin = float(solver.margins(states, np.array([0]))[0])
        except SolverBudgetExceeded:
            break
        values[ply] = float(np.sign(margin) * (1.0 if model_colour == BLACK else -1.0))
    if not values:
        return {"verdict": "unsolved", "solved_plies": 0}
    found = {"solved_plies": len(values), "horizon_ply": min(values),
             "horizon_legal_cells": int(legal_cells[min(values)])}
    to_move = [int(positions[ply].to_move[game]) for ply in range(plies)]
    for ply in sorted(values, reverse=True):
        after = values.get(ply + 1, -1.0 if ply + 1 >= plies else None)
        if to_move[ply] == model_colour and values[ply] >= 0 and after is not None \
                and after < 0:
            return {**found, "verdict": "thrown away", "ply": ply,
                    "legal_cells": int(legal_cells[ply]), "value_before": values[ply]}
    if max(values.values()) < 0:
        return {**found, "verdict": "lost before the horizon"}
    return {**found, "verdict": "unclear"}


def draw_gallery(rules, positions, games, losses, count: int, folder: Path) -> list[dict]:
    """PNG boards of the first `count` turning points that have a deep-search check, the
    model's move and the deep search's choice marked; the drawn losses."""
    from benchmarks.board_picture import draw_board

    drawn = []
    for loss in losses:
        if len(drawn) >= count:
            break
        if "deep" not in loss:
            continue
        ply = loss["last_model_ply"]
        states = positions[ply].take(np.array([loss["game"]]))
        # The button is no cell: a move of it shows in the title only.
        marks = {}
        for key, kind in (("played", "played"), ("deep_choice", "deep")):
            action = rules.board.parse_action(loss["deep"][key])
            if action < rules.board.num_cells and action not in marks:
                marks[action] = kind
        path = folder / f"loss-{loss['game']:03d}-ply{ply:02d}.png"
        title = (f"game {loss['game']} vs {loss['opponent']}, ply {ply + 1}, model "
                 f"{loss['model_colour']}; {loss['phase']}\nplayed {loss['deep']['played']} "
                 f"(red), deep search {loss['deep']['deep_choice']} (green)")
        draw_board(rules, states.stones[0], marks, title, path)
        drawn.append({"game": loss["game"], "ply": ply, "file": str(path)})
    return drawn
