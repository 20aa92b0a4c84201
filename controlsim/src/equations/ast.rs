//! The syntax tree of an equation model, as the parser gives it: names and
//! byte spans into the source, no meaning checked yet (that is
//! [`compile`](super::compile)'s job).

/// A byte range in the source, for error carets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub(crate) fn to(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
}

/// A name where it is written.
#[derive(Clone, Debug, PartialEq)]
pub struct Name {
    pub text: String,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    Neg,
    Not,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    Or,
    And,
    Eq,
    Ne,
    Le,
    Ge,
    Lt,
    Gt,
    Add,
    Sub,
    Mul,
    Div,
    Pow,
}

/// An expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Number(f64, Span),
    /// A parameter, input, state, variable or element by name.
    Var(Name),
    /// The simulation time in seconds.
    Time(Span),
    /// `pre(x)`: the value just before an event (only in a `when` reset).
    Pre(Name, Span),
    Unary(UnaryOp, Box<Expr>, Span),
    Binary(BinaryOp, Box<Expr>, Box<Expr>, Span),
    /// `if c1 then a1 elseif c2 then a2 ... else b`.
    If(Vec<(Expr, Expr)>, Box<Expr>, Span),
    /// A built-in function call.
    Call(Name, Vec<Expr>, Span),
}

impl Expr {
    pub fn span(&self) -> Span {
        match self {
            Expr::Number(_, s)
            | Expr::Time(s)
            | Expr::Pre(_, s)
            | Expr::Unary(_, _, s)
            | Expr::Binary(_, _, _, s)
            | Expr::If(_, _, s)
            | Expr::Call(_, _, s) => *s,
            Expr::Var(n) => n.span,
        }
    }
}

/// A stateful element's kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElementKind {
    Hysteresis,
    Backlash,
}

/// One statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Statement {
    Parameter(Name, Expr),
    Input(Name),
    /// `output y;` names an existing quantity, `output y = e;` defines one.
    Output(Name, Option<Expr>),
    State(Name, Option<Expr>),
    Element(ElementKind, Name, Vec<Expr>, Span),
    /// `der(x) = e`; the span covers `der(x)`.
    Der(Name, Expr, Span),
    /// `v = e`: an algebraic variable.
    Equation(Name, Expr),
    /// `when a < b then x = e, ...`.
    When(Expr, Vec<(Name, Expr)>, Span),
}
