"""The same documents give the same topics and labels on every CPU.

OpenBLAS picks a kernel per CPU, and each sums a dot product in its own order: the cosines
the model compares differ by a few 1e-14 from one machine to another. `OPENBLAS_CORETYPE`
forces a kernel, so one machine can run the model as four CPUs would (x86_64 only; the
kernels named run on any x86_64 CPU with AVX2, none needs AVX-512).
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
KERNELS = ("Prescott", "Nehalem", "Sandybridge", "Haswell")

#: The topics of the documents of test_cluster (three seeds, with and without tools), as JSON.
_CLUSTER = """
import json
from analytics.topic_mining.cluster import Doc, cluster
from tests.analytics.topics.test_cluster import _docs
out = []
for seed in (0, 1, 2):
    for tools in (True, False):
        docs = [d if tools else Doc(d.key, d.text, ()) for d in _docs(seed)]
        found = cluster(docs)
        out.append({"assignment": found.assignment, "labels": [t.label for t in found.topics],
                    "terms": [list(t.terms) for t in found.topics]})
print(json.dumps(out, sort_keys=True))
"""


def _topics_under(kernel: str) -> list:
    env = {**os.environ, "OPENBLAS_CORETYPE": kernel, "OPENBLAS_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", _CLUSTER], cwd=ROOT, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"), reason="OpenBLAS x86_64 kernels")
def test_every_blas_kernel_gives_the_same_topics_and_labels():
    first, *others = (_topics_under(kernel) for kernel in KERNELS)
    for kernel, got in zip(KERNELS[1:], others):
        for case, (a, b) in enumerate(zip(first, got)):
            assert b == a, f"{kernel} differs from {KERNELS[0]} in case {case}"
