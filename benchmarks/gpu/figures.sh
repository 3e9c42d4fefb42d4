#!/usr/bin/env bash
# What one GPU does with the suite, in one short call (well inside 10 minutes on an H100):
#   1. the embed command, whole process: 2,000 CoNLL-2003 dev sentences and one sentence (start-up), with
#      the embedded biLM;
#   2. biLM pretraining tokens/s, fast and plain step, small and paper sizes (benchmarks.pretrain_speed);
#   3. one paper-profile epoch of each task, projected from timed updates (benchmarks.paper_scale).
#
#   OUT=dir benchmarks/gpu/figures.sh                 # on the GPU machine (ELMO_SHARED: the shared data)
#   DEVICE=cpu TASKS=ner SENTENCES=20 STEPS=1 UPDATES=1 CONFIGS=small OUT=dir benchmarks/gpu/figures.sh
#                                                     # the same, tiny, on a CPU (how it is checked here)
# Everything lands in OUT: machine.txt, embed.txt, pretrain_speed.json/.txt, paper_scale.md/.txt.
set -euo pipefail
: "${OUT:?where the figures go}"
DEVICE=${DEVICE:-cuda}
PY=${PY:-python3}
SHARED=${ELMO_SHARED:-../shared}
mkdir -p "$OUT"
{
  date -u +%Y-%m-%dT%H:%M:%SZ
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo "no nvidia-smi"
  $PY -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'no CUDA device')"
  lscpu 2>/dev/null | grep -m1 'Model name' || true
  echo "device: $DEVICE"
} | tee "$OUT/machine.txt"

# 1. the embed command, whole process (seconds include start-up, loading and writing)
awk -v limit="${SENTENCES:-2000}" '
  function emit() { if (line != "" && n < limit) { print line; n++ } line = "" }
  NF == 0 { emit(); next }
  $1 != "-DOCSTART-" { line = line (line == "" ? "" : " ") $1 }
  END { emit() }' "$SHARED/data/conll2003/eng.testa" > "$OUT/sentences.txt"
head -n 1 "$OUT/sentences.txt" > "$OUT/one_sentence.txt"
for input in one_sentence sentences; do
  start=$EPOCHREALTIME
  $PY -m elmo_core.embed --input "$OUT/$input.txt" --output "$OUT/$input.hdf5" --device "$DEVICE" --no-progress
  end=$EPOCHREALTIME
  tokens=$(wc -w < "$OUT/$input.txt")
  echo "$input: $tokens tokens, $(awk "BEGIN { printf \"%.2f\", $end - $start }") s whole process" | tee -a "$OUT/embed.txt"
done
rm -f "$OUT"/*.hdf5 "$OUT/one_sentence.txt"

# 2. pretraining
$PY -m benchmarks.pretrain_speed --configs ${CONFIGS:-small paper} --device "$DEVICE" --steps "${STEPS:-5}" \
  --rounds 1 --json "$OUT/pretrain_speed.json" | tee "$OUT/pretrain_speed.txt"

# 3. one paper-profile epoch per task
$PY -m benchmarks.paper_scale --device "$DEVICE" --tasks "${TASKS:-ner,sst,nli,qa,srl,coref}" \
  --updates "${UPDATES:-3}" --out "$OUT/paper_scale.md" | tee "$OUT/paper_scale.txt"
date -u +%Y-%m-%dT%H:%M:%SZ | tee -a "$OUT/machine.txt"
