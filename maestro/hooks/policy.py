"""File classification shared by the gate and the installer's checks (session ids: maestro/util/session.py).

Pure functions, no regular expressions (the gate must not pay for importing `re`). The gate and
inject hooks make opposite sides of one authorization decision, so the lists live here once.
"""

NONCODE_EXTENSIONS = frozenset(
    "md mdx markdown txt rst adoc org json jsonc json5 toml yaml yml ini cfg conf "
    "properties plist lock csv tsv log svg xml".split()
)

NONCODE_BASENAMES = frozenset(
    (
        "license", "notice", "readme", "changelog", "authors", "contributors", "codeowners",
        "copying", "version", "todo", ".gitignore", ".gitattributes", ".gitmodules",
        ".editorconfig", ".prettierrc", ".npmrc", ".nvmrc", ".python-version", ".tool-versions",
    )
)

HARNESS_SEGMENTS = frozenset((".claude", ".codex"))


def extension_of(basename: str) -> str:
    """Node's path.extname without the dot: '' for dotfiles and names without a dot."""
    dot = basename.rfind(".")
    if dot <= 0:
        return ""
    return basename[dot + 1 :]


def is_noncode(basename: str) -> bool:
    """True for files the orchestrator may edit directly: docs, config, data, dotfiles."""
    name = basename.lower()
    if name.startswith(".env"):
        return True
    if name in NONCODE_BASENAMES:
        return True
    return extension_of(name) in NONCODE_EXTENSIONS


def has_harness_segment(segments) -> bool:
    return any(segment in HARNESS_SEGMENTS for segment in segments)


def is_under(path: str, root: str, sep: str = "/") -> bool:
    """Anchored containment: `path` is strictly below `root` (a prefix match on whole segments)."""
    if not root:
        return False
    prefix = root if root.endswith(sep) else root + sep
    return path.startswith(prefix)
