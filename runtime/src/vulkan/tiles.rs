//! Whether a device runs register tiles (docs/DSL.md, "Register tiles"): the generated
//! GLSL declares 16 × 16 cooperative matrices of the subgroup, f16 operands and f32
//! accumulators (`VK_KHR_cooperative_matrix`), with the Vulkan memory model and f16
//! arithmetic, in subgroups of the manifest's group size, which can shuffle.

use ash::vk;
use onekernel_dsl::manifest::TileFeatures;

/// What the device offers for tiles: `Ok` with the features to enable, or why not.
pub(super) fn support(
    entry: &ash::Entry,
    instance: &ash::Instance,
    phys: vk::PhysicalDevice,
    has12: bool,
    offers_extension: bool,
    subgroup_size: u32,
    subgroup_shuffle: bool,
) -> Result<(), String> {
    let want = TileFeatures::standard();
    if !has12 {
        return Err("the device's Vulkan is older than 1.2 (no Vulkan memory model or f16 arithmetic)".into());
    }
    if !offers_extension {
        return Err("the device does not offer VK_KHR_cooperative_matrix".into());
    }
    let mut coop = vk::PhysicalDeviceCooperativeMatrixFeaturesKHR::default();
    let mut f12 = vk::PhysicalDeviceVulkan12Features::default();
    let mut f2 = vk::PhysicalDeviceFeatures2::default().push_next(&mut coop).push_next(&mut f12);
    // SAFETY: `phys` belongs to `instance`; the chained structs outlive the call.
    unsafe { instance.get_physical_device_features2(phys, &mut f2) };
    if coop.cooperative_matrix != vk::TRUE {
        return Err("the device does not enable the cooperativeMatrix feature".into());
    }
    if f12.vulkan_memory_model != vk::TRUE || f12.vulkan_memory_model_device_scope != vk::TRUE || f12.shader_float16 != vk::TRUE {
        return Err("the device lacks vulkanMemoryModel, vulkanMemoryModelDeviceScope or shaderFloat16".into());
    }
    if subgroup_size != want.group {
        return Err(format!("its subgroups have {subgroup_size} invocations; tiles are held by {}", want.group));
    }
    if !subgroup_shuffle {
        return Err("its compute shaders cannot shuffle across a subgroup (the tiles' slot reductions)".into());
    }
    let ext = ash::khr::cooperative_matrix::Instance::new(entry, instance);
    // SAFETY: the extension is offered by `phys`; the function only fills the vector.
    let props = unsafe { ext.get_physical_device_cooperative_matrix_properties(phys) }.map_err(|e| format!("cooperative-matrix properties: {e}"))?;
    let f16 = vk::ComponentTypeKHR::FLOAT16;
    let f32 = vk::ComponentTypeKHR::FLOAT32;
    let [m, n, k] = want.shape;
    let found = props.iter().any(|p| {
        (p.m_size, p.n_size, p.k_size) == (m, n, k)
            && (p.a_type, p.b_type, p.c_type, p.result_type) == (f16, f16, f32, f32)
            && p.scope == vk::ScopeKHR::SUBGROUP
    });
    if !found {
        return Err(format!("the device offers no {m} × {n} × {k} subgroup cooperative matrix of f16 operands and f32 accumulators"));
    }
    Ok(())
}
