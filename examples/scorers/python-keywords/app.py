"""The `python-keywords` scorer: passes when the output contains every keyword of
the config (`{"keywords": ["refund", "order"]}`); the score is the fraction
of keywords found. `"ignore_case": true` compares case-insensitively.

Edit this file to write your own check; `cautilus_sdk.py` does the rest.
"""

import cautilus_sdk
from cautilus_sdk import ConfigError

# Identity reported by `describe` (shown by `cautilus plugin inspect`).
PLUGIN = {
    "id": "python-keywords",
    "version": "0.1.0",
    "description": "A cautilus scorer plugin written in Python",
}


class Keywords:
    """One scorer: parse and validate the config once, then score many inputs."""

    ID = "python-keywords"
    DESCRIPTION = "passes when the output contains every keyword; value = fraction found"
    CONFIG_SCHEMA = {
        "type": "object",
        "properties": {
            "keywords": {
                "description": "the words or phrases the output must contain",
                "type": "array",
                "items": {"type": "string", "minLength": 1},
                "minItems": 1,
            },
            "ignore_case": {
                "description": "compare case-insensitively (default false)",
                "type": "boolean",
            },
        },
        "required": ["keywords"],
        "additionalProperties": False,
    }

    def __init__(self, config):
        cautilus_sdk.reject_unknown_keys(config, ["keywords", "ignore_case"])
        keywords = config.get("keywords")
        if keywords is None:
            raise ConfigError("keywords", "missing field `keywords` (a list of strings)")
        if not isinstance(keywords, list) or not keywords:
            raise ConfigError("keywords", "`keywords` must be a non-empty list of strings")
        for i, keyword in enumerate(keywords):
            if not isinstance(keyword, str) or not keyword:
                raise ConfigError(f"keywords[{i}]", f"expected a non-empty string, got {keyword!r}")
        ignore_case = config.get("ignore_case", False)
        if not isinstance(ignore_case, bool):
            raise ConfigError("ignore_case", f"expected true or false, got {ignore_case!r}")
        self.keywords = keywords
        self.ignore_case = ignore_case
        self.needles = [k.lower() for k in keywords] if ignore_case else keywords

    def score(self, input):
        text = cautilus_sdk.output(input)
        hay = text.lower() if self.ignore_case else text
        missing = [k for k, n in zip(self.keywords, self.needles) if n not in hay]
        found = len(self.keywords) - len(missing)
        detail = None
        if missing:
            detail = (
                f"missing {len(missing)} of {len(self.keywords)} keywords"
                f"{' (ignoring case)' if self.ignore_case else ''}: "
                f"{', '.join(cautilus_sdk.excerpt(k) for k in missing)}; got {cautilus_sdk.excerpt(text)}"
            )
        return cautilus_sdk.score(
            self.ID, found / len(self.keywords), passed=not missing, detail=detail
        )


# The export componentize-py looks for: every scorer class of this component.
ScorerApi = cautilus_sdk.export(PLUGIN, [Keywords])
