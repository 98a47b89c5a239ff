//! Launch arguments: buffers and scalar values bound to a kernel's parameters by name.

use crate::buffer::HostBuffer;
use onekernel_dsl::types::Literal;

/// A value bound to one parameter.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgValue {
    /// A storage buffer.
    Buffer(HostBuffer),
    /// A push constant or specialization constant.
    Scalar(Literal),
}

/// Arguments of one launch, by parameter name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Args {
    values: Vec<(String, ArgValue)>,
}

impl Args {
    /// No arguments yet.
    pub fn new() -> Self {
        Args::default()
    }

    /// Binds a buffer (replacing an earlier binding of the same name).
    pub fn buffer(mut self, name: &str, buf: HostBuffer) -> Self {
        self.set(name, ArgValue::Buffer(buf));
        self
    }

    /// Binds a scalar (`u32`, `i32`, `f32` or `bool`).
    pub fn scalar(mut self, name: &str, v: impl Into<ScalarArg>) -> Self {
        self.set(name, ArgValue::Scalar(v.into().0));
        self
    }

    /// Binds any value.
    pub fn set(&mut self, name: &str, v: ArgValue) {
        match self.values.iter_mut().find(|(n, _)| n == name) {
            Some(slot) => slot.1 = v,
            None => self.values.push((name.to_string(), v)),
        }
    }

    /// Removes the binding of `name`, if any.
    pub fn remove(&mut self, name: &str) {
        self.values.retain(|(n, _)| n != name);
    }

    /// The value bound to `name`.
    pub fn get(&self, name: &str) -> Option<&ArgValue> {
        self.values.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// Names of every bound argument, in binding order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.values.iter().map(|(n, _)| n.as_str())
    }

    /// The buffer bound to `name`.
    pub fn get_buffer(&self, name: &str) -> Option<&HostBuffer> {
        match self.get(name) {
            Some(ArgValue::Buffer(b)) => Some(b),
            _ => None,
        }
    }

    /// Mutable access to the buffer bound to `name`.
    pub fn get_buffer_mut(&mut self, name: &str) -> Option<&mut HostBuffer> {
        match self.values.iter_mut().find(|(n, _)| n == name) {
            Some((_, ArgValue::Buffer(b))) => Some(b),
            _ => None,
        }
    }
}

/// A scalar argument; `From` impls for the DSL's value types.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScalarArg(pub Literal);

impl From<u32> for ScalarArg {
    fn from(v: u32) -> Self {
        ScalarArg(Literal::U32(v))
    }
}
impl From<i32> for ScalarArg {
    fn from(v: i32) -> Self {
        ScalarArg(Literal::I32(v))
    }
}
impl From<f32> for ScalarArg {
    fn from(v: f32) -> Self {
        ScalarArg(Literal::f32(v))
    }
}
impl From<bool> for ScalarArg {
    fn from(v: bool) -> Self {
        ScalarArg(Literal::Bool(v))
    }
}
impl From<Literal> for ScalarArg {
    fn from(v: Literal) -> Self {
        ScalarArg(v)
    }
}
