#!/usr/bin/env python3
"""Writes the tiny ONNX test fixture models/fixtures/affine_softmax.onnx.

    input  "input" float32 [N, 4]
    output "probs" float32 [N, 3] = softmax(input @ W + b, axis=1)

W and b below must stay equal to `FIXTURE_W` / `FIXTURE_B` in src/onnx/fixture.rs (the tests check
ONNX Runtime's output against a Rust re-computation with those constants).

Run it with `make fixtures`. It needs the `onnx` package; when the running python lacks it, the
script creates the git-ignored venv .native/venv, installs a pinned `onnx` there from PyPI and
re-runs itself inside it. Tests never need Python: they use the committed .onnx file.
"""
import os
import subprocess
import sys

ONNX_REQUIREMENT = "onnx==1.17.0"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.path.join(ROOT, ".native", "venv")
OUT = os.path.join(ROOT, "models", "fixtures", "affine_softmax.onnx")

W = [
    [0.5, -0.25, 0.1],
    [-0.3, 0.8, 0.05],
    [0.2, 0.1, -0.6],
    [0.0, -0.45, 0.35],
]
B = [0.1, -0.2, 0.05]

# Opset 17 / IR version 8: well inside what ONNX Runtime 1.31 reads (opset <= 21 was the brief).
OPSET = 17
IR_VERSION = 8


def ensure_onnx():
    try:
        import onnx  # noqa: F401
        return
    except ImportError:
        pass
    venv_python = os.path.join(VENV, "bin", "python")
    if os.path.realpath(sys.prefix) == os.path.realpath(VENV) or os.environ.get("TABLECAM_FIXTURE_REEXEC"):
        sys.exit(f"make_fixture_model: `onnx` still not importable in {sys.executable}")
    if not os.path.exists(venv_python):
        print(f"make_fixture_model: creating venv {os.path.relpath(VENV, ROOT)}", flush=True)
        try:
            subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
        except subprocess.CalledProcessError:
            sys.exit("make_fixture_model: `python3 -m venv` failed; on Debian install python3-venv")
    if subprocess.run([venv_python, "-c", "import onnx"], capture_output=True).returncode != 0:
        print(f"make_fixture_model: installing {ONNX_REQUIREMENT} into the venv", flush=True)
        subprocess.run(
            [venv_python, "-m", "pip", "install", "-q", "--disable-pip-version-check", ONNX_REQUIREMENT],
            check=True,
        )
    env = dict(os.environ, TABLECAM_FIXTURE_REEXEC="1")
    os.execve(venv_python, [venv_python, os.path.abspath(__file__)] + sys.argv[1:], env)


def build():
    import onnx
    from onnx import TensorProto, helper

    w = helper.make_tensor("W", TensorProto.FLOAT, [4, 3], [v for row in W for v in row])
    b = helper.make_tensor("b", TensorProto.FLOAT, [3], B)
    nodes = [
        helper.make_node("MatMul", ["input", "W"], ["logits_raw"], name="matmul"),
        helper.make_node("Add", ["logits_raw", "b"], ["logits"], name="add_bias"),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=1),
    ]
    graph = helper.make_graph(
        nodes,
        "affine_softmax",
        inputs=[helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", 4])],
        outputs=[helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["N", 3])],
        initializer=[w, b],
    )
    model = helper.make_model(
        graph,
        producer_name="tablecam scripts/make_fixture_model.py",
        opset_imports=[helper.make_opsetid("", OPSET)],
        ir_version=IR_VERSION,
        doc_string="Test fixture: probs = softmax(input @ W + b). Not a card model.",
    )
    helper.set_model_props(model, {"tablecam.fixture": "affine_softmax", "tablecam.fixture_version": "1"})
    onnx.checker.check_model(model, full_check=True)

    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    data = model.SerializeToString()
    with open(OUT, "wb") as f:
        f.write(data)
    print(f"make_fixture_model: wrote {os.path.relpath(OUT, ROOT)} ({len(data)} bytes, opset {OPSET}, onnx {onnx.__version__})")


if __name__ == "__main__":
    ensure_onnx()
    build()
