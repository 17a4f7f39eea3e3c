# tablecam: common tasks. Every target works on a fresh Debian 12 with only the Rust toolchain
# and python3: the ones that build anything run scripts/setup.sh first (fast when done).
# Builds always use --release and the shared target/ directory.

# What `make demo` runs after building (one shell line; `&&` stops at the first failure): the main
# job on the bundled session (datasets/demo/, config/demo.json) with a fresh journal and recording,
# publishing on tcp://127.0.0.1:5556; then the journal's hash chain is checked and the round's
# dispute evidence pack is written from the recording to var/demo/dispute/index.html.
DEMO_COMMANDS = rm -rf var/demo/journal var/demo/recordings var/demo/dispute && $(BIN) run --config config/demo.json && $(BIN) journal verify var/demo/journal/T1.jsonl && $(BIN) dispute --session "$$(ls -d var/demo/recordings/T1/*/ | tail -n 1)" --round T1-r000001 --out var/demo/dispute && echo "demo: evidence pack var/demo/dispute/index.html, journal var/demo/journal/T1.jsonl, recording $$(ls -d var/demo/recordings/T1/*/ | tail -n 1)"

# The rulesets `make odds` prints.
RULESETS = fortune3cp-2025 fortune3cp-2008 stud-2004 qpoker-2004 sangong-1996

CARGO ?= cargo
PYTHON ?= python3
BIN = ./target/release/tablecam

.PHONY: setup build test demo bench odds lint fixtures doctor calibrations eval-presence train quantize eval

## setup: install missing Debian packages and ONNX Runtime (.native/onnxruntime/)
setup:
	bash scripts/setup.sh

## build: release build of the library and the tablecam binary
build: setup
	$(CARGO) build --release

## test: unit, integration and doc tests, then check that the benches still compile
test: setup
	$(CARGO) test --release
	$(CARGO) build --release --benches
	$(CARGO) fmt --check
	$(CARGO) clippy --release --all-targets -- -D warnings

## demo: build, then run the main job on the bundled session and write a dispute evidence pack
demo: build
	$(DEMO_COMMANDS)

## bench: run the criterion benches
bench: setup
	$(CARGO) bench

## odds: house edge and return of every bet of every ruleset
odds: build
	@set -e; for r in $(RULESETS); do echo "== $$r"; $(BIN) odds --ruleset $$r; done

## lint: formatting and clippy (warnings are errors)
lint: setup
	$(CARGO) fmt --check
	$(CARGO) clippy --release --all-targets -- -D warnings

## fixtures: regenerate the test models in models/fixtures/ (affine_softmax, locator_tiny, classifier_tiny, classifier_corner_tiny, classifier_face_tiny, classifier_glyph_tiny; needs PyPI for the `onnx` package)
fixtures:
	$(PYTHON) scripts/make_fixture_model.py
	$(PYTHON) scripts/make_recognition_fixtures.py

## doctor: check the native stack and the committed models on this machine
doctor: build
	$(BIN) doctor

## calibrations: regenerate the example calibrations (calibration/*.json) and their overlay pictures (docs/images/calibration/)
calibrations: build
	@set -e; mkdir -p var/calibration; for r in $(RULESETS); do \
	  $(BIN) calibrate example --ruleset $$r --out calibration/$$r.json --frame-out var/calibration/$$r.png; \
	  $(BIN) calibrate check --calibration calibration/$$r.json --frame var/calibration/$$r.png --out docs/images/calibration/$$r.jpg --width 960; \
	done

## eval-presence: bet-presence accuracy on simulated sessions (every ruleset × lighting preset, 2 rounds each, 720p; ~40 min on 2 cores)
eval-presence: build
	$(BIN) presence eval --rounds 2 --size 720p

## train: retrain the recognition models from scratch on CPU (simulator dataset + the train half of ../shared/real-cards; see models/MODEL_CARD.md)
train: build
	bash scripts/train.sh

## quantize: re-derive the committed 8-bit classifiers from their float originals (models/MODEL_CARD.md, "8-bit convolutions"; ~20 min on 2 cores)
quantize: build
	bash scripts/quantize.sh

## eval: recognition figures of models/*.onnx: simulator test split (deck families never trained on) and the held-out real photos
# EVAL_WORKERS=2: the same accuracy figures sooner on two cores (the held-out real photos 1.8x), but timings that share them
EVAL_WORKERS ?= 1
eval: build
	@test -s datasets/generated/detect/annotations.jsonl || $(BIN) simulate detections --out datasets/generated/detect --seed 1
	$(BIN) eval-recognition --sim datasets/generated/detect --real ../shared/real-cards --real-split models/training/real_test.txt --workers $(EVAL_WORKERS) --out var/eval-recognition
