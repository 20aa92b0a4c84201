//! Deserializing a parsed TOML tree with serde's verdict kept as data
//! ([`Fault`]): the unknown field, the unknown variant and the names serde
//! expected, the value of a wrong type. serde hands these to the error type
//! of the deserializer through [`serde::de::Error::unknown_field`] and its
//! siblings; `toml::de::Error` keeps only their text, so the loader would
//! have to read the key back out of the message. [`TomlTree`] reads a
//! `toml::Value` exactly as toml's own deserializer does, but with
//! [`TreeError`], which keeps them.
//!
//! The message ([`TreeError::message`]) is serde's own text for the fault,
//! so a scenario's errors read as before.

use std::fmt;

use serde::de::{self, value::Error as SerdeText, IntoDeserializer, Unexpected};

/// What serde refused, as data.
#[derive(Clone, Debug, PartialEq)]
pub enum Fault {
    /// A key the table does not have; `expected` lists the ones it has.
    UnknownField {
        field: String,
        expected: &'static [&'static str],
    },
    /// A variant (a `kind`, a choice) that does not exist; `expected` lists
    /// the ones that do.
    UnknownVariant {
        variant: String,
        expected: &'static [&'static str],
    },
    /// A key that must be written and is not.
    MissingField { field: &'static str },
    /// A value of the wrong type (`found`), or of the right type that the
    /// type refuses: serde's words for it (`invalid type: string "fast"`)
    /// and for what it expected (`f64`).
    WrongValue {
        found: Found,
        what: String,
        expected: String,
    },
    /// Anything else, said in the message only (a check of a type's own).
    Other,
}

/// The value serde was given where it refused one.
#[derive(Clone, Debug, PartialEq)]
pub enum Found {
    Bool(bool),
    Integer(i128),
    Float(f64),
    Str(String),
    Array,
    Table,
    /// Something a TOML tree cannot hold (a unit, bytes, ...).
    Other,
}

impl Found {
    fn of(unexpected: &Unexpected<'_>) -> Found {
        match *unexpected {
            Unexpected::Bool(b) => Found::Bool(b),
            Unexpected::Signed(i) => Found::Integer(i.into()),
            Unexpected::Unsigned(u) => Found::Integer(u.into()),
            Unexpected::Float(f) => Found::Float(f),
            Unexpected::Str(s) => Found::Str(s.to_string()),
            Unexpected::Char(c) => Found::Str(c.to_string()),
            Unexpected::Seq => Found::Array,
            Unexpected::Map => Found::Table,
            _ => Found::Other,
        }
    }

    /// Whether `value` is what was found.
    pub fn is(&self, value: &toml::Value) -> bool {
        match (self, value) {
            (Found::Bool(a), toml::Value::Boolean(b)) => a == b,
            (Found::Integer(a), toml::Value::Integer(b)) => *a == i128::from(*b),
            (Found::Float(a), toml::Value::Float(b)) => a == b,
            (Found::Str(a), toml::Value::String(b)) => a == b,
            (Found::Array, toml::Value::Array(_)) => true,
            (Found::Table, toml::Value::Table(_)) => true,
            _ => false,
        }
    }
}

/// serde's error for a [`TomlTree`]: the [`Fault`] and serde's text for it.
#[derive(Clone, Debug, PartialEq)]
pub struct TreeError {
    pub fault: Fault,
    message: String,
}

impl TreeError {
    fn new(fault: Fault, text: SerdeText) -> TreeError {
        TreeError {
            fault,
            message: text.to_string(),
        }
    }

    /// serde's text, as toml's error would give it.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for TreeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for TreeError {}

/// Each constructor keeps its arguments, and the text serde's default
/// implementation gives them (the one `toml::de::Error` shows).
impl de::Error for TreeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        TreeError::new(Fault::Other, SerdeText::custom(msg))
    }

    fn invalid_type(unexp: Unexpected<'_>, exp: &dyn de::Expected) -> Self {
        let fault = Fault::WrongValue {
            found: Found::of(&unexp),
            what: format!("invalid type: {unexp}"),
            expected: exp.to_string(),
        };
        TreeError::new(fault, SerdeText::invalid_type(unexp, exp))
    }

    fn invalid_value(unexp: Unexpected<'_>, exp: &dyn de::Expected) -> Self {
        let fault = Fault::WrongValue {
            found: Found::of(&unexp),
            what: format!("invalid value: {unexp}"),
            expected: exp.to_string(),
        };
        TreeError::new(fault, SerdeText::invalid_value(unexp, exp))
    }

    fn invalid_length(len: usize, exp: &dyn de::Expected) -> Self {
        let fault = Fault::WrongValue {
            found: Found::Array,
            what: format!("invalid length {len}"),
            expected: exp.to_string(),
        };
        TreeError::new(fault, SerdeText::invalid_length(len, exp))
    }

    fn unknown_variant(variant: &str, expected: &'static [&'static str]) -> Self {
        let fault = Fault::UnknownVariant {
            variant: variant.to_string(),
            expected,
        };
        TreeError::new(fault, SerdeText::unknown_variant(variant, expected))
    }

    fn unknown_field(field: &str, expected: &'static [&'static str]) -> Self {
        let fault = Fault::UnknownField {
            field: field.to_string(),
            expected,
        };
        TreeError::new(fault, SerdeText::unknown_field(field, expected))
    }

    fn missing_field(field: &'static str) -> Self {
        TreeError::new(
            Fault::MissingField { field },
            SerdeText::missing_field(field),
        )
    }
}

/// A `toml::Value` to deserialize from, read as `toml::Value`'s own
/// `Deserializer` reads it (the same visits, the same enum forms, the same
/// messages), with [`TreeError`] as the error. A datetime is read as its
/// text (no scenario type holds one).
pub struct TomlTree(pub toml::Value);

type Result<T> = std::result::Result<T, TreeError>;

impl<'de> de::Deserializer<'de> for TomlTree {
    type Error = TreeError;

    fn deserialize_any<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.0 {
            toml::Value::Boolean(v) => visitor.visit_bool(v),
            toml::Value::Integer(n) => visitor.visit_i64(n),
            toml::Value::Float(n) => visitor.visit_f64(n),
            toml::Value::String(v) => visitor.visit_string(v),
            toml::Value::Datetime(v) => visitor.visit_string(v.to_string()),
            toml::Value::Array(v) => {
                let len = v.len();
                let mut access = Items(v.into_iter());
                let seq = visitor.visit_seq(&mut access)?;
                match access.0.len() {
                    0 => Ok(seq),
                    _ => Err(de::Error::invalid_length(len, &"fewer elements in array")),
                }
            }
            toml::Value::Table(v) => {
                let len = v.len();
                let mut access = Entries {
                    iter: v.into_iter(),
                    value: None,
                };
                let map = visitor.visit_map(&mut access)?;
                match access.iter.len() {
                    0 => Ok(map),
                    _ => Err(de::Error::invalid_length(len, &"fewer elements in map")),
                }
            }
        }
    }

    fn deserialize_enum<V: de::Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        match self.0 {
            toml::Value::String(variant) => visitor.visit_enum(variant.into_deserializer()),
            toml::Value::Table(variant) => match variant.len() {
                0 => Err(de::Error::custom(
                    "wanted exactly 1 element, found 0 elements",
                )),
                1 => visitor.visit_enum(OneEntry(variant.into_iter().next())),
                _ => Err(de::Error::custom(
                    "wanted exactly 1 element, more than 1 element",
                )),
            },
            _ => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"string only",
            )),
        }
    }

    // TOML has no null: a value that is there is `Some`.
    fn deserialize_option<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: de::Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    serde::forward_to_deserialize_any! {
        bool u8 u16 u32 u64 i8 i16 i32 i64 f32 f64 char str string unit seq
        bytes byte_buf map unit_struct tuple_struct struct
        tuple ignored_any identifier
    }
}

impl<'de> IntoDeserializer<'de, TreeError> for TomlTree {
    type Deserializer = TomlTree;

    fn into_deserializer(self) -> TomlTree {
        self
    }
}

/// An array's elements.
struct Items(std::vec::IntoIter<toml::Value>);

impl<'de> de::SeqAccess<'de> for Items {
    type Error = TreeError;

    fn next_element_seed<T: de::DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>> {
        self.0
            .next()
            .map(|value| seed.deserialize(TomlTree(value)))
            .transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

/// A table's entries.
struct Entries {
    iter: <toml::Table as IntoIterator>::IntoIter,
    value: Option<toml::Value>,
}

impl<'de> de::MapAccess<'de> for Entries {
    type Error = TreeError;

    fn next_key_seed<T: de::DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        let Some((key, value)) = self.iter.next() else {
            return Ok(None);
        };
        self.value = Some(value);
        seed.deserialize(TomlTree(toml::Value::String(key)))
            .map(Some)
    }

    fn next_value_seed<T: de::DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value> {
        match self.value.take() {
            Some(value) => seed.deserialize(TomlTree(value)),
            None => Err(de::Error::custom("value is missing")),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.iter.len())
    }
}

/// A one-entry table as an enum: `{ variant = content }`.
struct OneEntry(Option<(String, toml::Value)>);

impl<'de> de::EnumAccess<'de> for OneEntry {
    type Error = TreeError;
    type Variant = Content;

    fn variant_seed<V: de::DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Content)> {
        let Some((key, value)) = self.0 else {
            return Err(de::Error::custom(
                "expected table with exactly 1 entry, found empty table",
            ));
        };
        let variant = seed.deserialize(key.into_deserializer())?;
        Ok((variant, Content(value)))
    }
}

/// The content of a variant written as `{ variant = content }`.
struct Content(toml::Value);

impl<'de> de::VariantAccess<'de> for Content {
    type Error = TreeError;

    fn unit_variant(self) -> Result<()> {
        match self.0 {
            toml::Value::Array(v) if v.is_empty() => Ok(()),
            toml::Value::Array(_) => Err(de::Error::custom("expected empty array")),
            toml::Value::Table(v) if v.is_empty() => Ok(()),
            toml::Value::Table(_) => Err(de::Error::custom("expected empty table")),
            e => Err(de::Error::custom(format!(
                "expected table, found {}",
                e.type_str()
            ))),
        }
    }

    fn newtype_variant_seed<T: de::DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value> {
        seed.deserialize(TomlTree(self.0))
    }

    fn tuple_variant<V: de::Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value> {
        let values = match self.0 {
            toml::Value::Array(values) => values,
            toml::Value::Table(values) => values
                .into_iter()
                .enumerate()
                .map(|(index, (key, value))| match key.parse::<usize>() {
                    Ok(at) if at == index => Ok(value),
                    _ => Err(de::Error::custom(format!(
                        "expected table key `{index}`, but was `{key}`"
                    ))),
                })
                .collect::<Result<Vec<_>>>()?,
            e => {
                return Err(de::Error::custom(format!(
                    "expected table, found {}",
                    e.type_str()
                )))
            }
        };
        if values.len() != len {
            return Err(de::Error::custom(format!(
                "expected tuple with length {len}"
            )));
        }
        de::Deserializer::deserialize_any(TomlTree(toml::Value::Array(values)), visitor)
    }

    fn struct_variant<V: de::Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        de::Deserializer::deserialize_any(TomlTree(self.0), visitor)
    }
}

/// Deserializes `T` from `value`, with the path of the key serde refused
/// (serde_path_to_error) and its [`Fault`].
///
/// # Errors
/// What serde refused, and where.
pub fn deserialize<T: de::DeserializeOwned>(
    value: toml::Value,
) -> std::result::Result<T, serde_path_to_error::Error<TreeError>> {
    serde_path_to_error::deserialize(TomlTree(value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Gain {
        kp: f64,
        #[serde(default)]
        mode: Option<Mode>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum Mode {
        Fast,
        Slow,
    }

    #[derive(Debug, Deserialize)]
    #[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
    #[allow(dead_code)]
    enum Controller {
        Pid { kp: f64 },
        Bang { level: u8 },
    }

    fn tree(text: &str) -> toml::Value {
        toml::Value::Table(toml::from_str(text).unwrap())
    }

    /// The same text as toml's own deserializer, with the fault kept.
    fn both<T: de::DeserializeOwned + fmt::Debug>(text: &str) -> (Fault, String) {
        let ours = deserialize::<T>(tree(text)).unwrap_err();
        let toml_text = T::deserialize(tree(text))
            .unwrap_err()
            .message()
            .to_string();
        assert_eq!(ours.inner().message(), toml_text, "{text}");
        (ours.inner().fault.clone(), ours.path().to_string())
    }

    #[test]
    fn an_unknown_key_keeps_its_name_and_the_keys_the_table_has() {
        let (fault, path) = both::<Gain>("kp = 1.0\nkpp = 2.0");
        assert_eq!(
            fault,
            Fault::UnknownField {
                field: "kpp".into(),
                expected: &["kp", "mode"]
            }
        );
        // serde_path_to_error's path ends at the unknown key itself.
        assert_eq!(path, "kpp");
    }

    #[test]
    fn an_unknown_variant_keeps_its_name_and_the_variants() {
        let (fault, path) = both::<Gain>("kp = 1.0\nmode = \"medium\"");
        assert_eq!(
            fault,
            Fault::UnknownVariant {
                variant: "medium".into(),
                expected: &["fast", "slow"]
            }
        );
        assert_eq!(path, "mode");
        let (fault, _) = both::<Controller>("kind = \"pd\"");
        assert!(
            matches!(fault, Fault::UnknownVariant { ref variant, expected } if variant == "pd" && expected == ["pid", "bang"]),
            "{fault:?}"
        );
    }

    /// Inside a `kind = "..."` table serde's path stops at the table; the
    /// value it refused is kept, to find the key again.
    #[test]
    fn a_wrong_value_inside_a_tagged_table_keeps_the_value() {
        let (fault, path) = both::<Controller>("kind = \"bang\"\nlevel = 300");
        assert_eq!(
            fault,
            Fault::WrongValue {
                found: Found::Integer(300),
                what: "invalid value: integer `300`".into(),
                expected: "u8".into(),
            }
        );
        assert_eq!(path, ".");
        let (fault, _) = both::<Controller>("kind = \"pid\"\nkp = \"fast\"");
        assert_eq!(
            fault,
            Fault::WrongValue {
                found: Found::Str("fast".into()),
                what: "invalid type: string \"fast\"".into(),
                expected: "f64".into(),
            }
        );
        let (fault, _) = both::<Controller>("kind = \"pid\"");
        assert_eq!(fault, Fault::MissingField { field: "kp" });
    }
}
