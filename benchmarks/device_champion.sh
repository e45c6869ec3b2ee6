#!/usr/bin/env bash
# The general champion run continued on a lent GPU machine for a few minutes, then the newest
# checkpoint copied to $OUT to be compared or gated here before it is bundled. WORKERS > 0
# plays in that many self-play processes evaluating on the GPU (runtime=processes) while this
# process trains there; WORKERS=0 runs the one inline process with GAMES games at once.
#
#   OUT=/tmp/out DEVICE=cpu RUN_MINUTES=0.5 GAMES=16 WORKERS=2 bash benchmarks/device_champion.sh
#                                                          # rehearsal on the CPU
#   RUN_MINUTES=9 HARD_SECONDS=565 GAMES=256 WORKERS=10 THREADS=2 \
#       EXTRA="selfplay.full_simulations=128 selfplay.cheap_simulations=32" \
#       bash benchmarks/device_champion.sh                 # as last run on an H200 (docs/results)
#
# Inputs (prepared beside the repo, git-ignored, carried to the machine with `carry`):
#   .gpu/site              pure-Python packages missing there (hydra, omegaconf, antlr4)
#   .gpu/champion          a run dir holding checkpoints/<the newest checkpoint>:
#                          mkdir -p .gpu/champion/checkpoints
#                          cp checkpoints/general6/*.pt .gpu/champion/checkpoints/
# Back here, gate the checkpoint against the registry's champions before bundling it:
#   catena-zero arena arena=gate arena.candidate=checkpoint:OUT/checkpoint-....pt \
#       board=side6 arena.num_games=200      (and board=side8)
# The mix, the 6x32 net and the floor learning rate are the champion sittings'
# (checkpoints/README.md), so the curriculum goes on where
# it stopped; the run's seconds clock counts the GPU's faster iterations as they come. With
# 4x the games an iteration, the training steps an iteration grow 4x too, keeping the
# sittings' training steps per self-play position.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/device_champion}
DEVICE=${DEVICE:-cuda}
RUN_MINUTES=${RUN_MINUTES:-10}
GAMES=${GAMES:-512}
RUN_DIR=${RUN_DIR:-.gpu/champion}
# The run is killed this many seconds in, whatever its iteration, so that the newest
# checkpoint is still copied out inside the lent machine's command limit.
HARD_SECONDS=${HARD_SECONDS:-$(( ${RUN_MINUTES%.*} * 60 + 240 ))}
THREADS=${THREADS:-$(nproc)}
# WORKERS > 0: that many self-play processes (runtime=processes) evaluating on
# SELFPLAY_DEVICE while this process trains on DEVICE; 0: the one inline process.
WORKERS=${WORKERS:-0}
SELFPLAY_DEVICE=${SELFPLAY_DEVICE:-$DEVICE}
# Further Hydra overrides, space-separated (for example a deeper self-play search when the
# workers would otherwise wait on the learner): EXTRA="selfplay.full_simulations=128".
read -r -a extra <<< "${EXTRA:-}"
PY=${PYTHON:-python3}
source benchmarks/device_common.sh

environment "import sys, torch; print(sys.version.split()[0], 'torch', torch.__version__, \
'cuda', torch.cuda.is_available(), 'cpus', __import__('os').cpu_count())"
ls "$RUN_DIR"/checkpoints/*.pt | tail -1

steps=$(( 64 * GAMES / 128 ))
common=(run_dir="$RUN_DIR" resume=true device="$DEVICE"
    'mix.shares=[1,4,3,26,14,12,4,4,1,1,1,1,1,1,1,1,2,2,2,2,2,2,2,2]' 'mix.final_shares=[]'
    mix.schedule_minutes=0 games_per_iteration="$GAMES" selfplay.games_in_batch="$GAMES"
    train.steps_per_iteration="$steps" checkpoint_every=1 gating.enabled=false
    network.blocks=6 train.learning_rate=1e-4 train.lr_schedule=constant
    selfplay.full_simulations=16 selfplay.cheap_simulations=4  # the run's search, named so a resume keeps it
    tensorboard=false progress=true iterations=0 "${extra[@]}")
train() {  # seconds to the hard stop, then overrides
    local seconds=$1; shift
    timeout "$seconds" $PY -c \
        "import sys; from catena_zero.cli.main import main; sys.exit(main(sys.argv[1:]))" \
        train "${common[@]}" "$@" >> "$OUT/train.log" 2>&1
}
started=$(date +%s)
if [ "$WORKERS" -gt 0 ]; then
    stamp "champion continuation: $WORKERS self-play processes on $SELFPLAY_DEVICE, learner on" \
        "$DEVICE, for $RUN_MINUTES minutes, $GAMES games a shard"
    train "$HARD_SECONDS" runtime=processes runtime.num_selfplay_actors="$WORKERS" \
        runtime.selfplay_device="$SELFPLAY_DEVICE" threads="$THREADS" max_minutes="$RUN_MINUTES"
    status=$?
    elapsed=$(( $(date +%s) - started ))
    if [ "$status" -ne 0 ] && [ "$elapsed" -lt 150 ]; then
        # The worker processes failed to start: the rest of the time goes to the one process.
        stamp "processes runtime failed (exit $status) after ${elapsed}s; inline instead"
        left=$(( HARD_SECONDS - elapsed ))
        train "$left" runtime=inline threads="$THREADS" \
            max_minutes="$(( (left - 120) / 60 ))"
    fi
else
    stamp "champion continuation on $DEVICE for $RUN_MINUTES minutes, $GAMES games an iteration"
    train "$HARD_SECONDS" runtime=inline threads="$THREADS" max_minutes="$RUN_MINUTES"
fi
keep_newest $? summary.json metrics.jsonl
stamp done
