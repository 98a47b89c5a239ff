//! The DSL's types: 32-bit value types and the storage types buffers and arrays hold.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A value type: what a DSL expression evaluates to. Every value is 32 bits wide
/// (bool included), which is what every backend's registers hold.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Scalar {
    /// IEEE-754 binary32.
    F32,
    /// Two's-complement 32-bit integer; `+ - *` wrap around.
    I32,
    /// Unsigned 32-bit integer; `+ - *` wrap around.
    U32,
    /// Boolean.
    Bool,
}

impl Scalar {
    /// The Rust spelling used in the DSL source (`f32`, `i32`, `u32`, `bool`).
    pub fn name(self) -> &'static str {
        match self {
            Scalar::F32 => "f32",
            Scalar::I32 => "i32",
            Scalar::U32 => "u32",
            Scalar::Bool => "bool",
        }
    }

    /// Parses a Rust scalar type name.
    pub fn parse(name: &str) -> Option<Scalar> {
        Some(match name {
            "f32" => Scalar::F32,
            "i32" => Scalar::I32,
            "u32" => Scalar::U32,
            "bool" => Scalar::Bool,
            _ => return None,
        })
    }

    /// True for `i32` and `u32`.
    pub fn is_int(self) -> bool {
        matches!(self, Scalar::I32 | Scalar::U32)
    }

    /// True for `f32`, `i32` and `u32`.
    pub fn is_numeric(self) -> bool {
        self != Scalar::Bool
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The element type of a storage buffer. Loads convert to a 32-bit [`Scalar`]; stores
/// convert back (floats with round-to-nearest-even, integers by truncation of the bits).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum StorageType {
    /// binary32.
    F32,
    /// 32-bit signed integer.
    I32,
    /// 32-bit unsigned integer.
    U32,
    /// IEEE-754 binary16; loads widen exactly, stores round to nearest even.
    F16,
    /// bfloat16; loads widen exactly, stores round to nearest even.
    Bf16,
    /// Byte; loads zero-extend to `u32`.
    U8,
    /// 16-bit unsigned; loads zero-extend to `u32`.
    U16,
    /// Signed byte; loads sign-extend to `i32`.
    I8,
}

impl StorageType {
    /// Every storage type, in a fixed order.
    pub const ALL: [StorageType; 8] = [
        StorageType::F32,
        StorageType::I32,
        StorageType::U32,
        StorageType::F16,
        StorageType::Bf16,
        StorageType::U8,
        StorageType::U16,
        StorageType::I8,
    ];

    /// The type a load produces and a store accepts.
    pub fn value_type(self) -> Scalar {
        match self {
            StorageType::F32 | StorageType::F16 | StorageType::Bf16 => Scalar::F32,
            StorageType::I32 | StorageType::I8 => Scalar::I32,
            StorageType::U32 | StorageType::U8 | StorageType::U16 => Scalar::U32,
        }
    }

    /// Size of one element in bytes.
    pub fn size_bytes(self) -> usize {
        match self {
            StorageType::F32 | StorageType::I32 | StorageType::U32 => 4,
            StorageType::F16 | StorageType::Bf16 | StorageType::U16 => 2,
            StorageType::U8 | StorageType::I8 => 1,
        }
    }

    /// The Rust spelling used in the DSL source.
    pub fn name(self) -> &'static str {
        match self {
            StorageType::F32 => "f32",
            StorageType::I32 => "i32",
            StorageType::U32 => "u32",
            StorageType::F16 => "f16",
            StorageType::Bf16 => "bf16",
            StorageType::U8 => "u8",
            StorageType::U16 => "u16",
            StorageType::I8 => "i8",
        }
    }

    /// Parses a DSL storage type name.
    pub fn parse(name: &str) -> Option<StorageType> {
        StorageType::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The storage type that holds a value type unchanged, if any (`bool` has none).
    pub fn of_scalar(s: Scalar) -> Option<StorageType> {
        match s {
            Scalar::F32 => Some(StorageType::F32),
            Scalar::I32 => Some(StorageType::I32),
            Scalar::U32 => Some(StorageType::U32),
            Scalar::Bool => None,
        }
    }
}

impl fmt::Display for StorageType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The type of a local variable: a scalar or a fixed-size array of scalars.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VarType {
    /// One 32-bit value.
    Scalar(Scalar),
    /// `[elem; len]`, private to each invocation.
    Array {
        /// Element type.
        elem: Scalar,
        /// Number of elements.
        len: u32,
    },
}

impl fmt::Display for VarType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VarType::Scalar(s) => write!(f, "{s}"),
            VarType::Array { elem, len } => write!(f, "[{elem}; {len}]"),
        }
    }
}

/// A constant value. Floats are kept as their bits so that serialization is exact.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Literal {
    /// An f32, as `f32::to_bits`.
    F32(u32),
    /// An i32.
    I32(i32),
    /// A u32.
    U32(u32),
    /// A bool.
    Bool(bool),
}

impl Literal {
    /// An f32 literal.
    pub fn f32(v: f32) -> Literal {
        Literal::F32(v.to_bits())
    }

    /// The literal's type.
    pub fn ty(self) -> Scalar {
        match self {
            Literal::F32(_) => Scalar::F32,
            Literal::I32(_) => Scalar::I32,
            Literal::U32(_) => Scalar::U32,
            Literal::Bool(_) => Scalar::Bool,
        }
    }

    /// The 32 bits a register holds for this value (bool: 0 or 1).
    pub fn bits(self) -> u32 {
        match self {
            Literal::F32(b) => b,
            Literal::I32(v) => v as u32,
            Literal::U32(v) => v,
            Literal::Bool(b) => b as u32,
        }
    }

    /// The value as a person reads it, without the type suffix `Display` gives it (`16`,
    /// `-3`, `0.5`, `true`): for messages that name the type once.
    pub fn value_text(self) -> String {
        match self {
            Literal::F32(b) => format!("{:?}", f32::from_bits(b)),
            Literal::I32(v) => v.to_string(),
            Literal::U32(v) => v.to_string(),
            Literal::Bool(v) => v.to_string(),
        }
    }

    /// Rebuilds a literal of type `ty` from register bits.
    pub fn from_bits(ty: Scalar, bits: u32) -> Literal {
        match ty {
            Scalar::F32 => Literal::F32(bits),
            Scalar::I32 => Literal::I32(bits as i32),
            Scalar::U32 => Literal::U32(bits),
            Scalar::Bool => Literal::Bool(bits != 0),
        }
    }
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Literal::F32(b) => write!(f, "{:?}f32", f32::from_bits(b)),
            Literal::I32(v) => write!(f, "{v}i32"),
            Literal::U32(v) => write!(f, "{v}u32"),
            Literal::Bool(v) => write!(f, "{v}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Literal;

    #[test]
    fn value_text_is_display_without_the_type_suffix() {
        for (l, text, display) in [
            (Literal::U32(16), "16", "16u32"),
            (Literal::I32(-3), "-3", "-3i32"),
            (Literal::f32(0.5), "0.5", "0.5f32"),
            (Literal::Bool(true), "true", "true"),
        ] {
            assert_eq!(l.value_text(), text);
            assert_eq!(l.to_string(), display);
        }
    }
}
