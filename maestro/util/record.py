"""`record`: a named tuple type without importing `collections`.

The inject and session-start hooks run on every prompt and session; `import collections` (with the
keyword, operator, reprlib and heapq modules it loads) costs them ~1.5 ms each time, for nothing but
`namedtuple`. A record is a tuple subclass with a read-only property per field, built with positional
or keyword arguments (trailing fields may have defaults), with `_fields`, `_replace` and `_asdict`,
equal to the plain tuple of its values and picklable as one — what the namedtuples it replaces were
used for.
"""

from _operator import itemgetter  # the builtin half of `operator`: the Python module is an import more


def record(name: str, fields: str, defaults: tuple = (), module: str = None) -> type:
    """A tuple subclass `name` with the space-separated `fields`, the last len(defaults) of them optional."""
    names = tuple(fields.split())
    first_default = len(names) - len(defaults)

    def __new__(cls, *args, **kwargs):
        if len(args) == len(names) and not kwargs:
            return tuple.__new__(cls, args)
        if len(args) > len(names):
            raise TypeError(f"{name}() takes {len(names)} arguments, {len(args)} given")
        values = list(args)
        for index in range(len(args), len(names)):
            field = names[index]
            if field in kwargs:
                values.append(kwargs.pop(field))
            elif index >= first_default:
                values.append(defaults[index - first_default])
            else:
                raise TypeError(f"{name}() missing argument {field!r}")
        if kwargs:
            raise TypeError(f"{name}() got unexpected or repeated arguments: {', '.join(sorted(kwargs))}")
        return tuple.__new__(cls, values)

    def __repr__(self):
        return f"{name}({', '.join(f'{field}={value!r}' for field, value in zip(names, self))})"

    def _replace(self, **changes):
        values = [changes.pop(field, value) for field, value in zip(names, self)]
        return type(self)(*values, **changes)  # what is left in `changes` names no field: a TypeError

    def _asdict(self):
        return dict(zip(names, self))

    def __getnewargs__(self):
        return tuple(self)

    namespace = {"__slots__": (), "_fields": names, "__new__": __new__, "__repr__": __repr__,
                 "_replace": _replace, "_asdict": _asdict, "__getnewargs__": __getnewargs__}
    for index, field in enumerate(names):
        namespace[field] = property(itemgetter(index), doc=f"Field {index}: {field}")
    made = type(name, (tuple,), namespace)
    if module:
        made.__module__ = module
    return made
