//! One view of an FMI 2.0 or 3.0 `modelDescription.xml` (parsed by the
//! `fmi` crate's schema), and the checks of a scenario's mapping against it.

use std::str::FromStr;

use fmi::fmi2::schema as s2;
use fmi::fmi3::schema as s3;
use fmi::schema::fmi3::{AbstractVariableTrait, InitializableVariableTrait};
use fmi::schema::traits::FmiModelDescription;

use crate::error::ConfigError;
use crate::fmu::archive::Unpacked;
use crate::fmu::{FmuValue, FmuValues};
use crate::key_path::KeyPath;

/// The FMI major version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FmiVersion {
    V2,
    V3,
}

/// The variable types netloop can set and read; other FMI 3.0 types are
/// listed under their own names and refused where a value is needed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarType {
    /// FMI 2.0 Real, FMI 3.0 Float64.
    Real,
    /// FMI 2.0 Integer (and Enumeration), FMI 3.0 Int32.
    Integer,
    Boolean,
    String,
    /// Another FMI 3.0 type (Float32, Int8, Binary, Clock, ...).
    Other(&'static str),
}

impl VarType {
    fn name(self, version: FmiVersion) -> &'static str {
        match (self, version) {
            (VarType::Real, FmiVersion::V2) => "Real",
            (VarType::Real, FmiVersion::V3) => "Float64",
            (VarType::Integer, FmiVersion::V2) => "Integer",
            (VarType::Integer, FmiVersion::V3) => "Int32",
            (VarType::Boolean, _) => "Boolean",
            (VarType::String, _) => "String",
            (VarType::Other(n), _) => n,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Causality {
    Parameter,
    CalculatedParameter,
    StructuralParameter,
    Input,
    Output,
    Local,
    Independent,
}

/// One model variable.
#[derive(Clone, Debug, PartialEq)]
pub struct Variable {
    pub name: String,
    pub value_reference: u32,
    pub ty: VarType,
    pub causality: Causality,
    /// `variability = "constant"`.
    pub constant: bool,
    /// A start value is declared.
    pub has_start: bool,
    /// `initial = "calculated"` (or the default that means it): the FMU
    /// computes it, so it cannot be set.
    pub calculated: bool,
    /// Real start value, for inputs (their value until netloop sets one).
    pub real_start: Option<f64>,
    /// An array variable (FMI 3.0 dimensions): not supported in a mapping.
    pub array: bool,
    /// A float variable's unit (`rad/s`), its own or its declared type's.
    pub unit: Option<String>,
}

/// The Model Exchange interface of an FMU (FMI 2.0 or 3.0).
#[derive(Clone, Debug, PartialEq)]
pub struct ModelExchange {
    pub model_identifier: String,
    /// `canGetAndSetFMUstate`.
    pub can_get_and_set_state: bool,
    /// The continuous states, by name, in the order of
    /// `ModelStructure/Derivatives` (FMI 3.0: `ContinuousStateDerivative`),
    /// the order of the state vector.
    pub states: Vec<String>,
    /// `numberOfEventIndicators`.
    pub event_indicators: usize,
}

/// An FMU's interfaces and variables, as netloop uses them.
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    pub version: FmiVersion,
    pub model_name: String,
    /// The identifier of the Co-Simulation interface (of Model Exchange
    /// when the FMU has no Co-Simulation): the binary's name.
    pub model_identifier: String,
    /// A Co-Simulation interface is declared.
    pub co_simulation: bool,
    /// The Model Exchange interface, when declared.
    pub model_exchange: Option<ModelExchange>,
    /// `canGetAndSetFMUstate` of the Co-Simulation interface.
    pub can_get_and_set_state: bool,
    /// `canHandleVariableCommunicationStepSize` (FMI 2.0; always true in 3.0).
    pub variable_step: bool,
    pub variables: Vec<Variable>,
    /// `generationTool`, e.g. "PythonFMU 0.7.0".
    pub generation_tool: Option<String>,
    /// The XML text, for the `fmi` crate's import.
    pub(crate) xml: String,
}

impl Model {
    /// Reads and checks the model description of an unpacked FMU.
    ///
    /// # Errors
    /// [`ConfigError`] at `key` for a broken or non-conforming
    /// `modelDescription.xml` or an FMU with neither Co-Simulation nor
    /// Model Exchange.
    pub fn read(key: &KeyPath, unpacked: &Unpacked) -> Result<Self, ConfigError> {
        let xml = unpacked.model_description(key)?;
        let broken = |why: String| {
            ConfigError::invalid(
                key,
                format!(
                    "the FMU {} has a broken modelDescription.xml: {why}",
                    unpacked.file.display()
                ),
            )
        };
        let version = fmi_version(&xml).map_err(broken)?;
        let model = match version {
            FmiVersion::V2 => {
                let md =
                    s2::Fmi2ModelDescription::from_str(&xml).map_err(|e| broken(e.to_string()))?;
                from_fmi2(&md, xml.clone())
            }
            FmiVersion::V3 => {
                let md = s3::Fmi3ModelDescription::deserialize(&xml)
                    .map_err(|e| broken(e.to_string()))?;
                from_fmi3(&md, xml.clone())
            }
        };
        let mut model = model.ok_or_else(|| {
            ConfigError::invalid(
                key,
                format!(
                    "the FMU {} has neither a Co-Simulation nor a Model Exchange interface",
                    unpacked.file.display()
                ),
            )
        })?;
        let units = variable_units(&xml);
        for v in &mut model.variables {
            v.unit = units.get(&v.name).cloned();
        }
        let mut seen = std::collections::HashSet::new();
        if let Some(v) = model
            .variables
            .iter()
            .find(|v| !seen.insert(v.name.as_str()))
        {
            return Err(broken(format!("variable \"{}\" is declared twice", v.name)));
        }
        Ok(model)
    }

    pub fn version_text(&self) -> &'static str {
        match self.version {
            FmiVersion::V2 => "FMI 2.0",
            FmiVersion::V3 => "FMI 3.0",
        }
    }

    pub fn variable(&self, name: &str) -> Option<&Variable> {
        self.variables.iter().find(|v| v.name == name)
    }

    fn names_of(&self, causality: Causality) -> Vec<String> {
        self.variables
            .iter()
            .filter(|v| v.causality == causality)
            .map(|v| v.name.clone())
            .collect()
    }

    /// The variables of `causality` named at `key` (default: all of them, in
    /// file order), each checked to be a scalar Real.
    ///
    /// # Errors
    /// [`ConfigError`] at `key` naming the variable.
    pub fn select(
        &self,
        key: &KeyPath,
        names: Option<&[String]>,
        causality: Causality,
        default: Vec<String>,
    ) -> Result<Vec<Variable>, ConfigError> {
        let what = match causality {
            Causality::Input => "input",
            _ => "output",
        };
        let names = names.map(<[String]>::to_vec).unwrap_or(default);
        let mut out: Vec<Variable> = Vec::with_capacity(names.len());
        for (i, name) in names.iter().enumerate() {
            let v = self
                .variable(name)
                .ok_or_else(|| ConfigError::UnknownName {
                    key: key.clone().at(i),
                    name: name.clone(),
                    known: self.names_of(causality),
                })?;
            if v.causality != causality {
                return Err(ConfigError::invalid(
                    key.clone().at(i),
                    format!(
                        "FMU variable \"{name}\" is not an {what} (its causality is {:?})",
                        v.causality
                    ),
                ));
            }
            if v.ty != VarType::Real || v.array {
                return Err(ConfigError::invalid(
                    key.clone().at(i),
                    format!(
                        "FMU variable \"{name}\" is {}{}; netloop connects scalar {} variables",
                        v.ty.name(self.version),
                        if v.array { " (an array)" } else { "" },
                        VarType::Real.name(self.version)
                    ),
                ));
            }
            if out.iter().any(|o| o.name == *name) {
                return Err(ConfigError::invalid(
                    key.clone().at(i),
                    format!("FMU variable \"{name}\" is named twice"),
                ));
            }
            out.push(v.clone());
        }
        Ok(out)
    }

    /// All inputs / outputs, in file order.
    pub fn inputs(&self) -> Vec<String> {
        self.names_of(Causality::Input)
    }

    pub fn outputs(&self) -> Vec<String> {
        self.names_of(Causality::Output)
    }

    /// Checks `parameters` and `start` against the variables and returns
    /// what to set before initialisation, in order (parameters first).
    ///
    /// # Errors
    /// [`ConfigError`] naming `key.parameters.NAME` / `key.start.NAME`: an
    /// unknown variable, the wrong causality, a constant or calculated
    /// variable, a value of the wrong type; and `key.parameters` for a
    /// parameter or input that has no start value in the model description
    /// and none in the scenario.
    pub fn start_values(
        &self,
        key: &KeyPath,
        parameters: &FmuValues,
        start: &FmuValues,
    ) -> Result<Vec<(Variable, FmuValue)>, ConfigError> {
        let mut out = Vec::new();
        for (table, values) in [("parameters", parameters), ("start", start)] {
            for (name, value) in values {
                let k = key.child(table).and(name);
                let v = self
                    .variable(name)
                    .ok_or_else(|| ConfigError::UnknownName {
                        key: k.clone(),
                        name: name.clone(),
                        known: self
                            .variables
                            .iter()
                            .filter(|v| {
                                (table == "parameters") == (v.causality == Causality::Parameter)
                                    && v.has_start
                                    && !v.constant
                            })
                            .map(|v| v.name.clone())
                            .collect(),
                    })?;
                let is_parameter = matches!(
                    v.causality,
                    Causality::Parameter | Causality::StructuralParameter
                );
                if table == "parameters" && !is_parameter {
                    return Err(ConfigError::invalid(
                        k,
                        format!(
                            "FMU variable \"{name}\" is not a parameter (its causality is {:?}); \
                             set its start value under `start`",
                            v.causality
                        ),
                    ));
                }
                if table == "start" && is_parameter {
                    return Err(ConfigError::invalid(
                        k,
                        format!(
                            "FMU variable \"{name}\" is a parameter; set it under `parameters`"
                        ),
                    ));
                }
                if v.constant || v.calculated || v.causality == Causality::Independent {
                    return Err(ConfigError::invalid(
                        k,
                        format!(
                            "FMU variable \"{name}\" cannot be set: it is {}",
                            if v.constant {
                                "a constant"
                            } else if v.causality == Causality::Independent {
                                "the independent variable (time)"
                            } else {
                                "calculated by the FMU (initial = \"calculated\")"
                            }
                        ),
                    ));
                }
                let fits = matches!(
                    (v.ty, value),
                    (VarType::Real, FmuValue::Real(_) | FmuValue::Integer(_))
                        | (VarType::Integer, FmuValue::Integer(_))
                        | (VarType::Boolean, FmuValue::Boolean(_))
                        | (VarType::String, FmuValue::Text(_))
                );
                let in_range = match (v.ty, value) {
                    (VarType::Integer, FmuValue::Integer(i)) => i32::try_from(*i).is_ok(),
                    _ => true,
                };
                if !fits || v.array {
                    return Err(ConfigError::invalid(
                        k,
                        format!(
                            "type mismatch: FMU variable \"{name}\" is {}{}, the value {value} is {}",
                            v.ty.name(self.version),
                            if v.array { " (an array)" } else { "" },
                            match value {
                                FmuValue::Boolean(_) => "a boolean",
                                FmuValue::Integer(_) => "an integer",
                                FmuValue::Real(_) => "a real number",
                                FmuValue::Text(_) => "a string",
                            }
                        ),
                    ));
                }
                if !in_range {
                    return Err(ConfigError::invalid(
                        k,
                        format!(
                            "FMU variable \"{name}\" is {}: {value} does not fit in 32 bits",
                            v.ty.name(self.version)
                        ),
                    ));
                }
                out.push((v.clone(), value.clone()));
            }
        }
        // FMI requires a start value for parameters and inputs; a
        // model description without one leaves it to the importer.
        if let Some(v) = self.variables.iter().find(|v| {
            matches!(v.causality, Causality::Parameter | Causality::Input)
                && !v.has_start
                && !parameters.contains_key(&v.name)
                && !start.contains_key(&v.name)
        }) {
            let table = if v.causality == Causality::Parameter {
                "parameters"
            } else {
                "start"
            };
            return Err(ConfigError::invalid(
                key.child(table),
                format!(
                    "FMU variable \"{}\" ({:?}) has no start value in modelDescription.xml: \
                     give one as `{table}.{}`",
                    v.name, v.causality, v.name
                ),
            ));
        }
        Ok(out)
    }
}

/// The `fmiVersion` attribute's major version.
fn fmi_version(xml: &str) -> Result<FmiVersion, String> {
    let md =
        fmi::schema::minimal::MinModelDescription::deserialize(xml).map_err(|e| e.to_string())?;
    match md.fmi_version.split('.').next() {
        Some("2") => Ok(FmiVersion::V2),
        Some("3") => Ok(FmiVersion::V3),
        _ => Err(format!(
            "fmiVersion \"{}\" is neither 2.0 nor 3.0",
            md.fmi_version
        )),
    }
}

/// The units of `variables` that declare one, by name: what an FMU plant's
/// [`Plant::unit`](crate::plant::Plant::unit) answers.
pub(crate) fn units_by_name<'a>(
    variables: impl IntoIterator<Item = &'a Variable>,
) -> std::collections::BTreeMap<String, String> {
    variables
        .into_iter()
        .filter_map(|v| Some((v.name.clone(), v.unit.clone()?)))
        .collect()
}

/// The unit of each float variable, by name: its own `unit`, or its
/// declared type's. FMI 2.0: `ScalarVariable/Real`, `SimpleType/Real`;
/// FMI 3.0: `Float64`/`Float32` and `Float64Type`/`Float32Type`. Read from
/// the XML because the schema types do not keep the attribute; a
/// description that does not parse has none (`Model::read` reports it).
fn variable_units(xml: &str) -> std::collections::BTreeMap<String, String> {
    use std::collections::BTreeMap;
    let mut units = BTreeMap::new();
    let Ok(doc) = roxmltree::Document::parse(xml) else {
        return units;
    };
    let float = |n: &roxmltree::Node| {
        n.is_element() && matches!(n.tag_name().name(), "Real" | "Float64" | "Float32")
    };
    let section = |tag: &str| doc.root_element().children().find(|n| n.has_tag_name(tag));
    let mut types = BTreeMap::new();
    for t in section("TypeDefinitions")
        .into_iter()
        .flat_map(|d| d.children())
    {
        let unit = t
            .attribute("unit")
            .or_else(|| t.children().find(float).and_then(|r| r.attribute("unit")));
        if let (Some(name), Some(unit)) = (t.attribute("name"), unit) {
            types.insert(name, unit);
        }
    }
    for v in section("ModelVariables")
        .into_iter()
        .flat_map(|d| d.children())
    {
        let typed = if v.has_tag_name("ScalarVariable") {
            v.children().find(float)
        } else {
            Some(v).filter(float)
        };
        let (Some(name), Some(typed)) = (v.attribute("name"), typed) else {
            continue;
        };
        let declared = || {
            typed
                .attribute("declaredType")
                .and_then(|d| types.get(d).copied())
        };
        // An empty unit says nothing: the declared type's, or none.
        let said = |u: &&str| !u.is_empty();
        let unit = typed
            .attribute("unit")
            .filter(said)
            .or_else(declared)
            .filter(said);
        if let Some(unit) = unit {
            units.insert(name.to_string(), unit.to_string());
        }
    }
    units
}

fn from_fmi2(md: &s2::Fmi2ModelDescription, xml: String) -> Option<Model> {
    let cs = md.co_simulation.as_ref();
    let model_exchange = md.model_exchange.as_ref().map(|me| ModelExchange {
        model_identifier: me.model_identifier.clone(),
        can_get_and_set_state: me.can_get_and_set_fmu_state == Some(true),
        states: fmi2_states(md),
        event_indicators: md.num_event_indicators(),
    });
    if cs.is_none() && model_exchange.is_none() {
        return None;
    }
    let variables = md
        .model_variables
        .variables
        .iter()
        .map(|v| {
            let (ty, has_start, real_start) = match &v.elem {
                s2::ScalarVariableElement::Real(r) => (VarType::Real, r.start.is_some(), r.start),
                s2::ScalarVariableElement::Integer(i) => {
                    (VarType::Integer, i.start.is_some(), None)
                }
                s2::ScalarVariableElement::Boolean(b) => {
                    (VarType::Boolean, b.start.is_some(), None)
                }
                // The schema does not keep these start values; a String or
                // Enumeration is never a required start netloop reports.
                s2::ScalarVariableElement::String => (VarType::String, true, None),
                s2::ScalarVariableElement::Enumeration => (VarType::Integer, true, None),
            };
            let causality = match v.causality {
                s2::Causality::Parameter => Causality::Parameter,
                s2::Causality::CalculatedParameter => Causality::CalculatedParameter,
                s2::Causality::Input => Causality::Input,
                s2::Causality::Output => Causality::Output,
                s2::Causality::Local => Causality::Local,
                s2::Causality::Independent => Causality::Independent,
            };
            let initial = v.initial.clone();
            Variable {
                name: v.name.clone(),
                value_reference: v.value_reference,
                ty,
                causality,
                constant: v.variability == Some(s2::Variability::Constant),
                has_start,
                calculated: matches!(initial, Some(s2::Initial::Calculated))
                    || (initial.is_none()
                        && !has_start
                        && matches!(
                            causality,
                            Causality::Output | Causality::Local | Causality::CalculatedParameter
                        )),
                real_start,
                array: false,
                unit: None,
            }
        })
        .collect();
    Some(Model {
        version: FmiVersion::V2,
        model_name: md.model_name.clone(),
        model_identifier: match (cs, &model_exchange) {
            (Some(cs), _) => cs.model_identifier.clone(),
            (None, Some(me)) => me.model_identifier.clone(),
            (None, None) => unreachable!(),
        },
        co_simulation: cs.is_some(),
        model_exchange,
        can_get_and_set_state: cs.is_some_and(|cs| cs.can_get_and_set_fmu_state == Some(true)),
        variable_step: cs
            .is_some_and(|cs| cs.can_handle_variable_communication_step_size == Some(true)),
        variables,
        generation_tool: md.generation_tool.clone(),
        xml,
    })
}

/// The names of the continuous states of an FMI 2.0 model: for each
/// `ModelStructure/Derivatives` entry, the variable its `derivative`
/// attribute names (indices are 1-based); `x{i}` when the file does not say.
fn fmi2_states(md: &s2::Fmi2ModelDescription) -> Vec<String> {
    let vars = &md.model_variables.variables;
    let by_index = |i: u32| vars.get((i as usize).checked_sub(1)?);
    md.model_structure
        .derivatives
        .unknowns
        .iter()
        .enumerate()
        .map(|(n, d)| {
            by_index(d.index)
                .and_then(|der| match &der.elem {
                    s2::ScalarVariableElement::Real(r) => r.derivative,
                    _ => None,
                })
                .and_then(by_index)
                .map(|state| state.name.clone())
                .unwrap_or_else(|| format!("x{n}"))
        })
        .collect()
}

fn from_fmi3(md: &s3::Fmi3ModelDescription, xml: String) -> Option<Model> {
    use fmi::schema::fmi3::{Causality as C3, Initial as I3, Variability as V3, Variable as Var};
    let cs = md.co_simulation.as_ref();
    let model_exchange = md.model_exchange.as_ref().map(|me| ModelExchange {
        model_identifier: me.model_identifier.clone(),
        can_get_and_set_state: me.can_get_and_set_fmu_state == Some(true),
        states: fmi3_states(md),
        event_indicators: md
            .model_structure
            .unknowns
            .iter()
            .filter(|u| matches!(u, s3::VariableDependency::EventIndicator(_)))
            .count(),
    });
    if cs.is_none() && model_exchange.is_none() {
        return None;
    }
    let variables = md
        .model_variables
        .variables
        .iter()
        .map(|var| {
            /// Whether a start value is declared, and `initial`.
            fn typed<T: InitializableVariableTrait + AbstractVariableTrait>(
                v: &T,
            ) -> (bool, Option<I3>) {
                (v.start().is_some_and(|s| !s.is_empty()), v.initial())
            }
            let (ty, (has_start, initial), real_start) = match var {
                Var::Float64(v) => (
                    VarType::Real,
                    typed(v),
                    v.start().and_then(|s| s.first().copied()),
                ),
                Var::Int32(v) => (VarType::Integer, typed(v), None),
                Var::Boolean(v) => (VarType::Boolean, typed(v), None),
                Var::String(v) => (VarType::String, typed(v), None),
                Var::Float32(v) => (VarType::Other("Float32"), typed(v), None),
                Var::Int8(v) => (VarType::Other("Int8"), typed(v), None),
                Var::UInt8(v) => (VarType::Other("UInt8"), typed(v), None),
                Var::Int16(v) => (VarType::Other("Int16"), typed(v), None),
                Var::UInt16(v) => (VarType::Other("UInt16"), typed(v), None),
                Var::UInt32(v) => (VarType::Other("UInt32"), typed(v), None),
                Var::Int64(v) => (VarType::Other("Int64"), typed(v), None),
                Var::UInt64(v) => (VarType::Other("UInt64"), typed(v), None),
                Var::Binary(v) => (VarType::Other("Binary"), typed(v), None),
                Var::Clock(_) => (VarType::Other("Clock"), (true, None), None),
            };
            let abs: &dyn AbstractVariableTrait = match var {
                Var::Float64(v) => v,
                Var::Int32(v) => v,
                Var::Boolean(v) => v,
                Var::String(v) => v,
                Var::Float32(v) => v,
                Var::Int8(v) => v,
                Var::UInt8(v) => v,
                Var::Int16(v) => v,
                Var::UInt16(v) => v,
                Var::UInt32(v) => v,
                Var::Int64(v) => v,
                Var::UInt64(v) => v,
                Var::Binary(v) => v,
                Var::Clock(v) => v,
            };
            let causality = match abs.causality() {
                C3::Parameter => Causality::Parameter,
                C3::CalculatedParameter => Causality::CalculatedParameter,
                C3::StructuralParameter => Causality::StructuralParameter,
                C3::Input => Causality::Input,
                C3::Output => Causality::Output,
                C3::Local | C3::Dependent => Causality::Local,
                C3::Independent => Causality::Independent,
            };
            Variable {
                name: abs.name().to_string(),
                value_reference: abs.value_reference(),
                ty,
                causality,
                constant: abs.variability() == V3::Constant,
                has_start,
                calculated: matches!(initial, Some(I3::Calculated))
                    || (initial.is_none()
                        && !has_start
                        && matches!(
                            causality,
                            Causality::Output | Causality::Local | Causality::CalculatedParameter
                        )),
                real_start,
                array: match var {
                    Var::Float64(v) => {
                        !fmi::schema::fmi3::ArrayableVariableTrait::dimensions(v).is_empty()
                    }
                    _ => false,
                },
                unit: None,
            }
        })
        .collect();
    Some(Model {
        version: FmiVersion::V3,
        model_name: md.model_name.clone(),
        model_identifier: match (cs, &model_exchange) {
            (Some(cs), _) => cs.model_identifier.clone(),
            (None, Some(me)) => me.model_identifier.clone(),
            (None, None) => unreachable!(),
        },
        co_simulation: cs.is_some(),
        model_exchange,
        can_get_and_set_state: cs.is_some_and(|cs| cs.can_get_and_set_fmu_state == Some(true)),
        variable_step: true,
        variables,
        generation_tool: md.generation_tool.clone(),
        xml,
    })
}

/// The names of the continuous states of an FMI 3.0 model: for each
/// `ModelStructure/ContinuousStateDerivative`, the Float64 variable its
/// `derivative` attribute points at (by value reference); `x{i}` when the
/// file does not say.
fn fmi3_states(md: &s3::Fmi3ModelDescription) -> Vec<String> {
    use fmi::schema::fmi3::Variable as Var;
    let float64 = |vr: u32| {
        md.model_variables.variables.iter().find_map(|v| match v {
            Var::Float64(f) if f.value_reference() == vr => Some(f),
            _ => None,
        })
    };
    md.model_structure
        .unknowns
        .iter()
        .filter_map(|u| match u {
            s3::VariableDependency::ContinuousStateDerivative(d) => Some(d.value_reference),
            _ => None,
        })
        .enumerate()
        .map(|(n, der)| {
            float64(der)
                .and_then(|d| d.derivative())
                .and_then(float64)
                .map(|state| state.name().to_string())
                .unwrap_or_else(|| format!("x{n}"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::variable_units;

    /// FMI 2.0: a unit on the variable's `Real`, or on the `SimpleType`
    /// it declares; none for other types or where neither says.
    #[test]
    fn fmi2_units_come_from_the_variable_or_its_declared_type() {
        let xml = r#"<?xml version="1.0"?>
<fmiModelDescription fmiVersion="2.0" modelName="m" guid="g">
  <TypeDefinitions>
    <SimpleType name="Modelica.SIunits.AngularVelocity"><Real quantity="AngularVelocity" unit="rad/s"/></SimpleType>
  </TypeDefinitions>
  <ModelVariables>
    <ScalarVariable name="theta" valueReference="0" causality="output"><Real unit="rad"/></ScalarVariable>
    <ScalarVariable name="omega" valueReference="1" causality="output"><Real declaredType="Modelica.SIunits.AngularVelocity"/></ScalarVariable>
    <ScalarVariable name="gain" valueReference="2" causality="parameter"><Real start="1"/></ScalarVariable>
    <ScalarVariable name="count" valueReference="3" causality="output"><Integer/></ScalarVariable>
    <ScalarVariable name="blank" valueReference="4" causality="output"><Real unit=""/></ScalarVariable>
    <ScalarVariable name="speed" valueReference="5" causality="output"><Real unit="" declaredType="Modelica.SIunits.AngularVelocity"/></ScalarVariable>
  </ModelVariables>
</fmiModelDescription>"#;
        let units = variable_units(xml);
        assert_eq!(units.get("theta").map(String::as_str), Some("rad"));
        assert_eq!(units.get("omega").map(String::as_str), Some("rad/s"));
        // An empty unit is none; the declared type's stands.
        assert_eq!(units.get("speed").map(String::as_str), Some("rad/s"));
        assert_eq!(units.len(), 3, "{units:?}");
    }

    /// FMI 3.0: a unit on a `Float64`/`Float32` variable or on its
    /// `Float64Type`.
    #[test]
    fn fmi3_units_come_from_the_variable_or_its_declared_type() {
        let xml = r#"<?xml version="1.0"?>
<fmiModelDescription fmiVersion="3.0" modelName="m" instantiationToken="t">
  <TypeDefinitions>
    <Float64Type name="Voltage" quantity="ElectricPotential" unit="V"/>
  </TypeDefinitions>
  <ModelVariables>
    <Float64 name="time" valueReference="0" causality="independent" variability="continuous"/>
    <Float64 name="u" valueReference="1" causality="input" declaredType="Voltage" start="0"/>
    <Float32 name="h" valueReference="2" causality="output" unit="m"/>
    <Int32 name="n" valueReference="3" causality="output"/>
  </ModelVariables>
</fmiModelDescription>"#;
        let units = variable_units(xml);
        assert_eq!(units.get("u").map(String::as_str), Some("V"));
        assert_eq!(units.get("h").map(String::as_str), Some("m"));
        assert_eq!(units.len(), 2, "{units:?}");
    }
}
