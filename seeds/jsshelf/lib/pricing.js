'use strict';

const { parseAmount, percentOf } = require('./money');

const DEFAULT_TAX_RATE = 20;
const DEFAULT_FEE_PER_TICKET = 100;

// A discount rule is { kind: 'percent', value: 15 } or { kind: 'fixed', value: 500 } (cents).

function parseRule(text) {
  const trimmed = String(text).trim();
  if (trimmed.endsWith('%')) {
    const value = Number(trimmed.slice(0, -1));
    if (trimmed.length === 1 || !Number.isFinite(value)) {
      throw new SyntaxError(`bad percentage: ${text}`);
    }
    return { kind: 'percent', value };
  }
  try {
    return { kind: 'fixed', value: parseAmount(trimmed.replace(/\s*off$/i, '')) };
  } catch (error) {
    throw new SyntaxError(`bad discount rule: ${text}`);
  }
}

function applyDiscount(price, rule) {
  if (!rule) {
    return price;
  }
  switch (rule.kind) {
    case 'percent':
      if (rule.value < 0 || rule.value > 100) {
        throw new RangeError(`percentage out of range: ${rule.value}`);
      }
      return price - percentOf(price, rule.value);
    case 'fixed':
      return price > rule.value ? price - rule.value : 0;
    default:
      throw new TypeError(`unknown discount kind: ${rule.kind}`);
  }
}

function bestDiscount(price, rules) {
  let best = null;
  let bestPrice = price;
  for (const rule of rules) {
    const candidate = applyDiscount(price, rule);
    if (candidate < bestPrice) {
      best = rule;
      bestPrice = candidate;
    }
  }
  return best;
}

// tiers: [{ min: 1, unit: 2500 }, { min: 10, unit: 2200 }]; the largest min not above the
// quantity wins.
function unitPriceFor(quantity, tiers = []) {
  if (quantity < 1) {
    throw new RangeError(`quantity must be at least 1: ${quantity}`);
  }
  let chosen = null;
  for (const tier of tiers) {
    if (tier.min <= quantity && (chosen === null || tier.min > chosen.min)) {
      chosen = tier;
    }
  }
  if (chosen === null) {
    throw new RangeError(`no tier covers quantity ${quantity}`);
  }
  return chosen.unit;
}

function lineTotal(line) {
  const unit = line.unitPrice ?? unitPriceFor(line.quantity, line.tiers);
  return unit * line.quantity;
}

function bookingFee(lines, perTicket, cap) {
  const tickets = lines.reduce((n, line) => n + line.quantity, 0);
  const fee = tickets * perTicket;
  return cap !== undefined && fee > cap ? cap : fee;
}

const taxFor = (net, ratePercent) => percentOf(net, ratePercent);

function isValidPromoCode(code) {
  if (typeof code !== 'string') {
    return false;
  }
  if (code.length < 4 || code.length > 12) {
    return false;
  }
  if (!/^[A-Z0-9-]+$/.test(code)) {
    return false;
  }
  if (code.startsWith('-') || code.endsWith('-') || code.includes('--')) {
    return false;
  }
  return true;
}

function orderTotal(lines, options = {}) {
  const subtotal = lines.reduce((sum, line) => sum + lineTotal(line), 0);
  const discounted = applyDiscount(subtotal, options.discount);
  const discount = subtotal - discounted;
  const tax = options.taxIncluded ? 0 : taxFor(discounted, options.taxRate ?? DEFAULT_TAX_RATE);
  const fee = bookingFee(lines, options.feePerTicket ?? DEFAULT_FEE_PER_TICKET, options.feeCap);
  return { subtotal, discount, tax, fee, total: discounted + tax + fee };
}

module.exports = {
  DEFAULT_TAX_RATE,
  DEFAULT_FEE_PER_TICKET,
  parseRule,
  applyDiscount,
  bestDiscount,
  unitPriceFor,
  lineTotal,
  bookingFee,
  taxFor,
  isValidPromoCode,
  orderTotal,
};
