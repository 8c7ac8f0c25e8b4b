"""Safe YAML loading for mechanism files, with a map from key paths to source positions.

:func:`load_yaml` parses exactly one YAML document and returns plain data (``dict`` with ``str``
keys, ``list``, ``str``, ``int``, ``float``, ``bool``, ``None``) plus a :class:`SourceMap`.
It only ever raises :class:`~linkcli.errors.MechanismFileError`, which lists every problem found
(each with a line, column, key path and a hint).

The document is built from the event stream of PyYAML's pure-Python ``SafeLoader`` parser with
an explicit stack, so deep nesting cannot exhaust Python's recursion limit. (libyaml's parser is
~20x faster but accepts a different language, e.g. ``a: <TAB>b`` or ``{a: b?c}``, and words its
errors differently; the pure-Python one keeps results independent of how PyYAML was built, at
3-6 s per MiB, a little faster than ``yaml.safe_load``.) Choices:

* Plain scalars resolve with the YAML 1.2 *core* schema: only ``true``/``false`` (3 casings) are
  booleans (``yes``/``no``/``on``/``off`` stay strings); ``null``, ``~`` and empty are ``None``;
  decimal ints, ``0o17`` octal and ``0x1F`` hex are ints (``017`` is 17); ``1e-3``, ``.5``,
  ``5.``, ``.inf``, ``-.inf``, ``.nan`` are floats; ``1_000``, ``1:30``, ``0b101`` and dates stay
  strings. Quoted and block scalars are always strings.
* Tags: only ``!``, ``!!str``, ``!!int``, ``!!float``, ``!!bool``, ``!!null``, ``!!map`` and
  ``!!seq``; any other tag is an error naming it.
* Mapping keys are the key's source text (``1: x`` gives the key ``"1"``); a list, mapping or alias
  used as a key is an error, as is a duplicate key and the merge key ``<<``.
* Aliases work and are deep-copied, but they may add at most :data:`MAX_ALIAS_NODES` values in
  all (counted expanded), which stops "billion laughs" documents before any copying. Paths
  inside an alias map to the anchored text.
* Inputs over :data:`MAX_BYTES`, more than :data:`MAX_NODES` values and nesting deeper than
  :data:`MAX_DEPTH` are errors: every file is answered within about a second.
* Lines are counted as editors count them: only LF, CR LF and CR end a line (YAML 1.2), not
  NEL (U+0085), LS (U+2028) or PS (U+2029), which PyYAML treats as line breaks (YAML 1.1).
"""

from __future__ import annotations

import codecs
import copy
import math
import os
import re
import stat
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import yaml
from yaml import events as ev

from linkcli.errors import Diagnostic, MechanismFileError

#: larger inputs are refused before parsing. PyYAML's pure-Python scanner needs up to ~1 s per
#: MiB (blank lines are its slowest input), and a mechanism file is a few KiB.
MAX_BYTES = 1024 * 1024
MAX_ALIAS_NODES = 100_000  #: most values that expanding aliases may add to one document
MAX_DEPTH = 100  #: deepest nesting of lists/mappings
#: most values (scalars, lists, mappings) one file may hold, aliases not counted. The largest
#: example (puma560.yaml) holds about 270; parsing costs about 15 us per value, so a file at
#: the limit is refused in well under a second instead of being built in full (a 1.6 million
#: item list took 104 s and 720 MB).
MAX_NODES = 20_000

Loc = tuple[int, int]  # (line, col), both 1-based

_CORE = "tag:yaml.org,2002:"
_SCALAR_TAGS = {_CORE + "int": (int,), _CORE + "float": (int, float),
                _CORE + "bool": (bool,), _CORE + "null": (type(None),)}
_STRING_TAGS = ("!", _CORE + "str")
_COLLECTION_TAGS = {ev.MappingStartEvent: (None, "!", _CORE + "map"),
                    ev.SequenceStartEvent: (None, "!", _CORE + "seq")}
_NULLS = {"", "~", "null", "Null", "NULL"}
_BOOLS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_INT = re.compile(r"[-+]?[0-9]+")
_INT_PREFIXED = re.compile(r"0o[0-7]+|0x[0-9a-fA-F]+")
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_INF = re.compile(r"[-+]?\.(inf|Inf|INF)")
_NAN = re.compile(r"\.(nan|NaN|NAN)")
_NON_PRINTABLE = re.compile(  # what PyYAML's reader refuses
    "[^\x09\x0A\x0D\x20-\x7E\x85\xA0-\uD7FF\uE000-\uFFFD\U00010000-\U0010FFFF]")
_LINE_BREAK = re.compile("\r\n|[\n\r]")  # as editors count lines (YAML 1.2: only these break lines)
#: YAML 1.1 (and PyYAML) also break lines at NEL, LS and PS; YAML 1.2 and editors do not
_UNICODE_BREAKS = "\x85\u2028\u2029"
_BOMS = ((codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
         (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16"))
_SYNTAX_HINTS = (
    ("'\\t'", "indent with spaces, not tabs"),
    ("tab character", "indent with spaces, not tabs"),
    ("unknown escape", "use a valid escape such as \\n or \\\\, or single quotes"),
    ("quoted scalar", "close the quote: every ' or \" needs a matching one"),
    ("flow sequence", "close the bracket: every [ needs a matching ]"),
    ("flow mapping", "close the brace: every { needs a matching }"),
    ("mapping values are not allowed", "check the indentation, or quote a value containing ': '"),
    ("block end", "check the indentation: entries of one mapping or list must line up"),
    ("could not find expected ':'", "add ':' after the key, or quote text that spans lines"),
)
_BINARY_HINT = "this looks like a binary file; a mechanism file is YAML text saved as UTF-8"
_TAG_HINT = "remove the tag: only plain data (mappings, lists, strings, numbers, true/false, null)"
_OS_ERRORS = ((FileNotFoundError, "file not found", "check the path and the file name"),
              (IsADirectoryError, "is a directory, not a file", "pass the path of a .yaml file"),
              (PermissionError, "permission denied: cannot read the file",
               "check the file's permissions"))
_EXPECT_KEY = object()


@dataclass(frozen=True)
class SourceMap:
    """Maps key paths (tuples of str keys / int list indices from the document root) to 1-based
    (line, col). ``entries[path] = (key_location, value_location)``."""

    entries: Mapping[tuple, tuple[Loc, Loc]] = field(default_factory=dict, hash=False)

    def locate(self, path) -> Loc:
        """Position of the KEY token for a mapping entry, of the item's start for a list item;
        for a missing path, that of its nearest existing ancestor (the root -> (1, 1))."""
        return self._find(path)[0]

    def value_location(self, path) -> Loc:
        """Start of the VALUE node at `path` (falls back like :meth:`locate`)."""
        return self._find(path)[1]

    def __contains__(self, path) -> bool:
        return tuple(path) in self.entries

    def _find(self, path) -> tuple[Loc, Loc]:
        path = tuple(path)
        while path not in self.entries:
            if not path:
                return (1, 1), (1, 1)
            path = path[:-1]
        return self.entries[path]


def load_yaml(data: str | bytes, filename: str) -> tuple[object, SourceMap]:
    """Parse one YAML document safely; raise MechanismFileError listing every problem found."""
    if not isinstance(data, (str, bytes, bytearray, memoryview)):
        raise TypeError(f"load_yaml needs str or bytes, not {type(data).__name__}")
    try:
        builder = _Builder(filename)
        builder.run(builder.hide_unicode_breaks(_decode(data, filename)))
        return builder.result()
    except MechanismFileError:
        raise
    except Exception as exc:  # contract: nothing but MechanismFileError escapes
        raise _file_error(filename, f"could not parse the YAML ({type(exc).__name__}: {exc})",
                          "check the YAML syntax") from exc


STDIN = "-"  #: the file name that means standard input
STDIN_NAME = "<stdin>"  #: how standard input is named in messages and metadata


def read_yaml_file(path: str | os.PathLike) -> tuple[object, SourceMap]:
    """Read `path` (:func:`read_source`) and :func:`load_yaml` it."""
    data = read_source(path)
    return load_yaml(data, source_name(path))


def source_name(path: str | os.PathLike) -> str:
    """How a file is named in diagnostics and metadata (``-`` is ``<stdin>``)."""
    return STDIN_NAME if os.fspath(path) == STDIN else os.fspath(path)


def read_source(path: str | os.PathLike) -> bytes:
    """The bytes of one input file, read once (at most MAX_BYTES + 1 of them); ``-`` reads
    standard input. Parse these bytes and hash these bytes: a pipe cannot be read twice.

    Only regular files are read (and standard input, also as ``/dev/stdin``): a named pipe
    would block forever, a device (``/dev/zero``) never ends, so they are refused with a
    MechanismFileError naming the file, without blocking."""
    name = source_name(path)
    if os.fspath(path) == STDIN:
        return _read_stdin()
    try:
        # O_NONBLOCK: opening a FIFO for reading must not wait for a writer
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise _os_error(name, exc) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            if _is_stdin(info):
                return _read_stdin()
            raise _not_regular(name, info.st_mode)
        if hasattr(os, "O_NONBLOCK"):  # POSIX (Windows has neither flag nor FIFOs to fear)
            os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read(MAX_BYTES + 1)
    except OSError as exc:
        raise _os_error(name, exc) from None
    finally:
        os.close(fd)


def _read_stdin() -> bytes:
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:  # a text stream (tests swap sys.stdin)
        text = sys.stdin.read(MAX_BYTES + 1) if sys.stdin is not None else ""
        return text.encode("utf-8", "surrogatepass")
    return stream.read(MAX_BYTES + 1)


def _is_stdin(info: os.stat_result) -> bool:
    """Whether ``info`` describes the file open as standard input (``/dev/stdin``)."""
    try:
        fd = sys.stdin.fileno() if sys.stdin is not None else 0
        own = os.fstat(fd)
    except (OSError, ValueError, AttributeError):
        return False
    return (own.st_dev, own.st_ino) == (info.st_dev, info.st_ino)


_SPECIAL_FILES = ((stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a character device"),
                  (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory"))


def _not_regular(name: str, mode: int) -> MechanismFileError:
    what = next((text for test, text in _SPECIAL_FILES if test(mode)), "not a regular file")
    if stat.S_ISDIR(mode):
        return _file_error(name, "is a directory, not a file", "pass the path of a .yaml file")
    return _file_error(name, f"is {what}, not a regular file",
                       "pass a mechanism file; to read from a pipe, give `-` (standard input)")


def _os_error(name: str, exc: OSError) -> MechanismFileError:
    message, hint = next(((m, h) for kind, m, h in _OS_ERRORS if isinstance(exc, kind)),
                         (f"cannot read the file: {exc.strerror or exc}", "check the path"))
    return _file_error(name, message, hint)


def _file_error(filename: str, message: str, hint: str, where: Loc = (0, 0)) -> MechanismFileError:
    """An error about the whole file (line 0: printed as ``file: error: ...``) unless `where`
    is known."""
    return MechanismFileError([Diagnostic(filename, *where, (), message, hint)])


def _end_position(prefix: str) -> Loc:
    """(line, col) of the character just after `prefix`, counting line breaks like PyYAML."""
    breaks = list(_LINE_BREAK.finditer(prefix))
    line_start = breaks[-1].end() if breaks else 0
    return len(breaks) + 1, len(prefix) - line_start + 1


def _decode(data: str | bytes, filename: str) -> str:
    """Size check, bytes -> str (UTF-8, or UTF-16/32 with a BOM), printable check."""
    too_big = len(data) > MAX_BYTES or (
        isinstance(data, str) and len(data.encode("utf-8", "surrogatepass")) > MAX_BYTES)
    if too_big:
        raise _file_error(filename, f"file is too large (more than {MAX_BYTES // 2**10:,} KiB)",
                          "a mechanism file is small text; check that this is the right file")
    text = data if isinstance(data, str) else _decode_bytes(bytes(data), filename)
    text = text.removeprefix("\ufeff")
    bad = _NON_PRINTABLE.search(text)
    if bad:
        char = bad.group()
        what = "NUL bytes" if char == "\0" else f"the non-printable character U+{ord(char):04X}"
        raise _file_error(filename, f"not a text file: it contains {what}", _BINARY_HINT,
                          _end_position(text[:bad.start()]))
    return text


def _decode_bytes(data: bytes, filename: str) -> str:
    """UTF-16/32 if they start with a BOM; else NUL bytes mean binary; else UTF-8."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return _decode_as(data, encoding, filename)
    data = data.removeprefix(codecs.BOM_UTF8)
    nul = data.find(b"\0")
    if nul >= 0:
        raise _file_error(filename, "not a text file: it contains NUL bytes", _BINARY_HINT,
                          _end_position(data[:nul].decode("utf-8", "replace")))
    return _decode_as(data, "UTF-8", filename)


def _decode_as(data: bytes, encoding: str, filename: str) -> str:
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise _file_error(filename, f"the file is not valid {encoding} text "
                          f"(byte 0x{data[exc.start]:02x})", "save the file as UTF-8",
                          _end_position(data[:exc.start].decode(encoding, "replace"))) from None


def _resolve_plain(text: str):
    """YAML 1.2 core schema resolution of a plain scalar (ValueError: too many digits)."""
    if text in _NULLS:
        return None
    if text in _BOOLS:
        return _BOOLS[text]
    if _INT.fullmatch(text):
        return int(text, 10)
    if _INT_PREFIXED.fullmatch(text):
        return int(text, 0)
    if _FLOAT.fullmatch(text):
        return float(text)
    if _INF.fullmatch(text):
        return -math.inf if text.startswith("-") else math.inf
    if _NAN.fullmatch(text):
        return math.nan
    return text


def _tag_name(tag: str | None) -> str:
    if tag is None:
        return "!"  # the non-specific tag
    return "!!" + tag[len(_CORE):] if tag.startswith(_CORE) else tag


def _match_end(pattern: re.Pattern[str], text: str, pos: int) -> int:
    """End of ``pattern``'s match at ``pos`` (the patterns used here also match the empty
    string, so there always is one)."""
    found = pattern.match(text, pos)
    return found.end() if found is not None else pos


def _loc(mark) -> Loc:
    return mark.line + 1, mark.column + 1


_BLANKS = re.compile("[ \r\n\x85\u2028\u2029]*")  # spaces and line breaks (not tabs: PyYAML neither)
_COMMENT = re.compile("[^\0\r\n\x85\u2028\u2029]*")  # the rest of a comment up to its line break
_BREAK_CHARS = "\r\n\x85\u2028\u2029"


class _Loader(yaml.SafeLoader):
    """PyYAML's pure-Python SafeLoader with one method replaced: skipping spaces, comments and
    line breaks between tokens by one regex over the (complete, in-memory) text instead of a
    Python call per character. Same events and positions (tests/test_yaml_source.py compares
    them with PyYAML's); 1 MiB of blank lines, the slowest input before, went from 1.1 s to
    0.014 s of CPU (benchmarks/bench_bad_files.py), so a file at MAX_BYTES is answered in well
    under a second."""

    def scan_to_next_token(self) -> None:
        if self.index == 0 and self.peek() == "\ufeff":
            self.forward()
        if self.raw_buffer is not None or not self.eof:  # not a complete in-memory text
            return super().scan_to_next_token()
        buffer, start = self.buffer, self.pointer  # the buffer ends with "\0"
        end = _match_end(_BLANKS, buffer, start)
        while buffer[end] == "#":
            end = _match_end(_BLANKS, buffer, _match_end(_COMMENT, buffer, end))
        if end == start:
            return None
        skipped = buffer[start:end]
        n_breaks = sum(skipped.count(c) for c in _BREAK_CHARS) - skipped.count("\r\n")  # CR LF is one
        if n_breaks:
            tail = skipped[max(skipped.rfind(c) for c in _BREAK_CHARS) + 1:]
            self.line += n_breaks
            self.column = len(tail) - tail.count("\ufeff")
            if not self.flow_level:
                self.allow_simple_key = True
        else:
            self.column += len(skipped) - skipped.count("\ufeff")
        self.pointer = end
        self.index += end - start
        return None


class _Fatal(Exception):
    """Building cannot go on (syntax error, limit reached); the diagnostic is already recorded."""


@dataclass
class _Frame:
    """An open mapping or list while its events are being read."""

    value: dict | list
    path: tuple  # key path, also used for diagnostics inside
    record: bool  # whether source positions inside go into the source map
    role: str  # "root", "item", "value" or "key"
    anchor: str | None
    start_count: int
    start_entry: int
    start_mark: object
    key: object = _EXPECT_KEY  # mappings: pending key (None if invalid), or _EXPECT_KEY
    keep: bool = False  # mappings: store the pending key's value
    key_loc: Loc = (0, 0)
    seen: dict = field(default_factory=dict)  # mappings: key -> line first defined


class _Builder:
    """Turns one document's parser events into plain data, a source map and diagnostics."""

    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.diagnostics: list[Diagnostic] = []
        self.stack: list[_Frame] = []
        self.log: list[tuple[tuple, Loc, Loc]] = []  # (path, key_loc, value_loc), in order
        self.anchors: dict[str, tuple[object, int, list]] = {}
        self.open_anchors: set[str] = set()
        self.count = 0  # values built so far (for anchor sizes)
        self.expanded = 0  # values added by expanding aliases
        self.documents = 0
        self.root: object = None
        self.root_loc: Loc = (1, 1)
        self.empty = False
        self.fatal = False
        self.restore: dict | None = None  # placeholder -> NEL/LS/PS (str.translate table)

    def hide_unicode_breaks(self, text: str) -> str:
        """Replace NEL, LS and PS by private-use characters absent from ``text`` before PyYAML
        sees them (it would count them as line breaks, YAML 1.1, so every later line number
        would differ from the editor's); scalars and keys get them back (:meth:`_text`)."""
        present = [c for c in _UNICODE_BREAKS if c in text]
        if not present:
            return text
        free = (chr(c) for c in range(0xE000, 0xF900) if chr(c) not in text)
        hide = {ord(c): next(free) for c in present}
        self.restore = {ord(v): chr(k) for k, v in hide.items()}
        return text.translate(hide)

    def _text(self, text: str) -> str:
        """Placeholders back to NEL/LS/PS, also where PyYAML's messages quote them escaped."""
        if not self.restore or not text:
            return text
        for hidden, char in self.restore.items():
            text = text.replace(f"\\u{hidden:04x}", repr(char)[1:-1])
        return text.translate(self.restore)

    def run(self, text: str) -> None:
        """Read every event of `text`; stop at the first fatal problem."""
        loader = _Loader(text)
        try:
            while not self._feed(loader.get_event()):
                pass
        except yaml.YAMLError as exc:
            self._syntax_error(exc)
        except _Fatal:
            pass
        finally:
            loader.dispose()

    def result(self) -> tuple[object, SourceMap]:
        if not self.fatal:
            self._check_top_level()
        if self.diagnostics:
            raise MechanismFileError(self.diagnostics)
        return self.root, SourceMap(MappingProxyType({p: (k, v) for p, k, v in self.log}))

    def _feed(self, event) -> bool:
        """Handle one event; True at the end of the stream."""
        if isinstance(event, ev.DocumentStartEvent):
            self.documents += 1
            if self.documents > 1:
                self._diag(event.start_mark, (), "a file must hold one YAML document, but a second "
                           "one starts here", "remove the `---` line or split the file", fatal=True)
        elif isinstance(event, ev.ScalarEvent):
            self._scalar(event)
        elif isinstance(event, ev.AliasEvent):
            self._alias(event)
        elif isinstance(event, ev.CollectionStartEvent):
            self._start(event)
        elif isinstance(event, ev.CollectionEndEvent):
            self._end()
        return isinstance(event, ev.StreamEndEvent)

    def _diag(self, where, path, message: str, hint: str, fatal: bool = False) -> None:
        line, col = where if isinstance(where, tuple) else _loc(where)
        self.diagnostics.append(Diagnostic(self.filename, line, col, tuple(path), self._text(message), hint))
        if fatal:
            self.fatal = True
            raise _Fatal

    def _syntax_error(self, exc: yaml.YAMLError) -> None:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        message = getattr(exc, "problem", None) or str(exc) or "invalid YAML"
        context = getattr(exc, "context", None)
        if context:
            context_mark = getattr(exc, "context_mark", None)
            where = f" on line {context_mark.line + 1}" if context_mark else ""
            message += f" ({context}{where})"
        hint = next((h for key, h in _SYNTAX_HINTS if key in message), "check the YAML syntax here")
        path = self.stack[-1].path if self.stack else ()
        self.diagnostics.append(Diagnostic(self.filename, *(_loc(mark) if mark else (0, 0)),
                                           path, self._text(message), hint))
        self.fatal = True

    def _slot(self):
        """(role, path, record, key_loc) of the node that starts now; key_loc None = its own."""
        if not self.stack:
            return "root", (), True, (1, 1)
        top = self.stack[-1]
        if isinstance(top.value, list):
            return "item", top.path + (len(top.value),), top.record, None
        if top.key is _EXPECT_KEY:
            return "key", top.path, False, None
        path = top.path if top.key is None else top.path + (top.key,)
        return "value", path, top.record and top.keep, top.key_loc

    def _add(self, n: int, event, alias: bool = False) -> None:
        """Count `n` more values; too many from aliases means an alias bomb."""
        self.count += n
        self.expanded += n if alias else 0
        if self.count - self.expanded > MAX_NODES:
            self._diag(event.start_mark, self._slot()[1], f"the file holds too many values (more than "
                       f"{MAX_NODES:,}: lists, mappings and scalars)", "a mechanism file describes one "
                       "mechanism in a few hundred values; check that this is the right file", fatal=True)
        if self.expanded > MAX_ALIAS_NODES:
            self._diag(event.start_mark, self._slot()[1],
                       f"aliases expand to too many values (more than {MAX_ALIAS_NODES})",
                       "this looks like an alias bomb ('billion laughs'); write the data out "
                       "without nested aliases", fatal=True)

    def _begin(self, event):
        """Common start of every node: slot, count, own source-map entry."""
        role, path, record, key_loc = self._slot()
        if role == "root":
            self.root_loc = _loc(event.start_mark)
        self._add(1, event)
        start_entry = len(self.log)
        if record:
            value_loc = _loc(event.start_mark)
            self.log.append((path, key_loc or value_loc, value_loc))
        return role, path, record, start_entry

    def _scalar(self, event: ev.ScalarEvent) -> None:
        if self.restore:
            event.value = self._text(event.value)
        role, path, _, start_entry = self._begin(event)
        if role == "key":
            self._key(event, path)
            value = event.value
        else:
            value = self._scalar_value(event, path)
        if role == "root":
            self.empty = event.value == "" and event.tag is None and not event.style
        self._complete(value, role, path, event.anchor, self.count - 1, start_entry)

    def _scalar_value(self, event: ev.ScalarEvent, path: tuple):
        tag, text = event.tag, event.value
        try:
            if tag is None and not event.style:  # plain
                return _resolve_plain(text)
            if tag is None or tag in _STRING_TAGS:
                return text
            if tag not in _SCALAR_TAGS:
                self._diag(event.start_mark, path, f"unsupported tag '{_tag_name(tag)}'", _TAG_HINT)
                return text
            value = _resolve_plain(text)
        except ValueError:
            self._diag(event.start_mark, path, "number has too many digits",
                       "quote it if it is meant as text")
            return text
        if type(value) not in _SCALAR_TAGS[tag]:
            self._diag(event.start_mark, path, f"'{text}' is not a valid {_tag_name(tag)}",
                       "fix the value or remove the tag")
            return text
        return float(value) if tag == _CORE + "float" else value

    def _key(self, event: ev.ScalarEvent, path: tuple) -> None:
        """A scalar key: its source text, checked for tags, `<<` and duplicates."""
        top = self.stack[-1]
        top.key, top.key_loc, top.keep = event.value, _loc(event.start_mark), False
        if event.tag not in (None, *_STRING_TAGS, *_SCALAR_TAGS):
            self._diag(event.start_mark, path + (event.value,),
                       f"unsupported tag '{_tag_name(event.tag)}'", _TAG_HINT)
        elif event.value == "<<" and not event.style and event.tag is None:
            self._diag(event.start_mark, path + ("<<",), "merge keys (`<<`) are not supported",
                       "write the keys out explicitly (aliases like `*name` as values are fine)")
        elif event.value in top.seen:
            self._diag(event.start_mark, path + (event.value,), f"duplicate key '{event.value}' "
                       f"(first defined on line {top.seen[event.value]})",
                       "remove one of the two entries or rename one")
        else:
            top.seen[event.value] = top.key_loc[0]
            top.keep = True

    def _alias(self, event: ev.AliasEvent) -> None:
        role, path, record, key_loc = self._slot()
        name, value = event.anchor, None
        if role == "key":
            self._bad_key(event, path, f"an alias (*{name})")
        elif name in self.anchors:
            value, count, inner = self.anchors[name]
            self._add(count, event, alias=True)
            value = copy.deepcopy(value)
            if record:
                value_loc = _loc(event.start_mark)
                self.log.append((path, key_loc or value_loc, value_loc))
                self.log.extend((path + rel, k, v) for rel, k, v in inner)
        elif name in self.open_anchors:
            self._diag(event.start_mark, path, f"alias *{name} refers to a node that contains it",
                       "recursive structures are not allowed")
        else:
            self._diag(event.start_mark, path, f"unknown alias *{name}",
                       f"define the anchor `&{name}` before using `*{name}`")
        if role != "key":
            self._deliver(value, role)

    def _start(self, event: ev.CollectionStartEvent) -> None:
        if len(self.stack) >= MAX_DEPTH:
            self._diag(event.start_mark, self._slot()[1], f"nesting is too deep (more than "
                       f"{MAX_DEPTH} levels)", "flatten the structure", fatal=True)
        count = self.count
        role, path, record, start_entry = self._begin(event)
        if event.tag not in _COLLECTION_TAGS[type(event)]:
            self._diag(event.start_mark, path, f"unsupported tag '{_tag_name(event.tag)}'",
                       _TAG_HINT)
        if event.anchor:  # until it is complete, `*name` means this (unfinished) node
            self.anchors.pop(event.anchor, None)
            self.open_anchors.add(event.anchor)
        value: dict | list = {} if isinstance(event, ev.MappingStartEvent) else []
        self.stack.append(_Frame(value, path, record, role, event.anchor, count, start_entry,
                                 event.start_mark))

    def _end(self) -> None:
        frame = self.stack.pop()
        if frame.role == "key":
            self._bad_key(frame, frame.path, "a list or mapping")
        if frame.anchor:
            self.open_anchors.discard(frame.anchor)
        self._complete(frame.value, frame.role, frame.path, frame.anchor,
                       frame.start_count, frame.start_entry)

    def _bad_key(self, node, path: tuple, what: str) -> None:
        self._diag(node.start_mark, path, f"{what} cannot be used as a mapping key",
                   "use a plain word or a quoted string as the key")
        self.stack[-1].key, self.stack[-1].keep = None, False

    def _complete(self, value, role: str, path: tuple, anchor, start_count: int, start_entry: int):
        """Register the finished node's anchor and hand it to its parent."""
        if anchor:
            depth = len(path)
            inner = [(p[depth:], k, v) for p, k, v in self.log[start_entry:] if len(p) > depth]
            self.anchors[anchor] = (value, self.count - start_count, inner)
        if role != "key":
            self._deliver(value, role)

    def _deliver(self, value, role: str) -> None:
        if role == "root":
            self.root = value
            return
        top = self.stack[-1]
        if role == "item":
            assert isinstance(top.value, list)
            top.value.append(value)
            return
        if top.keep:
            assert isinstance(top.value, dict)
            top.value[top.key] = value
        top.key, top.keep = _EXPECT_KEY, False

    def _check_top_level(self) -> None:
        hint = "start with keys such as `name:`, `links:` and `joints:`"
        if self.documents == 0 or (self.empty and self.root is None):
            self._diag((1, 1), (), "file is empty", hint)
        elif not isinstance(self.root, dict):
            kind = ("a list" if isinstance(self.root, list) else
                    "null" if self.root is None else f"the value {self.root!r}")
            self._diag(self.root_loc, (), f"the top level must be a mapping of keys such as name, "
                       f"links, joints, not {kind}", "write `key: value` lines at the top level, "
                       "e.g. `name: four-bar`")
