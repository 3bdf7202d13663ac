// swe-forge: a reporter for node's built-in test runner (`node --test --test-reporter=<this>
// --test-reporter-destination=<report.json>`) that writes the report in mocha's JSON shape, so
// that swe-forge's mocha report reader and the harnesses' verdict script read it as they read
// mocha's: `tests` (every test that ran: a test with no subtests), `failures` and `pending`
// among them, with `fullTitle` the names of its enclosing suites and its own joined by spaces
// and `file` its test file. A suite whose hook failed cancels its tests: they are failures with
// the hook's error. A test file that could not run at all (a module that throws while it
// loads) is in `loadErrors` ({file, error}), with the first error line its process printed.
// Tests a `--test-name-pattern` left out are not reported.
const open = new Map(); // file -> stack of {name, children, error}
const stderr = new Map(); // file -> lines the file's process printed on stderr
const tests = [];
const failures = [];
const pending = [];
const loadErrors = [];

function errorOf(details) {
  const e = details && details.error;
  if (!e) return {};
  const cause = e.cause && typeof e.cause === 'object' ? e.cause : e;
  const out = {
    message: String(cause.message === undefined ? cause : cause.message),
    stack: String(cause.stack || cause.message || cause),
  };
  if (cause.expected !== undefined || cause.actual !== undefined) {
    out.expected = cause.expected;
    out.actual = cause.actual;
  }
  out.failureType = e.failureType;
  return out;
}

function firstError(lines) {
  // `RangeError: …`, `Error [ERR_X]: …` (node prints the source line that threw before it).
  const error =
    lines.find((l) => /^\s*([\w$.]*Error|Exception)(\s*\[[^\]]*\])?:/.test(l)) ||
    lines.find((l) => /Error\b/.test(l) && !l.trim().startsWith('at '));
  return error ? error.trim() : (lines.find((l) => l.trim()) || 'the file did not run').trim();
}

function finish(type, data) {
  const file = data.file || '';
  const stack = open.get(file) || [];
  const node = stack.pop() || { name: data.name, children: 0 };
  const parent = stack[stack.length - 1];
  const err = type === 'test:fail' ? errorOf(data.details) : null;
  const duration = (data.details && data.details.duration_ms) || 0;
  if (data.nesting === 0 && file && data.name === file && node.children === 0) {
    // The file itself, as the runner's test of it: it ran nothing.
    if (err) loadErrors.push({ file, error: firstError(stderr.get(file) || []) });
    return;
  }
  if (node.children > 0) {
    // A suite: its own failure is a hook's (its tests' failures are theirs).
    if (err && err.failureType === 'hookFailed') {
      for (const t of node.cancelled || []) {
        t.err = { message: `a hook of "${data.name}" failed: ${err.message}`, stack: err.stack };
      }
    }
    return;
  }
  if (data.skip === 'test name does not match pattern') return;
  const ancestors = stack.map((s) => s.name);
  const test = {
    title: data.name,
    fullTitle: [...ancestors, data.name].join(' '),
    file,
    duration,
    err: err || {},
  };
  tests.push(test);
  if (err) {
    failures.push(test);
    if (err.failureType === 'cancelledByParent' && parent) {
      (parent.cancelled || (parent.cancelled = [])).push(test);
    }
  } else if (data.skip || data.todo) {
    pending.push(test);
  }
}

export default async function* report(source) {
  for await (const event of source) {
    const data = event.data || {};
    const file = data.file || '';
    switch (event.type) {
      case 'test:start': {
        const stack = open.get(file) || [];
        if (stack.length > 0) stack[stack.length - 1].children += 1;
        stack.push({ name: data.name, children: 0 });
        open.set(file, stack);
        break;
      }
      case 'test:pass':
      case 'test:fail':
        finish(event.type, data);
        break;
      case 'test:stderr': {
        const lines = stderr.get(file) || [];
        if (lines.length < 200) lines.push(String(data.message || ''));
        stderr.set(file, lines);
        break;
      }
      default:
        break;
    }
  }
  const stats = {
    tests: tests.length,
    passes: tests.length - failures.length - pending.length,
    pending: pending.length,
    failures: failures.length,
  };
  const passes = tests.filter((t) => !failures.includes(t) && !pending.includes(t));
  yield JSON.stringify({ stats, tests, pending, failures, passes, loadErrors });
}
