'use strict';

// Seat labels are row letters followed by a seat number: "A1", "K12", "AB3".
// Rows are numbered from 0 ("A") upward, seats from 1.

const SEAT_PATTERN = /^([A-Z]{1,2})(\d{1,3})$/;
const LETTERS = 26;

function rowIndex(letters) {
  let index = 0;
  for (const ch of letters) {
    index = index * LETTERS + (ch.charCodeAt(0) - 64);
  }
  return index - 1;
}

function rowLetters(index) {
  if (!Number.isInteger(index) || index < 0) {
    throw new RangeError(`bad row index: ${index}`);
  }
  let n = index + 1;
  let out = '';
  while (n > 0) {
    const rem = (n - 1) % LETTERS;
    out = String.fromCharCode(65 + rem) + out;
    n = Math.floor((n - 1) / LETTERS);
  }
  return out;
}

function parseSeat(label) {
  if (typeof label !== 'string') {
    throw new TypeError(`seat label must be a string: ${label}`);
  }
  const match = SEAT_PATTERN.exec(label.trim().toUpperCase());
  if (!match) {
    throw new SyntaxError(`bad seat label: ${label}`);
  }
  const number = Number(match[2]);
  if (number < 1) {
    throw new RangeError(`seat numbers start at 1: ${label}`);
  }
  return { row: rowIndex(match[1]), number };
}

function seatLabel(row, number) {
  return `${rowLetters(row)}${number}`;
}

function compareSeats(a, b) {
  if (a.row !== b.row) {
    return a.row - b.row;
  }
  return a.number - b.number;
}

function expandRange(text) {
  const [startText, endText] = String(text).split('-');
  const start = parseSeat(startText);
  const end = endText === undefined ? start : parseSeat(endText);
  if (start.row !== end.row) {
    throw new RangeError(`a range must stay in one row: ${text}`);
  }
  if (end.number < start.number) {
    throw new RangeError(`range runs backwards: ${text}`);
  }
  const labels = [];
  for (let n = start.number; n <= end.number; n++) {
    labels.push(seatLabel(start.row, n));
  }
  return labels;
}

// aisles lists the seat numbers that have an aisle on their right-hand side.
function areAdjacent(a, b, aisles = []) {
  const first = parseSeat(a);
  const second = parseSeat(b);
  if (first.row !== second.row) {
    return false;
  }
  const low = first.number < second.number ? first.number : second.number;
  if (Math.abs(first.number - second.number) !== 1) {
    return false;
  }
  return !aisles.includes(low);
}

function findBlock(available, count) {
  if (count <= 0) {
    return [];
  }
  const seats = available.map(parseSeat).sort(compareSeats);
  let run = [];
  for (const seat of seats) {
    const last = run[run.length - 1];
    if (last?.row === seat.row && seat.number === last.number + 1) {
      run.push(seat);
    } else {
      run = [seat];
    }
    if (run.length === count) {
      return run.map((s) => seatLabel(s.row, s.number));
    }
  }
  return null;
}

const countByRow = (labels) => {
  const counts = {};
  for (const label of labels) {
    const letters = rowLetters(parseSeat(label).row);
    counts[letters] = (counts[letters] || 0) + 1;
  }
  return counts;
};

module.exports = {
  rowIndex,
  rowLetters,
  parseSeat,
  seatLabel,
  compareSeats,
  expandRange,
  areAdjacent,
  findBlock,
  countByRow,
};
