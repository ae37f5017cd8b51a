"""The `grader` resource of the exported `scorer-api` interface.

componentize-py looks for exported resources in a module named after the
interface (`scorer_api`); there is nothing to edit here.
"""

from wit_world import exports

import cautilus_sdk


class Grader(exports.scorer_api.Grader):
    """One scorer object bound to one validated config."""

    def __init__(self, scorer):
        self._scorer = scorer

    def score(self, input):
        return cautilus_sdk.grader_score(self._scorer, input)

    def score_batch(self, inputs):
        return cautilus_sdk.grader_score_batch(self._scorer, inputs)
