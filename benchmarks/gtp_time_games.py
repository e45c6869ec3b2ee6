"""Games under a GTP clock: does `catena-zero gtp` ever lose on time?

    python -m benchmarks.gtp_time_games --side 8 --games 20 --main 10

A referee starts one `catena-zero gtp` process, sends `time_settings MAIN 0 0` and plays
games in which the engine moves for both colours (after `--opening` random referee moves,
seeded, so the games differ). Before each `genmove` it sends the mover's `time_left`; it
times each `genmove` from sending the command to reading the whole reply, as a controller
does, and a player whose clock goes below zero loses on time. Prints one line per game and
a summary: time losses, the slowest move, the least time left, moves per game. First it
times the start-up: process start to the answer of `name` (the model is read and warmed up
before the first command), then the first and second `genmove` of the empty board.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

import numpy as np

from catena_zero.rules import Game, Rules


class GtpProcess:
    """A `catena-zero gtp` child speaking over pipes."""

    def __init__(self, overrides: list[str]) -> None:
        command = [sys.executable, "-c",
                   "import sys; from catena_zero.cli.main import main; sys.exit(main())",
                   "gtp", *overrides]
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True, bufsize=1)

    def send(self, line: str) -> str:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        reply = []
        while True:
            text = self.process.stdout.readline()
            if text == "":
                raise RuntimeError(f"the engine exited during {line!r}")
            if text.strip() == "" and reply:
                break
            if text.strip():
                reply.append(text.strip())
        answer = "\n".join(reply)
        if not answer.startswith("="):
            raise RuntimeError(f"{line!r} was refused: {answer}")
        return answer[1:].strip()

    def close(self) -> str:
        try:
            self.send("quit")
        except RuntimeError:
            pass
        _, errors = self.process.communicate(timeout=30)
        return errors


def play_game(engine: GtpProcess, rules: Rules, main: float, opening: int,
              rng: np.random.Generator) -> dict:
    engine.send("clear_board")
    engine.send(f"time_settings {main:g} 0 0")
    game = Game(rules)
    for _ in range(opening):
        action = int(rng.choice(np.asarray(game.legal_actions())))
        engine.send(f"play {'b' if game.to_move == 1 else 'w'} "
                    f"{rules.board.action_name(action)}")
        game.play(action)
    left = {1: float(main), 2: float(main)}
    slowest, moves = 0.0, 0
    while not game.is_over:
        colour = game.to_move
        name = "b" if colour == 1 else "w"
        engine.send(f"time_left {name} {left[colour]:.3f} 0")
        start = time.monotonic()
        reply = engine.send(f"genmove {name}")
        elapsed = time.monotonic() - start
        left[colour] -= elapsed
        slowest, moves = max(slowest, elapsed), moves + 1
        if left[colour] < 0:
            return {"time_loss": name, "moves": moves, "slowest": slowest,
                    "least_left": min(left.values())}
        game.play(game.parse_action(reply))
    return {"time_loss": None, "moves": moves, "slowest": slowest,
            "least_left": min(left.values())}


def _timed(engine: GtpProcess, command: str) -> float:
    start = time.monotonic()
    engine.send(command)
    return time.monotonic() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--side", type=int, default=8)
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--main", type=float, default=10.0, help="seconds per player")
    parser.add_argument("--opening", type=int, default=2, help="random referee moves")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("overrides", nargs="*", help="extra `catena-zero gtp` overrides")
    args = parser.parse_args(argv)
    rules = Rules(side=args.side)
    start = time.monotonic()
    engine = GtpProcess([f"side={args.side}", *args.overrides])
    engine.send("name")
    ready = time.monotonic() - start
    first = _timed(engine, "genmove b")
    second = _timed(engine, "genmove w")
    print(f"start-up: process start to the answer of `name` {ready:.2f} s; first genmove "
          f"{first:.2f} s; second genmove {second:.2f} s", flush=True)
    rng = np.random.default_rng(args.seed)
    results = []
    try:
        for index in range(args.games):
            result = play_game(engine, rules, args.main, args.opening, rng)
            results.append(result)
            print(f"game {index + 1}: {result['moves']} engine moves, slowest "
                  f"{result['slowest']:.2f} s, least left {result['least_left']:.2f} s, "
                  f"time loss: {result['time_loss'] or 'none'}", flush=True)
    finally:
        errors = engine.close()
    losses = sum(result["time_loss"] is not None for result in results)
    print(f"side {args.side}, {args.main:g} s sudden death, {len(results)} games: "
          f"{losses} time losses; slowest move {max(r['slowest'] for r in results):.2f} s; "
          f"least time left {min(r['least_left'] for r in results):.2f} s; "
          f"{np.mean([r['moves'] for r in results]):.0f} engine moves a game")
    print(errors.strip().splitlines()[0] if errors.strip() else "", file=sys.stderr)
    return 1 if losses else 0


if __name__ == "__main__":
    sys.exit(main())
