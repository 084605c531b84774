//! The parser of λ-Tool text: hand-written recursive descent over the grammar
//! in [`text`](super::text).
//!
//! Errors give the line and column (both from 1, columns in characters) and
//! say what was expected. Nesting deeper than [`MAX_DEPTH`] is an error, not a
//! stack overflow, and text longer than [`ParseOptions::max_bytes`] (1 MiB
//! unless set) is refused before it is read: each is a [`ParseLimit`]. The
//! parser's time and memory grow with the text's length, no faster: it lexes
//! one token ahead, and finds a record's repeated fields by hashing.
//!
//! ```
//! use typed_tools::plan::Plan;
//!
//! let error = Plan::parse("match exec tool lookup_account {id = 1} {\n  Ok(a) => a\n}").unwrap_err();
//! assert_eq!((error.line, error.column), (3, 1));
//! assert_eq!(
//!     error.to_string(),
//!     "line 3, column 1: expected `,` then the `Err(...)` branch (a tool's Result must be matched on both branches), found `}`"
//! );
//! ```

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

use super::ir::{BinaryOp, Branch, Expr, Lambda, Lambda2, Param, Plan, Step, Type, MAX_DEPTH};
use super::lex::{Lexer, Tok, Token};
use super::text::KEYWORDS;

/// Why λ-Tool text did not parse, and where.
///
/// ```
/// use typed_tools::plan::{ParseLimit, Plan};
///
/// let error = Plan::parse("{a = 1,, b = 2}").unwrap_err();
/// assert_eq!((error.line, error.column, error.limit), (1, 8, None));
/// let deep = format!("{}1{}", "[".repeat(100), "]".repeat(100));
/// assert!(matches!(Plan::parse(&deep).unwrap_err().limit, Some(ParseLimit::Depth { max: 64 })));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ParseError {
    /// The line, from 1.
    pub line: usize,
    /// The column, from 1, in characters.
    pub column: usize,
    /// What was expected and what was found.
    pub message: String,
    /// The limit the text went past, when that is why it was refused.
    pub limit: Option<ParseLimit>,
}

/// A limit on the plans [`Plan::parse_with`] reads, named by the
/// [`ParseError`] of text that goes past it.
///
/// ```
/// use typed_tools::plan::{ParseLimit, ParseOptions, Plan};
///
/// let options = ParseOptions::default().max_bytes(8);
/// let error = Plan::parse_with("[1, 2, 3, 4]", &options).unwrap_err();
/// assert_eq!(error.limit, Some(ParseLimit::Bytes { max: 8, found: 12 }));
/// assert_eq!(
///     error.to_string(),
///     "line 1, column 1: the plan is 12 bytes long, more than the 8 allowed; write a shorter plan"
/// );
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ParseLimit {
    /// The text is longer than [`ParseOptions::max_bytes`]; nothing was read.
    Bytes {
        /// The limit, in bytes.
        max: usize,
        /// The text's length, in bytes.
        found: usize,
    },
    /// The plan nests deeper than [`MAX_DEPTH`] levels.
    Depth {
        /// The limit, in levels.
        max: usize,
    },
}

impl ParseError {
    pub(super) fn syntax(line: usize, column: usize, mut message: String) -> ParseError {
        // What the text holds at the error (a token, an expression to put
        // in parentheses) may be long: the message is bounded.
        crate::cut::cut_owned(&mut message, crate::cut::LINE);
        ParseError {
            line,
            column,
            message,
            limit: None,
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}, column {}: {}",
            self.line, self.column, self.message
        )
    }
}

impl std::error::Error for ParseError {}

/// Limits on the text [`Plan::parse_with`] reads. The default is safe for a
/// server reading plans from a model: at most [`ParseOptions::DEFAULT_MAX_BYTES`]
/// (1 MiB) of text. Nesting is bounded by [`MAX_DEPTH`] whatever the options.
///
/// ```
/// use typed_tools::plan::{ParseOptions, Plan};
///
/// let options = ParseOptions::default().max_bytes(16 << 20);
/// assert_eq!(options.limit(), 16 << 20);
/// assert!(Plan::parse_with("[1, 2]", &options).is_ok());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseOptions {
    max_bytes: usize,
}

impl Default for ParseOptions {
    fn default() -> Self {
        ParseOptions {
            max_bytes: ParseOptions::DEFAULT_MAX_BYTES,
        }
    }
}

impl ParseOptions {
    /// The default limit on a plan's text: 1 MiB, far more than any plan a
    /// model writes (the support agent is 700 bytes), small enough that a
    /// server can parse a few at once.
    ///
    /// ```
    /// assert_eq!(typed_tools::plan::ParseOptions::DEFAULT_MAX_BYTES, 1 << 20);
    /// ```
    pub const DEFAULT_MAX_BYTES: usize = 1 << 20;

    /// Sets the longest text, in bytes, that is read; longer text is refused
    /// before any of it is, with [`ParseLimit::Bytes`].
    ///
    /// ```
    /// use typed_tools::plan::{ParseOptions, Plan};
    ///
    /// assert!(Plan::parse_with("1 + 2", &ParseOptions::default().max_bytes(5)).is_ok());
    /// assert!(Plan::parse_with("1 + 23", &ParseOptions::default().max_bytes(5)).is_err());
    /// ```
    pub fn max_bytes(mut self, max_bytes: usize) -> Self {
        self.max_bytes = max_bytes;
        self
    }

    /// The longest text read, in bytes.
    ///
    /// ```
    /// use typed_tools::plan::ParseOptions;
    ///
    /// assert_eq!(ParseOptions::default().limit(), ParseOptions::DEFAULT_MAX_BYTES);
    /// ```
    pub fn limit(&self) -> usize {
        self.max_bytes
    }
}

impl Plan {
    /// Parses a plan from λ-Tool text, with the default [`ParseOptions`]
    /// (at most 1 MiB of text).
    ///
    /// ```
    /// use typed_tools::plan::{Expr, Plan};
    ///
    /// assert_eq!(Plan::parse("1").unwrap(), Plan::new(Expr::int(1)));
    /// ```
    pub fn parse(text: &str) -> Result<Plan, ParseError> {
        Plan::parse_with(text, &ParseOptions::default())
    }

    /// Parses a plan from λ-Tool text within `options`' limits: text longer
    /// than [`ParseOptions::max_bytes`] is refused before it is read.
    ///
    /// ```
    /// use typed_tools::plan::{ParseLimit, ParseOptions, Plan};
    ///
    /// let big = format!("[{}1]", "1, ".repeat(500_000));
    /// let error = Plan::parse(&big).unwrap_err();
    /// assert!(matches!(error.limit, Some(ParseLimit::Bytes { max, .. }) if max == 1 << 20));
    /// let plan = Plan::parse_with(&big, &ParseOptions::default().max_bytes(2 << 20)).unwrap();
    /// assert!(matches!(plan.body, typed_tools::plan::Expr::List { .. }));
    /// ```
    pub fn parse_with(text: &str, options: &ParseOptions) -> Result<Plan, ParseError> {
        if text.len() > options.max_bytes {
            return Err(ParseError {
                line: 1,
                column: 1,
                message: format!(
                    "the plan is {} bytes long, more than the {} allowed; write a shorter plan",
                    text.len(),
                    options.max_bytes
                ),
                limit: Some(ParseLimit::Bytes {
                    max: options.max_bytes,
                    found: text.len(),
                }),
            });
        }
        let text = skip_declarations(text);
        let mut parser = Parser::new(&text);
        let body = parser.expr()?;
        match parser.peek() {
            Tok::End => Ok(Plan { body }),
            _ => Err(parser.expected("an operator or the end of the plan")),
        }
    }
}

/// Parses a type annotation alone, as λ-Tool writes it (`{id: Int}`,
/// `[String]`): the JSON form of a plan gives a parameter's annotation as
/// this text.
pub(crate) fn parse_type(text: &str) -> Result<Type, ParseError> {
    let mut parser = Parser::new(text);
    let ty = parser.ty()?;
    match parser.peek() {
        Tok::End => Ok(ty),
        _ => Err(parser.expected("the end of the type")),
    }
}

struct Parser<'t> {
    lexer: Lexer<'t>,
    /// The token at hand.
    current: Token,
    /// The token after it, once something looked that far.
    ahead: Option<Token>,
    depth: usize,
    /// What the atom about to be read is to the expression that takes it,
    /// for the error when it is a `map` (or another form that needs
    /// parentheses there); taken by the next atom.
    role: Option<Role>,
    /// Reading an argument without its parentheses, to write the fix into
    /// the error: `map`, `let` and the rest are read as if parenthesized.
    lenient: bool,
}

/// What an argument (or operand) is to the expression that takes it.
#[derive(Clone, Copy)]
enum Role {
    /// The list of `map`, `filter`, `fold` or `traverse`.
    List(&'static str),
    /// The initial value of `fold`.
    Init,
    /// The argument of `exec tool NAME` or `call tool NAME`.
    Argument(&'static str),
    /// The operand of `not`.
    Not,
    /// The right side of a binary operator.
    Right(&'static str),
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Role::List(of) => write!(f, "the list of `{of}`"),
            Role::Init => f.write_str("the initial value of `fold`"),
            Role::Argument(of) => write!(f, "the argument of `{of} tool NAME`"),
            Role::Not => f.write_str("the operand of `not`"),
            Role::Right(op) => write!(f, "the right side of `{op}`"),
        }
    }
}

/// The forms that are no atom: as an argument (or an operand, for `let`
/// and `if`) they need parentheses. Each with its shape, for an error that
/// cannot quote the text.
const PARENTHESIZED: [(&str, &str); 7] = [
    ("map", "(map (fn x => ...) LIST)"),
    ("filter", "(filter (fn x => ...) LIST)"),
    ("fold", "(fold (fn acc, x => ...) INIT LIST)"),
    ("call", "(call tool NAME ARGS)"),
    ("not", "(not ...)"),
    ("let", "(let x = ... in ...)"),
    ("if", "(if ... then ... else ...)"),
];

/// The longest fix an error quotes; past it, the form's shape.
const LONGEST_FIX: usize = 160;

/// A token's line and column, to point an error at after moving past it.
#[derive(Clone, Copy)]
struct Pos {
    line: usize,
    column: usize,
}

type Parsed<T> = Result<T, ParseError>;

impl<'t> Parser<'t> {
    fn new(text: &'t str) -> Parser<'t> {
        let mut lexer = Lexer::new(text);
        let current = lexer.next();
        Parser {
            lexer,
            current,
            ahead: None,
            depth: 0,
            role: None,
            lenient: false,
        }
    }
}

impl Parser<'_> {
    fn peek(&self) -> &Tok {
        &self.current.tok
    }

    /// The token after the one at hand.
    fn peek_next(&mut self) -> &Token {
        if self.ahead.is_none() {
            let next = match self.current.tok {
                Tok::End | Tok::Bad => Token {
                    tok: self.current.tok.clone(),
                    ..self.current
                },
                _ => self.lexer.next(),
            };
            self.ahead = Some(next);
        }
        self.ahead.as_ref().expect("filled above")
    }

    /// Moves to the next token; returns the one at hand. The end and a lexer
    /// error are never passed.
    fn bump(&mut self) -> Tok {
        if matches!(self.current.tok, Tok::End | Tok::Bad) {
            return self.current.tok.clone();
        }
        let next = self.ahead.take().unwrap_or_else(|| self.lexer.next());
        std::mem::replace(&mut self.current, next).tok
    }

    fn pos(&self) -> Pos {
        Pos {
            line: self.current.line,
            column: self.current.column,
        }
    }

    fn error_at(&self, at: Pos, message: String) -> ParseError {
        ParseError::syntax(at.line, at.column, message)
    }

    fn error_here(&self, message: String) -> ParseError {
        if let (Tok::Bad, Some(error)) = (&self.current.tok, self.lexer.error()) {
            // The parser reached text the lexer could not read: say why.
            return error.clone();
        }
        self.error_at(self.pos(), message)
    }

    /// "expected `what`, found `tok`", at `at`, where `tok` was.
    fn expected_at(&self, at: Pos, tok: &Tok, what: &str) -> ParseError {
        match (tok, self.lexer.error()) {
            (Tok::Bad, Some(error)) => error.clone(),
            _ => self.error_at(at, format!("expected {what}, found {tok}")),
        }
    }

    fn expected(&self, what: &str) -> ParseError {
        self.error_here(format!("expected {what}, found {}", self.peek()))
    }

    fn is_sym(&self, symbol: &str) -> bool {
        matches!(self.peek(), Tok::Sym(s) if *s == symbol)
    }

    fn is_word(&self, word: &str) -> bool {
        matches!(self.peek(), Tok::Word(w) if w == word)
    }

    fn sym(&mut self, symbol: &str, what: &str) -> Parsed<()> {
        if self.is_sym(symbol) {
            self.bump();
            Ok(())
        } else {
            Err(self.expected(what))
        }
    }

    fn word(&mut self, word: &str, what: &str) -> Parsed<()> {
        if self.is_word(word) {
            self.bump();
            Ok(())
        } else {
            Err(self.expected(what))
        }
    }

    /// Enters one level of nesting.
    fn enter(&mut self) -> Parsed<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            let mut error = self.error_here(format!(
                "the plan nests deeper than {MAX_DEPTH} levels; name parts with `let`"
            ));
            error.limit = Some(ParseLimit::Depth { max: MAX_DEPTH });
            return Err(error);
        }
        Ok(())
    }

    fn ident(&mut self, what: &str) -> Parsed<String> {
        match self.peek() {
            Tok::Word(w) if !KEYWORDS.contains(&w.as_str()) => Ok(self.take_text()),
            Tok::Word(w) => {
                let message = format!("expected {what}, found the keyword `{w}`");
                Err(self.error_here(message))
            }
            _ => Err(self.expected(what)),
        }
    }

    fn field_name(&mut self) -> Parsed<String> {
        match self.peek() {
            Tok::Str(_) | Tok::Word(_) => Ok(self.take_text()),
            _ => Err(self.expected("a field name")),
        }
    }

    /// The text of the word or string at hand, moving past it.
    fn take_text(&mut self) -> String {
        match self.bump() {
            Tok::Word(s) | Tok::Str(s) | Tok::Number(s) => s,
            _ => unreachable!("called on a word or string"),
        }
    }

    fn expr(&mut self) -> Parsed<Expr> {
        let depth = self.depth;
        self.enter()?;
        let expr = if self.is_word("let") {
            self.bump();
            let name = self.ident("a variable name after `let`")?;
            self.sym("=", "`=` after `let NAME`")?;
            let value = self.expr()?;
            self.word("in", "`in` after `let NAME = VALUE`")?;
            let body = self.expr()?;
            Expr::Let {
                name,
                value: Box::new(value),
                body: Box::new(body),
            }
        } else if self.is_word("if") {
            self.bump();
            let cond = self.expr()?;
            self.word("then", "`then` after the condition of `if`")?;
            let then = self.expr()?;
            self.word("else", "`else`: an `if` needs both branches")?;
            let otherwise = self.expr()?;
            Expr::If {
                cond: Box::new(cond),
                then: Box::new(then),
                otherwise: Box::new(otherwise),
            }
        } else {
            self.binary(1)?
        };
        self.depth = depth;
        Ok(expr)
    }

    fn operator(&self) -> Option<BinaryOp> {
        let symbol = match self.peek() {
            Tok::Sym(s) => *s,
            Tok::Word(w) if w == "and" => "and",
            Tok::Word(w) if w == "or" => "or",
            _ => return None,
        };
        BinaryOp::ALL.into_iter().find(|op| op.symbol() == symbol)
    }

    /// Operators of precedence `min` and up, by precedence climbing: one
    /// frame per nesting level, not one per precedence level.
    fn binary(&mut self, min: u8) -> Parsed<Expr> {
        let depth = self.depth;
        let mut left = self.app()?;
        while let Some(op) = self.operator().filter(|op| op.precedence() >= min) {
            self.bump();
            // Each link of a chain nests the IR one level deeper.
            self.enter()?;
            self.role = Some(Role::Right(op.symbol()));
            let right = self.binary(op.precedence() + 1)?;
            left = Expr::binary(op, left, right);
            if op.precedence() == 3 && self.operator().is_some_and(|op| op.precedence() == 3) {
                return Err(
                    self.error_here("comparisons do not chain; combine them with `and`".into())
                );
            }
        }
        self.depth = depth;
        Ok(left)
    }

    fn app(&mut self) -> Parsed<Expr> {
        // The role is the atom's, unless this is an application.
        let role = self.role.take();
        let Tok::Word(word) = self.peek() else {
            self.role = role;
            return self.postfix();
        };
        let expr = match word.as_str() {
            "not" => {
                self.bump();
                Expr::Not {
                    operand: Box::new(self.argument(Role::Not)?),
                }
            }
            "map" | "filter" => {
                let map = word == "map";
                self.bump();
                let func = self.lambda()?;
                let list =
                    Box::new(self.argument(Role::List(if map { "map" } else { "filter" }))?);
                if map {
                    Expr::Map { func, list }
                } else {
                    Expr::Filter { func, list }
                }
            }
            "call" => {
                self.bump();
                self.word("tool", "`tool` after `call` (`call tool NAME ARGS`)")?;
                let tool = self.tool_name()?;
                let arg = Box::new(self.argument(Role::Argument("call"))?);
                Expr::Call { tool, arg }
            }
            "fold" => {
                self.bump();
                let func = self.lambda2()?;
                let init = Box::new(self.argument(Role::Init)?);
                let list = Box::new(self.argument(Role::List("fold"))?);
                Expr::Fold { func, init, list }
            }
            _ => {
                self.role = role;
                return self.postfix();
            }
        };
        Ok(expr)
    }

    /// An argument: one atom and its fields, `role` to what takes it.
    fn argument(&mut self, role: Role) -> Parsed<Expr> {
        self.role = Some(role);
        self.postfix()
    }

    /// A `map` (or another form of [`PARENTHESIZED`]) where an atom is due:
    /// refused, with the fix written out. The form is read as if it were
    /// parenthesized (and so is any other inside it), and printed back in
    /// parentheses, so the error shows what to write; when it does not read,
    /// or its text is long, the form's shape.
    #[cold]
    #[inline(never)]
    fn unparenthesized(&mut self, word: &str, shape: &str, role: Option<Role>) -> ParseError {
        let at = self.pos();
        let read = if matches!(word, "let" | "if") {
            self.expr()
        } else {
            self.enter().and_then(|()| self.app())
        };
        let fix = read
            .ok()
            .map(|expr| {
                let text = Plan::new(expr).to_string();
                // The printer's line breaks, as spaces: a string literal
                // holds none (it is written `\n`).
                let one_line: Vec<&str> = text.split('\n').map(str::trim_start).collect();
                format!("({})", one_line.join(" "))
            })
            .filter(|fix| fix.chars().count() <= LONGEST_FIX)
            .unwrap_or_else(|| shape.to_owned());
        let message = match role {
            Some(role) => format!("`{word}` as {role} must be in parentheses: write `{fix}`"),
            None => format!("`{word}` here must be in parentheses: write `{fix}`"),
        };
        self.error_at(at, message)
    }

    fn postfix(&mut self) -> Parsed<Expr> {
        let depth = self.depth;
        let mut expr = self.atom()?;
        while self.is_sym(".") {
            self.bump();
            self.enter()?;
            let field = self.field_name()?;
            expr = expr.get(field);
        }
        self.depth = depth;
        Ok(expr)
    }

    fn atom(&mut self) -> Parsed<Expr> {
        let role = self.role.take();
        if let Tok::Word(word) = self.peek() {
            if let Some(&(word, shape)) = PARENTHESIZED.iter().find(|(w, _)| w == word) {
                if !self.lenient {
                    self.lenient = true;
                    let error = self.unparenthesized(word, shape, role);
                    self.lenient = false;
                    return Err(error);
                }
                // Read as if parenthesized, to write the fix.
                let depth = self.depth;
                let expr = if matches!(word, "let" | "if") {
                    self.expr()?
                } else {
                    self.enter()?;
                    self.app()?
                };
                self.depth = depth;
                return Ok(expr);
            }
        }
        let start = self.pos();
        match self.bump() {
            Tok::Number(n) => self.number(&n, false, start),
            Tok::Sym("-") if matches!(self.peek(), Tok::Number(_)) => {
                let Tok::Number(n) = self.bump() else {
                    unreachable!("checked above")
                };
                self.number(&n, true, start)
            }
            Tok::Str(value) => Ok(Expr::String { value }),
            Tok::Sym("(") if self.is_sym(")") => {
                self.bump();
                Ok(Expr::Unit)
            }
            Tok::Sym("(") if self.is_word("fn") => Err(self.error_here(
                "a lambda can only be the callback of `map`, `filter`, `fold` or `traverse`".into(),
            )),
            Tok::Sym("(") => {
                let expr = self.expr()?;
                self.sym(")", "`)`")?;
                Ok(expr)
            }
            Tok::Sym("{") => self.record(start),
            Tok::Sym("[") => {
                let items = self.sequence("]", Parser::expr)?;
                Ok(Expr::List { items })
            }
            Tok::Word(w) if w == "match" => self.match_(),
            Tok::Word(w) => self.word_atom(w, start),
            tok => Err(self.expected_at(start, &tok, "an expression")),
        }
    }

    #[inline(never)]
    fn record(&mut self, start: Pos) -> Parsed<Expr> {
        let fields = self.sequence("}", |p| {
            let name = p.field_name()?;
            p.sym(
                "=",
                "`=` after the field name (records are written `{name = value}`)",
            )?;
            Ok((name, p.expr()?))
        })?;
        // Hashing, not comparing each field with every earlier one: a
        // 40,000-field record took seconds that way.
        let mut seen = HashSet::with_capacity(fields.len());
        if let Some((name, _)) = fields.iter().find(|(name, _)| !seen.insert(name.as_str())) {
            return Err(self.error_at(
                start,
                format!("the field `{}` is given twice", crate::cut::Echo(name)),
            ));
        }
        Ok(Expr::Record { fields })
    }

    #[inline(never)]
    fn word_atom(&mut self, w: String, start: Pos) -> Parsed<Expr> {
        match w.as_str() {
            "true" => Ok(Expr::Bool { value: true }),
            "false" => Ok(Expr::Bool { value: false }),
            "exec" | "traverse" => {
                Err(self.error_at(start, format!(
                    "`{w}` gives a Result, which can only be used by `match`: write `match {w} ... {{ Ok(x) => ..., Err(e) => ... }}`"
                )))
            }
            _ if KEYWORDS.contains(&w.as_str()) => Err(self.error_at(
                start,
                format!("expected an expression, found the keyword `{w}`"),
            )),
            _ => Ok(Expr::Var { name: w }),
        }
    }

    #[inline(never)]
    fn number(&mut self, text: &str, negative: bool, start: Pos) -> Parsed<Expr> {
        let text = if negative {
            format!("-{text}")
        } else {
            text.to_owned()
        };
        let expr = if text.contains(['.', 'e', 'E']) {
            text.parse::<f64>()
                .ok()
                .filter(|f| f.is_finite())
                .map(|value| Expr::Float { value })
        } else {
            text.parse::<i64>().ok().map(|value| Expr::Int { value })
        };
        expr.ok_or_else(|| {
            let text = crate::cut::Echo(&text);
            self.error_at(start, format!("the number `{text}` is out of range"))
        })
    }

    /// Elements separated by `,` up to `close`, a trailing `,` allowed.
    fn sequence<T>(
        &mut self,
        close: &'static str,
        mut element: impl FnMut(&mut Self) -> Parsed<T>,
    ) -> Parsed<Vec<T>> {
        let mut items = Vec::new();
        loop {
            if self.is_sym(close) {
                self.bump();
                return Ok(items);
            }
            items.push(element(self)?);
            if self.is_sym(",") {
                self.bump();
            } else if !self.is_sym(close) {
                return Err(self.expected(&format!("`,` or `{close}`")));
            }
        }
    }

    fn match_(&mut self) -> Parsed<Expr> {
        let on = self.step()?;
        self.sym("{", "`{` to open the branches of `match`")?;
        let (first_ok, first) = self.branch()?;
        if !self.is_sym(",") {
            let other = if first_ok { "Err" } else { "Ok" };
            return Err(self.expected(&format!(
                "`,` then the `{other}(...)` branch (a tool's Result must be matched on both branches)"
            )));
        }
        self.bump();
        let (second_ok, second) = self.branch()?;
        if first_ok == second_ok {
            let tag = if first_ok { "Ok" } else { "Err" };
            return Err(self.error_here(format!(
                "two `{tag}` branches; a `match` has one `Ok(...)` and one `Err(...)` branch"
            )));
        }
        if self.is_sym(",") {
            self.bump();
        }
        self.sym("}", "`}` after the two branches of `match`")?;
        let (ok, err) = if first_ok {
            (first, second)
        } else {
            (second, first)
        };
        Ok(Expr::Match {
            on: Box::new(on),
            ok,
            err,
        })
    }

    fn branch(&mut self) -> Parsed<(bool, Branch)> {
        let ok = if self.is_word("Ok") {
            true
        } else if self.is_word("Err") {
            false
        } else {
            return Err(self.expected("a branch `Ok(name) => ...` or `Err(name) => ...`"));
        };
        self.bump();
        self.sym("(", "`(` and a name to bind")?;
        let bind = self.ident("a name to bind")?;
        self.sym(")", "`)` after the bound name")?;
        self.sym("=>", "`=>` before the branch")?;
        let body = Box::new(self.expr()?);
        Ok((ok, Branch { bind, body }))
    }

    fn step(&mut self) -> Parsed<Step> {
        let depth = self.depth;
        self.enter()?;
        let step = if self.is_word("exec") {
            self.bump();
            self.word("tool", "`tool` after `exec` (`exec tool NAME ARGS`)")?;
            let tool = self.tool_name()?;
            let arg = Box::new(self.argument(Role::Argument("exec"))?);
            Step::Exec { tool, arg }
        } else if self.is_word("traverse") {
            self.bump();
            self.sym("(", "`(fn x => ...)` after `traverse`")?;
            self.word("fn", "`fn` to start the callback")?;
            let param = self.param()?;
            self.sym("=>", "`=>` after the parameter")?;
            let body = Box::new(self.step()?);
            self.sym(")", "`)` to close the callback")?;
            let list = Box::new(self.argument(Role::List("traverse"))?);
            Step::Traverse { param, body, list }
        } else {
            return Err(self
                .expected("`exec tool NAME ARGS` or `traverse (fn x => ...) LIST` after `match`"));
        };
        self.depth = depth;
        Ok(step)
    }

    /// A tool name: an identifier, possibly with `-` joining parts written
    /// without spaces (`get-weather`); keywords are allowed.
    fn tool_name(&mut self) -> Parsed<String> {
        let Tok::Word(first) = self.peek() else {
            return Err(self.expected("a tool name"));
        };
        let mut name = first.clone();
        let mut end = self.current.end;
        self.bump();
        while self.is_sym("-") && self.current.start == end {
            let next = self.peek_next();
            match &next.tok {
                Tok::Word(part) | Tok::Number(part) if next.start == end + 1 => {
                    name.push('-');
                    name.push_str(part);
                    end = next.end;
                    self.bump();
                    self.bump();
                }
                _ => break,
            }
        }
        Ok(name)
    }

    fn lambda(&mut self) -> Parsed<Lambda> {
        self.sym("(", "a callback `(fn x => ...)`")?;
        self.word("fn", "`fn` to start the callback")?;
        let param = self.param()?;
        if self.is_sym(",") {
            return Err(self.error_here(
                "this callback takes one parameter; only `fold`'s takes two (`fn acc, x => ...`)"
                    .into(),
            ));
        }
        self.sym("=>", "`=>` after the parameter")?;
        let body = Box::new(self.expr()?);
        self.sym(")", "`)` to close the callback")?;
        Ok(Lambda { param, body })
    }

    fn lambda2(&mut self) -> Parsed<Lambda2> {
        self.sym("(", "a callback `(fn acc, x => ...)`")?;
        self.word("fn", "`fn` to start the callback")?;
        let acc = self.param()?;
        self.sym(
            ",",
            "`,` and a second parameter: `fold` takes `(fn acc, x => ...)`",
        )?;
        let item = self.param()?;
        self.sym("=>", "`=>` after the parameters")?;
        let body = Box::new(self.expr()?);
        self.sym(")", "`)` to close the callback")?;
        Ok(Lambda2 { acc, item, body })
    }

    fn param(&mut self) -> Parsed<Param> {
        let name = self.ident("a parameter name")?;
        let ty = if self.is_sym(":") {
            self.bump();
            Some(self.ty()?)
        } else {
            None
        };
        Ok(Param { name, ty })
    }

    fn ty(&mut self) -> Parsed<Type> {
        let depth = self.depth;
        self.enter()?;
        let ty = match self.peek().clone() {
            Tok::Sym("[") => {
                self.bump();
                let of = Box::new(self.ty()?);
                self.sym("]", "`]` to close the list type")?;
                Type::List { of }
            }
            Tok::Sym("{") => {
                self.bump();
                let fields = self.sequence("}", |p| {
                    let name = p.field_name()?;
                    p.sym(":", "`:` and the field's type")?;
                    Ok((name, p.ty()?))
                })?;
                Type::Record { fields }
            }
            Tok::Word(w) => {
                let ty = match w.as_str() {
                    "Unit" => Type::Unit,
                    "Bool" => Type::Bool,
                    "Int" => Type::Int,
                    "Float" => Type::Float,
                    "String" => Type::String,
                    _ => return Err(self.expected(
                        "a type: `Unit`, `Bool`, `Int`, `Float`, `String`, `[T]` or `{name: T}`",
                    )),
                };
                self.bump();
                ty
            }
            _ => {
                return Err(self.expected(
                    "a type: `Unit`, `Bool`, `Int`, `Float`, `String`, `[T]` or `{name: T}`",
                ))
            }
        };
        self.depth = depth;
        Ok(ty)
    }
}

/// The text with its leading tool declarations blanked out (each character
/// but `\n` becomes a space, so lines and columns stay right).
///
/// A declaration starts with the word `tool` (no expression can) and ends at
/// `;`, or at the end of a line where its brackets are balanced, as the
/// compact catalog prints them; `--` starts a description that runs to the
/// end of the line. Declarations are not checked: the toolbox's catalog is
/// what a plan is checked against.
fn skip_declarations(text: &str) -> Cow<'_, str> {
    let mut blank = Vec::new();
    let bytes = text.as_bytes();
    let mut at = 0;
    loop {
        // Whitespace and comments before the next declaration.
        loop {
            if bytes.get(at).is_some_and(u8::is_ascii_whitespace) {
                at += 1;
            } else if text[at..].starts_with("(*") {
                match text[at + 2..].find("*)") {
                    Some(end) => at += 2 + end + 2,
                    None => return blanked(text, &blank),
                }
            } else {
                break;
            }
        }
        let rest = &text[at..];
        let is_declaration = rest.starts_with("tool")
            && !rest[4..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_');
        if !is_declaration {
            return blanked(text, &blank);
        }
        let start = at;
        let mut depth = 0usize;
        let mut chars = rest.char_indices().peekable();
        let mut end = text.len();
        while let Some((i, c)) = chars.next() {
            match c {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth = depth.saturating_sub(1),
                ';' if depth == 0 => {
                    end = at + i + 1;
                    break;
                }
                '\n' if depth == 0 => {
                    end = at + i;
                    break;
                }
                '-' if chars.peek().is_some_and(|(_, c)| *c == '-') => {
                    // A description: to the end of the line.
                    end = rest[i..].find('\n').map_or(text.len(), |n| at + i + n);
                    break;
                }
                '"' => {
                    // A string (an enum's value): to its closing quote.
                    let mut escaped = false;
                    for (_, c) in chars.by_ref() {
                        match c {
                            '\\' if !escaped => escaped = true,
                            '"' if !escaped => break,
                            _ => escaped = false,
                        }
                    }
                }
                _ => {}
            }
        }
        blank.push(start..end);
        at = end;
    }
}

fn blanked<'t>(text: &'t str, ranges: &[std::ops::Range<usize>]) -> Cow<'t, str> {
    if ranges.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for range in ranges {
        out.push_str(&text[at..range.start]);
        out.extend(
            text[range.clone()]
                .chars()
                .map(|c| if c == '\n' { '\n' } else { ' ' }),
        );
        at = range.end;
    }
    out.push_str(&text[at..]);
    Cow::Owned(out)
}
