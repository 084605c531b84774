//! Server-sent events: the body of a streamed answer, decoded as the WHATWG
//! HTML standard's "event stream interpretation" says, from bytes as they
//! arrive.
//!
//! The network cuts a body anywhere: inside a line, between a `\r` and its
//! `\n`, inside a multi-byte UTF-8 character. The decoder keeps the bytes of
//! the unfinished line and decodes a line only once it is whole; a line break
//! (`\n`, `\r`) is never part of a multi-byte character, so a whole line is
//! whole UTF-8.

use crate::model::ModelError;

/// One event: its type (`event:`, `message` when absent) and its data (the
/// `data:` lines joined with `\n`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Event {
    pub(crate) kind: String,
    pub(crate) data: String,
}

/// Turns chunks of bytes into [`Event`]s.
#[derive(Debug, Default)]
pub(crate) struct Decoder {
    /// The bytes of the line not yet ended.
    line: Vec<u8>,
    /// The last byte seen was a `\r`: a `\n` right after it ends no line.
    after_cr: bool,
    /// Still at the start of the stream, where a byte order mark is dropped.
    started: bool,
    kind: String,
    data: String,
    /// Whether a `data:` line was seen since the last event.
    has_data: bool,
}

impl Decoder {
    /// Reads `chunk`, appending the events it completes to `events`.
    pub(crate) fn push(&mut self, chunk: &[u8], events: &mut Vec<Event>) -> Result<(), ModelError> {
        let mut rest = chunk;
        if !self.started && !rest.is_empty() {
            self.started = true;
            rest = rest.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(rest);
        }
        while !rest.is_empty() {
            if self.after_cr && rest[0] == b'\n' {
                rest = &rest[1..];
            }
            self.after_cr = false;
            match rest.iter().position(|&b| b == b'\n' || b == b'\r') {
                Some(end) => {
                    self.line.extend_from_slice(&rest[..end]);
                    self.after_cr = rest[end] == b'\r';
                    rest = &rest[end + 1..];
                    let line = std::mem::take(&mut self.line);
                    self.read_line(&line, events)?;
                    self.line = line;
                    self.line.clear();
                }
                None => {
                    self.line.extend_from_slice(rest);
                    rest = &[];
                }
            }
        }
        Ok(())
    }

    /// The body has ended: an event whose blank line never came is still
    /// delivered (servers that close right after the last `data:` line exist).
    pub(crate) fn finish(&mut self, events: &mut Vec<Event>) -> Result<(), ModelError> {
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.read_line(&line, events)?;
        }
        self.dispatch(events);
        Ok(())
    }

    fn read_line(&mut self, line: &[u8], events: &mut Vec<Event>) -> Result<(), ModelError> {
        if line.is_empty() {
            self.dispatch(events);
            return Ok(());
        }
        let line = std::str::from_utf8(line).map_err(|error| ModelError::Malformed {
            message: format!("a server-sent event line is not UTF-8: {error}"),
            body: super::http::cut(&String::from_utf8_lossy(line)),
        })?;
        if line.starts_with(':') {
            return Ok(());
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "event" => {
                self.kind.clear();
                self.kind.push_str(value);
            }
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            // `id` and `retry` matter to a browser reconnecting; an answer
            // that broke off is not resumed.
            _ => {}
        }
        Ok(())
    }

    fn dispatch(&mut self, events: &mut Vec<Event>) {
        if self.has_data {
            let kind = match self.kind.is_empty() {
                true => "message".to_owned(),
                false => std::mem::take(&mut self.kind),
            };
            events.push(Event {
                kind,
                data: std::mem::take(&mut self.data),
            });
        }
        self.kind.clear();
        self.data.clear();
        self.has_data = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(chunks: &[&[u8]]) -> Vec<Event> {
        let mut decoder = Decoder::default();
        let mut events = Vec::new();
        for chunk in chunks {
            decoder.push(chunk, &mut events).unwrap();
        }
        decoder.finish(&mut events).unwrap();
        events
    }

    fn event(kind: &str, data: &str) -> Event {
        Event {
            kind: kind.into(),
            data: data.into(),
        }
    }

    const STREAM: &str = "\u{FEFF}: keep-alive\n\nevent: content_block_delta\r\ndata: {\"text\": \"caf\u{e9} \u{1F600}\"}\r\n\r\ndata: one\ndata:two\rdata\r\n\ndata: [DONE]\n\n";

    fn expected() -> Vec<Event> {
        vec![
            event("content_block_delta", "{\"text\": \"caf\u{e9} \u{1F600}\"}"),
            event("message", "one\ntwo\n"),
            event("message", "[DONE]"),
        ]
    }

    #[test]
    fn reads_fields_comments_and_every_line_ending() {
        assert_eq!(decode(&[STREAM.as_bytes()]), expected());
    }

    #[test]
    fn the_same_events_wherever_the_network_cuts_the_body() {
        let bytes = STREAM.as_bytes();
        for cut in 0..=bytes.len() {
            assert_eq!(
                decode(&[&bytes[..cut], &bytes[cut..]]),
                expected(),
                "cut at byte {cut}"
            );
        }
        for first in 0..bytes.len() {
            for second in first..=bytes.len() {
                let parts = [&bytes[..first], &bytes[first..second], &bytes[second..]];
                assert_eq!(decode(&parts), expected(), "cuts at {first} and {second}");
            }
        }
        let bytewise: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(decode(&bytewise), expected());
    }

    #[test]
    fn an_event_cut_off_by_the_end_of_the_body_is_still_delivered() {
        assert_eq!(
            decode(&[b"data: {\"a\": 1}"]),
            vec![event("message", "{\"a\": 1}")]
        );
        assert_eq!(decode(&[b"event: ping\n\n"]), vec![]);
    }

    #[test]
    fn a_line_that_is_not_utf8_is_malformed() {
        let mut decoder = Decoder::default();
        let error = decoder
            .push(b"data: \xFF\xFE\n\n", &mut Vec::new())
            .unwrap_err();
        assert!(matches!(error, ModelError::Malformed { .. }), "{error:?}");
    }
}
