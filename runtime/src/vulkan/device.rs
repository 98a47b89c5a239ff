//! Instance, device selection, features and the validation-layer message sink.

use crate::backend::{BackendError, DeviceInfo};
use ash::vk;
use std::ffi::{c_void, CStr};
use std::sync::Mutex;

/// A compiled pipeline and what it owns, cached per (module, specialization).
pub(super) struct CachedPipeline {
    pub set_layout: vk::DescriptorSetLayout,
    pub layout: vk::PipelineLayout,
    pub module: vk::ShaderModule,
    pub pipeline: vk::Pipeline,
}

impl CachedPipeline {
    /// Destroys the four objects (null handles are skipped by Vulkan).
    ///
    /// # Safety
    /// They were created on `device` and no pending work uses them.
    pub unsafe fn destroy(&self, device: &ash::Device) {
        unsafe {
            device.destroy_pipeline(self.pipeline, None);
            device.destroy_shader_module(self.module, None);
            device.destroy_pipeline_layout(self.layout, None);
            device.destroy_descriptor_set_layout(self.set_layout, None);
        }
    }
}

/// A Vulkan device ready to run kernels.
pub struct Vulkan {
    /// Pipelines by (SPIR-V SHA-256, specialization data, push-constant size).
    /// Whether kernels with register tiles run here, or why not.
    pub(super) tiles: Result<(), String>,
    pub(super) pipelines: std::collections::HashMap<(String, Vec<u8>, usize), CachedPipeline>,
    pub(super) _entry: ash::Entry,
    pub(super) instance: ash::Instance,
    pub(super) debug: Option<(ash::ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)>,
    /// Messages of the validation layer since the last launch (boxed: the layer holds
    /// a pointer to it).
    pub(super) messages: Box<Mutex<Vec<String>>>,
    pub(super) phys: vk::PhysicalDevice,
    pub(super) device: ash::Device,
    pub(super) queue: vk::Queue,
    pub(super) command_pool: vk::CommandPool,
    pub(super) memory: vk::PhysicalDeviceMemoryProperties,
    pub(super) timestamp_period_ns: Option<f64>,
    pub(super) max_groups: [u32; 3],
    pub(super) info: DeviceInfo,
    /// Value of the `ok_native_fma` specialization constant.
    pub(super) native_fma: bool,
    /// Value of the `ok_f16_unpack_exact` specialization constant.
    pub(super) f16_unpack_exact: bool,
    /// Whether the validation layer is active.
    pub validation_layer: bool,
    /// The prelude of the last timed unit that had one, kept while it comes back.
    pub(super) prelude: Option<super::prelude::PreparedPrelude>,
    /// `VK_KHR_pipeline_executable_properties`, when the driver has it: pipelines are
    /// then created with statistics capture (`Vulkan::pipeline_statistics`).
    pub(super) executable_properties: Option<ash::khr::pipeline_executable_properties::Device>,
    /// Whether pipelines are created with storage- and uniform-buffer robustness
    /// disabled (`VK_EXT_pipeline_robustness` enabled on the device).
    pub(super) unchecked_buffers: bool,
    /// Test hook: record none of the barriers before and between a unit's dispatches.
    #[cfg(feature = "fault-injection")]
    pub(super) omit_barriers: bool,
}

unsafe extern "system" fn on_message(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    _types: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    user: *mut c_void,
) -> vk::Bool32 {
    if severity.intersects(vk::DebugUtilsMessageSeverityFlagsEXT::WARNING | vk::DebugUtilsMessageSeverityFlagsEXT::ERROR)
        && !data.is_null()
        && !user.is_null()
    {
        // SAFETY: the layer passes the data of this call and the pointer we registered,
        // which outlives the messenger (it is destroyed first in Drop).
        let (data, sink) = unsafe { (&*data, &*(user as *const Mutex<Vec<String>>)) };
        let msg = if data.p_message.is_null() {
            String::from("(no message)")
        } else {
            unsafe { CStr::from_ptr(data.p_message) }.to_string_lossy().into_owned()
        };
        if let Ok(mut m) = sink.lock() {
            m.push(msg);
        }
    }
    vk::FALSE
}

/// The Vulkan loader, opened once per process and never closed, with one idle instance
/// that is never destroyed.
///
/// Why: the loader unloads the driver (ICD) libraries when its last instance is
/// destroyed, and the library itself when its last handle is dropped. On the H200
/// machine (NVIDIA 580.159.04), two threads that each opened and dropped a Vulkan and
/// a CUDA backend crashed the process (SIGSEGV, every run of `attention_fixtures` with
/// two test threads; neither backend alone, nor one thread, did), which points at the
/// NVIDIA Vulkan driver being unloaded and reloaded beside CUDA work. Keeping the driver
/// loaded costs one idle instance.
fn process_loader() -> Result<ash::Entry, BackendError> {
    static LOADER: std::sync::OnceLock<Result<ash::Entry, String>> = std::sync::OnceLock::new();
    let entry = LOADER.get_or_init(|| {
        // SAFETY: loading the system's Vulkan loader library.
        let entry = unsafe { ash::Entry::load() }.map_err(|e| format!("no Vulkan loader: {e}"))?;
        let app = vk::ApplicationInfo::default().application_name(c"onekernel (keeps the driver loaded)").api_version(vk::API_VERSION_1_0);
        // SAFETY: a plain instance, deliberately never destroyed (see above: ash's handles
        // have no `Drop`, so letting it go destroys nothing); where it cannot be created,
        // `with_device`'s own vkCreateInstance reports why.
        let _kept = unsafe { entry.create_instance(&vk::InstanceCreateInfo::default().application_info(&app), None) };
        Ok(entry)
    });
    entry.clone().map_err(unavailable)
}

fn unavailable(reason: impl std::fmt::Display) -> BackendError {
    BackendError::Unavailable { backend: "vulkan", reason: reason.to_string() }
}

/// A fixed-size, NUL-terminated string field of a Vulkan structure.
pub(super) fn cstr_field(bytes: &[std::ffi::c_char]) -> String {
    let bytes: Vec<u8> = bytes.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// What the validation layer checks in this instance, for `DeviceInfo::validation`:
/// evidence must say whether GPU-assisted validation was really on, not only asked for.
/// `off` names why the layer is not on, where it is not.
fn layer_summary(off: Option<&str>, features_ext: bool, features: &[vk::ValidationFeatureEnableEXT]) -> String {
    if let Some(why) = off {
        return format!("none ({why})");
    }
    let mut checks = vec!["API usage"];
    if features_ext {
        for f in features {
            checks.push(match *f {
                vk::ValidationFeatureEnableEXT::SYNCHRONIZATION_VALIDATION => "synchronization",
                vk::ValidationFeatureEnableEXT::GPU_ASSISTED => "GPU-assisted (bounds of every storage-buffer access)",
                _ => "other",
            });
        }
    }
    format!("Khronos validation layer: {}", checks.join(", "))
}

/// The debug messenger that collects the validation layer's messages into `messages`
/// (`None` where it cannot be created: the layer then reports nothing).
fn messenger(
    entry: &ash::Entry,
    instance: &ash::Instance,
    messages: &Mutex<Vec<String>>,
) -> Option<(ash::ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)> {
    let du = ash::ext::debug_utils::Instance::new(entry, instance);
    let ci = vk::DebugUtilsMessengerCreateInfoEXT::default()
        .message_severity(vk::DebugUtilsMessageSeverityFlagsEXT::WARNING | vk::DebugUtilsMessageSeverityFlagsEXT::ERROR)
        .message_type(
            vk::DebugUtilsMessageTypeFlagsEXT::GENERAL
                | vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION
                | vk::DebugUtilsMessageTypeFlagsEXT::PERFORMANCE,
        )
        .pfn_user_callback(Some(on_message))
        .user_data(messages as *const Mutex<Vec<String>> as *mut c_void);
    match unsafe { du.create_debug_utils_messenger(&ci, None) } {
        Ok(m) => Some((du, m)),
        Err(_) => None,
    }
}

/// The physical device `selector` names (an index or part of its name), else a discrete
/// GPU, an integrated one, a virtual one, a CPU, in that order; and its properties.
fn choose_device(instance: &ash::Instance, selector: Option<&str>) -> Result<(vk::PhysicalDevice, vk::PhysicalDeviceProperties), BackendError> {
    let phys_all = unsafe { instance.enumerate_physical_devices() }.map_err(|e| unavailable(format!("vkEnumeratePhysicalDevices: {e}")))?;
    if phys_all.is_empty() {
        return Err(unavailable("no Vulkan device"));
    }
    let props: Vec<vk::PhysicalDeviceProperties> = phys_all.iter().map(|&p| unsafe { instance.get_physical_device_properties(p) }).collect();
    let chosen = match selector {
        Some(sel) => match sel.parse::<usize>() {
            Ok(i) if i < phys_all.len() => i,
            _ => props
                .iter()
                .position(|p| cstr_field(&p.device_name).to_lowercase().contains(&sel.to_lowercase()))
                .ok_or_else(|| unavailable(format!("no Vulkan device matches `{sel}`")))?,
        },
        None => {
            let rank = |t: vk::PhysicalDeviceType| match t {
                vk::PhysicalDeviceType::DISCRETE_GPU => 0,
                vk::PhysicalDeviceType::INTEGRATED_GPU => 1,
                vk::PhysicalDeviceType::VIRTUAL_GPU => 2,
                vk::PhysicalDeviceType::CPU => 3,
                _ => 4,
            };
            (0..phys_all.len()).min_by_key(|&i| rank(props[i].device_type)).unwrap_or(0)
        }
    };
    Ok((phys_all[chosen], props[chosen]))
}

/// What a device tells of itself, and the switches the runtime derives from it.
struct Described {
    driver: String,
    denormals: String,
    subgroup_size: u32,
    /// Compute shaders may shuffle across a subgroup (register tiles' slot reductions).
    subgroup_shuffle: bool,
    native_fma: bool,
    f16_unpack_exact: bool,
}

/// The driver, subgroup size and float controls of `phys`, and how `fma` and f16
/// widening run on it.
fn describe(instance: &ash::Instance, phys: vk::PhysicalDevice, p: &vk::PhysicalDeviceProperties, dev_api: u32) -> Described {
    let mut subgroup = vk::PhysicalDeviceSubgroupProperties::default();
    let mut driver = vk::PhysicalDeviceDriverProperties::default();
    let mut float_controls = vk::PhysicalDeviceFloatControlsProperties::default();
    let mut props2 = vk::PhysicalDeviceProperties2::default().push_next(&mut subgroup);
    if dev_api >= vk::API_VERSION_1_2 {
        props2 = props2.push_next(&mut driver).push_next(&mut float_controls);
    }
    unsafe { instance.get_physical_device_properties2(phys, &mut props2) };
    let has12 = dev_api >= vk::API_VERSION_1_2;
    let driver_name = if has12 {
        format!("{} {}", cstr_field(&driver.driver_name), cstr_field(&driver.driver_info))
    } else {
        format!("driver version {:#x}", p.driver_version)
    };
    let denormals = if has12 {
        format!(
            "f32 DenormPreserve {}, DenormFlushToZero {} (supported float-controls modes; modules request neither)",
            if float_controls.shader_denorm_preserve_float32 == vk::TRUE { "supported" } else { "unsupported" },
            if float_controls.shader_denorm_flush_to_zero_float32 == vk::TRUE { "supported" } else { "unsupported" }
        )
    } else {
        "unknown (Vulkan 1.1 device)".into()
    };
    // GPUs of these vendors execute fma as one fused operation; anything else (e.g.
    // llvmpipe, which computes a*b then +c) gets the exact emulation. The validator
    // proves the choice on each device. ONEKERNEL_VK_NATIVE_FMA=0/1 overrides.
    let fused_vendor = matches!(p.vendor_id, 0x10de | 0x1002 | 0x8086 | 0x106b | 0x13b5 | 0x5143);
    let native_fma = match std::env::var("ONEKERNEL_VK_NATIVE_FMA").as_deref() {
        Ok("0") => false,
        Ok("1") => true,
        _ => fused_vendor,
    };
    // NVIDIA's unpackHalf2x16 widens subnormal halves exactly (validate's all-subnormal
    // cases, bitwise on the H200); other drivers build them by hand, which costs a
    // test and a branch per element. ONEKERNEL_VK_F16_UNPACK=0/1 overrides.
    let f16_unpack_exact = match std::env::var("ONEKERNEL_VK_F16_UNPACK").as_deref() {
        Ok("0") => false,
        Ok("1") => true,
        _ => p.vendor_id == 0x10de,
    };

    let subgroup_shuffle = subgroup.supported_operations.contains(vk::SubgroupFeatureFlags::SHUFFLE)
        && subgroup.supported_stages.contains(vk::ShaderStageFlags::COMPUTE);
    Described { driver: driver_name, denormals, subgroup_size: subgroup.subgroup_size, subgroup_shuffle, native_fma, f16_unpack_exact }
}

impl Vulkan {
    /// Opens the Vulkan loader and a device (`ONEKERNEL_VK_DEVICE` selects one, else a
    /// discrete GPU first); `Unavailable` when there is none.
    pub fn new() -> Result<Self, BackendError> {
        Self::with_device(std::env::var("ONEKERNEL_VK_DEVICE").ok().as_deref())
    }

    /// Opens the device `selector` names (an index or part of its name), or the default
    /// choice when `None`.
    pub fn with_device(selector: Option<&str>) -> Result<Self, BackendError> {
        let entry = process_loader()?;
        let instance_version = unsafe { entry.try_enumerate_instance_version() }.ok().flatten().unwrap_or(vk::API_VERSION_1_0);
        if instance_version < vk::API_VERSION_1_1 {
            return Err(unavailable("the Vulkan loader supports only 1.0; 1.1 is needed"));
        }
        let api = if instance_version >= vk::API_VERSION_1_2 { vk::API_VERSION_1_2 } else { vk::API_VERSION_1_1 };
        let layers = unsafe { entry.enumerate_instance_layer_properties() }.unwrap_or_default();
        let want_validation = std::env::var("ONEKERNEL_VK_VALIDATION").map(|v| v != "0").unwrap_or(true);
        let validation = c"VK_LAYER_KHRONOS_validation";
        let layer_version = layers.iter().find(|l| l.layer_name_as_c_str().ok() == Some(validation)).map(|l| l.spec_version);
        let exts = unsafe { entry.enumerate_instance_extension_properties(None) }.unwrap_or_default();
        let has_debug = exts.iter().any(|e| e.extension_name_as_c_str().ok() == Some(ash::ext::debug_utils::NAME));
        // Why the layer is off, where it is (`DeviceInfo::validation` names it).
        let off = if !want_validation {
            Some("ONEKERNEL_VK_VALIDATION=0")
        } else if layer_version.is_none() {
            Some("the Khronos validation layer is not installed")
        } else if !has_debug {
            Some("the loader offers no VK_EXT_debug_utils to report through")
        } else {
            None
        };
        let validation_layer = off.is_none();
        let layer_version = layer_version.unwrap_or(0);
        // A layer older than VK_KHR_cooperative_matrix (header 1.3.255) reports the
        // extension and its feature structure as errors at device creation and cannot
        // check its shaders: under it, tile kernels are unsupported rather than every
        // launch failing (Debian 12's layer is 1.3.239).
        let layer_knows_cooperative_matrix: Result<(), String> = if validation_layer && layer_version < vk::make_api_version(0, 1, 3, 255) {
            Err(format!(
                "the Khronos validation layer in use ({}.{}.{}) predates VK_KHR_cooperative_matrix (1.3.255); ONEKERNEL_VK_VALIDATION=0 runs them without it",
                vk::api_version_major(layer_version),
                vk::api_version_minor(layer_version),
                vk::api_version_patch(layer_version)
            ))
        } else {
            Ok(())
        };
        let layer_names = if validation_layer { vec![validation.as_ptr()] } else { vec![] };
        // VkValidationFeaturesEXT belongs to the layer's own instance extension, which must
        // be enabled for the layer to read it.
        let layer_exts =
            if validation_layer { unsafe { entry.enumerate_instance_extension_properties(Some(validation)) }.unwrap_or_default() } else { vec![] };
        let has_features_ext = layer_exts.iter().any(|e| e.extension_name_as_c_str().ok() == Some(ash::ext::validation_features::NAME));
        let mut ext_names = if validation_layer { vec![ash::ext::debug_utils::NAME.as_ptr()] } else { vec![] };
        if has_features_ext {
            ext_names.push(ash::ext::validation_features::NAME.as_ptr());
        }
        let app = vk::ApplicationInfo::default().application_name(c"onekernel").api_version(api);
        // With the layer, its synchronization validation too (it cost nothing measurable
        // on lavapipe); ONEKERNEL_VK_VALIDATION_FEATURES=sync,gpu adds GPU-assisted
        // validation (bounds of descriptor-indexed buffers: shaders instrumented, several
        // times slower on lavapipe), `none` turns both off (docs/RUNTIME.md).
        let features: Vec<vk::ValidationFeatureEnableEXT> = std::env::var("ONEKERNEL_VK_VALIDATION_FEATURES")
            .unwrap_or_else(|_| "sync".into())
            .split(',')
            .filter_map(|f| match f.trim() {
                "sync" => Some(vk::ValidationFeatureEnableEXT::SYNCHRONIZATION_VALIDATION),
                "gpu" => Some(vk::ValidationFeatureEnableEXT::GPU_ASSISTED),
                // `none` and anything else enable nothing.
                _ => None,
            })
            .collect();
        let mut validation_features = vk::ValidationFeaturesEXT::default().enabled_validation_features(&features);
        let mut ci = vk::InstanceCreateInfo::default().application_info(&app).enabled_layer_names(&layer_names).enabled_extension_names(&ext_names);
        if validation_layer && has_features_ext && !features.is_empty() {
            ci = ci.push_next(&mut validation_features);
        }
        let instance = unsafe { entry.create_instance(&ci, None) }.map_err(|e| unavailable(format!("vkCreateInstance: {e}")))?;
        let validation_summary = layer_summary(off, has_features_ext, &features);

        let messages: Box<Mutex<Vec<String>>> = Box::new(Mutex::new(Vec::new()));
        let debug = if validation_layer { messenger(&entry, &instance, &messages) } else { None };

        let (phys, p) = choose_device(&instance, selector)?;
        let dev_api = p.api_version.min(api);

        let has12 = dev_api >= vk::API_VERSION_1_2;
        let d = describe(&instance, phys, &p, dev_api);
        let (native_fma, f16_unpack_exact) = (d.native_fma, d.f16_unpack_exact);
        // Features the generated modules may use: 8/16-bit storage and small integers.
        let mut f11 = vk::PhysicalDeviceVulkan11Features::default();
        let mut f12 = vk::PhysicalDeviceVulkan12Features::default();
        let mut s16 = vk::PhysicalDevice16BitStorageFeatures::default();
        let mut feats = vk::PhysicalDeviceFeatures2::default();
        feats = if has12 { feats.push_next(&mut f11).push_next(&mut f12) } else { feats.push_next(&mut s16) };
        unsafe { instance.get_physical_device_features2(phys, &mut feats) };
        let core = vk::PhysicalDeviceFeatures::default()
            .shader_int16(feats.features.shader_int16 == vk::TRUE)
            .shader_float64(feats.features.shader_float64 == vk::TRUE);
        let mut e11 = vk::PhysicalDeviceVulkan11Features::default().storage_buffer16_bit_access(f11.storage_buffer16_bit_access == vk::TRUE);
        let mut e12 = vk::PhysicalDeviceVulkan12Features::default()
            .storage_buffer8_bit_access(f12.storage_buffer8_bit_access == vk::TRUE)
            .shader_int8(f12.shader_int8 == vk::TRUE);
        let mut e16 = vk::PhysicalDevice16BitStorageFeatures::default().storage_buffer16_bit_access(s16.storage_buffer16_bit_access == vk::TRUE);
        // The compiler's own resource report (registers, shared memory, …) where the driver
        // offers it: a diagnostic only, so its absence changes nothing else.
        let dev_exts = unsafe { instance.enumerate_device_extension_properties(phys) }.unwrap_or_default();
        let offers = |name: &std::ffi::CStr| dev_exts.iter().any(|e| e.extension_name_as_c_str().ok() == Some(name));
        let mut pep = vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default();
        let has_pep = offers(ash::khr::pipeline_executable_properties::NAME) && {
            let mut f2 = vk::PhysicalDeviceFeatures2::default().push_next(&mut pep);
            unsafe { instance.get_physical_device_features2(phys, &mut f2) };
            pep.pipeline_executable_info == vk::TRUE
        };
        let mut e_pep = vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default().pipeline_executable_info(true);
        // Storage buffers without the driver's bounds checks where it lets us say so
        // (VK_EXT_pipeline_robustness): NVIDIA's driver otherwise guards every load and
        // store with a compare and a branch, even with robustBufferAccess off (4–6 % of
        // decode attention's time on the H200). Sizes are checked before every launch and the
        // interpreter rejects out-of-bounds indices, so the checks only cost time.
        // ONEKERNEL_VK_BUFFER_CHECKS=1 keeps the driver's default (A/B measurements).
        let mut pr = vk::PhysicalDevicePipelineRobustnessFeaturesEXT::default();
        let has_pr = std::env::var("ONEKERNEL_VK_BUFFER_CHECKS").as_deref() != Ok("1") && offers(ash::ext::pipeline_robustness::NAME) && {
            let mut f2 = vk::PhysicalDeviceFeatures2::default().push_next(&mut pr);
            unsafe { instance.get_physical_device_features2(phys, &mut f2) };
            pr.pipeline_robustness == vk::TRUE
        };
        let mut e_pr = vk::PhysicalDevicePipelineRobustnessFeaturesEXT::default().pipeline_robustness(true);
        // Register tiles where the device has cooperative matrices: the extension, its
        // feature, the memory model and f16 arithmetic their modules declare.
        let tiles =
            super::tiles::support(&entry, &instance, phys, has12, offers(ash::khr::cooperative_matrix::NAME), d.subgroup_size, d.subgroup_shuffle)
                .and(layer_knows_cooperative_matrix);
        let mut e_coop = vk::PhysicalDeviceCooperativeMatrixFeaturesKHR::default().cooperative_matrix(true);
        if tiles.is_ok() {
            // Device scope: the memory model's modules synchronize across workgroups at
            // it (`last_arrival`: docs/CODEGEN.md, "Arrivals").
            e12 = e12.vulkan_memory_model(true).vulkan_memory_model_device_scope(true).shader_float16(true);
        }
        let info = DeviceInfo {
            backend: "vulkan".into(),
            device: cstr_field(&p.device_name),
            driver: d.driver.trim().to_string(),
            subgroup_size: Some(d.subgroup_size),
            denormals: d.denormals,
            fma: if native_fma { "native (fused)".into() } else { "exact emulation (f64 product, round-to-odd sum)".into() },
            f16_widening: if f16_unpack_exact {
                "unpackHalf2x16 (subnormals exact on this driver)".into()
            } else {
                "unpackHalf2x16, subnormal halves by hand".into()
            },
            async_copies: false,
            async_panels: false,
            // `maxComputeSharedMemorySize`, which `check_supported` holds variants to.
            max_shared_bytes: Some(p.limits.max_compute_shared_memory_size),
            buffer_checks: if has_pr {
                "disabled per pipeline (VK_EXT_pipeline_robustness; sizes are checked before launch)".into()
            } else {
                "driver default (no VK_EXT_pipeline_robustness, or ONEKERNEL_VK_BUFFER_CHECKS=1)".into()
            },
            validation: validation_summary,
        };
        let mut device_exts = Vec::new();
        if has_pep {
            device_exts.push(ash::khr::pipeline_executable_properties::NAME.as_ptr());
        }
        if has_pr {
            device_exts.push(ash::ext::pipeline_robustness::NAME.as_ptr());
        }
        if tiles.is_ok() {
            device_exts.push(ash::khr::cooperative_matrix::NAME.as_ptr());
        }

        let families = unsafe { instance.get_physical_device_queue_family_properties(phys) };
        let (qfi, family) = families
            .iter()
            .enumerate()
            .find(|(_, f)| f.queue_flags.contains(vk::QueueFlags::COMPUTE))
            .ok_or_else(|| unavailable("no compute queue"))?;
        let prio = [1.0f32];
        let qci = [vk::DeviceQueueCreateInfo::default().queue_family_index(qfi as u32).queue_priorities(&prio)];
        let mut dci = vk::DeviceCreateInfo::default().queue_create_infos(&qci).enabled_features(&core);
        dci = if has12 { dci.push_next(&mut e11).push_next(&mut e12) } else { dci.push_next(&mut e16) };
        dci = dci.enabled_extension_names(&device_exts);
        if has_pep {
            dci = dci.push_next(&mut e_pep);
        }
        if has_pr {
            dci = dci.push_next(&mut e_pr);
        }
        if tiles.is_ok() {
            dci = dci.push_next(&mut e_coop);
        }
        let device = unsafe { instance.create_device(phys, &dci, None) }.map_err(|e| unavailable(format!("vkCreateDevice: {e}")))?;
        let executable_properties = has_pep.then(|| ash::khr::pipeline_executable_properties::Device::new(&instance, &device));
        let queue = unsafe { device.get_device_queue(qfi as u32, 0) };
        let pool_ci = vk::CommandPoolCreateInfo::default().queue_family_index(qfi as u32).flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
        let command_pool = unsafe { device.create_command_pool(&pool_ci, None) }.map_err(|e| unavailable(format!("vkCreateCommandPool: {e}")))?;
        let memory = unsafe { instance.get_physical_device_memory_properties(phys) };
        let timestamp_period_ns = (family.timestamp_valid_bits > 0 && p.limits.timestamp_period > 0.0).then_some(p.limits.timestamp_period as f64);
        Ok(Vulkan {
            _entry: entry,
            instance,
            debug,
            messages,
            phys,
            device,
            queue,
            command_pool,
            memory,
            timestamp_period_ns,
            max_groups: p.limits.max_compute_work_group_count,
            info,
            native_fma,
            f16_unpack_exact,
            prelude: None,
            validation_layer,
            pipelines: std::collections::HashMap::new(),
            executable_properties,
            unchecked_buffers: has_pr,
            tiles,
            #[cfg(feature = "fault-injection")]
            omit_barriers: false,
        })
    }

    /// Fault injection for the validation layer's negative control: with `omit`, a
    /// launch records none of the barriers that order the uploads before its first
    /// dispatch and one dispatch's writes before the next one's accesses: hazards that
    /// synchronization validation must report.
    #[cfg(feature = "fault-injection")]
    pub fn omit_barriers(&mut self, omit: bool) {
        self.omit_barriers = omit;
    }

    /// Whether the fault-injection hook removed the barriers before and between dispatches.
    pub(super) fn barriers_omitted(&self) -> bool {
        #[cfg(feature = "fault-injection")]
        return self.omit_barriers;
        #[cfg(not(feature = "fault-injection"))]
        false
    }

    /// Takes the validation-layer messages collected so far.
    pub(super) fn take_messages(&self) -> Vec<String> {
        self.messages.lock().map(|mut m| std::mem::take(&mut *m)).unwrap_or_default()
    }
}

impl Drop for Vulkan {
    fn drop(&mut self) {
        // SAFETY: every object below was created by this instance/device and is no
        // longer in use (launches wait for their fence before returning).
        unsafe {
            let _ = self.device.device_wait_idle();
            if let Some(f) = self.prelude.take() {
                f.destroy(&self.device);
            }
            for (_, p) in self.pipelines.drain() {
                p.destroy(&self.device);
            }
            self.device.destroy_command_pool(self.command_pool, None);
            self.device.destroy_device(None);
            if let Some((du, m)) = self.debug.take() {
                du.destroy_debug_utils_messenger(m, None);
            }
            self.instance.destroy_instance(None);
        }
        let _ = self.phys;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_names_the_checks_that_are_on_or_why_none_are() {
        let both = [vk::ValidationFeatureEnableEXT::SYNCHRONIZATION_VALIDATION, vk::ValidationFeatureEnableEXT::GPU_ASSISTED];
        let on = layer_summary(None, true, &both);
        assert_eq!(on, "Khronos validation layer: API usage, synchronization, GPU-assisted (bounds of every storage-buffer access)");
        // Features asked for but without the layer's features extension are not on.
        assert_eq!(layer_summary(None, false, &both), "Khronos validation layer: API usage");
        let off = layer_summary(Some("the Khronos validation layer is not installed"), true, &both);
        assert_eq!(off, "none (the Khronos validation layer is not installed)");
        assert!(!off.contains("GPU-assisted"), "CI greps for GPU-assisted: an absent layer must not match");
    }
}
