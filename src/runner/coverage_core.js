// swe-forge: per-test line coverage from istanbul's counters, shared by the jest and mocha
// coverage runs. `tracker(coverage)`, with `coverage()` returning the live `__coverage__`
// object: `counters()` copies the statement and function counts; `grown(before, after)` gives,
// per source file (relative to the working directory, `/`-separated), the lines whose
// statements or functions ran in between: a line belongs to the innermost statement whose
// range holds it, a function's declaration line to the function, and positions of a
// transformed source (TypeScript through ts-jest, babel) are mapped back to the source's lines
// through the transform's source map; `merge(into, lines)` adds lines to a map.
'use strict';
const path = require('path');

function tracker(coverage) {
  const root = process.cwd();
  function counters() {
    const cov = coverage() || {};
    const snap = {};
    for (const file of Object.keys(cov)) {
      snap[file] = { s: Object.assign({}, cov[file].s), f: Object.assign({}, cov[file].f) };
    }
    return snap;
  }

  // The lines of a source file each statement owns: a line belongs to the innermost statement
  // whose range holds it; a function's declaration line belongs to the function.
  const owners = new Map();
  function lineOwners(file) {
    if (owners.has(file)) return owners.get(file);
    const data = coverage()[file];
    // A transformed source (TypeScript through ts-jest, babel): istanbul's positions are the
    // transformed code's, mapped back to the source's lines through the transform's source map.
    let line = (pos) => pos.line;
    if (data.inputSourceMap) {
      const { SourceMapConsumer } = require('source-map');
      const consumer = new SourceMapConsumer(data.inputSourceMap);
      line = (pos) => {
        for (const bias of [SourceMapConsumer.GREATEST_LOWER_BOUND, SourceMapConsumer.LEAST_UPPER_BOUND]) {
          const o = consumer.originalPositionFor({ line: pos.line, column: pos.column || 0, bias });
          if (o && o.line) return o.line;
        }
        return null;
      };
    }
    const spans = [];
    const push = (kind, id, loc) => {
      const start = line(loc.start);
      const end = line(loc.end) || start;
      if (start) spans.push({ kind, id, start, end: Math.max(start, end) });
    };
    for (const [id, loc] of Object.entries(data.statementMap || {})) {
      push('s', id, loc);
    }
    for (const [id, fn] of Object.entries(data.fnMap || {})) {
      push('f', id, fn.decl || fn.loc);
    }
    // Wider spans first, so narrower ones overwrite them.
    spans.sort((a, b) => (b.end - b.start) - (a.end - a.start));
    const byLine = new Map();
    for (const sp of spans) {
      for (let l = sp.start; l <= sp.end; l++) byLine.set(l, sp);
    }
    const result = new Map(); // "s:id" / "f:id" -> [lines]
    for (const [line, sp] of byLine) {
      const key = sp.kind + ':' + sp.id;
      if (!result.has(key)) result.set(key, []);
      result.get(key).push(line);
    }
    owners.set(file, result);
    return result;
  }

  function grown(before, after) {
    const out = {};
    for (const file of Object.keys(after)) {
      const b = before[file] || { s: {}, f: {} };
      const own = lineOwners(file);
      const lines = new Set();
      for (const kind of ['s', 'f']) {
        for (const [id, n] of Object.entries(after[file][kind])) {
          if (n > (b[kind][id] || 0)) {
            for (const l of own.get(kind + ':' + id) || []) lines.add(l);
          }
        }
      }
      if (lines.size > 0) {
        out[path.relative(root, file).split(path.sep).join('/')] = [...lines].sort((x, y) => x - y);
      }
    }
    return out;
  }

  function merge(into, lines) {
    for (const [file, ls] of Object.entries(lines)) {
      const set = new Set(into[file] || []);
      for (const l of ls) set.add(l);
      into[file] = [...set].sort((x, y) => x - y);
    }
  }

  return { counters, grown, merge };
}

module.exports = { tracker };
