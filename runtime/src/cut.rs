//! A model's text echoed in a message for it, cut: every error message a
//! model reads is bounded in size, whatever it sent. A piece of its text (a
//! name, a key, a token, a type annotation) is kept to [`ECHO`] bytes, a
//! line of a message (one problem, a parser's or a tool's own error) to
//! [`LINE`], each cut at a character boundary and marked with how much was
//! left out: `abc… (1048573 more bytes)`.

use std::borrow::Cow;
use std::fmt;

/// The most of one piece of a model's text a message echoes, in bytes.
pub(crate) const ECHO: usize = 100;

/// The most of one line of a message, in bytes.
pub(crate) const LINE: usize = 2_000;

/// `text` cut to at most `max` bytes and marked, or as it is when it fits.
pub(crate) fn cut(text: &str, max: usize) -> Cow<'_, str> {
    match split(text, max) {
        None => Cow::Borrowed(text),
        Some((kept, more)) => Cow::Owned(format!("{kept}… ({more} more bytes)")),
    }
}

/// `text` cut as [`cut`] cuts it, in place.
pub(crate) fn cut_owned(text: &mut String, max: usize) {
    if let Some((kept, more)) = split(text, max) {
        let kept = kept.len();
        text.truncate(kept);
        text.push_str(&format!("… ({more} more bytes)"));
    }
}

/// What is kept of `text` and how many bytes are left out, when it is
/// longer than `max`.
fn split(text: &str, max: usize) -> Option<(&str, usize)> {
    if text.len() <= max {
        return None;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Some((&text[..end], text.len() - end))
}

/// A piece of a model's text in a message: written cut to [`ECHO`] bytes,
/// with nothing allocated when it fits.
pub(crate) struct Echo<'a>(pub(crate) &'a str);

impl fmt::Display for Echo<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match split(self.0, ECHO) {
            None => f.write_str(self.0),
            Some((kept, more)) => write!(f, "{kept}… ({more} more bytes)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_past_the_limit_is_cut_at_a_character_and_marked() {
        assert_eq!(cut("short", 8), "short");
        assert_eq!(cut("0123456789", 4), "0123… (6 more bytes)");
        // `é` is two bytes: not split.
        assert_eq!(cut("aé", 2), "a… (2 more bytes)");
        let mut owned = "x".repeat(1 << 20);
        cut_owned(&mut owned, LINE);
        assert_eq!(owned.len(), LINE + "… (1046576 more bytes)".len());
        assert_eq!(Echo("name").to_string(), "name");
        assert!(Echo(&"n".repeat(1000))
            .to_string()
            .ends_with("… (900 more bytes)"));
    }
}
