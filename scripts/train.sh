#!/usr/bin/env bash
# Retrains the recognition models from scratch, reproducibly, on CPU:
#   1. a Python venv with models/training/requirements.txt (PyPI wheels) in .native/train-venv
#   2. the simulator's detection dataset (datasets/generated/detect), if missing
#   3. the locator, then the card-corner classifier (patches synthesised from the deck artwork,
#      models/training/corners.py, and index patches of the real photos' train half), then the
#      whole-card classifier (corners.py --face), then the glyph classifier (glyph_patches.py);
#      each classifier exported in float to var/training/float/ with its checks, then its
#      convolutions quantized to 8 bits into models/ (models/training/quantize.py).
# Seeds are fixed; the real photos are read from ../shared/real-cards (train half only,
# see models/training/real_split.json). Override steps with LOCATOR_STEPS / CLASSIFIER_STEPS.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/train_env.sh  # $VENV, and the face sheets in $F
if [ -n "${FONT_PATCHES:-}" ]; then
  # FONT_PATCHES=N adds N patches of random index styles drawn from fonts
  # (models/training/font_faces.py; tried for v7/v8 on 2026-11-26 and not adopted, MODEL_CARD.md).
  # Their Debian font packages (font_faces.FONT_PACKAGES) are installed first, by scripts/setup.sh.
  TABLECAM_EXTRA_APT="$(cd models/training && "../../$VENV/bin/python" -c 'import font_faces; print(" ".join(font_faces.FONT_PACKAGES))')" \
    bash scripts/setup.sh
fi
export XLA_FLAGS="${XLA_FLAGS:-} --xla_cpu_multi_thread_eigen=true"
if [ -z "${SKIP_LOCATOR:-}" ]; then  # SKIP_LOCATOR=1 retrains the classifier alone
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
  echo "== locator"
  "$VENV/bin/python" models/training/train_locator.py --steps "${LOCATOR_STEPS:-1800}" --seed 1
fi
if [ -n "${SKIP_CLASSIFIER:-}" ] && [ -z "${SKIP_FACE:-}" ]; then
  echo "SKIP_CLASSIFIER=1 needs SKIP_FACE=1 too: the whole-card classifier starts from the corner classifier's checkpoint" >&2
  exit 2
fi
T=var/training
[ -z "${VISIBLE_LABELS:-}" ] || T=var/training/visible-labels  # never reuse patches labelled otherwise
mkdir -p "$T/float"
export T
# Each classifier is exported in float to $T/float/NAME.onnx and its convolutions quantized to 8
# bits into models/NAME.onnx by scripts/quantize.sh (2-3.5x faster on one core, the same answers
# within the validation sets' noise; models/MODEL_CARD.md, "8-bit convolutions").
# validation designs calibrate the threshold, test designs are only reported; neither is trained on
# (60 k validation patches: a threshold is certified only by thousands of answers, train_corner.py).
# VISIBLE_LABELS=1 labels patches by the index they show (corners.py --visible-labels; v9, tried
# on 2026-11-26 and not adopted yet, MODEL_CARD.md); without it the labels are v6's.
# SKIP_CLASSIFIER=1 keeps the committed models/classifier.onnx (with SKIP_LOCATOR=1 SKIP_FACE=1:
# the glyph classifier alone, about 30 min).
if [ -z "${SKIP_CLASSIFIER:-}" ]; then
  echo "== classifier (v6: upright card corners synthesised from the deck artwork, and real index patches)"
  SPLITS=(val:2:60000 test:3:24000 train:1:${CORNER_PATCHES:-100000})
  TRAIN="$T/corners-train.npz"
  if [ -n "${FONT_PATCHES:-}" ]; then
    SPLITS+=(fonts:4:$FONT_PATCHES)
    TRAIN="$TRAIN,$T/corners-fonts.npz"
  fi
  for split in "${SPLITS[@]}"; do
    IFS=: read -r name seed n <<<"$split"
    if [ ! -s "$T/corners-$name.npz" ]; then
      "$VENV/bin/python" models/training/corners.py ${VISIBLE_LABELS:+--visible-labels} --faces "$F" --split "$name" --seed "$seed" --n "$n" --out "$T/corners-$name.npz"
    fi
  done
  # 35 % of each batch: index patches of the real photos' train half (never the held-out half), cut
  # through the recognizer's glyph proposals (models/training/real_glyphs.py; the classifier in
  # models/ only decides which unlabelled spots to skip). SKIP_REAL=1 trains on the simulator alone.
  # (REAL_PATCHES=1, corners cut on the photo finder's outlines instead, was tried on 2026-11-25 and
  # not adopted: it turned kde-dondorf's AS into AC at 0.999, models/MODEL_CARD.md.)
  EXTRA=()
  if [ -z "${SKIP_REAL:-}" ]; then
    [ -s "$T/corners-real-glyphs.npz" ] || "$VENV/bin/python" models/training/real_glyphs.py --out "$T/corners-real-glyphs.npz"
    EXTRA=(--train-extra "$T/corners-real-glyphs.npz" --extra-share 0.35)
  fi
  if [ -n "${REAL_PATCHES:-}" ]; then
    [ -s "$T/corners-real.npz" ] || "$VENV/bin/python" models/training/real_corners.py --out "$T/corners-real.npz"
    EXTRA=(--train-extra "$T/corners-real.npz")
  fi
  "$VENV/bin/python" models/training/train_corner.py --train "$TRAIN" "${EXTRA[@]}" \
    --val "$T/corners-val.npz" --test "$T/corners-test.npz" --steps "${CLASSIFIER_STEPS:-5000}" --seed 1 \
    --faces "$F" --out "$T/float/classifier.onnx"
  bash scripts/quantize.sh classifier
fi
# The whole-card classifier (models/face_classifier.onnx, docs/recognition.md "Whole-card
# classifier"): the card's whole face upright, so that pips count a number card's rank where its
# index prints a few pixels high. Two networks, their convolutions started from the corner
# classifier's just trained, merged into one file answering their mean probability
# (models/training/ensemble.py; since 2026-11-28): a = 90,000 patches (seed 1), 3,000 steps (~25 min);
# b = those and 90,000 more (seed 4), 8,000 steps (~70 min). Alone b reads more but is sure of more
# wrong cards on unseen designs; the mean halves a's misreads (models/MODEL_CARD.md).
# SKIP_FACE=1 leaves it out (the committed one stays).
if [ -z "${SKIP_FACE:-}" ]; then
  echo "== whole-card classifier (two networks)"
  # file:split:seed:patches (member b's second training set is the train split drawn with seed 4)
  for set in val:val:2:24000 test:test:3:12000 train:train:1:${FACE_PATCHES:-90000} \
    train-s4:train:4:${FACE_PATCHES:-90000}; do
    IFS=: read -r name split seed n <<<"$set"
    if [ ! -s "$T/face-$name.npz" ]; then
      "$VENV/bin/python" models/training/corners.py --face --long-side 45,240 --faces "$F" --split "$split" \
        --seed "$seed" --n "$n" --out "$T/face-$name.npz"
    fi
  done
  mkdir -p "$T/face"
  for member in "a:$T/face-train.npz:${FACE_STEPS:-3000}" "b:$T/face-train.npz,$T/face-train-s4.npz:${FACE_B_STEPS:-8000}"; do
    IFS=: read -r name train steps <<<"$member"
    "$VENV/bin/python" models/training/train_corner.py --face --train "$train" \
      --val "$T/face-val.npz" --test "$T/face-test.npz" --steps "$steps" --seed 1 \
      --init-convs "$T/corner-classifier.pkl" --ckpt "$T/face-classifier-$name.pkl" \
      --out "$T/face/face-$name.onnx" --faces "$F"
  done
  "$VENV/bin/python" models/training/ensemble.py --member "$T/face/face-a.onnx" --member "$T/face/face-b.onnx" \
    --combine mean --val "$T/face-val.npz" --out "$T/float/face_classifier.onnx"
  bash scripts/quantize.sh face_classifier
fi
# The glyph classifier (models/glyph_classifier.onnx, docs/recognition.md "the glyph classifier"): the
# indexes of uncalibrated photos found as rank-over-suit glyph pairs, each cut centred on its own
# glyphs, on simulator faces and on the real photos' train half (35 % of each batch); the held-out
# half is only reported. Two networks are trained alike from different seeds (patches and
# training) and merged into one file answering their normalised geometric mean
# (models/training/ensemble.py), calibrated on validation patches whose partly hidden indexes are
# left out (--hidden-index skip). Their convolutions start from the corner classifier's: the
# checkpoint just trained above, or with SKIP_CLASSIFIER=1 the committed models/classifier.onnx's,
# imported (nets.convs_from_onnx, its 8-bit weights dequantized). SKIP_GLYPH=1 leaves it out (the committed one stays).
if [ -z "${SKIP_GLYPH:-}" ]; then
  echo "== glyph classifier (two networks)"
  G="$T/glyph"
  mkdir -p "$G"
  for half in train test; do
    [ -s "$G/real-$half.npz" ] || "$VENV/bin/python" models/training/glyph_patches.py --real ../shared/real-cards \
      --real-files "$half" --out "$G/real-$half.npz"
  done
  [ -s "$G/calibration.npz" ] || "$VENV/bin/python" models/training/glyph_patches.py --faces "$F" --split val \
    --seed 2 --n 60000 --hidden-index skip --out "$G/calibration.npz"
  INIT_CONVS="$T/corner-classifier.pkl"
  [ -z "${SKIP_CLASSIFIER:-}" ] || INIT_CONVS=models/classifier.onnx
  for member in a:1 b:3; do
    IFS=: read -r name seed <<<"$member"
    [ -s "$G/train-$name.npz" ] || "$VENV/bin/python" models/training/glyph_patches.py --faces "$F" --split train \
      --seed "$seed" --n "${GLYPH_PATCHES:-100000}" --out "$G/train-$name.npz"
    "$VENV/bin/python" models/training/train_corner.py --glyph --train "$G/train-$name.npz" \
      --train-extra "$G/real-train.npz" --extra-share 0.35 --val "$G/calibration.npz" --test "" \
      --real-test "$G/real-test.npz" --steps "${GLYPH_STEPS:-5000}" --seed "$seed" \
      --init-convs "$INIT_CONVS" --ckpt "$G/glyph-$name.pkl" --out "$G/glyph-$name.onnx" --faces "$F"
  done
  "$VENV/bin/python" models/training/ensemble.py --member "$G/glyph-a.onnx" --member "$G/glyph-b.onnx" \
    --combine geo --val "$G/calibration.npz" --real-test "$G/real-test.npz" --out "$T/float/glyph_classifier.onnx"
  bash scripts/quantize.sh glyph_classifier
fi
sha256sum models/locator.onnx models/classifier.onnx models/face_classifier.onnx models/glyph_classifier.onnx
