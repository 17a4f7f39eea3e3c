"""Where the glyph classifier loses the held-out real photos' cards: per labelled card, whether
one of the proposals (glyph_patches.all_proposals, as the Rust side finds them) fits one of its
labelled index boxes (IoU >= 0.5), whether the classifier's top reading of such a proposal is
the card, and how sure it is of the card there.

    python models/training/glyph_coverage.py [--model models/glyph_classifier.onnx]

Reads ../shared/real-cards (the photos are CC BY 4.0, Roboflow "Card Detection v12"), the held-out
half only (real_split.json `test`). Figures: docs/recognition.md, "Uncalibrated photos: the
glyph classifier".
"""
import argparse
import collections
import csv
import json
import os

import cv2
import numpy as np
import onnxruntime as ort

import glyph_patches as gp
import nets
import real_glyphs

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
LABELS = nets.labels()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=os.path.join(ROOT, "models", "glyph_classifier.onnx"))
    ap.add_argument("--real", default=os.path.join(ROOT, "..", "shared", "real-cards"))
    args = ap.parse_args()
    files = json.load(open(os.path.join(ROOT, "models", "training", "real_split.json")))["test"]
    sess = ort.InferenceSession(args.model, providers=["CPUExecutionProvider"])
    boxes = collections.defaultdict(lambda: collections.defaultdict(list))
    with open(os.path.join(args.real, "corners.csv")) as f:
        for r in csv.DictReader(f):
            boxes[r["file"]][r["rank"] + r["suit"]].append([float(r[k]) for k in ("x1", "y1", "x2", "y2")])
    n = collections.Counter()
    for name in files:
        bgr = cv2.imread(os.path.join(args.real, "images", name))
        pyr = gp.Pyramid(np.ascontiguousarray(bgr[:, :, ::-1]))
        props = gp.all_proposals(cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY))
        probs = np.zeros((0, len(LABELS)))
        if props:
            X = np.stack([gp.cut(pyr, p, inv) for p, inv in props]).astype(np.float32) / 255
            probs = np.concatenate([sess.run(None, {"patch": np.transpose(X[i:i + 256], (0, 3, 1, 2))})[0]
                                    for i in range(0, len(X), 256)])
        ib = [gp.index_box(p) for p, _ in props]
        for card, bs in boxes[name].items():
            n["labelled cards"] += 1
            ks = [k for k in range(len(props)) if any(real_glyphs.box_iou(ib[k], b) >= 0.5 for b in bs)]
            if not ks:
                continue
            t = LABELS.index(card)
            n["a proposal fits an index"] += 1
            n["top reading right"] += any(probs[k].argmax() == t for k in ks)
            best = max(probs[k, t] for k in ks)
            for th in (0.9, 0.99, 0.999):
                n[f"the card at >= {th}"] += best >= th
    for k in ("labelled cards", "a proposal fits an index", "top reading right",
              "the card at >= 0.9", "the card at >= 0.99", "the card at >= 0.999"):
        print(f"{k:28s} {n[k]}")


if __name__ == "__main__":
    main()
