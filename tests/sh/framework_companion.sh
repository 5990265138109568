#!/bin/sh
# framework_companion: the Python framework companion's injection mechanics
# (sitecustomize chaining, passivity, failure handling, the JSON records),
# against the stand-in frameworks of tests/py/standins (PyTorch 2.11 API).
# No shim needed: records go to the companion's test sink.
. "$ROOT/tests/sh/lib.sh"
command -v python3 >/dev/null 2>&1 || skip "no python3"
python3 "$ROOT/tests/py/framework_test.py" -v 2>&1 || die "framework_test.py failed"
