'use strict';

const SMALL_WORDS = new Set(['a', 'an', 'and', 'at', 'by', 'for', 'in', 'of', 'on', 'the', 'to']);

function slugify(text, separator = '-') {
  const words = String(text ?? '')
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length > 0);
  return words.join(separator);
}

function truncate(text, max, options = {}) {
  const ellipsis = options.ellipsis ?? '...';
  if (max < ellipsis.length) {
    throw new RangeError(`max ${max} is shorter than the ellipsis`);
  }
  if (text.length <= max) {
    return text;
  }
  let cut = text.slice(0, max - ellipsis.length);
  if (options.atWord) {
    const space = cut.lastIndexOf(' ');
    if (space > 0) {
      cut = cut.slice(0, space);
    }
  }
  return cut.trimEnd() + ellipsis;
}

function wrap(text, width) {
  if (width < 1) {
    throw new RangeError(`width must be positive: ${width}`);
  }
  const lines = [];
  let current = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    let rest = word;
    while (rest.length > width) {
      if (current !== '') {
        lines.push(current);
        current = '';
      }
      lines.push(rest.slice(0, width));
      rest = rest.slice(width);
    }
    if (current === '') {
      current = rest;
    } else if (current.length + 1 + rest.length <= width) {
      current += ` ${rest}`;
    } else {
      lines.push(current);
      current = rest;
    }
  }
  if (current !== '') {
    lines.push(current);
  }
  return lines;
}

function titleCase(text) {
  const words = text.toLowerCase().split(' ');
  return words
    .map((word, i) => {
      const edge = i === 0 || i === words.length - 1;
      if (!edge && SMALL_WORDS.has(word)) {
        return word;
      }
      return word.charAt(0).toUpperCase() + word.slice(1);
    })
    .join(' ');
}

function initials(name, max = 2) {
  const letters = [];
  for (const part of String(name).split(/[\s-]+/)) {
    if (letters.length >= max) {
      break;
    }
    const first = part.match(/[A-Za-z]/)?.[0];
    if (first !== undefined) {
      letters.push(first.toUpperCase());
    }
  }
  return letters.join('');
}

const pluralize = (count, singular, plural = `${singular}s`) => {
  const word = count === 1 ? singular : plural;
  return `${count} ${word}`;
};

module.exports = {
  slugify,
  truncate,
  wrap,
  titleCase,
  initials,
  pluralize,
};
