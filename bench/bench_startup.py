"""Start-up time of the ``writegate`` command: what an operator waits for on every call.

Runs each command ``--runs`` times as a fresh process (the installed console script) and
prints the median and the fastest wall time, beside bare ``python -c pass`` from the same
interpreter as the floor. ``write node`` writes a new node to a small log each run. Then,
for ``write node``, the modules whose import costs most (``python -X importtime``), to show
where the time goes. Nothing asserts.

usage: python bench/bench_startup.py [--runs 15]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.conftest import plain_example  # noqa: E402

WRITEGATE = str(Path(sys.executable).with_name("writegate"))


def timed(command: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(command, cwd=cwd, check=True, capture_output=True, env=_env())
    return time.perf_counter() - started


def _env() -> dict[str, str]:
    """The caller's environment minus writegate's own settings, so each command does what
    it does on a machine with no configuration (the benchmark runs in an empty folder)."""
    return {k: v for k, v in os.environ.items() if not k.startswith("WRITEGATE_")}


def measure(name: str, command: Callable[[int], list[str]], runs: int, cwd: Path) -> None:
    times = [timed(command(i), cwd) for i in range(runs)]
    print(
        f"{name:<26} median {statistics.median(times) * 1000:6.0f} ms   "
        f"fastest {min(times) * 1000:6.0f} ms"
    )


def heaviest_imports(command: list[str], cwd: Path, top: int = 12) -> None:
    """Import time by top-level package (each module's own time, summed): where it goes."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "writegate", *command],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
        env=_env(),
    )
    by_package: Counter[str] = Counter()
    ours: Counter[str] = Counter()  # writegate's modules (their models are built on import)
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        own, _, name = line.removeprefix("import time:").split("|")
        module = name.strip()
        by_package[module.split(".")[0]] += int(own)
        if module.startswith("writegate"):
            ours[module] += int(own)
    total = sum(by_package.values())
    print(f"\nimports of `writegate {' '.join(command[2:5])} …`: {total / 1000:.0f} ms in all")
    for package, micros in by_package.most_common(top):
        print(f"  {micros / 1000:6.1f} ms  {package}")
    print("of which writegate's own modules:")
    for module, micros in ours.most_common(top // 2):
        print(f"  {micros / 1000:6.1f} ms  {module}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        cwd = Path(folder)
        db = ["--db", "small.db"]
        schema = cwd / "schema.json"  # the example without resolution: names p0, p1, … look alike
        schema.write_text(json.dumps(plain_example()))
        subprocess.run(
            [WRITEGATE, *db, "init", "--schema", str(schema)],
            cwd=cwd,
            check=True,
            capture_output=True,
            env=_env(),
        )

        def write(i: int) -> list[str]:
            node = ["Person", "-k", f"name=p{i}", "-p", "age=30"]
            return [WRITEGATE, *db, "write", "node", *node, "--source", "x", "--method", "parsed"]

        for i in range(20):  # a small log, not an empty one
            subprocess.run(write(-1 - i), cwd=cwd, check=True, capture_output=True, env=_env())
        print(f"{args.runs} runs each, {sys.executable}")
        measure("python -c pass", lambda _: [sys.executable, "-c", "pass"], args.runs, cwd)
        measure("writegate --help", lambda _: [WRITEGATE, "--help"], args.runs, cwd)
        measure("writegate write node …", write, args.runs, cwd)
        measure("writegate log", lambda _: [WRITEGATE, *db, "log"], args.runs, cwd)
        heaviest_imports(write(10_000)[1:], cwd)


if __name__ == "__main__":
    main()
