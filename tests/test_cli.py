"""The treelearn command, run as a user runs it (a subprocess)."""

import subprocess
import sys
from pathlib import Path

GOLDEN = Path(__file__).with_name("golden_demo_iris.txt")


def run(*args):
    return subprocess.run([sys.executable, "-m", "treelearn.cli", *args], capture_output=True,
                          text=True, timeout=600)


def test_demo_prints_the_literatures_numbers_beside_ours():
    out = run("demo")
    assert out.returncode == 0, out.stderr
    assert out.stdout == GOLDEN.read_text()
    assert "training accuracy                 0.9733          0.9733" in out.stdout


def test_help_and_unknown_demo():
    out = run("--help")
    assert out.returncode == 0 and "demo" in out.stdout
    assert run().returncode == 0
    out = run("demo", "nope")
    assert out.returncode == 2
    assert out.stderr.strip() == "treelearn: error: unknown demo 'nope'; choose one of: iris"
    out = run("--debug", "demo", "nope")
    assert out.returncode != 0 and "Traceback" in out.stderr


def test_main_in_process(capsys):
    from treelearn.cli import main

    assert main(["demo", "iris"]) == 0
    assert "petal width <= 0.80" in capsys.readouterr().out
    assert main(["demo", "x"]) == 2
