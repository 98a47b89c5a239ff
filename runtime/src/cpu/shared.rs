//! Workgroup-shared arrays with a race detector.
//!
//! The interpreter runs a workgroup in lockstep, so a missing `barrier()` would go
//! unnoticed in it and break on a GPU. Each cell therefore remembers which invocation
//! last wrote and read it in the current barrier interval ("epoch"); a conflicting
//! access by another invocation in the same interval is reported as a data race, and
//! a read of a cell never written in this workgroup as uninitialized.

use super::error::Fault;

const MANY: u16 = u16::MAX;
/// Marks an access by a whole group of 32 invocations (a tile load or store): the group number
/// below it. Any invocation of that group may touch the cell after it.
pub(crate) const GROUP: u16 = 0x8000;

/// Whether accesses by owners `a` and `b` (invocations or [`GROUP`] marks) need no
/// barrier between them: the same invocation, or an invocation and its own group.
fn same_owner(a: u16, b: u16) -> bool {
    // A group mark's group, and an invocation's (MANY has the GROUP bit: neither).
    let group = |x: u16| (x & GROUP != 0 && x != MANY).then_some(x & !GROUP);
    let lanes_group = |x: u16| (x & GROUP == 0).then_some(x / 32);
    let covers = |g: u16, i: u16| group(g).is_some_and(|g| lanes_group(i) == Some(g));
    a == b || covers(a, b) || covers(b, a)
}

/// One `shared::<T, N>()` array.
pub(crate) struct SharedArray {
    pub name: String,
    data: Vec<u32>,
    w_epoch: Vec<u32>,
    w_lane: Vec<u16>,
    r_epoch: Vec<u32>,
    r_lane: Vec<u16>,
    /// Cells an `async_copy` is filling (see `async_copy.rs`).
    pending: Vec<bool>,
}

impl SharedArray {
    pub fn new(name: &str, len: usize) -> Self {
        SharedArray {
            name: name.to_string(),
            data: vec![0; len],
            w_epoch: vec![0; len],
            w_lane: vec![0; len],
            r_epoch: vec![0; len],
            r_lane: vec![0; len],
            pending: vec![false; len],
        }
    }

    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// The cell's bits without recording a read, or `None` while an `async_copy` is
    /// filling it (its value is about to change).
    pub fn peek(&self, idx: usize) -> Option<u32> {
        (!self.pending.get(idx).copied().unwrap_or(true)).then(|| self.data[idx])
    }

    /// Forgets all accesses: a new workgroup starts with uninitialized memory.
    pub fn reset(&mut self) {
        self.w_epoch.fill(0);
        self.r_epoch.fill(0);
        self.pending.fill(false);
    }

    pub fn read(&mut self, idx: usize, lane: u16, epoch: u32) -> Result<u32, Fault> {
        self.check_settled(idx)?;
        if self.w_epoch[idx] == 0 {
            return Err(Fault::UninitializedShared { array: self.name.clone(), index: idx });
        }
        if self.w_epoch[idx] == epoch && !same_owner(self.w_lane[idx], lane) {
            return Err(self.race(idx, "written then read", self.w_lane[idx], lane));
        }
        if self.r_epoch[idx] == epoch {
            if !same_owner(self.r_lane[idx], lane) {
                self.r_lane[idx] = MANY;
            }
        } else {
            self.r_epoch[idx] = epoch;
            self.r_lane[idx] = lane;
        }
        Ok(self.data[idx])
    }

    pub fn write(&mut self, idx: usize, lane: u16, epoch: u32, v: u32) -> Result<(), Fault> {
        self.check_settled(idx)?;
        self.check_write(idx, lane, epoch)?;
        self.w_epoch[idx] = epoch;
        self.w_lane[idx] = lane;
        self.data[idx] = v;
        Ok(())
    }

    /// An `async_copy` into the cell starts: it conflicts like a write, and the cell is
    /// pending until [`SharedArray::finish_async`].
    pub fn start_async(&mut self, idx: usize, lane: u16, epoch: u32) -> Result<(), Fault> {
        self.check_settled(idx)?;
        self.check_write(idx, lane, epoch)?;
        self.pending[idx] = true;
        Ok(())
    }

    /// The copy's `async_wait`: the value lands as the invocation's write.
    pub fn finish_async(&mut self, idx: usize, lane: u16, epoch: u32, v: u32) -> Result<(), Fault> {
        self.pending[idx] = false;
        self.write(idx, lane, epoch, v)
    }

    fn check_settled(&self, idx: usize) -> Result<(), Fault> {
        if self.pending[idx] {
            return Err(Fault::AsyncPending { array: self.name.clone(), index: idx });
        }
        Ok(())
    }

    fn check_write(&self, idx: usize, lane: u16, epoch: u32) -> Result<(), Fault> {
        if self.w_epoch[idx] == epoch && !same_owner(self.w_lane[idx], lane) {
            return Err(self.race(idx, "written twice", self.w_lane[idx], lane));
        }
        if self.r_epoch[idx] == epoch && !same_owner(self.r_lane[idx], lane) {
            let reader = self.r_lane[idx];
            return Err(self.race(idx, "read then written", reader, lane));
        }
        Ok(())
    }

    fn race(&self, idx: usize, kind: &'static str, first: u16, second: u16) -> Fault {
        let first = match first {
            MANY => "several invocations".to_string(),
            g if g & GROUP != 0 => format!("the tile operation of group {}", g & !GROUP),
            i => format!("invocation {i}"),
        };
        // A group's access is reported as its first invocation's.
        let second = if second & GROUP != 0 && second != MANY { u32::from(second & !GROUP) * 32 } else { u32::from(second) };
        Fault::DataRace { array: self.name.clone(), index: idx, kind, first, second }
    }
}
