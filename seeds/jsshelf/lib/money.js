'use strict';

// Amounts are kept as integer cents everywhere; only parsing and formatting see decimals.

const CENTS_PER_UNIT = 100;
const AMOUNT_PATTERN = /^(-)?\s*[$€£]?\s*(\d+)(?:\.(\d{1,2}))?$/;

function parseAmount(text) {
  if (typeof text === 'number') {
    if (!Number.isFinite(text)) {
      throw new RangeError(`not a finite amount: ${text}`);
    }
    return Math.round(text * CENTS_PER_UNIT);
  }
  if (text === undefined || text === null) {
    throw new SyntaxError('empty amount');
  }
  const raw = String(text).trim().replace(/,/g, '');
  if (raw === '') {
    throw new SyntaxError('empty amount');
  }
  const match = AMOUNT_PATTERN.exec(raw);
  if (!match) {
    throw new SyntaxError(`bad amount: ${text}`);
  }
  const whole = Number(match[2]);
  const fraction = match[3] === undefined ? 0 : Number(match[3].padEnd(2, '0'));
  const cents = whole * CENTS_PER_UNIT + fraction;
  return match[1] ? -cents : cents;
}

function tryParseAmount(text, fallback) {
  try {
    return parseAmount(text);
  } catch (error) {
    return fallback;
  }
}

function groupThousands(digits, separator) {
  const head = digits.length % 3 || 3;
  let out = digits.slice(0, head);
  for (let i = head; i < digits.length; i += 3) {
    out += separator + digits.slice(i, i + 3);
  }
  return out;
}

function formatCents(cents, options = {}) {
  if (!Number.isInteger(cents)) {
    throw new TypeError(`cents must be an integer: ${cents}`);
  }
  const symbol = options.symbol ?? '$';
  const separator = options.separator ?? ',';
  const abs = Math.abs(cents);
  const whole = Math.floor(abs / CENTS_PER_UNIT);
  const fraction = abs % CENTS_PER_UNIT;
  const body = `${symbol}${groupThousands(String(whole), separator)}.${String(fraction).padStart(2, '0')}`;
  return cents < 0 ? `-${body}` : body;
}

function roundDiv(numerator, denominator) {
  if (denominator === 0) {
    throw new RangeError('division by zero');
  }
  const sign = Math.sign(numerator) * Math.sign(denominator);
  const n = Math.abs(numerator);
  const d = Math.abs(denominator);
  const quotient = Math.floor(n / d);
  const remainder = n - quotient * d;
  const rounded = remainder * 2 >= d ? quotient + 1 : quotient;
  return sign < 0 ? -rounded : rounded;
}

// percent may carry up to two decimals (7.25 means 7.25 %).
function percentOf(cents, percent) {
  if (!Number.isInteger(cents)) {
    throw new TypeError(`cents must be an integer: ${cents}`);
  }
  const basisPoints = Math.round(percent * 100);
  return roundDiv(cents * basisPoints, 100 * CENTS_PER_UNIT);
}

function splitEvenly(total, parts) {
  if (!Number.isInteger(parts) || parts <= 0) {
    throw new RangeError(`parts must be a positive integer: ${parts}`);
  }
  const base = Math.trunc(total / parts);
  const step = Math.sign(total);
  let remainder = total - base * parts;
  const shares = [];
  for (let i = 0; i < parts; i++) {
    if (remainder !== 0) {
      shares.push(base + step);
      remainder -= step;
    } else {
      shares.push(base);
    }
  }
  return shares;
}

const sumCents = (values) => {
  let total = 0;
  for (const value of values) {
    if (!Number.isInteger(value)) {
      throw new TypeError(`not an amount in cents: ${value}`);
    }
    total += value;
  }
  return total;
};

module.exports = {
  CENTS_PER_UNIT,
  parseAmount,
  tryParseAmount,
  formatCents,
  roundDiv,
  percentOf,
  splitEvenly,
  sumCents,
};
