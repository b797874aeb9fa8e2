"""index_connect.load: SQLite's binding loaded for a hook without importing functools (and collections with
it), with the same statement cache; a later `import functools` gets the real module."""

import subprocess
import sys

from testing.memory import site_path

PROBE = """
import sys
sys.path.insert(0, {site!r})
{before}
from maestro.memory.store import index_connect
sqlite3 = index_connect.load()
print(sorted(name for name in ('functools', 'collections') if name in sys.modules))
conn = sqlite3.connect(':memory:', cached_statements=2)
for n in range(50):  # more statements than the cache holds: entries come and go
    assert conn.execute(f'select {{n}}, ?', (n,)).fetchone() == (n, n)
for _ in range(3):
    assert [conn.execute('select ?', (n,)).fetchone()[0] for n in range(5)] == list(range(5))
assert index_connect.load() is sqlite3 is sys.modules['_sqlite3']
import functools
print(functools.__name__, hasattr(functools, 'partial'), hasattr(functools.lru_cache, 'cache_info') or
      hasattr(functools.lru_cache(2)(len), 'cache_info'))
"""


def run(before=""):
    done = subprocess.run([sys.executable, "-I", "-S", "-c", PROBE.format(site=site_path(), before=before)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_a_hook_loads_sqlite_without_functools_and_a_later_import_gets_the_real_one():
    assert run() == ["[]", "functools True True"]


def test_a_process_that_has_functools_loads_sqlite_the_ordinary_way():
    assert run("import functools") == ["['collections', 'functools']", "functools True True"]
