"""The cautilus scorer SDK for Python: glue between your scorer classes and
the `scorer-api` exports of the `cautilus:plugin/scorer` world.

You should not need to edit this file. Write scorers in `app.py`: a class
with `ID`, `DESCRIPTION`, `CONFIG_SCHEMA`, `__init__(self, config)` (raise
`ConfigError` for a bad config) and `score(self, input) -> Score`, then

    ScorerApi = cautilus_sdk.export(PLUGIN, [MyScorer])

`componentize-py` generates `wit_world` from `./wit` at build time.
"""

import json
import traceback

from componentize_py_types import Err, Ok

import scorer_api  # the `grader` resource; imported now; the sandbox has no files to import from later
from wit_world import exports
from wit_world.exports.scorer_api import ScorerInfo, ScorerPack
from wit_world.imports import log as _log
from wit_world.imports.types import (
    CostClass,
    FieldError,
    LogLevel,
    PluginError_Failed,
    PluginError_InvalidConfig,
    PluginError_InvalidInput,
    PluginInfo,
    Score,
)

EXCERPT_CHARS = 120
MAX_TRACEBACKS_LOGGED = 10
_tracebacks_logged = 0


class ConfigError(Exception):
    """The config is invalid at `path` (a JSON path such as `keywords[2]`)."""

    def __init__(self, path, message):
        super().__init__(f"invalid config at `{path}`: {message}")
        self.path = path
        self.message = message


class InputError(Exception):
    """The input does not fit this scorer (a field of the case or observation)."""

    def __init__(self, path, message):
        super().__init__(f"invalid input at `{path}`: {message}")
        self.path = path
        self.message = message


class ScorerFailed(Exception):
    """Anything else that went wrong; reported as `failed(message)`."""


# --- helpers for scorers ----------------------------------------------------


def output(input):
    """The observed final text (`""` when the provider captured none)."""
    return input.observation.final_text or ""


def expected(input):
    """The case's `expected`, parsed from JSON (`None` when absent or not JSON)."""
    return _json_or_none(input.subject.expected)


def case_input(input):
    """The case's `input`, parsed from JSON (`None` when absent or not JSON)."""
    return _json_or_none(input.subject.input)


def excerpt(text, limit=EXCERPT_CHARS):
    """`text` quoted, cut to `limit` characters (with `…` when cut)."""
    cut = len(text) > limit
    return json.dumps(text[:limit], ensure_ascii=False) + ("…" if cut else "")


def score(name, value, passed=None, detail=None, label=None):
    """A score with `value` clamped to 0..1 (`None`: does not apply)."""
    if value is not None:
        value = min(1.0, max(0.0, float(value)))
    return Score(name=name, value=value, passed=passed, label=label, detail=detail)


def log(level, message):
    """Logs through the host (`CAUTILUS_PLUGIN_LOG=debug` shows the lines).
    `level` is one of trace, debug, info, warn, error."""
    _log.log(LogLevel[level.upper()], message)


def parse_config(text):
    """Parses a config's JSON text into a dict (`{}` for empty text)."""
    if text is None or not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError as error:
        raise ConfigError("", f"the config is not JSON: {error}") from None
    if not isinstance(value, dict):
        raise ConfigError("", f"the config must be a JSON object, got {_kind(value)}")
    return value


def reject_unknown_keys(config, known):
    """Raises `ConfigError` at the first key of `config` not in `known`."""
    for key in config:
        if key not in known:
            expected_keys = ", ".join(f"`{k}`" for k in known)
            raise ConfigError(key, f"unknown field `{key}`, expected one of {expected_keys}")


# --- the exports --------------------------------------------------------------


def _json_or_none(text):
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _kind(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _plugin_error(error):
    """A Python exception as a WIT `plugin-error`."""
    if isinstance(error, ConfigError):
        return PluginError_InvalidConfig(FieldError(path=error.path, message=error.message))
    if isinstance(error, InputError):
        return PluginError_InvalidInput([FieldError(path=error.path, message=error.message)])
    if isinstance(error, ScorerFailed):
        return PluginError_Failed(str(error))
    # A bug in the scorer: report it with where it happened instead of trapping,
    # and log the first few tracebacks (log text per instance is capped).
    global _tracebacks_logged
    if _tracebacks_logged < MAX_TRACEBACKS_LOGGED:
        _tracebacks_logged += 1
        log("debug", "".join(traceback.format_exception(error)))
    frame = traceback.extract_tb(error.__traceback__)[-1:] if error.__traceback__ else []
    where = f" ({frame[0].filename}:{frame[0].lineno})" if frame else ""
    return PluginError_Failed(f"{type(error).__name__}: {error}{where}")


def _result(call, *args):
    """`Ok(call(*args))`, or `Err(plugin-error)` for any exception."""
    try:
        return Ok(call(*args))
    except Exception as error:  # noqa: BLE001 - every failure becomes a plugin-error
        return Err(_plugin_error(error))


def _build(cls, config_text):
    return cls(parse_config(config_text))


def _check(cls, config_text):
    config = parse_config(config_text)
    check = getattr(cls, "check", None)
    if check is not None:
        check(config)  # must accept exactly the configs __init__ accepts
    else:
        cls(config)


def _score_with(scorer, input):
    result = scorer.score(input)
    if not isinstance(result, Score):
        raise ScorerFailed(f"score() returned {type(result).__name__}, not a Score")
    return result


def _score_once(cls, config_text, input):
    once = getattr(cls, "score_once", None)
    if once is not None:  # must answer exactly as cls(config).score(input)
        return once(parse_config(config_text), input)
    return _score_with(_build(cls, config_text), input)


def export(plugin, scorers):
    """The `ScorerApi` class componentize-py exports for these scorer classes.

    `plugin` is a dict with `id`, `version`, `description` and optionally
    `capabilities` (a list of `wit_world.imports.types.Capability_*`)."""
    by_id = {cls.ID: cls for cls in scorers}

    def lookup(id):
        cls = by_id.get(id)
        if cls is None:
            raise ScorerFailed(
                f"no scorer `{id}` in this component (it has: {', '.join(by_id)})"
            )
        return cls

    class ScorerApi(exports.ScorerApi):
        def describe(self):
            return ScorerPack(
                plugin=PluginInfo(
                    id=plugin["id"],
                    version=plugin["version"],
                    description=plugin["description"],
                    capabilities=list(plugin.get("capabilities", [])),
                ),
                scorers=[
                    ScorerInfo(
                        id=cls.ID,
                        description=cls.DESCRIPTION,
                        cost_class=getattr(cls, "COST_CLASS", CostClass.CODE),
                        config_schema=json.dumps(getattr(cls, "CONFIG_SCHEMA", {"type": "object"})),
                    )
                    for cls in scorers
                ],
            )

        def prepare(self, id, config):
            result = _result(lambda: scorer_api.Grader(_build(lookup(id), config)))
            if isinstance(result, Err):
                raise result
            return result.value

        def check(self, id, configs):
            try:
                cls = lookup(id)
            except ScorerFailed as error:
                return [Err(_plugin_error(error)) for _ in configs]
            return [_result(_check, cls, config) for config in configs]

        def score_each(self, inputs, items):
            def one(item):
                cls = lookup(item.scorer)
                if not 0 <= item.input < len(inputs):
                    raise ScorerFailed(f"item names input {item.input} of {len(inputs)}")
                return _score_once(cls, item.config, inputs[item.input])

            return [_result(one, item) for item in items]

    return ScorerApi


def grader_score(scorer, input):
    """`grader.score`: the score, or raises `Err(plugin-error)`."""
    result = _result(_score_with, scorer, input)
    if isinstance(result, Err):
        raise result
    return result.value


def grader_score_batch(scorer, inputs):
    """`grader.score-batch`: one result per input, each as `score` gives it."""
    return [_result(_score_with, scorer, input) for input in inputs]
