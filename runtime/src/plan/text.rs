//! The λ-Tool text form of a plan: the printer, the grammar, and (in
//! [`parse`](super::parse)) the parser. Models write plans in this text.
//!
//! ```text
//! match exec tool lookup_account {id = "cust_12345"} {
//!   Ok(account) =>
//!     match exec tool issue_refund {account_id = account.id, amount = account.last_charge_cents} {
//!       Ok(refund) => "refund processed",
//!       Err(e) => "refund failed, customer not refunded"
//!     },
//!   Err(e) => "account lookup failed"
//! }
//! ```
//!
//! # Grammar (EBNF)
//!
//! ```text
//! plan     = { decl } expr EOF ;
//! decl     = "tool" { any } ( ";" | end of line ) ;   (* read, not checked *)
//! expr     = "let" ident "=" expr "in" expr
//!          | "if" expr "then" expr "else" expr
//!          | or ;
//! or       = and { "or" and } ;
//! and      = cmp { "and" cmp } ;
//! cmp      = concat [ ( "==" | "!=" | "<" | "<=" | ">" | ">=" ) concat ] ;
//! concat   = sum { "++" sum } ;
//! sum      = product { ( "+" | "-" ) product } ;
//! product  = app { ( "*" | "/" | "%" ) app } ;
//! app      = "not" postfix
//!          | "map" lambda postfix
//!          | "filter" lambda postfix
//!          | "fold" lambda2 postfix postfix
//!          | "call" "tool" toolname postfix
//!          | postfix ;
//! postfix  = atom { "." field } ;
//! atom     = int | float | string | "true" | "false" | "(" ")" | ident
//!          | "(" expr ")" | record | list | match ;
//! record   = "{" [ field "=" expr { "," field "=" expr } [ "," ] ] "}" ;
//! list     = "[" [ expr { "," expr } [ "," ] ] "]" ;
//! match    = "match" step "{" ok "," err [ "," ] "}"
//!          | "match" step "{" err "," ok [ "," ] "}" ;
//! ok       = "Ok" "(" ident ")" "=>" expr ;
//! err      = "Err" "(" ident ")" "=>" expr ;
//! step     = "exec" "tool" toolname postfix
//!          | "traverse" "(" "fn" param "=>" step ")" postfix ;
//! lambda   = "(" "fn" param "=>" expr ")" ;
//! lambda2  = "(" "fn" param "," param "=>" expr ")" ;
//! param    = ident [ ":" type ] ;
//! type     = "Unit" | "Bool" | "Int" | "Float" | "String" | "[" type "]"
//!          | "{" [ field ":" type { "," field ":" type } ] "}" ;
//! field    = word | string ;   (* keywords allowed: `e.tool` *)
//! word     = ( letter | "_" ) { letter | digit | "_" } ;
//! ident    = word - keyword ;
//! toolname = ( letter | "_" ) { letter | digit | "_" | "-" } ;
//! int      = [ "-" ] digit { digit } ;
//! float    = [ "-" ] digit { digit } ( "." digit { digit } [ exp ] | exp ) ;
//! exp      = ( "e" | "E" ) [ "+" | "-" ] digit { digit } ;
//! string   = '"' { char | "\" ( '"' | "\" | "n" | "r" | "t" | "u{" hex { hex } "}" ) } '"' ;
//! keyword  = "match" | "exec" | "call" | "tool" | "traverse" | "map" | "filter" | "fold"
//!          | "let" | "in" | "if" | "then" | "else" | "fn" | "not" | "and" | "or"
//!          | "true" | "false" | "Ok" | "Err" ;
//! ```
//!
//! Whitespace and comments `(* ... *)` may appear between tokens. A plan may
//! start with λ-Tool's tool declarations (`tool charge: {id: Int} -{Write}->
//! {tx_id: String};`), as a model copies them from the seed or from the
//! compact catalog (where a line ends a declaration and `--` starts its
//! description); they are skipped, since the toolbox's catalog, not the
//! model's copy of it, is what a plan is checked against. A tool call
//! is only ever the subject of a `match`: `exec` elsewhere is a parse error
//! that says so. `call tool NAME ARGS` is the call of a pure, infallible
//! tool, a plain value (see [`Expr::Call`]). A lambda is only ever the callback of a combinator. Nesting
//! is bounded by [`MAX_DEPTH`](super::MAX_DEPTH).
//!
//! The typing rules are the checker's ([`check`](mod@super::check)); among
//! them, the two branches of a `match` or an `if` give one type (`Ok(a) =>
//! a.email, Err(e) => e.message`, not `Err(e) => e`), as a list's elements
//! do, and branches of two types are refused with what to write.
//!
//! An argument (of `map`, `filter`, `fold`, `traverse`, `exec`, `call`,
//! `not`) is a `postfix`: one atom and its fields. A `map`, `filter`,
//! `fold`, `call`, `not`, `let` or `if` there is written in parentheses, and
//! without them the parser's error writes the fix:
//!
//! ```
//! use typed_tools::plan::Plan;
//!
//! let error = Plan::parse("map (fn o => o.id) filter (fn o => o.amount > 0) orders").unwrap_err();
//! assert_eq!(
//!     error.to_string(),
//!     "line 1, column 20: `filter` as the list of `map` must be in parentheses: \
//!      write `(filter (fn o => o.amount > 0) orders)`"
//! );
//! assert!(Plan::parse("map (fn o => o.id) (filter (fn o => o.amount > 0) orders)").is_ok());
//! ```
//!
//! # Printing
//!
//! The printer is deterministic: the same IR always gives the same text, and
//! the text parses back to the same IR. Its layout rules, with two spaces per
//! level:
//!
//! - a `match` always takes several lines: `match STEP {`, one line per
//!   branch one level in, then `}`; a branch whose body takes several lines
//!   puts it on the next line, one more level in;
//! - `let x = v in` ends its line and the body follows at the same level;
//! - an `if` whose parts all fit on one line is one line; otherwise `then`
//!   and `else` start lines with their branch one level in;
//! - a lambda whose body takes several lines puts it on the next line, one
//!   level in, and its closing `)` on a line of its own;
//! - everything else is one line, with `, ` between elements, spaces around
//!   operators, and parentheses only where precedence needs them.
//!
//! ```
//! use typed_tools::plan::{BinaryOp, Expr, Plan};
//!
//! let plan = Plan::new(Expr::binary(
//!     BinaryOp::Mul,
//!     Expr::binary(BinaryOp::Add, Expr::int(1), Expr::int(2)),
//!     Expr::var("x").get("n"),
//! ));
//! assert_eq!(plan.to_string(), "(1 + 2) * x.n");
//! ```

use std::fmt::{self, Write};

use super::ir::{Branch, Expr, Lambda, Lambda2, Param, Plan, Step, Type};
use crate::schema::name::notation;

/// The words that cannot be variables or bare field names.
pub const KEYWORDS: [&str; 21] = [
    "match", "exec", "call", "tool", "traverse", "map", "filter", "fold", "let", "in", "if",
    "then", "else", "fn", "not", "and", "or", "true", "false", "Ok", "Err",
];

/// Precedences, higher binds tighter; binary operators use 1 to 6.
const OPEN: u8 = 0;
const APP: u8 = 7;
const POSTFIX: u8 = 8;
const ATOM: u8 = 9;

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut printer = Printer { out: String::new() };
        printer.expr(&self.body, OPEN, 0);
        f.write_str(&printer.out)
    }
}

struct Printer {
    out: String,
}

fn precedence(expr: &Expr) -> u8 {
    match expr {
        Expr::Let { .. } | Expr::If { .. } => OPEN,
        Expr::Binary { op, .. } => op.precedence(),
        Expr::Not { .. }
        | Expr::Map { .. }
        | Expr::Filter { .. }
        | Expr::Fold { .. }
        | Expr::Call { .. } => APP,
        Expr::Get { .. } => POSTFIX,
        _ => ATOM,
    }
}

/// Whether the expression prints on several lines (see the layout rules).
fn multiline(expr: &Expr) -> bool {
    match expr {
        Expr::Match { .. } | Expr::Let { .. } => true,
        Expr::Unit
        | Expr::Bool { .. }
        | Expr::Int { .. }
        | Expr::Float { .. }
        | Expr::String { .. }
        | Expr::Var { .. } => false,
        Expr::Record { fields } => fields.iter().any(|(_, e)| multiline(e)),
        Expr::List { items } => items.iter().any(multiline),
        Expr::Get { of, .. } => multiline(of),
        Expr::Not { operand } => multiline(operand),
        Expr::Call { arg, .. } => multiline(arg),
        Expr::If {
            cond,
            then,
            otherwise,
        } => multiline(cond) || multiline(then) || multiline(otherwise),
        Expr::Binary { left, right, .. } => multiline(left) || multiline(right),
        Expr::Map { func, list } | Expr::Filter { func, list } => {
            multiline(&func.body) || multiline(list)
        }
        Expr::Fold { func, init, list } => {
            multiline(&func.body) || multiline(init) || multiline(list)
        }
    }
}

impl Printer {
    fn newline(&mut self, indent: usize) {
        self.out.push('\n');
        for _ in 0..indent {
            self.out.push_str("  ");
        }
    }

    fn expr(&mut self, expr: &Expr, min: u8, indent: usize) {
        if precedence(expr) < min {
            self.out.push('(');
            self.expr(expr, OPEN, indent);
            self.out.push(')');
            return;
        }
        match expr {
            Expr::Unit => self.out.push_str("()"),
            Expr::Bool { value } => write!(self.out, "{value}").unwrap_or(()),
            Expr::Int { value } => write!(self.out, "{value}").unwrap_or(()),
            Expr::Float { value } => write!(self.out, "{value:?}").unwrap_or(()),
            Expr::String { value } => {
                write!(self.out, "{}", Quoted(value)).unwrap_or(());
            }
            Expr::Var { name } => self.out.push_str(name),
            Expr::Record { fields } => {
                self.out.push('{');
                for (i, (name, value)) in fields.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    write!(self.out, "{}", FieldName(name)).unwrap_or(());
                    self.out.push_str(" = ");
                    self.expr(value, OPEN, indent);
                }
                self.out.push('}');
            }
            Expr::List { items } => {
                self.out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    self.expr(item, OPEN, indent);
                }
                self.out.push(']');
            }
            Expr::Get { of, field } => {
                self.expr(of, POSTFIX, indent);
                write!(self.out, ".{}", FieldName(field)).unwrap_or(());
            }
            Expr::Match { on, ok, err } => {
                self.out.push_str("match ");
                self.step(on, indent);
                self.out.push_str(" {");
                self.branch("Ok", ok, indent + 1);
                self.out.push(',');
                self.branch("Err", err, indent + 1);
                self.newline(indent);
                self.out.push('}');
            }
            Expr::Let { name, value, body } => {
                write!(self.out, "let {name} = ").unwrap_or(());
                self.expr(value, OPEN, indent);
                self.out.push_str(" in");
                self.newline(indent);
                self.expr(body, OPEN, indent);
            }
            Expr::If {
                cond,
                then,
                otherwise,
            } => {
                self.out.push_str("if ");
                self.expr(cond, OPEN, indent);
                if multiline(expr) {
                    self.out.push_str(" then");
                    self.newline(indent + 1);
                    self.expr(then, OPEN, indent + 1);
                    self.newline(indent);
                    self.out.push_str("else");
                    self.newline(indent + 1);
                    self.expr(otherwise, OPEN, indent + 1);
                } else {
                    self.out.push_str(" then ");
                    self.expr(then, OPEN, indent);
                    self.out.push_str(" else ");
                    self.expr(otherwise, OPEN, indent);
                }
            }
            Expr::Not { operand } => {
                self.out.push_str("not ");
                self.expr(operand, POSTFIX, indent);
            }
            Expr::Binary { op, left, right } => {
                let p = op.precedence();
                // Comparisons do not chain; the others associate to the left.
                let left_min = if p == 3 { p + 1 } else { p };
                self.expr(left, left_min, indent);
                write!(self.out, " {} ", op.symbol()).unwrap_or(());
                self.expr(right, p + 1, indent);
            }
            Expr::Map { func, list } | Expr::Filter { func, list } => {
                let word = if matches!(expr, Expr::Map { .. }) {
                    "map "
                } else {
                    "filter "
                };
                self.out.push_str(word);
                self.lambda(func, indent);
                self.out.push(' ');
                self.expr(list, POSTFIX, indent);
            }
            Expr::Call { tool, arg } => {
                write!(self.out, "call tool {tool} ").unwrap_or(());
                self.expr(arg, POSTFIX, indent);
            }
            Expr::Fold { func, init, list } => {
                self.out.push_str("fold ");
                self.lambda2(func, indent);
                self.out.push(' ');
                self.expr(init, POSTFIX, indent);
                self.out.push(' ');
                self.expr(list, POSTFIX, indent);
            }
        }
    }

    fn branch(&mut self, tag: &str, branch: &Branch, indent: usize) {
        self.newline(indent);
        write!(self.out, "{tag}({}) =>", branch.bind).unwrap_or(());
        if multiline(&branch.body) {
            self.newline(indent + 1);
            self.expr(&branch.body, OPEN, indent + 1);
        } else {
            self.out.push(' ');
            self.expr(&branch.body, OPEN, indent);
        }
    }

    fn step(&mut self, step: &Step, indent: usize) {
        match step {
            Step::Exec { tool, arg } => {
                write!(self.out, "exec tool {tool} ").unwrap_or(());
                self.expr(arg, POSTFIX, indent);
            }
            Step::Traverse { param, body, list } => {
                self.out.push_str("traverse (fn ");
                self.param(param);
                self.out.push_str(" => ");
                self.step(body, indent);
                self.out.push_str(") ");
                self.expr(list, POSTFIX, indent);
            }
        }
    }

    fn lambda(&mut self, lambda: &Lambda, indent: usize) {
        self.out.push_str("(fn ");
        self.param(&lambda.param);
        self.lambda_body(&lambda.body, indent);
    }

    fn lambda2(&mut self, lambda: &Lambda2, indent: usize) {
        self.out.push_str("(fn ");
        self.param(&lambda.acc);
        self.out.push_str(", ");
        self.param(&lambda.item);
        self.lambda_body(&lambda.body, indent);
    }

    fn lambda_body(&mut self, body: &Expr, indent: usize) {
        if multiline(body) {
            self.out.push_str(" =>");
            self.newline(indent + 1);
            self.expr(body, OPEN, indent + 1);
            self.newline(indent);
        } else {
            self.out.push_str(" => ");
            self.expr(body, OPEN, indent);
        }
        self.out.push(')');
    }

    fn param(&mut self, param: &Param) {
        self.out.push_str(&param.name);
        if let Some(ty) = &param.ty {
            write!(self.out, ": {ty}").unwrap_or(());
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Unit => f.write_str(notation::UNIT),
            Type::Bool => f.write_str(notation::BOOL),
            Type::Int => f.write_str(notation::INT),
            Type::Float => f.write_str(notation::FLOAT),
            Type::String => f.write_str(notation::STRING),
            Type::List { of } => notation::list(f, of),
            Type::Record { fields } => notation::record(
                f,
                fields.iter().map(|(name, ty)| (FieldName(name), true, ty)),
                false,
            ),
        }
    }
}

struct Quoted<'a>(&'a str);

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_string(f, self.0)
    }
}

/// A field name as λ-Tool writes it (see [`write_field_name`]).
pub(crate) struct FieldName<'a>(pub(crate) &'a str);

impl fmt::Display for FieldName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_field_name(f, self.0)
    }
}

/// Writes a string literal: `"..."` with `\"`, `\\`, `\n`, `\r`, `\t` and
/// `\u{..}` for other control characters.
pub(crate) fn write_string(f: &mut impl Write, s: &str) -> fmt::Result {
    f.write_char('"')?;
    for c in s.chars() {
        match c {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            '\n' => f.write_str("\\n")?,
            '\r' => f.write_str("\\r")?,
            '\t' => f.write_str("\\t")?,
            c if c.is_control() => write!(f, "\\u{{{:x}}}", c as u32)?,
            c => f.write_char(c)?,
        }
    }
    f.write_char('"')
}

/// Whether `name` can be written bare as a field name: identifier-shaped
/// (keywords too: where a field name is expected, nothing else can stand).
pub(crate) fn is_field_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Writes a field name: bare when it is identifier-shaped, quoted otherwise.
pub(crate) fn write_field_name(f: &mut impl Write, name: &str) -> fmt::Result {
    if is_field_name(name) {
        f.write_str(name)
    } else {
        write_string(f, name)
    }
}
