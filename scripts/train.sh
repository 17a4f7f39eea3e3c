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
if [ ! -s datasets/generated/detect/annotations.jsonl ]; then
  echo "== simulator dataset: datasets/generated/detect"
  ./target/release/tablecam simulate detections --out datasets/generated/detect --seed 1
fi
export XLA_FLAGS="${XLA_FLAGS:-} --xla_cpu_multi_thread_eigen=true"
echo "== locator"
"$VENV/bin/python" models/training/train_locator.py --steps "${LOCATOR_STEPS:-3000}" --seed 1
echo "== classifier"
"$VENV/bin/python" models/training/train_classifier.py --steps "${CLASSIFIER_STEPS:-2500}" --seed 1
sha256sum models/locator.onnx models/classifier.onnx
