//! Lines: the byte offsets where the lines of a file start.

use tree_sitter::Point;

/// Byte offsets of line starts.
pub(super) struct Lines {
    starts: Vec<usize>,
    len: usize,
}

impl Lines {
    pub(super) fn new(text: &str) -> Lines {
        let mut starts = vec![0];
        starts.extend(
            text.bytes()
                .enumerate()
                .filter(|(i, b)| *b == b'\n' && i + 1 < text.len())
                .map(|(i, _)| i + 1),
        );
        Lines {
            starts,
            len: text.len(),
        }
    }

    /// 0-based line of `byte`.
    pub(super) fn line_of(&self, byte: usize) -> usize {
        self.starts.partition_point(|s| *s <= byte) - 1
    }

    pub(super) fn start(&self, line: usize) -> usize {
        self.starts[line]
    }

    /// End of `line`, after its newline.
    pub(super) fn end(&self, line: usize) -> usize {
        self.starts.get(line + 1).copied().unwrap_or(self.len)
    }

    pub(super) fn count(&self) -> usize {
        if self.len == 0 {
            0
        } else {
            self.starts.len()
        }
    }

    pub(super) fn point(&self, text: &str, byte: usize) -> Point {
        if byte == self.len && text.ends_with('\n') {
            return Point {
                row: self.starts.len(),
                column: 0,
            };
        }
        let line = self.line_of(byte);
        Point {
            row: line,
            column: byte - self.starts[line],
        }
    }
}
