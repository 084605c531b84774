//! Strings in any quotes, written with `"`: quotes, escapes, control
//! characters, strings missing a quote, concatenation with `+`; and keys,
//! quoted or not.

use super::continuation::{number_end, Expect, Reach};
use super::lex::{find, is_key_byte, is_ws, rfind, Ctx, Quote};
use super::log::Since;
use super::parse::{fail, Parsed, Parser, Step};
use super::{RepairErrorKind, RepairKind};

/// The bytes at which the fast loop of a string stops, per kind of quote.
const fn stops(quote: Quote) -> [bool; 256] {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = true;
        b += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    match quote {
        Quote::Double => {}
        Quote::Single => table[b'\'' as usize] = true,
        Quote::CurlyDouble | Quote::CurlySingle => {
            table[b'\'' as usize] = true;
            // The first byte of `“ ” ‘ ’` (U+2018..U+201D).
            table[0xE2] = true;
        }
        Quote::Backtick => {
            table[b'\'' as usize] = true;
            table[b'`' as usize] = true;
            // The first byte of `´` (U+00B4).
            table[0xC2] = true;
        }
    }
    table
}

const STOPS_DOUBLE: [bool; 256] = stops(Quote::Double);
const STOPS_SINGLE: [bool; 256] = stops(Quote::Single);
const STOPS_CURLY: [bool; 256] = stops(Quote::CurlyDouble);
const STOPS_BACKTICK: [bool; 256] = stops(Quote::Backtick);

/// How far the check that a quote opens the next token reads past it, so
/// that each check is bounded and the pass stays linear.
const WINDOW: usize = 1024;

/// How a first reading of a string ended.
enum Read {
    /// At its closing quote, or where the text stops.
    Closed,
    /// Read it again to where it ends.
    Again(End),
    /// It runs into the fence that closes the block it is in, and ends
    /// before this byte.
    Fence(usize),
}

/// Where a string read a second time ends.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum End {
    /// It lacks its closing quote, which goes before this byte.
    MissingQuote(usize),
    /// It lacks its closing quote before `end`, and is joined there with
    /// `+` to the string whose quote is at `next` (`"a +"b"`); the text is
    /// read to `region_end`.
    Joined {
        end: usize,
        next: usize,
        region_end: usize,
    },
    /// The quote at this byte closes it (the text after it was taken for
    /// more of the string at first).
    QuoteAt(usize),
    /// After a join in a second reading: quotes close the string as in a
    /// first reading, but it is not read again.
    Free,
}

/// The quotes of a string's kind that a first reading took for part of its
/// text (`"He said "hi""`), and the nesting of brackets in its text so far.
#[derive(Default)]
struct InnerQuotes {
    count: usize,
    first: usize,
    last: usize,
    /// How deeply brackets nest in the text up to `depth_at`: text that
    /// opens brackets (`"print({"a": 1})"`) is code, whose quotes are its own.
    depth: isize,
    depth_at: usize,
    /// The nesting at the first of the quotes.
    depth_at_first: isize,
    /// The first closing bracket with nothing open in the text before it.
    unmatched: Option<usize>,
    /// The kinds of the brackets open in the text, innermost in the low
    /// bit (1 for `[`), as deep as 64.
    kinds: u64,
    /// The first closing bracket of another kind than the one open
    /// (`[p"/\n}`): the text is no code there.
    mismatched: Option<usize>,
    /// Whether the text holds an escaped quote (`{\"a\": 1}`): its code,
    /// if any, escapes its quotes, so a bare quote is none of its own.
    escaped: bool,
    /// For a key: the first colon within [`WINDOW`] of the text's start,
    /// for the text that starts where it says, once found.
    colon: Option<(usize, Option<usize>)>,
    /// Where the comments (`/*`) in the text open, as far as it was read.
    comments: CommentOpens,
}

/// Where `/*` occurs in a string's text, read once as lookahead needs it.
#[derive(Default)]
struct CommentOpens {
    /// Where the text starts.
    content: usize,
    /// Every `/*` that ends before this is in `at`.
    read_to: usize,
    /// Their positions, in order.
    at: Vec<usize>,
}

impl CommentOpens {
    /// The last `/*` in `src[from..to]`, in the text that starts at
    /// `content`.
    fn last_in(&mut self, src: &[u8], content: usize, from: usize, to: usize) -> Option<usize> {
        if self.content != content {
            self.content = content;
            self.read_to = content;
            self.at.clear();
        }
        if to > self.read_to {
            let start = self.read_to.saturating_sub(1).max(content);
            for (i, pair) in src[start..to].windows(2).enumerate() {
                if pair == b"/*" && start + i + 2 > self.read_to {
                    self.at.push(start + i);
                }
            }
            self.read_to = to;
        }
        let before = self.at.partition_point(|&at| at + 2 <= to);
        self.at[..before].last().copied().filter(|&at| at >= from)
    }
}

impl InnerQuotes {
    /// Brings the nesting up to `to`. An opening bracket counts as code
    /// only where code has one: not right after a quote or a comma, nor
    /// right before a comma or a line break, where it is damage to the
    /// structure (`"8080"{"host"`, `"double{,"type"`).
    fn nest(&mut self, src: &[u8], to: usize) {
        for i in self.depth_at.min(to)..to {
            match src[i] {
                b'{' | b'[' => {
                    let before = src[..i].iter().rev().find(|&&b| b != b' ' && b != b'\t');
                    let after = src.get(i + 1);
                    let damage = matches!(before, Some(b'"' | b',' | b'\n'))
                        || matches!(after, Some(b',' | b'\n' | b'\r'));
                    if !damage {
                        self.depth += 1;
                        self.kinds = self.kinds << 1 | u64::from(src[i] == b'[');
                    }
                }
                b'}' | b']' => {
                    if (1..=64).contains(&self.depth)
                        && (self.kinds & 1 == 1) != (src[i] == b']')
                        && self.mismatched.is_none()
                    {
                        self.mismatched = Some(i);
                    }
                    self.kinds >>= 1;
                    self.depth -= 1;
                    if self.depth < 0 && self.unmatched.is_none() {
                        self.unmatched = Some(i);
                    }
                }
                b'"' if !self.escaped && i > 0 && src[i - 1] == b'\\' => {
                    let backslashes = src[..i].iter().rev().take(64).take_while(|&&b| b == b'\\');
                    self.escaped = backslashes.count() % 2 == 1;
                }
                _ => {}
            }
        }
        self.depth_at = self.depth_at.max(to);
    }

    /// The first colon within [`WINDOW`] of `content`, where a key's text
    /// starts: searched once per text.
    fn first_colon(&mut self, src: &[u8], content: usize) -> Option<usize> {
        match self.colon {
            Some((from, colon)) if from == content => colon,
            _ => {
                let window = &src[content..src.len().min(content + WINDOW)];
                let colon = window.iter().position(|&b| b == b':').map(|p| content + p);
                self.colon = Some((content, colon));
                colon
            }
        }
    }

    /// Takes the quote at `at` for part of the string's text.
    fn push(&mut self, src: &[u8], at: usize) {
        if self.count == 0 {
            self.nest(src, at);
            self.first = at;
            self.depth_at_first = self.depth;
        }
        self.count += 1;
        self.last = at;
    }
}

/// The brackets a string's text opens and does not close, read once as the
/// string is read (a closing bracket closes the last one open, whichever
/// kind it is).
#[derive(Default)]
struct OpenBrackets {
    /// Where the text starts.
    content: usize,
    /// How far it was read.
    read_to: usize,
    /// The positions of the brackets open there, innermost last.
    open: Vec<usize>,
    /// How many closing brackets the text read has with nothing open in
    /// it: they close the parser's containers (`'\n},\n{ "b"`).
    closed: usize,
}

impl OpenBrackets {
    /// The brackets open at `to` in the text that starts at `content`,
    /// counting only the text from `from`: the innermost `keep` of them,
    /// innermost last. Which of the brackets after `from` are open does
    /// not depend on the text before it, so one reading serves every
    /// window.
    fn open_since(
        &mut self,
        src: &[u8],
        content: usize,
        from: usize,
        to: usize,
        keep: usize,
    ) -> Vec<u8> {
        if self.content != content || self.read_to > to {
            self.content = content;
            self.read_to = content;
            self.open.clear();
            self.closed = 0;
        }
        for (i, &b) in src[self.read_to..to].iter().enumerate() {
            match b {
                b'{' | b'[' => self.open.push(self.read_to + i),
                b'}' | b']' if self.open.pop().is_none() => self.closed += 1,
                _ => {}
            }
        }
        self.read_to = to;
        let since = self.open.partition_point(|&at| at < from);
        let window = &self.open[since..];
        window[window.len().saturating_sub(keep)..]
            .iter()
            .map(|&at| src[at])
            .collect()
    }
}

impl Parser<'_> {
    /// An object's key: a string, or an unquoted name followed by `:` (or
    /// `=`); a name that ends in a quote before the `:` lacks its opening
    /// quote (`{a": 1}`).
    pub(super) fn key(&mut self) -> Step {
        if self.quote_at(self.pos).is_some() {
            return self.string(Ctx::Key).map(|_| ());
        }
        let start = self.pos;
        let mut i = start;
        while i < self.end && is_key_byte(self.src[i]) && !self.comment_at(i) {
            i += 1;
        }
        if i > start && i < self.end && matches!(self.src[i], b'"' | b'\'') {
            let (next, _) = self.skip_ws_from(i + 1);
            if next < self.end && self.src[next] == b':' {
                self.record(RepairKind::MissingQuote, start)?;
                self.quote_range(start, i);
                self.skip_to(i + 1);
                self.pos = i + 1;
                return Ok(());
            }
        }
        if i > start && self.src[..self.end].get(i) == Some(&b':') {
            // `{/:":"a" }` (`{":":"a" }` with the key's opening quote
            // replaced): the key may end at this colon, or run on over it
            // to a quote and a colon and value after it, lacking its
            // opening quote (`/:"`); each reading loses what the other keeps.
            let mut j = i;
            while j < self.end && (is_key_byte(self.src[j]) || self.src[j] == b':') {
                j += 1;
            }
            if self.src[..self.end].get(j) == Some(&b'"') && self.member_follows(j + 1) {
                return Err(fail(
                    RepairErrorKind::Unrepairable,
                    start,
                    "an unquoted key that may run on over its colon to a quote and a colon",
                ));
            }
        }
        let (next, _) = self.skip_ws_from(i);
        // `{a 'b'}`: a value with the colon missing; but not when that string
        // is a key itself (`+ "b": 1`), so that the word is no key.
        let value_next = next > i
            && self.quote_at(next).is_some_and(|(quote, len)| {
                !self.string_end(quote, next + len).is_some_and(|end| {
                    let (k, _) = self.skip_ws_from(end);
                    self.src.get(k) == Some(&b':')
                })
            });
        // `{a: 1}`, `{a = 1}`, `{a` cut short (but `{2` may be a value), or
        // the colon missing.
        let followed = (next >= self.end && !is_json_scalar(&self.src[start..i]))
            || matches!(self.src.get(next), Some(b':' | b'='))
            || value_next
            || (self.src.get(next) == Some(&b')') && self.jsonp);
        if i == start || !followed {
            return Err(self.unexpected("expected a key followed by `:`"));
        }
        self.record(RepairKind::UnquotedKey, start)?;
        self.pos = i;
        self.quote_range(start, i);
        Ok(())
    }

    /// Replaces `text[from..to]` with it as a JSON string.
    pub(super) fn quote_range(&mut self, from: usize, to: usize) {
        self.flush(from);
        self.out.push('"');
        let mut run = from;
        for i in from..to {
            let b = self.src[i];
            if b == b'"' || b == b'\\' || b < 0x20 {
                self.out.push_str(&self.text[run..i]);
                push_escaped(&mut self.out, b);
                run = i + 1;
            }
        }
        self.out.push_str(&self.text[run..to]);
        self.out.push('"');
        self.skip_to(to);
    }

    /// A string in any quotes, written with `"`.
    pub(super) fn string(&mut self, ctx: Ctx) -> Step<Parsed> {
        if let Some(parsed) = self.plain_string(ctx)? {
            return Ok(parsed);
        }
        self.string_read(ctx)
    }

    /// The common case, read without the machinery: a string in `"` or `'`
    /// with no escape, control character or other quote inside, whose
    /// closing quote is followed by what ends a string in `ctx` beyond
    /// doubt (`:` after a key; `}`, `]`, or a comma and a quote after a
    /// value). `None` for anything else.
    #[inline]
    fn plain_string(&mut self, ctx: Ctx) -> Step<Option<Parsed>> {
        let open = self.pos;
        let Some((quote, open_len)) = self.quote_at(open) else {
            return Ok(None);
        };
        let src = &self.src[..self.end];
        let body = open + open_len;
        let close = match quote {
            Quote::Double => find_stop_double(src, body),
            _ => {
                let stops = match quote {
                    Quote::Single => &STOPS_SINGLE,
                    Quote::Backtick => &STOPS_BACKTICK,
                    _ => &STOPS_CURLY,
                };
                body + src[body..]
                    .iter()
                    .position(|&b| stops[b as usize])
                    .unwrap_or(src.len() - body)
            }
        };
        if close >= src.len() {
            return Ok(None);
        }
        let Some(close_len) = self.closer_at(quote, close) else {
            return Ok(None);
        };
        let mut next = close + close_len;
        while next < src.len() && src[next] == b' ' {
            next += 1;
        }
        let ends = match (ctx, src.get(next)) {
            (Ctx::Key, Some(b':')) => true,
            (Ctx::ObjectValue | Ctx::ArrayItem, Some(b'}' | b']')) => true,
            (Ctx::ObjectValue | Ctx::ArrayItem, Some(b',')) => {
                let mut after = next + 1;
                while after < src.len() && is_ws(src[after]) {
                    after += 1;
                }
                match src.get(after) {
                    Some(b'"' | b'\'' | b'}' | b'[' | b'{') => true,
                    Some(b'0'..=b'9' | b']') => ctx == Ctx::ArrayItem,
                    // A typographic quote.
                    Some(0xE2) => self.quote_at(after).is_some(),
                    _ => false,
                }
            }
            _ => false,
        };
        // (A key ending in `:` or whitespace is rare: one byte decides.)
        let colon_or_space_before =
            close > body && matches!(src[close - 1], b':' | b' ' | b'\t' | b'\n' | b'\r');
        if !ends
            || (ctx == Ctx::Key
                && colon_or_space_before
                && self.key_quote_may_open(body, close, close_len))
        {
            return Ok(None);
        }
        if let Some(kind) = quote_repair(quote) {
            self.record(kind, open)?;
            self.replace_with_quote(open, body);
            self.replace_with_quote(close, close + close_len);
        }
        self.pos = close + close_len;
        Ok(Some(Parsed::Value))
    }

    /// A string, read with every rule.
    fn string_read(&mut self, ctx: Ctx) -> Step<Parsed> {
        let open_at = self.pos;
        let mark = self.output_mark();
        // The log before the string's first repair, taken only when it has
        // one, to read it again without them.
        let mut since = None;
        match self.read_string(ctx, None, &mut since)? {
            Read::Closed => Ok(Parsed::Value),
            Read::Again(end) => {
                self.reset_output(mark);
                if let Some(since) = &since {
                    self.log.reset(since);
                }
                let region_end = self.end;
                self.pos = open_at;
                if let End::MissingQuote(at) | End::Joined { end: at, .. } = end {
                    self.end = at;
                }
                let read = self.read_string(ctx, Some(end), &mut None);
                self.end = region_end;
                read.map(|_| Parsed::Value)
            }
            Read::Fence(end) => {
                // The fence closes the block, so the string and the value end
                // before it.
                self.reset_output(mark);
                if let Some(since) = &since {
                    self.log.reset(since);
                }
                // The opening quote's repair is recorded again.
                if let Some(kind) = self
                    .quote_at(open_at)
                    .and_then(|(quote, _)| quote_repair(quote))
                {
                    self.log.undo_last(kind);
                }
                self.pos = open_at;
                self.end = end;
                self.string_read(ctx)
            }
        }
    }

    /// Records a repair inside a string, first keeping the log as it was
    /// before the string's first repair.
    fn record_in_string(&mut self, since: &mut Option<Since>, kind: RepairKind, at: usize) -> Step {
        if since.is_none() {
            *since = Some(self.log.since());
        }
        self.record(kind, at)
    }

    /// Reads the string that opens here. With `again`, it is a second
    /// reading, which ends there (every quote before is part of the text).
    fn read_string(
        &mut self,
        ctx: Ctx,
        mut again: Option<End>,
        since: &mut Option<Since>,
    ) -> Step<Read> {
        let Some((mut quote, open_len)) = self.quote_at(self.pos) else {
            return Err(self.unexpected("expected a string"));
        };
        let open_at = self.pos;
        if let Some(kind) = quote_repair(quote) {
            // Recorded once: a second reading starts after it.
            if again.is_none() {
                self.record(kind, open_at)?;
            }
            self.replace(open_at, open_at + open_len, "\"");
        }
        self.pos += open_len;
        // Where the content of the string (or of its last joined part) starts.
        let mut content = self.pos;
        let mut control_recorded = false;
        let mut brackets = OpenBrackets::default();
        let mut inner = InnerQuotes {
            depth_at: content,
            ..InnerQuotes::default()
        };
        loop {
            let stops = match quote {
                Quote::Double => &STOPS_DOUBLE,
                Quote::Single => &STOPS_SINGLE,
                Quote::CurlyDouble | Quote::CurlySingle => &STOPS_CURLY,
                Quote::Backtick => &STOPS_BACKTICK,
            };
            self.pos = if quote == Quote::Double {
                find_stop_double(&self.src[..self.end], self.pos)
            } else {
                self.pos
                    + self.src[self.pos..self.end]
                        .iter()
                        .position(|&b| stops[b as usize])
                        .unwrap_or(self.end - self.pos)
            };
            if self.pos >= self.end {
                if let Some(End::Joined {
                    end,
                    next,
                    region_end,
                }) = again
                {
                    if self.pos == end {
                        // `"a +"b"`: the missing quote, the `+` and the next
                        // string's quote go, and its text follows.
                        self.record_in_string(since, RepairKind::MissingQuote, end)?;
                        self.record_in_string(since, RepairKind::StringConcatenation, end)?;
                        if let Some(comment) = find(&self.src[end..next], b"/*") {
                            self.record_in_string(since, RepairKind::Comment, end + comment)?;
                        }
                        let (next_quote, next_len) = self.quote_at(next).expect("a quote");
                        self.flush(end);
                        self.skip_to(next + next_len);
                        self.end = region_end;
                        self.pos = next + next_len;
                        quote = next_quote;
                        content = self.pos;
                        inner = InnerQuotes {
                            depth_at: content,
                            ..InnerQuotes::default()
                        };
                        again = Some(End::Free);
                        continue;
                    }
                }
                return self.string_stops(ctx, quote, (open_at, content), &inner, again, since);
            }
            let at = self.pos;
            let b = self.src[at];
            if b < 0x20 {
                // A control character (a file's line breaks and tabs):
                // escaped, and recorded once per string.
                if !control_recorded {
                    self.record_in_string(since, RepairKind::ControlCharacter, at)?;
                    control_recorded = true;
                }
                self.flush(at);
                push_escaped(&mut self.out, b);
                self.skip_to(at + 1);
                self.pos += 1;
                continue;
            }
            if b == b'\\' {
                self.escape(ctx, quote, since)?;
                continue;
            }
            if let Some(len) = self.closer_at(quote, at) {
                if again.is_none() && ctx == Ctx::Key {
                    if let Some(end) = self.key_ends_before(content, at, len, &mut inner)? {
                        return Ok(Read::Again(end));
                    }
                }
                let closes = match again {
                    None => {
                        self.closes(ctx, at + len)
                            || (ctx == Ctx::ArrayItem
                                && inner.count.is_multiple_of(2)
                                && self.item_follows(at + len))
                    }
                    Some(End::Free) => self.closes(ctx, at + len),
                    Some(end) => end == End::QuoteAt(at),
                };
                if closes && again.is_none() && inner.count > 0 {
                    if let Some(read) =
                        self.closes_after_inner_quotes(ctx, open_at, content, at, &inner)?
                    {
                        return Ok(read);
                    }
                }
                if closes {
                    match self.joined(ctx, at + len)? {
                        Some((next, next_len)) => {
                            // `"a" + "b"`: the quotes and the `+` go.
                            self.record_in_string(since, RepairKind::StringConcatenation, at)?;
                            self.flush(at);
                            self.skip_to(next + next_len);
                            if let Some((next_quote, _)) = self.quote_at(next) {
                                quote = next_quote;
                            }
                            self.pos = next + next_len;
                            content = self.pos;
                            continue;
                        }
                        None => {
                            if quote != Quote::Double {
                                self.replace(at, at + len, "\"");
                            }
                            self.pos = at + len;
                            return Ok(Read::Closed);
                        }
                    }
                }
                if again.is_none() {
                    if let Some(end) = self.quote_opens_next(ctx, content, at, &mut inner)? {
                        return Ok(Read::Again(end));
                    }
                }
                if again.is_none()
                    && inner.count == 0
                    && ctx == Ctx::ObjectValue
                    && self.src[content..at].trim_ascii() == b":"
                    && matches!(self.after_string(at), Some(b',' | b'}'))
                {
                    // `{"":":"a" }` (`{":":"a" }` with a quote doubled): a
                    // value whose text is a colon before a quote that opens
                    // a closed value; its opening quote may close a key
                    // instead (`{"": ":\"a"}` or `{":": "a"}`).
                    return Err(fail(
                        RepairErrorKind::Unrepairable,
                        open_at,
                        "a value's text is a colon and a value: its quote may close a key",
                    ));
                }
                inner.push(self.src, at);
                if again.is_none() && ctx != Ctx::Key {
                    let mut next = at + len;
                    while next < self.end && is_ws(self.src[next]) {
                        next += 1;
                    }
                    if next < self.end && self.src[next] == b':' {
                        inner.nest(self.src, at);
                        // (The first quote taken for text, followed by `:`,
                        // would close a key, whatever brackets the text
                        // opened: `"description":\n  "decocripti[on": "x"`,
                        // a value lost to a comment.)
                        if inner.depth <= 0 || ctx == Ctx::Top || inner.count == 1 {
                            // `"x "key": 1`: a key read into a string.
                            return Err(fail(
                                RepairErrorKind::Unrepairable,
                                at,
                                "a quote inside a string is followed by `:`, as a key is",
                            ));
                        }
                    }
                }
            }
            if b == b'"' && quote != Quote::Double && again.is_none() {
                if ctx == Ctx::Key && self.src.get(self.skip_ws_from(at + 1).0) == Some(&b':') {
                    // `{`]a":"`"}` (`{"]a":"`"}` with the key's opening
                    // quote replaced): a key in other quotes, and a `"`
                    // followed by `:` inside it, which may close it.
                    return Err(fail(
                        RepairErrorKind::Unrepairable,
                        at,
                        "a `\"` followed by `:` inside a key in other quotes: it may close the key",
                    ));
                }
                if ctx == Ctx::Top && self.string_ends_text(at) {
                    // `”  " a"`: the whole value, and a double-quoted string
                    // that ends the text: a stray quote before it.
                    return Err(fail(
                        RepairErrorKind::Unrepairable,
                        open_at,
                        "a stray quote before a string that ends the text",
                    ));
                }
                let reach = Reach {
                    tokens: 6,
                    until: at + WINDOW,
                    min_tokens: 3,
                };
                if self.string_then_punctuation(at, reach) {
                    // `'"b": 1`: a stray quote opened a string holding JSON.
                    // Brackets the stray string took in open containers too:
                    // those its text opened in the window before the quote and
                    // left open, as many as the check can close.
                    let opened = brackets.open_since(
                        self.src,
                        content,
                        content.max(at.saturating_sub(WINDOW)),
                        at,
                        reach.tokens + 1,
                    );
                    let expect_key =
                        opened.last() == Some(&b'{') || (opened.is_empty() && ctx == Ctx::Key);
                    let expect = if expect_key {
                        Expect::Key
                    } else {
                        Expect::Value
                    };
                    // (Of the parser's containers, those the text closed
                    // are closed.)
                    let outer = self.stack.len().saturating_sub(brackets.closed);
                    if self.continues_within(at, expect, reach, &opened, outer)
                        || (opened.is_empty() && self.continues(at, Expect::Key, reach))
                    {
                        return Err(fail(
                            RepairErrorKind::Unrepairable,
                            open_at,
                            "a stray quote opens a string that holds JSON",
                        ));
                    }
                }
            }
            // A quote, or a character, inside the string.
            match b {
                b'"' => {
                    if quote == Quote::Double {
                        self.record_in_string(since, RepairKind::UnescapedQuote, at)?;
                    }
                    self.replace(at, at + 1, "\\\"");
                    self.pos += 1;
                }
                b'\'' | b'`' => self.pos += 1,
                // `“ ” ‘ ’` and other characters of three bytes from 0xE2.
                0xE2 => self.pos += 3,
                // `´` and other characters of two bytes from 0xC2.
                0xC2 => self.pos += 2,
                // No other byte stops the loop (control characters are
                // read above).
                _ => self.pos += 1,
            }
        }
    }

    /// In a key's first reading, the quote at `at` (`len` bytes): if the
    /// key ends before it instead, where; an error if which quote ends it
    /// is a guess.
    #[inline(never)]
    fn key_ends_before(
        &self,
        content: usize,
        at: usize,
        len: usize,
        inner: &mut InnerQuotes,
    ) -> Step<Option<End>> {
        if self.src.get(self.skip_ws_from(at + len).0) != Some(&b':')
            && inner.first_colon(self.src, content).is_some_and(|c| c < at)
        {
            // `{"a: 1, "b": 2}`: the key may end at its colon.
            if let Some(end) = self.quote_opens_next(Ctx::Key, content, at, inner)? {
                return Ok(Some(end));
            }
        }
        if self.key_quote_may_open(content, at, len) {
            return Err(fail(
                RepairErrorKind::Unrepairable,
                at,
                "a key ending in `:`, whose closing quote may open the value",
            ));
        }
        Ok(None)
    }

    /// A first reading's closing quote at `at`, after quotes taken for the
    /// string's text: whether another quote closed it instead (read it
    /// again), or which one did is a guess (an error).
    #[inline(never)]
    fn closes_after_inner_quotes(
        &self,
        ctx: Ctx,
        open_at: usize,
        content: usize,
        at: usize,
        inner: &InnerQuotes,
    ) -> Step<Option<Read>> {
        let odd = inner.count % 2 == 1;
        if ctx == Ctx::Top
            && odd
            && self
                .src
                .get(content..inner.first)
                .is_some_and(|text| text.iter().all(|&b| is_ws(b)))
        {
            // (Not a quote in a part joined before with `+`.)
            // `" "0"`: only whitespace before the first quote taken for
            // text: a stray quote before a string, or one string holding a
            // quote; which is a guess.
            return Err(fail(
                RepairErrorKind::Unrepairable,
                open_at,
                "a stray quote before a string",
            ));
        }
        if ctx == Ctx::Key {
            // `{"a"b": 1}`: which quote ends the key is a guess.
            return Err(fail(
                RepairErrorKind::Unrepairable,
                inner.first,
                "a quote inside a key",
            ));
        }
        let between = &self.src[inner.last + 1..at];
        if odd && !between.is_empty() && between.iter().all(|&b| is_ws(b)) {
            if between.contains(&b'\n') {
                // `""\n  "`: the quote taken for text closed the string, and
                // the one on the next line is stray.
                return Ok(Some(Read::Again(End::QuoteAt(inner.last))));
            }
            if matches!(ctx, Ctx::ObjectValue | Ctx::ArrayItem) {
                // `"[LINK](" "}`: the same on one line; the quote taken for
                // text may close the string, the next one stray, or both
                // be text: a guess.
                return Err(fail(
                    RepairErrorKind::Unrepairable,
                    inner.last,
                    "two quotes with only spaces between inside a string: either may close it",
                ));
            }
        }
        if matches!(ctx, Ctx::ObjectValue | Ctx::ArrayItem)
            && odd
            && self.src.get(inner.first + 1) == Some(&b',')
        {
            // `["a.",b c"]`: a quote and a comma closed the string; what
            // follows lacks its opening quote.
            return Ok(Some(Read::Again(End::QuoteAt(inner.first))));
        }
        Ok(None)
    }

    /// The text (or the region it is read in) stops inside a string: the
    /// end a second reading set, a fence that closes the block, a closing
    /// quote the structure shows is missing, or truncation.
    fn string_stops(
        &mut self,
        ctx: Ctx,
        quote: Quote,
        (open_at, content): (usize, usize),
        inner: &InnerQuotes,
        again: Option<End>,
        since: &mut Option<Since>,
    ) -> Step<Read> {
        if again == Some(End::MissingQuote(self.pos)) {
            self.record_in_string(since, RepairKind::MissingQuote, self.pos)?;
            self.replace(self.pos, self.pos, "\"");
            return Ok(Read::Closed);
        }
        if again.is_none() && !self.in_fence && self.end == self.src.len() {
            // `{"a": "x}```: a fence at the very end closes the value.
            let text = self.src[content..self.end].trim_ascii_end();
            if text.ends_with(b"```") {
                return Ok(Read::Fence(content + text.len() - 3));
            }
        }
        if again.is_none() && self.in_fence && self.end == self.src.len() {
            if let Some(fence) = rfind(&self.src[content..self.end], b"```") {
                // The line break before the fence belongs to it.
                let mut end = content + fence;
                while end > content && matches!(self.src[end - 1], b' ' | b'\t') {
                    end -= 1;
                }
                if end > content && self.src[end - 1] == b'\n' {
                    end -= 1;
                }
                if end > content && self.src[end - 1] == b'\r' {
                    end -= 1;
                }
                return Ok(Read::Fence(end));
            }
        }
        let text = &self.src[content..self.end];
        // The whole value, a quote and then only a number or literal to the
        // end (`" 66`, `"2e3`): a stray quote, or a string cut short of its
        // text; which one is a guess, in any quotes.
        let scalar_after = ctx == Ctx::Top && is_json_scalar(text.trim_ascii());
        if again.is_none() && scalar_after {
            return Err(fail(
                RepairErrorKind::Unrepairable,
                open_at,
                "a quote that never closes, before a number or literal",
            ));
        }
        let holds_json =
            text.contains(&b'"') || matches!(text.trim_ascii_start().first(), Some(b'{' | b'['));
        if again.is_none() && quote != Quote::Double && holds_json {
            // `'  "a": 1}`: a stray quote whose string runs over JSON to the end.
            return Err(fail(
                RepairErrorKind::Unrepairable,
                open_at,
                "a quote that never closes, before JSON text",
            ));
        }
        if again.is_none() && ctx == Ctx::Key && inner.count > 0 {
            // `{"a"\nprose: 1}`: a key that took a quote for text to the end
            // closed at that quote.
            return Ok(Read::Again(End::QuoteAt(inner.first)));
        }
        if again.is_none()
            && ctx != Ctx::Key
            && inner.count % 2 == 1
            && self.src[inner.last..self.end]
                .iter()
                .any(|&b| matches!(b, b'}' | b']'))
        {
            // `["a"\n  junk ]`: the last quote taken for text closed the
            // string, and brackets after it close the value.
            return Ok(Read::Again(End::QuoteAt(inner.last)));
        }
        if again.is_none()
            && matches!(ctx, Ctx::ObjectValue | Ctx::ArrayItem)
            && inner.count % 2 == 1
            && self.src[inner.last + 1..self.end]
                .first()
                .is_none_or(|&b| is_ws(b))
        {
            // `{"a": "x"\n{`, `{"a": "[LINK](" x`: a quote taken for text,
            // then whitespace, as after a closing quote, and the text stops.
            // The quote may close the string (its bracket lost or
            // replaced), or be text in a string cut short.
            return Err(fail(
                RepairErrorKind::Unrepairable,
                inner.last,
                "a quote before whitespace inside a string that runs to the end: it may close the string",
            ));
        }
        if again.is_none() {
            if let Some(end) = self.string_ends_before(ctx, content)? {
                return Ok(Read::Again(End::MissingQuote(end)));
            }
        }
        if again.is_none() && ctx == Ctx::Key {
            if let Some(colon) = self.src[content..self.end].iter().position(|&b| b == b':') {
                // `{"id::2}`: a key that runs to the end over a colon (or a
                // few) and a value reads as strict JSON from there is not a
                // key cut short.
                let mut run_end = content + colon;
                while self.src.get(run_end + 1) == Some(&b':') {
                    run_end += 1;
                }
                // Only a value that closes the containers counts: one the
                // text cuts short (`{"a::[t`) may be the key's own text.
                if self.continues(run_end, Expect::Colon, Reach::CLOSED)
                    || self.last_colon_then_value(run_end)
                {
                    return Err(fail(
                        RepairErrorKind::Unrepairable,
                        content - 1,
                        "a key that never closes, over a colon and a value",
                    ));
                }
            }
        }
        if again.is_none() && ctx == Ctx::Top && inner.count % 2 == 1 {
            // `"{a" here is the text`: the whole value, running to the end
            // over a quote taken for text that no other quote pairs. That
            // quote may close the string (and prose follow), or be text in a
            // string cut short: which one is a guess.
            return Err(fail(
                RepairErrorKind::Unrepairable,
                inner.last,
                "a quote inside a string that runs to the end: it may close the string",
            ));
        }
        if ctx == Ctx::Top && self.src[content..self.pos].iter().all(|&b| is_ws(b)) {
            // `"` alone: a quote, and no value.
            return Err(fail(
                RepairErrorKind::NoJson,
                content - 1,
                "a quote and no value",
            ));
        }
        if again.is_none() && self.json_after_quote(ctx, content) {
            // `"[9, 1]`, `“1, 2]`: a stray quote, or one where an array's
            // `[` belongs; read as text, the numbers would be lost.
            return Err(fail(
                RepairErrorKind::Unrepairable,
                open_at,
                "a quote that never closes, before JSON that closes the value",
            ));
        }
        if again.is_none() && ctx != Ctx::Key && text.trim_ascii_start().first() == Some(&b':') {
            // `["2.":1}`: a quote that never closes and a colon after it,
            // as after a key's closing quote (the key lost its opening one).
            return Err(fail(
                RepairErrorKind::Unrepairable,
                open_at,
                "a quote that never closes, followed by `:` as a key's closing quote is",
            ));
        }
        // A backslash or `\u12` where the text stops is dropped with the
        // truncation (see `escape`).
        self.truncated()?;
        self.replace(self.pos, self.pos, "\"");
        Ok(Read::Closed)
    }

    /// In a key that runs to the end of the text, with a colon at `first`:
    /// whether a later colon, the last, is followed by a value that reads as
    /// strict JSON and closes the containers (`{"a: \"b:1}`), so that the
    /// key may end there as well.
    fn last_colon_then_value(&self, first: usize) -> bool {
        let mut after_run = first;
        while self.src.get(after_run + 1) == Some(&b':') {
            after_run += 1;
        }
        let Some(last) = self.src[after_run + 1..self.end]
            .iter()
            .rposition(|&b| b == b':')
        else {
            return false;
        };
        self.continues(after_run + 1 + last, Expect::Colon, Reach::CLOSED)
    }

    /// Whether the quote at `q`, in a string whose text starts at
    /// `content`, opens its line at the indentation of the line the string
    /// opens on, which starts with a quote (a member's key, or an item):
    /// the structure's next member (`"url": "x{/a,\n  "b": 1`), not a
    /// line of code, which code indents on its own.
    fn at_member_indentation(&self, content: usize, q: usize) -> bool {
        let indent = |line: usize| {
            self.src[line..]
                .iter()
                .take_while(|&&b| b == b' ' || b == b'\t')
                .count()
        };
        let mut line = q;
        while line > content && matches!(self.src[line - 1], b' ' | b'\t') {
            line -= 1;
        }
        if line == content || self.src[line - 1] != b'\n' {
            return false;
        }
        let open = content - 1;
        let Some(back) = self.src[open.saturating_sub(WINDOW)..open]
            .iter()
            .rposition(|&b| b == b'\n')
        else {
            return false;
        };
        let open_line = open.saturating_sub(WINDOW) + back + 1;
        let width = indent(open_line);
        width == q - line && self.src[open_line + width] == b'"'
    }

    /// Whether the text of a string that runs to the end, from `content`,
    /// reads as strict JSON that closes every container open around it: a
    /// value (`"[9, 1]`), whose quote is stray, or the inside of an array
    /// or object, whose quote stands where its bracket belongs (`“1, 2]`,
    /// `{"a": '1, 2]}`).
    fn json_after_quote(&self, ctx: Ctx, content: usize) -> bool {
        // Only a closed value counts: not the end of the text.
        let closed = Reach::CLOSED;
        self.continues_in(content, Expect::ValueOrClose, closed, b"[")
            || self.continues_in(content, Expect::KeyOrClose, closed, b"{")
            // (Not where a key is due: `{"0}}` is a key cut short.)
            || (ctx != Ctx::Key && self.continues(content, Expect::Value, closed))
    }

    /// For the quote at `q` (`len` bytes) that seems to close a key whose
    /// text starts at `content`: whether the key's text ends in a colon, no
    /// colon and value that reads well follow the quote (`{"a:": b"}`,
    /// `{"port:: "80"}`), and the quote opens a string followed by `,` or
    /// `}`, as a value is. The key may then lack its closing quote and end
    /// at that colon, and the quote open its value; which reading is meant
    /// is a guess, each losing what the other keeps.
    fn key_quote_may_open(&self, content: usize, q: usize, len: usize) -> bool {
        let mut i = q;
        while i > content && is_ws(self.src[i - 1]) {
            i -= 1;
        }
        if i == content || self.src[i - 1] != b':' {
            return false;
        }
        let Some((quote, _)) = self.quote_at(q) else {
            return false;
        };
        let as_value = self.string_end(quote, q + len).is_some_and(|end| {
            let (next, _) = self.skip_ws_from(end);
            next >= self.end || matches!(self.src[next], b',' | b'}')
        });
        as_value && !self.member_follows(q + len)
    }

    /// Whether a colon (or `=`) and a value follow from `i`, the value not
    /// bare text that a quote ends (`: b"`, lacking its opening one; `: b
    /// "}`), nor a string that runs to the end of the text (`: "}`, whose quote
    /// may be stray). An array or object is a value, whatever quote it
    /// holds (`: {"`), when it opens as strict JSON (not `: [b "`); a
    /// comma or closing bracket is no value (`: ,`).
    fn member_follows(&self, i: usize) -> bool {
        let colon = self.skip_blank_and_comments(i);
        if !matches!(self.src.get(colon), Some(b':' | b'=')) || colon >= self.end {
            return false;
        }
        let value = self.skip_blank_and_comments(colon + 1);
        if value >= self.end {
            return true;
        }
        if let Some((quote, len)) = self.quote_at(value) {
            return self.string_end(quote, value + len).is_some();
        }
        // No value: `{"a :":,"}` is `{"a":":,"}` with the key's closing
        // quote replaced.
        if matches!(self.src[value], b',' | b'}' | b']') {
            return false;
        }
        if matches!(self.src[value], b'{' | b'[') {
            // An array or object is a value when it opens as JSON: its
            // first item (an object's first key) a quoted string, a
            // container, or a strict number or literal and then a comma or
            // its close. Else the bracket may be a string's text:
            // `{"ea-:":[aN "}`, `{"ea-:":[% a"}` and `{"ea-:":[1 a"}` are
            // `{"ea":":[aN "}`, ... with the key's closing quote replaced.
            let until = self.end.min(value + WINDOW);
            let first = self.skip_blank_and_comments(value + 1);
            if first >= until
                || self.quote_at(first).is_some()
                || matches!(self.src[first], b'{' | b'[' | b'}' | b']')
            {
                return true;
            }
            return match self.strict_scalar(first, until) {
                Ok(end) => {
                    let (next, _) = self.skip_ws_from(end);
                    next >= until || matches!(self.src[next], b',' | b':' | b'}' | b']')
                }
                // Cut by the window or the text's end: as far as it goes,
                // it is strict.
                Err(super::continuation::Stop::Cut) => true,
                Err(_) => false,
            };
        }
        let bare = value;
        // Bare text to the end of the member: a quote that ends it is no
        // member's end (`{"a-:":NkN "}`, `{"a-:":Nk N"}`: `{"a":":Nk N"}`
        // with the key's closing quote replaced).
        // (Within the window, so that the look is bounded.)
        let window = &self.src[bare..self.end.min(bare + WINDOW)];
        window
            .iter()
            .find(|&&b| matches!(b, b',' | b'}' | b']' | b'"' | b'\n' | b'\r'))
            != Some(&b'"')
    }

    /// `"a" + "b"`: if a `+` and another string follow the closing quote
    /// that ends before `after`, where that string's quote is and its length.
    fn joined(&self, ctx: Ctx, after: usize) -> Step<Option<(usize, usize)>> {
        if ctx == Ctx::Key {
            return Ok(None);
        }
        let (plus, _) = self.skip_ws_from(after);
        if plus >= self.end || self.src[plus] != b'+' {
            return Ok(None);
        }
        let (next, _) = self.skip_ws_from(plus + 1);
        let Some((_, len)) = self.quote_at(next) else {
            return Ok(None);
        };
        if self.after_string(next) == Some(b':') {
            // `"x" +\n  "b": 1`: a key after the `+`, which a join would
            // take into the string (a comma replaced by the `+`?).
            return Err(fail(
                RepairErrorKind::Unrepairable,
                plus,
                "a `+` before a quoted key: not strings to join",
            ));
        }
        Ok(Some((next, len)))
    }

    /// A quote at `q` that does not close the string in `ctx`: if it opens
    /// the next token instead, where the string ends. It does when what
    /// follows it reads as strict JSON in that place (a key and its value in
    /// an object, an item in an array), and the string's text so far is not
    /// code with brackets of its own. The string then lacks its closing
    /// quote (`{"a": "x, "b": 1}`), or, when an odd number of quotes were
    /// taken for its text, the last of them closes it and the text after
    /// it was something else (`{"a": "b" (note), "c": 1}`). In a key, the
    /// key ends at its first colon when the structure goes on from there
    /// (`{"a: 1, "b": 2}`).
    fn quote_opens_next(
        &self,
        ctx: Ctx,
        content: usize,
        q: usize,
        inner: &mut InnerQuotes,
    ) -> Step<Option<End>> {
        if matches!(ctx, Ctx::ObjectValue | Ctx::ArrayItem)
            && q > content
            && !is_separator(self.src[q - 1])
            && !matches!(self.src[q - 1], b'+' | b'/')
            && !self.separated(content, q)
        {
            // The common case, decided at once: a quote right after a word
            // (`print("x`, `done"`) with no space, comment, `,` or `+`
            // before it (so no join, and no stray quote before) is text.
            return Ok(None);
        }
        // Where the text before the quote ends, past spaces and comments,
        // and the `,` or `+` there.
        let (end, separator) = if ctx == Ctx::Key {
            (q, None)
        } else {
            self.token_before(content, q, &mut inner.comments)
        };
        if ctx != Ctx::Key {
            let joined = separator == Some(b'+') && {
                // The `+` right after the text, not after a comma
                // (`"a",\n+ "b"`), and a string after it that closes.
                let plus = self.src[end..q]
                    .iter()
                    .position(|&b| b == b'+')
                    .map_or(q, |p| end + p);
                !self.src[end..plus].contains(&b',')
                    && (end == content || self.src[end - 1] != b',')
                    && self.quote_at(q).is_some_and(|(quote, len)| {
                        self.string_end(quote, q + len)
                            .is_some_and(|end| self.closes(ctx, end))
                    })
            };
            if joined {
                return Ok(Some(End::Joined {
                    end,
                    next: q,
                    region_end: self.end,
                }));
            }
        }
        Ok(match ctx {
            Ctx::ObjectValue | Ctx::ArrayItem => {
                let (expect, min_tokens) = if ctx == Ctx::ObjectValue {
                    (Expect::Key, 3)
                } else {
                    (Expect::Value, 2)
                };
                let reach = Reach {
                    tokens: 6,
                    until: q + WINDOW,
                    min_tokens,
                };
                if inner.count == 0 && self.stray_quote_before(content, q, reach) {
                    // `"a": " "b", ...`: the quote before opens the value, and
                    // the one that opened this string is stray.
                    return Err(fail(
                        RepairErrorKind::Unrepairable,
                        content - 1,
                        "a stray quote before a value",
                    ));
                }
                if end == q && !self.separated(content, q) {
                    return Ok(None);
                }
                // A quote right after a quote and a word closes a quoted
                // word (`"a "b" c"`): no space or comma since that quote
                // (which, with a separator just found, is only a few bytes
                // back).
                if inner.count > 0
                    && inner.last + 4 >= q
                    && !self.src[inner.last + 1..q]
                        .iter()
                        .any(|&b| is_ws(b) || b == b',')
                {
                    return Ok(None);
                }
                // What follows reads as JSON there.
                if !self.string_then_punctuation(q, reach) || !self.continues(q, expect, reach) {
                    return Ok(None);
                }
                // A quote right before a comma closes what is before it
                // (`"a ", (b": 1`): no token's text starts with a comma.
                let opened = q + self.quote_at(q).map_or(1, |(_, len)| len);
                if self.src.get(self.skip_ws_from(opened).0) == Some(&b',') {
                    return Ok(None);
                }
                // Text that opens brackets of its own is code.
                inner.depth_at = inner.depth_at.max(content);
                inner.nest(self.src, q);
                // (Unless a bracket the code did not open closes after the
                // last quote taken for text: that quote closed the string;
                // or the text escapes its quotes, so this one is not its;
                // or this quote opens a line as the string's member does.)
                let closed_after =
                    inner.count % 2 == 1 && inner.mismatched.is_some_and(|at| at > inner.last);
                if inner.depth > 0
                    && !closed_after
                    && !inner.escaped
                    && !self.at_member_indentation(content, q)
                {
                    return Ok(None);
                }
                if inner.count > 0 && inner.depth < inner.depth_at_first {
                    // Brackets closed after the first quote taken for text:
                    // that quote closed the string.
                    return Ok(Some(End::QuoteAt(inner.first)));
                }
                if inner.count % 2 == 1 {
                    return Ok(Some(End::QuoteAt(inner.last)));
                }
                // The text ends before the quote, and before a comma there,
                // or before a bracket it would close that it did not open.
                let mut end = end;
                // (Not one in a part joined before with `+`.)
                if let Some(closer) = inner.unmatched.filter(|&closer| closer >= content) {
                    end = end.min(self.content_end(content, closer));
                }
                self.not_a_stray_quote(content, end)?;
                self.not_before_an_earlier_comma(content, end, q)?;
                Some(End::MissingQuote(end))
            }
            Ctx::Key => {
                if let Some(colon) = inner.first_colon(self.src, content).filter(|&c| c < q) {
                    let reach = Reach {
                        tokens: 8,
                        until: q + WINDOW,
                        min_tokens: 4,
                    };
                    if self.continues(colon, Expect::Colon, reach) {
                        return Ok(Some(End::MissingQuote(self.content_end(content, colon))));
                    }
                }
                let reach = Reach {
                    tokens: 6,
                    until: q + WINDOW,
                    min_tokens: 3,
                };
                if self.continues(q, Expect::Key, reach) {
                    // `{"  "a": 1}`: the quote before opens the key, and the
                    // one that opened this string is stray.
                    return Err(fail(
                        RepairErrorKind::Unrepairable,
                        content - 1,
                        "a stray quote before a key",
                    ));
                }
                None
            }
            Ctx::Top => None,
        })
    }

    /// A string that runs to where the text stops: if it lacks its closing
    /// quote rather than being cut short, where it ends. That is before its
    /// first comma (in a key, colon) when everything after reads as strict
    /// JSON (`["a, 1, 2]`), or before the closing brackets the text ends
    /// with (`{"a": "xyz}`).
    fn string_ends_before(&self, ctx: Ctx, content: usize) -> Step<Option<usize>> {
        let all = Reach {
            tokens: usize::MAX,
            until: usize::MAX,
            min_tokens: 0,
        };
        match ctx {
            Ctx::ObjectValue | Ctx::ArrayItem => {
                let text = &self.src[content..self.end];
                if let Some(comma) = text.iter().position(|&b| b == b',') {
                    let comma = content + comma;
                    // Nothing after the comma (`{"a": "0,`): the text was
                    // cut short in the string, comma and all.
                    let more = self.src[comma + 1..self.end].iter().any(|&b| !is_ws(b));
                    if more && self.continues(comma, Expect::AfterValue, all) {
                        let end = self.content_end(content, comma);
                        self.not_a_stray_quote(content, end)?;
                        return Ok(Some(end));
                    }
                }
                // Closing brackets at the end, the first closing the
                // innermost container open, the next the one around it.
                let mut i = self.end;
                while i > content
                    && (is_ws(self.src[i - 1]) || matches!(self.src[i - 1], b'}' | b']'))
                {
                    i -= 1;
                }
                let mut closed = 0;
                for &b in &self.src[i..self.end] {
                    if is_ws(b) {
                        continue;
                    }
                    let open = self
                        .stack
                        .len()
                        .checked_sub(closed + 1)
                        .map(|d| self.stack.at(d));
                    let matches = matches!((b, open), (b'}', Some(b'{')) | (b']', Some(b'[')));
                    if !matches {
                        closed = 0;
                        break;
                    }
                    closed += 1;
                }
                let end = self.content_end(content, i);
                if closed > 0 {
                    self.not_a_stray_quote(content, end)?;
                }
                Ok((closed > 0).then_some(end))
            }
            Ctx::Key => {
                let Some(colon) = self.src[content..self.end].iter().position(|&b| b == b':')
                else {
                    return Ok(None);
                };
                let colon = content + colon;
                if self.continues(colon, Expect::Colon, all) {
                    return Ok(Some(self.content_end(content, colon)));
                }
                if self.last_colon_then_value(colon) {
                    // `{"a: b:1}`: the key may end at either colon.
                    return Ok(None);
                }
                // `{"key:value}`: a colon, text, and the closing bracket.
                let mut i = self.end;
                while i > colon && is_ws(self.src[i - 1]) {
                    i -= 1;
                }
                let closes = i > colon + 1
                    && self.stack.last().is_some_and(|open| {
                        (open == b'{' && self.src[i - 1] == b'}')
                            || (open == b'[' && self.src[i - 1] == b']')
                    })
                    && !self.src[colon..i].contains(&b'"')
                    // One flat value before that bracket: `:*}}a}` is a key
                    // cut short whose text holds brackets, not a value.
                    && !self.src[colon + 1..i - 1]
                        .iter()
                        .any(|b| matches!(b, b'{' | b'}' | b'[' | b']'));
                Ok(closes.then(|| self.content_end(content, colon)))
            }
            Ctx::Top => Ok(None),
        }
    }

    /// Whether a token may start at the quote at `q`, in a string whose
    /// text starts at `content`: after a separator, perhaps with a
    /// character or two of junk between (`"a",c"b"`); a quote after a
    /// longer word (`print("x`) is text.
    #[inline]
    fn separated(&self, content: usize, q: usize) -> bool {
        // Within three bytes of the text's start, or a separator in the
        // four bytes before.
        q - content <= 3 || self.src[q - 4..q].iter().any(|&b| is_separator(b))
    }

    /// Whether the escaped quote that ends before `after` was meant to close
    /// the string: after a value, a comma and a key follow (`"x\", "b": 1`),
    /// quoted without escapes, so not JSON inside the string; after a key,
    /// a colon and a value that reads as strict JSON (`{"a\": 1}`).
    fn stray_backslash(&self, ctx: Ctx, after: usize) -> bool {
        let blank = |mut i: usize| {
            while i < self.end && is_ws(self.src[i]) {
                i += 1;
            }
            i
        };
        let next = blank(after);
        match (ctx, self.src[..self.end].get(next)) {
            (Ctx::ObjectValue, Some(b',')) => {
                let key = blank(next + 1);
                key < self.end && self.src[key] == b'"' && self.after_string(key) == Some(b':')
            }
            (Ctx::Key, Some(b':')) => {
                // `"a\":": {`: a quote and a colon after this one, as the
                // escape reads it: the key goes on to that quote, unless,
                // read as closed here, the rest closes the value as strict
                // JSON (`{"\":": "}`, which was `{"a":": "}`): two readings.
                let quote = blank(next + 1);
                if self.src[..self.end].get(quote) == Some(&b'"')
                    && self.src[..self.end].get(blank(quote + 1)) == Some(&b':')
                {
                    let closes = Reach {
                        tokens: usize::MAX,
                        until: next + WINDOW,
                        min_tokens: usize::MAX,
                    };
                    return self.continues(next, Expect::Colon, closes);
                }
                self.key_may_end_before(next)
            }
            _ => false,
        }
    }

    /// Whether a key may end right before the colon at `colon`: from it,
    /// the text reads as strict JSON for a few tokens (a colon and a
    /// value). A backslash there, before an escaped quote
    /// ([`stray_backslash`](Self::stray_backslash)) or before the colon
    /// itself (`{"a\: 1}`; `{"a\:": "}`, which was `{"a":": "}`), may then
    /// stand for the key's closing quote; read as a backslash meant
    /// literally, the key would take in the colon and what follows it.
    fn key_may_end_before(&self, colon: usize) -> bool {
        let reach = Reach {
            tokens: 6,
            until: colon + WINDOW,
            min_tokens: 2,
        };
        self.continues(colon, Expect::Colon, reach)
    }

    /// Whether the quote that opened a string whose text starts at
    /// `content` is stray, the quote at `q` opening the value instead: the
    /// text between is blank and a string follows that a separator ends
    /// (`" "b",`), or it is blank and brackets and a value follows in them
    /// (`"[ "b"]`).
    fn stray_quote_before(&self, content: usize, q: usize, reach: Reach) -> bool {
        let between = &self.src[content..q];
        if between.iter().all(|&b| is_ws(b)) {
            return matches!(self.after_string(q), Some(b',' | b']' | b'}' | b':'));
        }
        if !between.iter().all(|&b| is_ws(b) || b == b'{' || b == b'[') {
            return false;
        }
        let opened: Vec<u8> = between
            .iter()
            .copied()
            .filter(|&b| b == b'{' || b == b'[')
            .collect();
        let expect = match opened.last() {
            Some(b'{') => Expect::Key,
            _ => Expect::Value,
        };
        self.continues_in(q, expect, reach, &opened)
    }

    /// In an array, whether another item follows `i` after a space (a comma
    /// missing): a value, or a word that ends the item (`"a" b]`).
    fn item_follows(&self, i: usize) -> bool {
        if i >= self.end || !is_ws(self.src[i]) {
            return false;
        }
        let mut j = i;
        while j < self.end && is_ws(self.src[j]) {
            j += 1;
        }
        if j >= self.end {
            return false;
        }
        let b = self.src[j];
        if matches!(b, b'{' | b'[' | b'0'..=b'9')
            || (b == b'-' && self.src.get(j + 1).is_some_and(u8::is_ascii_digit))
            || self.quote_at(j).is_some()
            || self.literal_len(j) > 0
        {
            return true;
        }
        // A word, then the end of the item.
        let mut k = j;
        while k < self.end
            && k < j + WINDOW
            && !is_ws(self.src[k])
            && !matches!(self.src[k], b'"' | b',' | b'[' | b']' | b'{' | b'}' | b':')
        {
            k += 1;
        }
        if self.src.get(k) == Some(&b'"') {
            k += 1;
        }
        while k < self.end && is_ws(self.src[k]) {
            k += 1;
        }
        k > j && matches!(self.src.get(k), Some(b',' | b']'))
    }

    /// A string that lacks its closing quote and would end at `end`: an error
    /// if its text is a number or literal (`" null,`), whose quote is stray.
    fn not_a_stray_quote(&self, content: usize, end: usize) -> Step {
        let text = &self.src[content..end];
        let trimmed = text.trim_ascii();
        let literal = [&b"true"[..], b"false", b"null"].contains(&trimmed);
        let number = !trimmed.is_empty()
            && (trimmed[0].is_ascii_digit() || trimmed[0] == b'-')
            && serde_json::from_slice::<serde::de::IgnoredAny>(trimmed).is_ok();
        if literal || number {
            return Err(fail(
                RepairErrorKind::Unrepairable,
                content - 1,
                "a stray quote before a number or literal",
            ));
        }
        // `{""=": 1}`: a colon and a value, after a quote doubled.
        if let Some(value) = trimmed.strip_prefix(b":") {
            if serde_json::from_slice::<serde::de::IgnoredAny>(value).is_ok() {
                return Err(fail(
                    RepairErrorKind::Unrepairable,
                    content - 1,
                    "a stray quote before a colon and a value",
                ));
            }
        }
        Ok(())
    }

    /// A string that lacks its closing quote and would end at `end`, the
    /// next token's quote at `q`: an error if it may end before its first
    /// or last comma as well, the text from there to `q` reading as strict
    /// JSON (`["body","messages,1,"role"]`: `"messages"` and `1`, or
    /// `"messages,1"`).
    fn not_before_an_earlier_comma(&self, content: usize, end: usize, q: usize) -> Step {
        let text = &self.src[content..end];
        let (Some(first), Some(last)) = (memchr::memchr(b',', text), memchr::memrchr(b',', text))
        else {
            return Ok(());
        };
        let reach = Reach {
            tokens: usize::MAX,
            until: q,
            min_tokens: 1,
        };
        // (From the last comma too: `"messages,,1,"role"`, a comma doubled.)
        if self.continues(content + first, Expect::AfterValue, reach)
            || (last > first && self.continues(content + last, Expect::AfterValue, reach))
        {
            return Err(fail(
                RepairErrorKind::Unrepairable,
                content - 1,
                "a string that lacks its closing quote may end at either of two commas",
            ));
        }
        Ok(())
    }

    /// Where the text of a string that starts at `content` ends when the
    /// token at `q` is the next one: before the whitespace, comments and
    /// `,` or `+` before `q`; and that separator.
    fn token_before(
        &self,
        content: usize,
        q: usize,
        comments: &mut CommentOpens,
    ) -> (usize, Option<u8>) {
        let mut k = q;
        loop {
            while k > content && is_ws(self.src[k - 1]) {
                k -= 1;
            }
            if k >= content + 4 && &self.src[k - 2..k] == b"*/" {
                let from = content.max(k.saturating_sub(WINDOW));
                if let Some(open) = comments.last_in(self.src, content, from, k - 2) {
                    k = open;
                    continue;
                }
            }
            break;
        }
        if k > content && matches!(self.src[k - 1], b',' | b'+') {
            let separator = self.src[k - 1];
            let (end, _) = self.token_before(content, k - 1, comments);
            (end, Some(separator))
        } else {
            (k, None)
        }
    }

    /// Where the content of a string that starts at `content` ends, when the
    /// structure resumes at `at`: before the whitespace there.
    fn content_end(&self, content: usize, mut at: usize) -> usize {
        while at > content && is_ws(self.src[at - 1]) {
            at -= 1;
        }
        at
    }

    /// A backslash in a string.
    fn escape(&mut self, ctx: Ctx, quote: Quote, since: &mut Option<Since>) -> Step {
        let at = self.pos;
        let Some(&next) = self.src.get(at + 1).filter(|_| at + 1 < self.end) else {
            // A backslash where the text stops: dropped with the truncation.
            self.replace(at, at + 1, "");
            self.pos += 1;
            return Ok(());
        };
        match next {
            b'"' if quote == Quote::Double
                && matches!(ctx, Ctx::ObjectValue | Ctx::Key)
                && self.stray_backslash(ctx, at + 2) =>
            {
                return Err(fail(
                    RepairErrorKind::Unrepairable,
                    at,
                    "a backslash before the quote that seems to close the string",
                ));
            }
            b':' if quote == Quote::Double
                && matches!(ctx, Ctx::Key)
                // (A quote right before it closed the key already.)
                && self.src[at - 1] != b'"'
                && self.key_may_end_before(at + 1) =>
            {
                return Err(fail(
                    RepairErrorKind::Unrepairable,
                    at,
                    "a backslash where the key's closing quote seems to be",
                ));
            }
            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.pos += 2,
            b'u' => {
                let digits = self.src[at + 2..self.end]
                    .iter()
                    .take(4)
                    .take_while(|b| b.is_ascii_hexdigit())
                    .count();
                if digits == 4 {
                    self.pos += 6;
                } else if at + 2 + digits >= self.end {
                    // `\u12` where the text stops: dropped with the truncation.
                    self.replace(at, self.end, "");
                    self.pos = self.end;
                } else {
                    self.record_in_string(since, RepairKind::InvalidEscape, at)?;
                    self.replace(at, at + 1, "\\\\");
                    self.pos += 1;
                }
            }
            b'\'' => {
                if matches!(quote, Quote::Double | Quote::CurlyDouble) {
                    self.record_in_string(since, RepairKind::InvalidEscape, at)?;
                }
                self.replace(at, at + 2, "'");
                self.pos += 2;
            }
            _ => {
                // `\d`, `C:\Users`: the backslash was meant literally.
                self.record_in_string(since, RepairKind::InvalidEscape, at)?;
                self.replace(at, at + 1, "\\\\");
                self.pos += 1;
            }
        }
        Ok(())
    }
}

/// Whether a token may follow `b` in a string's text (see
/// [`Parser::separated`]).
fn is_separator(b: u8) -> bool {
    is_ws(b) || matches!(b, b',' | b'[' | b'{' | b':')
}

/// The repair a string's opening quote needs, if it is not `"`.
fn quote_repair(quote: Quote) -> Option<RepairKind> {
    match quote {
        Quote::Double => None,
        Quote::Single => Some(RepairKind::SingleQuotes),
        Quote::CurlyDouble | Quote::CurlySingle => Some(RepairKind::CurlyQuotes),
        Quote::Backtick => Some(RepairKind::Backticks),
    }
}

/// The first byte at or after `from` in `src` that a `"` string stops at:
/// a control character, `"` or `\`; or the end. Eight bytes at a time.
#[inline]
pub(super) fn find_stop_double(src: &[u8], mut from: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    while from + 8 <= src.len() {
        let chunk = u64::from_le_bytes(src[from..from + 8].try_into().expect("8 bytes"));
        // A byte that is zero after the xor, or below 0x20, sets its high
        // bit; the lowest such byte is exact.
        let zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH;
        let stops = zero(chunk ^ (ONES * u64::from(b'"')))
            | zero(chunk ^ (ONES * u64::from(b'\\')))
            | (chunk.wrapping_sub(ONES * 0x20) & !chunk & HIGH);
        if stops != 0 {
            return from + (stops.trailing_zeros() / 8) as usize;
        }
        from += 8;
    }
    from + src[from.min(src.len())..]
        .iter()
        .position(|&b| STOPS_DOUBLE[b as usize])
        .unwrap_or(src.len().saturating_sub(from))
}

/// Writes the JSON escape of a byte that cannot appear raw in a string.
pub(super) fn push_escaped(out: &mut String, b: u8) {
    match b {
        b'"' => out.push_str("\\\""),
        b'\\' => out.push_str("\\\\"),
        b'\n' => out.push_str("\\n"),
        b'\r' => out.push_str("\\r"),
        b'\t' => out.push_str("\\t"),
        0x08 => out.push_str("\\b"),
        0x0C => out.push_str("\\f"),
        _ => {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.push_str("\\u00");
            out.push(HEX[(b >> 4) as usize] as char);
            out.push(HEX[(b & 0xF) as usize] as char);
        }
    }
}
/// Whether `text` is a JSON number or literal, whole, by JSON's grammar
/// (`2E547` is a number, though too large for a float).
fn is_json_scalar(text: &[u8]) -> bool {
    matches!(text, b"true" | b"false" | b"null") || number_end(text, 0) == Ok(text.len())
}
