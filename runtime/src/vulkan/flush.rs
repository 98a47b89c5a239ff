//! The benchmarks' L2 flush on Vulkan ([`L2Flush`]): `read_words` over zeroed
//! device-local scratch, prepared once and recorded before each timed unit.

use super::device::Vulkan;
use super::launch::Resources;
use crate::backend::{check_args, push_bytes, BackendError};
use crate::l2_flush::L2Flush;
use ash::vk;

/// The prepared flush: the scratch and `hits` buffers, their descriptor set, and the
/// pipeline's handles (the pipeline itself lives in the device's cache).
pub(super) struct L2Reader {
    buffers: Vec<(vk::Buffer, vk::DeviceMemory)>,
    pool: vk::DescriptorPool,
    set: vk::DescriptorSet,
    pipeline: vk::Pipeline,
    layout: vk::PipelineLayout,
    push: Vec<u8>,
    groups: [u32; 3],
}

impl L2Reader {
    /// Destroys the buffers and the descriptor pool.
    ///
    /// # Safety
    /// They were created on `device` and no pending work uses them.
    pub(super) unsafe fn destroy(&self, device: &ash::Device) {
        unsafe {
            device.destroy_descriptor_pool(self.pool, None);
            for (b, m) in &self.buffers {
                device.destroy_buffer(*b, None);
                device.free_memory(*m, None);
            }
        }
    }
}

impl Vulkan {
    /// Prepares `f`: the pipeline, the zeroed scratch and `hits` (filled once, here), the
    /// descriptor set binding them in `read_words`'s order.
    pub(super) fn create_l2_reader(&mut self, f: &L2Flush) -> Result<L2Reader, BackendError> {
        f.check("vulkan")?;
        let (l, a) = (f.launch(), f.args());
        check_args("vulkan", &l, &a)?;
        self.check_groups(&l)?;
        let push = push_bytes(l.kernel, &a);
        let cached = self.pipeline(&l, push.len())?;
        let (pipeline, layout, set_layout) = (cached.pipeline, cached.layout, cached.set_layout);
        let api = |what: &str, e: vk::Result| BackendError::Api { kernel: l.kernel.name.clone(), backend: "vulkan", message: format!("{what} (L2 flush): {e}") };
        let d = &self.device;
        let mut r = Resources { device: d, buffers: Vec::new(), pool: vk::DescriptorPool::null(), queries: vk::QueryPool::null(), fence: vk::Fence::null() };
        let usage = vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_DST;
        let (scratch, _) = self.allocate(&mut r, f.bytes, usage, vk::MemoryPropertyFlags::DEVICE_LOCAL, true).map_err(|(w, e)| api(w, e))?;
        let (hits, _) = self.allocate(&mut r, 4, usage, vk::MemoryPropertyFlags::DEVICE_LOCAL, true).map_err(|(w, e)| api(w, e))?;
        // SAFETY (whole block): object creation and one submission on this device from
        // one thread; the fence wait ends the GPU's use before anything is returned, and
        // `r` destroys what is not handed to the reader on every path.
        unsafe {
            let sizes = [vk::DescriptorPoolSize::default().ty(vk::DescriptorType::STORAGE_BUFFER).descriptor_count(2)];
            r.pool = d.create_descriptor_pool(&vk::DescriptorPoolCreateInfo::default().max_sets(1).pool_sizes(&sizes), None).map_err(|e| api("vkCreateDescriptorPool", e))?;
            let set_layouts = [set_layout];
            let set = d.allocate_descriptor_sets(&vk::DescriptorSetAllocateInfo::default().descriptor_pool(r.pool).set_layouts(&set_layouts)).map_err(|e| api("vkAllocateDescriptorSets", e))?[0];
            let infos = [scratch, hits].map(|b| [vk::DescriptorBufferInfo::default().buffer(b).offset(0).range(vk::WHOLE_SIZE)]);
            let writes: Vec<vk::WriteDescriptorSet> =
                infos.iter().enumerate().map(|(i, info)| vk::WriteDescriptorSet::default().dst_set(set).dst_binding(i as u32).descriptor_type(vk::DescriptorType::STORAGE_BUFFER).buffer_info(info)).collect();
            d.update_descriptor_sets(&writes, &[]);
            self.submit_timed(&mut r, 1, &api, |cb, queries| {
                d.cmd_fill_buffer(cb, scratch, 0, vk::WHOLE_SIZE, 0);
                d.cmd_fill_buffer(cb, hits, 0, vk::WHOLE_SIZE, 0);
                // Both queries written: results are read with WAIT, and a query never
                // written is never available (NVIDIA's driver then waits forever).
                if queries != vk::QueryPool::null() {
                    d.cmd_write_timestamp(cb, vk::PipelineStageFlags::TOP_OF_PIPE, queries, 0);
                    d.cmd_write_timestamp(cb, vk::PipelineStageFlags::BOTTOM_OF_PIPE, queries, 1);
                }
                Ok(())
            })?;
            let reader = L2Reader { buffers: std::mem::take(&mut r.buffers), pool: std::mem::replace(&mut r.pool, vk::DescriptorPool::null()), set, pipeline, layout, push, groups: l.groups };
            drop(r);
            let messages = self.take_messages();
            if !messages.is_empty() {
                reader.destroy(&self.device);
                return Err(BackendError::ValidationLayer { kernel: l.kernel.name.clone(), messages });
            }
            Ok(reader)
        }
    }

    /// Records the flush into `cb`, then a barrier: every later command waits for it.
    ///
    /// # Safety
    /// `cb` is recording on this device and `f` is this device's reader.
    pub(super) unsafe fn record_l2_flush(&self, cb: vk::CommandBuffer, f: &L2Reader) {
        let d = &self.device;
        unsafe {
            d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, f.pipeline);
            d.cmd_bind_descriptor_sets(cb, vk::PipelineBindPoint::COMPUTE, f.layout, 0, &[f.set], &[]);
            d.cmd_push_constants(cb, f.layout, vk::ShaderStageFlags::COMPUTE, 0, &f.push);
            d.cmd_dispatch(cb, f.groups[0], f.groups[1], f.groups[2]);
            let done = [vk::MemoryBarrier::default().src_access_mask(vk::AccessFlags::SHADER_WRITE).dst_access_mask(vk::AccessFlags::SHADER_READ | vk::AccessFlags::TRANSFER_READ)];
            d.cmd_pipeline_barrier(cb, vk::PipelineStageFlags::COMPUTE_SHADER, vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::TRANSFER, vk::DependencyFlags::empty(), &done, &[], &[]);
        }
    }
}
