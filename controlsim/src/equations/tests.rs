//! Unit tests of the language: parsing, folding, errors.

use std::collections::BTreeMap;

use super::*;
use crate::plant::Plant;

fn model(text: &str) -> Result<EquationModel, CompileError> {
    EquationModel::new(
        &Source {
            name: "m.eq".into(),
            text: text.into(),
        },
        &BTreeMap::new(),
    )
}

fn error(text: &str) -> EquationError {
    match model(text) {
        Err(CompileError::Source(e)) => e,
        other => panic!("expected a located error, got {other:?}"),
    }
}

#[test]
fn precedence_and_functions() {
    let m = model(
        "input u; state x(start = 2); der(x) = -x^2 + 2^3^2 - u*3 + atan2(1, 1)*4; output y = if x > 1 then sat(x, 0, 1.5) elseif x > 0 then 7 else deadzone(x, 0.5);",
    )
    .unwrap();
    let mut dx = [0.0];
    m.derivative(0.0, &[2.0], &[1.0], &mut dx);
    assert_eq!(dx[0], -4.0 + 512.0 - 3.0 + std::f64::consts::PI);
    let mut y = [0.0];
    m.output(0.0, &[2.0], &[0.0], &mut y);
    assert_eq!(y[0], 1.5);
    m.output(0.0, &[0.5], &[0.0], &mut y);
    assert_eq!(y[0], 7.0);
    m.output(0.0, &[-2.0], &[0.0], &mut y);
    assert_eq!(y[0], -1.5);
}

#[test]
fn variables_in_any_order_and_parameters_fold() {
    let m = model(
        "parameter k = 2 * c; parameter c = 3; state x(start = k); der(x) = b; b = a * 2; a = x + k; output b;",
    )
    .unwrap();
    assert_eq!(m.compiled().x0, vec![6.0]);
    let mut dx = [0.0];
    m.derivative(0.0, &[1.0], &[], &mut dx);
    assert_eq!(dx[0], 14.0);
}

#[test]
fn syntax_error_has_file_line_column_and_caret() {
    let e = error("state x;\nder(x) = 1 +;\noutput x;");
    assert_eq!((e.line, e.column), (2, 13), "{e}");
    let shown = e.to_string();
    assert!(shown.contains("m.eq:2:13"), "{shown}");
    assert!(shown.contains('^'), "{shown}");
}

#[test]
fn semantic_errors_are_located() {
    let cases: &[(&str, (usize, usize), &str)] = &[
        (
            "state x;\nder(x) = q;\noutput x;",
            (2, 10),
            "undefined variable `q`",
        ),
        (
            "state x;\nder(x) = 1;\ny = 1;\ny = 2;\noutput x;",
            (4, 1),
            "`y` is defined twice",
        ),
        (
            "state x;\nder(x) = x / 0;\noutput x;",
            (2, 14),
            "division by a literal zero",
        ),
        (
            "state x;\nder(x) = foo(x);\noutput x;",
            (2, 10),
            "unknown function `foo`",
        ),
        (
            "state x;\nder(x) = atan2(x);\noutput x;",
            (2, 10),
            "`atan2` takes 2 arguments, found 1",
        ),
        (
            "state x;\nder(x) = a;\na = b + 1;\nb = 2 * a;\noutput x;",
            (3, 1),
            "algebraic loop: a -> b -> a",
        ),
        ("state x;\noutput x;", (1, 7), "state `x` has no equation"),
        (
            "state x;\nder(x) = 1;\nder(x) = 2;\noutput x;",
            (3, 1),
            "`der(x)` is defined twice",
        ),
        (
            "state x;\nder(x) = pre(x);\noutput x;",
            (2, 10),
            "`pre(x)` is only allowed",
        ),
        (
            "state x;\nder(x) = 1;\nwhen x then x = 0;\noutput x;",
            (3, 6),
            "must be one comparison",
        ),
        (
            "parameter p = time;\nstate x;\nder(x) = p;\noutput x;",
            (1, 15),
            "not constant",
        ),
        ("state x;\nder(x) = 1;", (1, 1), "no output"),
    ];
    for (text, at, message) in cases {
        let e = error(text);
        assert!(e.message.contains(message), "{text}: {e}");
        assert_eq!((e.line, e.column), *at, "{text}: {e}");
        assert!(
            e.to_string().contains(&format!("m.eq:{}:{}", at.0, at.1)),
            "{e}"
        );
    }
}

#[test]
fn unknown_parameter_override_is_named() {
    let mut o = BTreeMap::new();
    o.insert("gg".to_string(), 1.0);
    let err = EquationModel::new(
        &Source {
            name: "m.eq".into(),
            text: "parameter g = 1; state x; der(x) = g; output x;".into(),
        },
        &o,
    )
    .unwrap_err();
    assert!(matches!(err, CompileError::UnknownParameter(u) if u.name == "gg" && u.known == ["g"]));
}

/// A relay switches at its thresholds, located by the guard machinery.
#[test]
fn hysteresis_guard_and_toggle() {
    let m = model("state x; der(x) = 1; hysteresis r(x, -1, 1, -5, 5); output r;").unwrap();
    assert_eq!(m.compiled().x0, vec![0.0, -5.0]);
    assert_eq!(m.guard_count(), 1);
    let mut g = [0.0];
    m.guards(0.0, &[0.5, -5.0], &[], &mut g);
    assert_eq!(g[0], 0.5); // off: high - x
    m.guards(0.0, &[0.5, 5.0], &[], &mut g);
    assert_eq!(g[0], 1.5); // on: x - low
    let mut x = [1.0, -5.0];
    m.reset(0.0, &mut x, &[], 0);
    assert_eq!(x, [1.0, 5.0]);
    m.reset(0.0, &mut x, &[], 0);
    assert_eq!(x, [1.0, -5.0]);
}

/// `a - c*x` and `-c*x` are summed as the written expression: same bits.
#[test]
fn sums_keep_the_written_arithmetic() {
    let m =
        model("input u; state a; state b; der(a) = b; der(b) = -2*a - 0.6*b + u - 3; output a;")
            .unwrap();
    let (a, b, u) = (0.123456789f64, -9.87654321f64, 0.3f64);
    let mut dx = [0.0; 2];
    m.derivative(0.0, &[a, b], &[u], &mut dx);
    assert_eq!(dx[1].to_bits(), (-2.0 * a - 0.6 * b + u - 3.0).to_bits());
}

/// Linear models run as affine rows straight on `x` and `u`
/// (`affine.rs`); every result has the bits the register machine computes,
/// over values that exercise rounding, signed zeros and infinities.
#[test]
fn affine_rows_give_the_register_machines_bits() {
    let affine = [
        // the `equations` bench's linear plant
        "input u; state x1(start = 0.3); state x2; state x3; state x4; der(x1) = x2; der(x2) = -2*x1 - 0.6*x2 + x3 + u; der(x3) = x4; der(x4) = 0.5*x1 - 10*x3 - 2.4*x4 + 0.5*u; output x1;",
        // Add, Sub, constants in sums, a constant row, an input row, parameters,
        // rows of two and three terms
        "parameter k = 3; input u; input w; state a; state b; der(a) = a + b; der(b) = u - w; output y = 5; output z = 2*a - b; output w; output s = k*a - 2 + b*k - 0.1*w + 7 - u; output t = a - 2*b + 3;",
        // a long row (the general loop) and one-term rows
        "input u; state a; state b; state c; der(a) = 1*a + 2*b + 3*c + 4*u - 5*a + 6*b - 7; der(b) = 0.1*c; der(c) = u*3; output a; output c;",
    ];
    let values = [
        0.1,
        -0.0,
        0.0,
        1e300,
        -3.3e-310,
        f64::INFINITY,
        2.0f64.sqrt(),
        -7.25,
    ];
    for text in affine {
        let m = model(text).unwrap();
        assert!(m.derivative_is_affine() && m.output_is_affine(), "{text}");
        let sig = m.signature();
        let (n, nu, ny) = (sig.states.len(), sig.inputs.len(), sig.outputs.len());
        for shift in 0..values.len() {
            let pick = |i: usize| values[(i * 3 + shift) % values.len()];
            let x: Vec<f64> = (0..n).map(pick).collect();
            let u: Vec<f64> = (n..n + nu).map(pick).collect();
            let (mut dx, mut y) = (vec![9.0; n], vec![9.0; ny]);
            let (mut dx0, mut y0) = (vec![8.0; n], vec![8.0; ny]);
            m.derivative(0.5, &x, &u, &mut dx);
            m.output(0.5, &x, &u, &mut y);
            m.on_slots(0.5, &x, &u, &mut dx0, &mut y0);
            let bits = |v: &[f64]| v.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&dx), bits(&dx0), "{text} at {x:?} {u:?}");
            assert_eq!(bits(&y), bits(&y0), "{text} at {x:?} {u:?}");
        }
    }
    // Not affine: time, a product of states, a function, a variable read
    // by another instruction.
    for text in [
        "state a; der(a) = time; output a;",
        "state a; state b; der(a) = a*b; der(b) = 0; output a;",
        "state a; der(a) = sin(a); output a;",
        "state a; der(a) = 2*v + 1; v = a + 1; output a;",
    ] {
        assert!(!model(text).unwrap().derivative_is_affine(), "{text}");
    }
}
