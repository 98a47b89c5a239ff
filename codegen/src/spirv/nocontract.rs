//! Marks every floating-point add, subtract, multiply, negate and `fma` of a module
//! `NoContraction`, so no driver may fuse or reassociate them (DESIGN.md §4). Doing it
//! on the SPIR-V instead of with GLSL `precise` covers every expression (conditions,
//! indices, stored values), not just those assigned to a variable.

use rspirv::binary::Assemble;
use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::{Decoration, Op};

/// GLSL.std.450 instruction number of `Fma`.
const GLSL_STD_450_FMA: u32 = 50;

/// Returns the module with `NoContraction` on every float arithmetic result.
pub fn forbid_contraction(words: &[u32]) -> Result<Vec<u32>, String> {
    let mut module = rspirv::dr::load_words(words).map_err(|e| e.to_string())?;
    let glsl_set: Vec<u32> = module
        .ext_inst_imports
        .iter()
        .filter(|i| matches!(i.operands.first(), Some(Operand::LiteralString(s)) if s == "GLSL.std.450"))
        .filter_map(|i| i.result_id)
        .collect();
    let already: std::collections::HashSet<u32> = module
        .annotations
        .iter()
        .filter(|a| a.class.opcode == Op::Decorate && a.operands.get(1) == Some(&Operand::Decoration(Decoration::NoContraction)))
        .filter_map(|a| match a.operands.first() {
            Some(Operand::IdRef(id)) => Some(*id),
            _ => None,
        })
        .collect();
    let mut targets = Vec::new();
    for f in &module.functions {
        for b in &f.blocks {
            for i in &b.instructions {
                let float_op = matches!(i.class.opcode, Op::FAdd | Op::FSub | Op::FMul | Op::FNegate);
                let fma = i.class.opcode == Op::ExtInst
                    && matches!(i.operands.first(), Some(Operand::IdRef(set)) if glsl_set.contains(set))
                    && matches!(i.operands.get(1), Some(Operand::LiteralExtInstInteger(GLSL_STD_450_FMA)));
                if float_op || fma {
                    if let Some(id) = i.result_id {
                        if !already.contains(&id) {
                            targets.push(id);
                        }
                    }
                }
            }
        }
    }
    for id in targets {
        module.annotations.push(Instruction::new(Op::Decorate, None, None, vec![Operand::IdRef(id), Operand::Decoration(Decoration::NoContraction)]));
    }
    Ok(module.assemble())
}
