"""Every option of ``sitesim run`` and ``sitesim replay`` is a keyword of ``sitesim.run`` and
``sitesim.replay``, checked the same way with the same message: the test iterates the option
table (``config::options``, through ``sitesim._sitesim.option_table``), so an option added to
the table without its keyword, or a keyword that drifted, fails here."""

import ast
import inspect
import re
from pathlib import Path

import pytest

import sitesim
from sitesim import _sitesim

from _cli import KTH, cli

FUNCTIONS = {"run": sitesim.run, "replay": sitesim.replay}
POSITIONAL = {"run": "config", "replay": "trace"}
# Keywords of Python only: a callable has no command-line flag.
PYTHON_ONLY = ["progress"]


def table(command):
    return _sitesim.option_table(command)


@pytest.mark.parametrize("command", ["run", "replay"])
def test_every_option_is_a_keyword_with_the_tables_default(command):
    parameters = inspect.signature(FUNCTIONS[command]).parameters
    keys = [row[0] for row in table(command)]
    positional = POSITIONAL[command]
    assert [k for k in keys if k != positional] == [
        p for p in parameters if p != positional and p not in PYTHON_ONLY
    ]
    for key, kind, help_text, default, choices, _ in table(command):
        if key == positional:
            continue
        parameter = parameters[key]
        assert parameter.kind is inspect.Parameter.KEYWORD_ONLY, key
        # Not given: a switch is off, any other option takes the command's default.
        assert parameter.default is (False if kind == "switch" else None), key
        assert help_text, key
        if kind == "choice":
            assert choices, key


@pytest.mark.parametrize("command", ["run", "replay"])
def test_the_docstring_and_the_help_come_from_the_table(command):
    help_text = cli(command, "--help").stdout
    for key, kind, text, default, choices, _ in table(command):
        if key == POSITIONAL[command]:
            continue
        flag = "--estimate-mode" if key == "estimate_modes" else "--" + key.replace("_", "-")
        assert flag in help_text, flag
        # The help's first words, as clap wraps them (whitespace is not compared).
        first = " ".join(text.split()[:6])
        assert first in " ".join(help_text.split()), (flag, first)
        if default is not None:
            assert f"Default: {default}." in " ".join(help_text.split()), (flag, default)


def test_the_native_stub_takes_the_options_as_keywords():
    stub = Path(sitesim.__file__).with_name("_sitesim.pyi")
    tree = ast.parse(stub.read_text())
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    for name in ["run", "replay", "option_table", "check_text"]:
        assert name in functions, name
    for name in ["run", "replay"]:
        assert functions[name].args.kwarg is not None, name


def wrong_values(kind, whole_range):
    """Values of the wrong kind for an option of `kind`, as (python value, flag text)."""
    if kind == "whole":
        low, high = whole_range
        values = [(high + 1, str(high + 1)), ("seven", "seven")]
        if low > -(2**63):
            values.append((low - 1, str(low - 1)))
        return values
    if kind == "number":
        return [("fast", "fast")]
    if kind == "modes":
        return [([("x", 1)], "x:1")]
    return []


@pytest.mark.parametrize("command", ["run", "replay"])
def test_a_wrong_value_gets_the_flags_message(command):
    """Each option's own check: Python's ValueError names the keyword and says what the
    command line says of the same value as a flag."""
    checked = 0
    for key, kind, _, _, choices, whole_range in table(command):
        call = FUNCTIONS[command]
        for value, text in wrong_values(kind, whole_range):
            args = [] if command == "run" else [KTH]
            with pytest.raises(ValueError) as caught:
                call(*args, **{key: value})
            message = str(caught.value)
            assert message.startswith(f"{key}="), message
            expected = _sitesim.check_text(command, key, text)
            if kind == "modes":
                assert "SECONDS" in message, message
            elif isinstance(value, str):
                # Python's text is quoted by repr, the flag's by the check: the problem is the same.
                assert message.endswith(expected.split(": ")[-1]), (message, expected)
            else:
                assert message.endswith(": " + expected), (message, expected)
            flag = "--estimate-mode" if key == "estimate_modes" else "--" + key.replace("_", "-")
            cli_args = [command] + ([] if command == "run" else [KTH]) + [f"{flag}={text}"]
            done = cli(*cli_args, ok=False)
            assert done.returncode != 0, cli_args
            problem = expected.split(": ")[-1] if kind != "modes" else expected
            assert problem in done.stderr, (cli_args, done.stderr, problem)
            checked += 1
        if kind == "choice":
            args = [] if command == "run" else [KTH]
            with pytest.raises(ValueError) as caught:
                call(*args, **{key: "no-such-name"})
            assert f"is not one of {', '.join(choices)}" in str(caught.value), str(caught.value)
            flag = "--" + key.replace("_", "-")
            done = cli(*([command] + args + [flag, "no-such-name"]), ok=False)
            listed = re.search(r"\[possible values: ([^\]]*)\]", done.stderr)
            assert listed and listed.group(1).split(", ") == choices, done.stderr
            checked += 1
    assert checked > 10


def test_an_unknown_keyword_is_a_type_error():
    with pytest.raises(TypeError):
        sitesim.run(userz=3)
    with pytest.raises(TypeError):
        _sitesim.replay(str(KTH), speed=2)


def test_the_options_frame_lists_every_option():
    frame = sitesim.options("replay")
    assert list(frame["key"]) == [row[0] for row in table("replay")]
    assert frame.set_index("key").loc["load_factor", "default"] == "1.0"
