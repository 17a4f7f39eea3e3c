#!/usr/bin/env bash
# Retrains both recognition models from scratch, reproducibly, on CPU:
#   1. a Python venv with models/training/requirements.txt (PyPI wheels) in .native/train-venv
#   2. the simulator's detection dataset (datasets/generated/detect), if missing
#   3. the locator, then the classifier; both exported to models/*.onnx with their checks.
# Seeds are fixed; the real photos are read from ../shared/real-cards (train half only,
# see models/training/real_split.json). Override steps with LOCATOR_STEPS / CLASSIFIER_STEPS.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=.native/train-venv
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c "import jax, onnx, onnxruntime, PIL" 2>/dev/null; then
  echo "== training environment: $VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --upgrade pip
  "$VENV/bin/pip" install --quiet -r models/training/requirements.txt
fi
# The committed models were trained on exactly this: 1,600 training images (seed 1) and
# separately rendered val/test images (seed 2); the val/test deck families never appear in train.
D=datasets/generated/detect
if [ ! -s "$D/annotations.jsonl" ]; then
  echo "== simulator dataset: $D (train: ~7 min, val+test: ~3 min on 2 cores)"
  ./target/release/tablecam simulate detections --out datasets/generated/detect-train --seed 1 --train 1600 --val 0 --test 0
  ./target/release/tablecam simulate detections --out datasets/generated/detect-eval --seed 2 --train 0 --val 200 --test 400
  mkdir -p "$D"
  rm -rf "$D/train" "$D/val" "$D/test"
  ln -s ../detect-train/train "$D/train"
  ln -s ../detect-eval/val "$D/val"
  ln -s ../detect-eval/test "$D/test"
  cat datasets/generated/detect-train/annotations.jsonl datasets/generated/detect-eval/annotations.jsonl > "$D/annotations.jsonl"
fi
export XLA_FLAGS="${XLA_FLAGS:-} --xla_cpu_multi_thread_eigen=true"
echo "== locator"
"$VENV/bin/python" models/training/train_locator.py --steps "${LOCATOR_STEPS:-1800}" --seed 1
echo "== classifier"
"$VENV/bin/python" models/training/train_classifier.py --steps "${CLASSIFIER_STEPS:-1200}" --batch 64 --seed 1
sha256sum models/locator.onnx models/classifier.onnx
