//! The lexer of λ-Tool text: tokens with their line, column and byte span.
//! Comments `(* ... *)` and whitespace are skipped; string escapes are decoded.

use std::fmt;

use super::parse::ParseError;

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Tok {
    Word(String),
    Number(String),
    Str(String),
    Sym(&'static str),
    End,
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Word(w) | Tok::Number(w) => write!(f, "`{w}`"),
            Tok::Str(_) => f.write_str("a string"),
            Tok::Sym(s) => write!(f, "`{s}`"),
            Tok::End => f.write_str("the end of the plan"),
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

pub(super) fn lex(text: &str) -> Result<Vec<Token>, ParseError> {
    let mut tokens = Vec::new();
    let mut chars = text.char_indices().peekable();
    let (mut line, mut column) = (1, 1);
    let error = |line, column, message: String| ParseError {
        line,
        column,
        message,
    };
    // Advances over one char, keeping line and column.
    macro_rules! bump {
        () => {{
            let next = chars.next();
            if let Some((_, c)) = next {
                if c == '\n' {
                    line += 1;
                    column = 1;
                } else {
                    column += 1;
                }
            }
            next
        }};
    }
    while let Some(&(start, c)) = chars.peek() {
        let (tline, tcolumn) = (line, column);
        if c.is_whitespace() {
            bump!();
            continue;
        }
        if text[start..].starts_with("(*") {
            bump!();
            bump!();
            loop {
                match bump!() {
                    Some((i, '*')) if text[i..].starts_with("*)") => {
                        bump!();
                        break;
                    }
                    Some(_) => {}
                    None => {
                        return Err(error(
                            tline,
                            tcolumn,
                            "unterminated comment `(*`; close it with `*)`".into(),
                        ))
                    }
                }
            }
            continue;
        }
        let tok = if c.is_ascii_alphabetic() || c == '_' {
            let mut word = String::new();
            while let Some(&(_, c)) = chars.peek() {
                if !(c.is_ascii_alphanumeric() || c == '_') {
                    break;
                }
                word.push(c);
                bump!();
            }
            Tok::Word(word)
        } else if c.is_ascii_digit() {
            let mut number = String::new();
            let digits = |number: &mut String,
                          chars: &mut std::iter::Peekable<std::str::CharIndices>,
                          column: &mut usize| {
                while let Some(&(_, c)) = chars.peek() {
                    if !c.is_ascii_digit() {
                        break;
                    }
                    number.push(c);
                    chars.next();
                    *column += 1;
                }
            };
            digits(&mut number, &mut chars, &mut column);
            if let Some(&(i, '.')) = chars.peek() {
                if text[i + 1..].starts_with(|c: char| c.is_ascii_digit()) {
                    number.push('.');
                    bump!();
                    digits(&mut number, &mut chars, &mut column);
                }
            }
            if let Some(&(i, e @ ('e' | 'E'))) = chars.peek() {
                let rest = &text[i + 1..];
                let sign = rest.starts_with(['+', '-']);
                let after = if sign { &rest[1..] } else { rest };
                if after.starts_with(|c: char| c.is_ascii_digit()) {
                    number.push(e);
                    bump!();
                    if sign {
                        if let Some((_, s)) = bump!() {
                            number.push(s);
                        }
                    }
                    digits(&mut number, &mut chars, &mut column);
                }
            }
            Tok::Number(number)
        } else if c == '"' {
            bump!();
            let mut value = String::new();
            loop {
                let (eline, ecolumn) = (line, column);
                match bump!() {
                    None => return Err(error(tline, tcolumn, "unterminated string; close it with `\"`".into())),
                    Some((_, '"')) => break,
                    Some((_, '\\')) => match bump!() {
                        Some((_, '"')) => value.push('"'),
                        Some((_, '\\')) => value.push('\\'),
                        Some((_, 'n')) => value.push('\n'),
                        Some((_, 'r')) => value.push('\r'),
                        Some((_, 't')) => value.push('\t'),
                        Some((_, 'u')) => {
                            let mut hex = String::new();
                            let ok = matches!(bump!(), Some((_, '{'))) && loop {
                                match bump!() {
                                    Some((_, '}')) => break true,
                                    Some((_, h)) if h.is_ascii_hexdigit() && hex.len() < 6 => hex.push(h),
                                    _ => break false,
                                }
                            };
                            match u32::from_str_radix(&hex, 16).ok().filter(|_| ok).and_then(char::from_u32) {
                                Some(c) => value.push(c),
                                None => return Err(error(eline, ecolumn, "invalid escape; write a character as `\\u{hex}`, like `\\u{e9}`".into())),
                            }
                        }
                        _ => return Err(error(eline, ecolumn, "unknown escape; expected one of `\\\"`, `\\\\`, `\\n`, `\\r`, `\\t`, `\\u{..}`".into())),
                    },
                    Some((_, c)) => value.push(c),
                }
            }
            Tok::Str(value)
        } else if let Some(symbol) = SYMBOLS.iter().find(|s| text[start..].starts_with(**s)) {
            for _ in 0..symbol.len() {
                bump!();
            }
            Tok::Sym(symbol)
        } else {
            return Err(error(tline, tcolumn, format!("unexpected character `{c}`")));
        };
        let end = chars.peek().map_or(text.len(), |&(i, _)| i);
        tokens.push(Token {
            tok,
            line: tline,
            column: tcolumn,
            start,
            end,
        });
    }
    tokens.push(Token {
        tok: Tok::End,
        line,
        column,
        start: text.len(),
        end: text.len(),
    });
    Ok(tokens)
}
