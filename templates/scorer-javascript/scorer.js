// The `{{name}}` scorer: passes when the output contains every keyword of
// the config (`{"keywords": ["refund", "order"]}`); the score is the
// fraction of keywords found. `"ignore_case": true` compares
// case-insensitively.
//
// Edit this file to write your own check; `cautilus-sdk.js` does the rest.

import { ConfigError, excerpt, exportScorers, output, rejectUnknownKeys, score } from './cautilus-sdk.js';

// Identity reported by `describe` (shown by `cautilus plugin inspect`).
const PLUGIN = {
  id: '{{name}}',
  version: '0.1.0',
  description: 'A cautilus scorer plugin written in JavaScript',
};

/** One scorer: parse and validate the config once, then score many inputs. */
class Keywords {
  static ID = '{{name}}';
  static DESCRIPTION = 'passes when the output contains every keyword; value = fraction found';
  static CONFIG_SCHEMA = {
    type: 'object',
    properties: {
      keywords: {
        description: 'the words or phrases the output must contain',
        type: 'array',
        items: { type: 'string', minLength: 1 },
        minItems: 1,
      },
      ignore_case: { description: 'compare case-insensitively (default false)', type: 'boolean' },
    },
    required: ['keywords'],
    additionalProperties: false,
  };

  constructor(config) {
    rejectUnknownKeys(config, ['keywords', 'ignore_case']);
    const { keywords, ignore_case: ignoreCase = false } = config;
    if (keywords === undefined) {
      throw new ConfigError('keywords', 'missing field `keywords` (a list of strings)');
    }
    if (!Array.isArray(keywords) || keywords.length === 0) {
      throw new ConfigError('keywords', '`keywords` must be a non-empty list of strings');
    }
    keywords.forEach((keyword, i) => {
      if (typeof keyword !== 'string' || keyword === '') {
        throw new ConfigError(`keywords[${i}]`, `expected a non-empty string, got ${JSON.stringify(keyword)}`);
      }
    });
    if (typeof ignoreCase !== 'boolean') {
      throw new ConfigError('ignore_case', `expected true or false, got ${JSON.stringify(ignoreCase)}`);
    }
    this.keywords = keywords;
    this.ignoreCase = ignoreCase;
    this.needles = ignoreCase ? keywords.map(fold) : keywords;
  }

  score(input) {
    const text = output(input);
    const hay = this.ignoreCase ? fold(text) : text;
    const missing = this.keywords.filter((_, i) => !hay.includes(this.needles[i]));
    const found = this.keywords.length - missing.length;
    const detail = missing.length
      ? `missing ${missing.length} of ${this.keywords.length} keywords` +
        `${this.ignoreCase ? ' (ignoring case)' : ''}: ` +
        `${missing.map((k) => excerpt(k)).join(', ')}; got ${excerpt(text)}`
      : undefined;
    return score(Keywords.ID, found / this.keywords.length, { passed: missing.length === 0, detail });
  }
}

function fold(text) {
  return text.toLowerCase();
}

// The export componentize-js looks for: every scorer class of this component.
export const scorerApi = exportScorers(PLUGIN, [Keywords]);
