//! One launch: device-local buffers filled from staging buffers, pipeline with
//! specialization, descriptor set, push constants, dispatch between two timestamps,
//! copy back to staging and read-back. Every object lives in a guard that
//! destroys it on every path, errors included.

use super::device::{CachedPipeline, Vulkan};
use crate::args::Args;
use crate::backend::{
    check_args, check_sequence, push_bytes, sequence_bindings, Backend, BackendError, BufferScope, DeviceInfo, Launch, LaunchStats, SequenceBindings,
    TimedUnit, Work,
};
use ash::vk;

/// Owns the per-launch Vulkan objects (pipelines are cached on the device).
pub(super) struct Resources<'a> {
    pub(super) device: &'a ash::Device,
    pub(super) buffers: Vec<(vk::Buffer, vk::DeviceMemory)>,
    pub(super) pool: vk::DescriptorPool,
    pub(super) queries: vk::QueryPool,
    pub(super) fence: vk::Fence,
}

impl<'a> Resources<'a> {
    /// Nothing yet, on `device`.
    pub(super) fn new(device: &'a ash::Device) -> Self {
        Resources { device, buffers: Vec::new(), pool: vk::DescriptorPool::null(), queries: vk::QueryPool::null(), fence: vk::Fence::null() }
    }
}

impl Drop for Resources<'_> {
    fn drop(&mut self) {
        // SAFETY: all objects belong to `device` and the launch has completed (or never
        // started); destroying null handles is a no-op.
        unsafe {
            let d = self.device;
            d.destroy_fence(self.fence, None);
            d.destroy_query_pool(self.queries, None);
            d.destroy_descriptor_pool(self.pool, None);
            for (b, m) in &self.buffers {
                d.destroy_buffer(*b, None);
                d.free_memory(*m, None);
            }
        }
    }
}

/// What one launch of a sequence binds and pushes.
pub(super) struct Prepared {
    pub(super) layout: vk::PipelineLayout,
    pub(super) pipeline: vk::Pipeline,
    pub(super) set_layout: vk::DescriptorSetLayout,
    pub(super) push: Vec<u8>,
    pub(super) groups: [u32; 3],
}

/// A device-local buffer, its host-visible staging twin (and that twin's memory), and
/// their size in bytes.
pub(super) struct Staged {
    pub(super) device: vk::Buffer,
    pub(super) staging: vk::Buffer,
    pub(super) staging_memory: vk::DeviceMemory,
    pub(super) size: u64,
}

/// The Vulkan API error of a call, naming the first launch's kernel.
pub(super) type ApiError<'a> = &'a dyn Fn(&str, vk::Result) -> BackendError;

impl Backend for Vulkan {
    fn name(&self) -> &'static str {
        "vulkan"
    }

    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn launch(&mut self, l: &Launch, args: &mut Args) -> Result<LaunchStats, BackendError> {
        let times = self.run_sequence(std::slice::from_ref(l), std::slice::from_mut(args), 1, BufferScope::Shared, false)?;
        Ok(LaunchStats { device_ns: times.first().copied().filter(|t| !t.is_nan()) })
    }

    fn time(&mut self, unit: &TimedUnit, args: &mut [Args]) -> Result<Vec<f64>, BackendError> {
        if let Some(p) = unit.prelude {
            self.use_prelude(p)?;
        }
        let (runs, prelude) = (unit.runs.max(1), unit.prelude.is_some());
        match unit.work {
            Work::Launches { launches, buffers } => self.run_sequence(launches, args, runs, buffers, prelude),
            Work::DriverCopy { bytes } => self.driver_copy(bytes, runs, prelude),
        }
    }
}

impl Vulkan {
    /// Launches as one unit ([`Work::Launches`]): one device buffer per buffer name
    /// (`scope` Shared) or per launch and name (PerLaunch), each with a staging twin, one
    /// descriptor set per launch, then `runs` units recorded in one command buffer — the
    /// prepared prelude where `prelude`, a barrier, the first launch's pipeline
    /// bound, a timestamp, the dispatches with a barrier between consecutive ones, a
    /// timestamp — and the written buffers read back once into the arguments of every
    /// launch that binds them.
    fn run_sequence(
        &mut self,
        launches: &[Launch],
        args: &mut [Args],
        runs: u32,
        scope: BufferScope,
        prelude: bool,
    ) -> Result<Vec<f64>, BackendError> {
        check_sequence("vulkan", launches, args, scope)?;
        let mut prepared = Vec::with_capacity(launches.len());
        for (l, a) in launches.iter().zip(args.iter()) {
            let k = l.kernel;
            check_args("vulkan", l, a)?;
            self.check_supported(l)?;
            self.check_groups(l)?;
            let push = push_bytes(k, a);
            let cached = self.pipeline(l, push.len())?;
            prepared.push(Prepared { layout: cached.layout, pipeline: cached.pipeline, set_layout: cached.set_layout, push, groups: l.groups });
        }
        let first = launches[0].kernel.name.clone();
        let api = |what: &str, e: vk::Result| BackendError::Api { kernel: first.clone(), backend: "vulkan", message: format!("{what}: {e}") };
        let d = &self.device;
        let (mut r, mut staging) = (Resources::new(d), Resources::new(d));
        // SAFETY (whole block): plain Vulkan object creation and use on one device and
        // queue from one thread; every pointer passed lives across its call.
        unsafe {
            let bindings = sequence_bindings(launches, args, scope);
            let staged = self.stage(&mut r, &mut staging, &bindings, args, &api)?;
            let sets = self.descriptor_sets(&mut r, &prepared, &bindings, &staged, &api)?;
            let bind = |cb: vk::CommandBuffer, p: &Prepared, set: Option<vk::DescriptorSet>| {
                d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, p.pipeline);
                if let Some(s) = set {
                    d.cmd_bind_descriptor_sets(cb, vk::PipelineBindPoint::COMPUTE, p.layout, 0, &[s], &[]);
                }
                if !p.push.is_empty() {
                    d.cmd_push_constants(cb, p.layout, vk::ShaderStageFlags::COMPUTE, 0, &p.push);
                }
            };
            // The uploads, the prelude and the previous unit complete before a unit; one
            // dispatch's writes before the next dispatch of the unit.
            let before = [vk::MemoryBarrier::default()
                .src_access_mask(vk::AccessFlags::TRANSFER_WRITE | vk::AccessFlags::SHADER_WRITE)
                .dst_access_mask(vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE)];
            let between = [vk::MemoryBarrier::default()
                .src_access_mask(vk::AccessFlags::SHADER_WRITE)
                .dst_access_mask(vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE)];
            let barriers = !self.barriers_omitted();
            let times = self.submit_timed(&mut r, runs, &api, |cb, queries| {
                for b in &staged {
                    d.cmd_copy_buffer(cb, b.staging, b.device, &[vk::BufferCopy::default().size(b.size)]);
                }
                for run in 0..runs {
                    self.record_prelude(cb, prelude);
                    if barriers {
                        d.cmd_pipeline_barrier(
                            cb,
                            vk::PipelineStageFlags::TRANSFER | vk::PipelineStageFlags::COMPUTE_SHADER,
                            vk::PipelineStageFlags::COMPUTE_SHADER,
                            vk::DependencyFlags::empty(),
                            &before,
                            &[],
                            &[],
                        );
                    }
                    for (i, (p, set)) in prepared.iter().zip(&sets).enumerate() {
                        if i > 0 && barriers {
                            d.cmd_pipeline_barrier(
                                cb,
                                vk::PipelineStageFlags::COMPUTE_SHADER,
                                vk::PipelineStageFlags::COMPUTE_SHADER,
                                vk::DependencyFlags::empty(),
                                &between,
                                &[],
                                &[],
                            );
                        }
                        bind(cb, p, *set);
                        if i == 0 && queries != vk::QueryPool::null() {
                            // Written once every earlier command has completed: the interval
                            // covers this unit's dispatches only.
                            d.cmd_write_timestamp(cb, vk::PipelineStageFlags::ALL_COMMANDS, queries, 2 * run);
                        }
                        d.cmd_dispatch(cb, p.groups[0], p.groups[1], p.groups[2]);
                    }
                    if queries != vk::QueryPool::null() {
                        d.cmd_write_timestamp(cb, vk::PipelineStageFlags::BOTTOM_OF_PIPE, queries, 2 * run + 1);
                    }
                }
                let written =
                    [vk::MemoryBarrier::default().src_access_mask(vk::AccessFlags::SHADER_WRITE).dst_access_mask(vk::AccessFlags::TRANSFER_READ)];
                d.cmd_pipeline_barrier(
                    cb,
                    vk::PipelineStageFlags::COMPUTE_SHADER,
                    vk::PipelineStageFlags::TRANSFER,
                    vk::DependencyFlags::empty(),
                    &written,
                    &[],
                    &[],
                );
                for (b, &written) in staged.iter().zip(&bindings.written) {
                    if written {
                        d.cmd_copy_buffer(cb, b.device, b.staging, &[vk::BufferCopy::default().size(b.size)]);
                    }
                }
                let downloaded =
                    [vk::MemoryBarrier::default().src_access_mask(vk::AccessFlags::TRANSFER_WRITE).dst_access_mask(vk::AccessFlags::HOST_READ)];
                d.cmd_pipeline_barrier(
                    cb,
                    vk::PipelineStageFlags::TRANSFER,
                    vk::PipelineStageFlags::HOST,
                    vk::DependencyFlags::empty(),
                    &downloaded,
                    &[],
                    &[],
                );
                Ok(())
            })?;
            for ((((name, _), b), _), readers) in
                bindings.buffers.iter().zip(&staged).zip(&bindings.written).zip(&bindings.readers).filter(|((_, &w), _)| w)
            {
                let ptr =
                    d.map_memory(b.staging_memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty()).map_err(|e| api("vkMapMemory", e))? as *const u8;
                for &j in readers {
                    if let Some(host) = args[j].get_buffer_mut(name) {
                        let n = host.as_bytes().len();
                        std::ptr::copy_nonoverlapping(ptr, host.as_bytes_mut().as_mut_ptr(), n);
                    }
                }
                d.unmap_memory(b.staging_memory);
            }
            drop(staging);
            drop(r);
            let messages = self.take_messages();
            if !messages.is_empty() {
                return Err(BackendError::ValidationLayer { kernel: first, messages });
            }
            Ok(times)
        }
    }
}

impl Vulkan {
    /// Every buffer of `bindings` in device-local memory (where kernels read at the
    /// device's bandwidth) with a host-visible staging twin holding its argument's bytes;
    /// on devices whose memory is all one kind (lavapipe) both are the same kind of memory
    /// and the copies are cheap. The device buffers are recorded in `r`, the staging ones
    /// in `staging`, for destruction.
    pub(super) fn stage(
        &self,
        r: &mut Resources,
        staging: &mut Resources,
        bindings: &SequenceBindings,
        args: &[Args],
        api: ApiError,
    ) -> Result<Vec<Staged>, BackendError> {
        let d = &self.device;
        let mut staged = Vec::with_capacity(bindings.buffers.len());
        for (name, from) in &bindings.buffers {
            let host = args[*from].get_buffer(name).map(|h| h.as_bytes()).unwrap_or_default();
            let size = (host.len().max(4) as u64).next_multiple_of(4);
            let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
            let device_local = vk::MemoryPropertyFlags::DEVICE_LOCAL;
            let (device, _) = self.allocate(r, size, usage | vk::BufferUsageFlags::STORAGE_BUFFER, device_local, true).map_err(|(w, e)| api(w, e))?;
            let host_visible = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
            let (staging_buffer, staging_memory) = self.allocate(staging, size, usage, host_visible, false).map_err(|(w, e)| api(w, e))?;
            // SAFETY: the memory is host-visible, mapped whole here and unmapped before
            // anything else uses it; `host` fits in `size` bytes.
            unsafe {
                let ptr = d.map_memory(staging_memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty()).map_err(|e| api("vkMapMemory", e))? as *mut u8;
                std::ptr::write_bytes(ptr, 0, size as usize);
                std::ptr::copy_nonoverlapping(host.as_ptr(), ptr, host.len());
                d.unmap_memory(staging_memory);
            }
            staged.push(Staged { device, staging: staging_buffer, staging_memory, size });
        }
        Ok(staged)
    }

    /// One descriptor set per launch binding its buffers in the kernel's order (`None`
    /// for a launch without buffers), from a pool recorded in `r`.
    pub(super) fn descriptor_sets(
        &self,
        r: &mut Resources,
        prepared: &[Prepared],
        bindings: &SequenceBindings,
        staged: &[Staged],
        api: ApiError,
    ) -> Result<Vec<Option<vk::DescriptorSet>>, BackendError> {
        let d = &self.device;
        let descriptors: u32 = bindings.bound.iter().map(|b| b.len() as u32).sum();
        // SAFETY: object creation and descriptor writes on this device; the pool goes into
        // `r`, which destroys it after the submission that uses the sets.
        unsafe {
            if descriptors > 0 {
                let sizes = [vk::DescriptorPoolSize::default().ty(vk::DescriptorType::STORAGE_BUFFER).descriptor_count(descriptors)];
                let pool_ci = vk::DescriptorPoolCreateInfo::default().max_sets(prepared.len() as u32).pool_sizes(&sizes);
                r.pool = d.create_descriptor_pool(&pool_ci, None).map_err(|e| api("vkCreateDescriptorPool", e))?;
            }
            let mut sets = Vec::with_capacity(prepared.len());
            for (p, bound) in prepared.iter().zip(&bindings.bound) {
                if bound.is_empty() {
                    sets.push(None);
                    continue;
                }
                let set_layouts = [p.set_layout];
                let alloc = vk::DescriptorSetAllocateInfo::default().descriptor_pool(r.pool).set_layouts(&set_layouts);
                let s = d.allocate_descriptor_sets(&alloc).map_err(|e| api("vkAllocateDescriptorSets", e))?[0];
                let infos: Vec<[vk::DescriptorBufferInfo; 1]> =
                    bound.iter().map(|&at| [vk::DescriptorBufferInfo::default().buffer(staged[at].device).offset(0).range(vk::WHOLE_SIZE)]).collect();
                let writes: Vec<vk::WriteDescriptorSet> = infos
                    .iter()
                    .enumerate()
                    .map(|(i, info)| {
                        vk::WriteDescriptorSet::default()
                            .dst_set(s)
                            .dst_binding(i as u32)
                            .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                            .buffer_info(info)
                    })
                    .collect();
                d.update_descriptor_sets(&writes, &[]);
                sets.push(Some(s));
            }
            Ok(sets)
        }
    }

    /// Records one command buffer with `record` (given it and the timestamp query pool,
    /// null where the device has no timestamps: `2 · runs` queries, already reset),
    /// submits it, waits for it, and returns the interval of each query pair in ns (NaN
    /// without timestamps). The pool and the fence go into `r`.
    ///
    /// # Safety
    /// Every handle `record` uses must belong to this device and outlive the call.
    pub(super) unsafe fn submit_timed(
        &self,
        r: &mut Resources,
        runs: u32,
        api: &dyn Fn(&str, vk::Result) -> BackendError,
        record: impl FnOnce(vk::CommandBuffer, vk::QueryPool) -> Result<(), BackendError>,
    ) -> Result<Vec<f64>, BackendError> {
        let d = &self.device;
        if self.timestamp_period_ns.is_some() {
            r.queries = d
                .create_query_pool(&vk::QueryPoolCreateInfo::default().query_type(vk::QueryType::TIMESTAMP).query_count(2 * runs), None)
                .map_err(|e| api("vkCreateQueryPool", e))?;
        }
        let cb = d
            .allocate_command_buffers(
                &vk::CommandBufferAllocateInfo::default()
                    .command_pool(self.command_pool)
                    .level(vk::CommandBufferLevel::PRIMARY)
                    .command_buffer_count(1),
            )
            .map_err(|e| api("vkAllocateCommandBuffers", e))?[0];
        let result = (|| -> Result<(), BackendError> {
            d.begin_command_buffer(cb, &vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT))
                .map_err(|e| api("vkBeginCommandBuffer", e))?;
            if r.queries != vk::QueryPool::null() {
                d.cmd_reset_query_pool(cb, r.queries, 0, 2 * runs);
            }
            record(cb, r.queries)?;
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
        Ok(times)
    }

    /// A buffer of `size` bytes bound to fresh memory of a type with `want` (any allowed
    /// type when `fallback` and none has it), recorded in `r` for destruction.
    pub(super) fn allocate(
        &self,
        r: &mut Resources,
        size: u64,
        usage: vk::BufferUsageFlags,
        want: vk::MemoryPropertyFlags,
        fallback: bool,
    ) -> Result<(vk::Buffer, vk::DeviceMemory), (&'static str, vk::Result)> {
        let d = &self.device;
        // SAFETY: object creation on this device; every handle is recorded in `r`, which
        // destroys it on every path.
        unsafe {
            let buf = d.create_buffer(&vk::BufferCreateInfo::default().size(size).usage(usage), None).map_err(|e| ("vkCreateBuffer", e))?;
            let req = d.get_buffer_memory_requirements(buf);
            let allowed = |i: u32| req.memory_type_bits & (1 << i) != 0;
            let ty = (0..self.memory.memory_type_count)
                .find(|&i| allowed(i) && self.memory.memory_types[i as usize].property_flags.contains(want))
                .or_else(|| if fallback { (0..self.memory.memory_type_count).find(|&i| allowed(i)) } else { None });
            let Some(ty) = ty else {
                d.destroy_buffer(buf, None);
                return Err(("no suitable memory type", vk::Result::ERROR_OUT_OF_DEVICE_MEMORY));
            };
            let mem = match d.allocate_memory(&vk::MemoryAllocateInfo::default().allocation_size(req.size).memory_type_index(ty), None) {
                Ok(m) => m,
                Err(e) => {
                    d.destroy_buffer(buf, None);
                    return Err(("vkAllocateMemory", e));
                }
            };
            r.buffers.push((buf, mem));
            d.bind_buffer_memory(buf, mem, 0).map_err(|e| ("vkBindBufferMemory", e))?;
            Ok((buf, mem))
        }
    }

    /// `Arguments` when `l` dispatches more workgroups on an axis than the device allows.
    pub(super) fn check_groups(&self, l: &Launch) -> Result<(), BackendError> {
        match l.groups.iter().zip(&self.max_groups).enumerate().find(|(_, (g, max))| g > max) {
            Some((axis, (g, max))) => Err(BackendError::Arguments {
                kernel: l.kernel.name.clone(),
                backend: "vulkan",
                message: format!("{g} workgroups on axis {axis} exceed the device limit {max}"),
            }),
            None => Ok(()),
        }
    }

    /// `Unsupported` when this device cannot run the variant of `l` (checked before any
    /// pipeline is built): it declares more shared memory than the device offers, or it
    /// uses register tiles and the device has no cooperative matrices of their shape
    /// (docs/RUNTIME.md).
    pub(super) fn check_supported(&self, l: &Launch) -> Result<(), BackendError> {
        let k = l.kernel;
        let shared = k.shared_bytes_for(l.spec);
        let reason = if let (Some(_), Err(why)) = (&k.tiles, &self.tiles) {
            format!("it uses register tiles (cooperative matrices): {why}")
        } else if let Some(most) = self.info.max_shared_bytes.filter(|&most| shared > most) {
            format!("it declares {shared} bytes of shared memory; the device offers {most}")
        } else {
            return Ok(());
        };
        let variant = k.variants.iter().find(|v| v.spec == l.spec).map_or_else(|| format!("{:?}", l.spec), |v| v.label.clone());
        Err(BackendError::Unsupported { kernel: k.name.clone(), variant, backend: "vulkan", reason })
    }

    /// The cached pipeline of `l` (kernel, specialization) with `push_len` bytes of push
    /// constants, created on first use.
    pub(super) fn pipeline(&mut self, l: &Launch, push_len: usize) -> Result<&CachedPipeline, BackendError> {
        let key = (l.kernel.vulkan.spirv.sha256.clone(), self.spec_data(l), push_len);
        if !self.pipelines.contains_key(&key) {
            let p = self.create_pipeline(l, &key.1, push_len, false)?;
            self.pipelines.insert(key.clone(), p);
        }
        self.pipelines.get(&key).ok_or_else(|| BackendError::Api {
            kernel: l.kernel.name.clone(),
            backend: "vulkan",
            message: "pipeline cache lost an entry".into(),
        })
    }

    /// The specialization data of `l`: 4 bytes per constant, the kernel's spec constants
    /// in id order, then the fma and f16 switches the module has ([`helper_switches`]).
    pub(super) fn spec_data(&self, l: &Launch) -> Vec<u8> {
        let mut spec_data: Vec<u8> = l.spec.iter().flat_map(|(_, v)| v.bits().to_le_bytes()).collect();
        for (_, on) in self.helper_switches(l.kernel) {
            spec_data.extend_from_slice(&(on as u32).to_le_bytes());
        }
        spec_data
    }

    /// The helper switches the module of `k` declares, as (`constant_id`, value), in the
    /// order [`Vulkan::spec_data`] appends them.
    fn helper_switches(&self, k: &onekernel_dsl::manifest::KernelManifest) -> Vec<(u32, bool)> {
        let fma = k.vulkan.fma_spec_id.map(|id| (id, self.native_fma));
        let f16 = k.vulkan.f16_spec_id.map(|id| (id, self.f16_unpack_exact));
        fma.into_iter().chain(f16).collect()
    }

    /// Creates the descriptor-set layout, pipeline layout, shader module and pipeline of
    /// one kernel with one specialization ([`Vulkan::spec_data`]); `capture_statistics`
    /// asks the driver to keep its compiler statistics (`VK_KHR_pipeline_executable_properties`).
    pub(super) fn create_pipeline(
        &self,
        l: &Launch,
        spec_data: &[u8],
        push_len: usize,
        capture_statistics: bool,
    ) -> Result<CachedPipeline, BackendError> {
        let k = l.kernel;
        let api = |what: &str, e: vk::Result| BackendError::Api { kernel: k.name.clone(), backend: "vulkan", message: format!("{what}: {e}") };
        let path = l.artifacts.join(&k.vulkan.spirv.path);
        let bytes =
            std::fs::read(&path).map_err(|source| BackendError::Artifact { kernel: k.name.clone(), path: path.display().to_string(), source })?;
        let words: Vec<u32> = bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        let d = &self.device;
        let mut p = CachedPipeline {
            set_layout: vk::DescriptorSetLayout::null(),
            layout: vk::PipelineLayout::null(),
            module: vk::ShaderModule::null(),
            pipeline: vk::Pipeline::null(),
        };
        // SAFETY: object creation on our device; on failure everything created so far is
        // destroyed below (destroying null handles is a no-op).
        let r = unsafe {
            (|| -> Result<(), BackendError> {
                let bindings: Vec<vk::DescriptorSetLayoutBinding> = (0..k.buffers.len() as u32)
                    .map(|i| {
                        vk::DescriptorSetLayoutBinding::default()
                            .binding(i)
                            .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                            .descriptor_count(1)
                            .stage_flags(vk::ShaderStageFlags::COMPUTE)
                    })
                    .collect();
                p.set_layout = d
                    .create_descriptor_set_layout(&vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings), None)
                    .map_err(|e| api("vkCreateDescriptorSetLayout", e))?;
                let ranges = [vk::PushConstantRange::default().stage_flags(vk::ShaderStageFlags::COMPUTE).offset(0).size(push_len as u32)];
                let set_layouts = [p.set_layout];
                let mut lci = vk::PipelineLayoutCreateInfo::default().set_layouts(&set_layouts);
                if push_len > 0 {
                    lci = lci.push_constant_ranges(&ranges);
                }
                p.layout = d.create_pipeline_layout(&lci, None).map_err(|e| api("vkCreatePipelineLayout", e))?;
                p.module =
                    d.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&words), None).map_err(|e| api("vkCreateShaderModule", e))?;
                let mut entries: Vec<vk::SpecializationMapEntry> =
                    (0..l.spec.len() as u32).map(|i| vk::SpecializationMapEntry::default().constant_id(i).offset(4 * i).size(4)).collect();
                for (n, (id, _)) in self.helper_switches(k).into_iter().enumerate() {
                    entries.push(vk::SpecializationMapEntry::default().constant_id(id).offset(4 * (l.spec.len() + n) as u32).size(4));
                }
                let spec = vk::SpecializationInfo::default().map_entries(&entries).data(spec_data);
                let mut stage = vk::PipelineShaderStageCreateInfo::default().stage(vk::ShaderStageFlags::COMPUTE).module(p.module).name(c"main");
                if !entries.is_empty() {
                    stage = stage.specialization_info(&spec);
                }
                let flags = if capture_statistics { vk::PipelineCreateFlags::CAPTURE_STATISTICS_KHR } else { vk::PipelineCreateFlags::empty() };
                let mut robustness = vk::PipelineRobustnessCreateInfoEXT::default()
                    .storage_buffers(vk::PipelineRobustnessBufferBehaviorEXT::DISABLED)
                    .uniform_buffers(vk::PipelineRobustnessBufferBehaviorEXT::DISABLED);
                let mut ci = vk::ComputePipelineCreateInfo::default().flags(flags).stage(stage).layout(p.layout);
                if self.unchecked_buffers {
                    ci = ci.push_next(&mut robustness);
                }
                let pci = [ci];
                p.pipeline =
                    d.create_compute_pipelines(vk::PipelineCache::null(), &pci, None).map_err(|(_, e)| api("vkCreateComputePipelines", e))?[0];
                Ok(())
            })()
        };
        if let Err(e) = r {
            // SAFETY: as above.
            unsafe { p.destroy(d) };
            return Err(e);
        }
        Ok(p)
    }
}
