//! Text to syntax tree with pest (a PEG grammar, `grammar.pest`); operator
//! precedence by pest's Pratt parser.
//!
//! Precedence, lowest first: `or`; `and`; comparisons (`== <> < <= > >=`,
//! non-associative in practice: `a < b < c` compares `(a < b)` with `c`);
//! `+ -`; `* /`; unary `- not`; `^` (right-associative, so `-x^2` is
//! `-(x^2)` and `2^3^2` is `2^9`).

use std::sync::OnceLock;

use pest::iterators::{Pair, Pairs};
use pest::pratt_parser::{Assoc, Op, PrattParser};
use pest::Parser as _;

use super::ast::{BinaryOp, ElementKind, Expr, Name, Span, Statement, UnaryOp};
use super::source::{EquationError, Source};

#[derive(pest_derive::Parser)]
#[grammar = "equations/grammar.pest"]
pub(crate) struct Grammar;

fn pratt() -> &'static PrattParser<Rule> {
    static PRATT: OnceLock<PrattParser<Rule>> = OnceLock::new();
    PRATT.get_or_init(|| {
        PrattParser::new()
            .op(Op::infix(Rule::or, Assoc::Left))
            .op(Op::infix(Rule::and, Assoc::Left))
            .op(Op::infix(Rule::eq, Assoc::Left)
                | Op::infix(Rule::ne, Assoc::Left)
                | Op::infix(Rule::le, Assoc::Left)
                | Op::infix(Rule::ge, Assoc::Left)
                | Op::infix(Rule::lt, Assoc::Left)
                | Op::infix(Rule::gt, Assoc::Left))
            .op(Op::infix(Rule::add, Assoc::Left) | Op::infix(Rule::sub, Assoc::Left))
            .op(Op::infix(Rule::mul, Assoc::Left) | Op::infix(Rule::div, Assoc::Left))
            .op(Op::prefix(Rule::neg) | Op::prefix(Rule::not))
            .op(Op::infix(Rule::pow, Assoc::Right))
    })
}

/// Parses a whole model.
///
/// # Errors
/// The first syntax error, located.
pub fn parse(source: &Source) -> Result<Vec<Statement>, EquationError> {
    let mut pairs =
        Grammar::parse(Rule::model, &source.text).map_err(|e| EquationError::syntax(source, e))?;
    let model = pairs.next().expect("the model rule");
    let mut out = Vec::new();
    for pair in model.into_inner() {
        if pair.as_rule() == Rule::EOI {
            break;
        }
        out.push(statement(source, pair)?);
    }
    Ok(out)
}

fn span(pair: &Pair<Rule>) -> Span {
    let s = pair.as_span();
    Span {
        start: s.start(),
        end: s.end(),
    }
}

fn name(pair: Pair<Rule>) -> Name {
    Name {
        text: pair.as_str().to_string(),
        span: span(&pair),
    }
}

fn statement(source: &Source, pair: Pair<Rule>) -> Result<Statement, EquationError> {
    let whole = span(&pair);
    let rule = pair.as_rule();
    let mut inner = pair.into_inner();
    let mut next = || inner.next().expect("grammar guarantees the part");
    Ok(match rule {
        Rule::parameter => {
            let n = name(next());
            Statement::Parameter(n, expr(source, next())?)
        }
        Rule::input => Statement::Input(name(next())),
        Rule::output => {
            let n = name(next());
            let e = inner.next().map(|p| expr(source, p)).transpose()?;
            Statement::Output(n, e)
        }
        Rule::state => {
            let n = name(next());
            let e = inner.next().map(|p| expr(source, p)).transpose()?;
            Statement::State(n, e)
        }
        Rule::element => {
            let kind = match next().as_str() {
                "hysteresis" => ElementKind::Hysteresis,
                _ => ElementKind::Backlash,
            };
            let n = name(next());
            let args = arguments(source, next())?;
            Statement::Element(kind, n, args, whole)
        }
        Rule::der_equation => {
            let n = name(next());
            let rhs = expr(source, next())?;
            let lhs = Span {
                start: whole.start,
                end: n.span.end + 1,
            };
            Statement::Der(n, rhs, lhs)
        }
        Rule::equation => {
            let n = name(next());
            Statement::Equation(n, expr(source, next())?)
        }
        Rule::when_clause => {
            let cond = expr(source, next())?;
            let mut resets = Vec::new();
            for r in inner {
                let mut parts = r.into_inner();
                let n = name(parts.next().expect("reset target"));
                let e = expr(source, parts.next().expect("reset value"))?;
                resets.push((n, e));
            }
            Statement::When(cond, resets, whole)
        }
        other => unreachable!("statement rule {other:?}"),
    })
}

fn arguments(source: &Source, pair: Pair<Rule>) -> Result<Vec<Expr>, EquationError> {
    pair.into_inner().map(|p| expr(source, p)).collect()
}

/// An `expr` pair to a tree.
fn expr(source: &Source, pair: Pair<Rule>) -> Result<Expr, EquationError> {
    debug_assert_eq!(pair.as_rule(), Rule::expr);
    climb(source, pair.into_inner())
}

fn climb(source: &Source, pairs: Pairs<Rule>) -> Result<Expr, EquationError> {
    pratt()
        .map_primary(|p| primary(source, p))
        .map_prefix(|op, rhs| {
            let rhs = rhs?;
            let s = span(&op).to(rhs.span());
            let op = match op.as_rule() {
                Rule::neg => UnaryOp::Neg,
                _ => UnaryOp::Not,
            };
            Ok(Expr::Unary(op, Box::new(rhs), s))
        })
        .map_infix(|lhs, op, rhs| {
            let (lhs, rhs) = (lhs?, rhs?);
            let s = lhs.span().to(rhs.span());
            let op = match op.as_rule() {
                Rule::or => BinaryOp::Or,
                Rule::and => BinaryOp::And,
                Rule::eq => BinaryOp::Eq,
                Rule::ne => BinaryOp::Ne,
                Rule::le => BinaryOp::Le,
                Rule::ge => BinaryOp::Ge,
                Rule::lt => BinaryOp::Lt,
                Rule::gt => BinaryOp::Gt,
                Rule::add => BinaryOp::Add,
                Rule::sub => BinaryOp::Sub,
                Rule::mul => BinaryOp::Mul,
                Rule::div => BinaryOp::Div,
                _ => BinaryOp::Pow,
            };
            Ok(Expr::Binary(op, Box::new(lhs), Box::new(rhs), s))
        })
        .parse(pairs)
}

fn primary(source: &Source, pair: Pair<Rule>) -> Result<Expr, EquationError> {
    let s = span(&pair);
    Ok(match pair.as_rule() {
        Rule::expr => expr(source, pair)?,
        Rule::number => {
            let v: f64 = pair.as_str().parse().map_err(|_| {
                EquationError::at(source, s, format!("`{}` is not a number", pair.as_str()))
            })?;
            if !v.is_finite() {
                return Err(EquationError::at(
                    source,
                    s,
                    format!("`{}` is too large for a 64-bit float", pair.as_str()),
                ));
            }
            Expr::Number(v, s)
        }
        Rule::ident => Expr::Var(name(pair)),
        Rule::time => Expr::Time(s),
        Rule::pre_call => Expr::Pre(name(pair.into_inner().next().expect("pre's name")), s),
        Rule::call => {
            let mut inner = pair.into_inner();
            let n = name(inner.next().expect("function name"));
            let args = arguments(source, inner.next().expect("arguments"))?;
            Expr::Call(n, args, s)
        }
        Rule::if_expr => {
            let mut parts: Vec<Expr> = pair
                .into_inner()
                .map(|p| expr(source, p))
                .collect::<Result<_, _>>()?;
            let otherwise = parts.pop().expect("else branch");
            let mut branches = Vec::new();
            let mut it = parts.into_iter();
            while let (Some(c), Some(v)) = (it.next(), it.next()) {
                branches.push((c, v));
            }
            Expr::If(branches, Box::new(otherwise), s)
        }
        other => unreachable!("primary rule {other:?}"),
    })
}
