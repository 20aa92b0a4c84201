//! A model's text with the name it is reported under, and errors that point
//! into it: file, line, column and a caret under the offending text.

use std::fmt;

use pest::error::{Error as PestError, ErrorVariant};

use super::ast::Span;
use super::parse::Rule;

/// The text of a model and the name errors call it by (a file path, or
/// `scenario.toml: loops[0].plant.equations` for inline text).
#[derive(Clone, Debug, PartialEq)]
pub struct Source {
    pub name: String,
    pub text: String,
}

/// A problem in a model, located in its text. `Display` gives a
/// compiler-style report:
///
/// ```text
///  --> ball.eq:3:10
///   |
/// 3 | der(v) = -q;
///   |           ^
///   |
///   = undefined variable `q`
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct EquationError {
    /// What is wrong, one line.
    pub message: String,
    /// 1-based line and column (in characters) of the start.
    pub line: usize,
    pub column: usize,
    /// The full report with the source line and caret.
    report: String,
}

impl EquationError {
    /// An error about `span` of `source`.
    pub(crate) fn at(source: &Source, span: Span, message: impl Into<String>) -> Self {
        let message = message.into();
        let text = source.text.as_str();
        let start = floor_char(text, span.start.min(text.len()));
        let end = floor_char(text, span.end.clamp(start, text.len()));
        let pest_span = pest::Span::new(text, start, end).expect("span inside the text");
        let err: PestError<Rule> = PestError::new_from_span(
            ErrorVariant::CustomError {
                message: message.clone(),
            },
            pest_span,
        )
        .with_path(&source.name);
        let (line, column) = pest_span.start_pos().line_col();
        EquationError {
            message,
            line,
            column,
            report: err.to_string(),
        }
    }

    /// A syntax error from the parser.
    pub(crate) fn syntax(source: &Source, err: PestError<Rule>) -> Self {
        let err = err.renamed_rules(rule_name).with_path(&source.name);
        let (line, column) = match err.line_col {
            pest::error::LineColLocation::Pos(p) | pest::error::LineColLocation::Span(p, _) => p,
        };
        let message = match &err.variant {
            ErrorVariant::ParsingError { .. } => {
                // pest's message is the last line of its report.
                let text = err.variant.message().to_string();
                format!("syntax error: {text}")
            }
            ErrorVariant::CustomError { message } => message.clone(),
        };
        EquationError {
            message,
            line,
            column,
            report: err.to_string(),
        }
    }
}

fn floor_char(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

impl fmt::Display for EquationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.report)
    }
}

impl std::error::Error for EquationError {}

/// How the grammar's rules read in "expected ..." messages.
fn rule_name(rule: &Rule) -> String {
    match rule {
        Rule::EOI => "end of file".into(),
        Rule::ident => "a name".into(),
        Rule::number => "a number".into(),
        Rule::expr => "an expression".into(),
        Rule::parameter
        | Rule::input
        | Rule::output
        | Rule::state
        | Rule::element
        | Rule::element_kind => "a declaration".into(),
        Rule::der_equation | Rule::equation => "an equation".into(),
        Rule::when_clause => "`when`".into(),
        Rule::reset => "a reset `x = expression`".into(),
        Rule::arguments => "arguments".into(),
        Rule::or => "`or`".into(),
        Rule::and => "`and`".into(),
        Rule::eq => "`==`".into(),
        Rule::ne => "`<>`".into(),
        Rule::le => "`<=`".into(),
        Rule::ge => "`>=`".into(),
        Rule::lt => "`<`".into(),
        Rule::gt => "`>`".into(),
        Rule::add => "`+`".into(),
        Rule::sub => "`-`".into(),
        Rule::mul => "`*`".into(),
        Rule::div => "`/`".into(),
        Rule::pow => "`^`".into(),
        Rule::neg => "`-`".into(),
        Rule::not => "`not`".into(),
        Rule::if_expr => "`if`".into(),
        Rule::pre_call => "`pre(...)`".into(),
        Rule::call => "a function call".into(),
        Rule::time => "`time`".into(),
        other => format!("{other:?}"),
    }
}
