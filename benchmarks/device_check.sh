#!/usr/bin/env bash
# The prepared GPU check, run once on a lent GPU machine (which has torch but neither the
# package installed nor hydra): CUDA tests, a side-6 continuation run on the GPU, and the
# self-play benchmark with the network on the GPU. Everything it keeps lands in $OUT.
#
#   OUT=/tmp/out DEVICE=cpu RUN_MINUTES=0.2 BENCH_GAMES=16 RUN_DIR=/tmp/copy \
#       bash benchmarks/device_check.sh                                # rehearsal here
#
# Inputs (prepared beside the repo, git-ignored, carried to the machine):
#   .gpu/site   pure-Python packages missing there (hydra, omegaconf, antlr4)
#   .gpu/side6  a run dir to continue: config.yaml, the newest checkpoint, the newest shards
set -u
# From the repository root, `python -m` and `python -c` find the package of this checkout
# first, which is how it is found on a machine where it is not installed.
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/device_check}
DEVICE=${DEVICE:-cuda}
RUN_MINUTES=${RUN_MINUTES:-5}
BENCH_GAMES=${BENCH_GAMES:-256}
RUN_DIR=${RUN_DIR:-.gpu/side6}
PY=${PYTHON:-python3}
source benchmarks/device_common.sh

environment "import sys, torch, numpy; print(sys.version.split()[0], 'torch', torch.__version__, \
'cuda', torch.cuda.is_available(), 'numpy', numpy.__version__, 'cpus', __import__('os').cpu_count())"

stamp "tests (network, train, CUDA path)"
timeout 120 $PY -m pytest -q -x -p no:cacheprovider tests/network tests/train 2>&1 | tail -15

stamp "side-6 continuation on $DEVICE for $RUN_MINUTES minutes"
timeout $(( ${RUN_MINUTES%.*} * 60 + 150 )) $PY -c \
    "import sys; from catena_zero.cli.main import main; sys.exit(main(sys.argv[1:]))" \
    train preset=side6 network=b4c32 runtime=inline run_dir="$RUN_DIR" resume=true \
    device="$DEVICE" threads=4 progress=true gating.enabled=false tensorboard=false \
    keep_checkpoints=0 checkpoint_every=2 iterations=0 max_minutes="$RUN_MINUTES" \
    games_per_iteration=512 selfplay.games_in_batch=512 selfplay.full_simulations=16 \
    selfplay.cheap_simulations=4 selfplay.full_search_probability=0.3 \
    train.batch_size=256 train.steps_per_iteration=200 > "$OUT/train.log" 2>&1
keep_newest $? summary.json

stamp "self-play benchmark on $DEVICE"
timeout 150 $PY -m benchmarks.bench_selfplay --presets side4 side6 --device "$DEVICE" \
    --repeats 1 --games "$BENCH_GAMES" --raw-seconds 3 --single-seconds 3 \
    --json "$OUT/bench_gpu.json" > "$OUT/bench.log" 2>&1; head -4 "$OUT/bench.log"
stamp done
