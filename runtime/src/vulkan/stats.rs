//! The driver compiler's report on a pipeline (`VK_KHR_pipeline_executable_properties`):
//! per executable, named statistics such as register count or shared memory — the
//! Vulkan counterpart of `ptxas --resource-usage`, for explaining performance.

use super::device::{cstr_field, Vulkan};
use crate::backend::{BackendError, Launch};
use ash::vk;
use std::ffi::c_char;

/// One named statistic of an executable, as the driver formats it.
#[derive(Clone, Debug, PartialEq)]
pub struct Statistic {
    /// The driver's name for it (e.g. "Register Count").
    pub name: String,
    /// Its value, printed (integers, floats and booleans as the driver typed them).
    pub value: String,
    /// The driver's description.
    pub description: String,
}

/// The statistics of one executable (one shader stage) of a pipeline.
#[derive(Clone, Debug, PartialEq)]
pub struct ExecutableStatistics {
    /// The executable's name as the driver reports it.
    pub name: String,
    /// Its subgroup size.
    pub subgroup_size: u32,
    /// The statistics, in the driver's order.
    pub statistics: Vec<Statistic>,
}

fn text(bytes: &[c_char]) -> String {
    cstr_field(bytes).trim().to_string()
}

impl Vulkan {
    /// Whether the driver reports pipeline statistics (the extension is present and
    /// enabled).
    pub fn has_pipeline_statistics(&self) -> bool {
        self.executable_properties.is_some()
    }

    /// The driver compiler's statistics for the pipeline of `l` (its kernel and
    /// specialization), from a pipeline built for the query with statistics capture and
    /// destroyed after it (launches keep using pipelines built without the flag).
    /// `Unavailable` when the driver lacks `VK_KHR_pipeline_executable_properties`.
    pub fn pipeline_statistics(&self, l: &Launch) -> Result<Vec<ExecutableStatistics>, BackendError> {
        let Some(ext) = self.executable_properties.as_ref() else {
            return Err(BackendError::Unavailable {
                backend: "vulkan",
                reason: format!("the driver ({}) does not offer VK_KHR_pipeline_executable_properties", self.info.driver),
            });
        };
        self.check_supported(l)?;
        let kernel = l.kernel.name.clone();
        let api = |what: &str, e: vk::Result| BackendError::Api { kernel: kernel.clone(), backend: "vulkan", message: format!("{what}: {e}") };
        let p = self.create_pipeline(l, &self.spec_data(l), l.kernel.push_constant_bytes as usize, true)?;
        let result = self.query(ext, p.pipeline, &api);
        // SAFETY: objects of our device, used by nothing else (no launch saw them).
        unsafe { p.destroy(&self.device) };
        result
    }

    fn query(
        &self,
        ext: &ash::khr::pipeline_executable_properties::Device,
        pipeline: vk::Pipeline,
        api: &dyn Fn(&str, vk::Result) -> BackendError,
    ) -> Result<Vec<ExecutableStatistics>, BackendError> {
        let mut out = Vec::new();
        // SAFETY: queries on a pipeline of our device created with CAPTURE_STATISTICS.
        unsafe {
            let info = vk::PipelineInfoKHR::default().pipeline(pipeline);
            let executables = ext.get_pipeline_executable_properties(&info).map_err(|e| api("vkGetPipelineExecutablePropertiesKHR", e))?;
            for (i, x) in executables.iter().enumerate() {
                let xi = vk::PipelineExecutableInfoKHR::default().pipeline(pipeline).executable_index(i as u32);
                let stats = ext.get_pipeline_executable_statistics(&xi).map_err(|e| api("vkGetPipelineExecutableStatisticsKHR", e))?;
                let statistics = stats
                    .iter()
                    .map(|s| Statistic {
                        name: text(&s.name),
                        description: text(&s.description),
                        value: match s.format {
                            vk::PipelineExecutableStatisticFormatKHR::BOOL32 => (s.value.b32 == vk::TRUE).to_string(),
                            vk::PipelineExecutableStatisticFormatKHR::INT64 => s.value.i64.to_string(),
                            vk::PipelineExecutableStatisticFormatKHR::UINT64 => s.value.u64.to_string(),
                            vk::PipelineExecutableStatisticFormatKHR::FLOAT64 => s.value.f64.to_string(),
                            other => format!("(format {other:?})"),
                        },
                    })
                    .collect();
                out.push(ExecutableStatistics { name: text(&x.name), subgroup_size: x.subgroup_size, statistics });
            }
        }
        Ok(out)
    }
}
