"""Tests of linkcli.io.yaml_source: safe YAML loading, diagnostics and the source map."""

from __future__ import annotations

import codecs
import math
import time
import tracemalloc
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from linkcli.errors import Diagnostic, MechanismFileError
from linkcli.io import yaml_source
from linkcli.io.yaml_source import (
    MAX_ALIAS_NODES,
    MAX_BYTES,
    MAX_DEPTH,
    MAX_NODES,
    SourceMap,
    load_yaml,
    read_yaml_file,
)

REPO = Path(__file__).resolve().parent.parent

FILE = "mech.yaml"

VALID = """\
name: four-bar  # a comment
units: {length: mm, angle: deg}
links:
  - name: ground
    length: 100.0
  - name: crank
    length: 25
    mass: 1e-3
joints:
  A: {type: revolute, parent: ground, child: crank}
  B:
    type: revolute
    parent: crank
    child: coupler
defaults: &defaults
  damping: .5
  limits: [-.inf, .inf]
motor: *defaults
notes: |
  free text
  on: two lines
"""

BILLION_LAUGHS = """\
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
"""


def load(doc):
    return load_yaml(doc, FILE)


def value_of(text: str):
    """The value of `v:` in a one-line document."""
    return load(f"v: {text}\n")[0]["v"]


def errors(doc, located: bool = True) -> list[Diagnostic]:
    """The diagnostics `doc` raises; checks the invariants every diagnostic must satisfy
    (`located`: with a line and column; whole-file problems have line 0, col 0)."""
    with pytest.raises(MechanismFileError) as info:
        load(doc)
    diags = info.value.diagnostics
    assert diags
    for d in diags:
        assert d.file == FILE
        assert d.severity == "error"
        assert d.message and d.hint
        assert isinstance(d.key_path, tuple)
        assert (d.line >= 1 and d.col >= 1) if located else (d.line, d.col) == (0, 0)
    return diags


def only_error(doc, located: bool = True) -> Diagnostic:
    diags = errors(doc, located)
    assert len(diags) == 1, diags
    return diags[0]


def walk_paths(value, path=()):
    """Every key path of `value` (mapping keys and list items at every depth)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield path + (key,)
            yield from walk_paths(item, path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield path + (index,)
            yield from walk_paths(item, path + (index,))


def assert_plain(value) -> None:
    """Only dict (str keys) / list / str / int / float / bool / None, iteratively."""
    todo = [value]
    while todo:
        item = todo.pop()
        if isinstance(item, dict):
            assert all(type(k) is str for k in item)
            todo.extend(item.values())
        elif isinstance(item, list):
            todo.extend(item)
        else:
            assert item is None or type(item) in (str, int, float, bool), type(item)


# --------------------------------------------------------------------------- valid documents


def test_valid_document_loads_as_plain_data():
    data, smap = load(VALID)
    assert data["name"] == "four-bar"
    assert data["units"] == {"length": "mm", "angle": "deg"}
    assert data["links"][1] == {"name": "crank", "length": 25, "mass": 0.001}
    assert data["joints"]["B"]["child"] == "coupler"
    assert data["motor"] == {"damping": 0.5, "limits": [-math.inf, math.inf]}
    assert data["notes"] == "free text\non: two lines\n"
    assert list(data) == ["name", "units", "links", "joints", "defaults", "motor", "notes"]
    assert_plain(data)
    assert isinstance(smap, SourceMap)


def test_bytes_bytearray_and_memoryview_are_accepted():
    expected = load(VALID)[0]
    raw = VALID.encode()
    assert load(raw)[0] == expected
    assert load(bytearray(raw))[0] == expected
    assert load(memoryview(raw))[0] == expected


def test_other_input_types_are_a_programming_error():
    with pytest.raises(TypeError):
        load_yaml(123, FILE)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- scalar resolution


@pytest.mark.parametrize(
    "text, expected",
    [
        ("1e-3", 0.001), ("1E5", 100000.0), ("-2e+3", -2000.0), (".5", 0.5), ("5.", 5.0),
        ("+1.5", 1.5), ("1.0e+3", 1000.0), ("-0.25", -0.25), ("3.14159", 3.14159),
        ("42", 42), ("-7", -7), ("+12", 12), ("0", 0), ("017", 17),  # 1.2: no 0-prefix octal
        ("0x1F", 31), ("0xff", 255), ("0o17", 15),  # 1.2 core hex and octal
        ("true", True), ("True", True), ("TRUE", True),
        ("false", False), ("False", False), ("FALSE", False),
        ("null", None), ("Null", None), ("NULL", None), ("~", None), ("", None),
    ],
)
def test_plain_scalars_resolve_like_yaml_1_2_core(text, expected):
    value = value_of(text)
    assert value == expected
    assert type(value) is type(expected)


@pytest.mark.parametrize("text, sign", [(".inf", 1), ("-.inf", -1), ("+.inf", 1), (".Inf", 1),
                                        ("-.INF", -1)])
def test_infinities(text, sign):
    assert value_of(text) == sign * math.inf


@pytest.mark.parametrize("text", [".nan", ".NaN", ".NAN"])
def test_nan(text):
    assert math.isnan(value_of(text))


@pytest.mark.parametrize(
    "text",
    [
        "on", "off", "yes", "no", "y", "n", "Yes", "NO", "ON", "Off",  # YAML 1.1 booleans
        "1_000", "1_000.5", "0b101", "0X1F", "0o8", "1:30", "190:20:30",  # 1.1 number forms
        "2001-12-14", "2001-12-14t21:59:43.10-05:00", "2002-12-14 21:59:43.10 -5",  # timestamps
        "nan", "inf", "-inf", "-.nan", "e5", "1e", "1.2.3", "0x", ".", "+", "-x",
        "tRue", "NuLL", "1 000", "12abc", "=",
    ],
)
def test_yaml_1_1_traps_stay_strings(text):
    assert value_of(text) == text


@pytest.mark.parametrize("doc", ["v: '1e-3'\n", 'v: "true"\n', "v: 'null'\n", "v: ''\n",
                                 'v: "0x1F"\n', "v: 'yes'\n", "v: |\n  12\n", "v: >-\n  true\n"])
def test_quoted_and_block_scalars_are_always_strings(doc):
    assert isinstance(load(doc)[0]["v"], str)


def test_timestamps_never_become_datetime():
    data = load("date: 2001-12-14\nstamp: 2001-12-14T21:59:43.10Z\n")[0]
    assert data == {"date": "2001-12-14", "stamp": "2001-12-14T21:59:43.10Z"}


def test_huge_integer_is_an_int_or_a_diagnostic_never_valueerror():
    try:
        value = value_of("9" * 5000)
    except MechanismFileError as exc:
        assert "digits" in exc.diagnostics[0].message
    else:
        assert value == int("9" * 5000)


@pytest.mark.parametrize(
    "doc, expected",
    [
        ("v: !!str 12\n", "12"), ("v: ! 12\n", "12"), ("v: !!float 1\n", 1.0),
        ("v: !!int 0x10\n", 16), ("v: !!bool false\n", False), ("v: !!null ''\n", None),
        ("v: !!int '7'\n", 7), ("v: !!seq [1]\n", [1]), ("v: !!map {a: 1}\n", {"a": 1}),
    ],
)
def test_standard_tags_are_honoured(doc, expected):
    value = load(doc)[0]["v"]
    assert value == expected and type(value) is type(expected)


def test_standard_tag_with_wrong_value_is_an_error():
    diag = only_error("a: 1\nv: !!int abc\n")
    assert diag.message == "'abc' is not a valid !!int"
    assert (diag.line, diag.col, diag.key_path) == (2, 4, ("v",))


# --------------------------------------------------------------------------- unsafe / unknown tags


@pytest.mark.parametrize(
    "doc, tag",
    [
        ("a: 1\nv: !!python/object:os.system {}\n", "!!python/object:os.system"),
        ("a: 1\nv: !!python/object/apply:os.system ['echo hacked']\n",
         "!!python/object/apply:os.system"),
        ("a: 1\nv: !!python/name:os.system ''\n", "!!python/name:os.system"),
        ("a: 1\nv: !foo x\n", "!foo"),
        ("a: 1\nv: !!set {a, b}\n", "!!set"),
        ("a: 1\nv: !!timestamp 2001-12-14\n", "!!timestamp"),
        ("a: 1\nv: !!binary aGVsbG8=\n", "!!binary"),
        ("a: 1\nv: !!omap [a: 1]\n", "!!omap"),
        ("a: 1\nv: !!map [1]\n", "!!map"),
        ("a: 1\n!foo v: 1\n", "!foo"),
    ],
)
def test_unknown_tags_are_errors_naming_the_tag(doc, tag):
    diag = only_error(doc)
    assert f"'{tag}'" in diag.message
    assert diag.line == 2
    assert diag.key_path == ("v",)


def test_tag_directive_cannot_smuggle_python_tags():
    doc = "%TAG !py! tag:yaml.org,2002:python/\n---\nv: !py!object/apply:os.system [ls]\n"
    assert "!!python/object/apply:os.system" in only_error(doc).message


# --------------------------------------------------------------------------- keys


def test_duplicate_key_names_key_and_both_lines():
    diag = only_error("name: x\nlinks: []\nA: 1\nB: 2\nA: 3\n")
    assert diag.message == "duplicate key 'A' (first defined on line 3)"
    assert (diag.line, diag.col, diag.key_path) == (5, 1, ("A",))


def test_nested_and_flow_duplicates_are_all_reported():
    doc = "joints:\n  B:\n    child: x\n    child: y\nunits: {a: 1, a: 2}\n"
    diags = errors(doc)
    assert [(d.line, d.key_path) for d in diags] == [(4, ("joints", "B", "child")),
                                                     (5, ("units", "a"))]
    assert "first defined on line 3" in diags[0].message


def test_problems_inside_a_duplicate_value_are_reported_too():
    diags = errors("a: 1\na: !foo 2\n")
    assert ["duplicate" in d.message for d in diags] == [True, False]
    assert "'!foo'" in diags[1].message


@pytest.mark.parametrize("key_text, key", [("1", "1"), ("1.5", "1.5"), ("true", "true"),
                                           ("null", "null"), ("~", "~"), ("0x1F", "0x1F"),
                                           ("'quoted'", "quoted"), ("yes", "yes")])
def test_scalar_keys_keep_their_source_text(key_text, key):
    data, smap = load(f"{key_text}: x\n")
    assert data == {key: "x"}
    assert smap.locate((key,)) == (1, 1)


def test_keys_differing_only_in_text_are_distinct():
    assert load("1: a\n01: b\n")[0] == {"1": "a", "01": "b"}


@pytest.mark.parametrize("doc", ["? [1, 2]\n: x\n", "{[1]: x}\n", "? {a: 1}\n: x\n"])
def test_complex_keys_are_errors(doc):
    diag = only_error(doc)
    assert "cannot be used as a mapping key" in diag.message


def test_alias_as_key_is_an_error():
    diag = only_error("a: &k name\n*k : x\n")
    assert "alias (*k)" in diag.message and diag.line == 2


def test_merge_keys_are_refused_clearly():
    diag = only_error("base: &b {x: 1}\nderived:\n  <<: *b\n  y: 2\n")
    assert "merge keys" in diag.message and "<<" in diag.message
    assert (diag.line, diag.col, diag.key_path) == (3, 3, ("derived", "<<"))


def test_quoted_merge_key_is_an_ordinary_key():
    assert load("'<<': 1\n")[0] == {"<<": 1}


# --------------------------------------------------------------------------- aliases


def test_small_aliases_work_and_are_independent_copies():
    data, _ = load("base: &b {x: 1, y: [2, 3]}\nuse: *b\nitems: [*b, *b]\n")
    assert data["use"] == data["items"][0] == data["items"][1] == {"x": 1, "y": [2, 3]}
    data["use"]["y"].append(4)
    assert data["base"]["y"] == [2, 3] and data["items"][0]["y"] == [2, 3]


def test_scalar_alias_and_anchor_redefinition():
    data, _ = load("a: &v 1\nb: *v\nc: &v two\nd: *v\ne: &w [&w inner, *w]\n")
    assert data == {"a": 1, "b": 1, "c": "two", "d": "two", "e": ["inner", "inner"]}


def test_unknown_alias_is_an_error():
    diag = only_error("a: 1\nb: *nope\n")
    assert "unknown alias *nope" in diag.message
    assert (diag.line, diag.col, diag.key_path) == (2, 4, ("b",))


def test_recursive_alias_is_an_error():
    diag = only_error("a: &r [1, *r]\n")
    assert "contains it" in diag.message and diag.key_path == ("a", 1)


def test_billion_laughs_errors_quickly_without_much_memory():
    # no timing here (it flaked on a loaded machine): stopping at `f` bounds the work
    diag = only_error(BILLION_LAUGHS)
    assert "alias" in diag.message and str(MAX_ALIAS_NODES) in diag.message
    assert diag.line == 6  # stopped while expanding `f`, long before `i`
    tracemalloc.start()
    try:
        errors(BILLION_LAUGHS)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * 2**20  # a full expansion would need many GiB


def test_many_plain_values_are_not_mistaken_for_an_alias_bomb():
    doc = "v: [" + "0," * (MAX_NODES - 3) + "]\n"  # root mapping, key v, list and items: MAX_NODES
    assert len(load(doc)[0]["v"]) == MAX_NODES - 3


def test_too_many_values_are_refused_where_the_limit_is_crossed():
    # issue 15: a 1.6 million item list was built in full (104 s, 720 MB) before being rejected
    doc = "name: x\nv: [" + "0," * (MAX_NODES + 1000) + "]\n"
    diag = only_error(doc)
    assert "too many values" in diag.message and f"{MAX_NODES:,}" in diag.message
    # the root mapping, `name`, `x`, `v` and the list come first (keys count): item k is value k + 6
    index = MAX_NODES - 5
    assert (diag.line, diag.col, diag.key_path) == (2, 5 + 2 * index, ("v", index))


# --------------------------------------------------------------------------- size and depth


def test_too_large_bytes_are_refused_before_parsing():
    start = time.perf_counter()
    diag = only_error(b"a: [" + b"1," * (MAX_BYTES // 2) + b"]", located=False)
    assert time.perf_counter() - start < 1.0
    assert "too large" in diag.message and "1,024 KiB" in diag.message


def test_too_large_str_counts_utf8_bytes():
    diag = only_error("a: " + "\u00e9" * (MAX_BYTES // 2 + 1), located=False)
    assert "too large" in diag.message


@pytest.mark.parametrize("doc", ["[" * 10_000, "a: " + "[" * 10_000 + "]" * 10_000,
                                 "{a: " * 10_000 + "}" * 10_000, "- " * 10_000 + "x\n",
                                 "".join(" " * i + f"k{i}:\n" for i in range(1_000))],
                         ids=["open-brackets", "balanced-brackets", "flow-maps", "block-lists",
                              "block-maps"])
def test_deep_nesting_is_a_diagnostic_not_recursionerror(doc):
    diag = only_error(doc)
    assert "nesting is too deep" in diag.message and str(MAX_DEPTH) in diag.message


def test_nesting_up_to_max_depth_is_fine():
    depth = MAX_DEPTH - 1  # plus the top-level mapping
    data = load("a: " + "[" * depth + "1" + "]" * depth)[0]
    for _ in range(depth + 1):
        data = data["a"] if isinstance(data, dict) else data[0]
    assert data == 1
    diag = only_error("a: " + "[" * MAX_DEPTH + "1" + "]" * MAX_DEPTH)
    assert "nesting is too deep" in diag.message
    assert diag.col == 3 + MAX_DEPTH and len(diag.key_path) == MAX_DEPTH


# --------------------------------------------------------------------------- document shape


@pytest.mark.parametrize("doc", ["", "   \n\n", "# only a comment\n# and another\n", "---\n",
                                 "---\n...\n", b"\xef\xbb\xbf", "\ufeff# c\n"])
def test_empty_file(doc):
    diag = only_error(doc)
    assert diag.message == "file is empty"
    assert "name:" in diag.hint and "links:" in diag.hint
    assert diag.key_path == ()


@pytest.mark.parametrize("doc, found", [("- a\n- b\n", "a list"), ("hello\n", "'hello'"),
                                        ("42\n", "42"), ("null\n", "not null"), ("'x'\n", "'x'")])
def test_top_level_must_be_a_mapping(doc, found):
    diag = only_error(doc)
    assert "top level must be a mapping" in diag.message
    assert "name, links, joints" in diag.message and found in diag.message


@pytest.mark.parametrize("doc, line", [("a: 1\n---\nb: 2\n", 2), ("---\na: 1\n---\nb: 2\n", 3),
                                       ("a: 1\n...\n---\n- x\n", 3)])
def test_multiple_documents_error_on_second_document(doc, line):
    diag = only_error(doc)
    assert "second" in diag.message and diag.line == line


def test_all_problems_are_reported_sorted_by_line():
    doc = "a: !foo 1\nb: 2\nb: 3\nc: *missing\n"
    diags = errors(doc)
    assert [d.line for d in diags] == [1, 3, 4]


# --------------------------------------------------------------------------- bytes and encodings


def test_nul_bytes_mean_not_a_text_file():
    diag = only_error(b"name: x\nab\x00cd\n")
    assert "not a text file" in diag.message
    assert (diag.line, diag.col) == (2, 3)


@pytest.mark.parametrize("doc", ["a: b\x00\n", "a: b\x07\n", "a: \x1b[31m\n", "a: \ud800\n"])
def test_control_characters_in_str_mean_not_a_text_file(doc):
    diag = only_error(doc)
    assert "not a text file" in diag.message
    assert (diag.line, diag.col) == (1, 5 if "b" in doc else 4)


def test_binary_garbage_is_not_a_text_file():
    diag = only_error(bytes(range(256)) * 4)
    assert "not a text file" in diag.message


@pytest.mark.parametrize("raw, line, col", [(b"name: x\nlinks: caf\xe9\n", 2, 11),
                                            (b"n\xc3\xa9: \xff\n", 1, 5),
                                            (b"a: 1\r\nb: \xc3\n", 2, 4)])
def test_invalid_utf8_reports_first_bad_byte(raw, line, col):
    diag = only_error(raw)
    assert "UTF-8" in diag.message
    assert diag.hint == "save the file as UTF-8"
    assert (diag.line, diag.col) == (line, col)


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32"])
def test_boms_are_honoured(encoding):
    text = "name: caf\u00e9\nlinks: []\n"
    raw = text.encode(encoding)
    if encoding in ("utf-16-le", "utf-16-be"):
        raw = (codecs.BOM_UTF16_LE if encoding.endswith("le") else codecs.BOM_UTF16_BE) + raw
    data, smap = load(raw)
    assert data == {"name": "caf\u00e9", "links": []}
    assert smap.locate(("links",)) == (2, 1)


def test_utf16_without_bom_is_not_a_text_file():
    assert "not a text file" in only_error("a: 1\n".encode("utf-16-le")).message


def test_truncated_utf16_is_an_error():
    diag = only_error(codecs.BOM_UTF16_LE + "a: 1\n".encode("utf-16-le") + b"\x00")
    assert "UTF-16" in diag.message and diag.hint == "save the file as UTF-8"


# --------------------------------------------------------------------------- syntax errors


def test_tab_indentation():
    diag = only_error("links:\n\t- a\n")
    assert (diag.line, diag.col) == (2, 1)
    assert "indent with spaces" in diag.hint
    assert "'\\t'" in diag.message


@pytest.mark.parametrize(
    "doc, line, hint_word",
    [
        ("name: 'open\nlinks: []\n", 3, "quote"),
        ('name: "open\n', 2, "quote"),
        ("links: [a, b\n", 2, "bracket"),
        ("units: {a: 1\n", 2, "brace"),
        ("a:\n  b: 1\n c: 2\n", 3, "indentation"),
        ("a: b: c\n", 1, "quote"),
        ("a: \"\\q\"\n", 1, "escape"),
    ],
)
def test_syntax_errors_become_one_diagnostic(doc, line, hint_word):
    diag = only_error(doc)
    assert diag.line == line
    assert hint_word in diag.hint


def test_syntax_error_key_path_is_the_enclosing_node():
    diag = only_error("joints:\n  A: {parent: x, child: [1, 2}\n")
    assert diag.key_path[:2] == ("joints", "A")


def test_syntax_error_positions_match_pure_python_pyyaml():
    doc = "a: 1\nb: [1, 2\n"
    with pytest.raises(yaml.MarkedYAMLError) as info:
        list(yaml.parse(doc, Loader=yaml.SafeLoader))
    diag = only_error(doc)
    mark = info.value.problem_mark
    assert (diag.line, diag.col) == (mark.line + 1, mark.column + 1)
    assert info.value.problem in diag.message


def test_results_do_not_depend_on_libyaml():
    """libyaml accepts a tab after `: ` (and `{a: b?c}`); the pure-Python parser, used always,
    does not, so a file is valid or invalid regardless of how PyYAML was built."""
    assert "indent with spaces" in only_error("name: \tx\n").hint


# --------------------------------------------------------------------------- source map


def test_locate_points_at_key_tokens_and_list_items():
    data, smap = load(VALID)
    assert smap.locate(("joints", "B", "child")) == (14, 5)
    assert smap.value_location(("joints", "B", "child")) == (14, 12)
    assert smap.locate(("joints", "A", "child")) == (10, 39)
    assert smap.value_location(("joints", "A", "child")) == (10, 46)
    assert smap.locate(("links", 1)) == (6, 5)
    assert smap.locate(("links", 1, "mass")) == (8, 5)
    assert smap.value_location(("links",)) == (4, 3)
    assert smap.locate(("units", "angle")) == (2, 21)
    assert smap.locate(("defaults", "limits", 1)) == (17, 19)


def test_every_key_and_item_at_every_depth_has_an_entry():
    data, smap = load(VALID + "deep: [[1, [2, {x: [3]}]], {y: {z: [4, 5]}}]\n")
    paths = list(walk_paths(data))
    assert len(paths) > 40
    for path in paths:
        assert path in smap, path
        line, col = smap.locate(path)
        assert line >= 1 and col >= 1


def test_paths_inside_an_alias_point_at_the_anchored_text():
    _, smap = load("base: &b\n  x: 1\n  y: [2, 3]\nuse:\n  k: *b\n")
    assert smap.locate(("use", "k")) == (5, 3)
    assert smap.value_location(("use", "k")) == (5, 6)
    assert smap.locate(("use", "k", "x")) == smap.locate(("base", "x")) == (2, 3)
    assert smap.locate(("use", "k", "y", 1)) == (3, 10)


def test_missing_paths_fall_back_to_the_nearest_ancestor():
    _, smap = load(VALID)
    assert smap.locate(("joints", "B", "nope", 3)) == smap.locate(("joints", "B")) == (11, 3)
    assert smap.value_location(("joints", "B", "nope")) == (12, 5)
    assert smap.locate(("missing",)) == (1, 1)
    assert smap.locate(()) == (1, 1)
    assert smap.locate(["joints", "A"]) == (10, 3)  # any sequence works as a path


def test_source_map_with_crlf_and_non_ascii():
    data, smap = load("na\u00efve: \u00e9t\u00e9\r\nlist:\r\n  - \u00fcber\r\n  - x\r\n")
    assert data == {"na\u00efve": "\u00e9t\u00e9", "list": ["\u00fcber", "x"]}
    assert smap.locate(("list", 1)) == (4, 5)
    assert smap.value_location(("na\u00efve",)) == (1, 8)


def test_root_value_location():
    _, smap = load("\n\n# c\nname: x\n")
    assert smap.locate(()) == (1, 1)
    assert smap.value_location(()) == (4, 1)


def test_empty_source_map_defaults_to_1_1():
    assert SourceMap().locate(("a", 0)) == (1, 1)


# --------------------------------------------------------------------------- reading files


def test_read_yaml_file(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text(VALID, encoding="utf-8")
    data, smap = read_yaml_file(path)
    assert data == load(VALID)[0]
    assert smap.locate(("joints", "B", "child")) == (14, 5)


def test_read_yaml_file_diagnostics_name_the_file(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_bytes(b"a: 1\na: 2\n")
    with pytest.raises(MechanismFileError) as info:
        read_yaml_file(str(path))
    assert info.value.diagnostics[0].file == str(path)


def _file_error(path) -> Diagnostic:
    with pytest.raises(MechanismFileError) as info:
        read_yaml_file(path)
    (diag,) = info.value.diagnostics
    assert (diag.line, diag.col, diag.file) == (0, 0, str(path))
    assert diag.hint
    return diag


def test_missing_file(tmp_path):
    assert "not found" in _file_error(tmp_path / "nope.yaml").message


def test_directory(tmp_path):
    assert "directory" in _file_error(tmp_path).message


def test_permission_denied(tmp_path, monkeypatch):
    (tmp_path / "m.yaml").write_text("name: x\n")

    def deny(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(yaml_source.os, "open", deny)
    assert "permission denied" in _file_error(tmp_path / "m.yaml").message


def test_large_file_on_disk(tmp_path):
    path = tmp_path / "big.yaml"
    path.write_bytes(b"# " + b"x" * MAX_BYTES + b"\n")
    with pytest.raises(MechanismFileError) as info:
        read_yaml_file(path)
    assert "too large" in info.value.diagnostics[0].message


# --------------------------------------------------------------------------- fuzzing

YAML_ALPHABET = st.sampled_from(list(":-[]{},#&*!|>'\"%@`?<~.\t\n\r ") + list("ab01eE") +
                                ["\x00", "\x07", "\u00e9", "\ufeff", "\u2028", "---", "...",
                                 "*a", "&a", "<<", "!!python/object", "\n  ", "\n- ", ": "])


def check_contract(data) -> None:
    """load_yaml returns plain data with a complete source map, or raises MechanismFileError."""
    try:
        value, smap = load(data)
    except MechanismFileError as exc:
        assert exc.diagnostics and all(isinstance(d, Diagnostic) for d in exc.diagnostics)
        return
    assert isinstance(value, dict)
    assert_plain(value)
    for path in walk_paths(value):
        assert path in smap


FUZZ = settings(max_examples=300, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(st.text(max_size=300))
def test_fuzz_random_text(text):
    check_contract(text)


@FUZZ
@given(st.binary(max_size=300))
def test_fuzz_random_bytes(raw):
    check_contract(raw)


@FUZZ
@given(st.lists(st.tuples(st.integers(0, len(VALID)), st.sampled_from(["insert", "delete",
                                                                       "replace"]),
                          YAML_ALPHABET), min_size=1, max_size=6))
def test_fuzz_mutations_of_a_valid_document(mutations):
    doc = VALID
    for position, operation, text in mutations:
        position = min(position, len(doc))
        if operation == "insert":
            doc = doc[:position] + text + doc[position:]
        elif operation == "delete":
            doc = doc[:position] + doc[position + len(text):]
        else:
            doc = doc[:position] + text + doc[position + len(text):]
    check_contract(doc)
    check_contract(doc.encode("utf-8", "surrogatepass"))


@FUZZ
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8) |
                    st.floats(allow_nan=False),
                    lambda children: st.lists(children, max_size=4) |
                    st.dictionaries(st.text(max_size=6), children, max_size=4), max_leaves=20))
def test_fuzz_round_trip_of_dumped_data(value):
    """Whatever yaml.safe_dump writes loads as plain data (not always equal: PyYAML dumps for
    YAML 1.1, so e.g. the string '1e5' is written unquoted and read back as a float)."""
    doc = yaml.safe_dump({"v": value}, allow_unicode=True)
    try:
        data, _ = load(doc)
    except MechanismFileError:
        return  # e.g. text with control characters
    assert_plain(data)


# --------------------------------------------------------------------------- line breaks as editors count them


@pytest.mark.parametrize("char", ["\x85", "\u2028", "\u2029"], ids=["NEL", "LS", "PS"])
def test_unicode_separators_are_not_line_breaks(char):
    # issue 15: PyYAML (YAML 1.1) counts NEL/LS/PS as line breaks, so every later line number
    # differed from the editor's (all 52 wrong locations of a fuzz run)
    doc = f"name: a{char}b\ndescription: '{char}x{char}'\n# note{char}more\nkind: planer\n"
    data, smap = load(doc)
    assert data["name"] == f"a{char}b" and data["description"] == f"{char}x{char}"  # kept, not folded
    assert smap.locate(("kind",)) == (4, 1)
    with pytest.raises(MechanismFileError) as info:
        load(doc + f"bad: [{char}\n")
    (diag,) = info.value.diagnostics
    assert diag.line == 5 or diag.line == 6  # the open bracket on line 5 (or the end of file after it)
    assert diag.line <= doc.count("\n") + 2


def test_unicode_separators_in_keys_and_errors_come_back():
    data, _ = load("\u2028key: 1\n")
    assert list(data) == ["\u2028key"]
    with pytest.raises(MechanismFileError) as info:
        load("a: *x\u2028y\n")
    message = info.value.diagnostics[0].message  # PyYAML quotes the character escaped
    assert "'\\u2028'" in message and "\\ue0" not in message  # LS, not the placeholder


# --------------------------------------------------------------------------- the fast whitespace skip


def _events(loader_cls, text):
    """(event type, value, start line/col, end line/col) of every event, or the error."""
    loader = loader_cls(text)
    out = []
    try:
        while True:
            e = loader.get_event()
            out.append((type(e).__name__, getattr(e, "value", None), e.start_mark.line, e.start_mark.column,
                        e.end_mark.line, e.end_mark.column))
            if isinstance(e, yaml.StreamEndEvent):
                return out
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        return out + [("error", str(getattr(exc, "problem", exc)), mark and (mark.line, mark.column))]
    finally:
        loader.dispose()


def test_fast_skip_gives_pyyaml_s_events_on_the_examples():
    from linkcli.io.yaml_source import _Loader

    for path in sorted((REPO / "mechanisms").rglob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        for variant in (text, text.replace("\n", "\r\n"), text.replace("\n", "\r"), "\ufeff" + text):
            assert _events(_Loader, variant) == _events(yaml.SafeLoader, variant), path


@settings(max_examples=300)
@given(st.lists(st.sampled_from(["\n", "\r\n", "\r", " ", "  ", "# c", "#", "\ufeff", "\t", "a", "b: 1", "- x",
                                 "[", "]", "{", "}", ",", ":", "'q'", "\"d\"", "? k", "|\n  t", "\x85", "\u2028"]),
                max_size=40))
def test_fast_skip_gives_pyyaml_s_events(parts):
    from linkcli.io.yaml_source import _Loader

    text = "".join(parts)
    assert _events(_Loader, text) == _events(yaml.SafeLoader, text)
