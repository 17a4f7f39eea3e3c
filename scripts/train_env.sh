# Sourced by scripts/train.sh and scripts/quantize.sh: the training environment, a Python venv
# with models/training/requirements.txt (PyPI wheels) in .native/train-venv, and the simulator's
# face sheets that every patch generator draws on.
VENV=.native/train-venv
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c "import jax, onnx, onnxruntime, PIL, sympy" 2>/dev/null; then
  echo "== training environment: $VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --upgrade pip
  "$VENV/bin/pip" install --quiet -r models/training/requirements.txt
fi
F=datasets/generated/faces
if [ ! -s "$F/faces.json" ]; then
  ./target/release/tablecam simulate detections --faces "$F"
fi
