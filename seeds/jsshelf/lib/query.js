'use strict';

// A tiny filter language over arrays of objects:
//   where(rows, 'price >= 20 and venue.city = Lyon and title ~ jazz')

const OPERATORS = {
  '=': 'eq',
  '!=': 'ne',
  '<': 'lt',
  '<=': 'lte',
  '>': 'gt',
  '>=': 'gte',
  '~': 'contains',
};

const CONDITION_PATTERN = /^\s*([\w.]+)\s*(<=|>=|!=|=|<|>|~)\s*(.*?)\s*$/;

function getPath(row, path) {
  let value = row;
  for (const key of path.split('.')) {
    value = value?.[key];
  }
  return value;
}

function parseValue(raw) {
  if (raw === 'true') {
    return true;
  }
  if (raw === 'false') {
    return false;
  }
  if (raw === 'null') {
    return null;
  }
  if (/^-?\d+(\.\d+)?$/.test(raw)) {
    return Number(raw);
  }
  if (raw.length >= 2 && raw.startsWith('"') && raw.endsWith('"')) {
    return raw.slice(1, -1);
  }
  return raw;
}

function parseCondition(text) {
  const match = CONDITION_PATTERN.exec(text);
  if (!match) {
    throw new SyntaxError(`bad condition: ${text}`);
  }
  return { path: match[1], op: OPERATORS[match[2]], value: parseValue(match[3]) };
}

function compare(actual, op, expected) {
  switch (op) {
    case 'eq':
      return actual === expected;
    case 'ne':
      return actual !== expected;
    case 'lt':
      return actual < expected;
    case 'lte':
      return actual <= expected;
    case 'gt':
      return actual > expected;
    case 'gte':
      return actual >= expected;
    case 'in':
      return Array.isArray(expected) && expected.includes(actual);
    case 'contains':
      return typeof actual === 'string' && actual.toLowerCase().includes(String(expected).toLowerCase());
    default:
      throw new TypeError(`unknown operator: ${op}`);
  }
}

function matches(row, conditions) {
  return conditions.every((c) => compare(getPath(row, c.path), c.op, c.value));
}

function where(rows, query) {
  const conditions = typeof query === 'string' ? query.split(/\s+and\s+/i).map(parseCondition) : query;
  return rows.filter((row) => matches(row, conditions));
}

// Missing values sort after everything else.
function compareValues(x, y) {
  if (x === y) {
    return 0;
  }
  if (x === undefined) {
    return 1;
  }
  if (y === undefined) {
    return -1;
  }
  return x < y ? -1 : 1;
}

function sortBy(rows, path, descending = false) {
  const direction = descending ? -1 : 1;
  return [...rows].sort((a, b) => {
    const x = getPath(a, path);
    const y = getPath(b, path);
    if (x === undefined || y === undefined) {
      return compareValues(x, y);
    }
    return direction * compareValues(x, y);
  });
}

function countBy(rows, path) {
  const counts = {};
  for (const row of rows) {
    const key = String(getPath(row, path) ?? 'none');
    if (Object.hasOwn(counts, key)) {
      counts[key]++;
    } else {
      counts[key] = 1;
    }
  }
  return counts;
}

function paginate(rows, page, perPage) {
  if (perPage < 1) {
    throw new RangeError(`perPage must be positive: ${perPage}`);
  }
  const pages = Math.max(1, Math.ceil(rows.length / perPage));
  if (page < 1 || page > pages) {
    return { items: [], page, pages };
  }
  const start = (page - 1) * perPage;
  return { items: rows.slice(start, start + perPage), page, pages };
}

module.exports = {
  getPath,
  parseValue,
  parseCondition,
  compare,
  compareValues,
  matches,
  where,
  sortBy,
  countBy,
  paginate,
};
