//! Python call syntax, and the Python literals in it:
//! `[get_weather(city="Lima"), sort('report.pdf')]`.

use serde_json::{Map, Value};

use super::{CallFormat, ReadError, ToolCall};

const FORMAT: CallFormat = CallFormat::Pythonic;
/// Deeper literals than this are refused rather than risk the stack.
const MAX_DEPTH: usize = 128;

pub(super) fn read(
    text: &str,
    parameters: &dyn Fn(&str) -> Option<Vec<String>>,
) -> Result<Vec<ToolCall>, ReadError> {
    let start = find_start(text).ok_or_else(|| {
        ReadError::new(
            FORMAT,
            "byte 0",
            "calls written as `[tool_name(arg=value), ...]`",
            "no call in the text",
        )
    })?;
    let mut parser = Parser {
        text,
        at: start,
        depth: 0,
    };
    let calls = parser.calls(parameters)?;
    parser.blank();
    Ok(calls)
}

/// The first `[name(` or `name(` in the text, skipping a `<|python_tag|>`.
fn find_start(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    text.char_indices().map(|(i, _)| i).find(|&i| {
        let at_word_start = i == 0
            || !(bytes[i - 1].is_ascii_alphanumeric()
                || bytes[i - 1] == b'_'
                || bytes[i - 1] == b'.');
        if !at_word_start {
            return false;
        }
        let rest = &text[i..];
        let rest = rest.strip_prefix('[').map(str::trim_start).unwrap_or(rest);
        let name_len = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
            .unwrap_or(rest.len());
        name_len > 0
            && rest.starts_with(|c: char| c.is_alphabetic() || c == '_')
            && rest[name_len..].trim_start().starts_with('(')
    })
}

struct Parser<'t> {
    text: &'t str,
    at: usize,
    depth: usize,
}

impl<'t> Parser<'t> {
    fn error(&self, expected: &str) -> ReadError {
        let found = match self.text[self.at..].chars().next() {
            None => "the end of the text".to_owned(),
            Some(_) => {
                let excerpt: String = self.text[self.at..].chars().take(20).collect();
                format!("`{excerpt}`")
            }
        };
        ReadError::new(FORMAT, format!("byte {}", self.at), expected, found)
    }

    fn blank(&mut self) {
        let rest = &self.text[self.at..];
        self.at += rest.len() - rest.trim_start().len();
    }

    fn eat(&mut self, token: &str) -> bool {
        self.blank();
        if self.text[self.at..].starts_with(token) {
            self.at += token.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, token: &str, expected: &str) -> Result<(), ReadError> {
        if self.eat(token) {
            Ok(())
        } else {
            Err(self.error(expected))
        }
    }

    fn peek(&mut self) -> Option<char> {
        self.blank();
        self.text[self.at..].chars().next()
    }

    fn calls(
        &mut self,
        parameters: &dyn Fn(&str) -> Option<Vec<String>>,
    ) -> Result<Vec<ToolCall>, ReadError> {
        if !self.eat("[") {
            return Ok(vec![self.call(parameters)?]);
        }
        let mut calls = Vec::new();
        loop {
            if self.eat("]") {
                return Ok(calls);
            }
            calls.push(self.call(parameters)?);
            if !self.eat(",") {
                self.expect("]", "`,` or `]` after a call")?;
                return Ok(calls);
            }
        }
    }

    fn identifier(&mut self) -> Option<&'t str> {
        self.blank();
        let text = self.text;
        let rest = &text[self.at..];
        let len = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
            .unwrap_or(rest.len());
        if len == 0 || !rest.starts_with(|c: char| c.is_alphabetic() || c == '_') {
            return None;
        }
        self.at += len;
        Some(&rest[..len])
    }

    fn call(
        &mut self,
        parameters: &dyn Fn(&str) -> Option<Vec<String>>,
    ) -> Result<ToolCall, ReadError> {
        let name = self
            .identifier()
            .ok_or_else(|| self.error("a tool name"))?
            .to_owned();
        self.expect("(", "`(` after the tool name")?;
        let mut arguments = Map::new();
        let mut positional = Vec::new();
        loop {
            if self.eat(")") {
                break;
            }
            let before = self.at;
            let keyword = match self.identifier() {
                Some(word) if self.eat("=") => Some(word.to_owned()),
                _ => {
                    self.at = before;
                    None
                }
            };
            let value_at = self.at;
            let value = self.literal()?;
            match keyword {
                Some(key) => {
                    if arguments.insert(key.clone(), value).is_some() {
                        return Err(ReadError::new(
                            FORMAT,
                            format!("byte {value_at}"),
                            format!("`{key}` given once"),
                            format!("`{key}` given twice"),
                        ));
                    }
                }
                None if arguments.is_empty() => positional.push((value_at, value)),
                None => {
                    return Err(ReadError::new(
                        FORMAT,
                        format!("byte {value_at}"),
                        "a keyword argument (positional ones come first)",
                        "a positional argument",
                    ));
                }
            }
            if !self.eat(",") {
                self.expect(")", "`,` or `)` in the argument list")?;
                break;
            }
        }
        if !positional.is_empty() {
            let Some(names) = parameters(&name) else {
                let (at, _) = positional[0];
                return Err(ReadError::new(
                    FORMAT,
                    format!("byte {at}"),
                    format!("keyword arguments (`{name}(name=value)`): positional ones need the tool's parameter names"),
                    "a positional argument",
                ));
            };
            let count = positional.len();
            for (index, (at, value)) in positional.into_iter().enumerate() {
                let Some(key) = names.get(index) else {
                    return Err(ReadError::new(
                        FORMAT,
                        format!("byte {at}"),
                        format!(
                            "at most {} positional argument(s) for `{name}`",
                            names.len()
                        ),
                        format!("{count}"),
                    ));
                };
                if arguments.contains_key(key) {
                    return Err(ReadError::new(
                        FORMAT,
                        format!("byte {at}"),
                        format!("`{key}` given once"),
                        format!("`{key}` by position and by keyword"),
                    ));
                }
                arguments.insert(key.clone(), value);
            }
            // Keep the declaration order.
            let mut ordered = Map::new();
            for key in &names {
                if let Some(value) = arguments.remove(key) {
                    ordered.insert(key.clone(), value);
                }
            }
            ordered.extend(arguments);
            arguments = ordered;
        }
        Ok(ToolCall {
            id: None,
            name,
            arguments: Value::Object(arguments).to_string(),
        })
    }

    fn literal(&mut self) -> Result<Value, ReadError> {
        if self.depth >= MAX_DEPTH {
            return Err(self.error(&format!("a value nested at most {MAX_DEPTH} deep")));
        }
        self.depth += 1;
        let value = self.literal_inner();
        self.depth -= 1;
        value
    }

    fn literal_inner(&mut self) -> Result<Value, ReadError> {
        match self.peek() {
            Some('\'' | '"') => self.string().map(Value::String),
            Some('[') => self.sequence('[', ']'),
            Some('(') => self.sequence('(', ')'),
            Some('{') => self.dict(),
            Some(c) if c.is_ascii_digit() || c == '-' || c == '+' || c == '.' => self.number(),
            Some(_) => {
                let before = self.at;
                match self.identifier() {
                    Some("True" | "true") => Ok(Value::Bool(true)),
                    Some("False" | "false") => Ok(Value::Bool(false)),
                    Some("None" | "null") => Ok(Value::Null),
                    _ => {
                        self.at = before;
                        Err(self.error("a value: a string, a number, `True`, `False`, `None`, a list or a dict"))
                    }
                }
            }
            None => Err(self.error("a value")),
        }
    }

    fn sequence(&mut self, open: char, close: char) -> Result<Value, ReadError> {
        self.at += open.len_utf8();
        let close = close.to_string();
        let mut items = Vec::new();
        loop {
            if self.eat(&close) {
                return Ok(Value::Array(items));
            }
            items.push(self.literal()?);
            if !self.eat(",") {
                self.expect(&close, &format!("`,` or `{close}`"))?;
                return Ok(Value::Array(items));
            }
        }
    }

    fn dict(&mut self) -> Result<Value, ReadError> {
        self.at += 1;
        let mut object = Map::new();
        loop {
            if self.eat("}") {
                return Ok(Value::Object(object));
            }
            let key = match self.peek() {
                Some('\'' | '"') => self.string()?,
                _ => return Err(self.error("a string key")),
            };
            self.expect(":", "`:` after a dict key")?;
            object.insert(key, self.literal()?);
            if !self.eat(",") {
                self.expect("}", "`,` or `}`")?;
                return Ok(Value::Object(object));
            }
        }
    }

    fn number(&mut self) -> Result<Value, ReadError> {
        let start = self.at;
        let rest = &self.text[start..];
        let len = rest
            .char_indices()
            .find(|&(i, c)| {
                !(c.is_ascii_digit()
                    || c == '.'
                    || c == '_'
                    || c == 'e'
                    || c == 'E'
                    || ((c == '-' || c == '+')
                        && (i == 0 || matches!(rest.as_bytes()[i - 1], b'e' | b'E'))))
            })
            .map_or(rest.len(), |(i, _)| i);
        let word: String = rest[..len].chars().filter(|c| *c != '_').collect();
        let word = word.strip_prefix('+').unwrap_or(&word);
        let parsed = if let Ok(n) = word.parse::<i64>() {
            Some(Value::from(n))
        } else if let Ok(n) = word.parse::<u64>() {
            Some(Value::from(n))
        } else {
            word.parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map(Value::Number)
        };
        match parsed {
            Some(value) => {
                self.at += len;
                Ok(value)
            }
            None => Err(self.error("a number")),
        }
    }

    fn string(&mut self) -> Result<String, ReadError> {
        let start = self.at;
        let rest = &self.text[start..];
        let quote = if rest.starts_with("\"\"\"") {
            "\"\"\""
        } else if rest.starts_with("'''") {
            "'''"
        } else if rest.starts_with('"') {
            "\""
        } else {
            "'"
        };
        let mut out = String::new();
        let mut chars = rest[quote.len()..].char_indices();
        while let Some((i, c)) = chars.next() {
            if rest[quote.len() + i..].starts_with(quote) {
                self.at = start + quote.len() + i + quote.len();
                return Ok(out);
            }
            match c {
                '\\' => match chars.next() {
                    Some((_, 'n')) => out.push('\n'),
                    Some((_, 't')) => out.push('\t'),
                    Some((_, 'r')) => out.push('\r'),
                    Some((_, '0')) => out.push('\0'),
                    Some((j, 'u')) => {
                        let hex = rest.get(quote.len() + j + 1..quote.len() + j + 5);
                        match hex
                            .and_then(|h| u32::from_str_radix(h, 16).ok())
                            .and_then(char::from_u32)
                        {
                            Some(c) => {
                                out.push(c);
                                for _ in 0..4 {
                                    chars.next();
                                }
                            }
                            None => out.push_str("\\u"),
                        }
                    }
                    Some((_, other)) => out.push(other),
                    None => break,
                },
                '\n' if quote.len() == 1 => {
                    self.at = start + quote.len() + i;
                    return Err(self.error("the string's closing quote before the end of the line"));
                }
                c => out.push(c),
            }
        }
        self.at = start;
        Err(self.error(&format!("a string closed by {quote}")))
    }
}

#[cfg(test)]
mod tests {
    use crate::reader::{read_calls, CallFormat};

    #[test]
    fn pythonic_literals() {
        let calls = read_calls(
            CallFormat::Pythonic,
            r#"[f(a='it\'s', b=[1, 2.5, -3], c={'k': (True, None)}, d="""x"y""", e=1_000)]"#,
        )
        .unwrap();
        assert_eq!(
            calls[0].arguments,
            r#"{"a":"it's","b":[1,2.5,-3],"c":{"k":[true,null]},"d":"x\"y","e":1000}"#
        );
    }

    #[test]
    fn pythonic_errors_say_where() {
        let error = read_calls(CallFormat::Pythonic, "[f(a=1, b=)]").unwrap_err();
        assert_eq!(error.at, "byte 10");
        assert!(error.expected.starts_with("a value"), "{error}");
        let error = read_calls(CallFormat::Pythonic, "[f('x')]").unwrap_err();
        assert!(
            error
                .expected
                .contains("positional ones need the tool's parameter names"),
            "{error}"
        );
        let deep = format!("f(a={}{})", "[".repeat(10_000), "]".repeat(10_000));
        assert!(read_calls(CallFormat::Pythonic, &deep).is_err());
    }
}
