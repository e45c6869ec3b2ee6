# Sourced by device_check.sh and device_champion.sh from the repository root, once each has set
# OUT, RUN_DIR and PY: makes OUT, puts the pure-Python packages of .gpu/site (hydra, omegaconf,
# antlr4, missing on the lent machine) on the module path, and defines the steps both share.
mkdir -p "$OUT"
export PYTHONPATH="$PWD/.gpu/site${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
stamp() { echo "== $(date -u +%T) $*"; }

# The machine's GPUs, then the versions the given Python snippet prints.
environment() {
    stamp environment
    nvidia-smi -L 2>/dev/null || echo "no nvidia-smi"
    $PY -c "$1"
}

# After the training: its exit status (the argument), the end of its log, and the newest
# checkpoint of RUN_DIR copied to OUT with whichever of the further files named exist.
keep_newest() {
    echo "train exit $1"
    shift
    tail -c 3000 "$OUT/train.log"
    newest=$(ls "$RUN_DIR"/checkpoints/*.pt | sort | tail -1)
    cp "$newest" "$OUT/" && echo "kept $newest"
    for name in "$@"; do
        cp "$RUN_DIR/$name" "$OUT/" 2>/dev/null
    done
}
