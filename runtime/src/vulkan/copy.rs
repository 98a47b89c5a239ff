//! The driver's buffer-to-buffer copy (`vkCmdCopyBuffer`) between timestamps: the copy
//! bandwidth the benchmarks compare the generated `copy_words` kernel with.

use super::device::Vulkan;
use super::launch::Resources;
use crate::backend::{BackendError, DRIVER_COPY};
use ash::vk;

impl Vulkan {
    /// Copies `bytes` between two device-local buffers `runs` times (each after the L2
    /// flush when set) and returns each copy's device time in ns (NaN without
    /// timestamps).
    pub(super) fn driver_copy(&mut self, bytes: u64, runs: u32) -> Result<Vec<f64>, BackendError> {
        let api = |what: &str, e: vk::Result| BackendError::Api { kernel: DRIVER_COPY.into(), backend: "vulkan", message: format!("{what}: {e}") };
        let d = &self.device;
        let mut r = Resources { device: d, buffers: Vec::new(), pool: vk::DescriptorPool::null(), queries: vk::QueryPool::null(), fence: vk::Fence::null() };
        let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
        let size = bytes.next_multiple_of(4);
        let (src, _) = self.allocate(&mut r, size, usage, vk::MemoryPropertyFlags::DEVICE_LOCAL, true).map_err(|(w, e)| api(w, e))?;
        let (dst, _) = self.allocate(&mut r, size, usage, vk::MemoryPropertyFlags::DEVICE_LOCAL, true).map_err(|(w, e)| api(w, e))?;
        let scratch = match self.flush_bytes {
            0 => None,
            n => Some(self.allocate(&mut r, n, vk::BufferUsageFlags::TRANSFER_DST, vk::MemoryPropertyFlags::DEVICE_LOCAL, true).map_err(|(w, e)| api(w, e))?.0),
        };
        // SAFETY (whole block): plain Vulkan object creation and use on one device and
        // queue from one thread; every pointer passed lives across its call, and the
        // fence wait ends the GPU's use of every object before `r` destroys them.
        unsafe {
            if self.timestamp_period_ns.is_some() {
                r.queries = d.create_query_pool(&vk::QueryPoolCreateInfo::default().query_type(vk::QueryType::TIMESTAMP).query_count(2 * runs), None).map_err(|e| api("vkCreateQueryPool", e))?;
            }
            let cb = d
                .allocate_command_buffers(&vk::CommandBufferAllocateInfo::default().command_pool(self.command_pool).level(vk::CommandBufferLevel::PRIMARY).command_buffer_count(1))
                .map_err(|e| api("vkAllocateCommandBuffers", e))?[0];
            let result = (|| -> Result<(), BackendError> {
                d.begin_command_buffer(cb, &vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)).map_err(|e| api("vkBeginCommandBuffer", e))?;
                if r.queries != vk::QueryPool::null() {
                    d.cmd_reset_query_pool(cb, r.queries, 0, 2 * runs);
                }
                d.cmd_fill_buffer(cb, src, 0, vk::WHOLE_SIZE, 0x3c00_3c00);
                for run in 0..runs {
                    if let Some(s) = scratch {
                        d.cmd_fill_buffer(cb, s, 0, vk::WHOLE_SIZE, 0);
                    }
                    // The fill (or the previous copy) completes before this copy starts.
                    let before = [vk::MemoryBarrier::default().src_access_mask(vk::AccessFlags::TRANSFER_WRITE).dst_access_mask(vk::AccessFlags::TRANSFER_READ | vk::AccessFlags::TRANSFER_WRITE)];
                    d.cmd_pipeline_barrier(cb, vk::PipelineStageFlags::TRANSFER, vk::PipelineStageFlags::TRANSFER, vk::DependencyFlags::empty(), &before, &[], &[]);
                    if r.queries != vk::QueryPool::null() {
                        d.cmd_write_timestamp(cb, vk::PipelineStageFlags::ALL_COMMANDS, r.queries, 2 * run);
                    }
                    d.cmd_copy_buffer(cb, src, dst, &[vk::BufferCopy::default().size(size)]);
                    if r.queries != vk::QueryPool::null() {
                        d.cmd_write_timestamp(cb, vk::PipelineStageFlags::BOTTOM_OF_PIPE, r.queries, 2 * run + 1);
                    }
                }
                d.end_command_buffer(cb).map_err(|e| api("vkEndCommandBuffer", e))?;
                r.fence = d.create_fence(&vk::FenceCreateInfo::default(), None).map_err(|e| api("vkCreateFence", e))?;
                let cbs = [cb];
                d.queue_submit(self.queue, &[vk::SubmitInfo::default().command_buffers(&cbs)], r.fence).map_err(|e| api("vkQueueSubmit", e))?;
                d.wait_for_fences(&[r.fence], true, u64::MAX).map_err(|e| api("vkWaitForFences", e))?;
                Ok(())
            })();
            d.free_command_buffers(self.command_pool, &[cb]);
            result?;
            let mut times = vec![f64::NAN; runs as usize];
            if let (Some(period), true) = (self.timestamp_period_ns, r.queries != vk::QueryPool::null()) {
                let mut ts = vec![0u64; 2 * runs as usize];
                if d.get_query_pool_results(r.queries, 0, &mut ts, vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT).is_ok() {
                    times = ts.chunks(2).map(|t| t[1].wrapping_sub(t[0]) as f64 * period).collect();
                }
            }
            drop(r);
            let messages = self.take_messages();
            if !messages.is_empty() {
                return Err(BackendError::ValidationLayer { kernel: DRIVER_COPY.into(), messages });
            }
            Ok(times)
        }
    }
}
