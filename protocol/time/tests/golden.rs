//! The duration grammar pinned by `golden/durations.txt`, which the C++
//! parser (`wire::ParseDuration` in `ns3-scenarios/`) is held to as well: a
//! scenario's duration means the same on both sides of the wire.

use std::path::PathBuf;

use netloop_time::{ParseTimeError, SimTime};

/// What a line of the table expects.
#[derive(Debug, PartialEq, Eq)]
enum Expected {
    Nanos(u64),
    /// An error class: the name of a [`ParseTimeError`] variant in snake case.
    Error(String),
}

/// Undoes the table's escapes: `\\ \t \n \r \v \f \xHH`.
fn unescape(text: &str, line: usize) -> String {
    let mut bytes = Vec::new();
    let mut rest = text.as_bytes();
    while let Some((&b, tail)) = rest.split_first() {
        rest = tail;
        if b != b'\\' {
            bytes.push(b);
            continue;
        }
        let (&e, tail) = rest
            .split_first()
            .unwrap_or_else(|| panic!("line {line}: trailing backslash"));
        rest = tail;
        bytes.push(match e {
            b'\\' => b'\\',
            b't' => b'\t',
            b'n' => b'\n',
            b'r' => b'\r',
            b'v' => 0x0B,
            b'f' => 0x0C,
            b'x' => {
                let hex = std::str::from_utf8(&rest[..2]).unwrap();
                rest = &rest[2..];
                u8::from_str_radix(hex, 16)
                    .unwrap_or_else(|_| panic!("line {line}: bad escape \\x{hex}"))
            }
            other => panic!("line {line}: unknown escape \\{}", other as char),
        });
    }
    String::from_utf8(bytes).unwrap_or_else(|_| panic!("line {line}: not UTF-8"))
}

/// `(line number, input, expected)` for every case of the table.
fn table() -> Vec<(usize, String, Expected)> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("golden/durations.txt");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut cases = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if raw.is_empty() || raw.starts_with('#') {
            continue;
        }
        let (input, expected) = raw
            .rsplit_once('|')
            .unwrap_or_else(|| panic!("line {line}: no '|' in {raw:?}"));
        let expected = match expected.parse::<u64>() {
            Ok(ns) => Expected::Nanos(ns),
            Err(_) => Expected::Error(expected.to_string()),
        };
        cases.push((line, unescape(input, line), expected));
    }
    cases
}

fn class(error: &ParseTimeError) -> &'static str {
    match error {
        ParseTimeError::Empty => "empty",
        ParseTimeError::MissingUnit(_) => "missing_unit",
        ParseTimeError::Invalid(_) => "invalid",
        ParseTimeError::SubNanosecond(_) => "sub_nanosecond",
        ParseTimeError::Overflow(_) => "overflow",
    }
}

#[test]
fn the_parser_agrees_with_every_line_of_the_table() {
    let cases = table();
    assert!(cases.len() > 50, "only {} cases read", cases.len());
    let mut wrong = Vec::new();
    for (line, input, expected) in cases {
        let got = match input.parse::<SimTime>() {
            Ok(t) => Expected::Nanos(t.as_nanos()),
            Err(e) => Expected::Error(class(&e).to_string()),
        };
        if got != expected {
            wrong.push(format!(
                "line {line}: {input:?} gave {got:?}, expected {expected:?}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn every_valid_value_prints_as_a_string_that_parses_back() {
    for (line, _, expected) in table() {
        if let Expected::Nanos(ns) = expected {
            let printed = SimTime(ns).to_string();
            assert_eq!(printed.parse(), Ok(SimTime(ns)), "line {line}: {printed}");
        }
    }
}

#[test]
fn the_table_uses_every_error_class() {
    let classes: Vec<String> = table()
        .into_iter()
        .filter_map(|(_, _, e)| match e {
            Expected::Error(c) => Some(c),
            Expected::Nanos(_) => None,
        })
        .collect();
    for c in [
        "empty",
        "missing_unit",
        "invalid",
        "sub_nanosecond",
        "overflow",
    ] {
        assert!(classes.iter().any(|x| x == c), "no {c} case");
    }
    for c in &classes {
        assert!(
            [
                "empty",
                "missing_unit",
                "invalid",
                "sub_nanosecond",
                "overflow"
            ]
            .contains(&c.as_str()),
            "unknown error class {c}"
        );
    }
}
