"""Tilde expansion of a word's first part, as bash 5.2 does it (checked against real bash):

    ~  ~/x       $HOME
    ~+           $PWD — the variable, not bash's real cwd: after `PWD=/elsewhere`, ~+ is /elsewhere
    ~-           $OLDPWD (unknown once the command assigned PWD: see State.lookup)
    ~N ~+N ~-N   the directory stack (`dirs`): ~0 is $PWD, ~1 the entry below it, ~-0 the bottom
    ~user        that user's home directory

A variable that is unset, an out-of-range stack index and an unknown user leave the word as
written; a value that cannot be known makes the word unknown (None). Imported only for words
that start with `~`.
"""

from maestro.hooks.bash_syntax import LIT, QLIT, UNSET

MAX_STACK_INDEX_DIGITS = 6  # a longer index is out of range of any stack the engine tracks


def tilde(parts, st):
    """parts with the tilde prefix replaced by its value (as a quoted literal), the parts
    unchanged when bash keeps the word as written, None when the value is unknown."""
    text = parts[0][1]
    slash = text.find("/")
    if slash < 0 and len(parts) > 1:
        return parts
    prefix = text if slash < 0 else text[:slash]
    if prefix == "~":
        home = st.lookup("HOME")
        value = None if home is UNSET or type(home) is tuple else home
    elif prefix in ("~+", "~-"):
        value = _variable(st, "PWD" if prefix == "~+" else "OLDPWD")
    elif _is_stack_index(prefix[1:]):
        value = _stack_entry(st, prefix[1:])
    else:
        value = _user_home(prefix[1:])
        if value is None:
            return None
    if value is UNSET:
        return parts
    if value is None:
        return None
    rest = text[len(prefix):]
    return [(QLIT, value)] + ([(LIT, rest)] if rest else []) + list(parts[1:])


def _variable(st, name):
    """A variable as a tilde prefix reads it: str, UNSET, or None (unknown)."""
    if name == "PWD" and name not in st.vars and not st.poisoned:
        return st.cwd
    value = st.lookup(name)
    if type(value) is tuple:
        value = value[0] if value else UNSET  # an array's element 0, as bash reads it
    return value


def _is_stack_index(text):
    body = text[1:] if text[:1] in "+-" else text
    return body.isdigit() and body.isascii()


def _stack_entry(st, index):
    from_bottom = index.startswith("-")
    digits = index.lstrip("+-")
    if len(digits) > MAX_STACK_INDEX_DIGITS:
        return UNSET
    if st.dirstack is None or st.poisoned:
        return None
    top = _variable(st, "PWD")
    if top is None:
        return None
    stack = (top,) + tuple(st.dirstack)  # the top of `dirs` is $PWD, as ~0 shows
    n = int(digits)
    if n >= len(stack):
        return UNSET  # out of range: bash keeps the word
    entry = stack[len(stack) - 1 - n] if from_bottom else stack[n]
    return None if entry is None or entry is UNSET else entry


def _user_home(name):
    """~name's directory, UNSET when there is no such user, None when it cannot be told."""
    if not name or "/" in name:
        return None
    try:
        import pwd

        return pwd.getpwnam(name).pw_dir
    except KeyError:
        return UNSET
    except Exception:
        return None
