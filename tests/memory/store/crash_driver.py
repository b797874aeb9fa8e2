"""Crash-test worker: COUNT adds to TRACK through the store API, one stdout line per add that returned.

    python3 -I crash_driver.py SITE ROOT WORKER COUNT TRACK

SITE is where maestro is imported from (the source tree, or `<maestro.pyz>/site-packages`; the
first line names the module file actually used), so one interpreter start serves all of a
worker's adds. A line is printed (and flushed) only after
`Store.add` returned: whatever the parent reads was committed before the worker could be killed.
"""

import sys

site, root, worker, count, track = sys.argv[1:6]
sys.path.insert(0, site)

import maestro.memory.store.tracks  # noqa: E402
from maestro.memory.store.tracks import Store  # noqa: E402

print("from " + maestro.memory.store.tracks.__file__, flush=True)
store = Store(root, lock_timeout=60)
for index in range(int(count)):
    text = f"w{worker}-{index} crash payload"
    result = store.add(track, text)
    print(("dup " if result.duplicate else "ok ") + text, flush=True)
