#!/usr/bin/env python3
"""Writes the tiny random-weight recognition fixtures models/fixtures/locator_tiny.onnx and
models/fixtures/classifier_tiny.onnx (and classifier_corner_tiny.onnx).

They have exactly the contracts of the real models (docs/recognition.md) but random weights, so
the Rust side (src/locate, src/classify, src/recognize) can be tested end to end before, and
independently of, the trained models:

    locator_tiny     input  "image" float32 [1, 3, H, W]   (H, W multiples of 32)
                     output "heat"  float32 [1, 3, H/4, W/4] = sigmoid(...)
                     output "geom"  float32 [1, 8, H/4, W/4]
    classifier_tiny  input  "patch" float32 [N, 3, 40, 40]
                     output "probs" float32 [N, 54] = softmax(...)
    classifier_corner_tiny  input "patch" float32 [N, 3, 48, 32] (v2, card-corner patches)
    classifier_face_tiny    input "patch" float32 [N, 3, 64, 40] (v2, whole-card patches)
    classifier_glyph_tiny   input "patch" float32 [N, 3, 48, 32] (v2, index glyph views)

The weights come from a fixed numpy seed, so the files are reproducible. Their outputs mean
nothing; the geometry biases only keep the decoded sizes in a plausible range (cards ~72 x 50 px,
index corners ~10 x 22 px) so that the decoding paths see realistic numbers.

Run it with `make fixtures` (same venv bootstrap as scripts/make_fixture_model.py).
"""
import os
import subprocess
import sys

ONNX_REQUIREMENT = "onnx==1.17.0"
NUMPY_REQUIREMENT = "numpy<3"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.path.join(ROOT, ".native", "venv")
OUT_DIR = os.path.join(ROOT, "models", "fixtures")

OPSET = 17
IR_VERSION = 8
SEED = 20250611

# The classifier's labels: the 52 cards in Card::all() order (rank-major, suits D C H S as in
# src/rules/card.rs), then back and unknown.
RANKS = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"]
SUITS = ["D", "C", "H", "S"]
LABELS = [r + s for r in RANKS for s in SUITS] + ["back", "unknown"]
PATCH = 40
# v2: upright card-corner patches (models/training/nets.py CORNER_*; src/classify)
CORNER_H, CORNER_W = 48, 32
CORNER_U, CORNER_V = 0.32, 0.46
FACE_H, FACE_W = 64, 40  # the whole card (tablecam.corner 1,1)
name_v1 = "classifier_tiny"


def ensure_deps():
    try:
        import numpy  # noqa: F401
        import onnx  # noqa: F401
        return
    except ImportError:
        pass
    venv_python = os.path.join(VENV, "bin", "python")
    if os.path.realpath(sys.prefix) == os.path.realpath(VENV) or os.environ.get("TABLECAM_FIXTURE_REEXEC"):
        sys.exit(f"make_recognition_fixtures: `onnx`/`numpy` still not importable in {sys.executable}")
    if not os.path.exists(venv_python):
        print(f"make_recognition_fixtures: creating venv {os.path.relpath(VENV, ROOT)}", flush=True)
        try:
            subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
        except subprocess.CalledProcessError:
            sys.exit("make_recognition_fixtures: `python3 -m venv` failed; on Debian install python3-venv")
    if subprocess.run([venv_python, "-c", "import onnx, numpy"], capture_output=True).returncode != 0:
        print(f"make_recognition_fixtures: installing {ONNX_REQUIREMENT} into the venv", flush=True)
        subprocess.run(
            [venv_python, "-m", "pip", "install", "-q", "--disable-pip-version-check", ONNX_REQUIREMENT,
             NUMPY_REQUIREMENT],
            check=True,
        )
    env = dict(os.environ, TABLECAM_FIXTURE_REEXEC="1")
    os.execve(venv_python, [venv_python, os.path.abspath(__file__)] + sys.argv[1:], env)


def tensor(name, array):
    import numpy as np
    from onnx import numpy_helper

    return numpy_helper.from_array(np.asarray(array, dtype=np.float32), name)


def save(model, props, name):
    import onnx
    from onnx import helper

    helper.set_model_props(model, props)
    onnx.checker.check_model(model, full_check=True)
    path = os.path.join(OUT_DIR, name)
    data = model.SerializeToString()
    with open(path, "wb") as f:
        f.write(data)
    print(f"make_recognition_fixtures: wrote {os.path.relpath(path, ROOT)} ({len(data)} bytes)")


def locator(rng):
    import numpy as np
    from onnx import TensorProto, helper

    w1 = rng.normal(0.0, 0.3, (8, 3, 4, 4))
    b1 = rng.normal(0.0, 0.1, (8,))
    w2 = rng.normal(0.0, 0.3, (11, 8, 3, 3))
    # Small weights on the size channels keep the decoded sizes near their biases (within a
    # factor ~2), as a trained model's would be; large random ones make absurd boxes.
    w2[7:] *= 0.05
    # heat logits around -1 (sigmoid ~0.27) so that the 0.35 threshold keeps some peaks;
    # geom: offsets ~0.5 cell, angle vector arbitrary, ln(size / 4) of plausible sizes.
    b2 = np.array([-1.0, -1.2, -0.8, 0.5, 0.5, 1.0, 0.0,
                   np.log(72 / 4), np.log(50 / 4), np.log(10 / 4), np.log(22 / 4)])
    nodes = [
        helper.make_node("Conv", ["image", "w1", "b1"], ["f1"], strides=[4, 4], kernel_shape=[4, 4]),
        helper.make_node("Relu", ["f1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["f2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Split", ["f2", "split"], ["heat_logits", "geom"], axis=1),
        helper.make_node("Sigmoid", ["heat_logits"], ["heat"]),
    ]
    split = helper.make_tensor("split", TensorProto.INT64, [2], [3, 8])
    graph = helper.make_graph(
        nodes,
        "locator_tiny",
        inputs=[helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, "H", "W"])],
        outputs=[
            helper.make_tensor_value_info("heat", TensorProto.FLOAT, [1, 3, "H4", "W4"]),
            helper.make_tensor_value_info("geom", TensorProto.FLOAT, [1, 8, "H4", "W4"]),
        ],
        initializer=[tensor("w1", w1), tensor("b1", b1), tensor("w2", w2), tensor("b2", b2), split],
    )
    model = helper.make_model(
        graph,
        producer_name="tablecam scripts/make_recognition_fixtures.py",
        opset_imports=[helper.make_opsetid("", OPSET)],
        ir_version=IR_VERSION,
        doc_string="Test fixture with the locator contract and random weights. Not a card model.",
    )
    props = {
        "tablecam.kind": "locator",
        "tablecam.version": "1",
        "tablecam.stride": "4",
        "tablecam.heat_channels": "card_up,card_down,index",
        "tablecam.card_threshold": "0.35",
        "tablecam.index_threshold": "0.35",
        "tablecam.fixture": "locator_tiny",
    }
    save(model, props, "locator_tiny.onnx")


def classifier(rng, corner=False, face=False, glyph=False):
    """v1 (index-box patches 40 x 40) or, with `corner`, v2 (upright card-corner patches 48 x 32,
    src/classify cut_corner_patch), or with `face` v2's whole-card cut (64 x 40, region 1,1), or
    with `glyph` v2's index glyph views (48 x 32, region 1,1, patch kind index_glyphs)."""
    from onnx import TensorProto, helper

    corner = corner or face or glyph
    if face:
        shape, pool, name = [FACE_H, FACE_W], 8, "classifier_face_tiny"
    elif glyph:
        shape, pool, name = [CORNER_H, CORNER_W], 16, "classifier_glyph_tiny"
    elif corner:
        shape, pool, name = [CORNER_H, CORNER_W], 16, "classifier_corner_tiny"
    else:
        shape, pool, name = [PATCH, PATCH], 20, name_v1
    features = 3 * (shape[0] // pool) * (shape[1] // pool)
    # 20x20 average pooling leaves 3 x 2 x 2 = 12 features; large weights make the softmax
    # peaky, so that some patches pass the fixture's min_confidence and some do not.
    w = rng.normal(0.0, 12.0, (features, len(LABELS)))
    b = rng.normal(0.0, 1.0, (len(LABELS),))
    nodes = [
        helper.make_node("AveragePool", ["patch"], ["pooled"], kernel_shape=[pool, pool], strides=[pool, pool]),
        helper.make_node("Flatten", ["pooled"], ["features"], axis=1),
        helper.make_node("MatMul", ["features", "w"], ["logits_raw"]),
        helper.make_node("Add", ["logits_raw", "b"], ["logits"]),
        helper.make_node("Softmax", ["logits"], ["probs"], axis=1),
    ]
    graph = helper.make_graph(
        nodes,
        name,
        inputs=[helper.make_tensor_value_info("patch", TensorProto.FLOAT, ["N", 3] + shape)],
        outputs=[helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["N", len(LABELS)])],
        initializer=[tensor("w", w), tensor("b", b)],
    )
    model = helper.make_model(
        graph,
        producer_name="tablecam scripts/make_recognition_fixtures.py",
        opset_imports=[helper.make_opsetid("", OPSET)],
        ir_version=IR_VERSION,
        doc_string="Test fixture with the classifier contract and random weights. Not a card model.",
    )
    props = {
        "tablecam.kind": "classifier",
        "tablecam.version": "2" if corner else "1",
        "tablecam.patch": f"{shape[0]}x{shape[1]}" if corner else str(PATCH),
        "tablecam.labels": ",".join(LABELS),
        "tablecam.min_confidence": "0.5",
        "tablecam.fixture": name,
    }
    if corner:
        props["tablecam.patch_kind"] = "index_glyphs" if glyph else "card_corner"
        props["tablecam.corner"] = "1,1" if face or glyph else f"{CORNER_U},{CORNER_V}"
    save(model, props, name + ".onnx")


if __name__ == "__main__":
    ensure_deps()
    import numpy as np

    os.makedirs(OUT_DIR, exist_ok=True)
    rng = np.random.default_rng(SEED)
    locator(rng)
    classifier(rng)
    classifier(rng, corner=True)
    classifier(rng, face=True)
    classifier(rng, glyph=True)
