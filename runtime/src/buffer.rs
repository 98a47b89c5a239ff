//! Host-side typed buffers: what a caller hands a kernel and reads back.

use onekernel_dsl::half::{bf16_to_f32, f16_to_f32, f32_to_bf16, f32_to_f16};
use onekernel_dsl::types::StorageType;

/// A buffer of one storage type, kept as little-endian bytes (the device layout).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostBuffer {
    elem: StorageType,
    bytes: Vec<u8>,
}

impl HostBuffer {
    /// `len` zeroed elements.
    pub fn zeros(elem: StorageType, len: usize) -> Self {
        HostBuffer { elem, bytes: vec![0; len * elem.size_bytes()] }
    }

    /// Raw bytes of `elem` elements; `None` when the length is not a whole number of
    /// elements.
    pub fn from_bytes(elem: StorageType, bytes: Vec<u8>) -> Option<Self> {
        bytes.len().is_multiple_of(elem.size_bytes()).then_some(HostBuffer { elem, bytes })
    }

    /// An f32 buffer.
    pub fn from_f32(v: &[f32]) -> Self {
        HostBuffer { elem: StorageType::F32, bytes: v.iter().flat_map(|x| x.to_le_bytes()).collect() }
    }

    /// A byte image (a quantized cache, a block array) as little-endian 32-bit words,
    /// zero-padded to a whole word: what kernels taking `&[u32]` images read.
    pub fn u32_image(bytes: &[u8]) -> Self {
        let mut b = bytes.to_vec();
        b.resize(bytes.len().next_multiple_of(4), 0);
        HostBuffer { elem: StorageType::U32, bytes: b }
    }

    /// A u32 buffer.
    pub fn from_u32(v: &[u32]) -> Self {
        HostBuffer { elem: StorageType::U32, bytes: v.iter().flat_map(|x| x.to_le_bytes()).collect() }
    }

    /// An i32 buffer.
    pub fn from_i32(v: &[i32]) -> Self {
        HostBuffer { elem: StorageType::I32, bytes: v.iter().flat_map(|x| x.to_le_bytes()).collect() }
    }

    /// An f16 buffer from f32 values (rounded to nearest even).
    pub fn f16_from_f32(v: &[f32]) -> Self {
        HostBuffer { elem: StorageType::F16, bytes: v.iter().flat_map(|&x| f32_to_f16(x).to_le_bytes()).collect() }
    }

    /// A bf16 buffer from f32 values (rounded to nearest even).
    pub fn bf16_from_f32(v: &[f32]) -> Self {
        HostBuffer { elem: StorageType::Bf16, bytes: v.iter().flat_map(|&x| f32_to_bf16(x).to_le_bytes()).collect() }
    }

    /// The element type.
    pub fn elem(&self) -> StorageType {
        self.elem
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.bytes.len() / self.elem.size_bytes()
    }

    /// True when the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The raw bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The raw bytes, writable (a device backend copies results back through this).
    pub fn as_bytes_mut(&mut self) -> &mut [u8] {
        &mut self.bytes
    }

    /// Element `i` as the 32-bit register bits a load produces (floats widened).
    pub fn load_bits(&self, i: usize) -> u32 {
        let b = &self.bytes;
        match self.elem {
            StorageType::F32 | StorageType::I32 | StorageType::U32 => u32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]]),
            StorageType::F16 => f16_to_f32(u16::from_le_bytes([b[2 * i], b[2 * i + 1]])).to_bits(),
            StorageType::Bf16 => bf16_to_f32(u16::from_le_bytes([b[2 * i], b[2 * i + 1]])).to_bits(),
            StorageType::U16 => u16::from_le_bytes([b[2 * i], b[2 * i + 1]]) as u32,
            StorageType::U8 => b[i] as u32,
            StorageType::I8 => b[i] as i8 as i32 as u32,
        }
    }

    /// Stores register bits into element `i`, converting as the DSL defines.
    pub fn store_bits(&mut self, i: usize, bits: u32) {
        let b = &mut self.bytes;
        match self.elem {
            StorageType::F32 | StorageType::I32 | StorageType::U32 => b[4 * i..4 * i + 4].copy_from_slice(&bits.to_le_bytes()),
            StorageType::F16 => b[2 * i..2 * i + 2].copy_from_slice(&f32_to_f16(f32::from_bits(bits)).to_le_bytes()),
            StorageType::Bf16 => b[2 * i..2 * i + 2].copy_from_slice(&f32_to_bf16(f32::from_bits(bits)).to_le_bytes()),
            StorageType::U16 => b[2 * i..2 * i + 2].copy_from_slice(&(bits as u16).to_le_bytes()),
            StorageType::U8 | StorageType::I8 => b[i] = bits as u8,
        }
    }

    /// Every element as register bits.
    pub fn to_bits(&self) -> Vec<u32> {
        (0..self.len()).map(|i| self.load_bits(i)).collect()
    }

    /// Every element as f32 (for f32, f16 and bf16 buffers; integers reinterpret).
    pub fn to_f32(&self) -> Vec<f32> {
        self.to_bits().into_iter().map(f32::from_bits).collect()
    }

    /// Every element as u32 register bits.
    pub fn to_u32(&self) -> Vec<u32> {
        self.to_bits()
    }
}
