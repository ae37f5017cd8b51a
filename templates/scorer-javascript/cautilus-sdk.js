// The cautilus scorer SDK for JavaScript: glue between your scorer classes
// and the `scorer-api` exports of the `cautilus:plugin/scorer` world.
//
// You should not need to edit this file. Write scorers in `scorer.js`: a
// class with static `ID`, `DESCRIPTION`, `CONFIG_SCHEMA`, a constructor
// taking the parsed config (throw `ConfigError` for a bad one) and
// `score(input)` returning `score(...)`, then
//
//     export const scorerApi = exportScorers(PLUGIN, [MyScorer]);
//
// WIT values as JS (jco conventions): records are objects with camelCase
// fields (`input.observation.finalText`, `input.subject.expected`), an
// absent option is `undefined`, JSON fields (`expected`, `input`,
// `metadata`, `structured`) are JSON text.

import { log as hostLog } from 'cautilus:plugin/log@0.1.1';

export const EXCERPT_CHARS = 120;
const MAX_STACKS_LOGGED = 10;
let stacksLogged = 0;

/** The config is invalid at `path` (a JSON path such as `keywords[2]`). */
export class ConfigError extends Error {
  constructor(path, message) {
    super(`invalid config at \`${path}\`: ${message}`);
    this.path = path;
    this.detail = message;
  }
}

/** The input does not fit this scorer (a field of the case or observation). */
export class InputError extends Error {
  constructor(path, message) {
    super(`invalid input at \`${path}\`: ${message}`);
    this.path = path;
    this.detail = message;
  }
}

/** Anything else that went wrong; reported as `failed(message)`. */
export class ScorerFailed extends Error {}

// --- helpers for scorers ----------------------------------------------------

/** The observed final text (`""` when the provider captured none). */
export function output(input) {
  return input.observation.finalText ?? '';
}

/** The case's `expected`, parsed from JSON (`undefined` when absent or not JSON). */
export function expected(input) {
  return jsonOrUndefined(input.subject.expected);
}

/** The case's `input`, parsed from JSON (`undefined` when absent or not JSON). */
export function caseInput(input) {
  return jsonOrUndefined(input.subject.input);
}

/** `text` quoted, cut to `limit` characters (with `…` when cut). */
export function excerpt(text, limit = EXCERPT_CHARS) {
  // Count code points up to `limit` only: outputs may be megabytes long.
  let end = 0;
  let chars = 0;
  while (end < text.length && chars < limit) {
    end += text.codePointAt(end) > 0xffff ? 2 : 1;
    chars += 1;
  }
  const cut = end < text.length;
  return JSON.stringify(cut ? text.slice(0, end) : text) + (cut ? '…' : '');
}

/** A score with `value` clamped to 0..1 (`undefined`: does not apply). */
export function score(name, value, { passed, detail, label } = {}) {
  if (value !== undefined && value !== null) value = Math.min(1, Math.max(0, Number(value)));
  else value = undefined;
  return { name, value, passed, label, detail };
}

/** Logs through the host (`CAUTILUS_PLUGIN_LOG=debug` shows the lines).
 *  `level`: trace, debug, info, warn or error. */
export function log(level, message) {
  hostLog(level, message);
}

/** Parses a config's JSON text into an object (`{}` for empty text). */
export function parseConfig(text) {
  if (text === undefined || text === null || text.trim() === '') return {};
  let value;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ConfigError('', `the config is not JSON: ${error.message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ConfigError('', `the config must be a JSON object, got ${kind(value)}`);
  }
  return value;
}

/** Throws `ConfigError` at the first key of `config` not in `known`. */
export function rejectUnknownKeys(config, known) {
  for (const key of Object.keys(config)) {
    if (!known.includes(key)) {
      const keys = known.map((k) => `\`${k}\``).join(', ');
      throw new ConfigError(key, `unknown field \`${key}\`, expected one of ${keys}`);
    }
  }
}

// --- the exports ---------------------------------------------------------------

function jsonOrUndefined(text) {
  if (text === undefined || text === null) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function kind(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'boolean') return 'a boolean';
  return `a ${typeof value}`;
}

/** A JS exception as a WIT `plugin-error`. */
function pluginError(error) {
  if (error instanceof ConfigError) {
    return { tag: 'invalid-config', val: { path: error.path, message: error.detail } };
  }
  if (error instanceof InputError) {
    return { tag: 'invalid-input', val: [{ path: error.path, message: error.detail }] };
  }
  if (error instanceof ScorerFailed) return { tag: 'failed', val: error.message };
  // A bug in the scorer: report it instead of trapping, and log the first
  // few stacks (log text per instance is capped).
  const name = error?.constructor?.name ?? 'Error';
  if (stacksLogged < MAX_STACKS_LOGGED) {
    stacksLogged += 1;
    try {
      log('debug', String(error?.stack ?? error));
    } catch {}
  }
  return { tag: 'failed', val: `${name}: ${error?.message ?? String(error)}` };
}

/** `{tag: 'ok', val: call()}`, or `{tag: 'err', val: plugin-error}` for any exception. */
function result(call) {
  try {
    return { tag: 'ok', val: call() };
  } catch (error) {
    return { tag: 'err', val: pluginError(error) };
  }
}

/** What an export returning `result<T, plugin-error>` throws for an err (jco reads `payload`). */
function thrown(error) {
  const e = new Error(error.tag === 'failed' ? error.val : JSON.stringify(error.val));
  e.payload = error;
  return e;
}

function scoreWith(scorer, input) {
  const s = scorer.score(input);
  if (s === null || typeof s !== 'object' || typeof s.name !== 'string') {
    throw new ScorerFailed(`score() returned ${JSON.stringify(s)}, not a score (use score(...))`);
  }
  return s;
}

/**
 * The `scorerApi` export for these scorer classes. `plugin` has `id`,
 * `version`, `description` and optionally `capabilities`
 * (`[{tag: 'model'}]`, `[{tag: 'http', val: ['api.example.com']}]`).
 */
export function exportScorers(plugin, scorers) {
  const byId = new Map(scorers.map((cls) => [cls.ID, cls]));
  const lookup = (id) => {
    const cls = byId.get(id);
    if (!cls) {
      throw new ScorerFailed(`no scorer \`${id}\` in this component (it has: ${[...byId.keys()].join(', ')})`);
    }
    return cls;
  };
  const build = (cls, config) => new cls(parseConfig(config));
  const check = (cls, config) => {
    const parsed = parseConfig(config);
    // A static `check` must accept exactly the configs the constructor accepts.
    if (typeof cls.check === 'function') cls.check(parsed);
    else new cls(parsed);
  };
  const once = (cls, config, input) =>
    // A static `scoreOnce` must answer exactly as `new cls(config).score(input)`.
    typeof cls.scoreOnce === 'function'
      ? cls.scoreOnce(parseConfig(config), input)
      : scoreWith(build(cls, config), input);

  /** The `grader` resource: one scorer object bound to one valid config. */
  class Grader {
    #scorer;
    constructor(scorer) {
      this.#scorer = scorer;
    }
    score(input) {
      const r = result(() => scoreWith(this.#scorer, input));
      if (r.tag === 'err') throw thrown(r.val);
      return r.val;
    }
    scoreBatch(inputs) {
      return inputs.map((input) => result(() => scoreWith(this.#scorer, input)));
    }
  }

  return {
    Grader,
    describe() {
      return {
        plugin: {
          id: plugin.id,
          version: plugin.version,
          description: plugin.description,
          capabilities: plugin.capabilities ?? [],
        },
        scorers: scorers.map((cls) => ({
          id: cls.ID,
          description: cls.DESCRIPTION,
          costClass: cls.COST_CLASS ?? 'code',
          configSchema: JSON.stringify(cls.CONFIG_SCHEMA ?? { type: 'object' }),
        })),
      };
    },
    prepare(id, config) {
      const r = result(() => new Grader(build(lookup(id), config)));
      if (r.tag === 'err') throw thrown(r.val);
      return r.val;
    },
    check(id, configs) {
      let cls;
      try {
        cls = lookup(id);
      } catch (error) {
        return configs.map(() => ({ tag: 'err', val: pluginError(error) }));
      }
      return configs.map((config) => result(() => { check(cls, config); }));
    },
    scoreEach(inputs, items) {
      return items.map((item) =>
        result(() => {
          const cls = lookup(item.scorer);
          if (!(item.input >= 0 && item.input < inputs.length)) {
            throw new ScorerFailed(`item names input ${item.input} of ${inputs.length}`);
          }
          return once(cls, item.config, inputs[item.input]);
        }),
      );
    },
  };
}
