//! A timed unit's prelude on Vulkan ([`Prelude`]): its pipeline, its buffers uploaded
//! once into device-local memory and its descriptor set, prepared the first time a
//! prelude is met and recorded before each run of a timed unit.

use super::device::Vulkan;
use super::launch::{Prepared, Resources};
use crate::backend::{check_args, push_bytes, sequence_bindings, BackendError, BufferScope, Prelude};
use ash::vk;

/// A prepared prelude: its device buffers, their descriptor set, and the pipeline's
/// handles (the pipeline itself lives in the device's cache).
pub(super) struct PreparedPrelude {
    /// [`Prelude::id`] of the prelude this was prepared from.
    pub(super) id: u64,
    buffers: Vec<(vk::Buffer, vk::DeviceMemory)>,
    pool: vk::DescriptorPool,
    set: Option<vk::DescriptorSet>,
    pipeline: vk::Pipeline,
    layout: vk::PipelineLayout,
    push: Vec<u8>,
    groups: [u32; 3],
}

impl PreparedPrelude {
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
    /// Makes `p` the prepared prelude (kept while the same prelude comes back).
    pub(super) fn use_prelude(&mut self, p: &Prelude) -> Result<(), BackendError> {
        if self.prelude.as_ref().is_some_and(|q| q.id == p.id()) {
            return Ok(());
        }
        if let Some(old) = self.prelude.take() {
            // SAFETY: every submission waits for its fence, so no pending work uses it.
            unsafe { old.destroy(&self.device) };
        }
        self.prelude = Some(self.prepare_prelude(p)?);
        Ok(())
    }

    /// Prepares `p`: the pipeline, each bound buffer in device-local memory filled from
    /// a staging copy of its argument (one submission), the descriptor set.
    fn prepare_prelude(&mut self, p: &Prelude) -> Result<PreparedPrelude, BackendError> {
        let (l, a) = (p.launch(), p.args());
        check_args("vulkan", l, a)?;
        self.check_supported(l)?;
        self.check_groups(l)?;
        let push = push_bytes(l.kernel, a);
        let cached = self.pipeline(l, push.len())?;
        let (pipeline, layout, set_layout) = (cached.pipeline, cached.layout, cached.set_layout);
        let api = |what: &str, e: vk::Result| BackendError::Api {
            kernel: l.kernel.name.clone(),
            backend: "vulkan",
            message: format!("{what} (timing prelude): {e}"),
        };
        let d = &self.device;
        let (mut r, mut staging) = (Resources::new(d), Resources::new(d));
        let launch = [Prepared { layout, pipeline, set_layout, push, groups: l.groups }];
        let (launches, args) = (std::slice::from_ref(l), std::slice::from_ref(a));
        let bindings = sequence_bindings(launches, args, BufferScope::Shared);
        let staged = self.stage(&mut r, &mut staging, &bindings, args, &api)?;
        let set = self.descriptor_sets(&mut r, &launch, &bindings, &staged, &api)?[0];
        // SAFETY (whole block): one submission on this device from one thread; the fence
        // wait ends the GPU's use before anything is returned, and `r` and `staging`
        // destroy what is not handed to the prepared prelude on every path.
        unsafe {
            self.submit_timed(&mut staging, 1, &api, |cb, queries| {
                for b in &staged {
                    d.cmd_copy_buffer(cb, b.staging, b.device, &[vk::BufferCopy::default().size(b.size)]);
                }
                // Both queries written: results are read with WAIT, and a query never
                // written is never available (NVIDIA's driver then waits forever).
                if queries != vk::QueryPool::null() {
                    d.cmd_write_timestamp(cb, vk::PipelineStageFlags::TOP_OF_PIPE, queries, 0);
                    d.cmd_write_timestamp(cb, vk::PipelineStageFlags::BOTTOM_OF_PIPE, queries, 1);
                }
                Ok(())
            })?;
            drop(staging);
            let [launch] = launch;
            let prepared = PreparedPrelude {
                id: p.id(),
                buffers: std::mem::take(&mut r.buffers),
                pool: std::mem::replace(&mut r.pool, vk::DescriptorPool::null()),
                set,
                pipeline: launch.pipeline,
                layout: launch.layout,
                push: launch.push,
                groups: launch.groups,
            };
            drop(r);
            let messages = self.take_messages();
            if !messages.is_empty() {
                prepared.destroy(&self.device);
                return Err(BackendError::ValidationLayer { kernel: l.kernel.name.clone(), messages });
            }
            Ok(prepared)
        }
    }

    /// Records the prepared prelude into `cb` when `with` and one is prepared, then a
    /// barrier: every later command waits for it.
    ///
    /// # Safety
    /// `cb` is recording on this device.
    pub(super) unsafe fn record_prelude(&self, cb: vk::CommandBuffer, with: bool) {
        let Some(f) = self.prelude.as_ref().filter(|_| with) else { return };
        let d = &self.device;
        unsafe {
            d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, f.pipeline);
            if let Some(set) = f.set {
                d.cmd_bind_descriptor_sets(cb, vk::PipelineBindPoint::COMPUTE, f.layout, 0, &[set], &[]);
            }
            if !f.push.is_empty() {
                d.cmd_push_constants(cb, f.layout, vk::ShaderStageFlags::COMPUTE, 0, &f.push);
            }
            d.cmd_dispatch(cb, f.groups[0], f.groups[1], f.groups[2]);
            let done = [vk::MemoryBarrier::default()
                .src_access_mask(vk::AccessFlags::SHADER_WRITE)
                .dst_access_mask(vk::AccessFlags::SHADER_READ | vk::AccessFlags::TRANSFER_READ)];
            d.cmd_pipeline_barrier(
                cb,
                vk::PipelineStageFlags::COMPUTE_SHADER,
                vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::TRANSFER,
                vk::DependencyFlags::empty(),
                &done,
                &[],
                &[],
            );
        }
    }
}
