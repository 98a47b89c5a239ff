//! Reflection of a compiled module's interface with rspirv: storage-buffer bindings,
//! the push-constant block's member offsets and size, spec-constant ids and the local
//! size. The generator cross-checks it against what it meant to emit.

use rspirv::dr::{Instruction, Module, Operand};
use rspirv::spirv::{Decoration, ExecutionMode, Op, StorageClass};
use std::collections::{BTreeMap, HashMap};

pub use onekernel_dsl::manifest::Reflection;

fn id(op: Option<&Operand>) -> Option<u32> {
    match op {
        Some(Operand::IdRef(i)) => Some(*i),
        _ => None,
    }
}

fn lit(op: Option<&Operand>) -> Option<u32> {
    match op {
        Some(Operand::LiteralBit32(v)) => Some(*v),
        _ => None,
    }
}

fn decorations(m: &Module) -> HashMap<u32, Vec<&Instruction>> {
    let mut map: HashMap<u32, Vec<&Instruction>> = HashMap::new();
    for a in &m.annotations {
        if a.class.opcode == Op::Decorate {
            if let Some(target) = id(a.operands.first()) {
                map.entry(target).or_default().push(a);
            }
        }
    }
    map
}

fn decoration_value(decos: &[&Instruction], d: Decoration) -> Option<u32> {
    decos.iter().find(|a| a.operands.get(1) == Some(&Operand::Decoration(d))).and_then(|a| lit(a.operands.get(2)))
}

/// Reads the interface of a module.
pub fn reflect(words: &[u32]) -> Result<Reflection, String> {
    let m = rspirv::dr::load_words(words).map_err(|e| e.to_string())?;
    let decos = decorations(&m);
    let mut r = Reflection::default();
    // Pointer type id → pointee type id.
    let pointers: HashMap<u32, u32> = m
        .types_global_values
        .iter()
        .filter(|i| i.class.opcode == Op::TypePointer)
        .filter_map(|i| Some((i.result_id?, id(i.operands.get(1))?)))
        .collect();
    for v in m.types_global_values.iter().filter(|i| i.class.opcode == Op::Variable) {
        let Some(var) = v.result_id else { continue };
        match v.operands.first() {
            Some(Operand::StorageClass(StorageClass::StorageBuffer)) | Some(Operand::StorageClass(StorageClass::Uniform)) => {
                let d = decos.get(&var).map(|v| v.as_slice()).unwrap_or(&[]);
                if let (Some(set), Some(binding)) = (decoration_value(d, Decoration::DescriptorSet), decoration_value(d, Decoration::Binding)) {
                    r.bindings.push((set, binding));
                }
            }
            Some(Operand::StorageClass(StorageClass::PushConstant)) => {
                let Some(block) = v.result_type.and_then(|t| pointers.get(&t)).copied() else { continue };
                let mut offsets: BTreeMap<u32, u32> = BTreeMap::new();
                for a in &m.annotations {
                    if a.class.opcode == Op::MemberDecorate
                        && id(a.operands.first()) == Some(block)
                        && a.operands.get(2) == Some(&Operand::Decoration(Decoration::Offset))
                    {
                        if let (Some(member), Some(off)) = (lit(a.operands.get(1)), lit(a.operands.get(3))) {
                            offsets.insert(member, off);
                        }
                    }
                }
                r.push_offsets = offsets.values().copied().collect();
                r.push_size = r.push_offsets.iter().max().map(|o| o + 4).unwrap_or(0);
            }
            _ => {}
        }
    }
    // A binding that `load_words` also reads through a vector-typed view is declared by
    // two variables; the interface has it once.
    r.bindings.sort();
    r.bindings.dedup();
    for (target, ds) in &decos {
        let _ = target;
        if let Some(spec) = decoration_value(ds, Decoration::SpecId) {
            r.spec_ids.push(spec);
        }
    }
    r.spec_ids.sort();
    for e in &m.execution_modes {
        if e.operands.get(1) == Some(&Operand::ExecutionMode(ExecutionMode::LocalSize)) {
            r.local_size = [lit(e.operands.get(2)).unwrap_or(0), lit(e.operands.get(3)).unwrap_or(0), lit(e.operands.get(4)).unwrap_or(0)];
        }
    }
    Ok(r)
}
