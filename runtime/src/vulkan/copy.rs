//! The driver's buffer-to-buffer copy (`vkCmdCopyBuffer`) between timestamps: the copy
//! bandwidth the benchmarks compare the generated `copy_words` kernel with.

use super::device::Vulkan;
use super::launch::Resources;
use crate::backend::{BackendError, DRIVER_COPY};
use ash::vk;

impl Vulkan {
    /// Copies `bytes` between two device-local buffers `runs` times (each after the
    /// prepared prelude where `prelude`) and returns each copy's device time in ns (NaN
    /// without timestamps).
    pub(super) fn driver_copy(&self, bytes: u64, runs: u32, prelude: bool) -> Result<Vec<f64>, BackendError> {
        let api = |what: &str, e: vk::Result| BackendError::Api { kernel: DRIVER_COPY.into(), backend: "vulkan", message: format!("{what}: {e}") };
        let d = &self.device;
        let mut r =
            Resources { device: d, buffers: Vec::new(), pool: vk::DescriptorPool::null(), queries: vk::QueryPool::null(), fence: vk::Fence::null() };
        let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
        let size = bytes.next_multiple_of(4);
        let (src, _) = self.allocate(&mut r, size, usage, vk::MemoryPropertyFlags::DEVICE_LOCAL, true).map_err(|(w, e)| api(w, e))?;
        let (dst, _) = self.allocate(&mut r, size, usage, vk::MemoryPropertyFlags::DEVICE_LOCAL, true).map_err(|(w, e)| api(w, e))?;
        // SAFETY (whole block): plain Vulkan object creation and use on one device and
        // queue from one thread; every pointer passed lives across its call, and the
        // fence wait ends the GPU's use of every object before `r` destroys them.
        unsafe {
            let times = self.submit_timed(&mut r, runs, &api, |cb, queries| {
                d.cmd_fill_buffer(cb, src, 0, vk::WHOLE_SIZE, 0x3c00_3c00);
                for run in 0..runs {
                    self.record_prelude(cb, prelude);
                    // The prelude (or the previous copy) completes before this copy starts.
                    let before = [vk::MemoryBarrier::default()
                        .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
                        .dst_access_mask(vk::AccessFlags::TRANSFER_READ | vk::AccessFlags::TRANSFER_WRITE)];
                    d.cmd_pipeline_barrier(
                        cb,
                        vk::PipelineStageFlags::TRANSFER,
                        vk::PipelineStageFlags::TRANSFER,
                        vk::DependencyFlags::empty(),
                        &before,
                        &[],
                        &[],
                    );
                    if queries != vk::QueryPool::null() {
                        d.cmd_write_timestamp(cb, vk::PipelineStageFlags::ALL_COMMANDS, queries, 2 * run);
                    }
                    d.cmd_copy_buffer(cb, src, dst, &[vk::BufferCopy::default().size(size)]);
                    if queries != vk::QueryPool::null() {
                        d.cmd_write_timestamp(cb, vk::PipelineStageFlags::BOTTOM_OF_PIPE, queries, 2 * run + 1);
                    }
                }
                Ok(())
            })?;
            drop(r);
            let messages = self.take_messages();
            if !messages.is_empty() {
                return Err(BackendError::ValidationLayer { kernel: DRIVER_COPY.into(), messages });
            }
            Ok(times)
        }
    }
}
