//! The lexer of λ-Tool text: tokens with their line, column and byte span,
//! made one at a time as the parser asks for them, so that lexing holds one
//! token of lookahead, never a list of every token (at 64 bytes a token, 4 MB
//! of `{` once took 516 MB). Comments `(* ... *)` and whitespace are skipped;
//! string escapes are decoded.

use std::fmt;

use super::parse::ParseError;

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Tok {
    Word(String),
    Number(String),
    Str(String),
    Sym(&'static str),
    End,
    /// Text that is no token: the lexer's error is [`Lexer::error`], and
    /// every token after it is `Bad` too.
    Bad,
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Word(w) | Tok::Number(w) => write!(f, "`{}`", crate::cut::Echo(w)),
            Tok::Str(_) => f.write_str("a string"),
            Tok::Sym(s) => write!(f, "`{s}`"),
            Tok::End => f.write_str("the end of the plan"),
            Tok::Bad => f.write_str("text that is not a token"),
        }
    }
}

pub(super) struct Token {
    pub(super) tok: Tok,
    pub(super) line: usize,
    pub(super) column: usize,
    pub(super) start: usize,
    pub(super) end: usize,
}

/// Longest first, so that `==` is not read as `=` `=`.
const SYMBOLS: [&str; 24] = [
    "=>", "==", "!=", "<=", ">=", "++", "(", ")", "{", "}", "[", "]", ",", ".", "=", "<", ">", "+",
    "-", "*", "/", "%", ":", ";",
];

/// Tokens on demand: [`Lexer::next`] reads one.
pub(super) struct Lexer<'t> {
    text: &'t str,
    /// The byte offset of the next character.
    at: usize,
    line: usize,
    column: usize,
    /// Why the lexer stopped, once it has.
    error: Option<ParseError>,
}

impl<'t> Lexer<'t> {
    pub(super) fn new(text: &'t str) -> Lexer<'t> {
        Lexer {
            text,
            at: 0,
            line: 1,
            column: 1,
            error: None,
        }
    }

    /// The error behind a [`Tok::Bad`].
    pub(super) fn error(&self) -> Option<&ParseError> {
        self.error.as_ref()
    }

    /// The next token: [`Tok::End`] at the end of the text, and from then on;
    /// [`Tok::Bad`] at text that is no token, and from then on.
    pub(super) fn next(&mut self) -> Token {
        if let Some(error) = &self.error {
            return Token {
                tok: Tok::Bad,
                line: error.line,
                column: error.column,
                start: self.at,
                end: self.at,
            };
        }
        match self.token() {
            Ok(token) => token,
            Err(error) => {
                let token = Token {
                    tok: Tok::Bad,
                    line: error.line,
                    column: error.column,
                    start: self.at,
                    end: self.at,
                };
                self.error = Some(error);
                token
            }
        }
    }

    fn peek(&self) -> Option<char> {
        self.text[self.at..].chars().next()
    }

    fn rest(&self) -> &'t str {
        &self.text[self.at..]
    }

    /// Advances over one char, keeping line and column.
    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.at += c.len_utf8();
        if c == '\n' {
            self.line += 1;
            self.column = 1;
        } else {
            self.column += 1;
        }
        Some(c)
    }

    /// Advances over ASCII digits (no line breaks among them).
    fn digits(&mut self, into: &mut String) {
        let n = self.rest().bytes().take_while(u8::is_ascii_digit).count();
        into.push_str(&self.rest()[..n]);
        self.at += n;
        self.column += n;
    }

    fn token(&mut self) -> Result<Token, ParseError> {
        let error = |line, column, message: String| ParseError::syntax(line, column, message);
        // Whitespace and comments.
        loop {
            match self.peek() {
                Some(c) if c.is_whitespace() => {
                    self.bump();
                }
                Some('(') if self.rest().starts_with("(*") => {
                    let (line, column) = (self.line, self.column);
                    self.bump();
                    self.bump();
                    loop {
                        match self.bump() {
                            Some('*') if self.rest().starts_with(')') => {
                                self.bump();
                                break;
                            }
                            Some(_) => {}
                            None => {
                                return Err(error(
                                    line,
                                    column,
                                    "unterminated comment `(*`; close it with `*)`".into(),
                                ))
                            }
                        }
                    }
                }
                _ => break,
            }
        }
        let (tline, tcolumn, start) = (self.line, self.column, self.at);
        let Some(c) = self.peek() else {
            return Ok(Token {
                tok: Tok::End,
                line: tline,
                column: tcolumn,
                start,
                end: start,
            });
        };
        let tok = if c.is_ascii_alphabetic() || c == '_' {
            let n = self
                .rest()
                .bytes()
                .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
                .count();
            let word = self.rest()[..n].to_owned();
            self.at += n;
            self.column += n;
            Tok::Word(word)
        } else if c.is_ascii_digit() {
            let mut number = String::new();
            self.digits(&mut number);
            let rest = self.rest();
            if rest.starts_with('.') && rest[1..].starts_with(|c: char| c.is_ascii_digit()) {
                number.push('.');
                self.bump();
                self.digits(&mut number);
            }
            let rest = self.rest();
            if let Some(e @ ('e' | 'E')) = rest.chars().next() {
                let after_e = &rest[1..];
                let sign = after_e.starts_with(['+', '-']);
                let after = if sign { &after_e[1..] } else { after_e };
                if after.starts_with(|c: char| c.is_ascii_digit()) {
                    number.push(e);
                    self.bump();
                    if sign {
                        if let Some(s) = self.bump() {
                            number.push(s);
                        }
                    }
                    self.digits(&mut number);
                }
            }
            Tok::Number(number)
        } else if c == '"' {
            self.bump();
            Tok::Str(self.string(tline, tcolumn)?)
        } else if let Some(symbol) = SYMBOLS.iter().find(|s| self.rest().starts_with(**s)) {
            // Symbols are ASCII: one column a byte.
            self.at += symbol.len();
            self.column += symbol.len();
            Tok::Sym(symbol)
        } else {
            return Err(error(tline, tcolumn, format!("unexpected character `{c}`")));
        };
        Ok(Token {
            tok,
            line: tline,
            column: tcolumn,
            start,
            end: self.at,
        })
    }

    /// A string's content, after its opening quote at `line`, `column`.
    fn string(&mut self, line: usize, column: usize) -> Result<String, ParseError> {
        let mut value = String::new();
        loop {
            let (eline, ecolumn) = (self.line, self.column);
            let invalid = |message: &str| ParseError::syntax(eline, ecolumn, message.into());
            match self.bump() {
                None => {
                    return Err(ParseError::syntax(
                        line,
                        column,
                        "unterminated string; close it with `\"`".into(),
                    ))
                }
                Some('"') => return Ok(value),
                Some('\\') => match self.bump() {
                    Some('"') => value.push('"'),
                    Some('\\') => value.push('\\'),
                    Some('n') => value.push('\n'),
                    Some('r') => value.push('\r'),
                    Some('t') => value.push('\t'),
                    Some('u') => {
                        let mut hex = String::new();
                        let ok = self.bump() == Some('{')
                            && loop {
                                match self.bump() {
                                    Some('}') => break true,
                                    Some(h) if h.is_ascii_hexdigit() && hex.len() < 6 => {
                                        hex.push(h)
                                    }
                                    _ => break false,
                                }
                            };
                        match u32::from_str_radix(&hex, 16)
                            .ok()
                            .filter(|_| ok)
                            .and_then(char::from_u32)
                        {
                            Some(c) => value.push(c),
                            None => {
                                return Err(invalid(
                                    "invalid escape; write a character as `\\u{hex}`, like `\\u{e9}`",
                                ))
                            }
                        }
                    }
                    _ => {
                        return Err(invalid(
                            "unknown escape; expected one of `\\\"`, `\\\\`, `\\n`, `\\r`, `\\t`, `\\u{..}`",
                        ))
                    }
                },
                Some(c) => {
                    // Plain characters up to the next quote, escape or line
                    // break in one step.
                    value.push(c);
                    let n = self
                        .rest()
                        .find(['"', '\\', '\n'])
                        .unwrap_or(self.rest().len());
                    let run = &self.rest()[..n];
                    value.push_str(run);
                    self.column += run.chars().count();
                    self.at += n;
                }
            }
        }
    }
}
