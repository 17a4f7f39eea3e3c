#!/usr/bin/env bash
# Quantizes the classifiers' convolutions to 8 bits, var/training/float/NAME.onnx → models/NAME.onnx
# (models/training/quantize.py; models/MODEL_CARD.md, "8-bit convolutions"):
#   bash scripts/quantize.sh [classifier] [face_classifier] [glyph_classifier]   (default: all three)
# scripts/train.sh calls it after each float export. Alone (`make quantize`) it re-derives the
# committed 8-bit models from their float originals: a float model missing from var/training/float
# is taken from git at the last commit whose models/ held it (FLOAT_COMMIT; FACE_FLOAT_COMMIT for the
# whole-card ensemble), and the patches it needs are made where missing (~20 min on 2 cores). Seeds
# are fixed, so the result is the same file.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/train_env.sh
T="${T:-var/training}"
G="$T/glyph"
FLOAT_COMMIT=170d3d3
FACE_FLOAT_COMMIT=993ce88
PY="$VENV/bin/python"
mkdir -p "$T/float" "$G"
# make_patches FILE COMMAND...: runs COMMAND --out FILE where FILE is missing
make_patches() {
  local out="$1"
  shift
  [ -s "$out" ] || "$@" --out "$out"
}
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(classifier face_classifier glyph_classifier)
for name in "${names[@]}"; do
  float="$T/float/$name.onnx"
  if [ ! -s "$float" ]; then
    commit="$FLOAT_COMMIT"
    [ "$name" != face_classifier ] || commit="$FACE_FLOAT_COMMIT"
    echo "== $float from git ($commit:models/$name.onnx)"
    git show "$commit:models/$name.onnx" > "$float"
  fi
  # Activation ranges: 4,096 patches of the training designs (seed 11), 35 % of them real photos'
  # train-half patches where the network was trained on such too (the share of its batches).
  case "$name" in
    classifier)
      make_patches "$T/corners-val.npz" "$PY" models/training/corners.py --faces "$F" --split val --seed 2 --n 60000
      make_patches "$T/ranges-corners.npz" "$PY" models/training/corners.py --faces "$F" --split train --seed 11 --n 4096
      # the float classifier decides which unlabelled spots of the photos to skip (real_glyphs.py)
      make_patches "$T/corners-real-glyphs.npz" "$PY" models/training/real_glyphs.py --teacher "$float"
      args=(--val "$T/corners-val.npz" --ranges "$T/ranges-corners.npz" --ranges-extra "$T/corners-real-glyphs.npz") ;;
    face_classifier)
      face=(--face --long-side 45,240 --faces "$F")
      make_patches "$T/face-val.npz" "$PY" models/training/corners.py "${face[@]}" --split val --seed 2 --n 24000
      make_patches "$T/ranges-face.npz" "$PY" models/training/corners.py "${face[@]}" --split train --seed 11 --n 4096
      args=(--val "$T/face-val.npz" --ranges "$T/ranges-face.npz") ;;
    glyph_classifier)
      make_patches "$G/calibration.npz" "$PY" models/training/glyph_patches.py --faces "$F" --split val --seed 2 \
        --n 60000 --hidden-index skip
      make_patches "$G/ranges.npz" "$PY" models/training/glyph_patches.py --faces "$F" --split train --seed 11 --n 4096
      for half in train test; do
        make_patches "$G/real-$half.npz" "$PY" models/training/glyph_patches.py --real ../shared/real-cards --real-files "$half"
      done
      args=(--val "$G/calibration.npz" --ranges "$G/ranges.npz" --ranges-extra "$G/real-train.npz"
            --real-test "$G/real-test.npz") ;;
    *) echo "quantize.sh: unknown model $name (classifier, face_classifier, glyph_classifier)" >&2; exit 2 ;;
  esac
  echo "== 8-bit $name"
  "$PY" models/training/quantize.py --model "$float" --method percentile "${args[@]}" --out "models/$name.onnx"
done
