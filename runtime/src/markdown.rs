//! The Markdown that the crate's readers of text agree on: where a fenced
//! code block opens and closes, and what marks a list item. The call
//! readers' layout (`reader/layout.rs`), the plan finder (`plan/author.rs`),
//! the Pythonic reader's "a list item is prose" and the doc comment rules
//! (`doc.rs`) all ask here, so that the agent, which runs the call readers
//! and the plan finder over the same answer, sees one answer.
//!
//! The rules are CommonMark's:
//!
//! - a fence is a run of three or more backticks or tildes, then an info
//!   string (`python`, `tool_code`) that, after backticks, holds no
//!   backtick: ```` ```f(x=1)``` ```` on one line is inline code, not a
//!   fence;
//! - a block closes at a fence of the same character, at least as long as
//!   the one that opened it, with nothing after it but blanks: inside a
//!   ```` ``` ```` block, ```` ```python ```` is a line of the block;
//! - a list item's marker is `-`, `*` or `+`, or one to nine digits and `.`
//!   or `)`, then a blank or the end of the line.
//!
//! One departure: a fence may be indented by any amount (CommonMark takes
//! three spaces, and a fourth makes an indented code block). Models indent
//! fences inside list items, and nothing here reads indented code blocks.

/// The fence that opened a code block: what closes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fence {
    /// `` ` `` or `~`.
    marker: u8,
    /// How many of them.
    len: usize,
}

impl Fence {
    /// The fence `line` opens a code block with, and its info string
    /// (trimmed: `python`, or empty); `None` when the line is no fence.
    pub(crate) fn open(line: &str) -> Option<(Fence, &str)> {
        let trimmed = line.trim_start();
        let marker = *trimmed.as_bytes().first()?;
        if marker != b'`' && marker != b'~' {
            return None;
        }
        let len = trimmed.bytes().take_while(|&b| b == marker).count();
        let info = &trimmed[len..];
        if len < 3 || (marker == b'`' && info.contains('`')) {
            return None;
        }
        Some((Fence { marker, len }, info.trim()))
    }

    /// Whether `line` closes the block this fence opened.
    pub(crate) fn closes(&self, line: &str) -> bool {
        let trimmed = line.trim_start();
        let run = trimmed.bytes().take_while(|&b| b == self.marker).count();
        run >= self.len && trimmed[run..].trim().is_empty()
    }
}

/// A list item's marker, at the start of a line (its indentation taken off).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ListMarker {
    /// The number of an ordered item (`1.`, `2)`); `None` for a bullet.
    pub(crate) number: Option<u64>,
    /// The marker's length in bytes, without the blank after it.
    pub(crate) len: usize,
}

impl ListMarker {
    /// The marker `line` (its indentation taken off) starts with, if any.
    pub(crate) fn of(line: &str) -> Option<ListMarker> {
        let bytes = line.as_bytes();
        let blank_or_end = |at: usize| line[at..].chars().next().is_none_or(char::is_whitespace);
        if matches!(bytes.first(), Some(b'-' | b'*' | b'+')) && blank_or_end(1) {
            return Some(ListMarker {
                number: None,
                len: 1,
            });
        }
        let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
        if (1..=9).contains(&digits)
            && matches!(bytes.get(digits), Some(b'.' | b')'))
            && blank_or_end(digits + 1)
        {
            return Some(ListMarker {
                number: line[..digits].parse().ok(),
                len: digits + 1,
            });
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences_open_and_close_as_commonmark_has_it() {
        let (fence, info) = Fence::open("```python\n").unwrap();
        assert_eq!(info, "python");
        assert!(fence.closes("```\n") && fence.closes("  ````  "));
        // A closing fence has no info string, and is as long as the opening.
        assert!(!fence.closes("```python") && !fence.closes("``") && !fence.closes("~~~"));
        let (long, _) = Fence::open("~~~~").unwrap();
        assert!(!long.closes("~~~") && long.closes("~~~~~") && !long.closes("````"));
        // A tilde fence's info string may hold backticks; a backtick
        // fence's may not: ```f(x)``` on one line is inline code.
        assert_eq!(Fence::open("~~~ a`b").map(|(_, info)| info), Some("a`b"));
        for line in ["```f(x=1)```", "``", "~~", "`a`", "text ```", ""] {
            assert_eq!(Fence::open(line), None, "{line:?}");
        }
        // Indented by any amount.
        assert!(Fence::open("      ```").is_some());
    }

    #[test]
    fn list_markers_are_bullets_or_numbers_then_a_blank() {
        for (line, number, len) in [
            ("- item", None, 1),
            ("* item", None, 1),
            ("+ item", None, 1),
            ("-", None, 1),
            ("1. item", Some(1), 2),
            ("2) item", Some(2), 2),
            ("10.", Some(10), 3),
            ("123456789. x", Some(123_456_789), 10),
            ("1.\titem", Some(1), 2),
        ] {
            assert_eq!(
                ListMarker::of(line),
                Some(ListMarker { number, len }),
                "{line:?}"
            );
        }
        for line in [
            "-1",
            "**bold**",
            "+2",
            "1.5",
            "1)x",
            "a. b",
            "1234567890. x",
            "",
            "—",
        ] {
            assert_eq!(ListMarker::of(line), None, "{line:?}");
        }
    }
}
