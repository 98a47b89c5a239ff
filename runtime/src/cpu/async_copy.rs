//! Asynchronous copies (`async_copy`, `async_commit`, `async_wait`; docs/DSL.md): each
//! invocation's copies in flight, in the commit groups the backends count.
//!
//! A copy reads its source when it starts (kernels do not write the buffers they copy
//! from) and its destination cells are *pending* until the invocation's `async_wait`
//! retires it: any access to them meanwhile is a fault, because on a GPU it would race
//! with the copy. The data lands at the wait, as a write by the invocation in the wait's
//! barrier interval, so the shared-memory race detector also demands a `barrier()`
//! before other invocations read it.

use std::collections::VecDeque;

/// One element in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PendingCopy {
    /// Destination shared array (index into the kernel's shared arrays).
    pub shared: usize,
    /// Destination element.
    pub index: usize,
    /// The value read from the source.
    pub value: u32,
}

#[derive(Default)]
struct LaneCopies {
    /// Copies started since the last `async_commit`.
    open: Vec<PendingCopy>,
    /// Committed groups, oldest first.
    committed: VecDeque<Vec<PendingCopy>>,
}

/// Every invocation's copies of the running workgroup.
pub(crate) struct AsyncCopies {
    lanes: Vec<LaneCopies>,
}

impl AsyncCopies {
    pub fn new(invocations: usize) -> Self {
        AsyncCopies { lanes: (0..invocations).map(|_| LaneCopies::default()).collect() }
    }

    /// Forgets everything: copies still in flight when a workgroup ends never land
    /// anywhere observable (its shared memory ends with it).
    pub fn reset(&mut self) {
        for l in &mut self.lanes {
            l.open.clear();
            l.committed.clear();
        }
    }

    /// Records a started copy of invocation `lane`.
    pub fn start(&mut self, lane: u16, copy: PendingCopy) {
        self.lanes[lane as usize].open.push(copy);
    }

    /// `async_commit()`: the open copies become the newest group.
    pub fn commit(&mut self, lane: u16) {
        let l = &mut self.lanes[lane as usize];
        let group = std::mem::take(&mut l.open);
        l.committed.push_back(group);
    }

    /// `async_wait(keep)`: removes and returns, oldest first, the copies of every
    /// committed group but the newest `keep`.
    pub fn retire(&mut self, lane: u16, keep: u32) -> Vec<PendingCopy> {
        let l = &mut self.lanes[lane as usize];
        let mut done = Vec::new();
        while l.committed.len() > keep as usize {
            if let Some(g) = l.committed.pop_front() {
                done.extend(g);
            }
        }
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copy(index: usize) -> PendingCopy {
        PendingCopy { shared: 0, index, value: index as u32 }
    }

    #[test]
    fn wait_retires_all_but_the_newest_groups_oldest_first() {
        let mut a = AsyncCopies::new(2);
        a.start(1, copy(0));
        a.start(1, copy(1));
        a.commit(1);
        a.start(1, copy(2));
        a.commit(1);
        a.start(1, copy(3)); // not committed: no wait covers it
        assert_eq!(a.retire(1, 1), vec![copy(0), copy(1)]);
        assert_eq!(a.retire(1, 1), vec![]);
        assert_eq!(a.retire(1, 0), vec![copy(2)]);
        assert_eq!(a.retire(0, 0), vec![]);
        a.commit(1);
        assert_eq!(a.retire(1, 0), vec![copy(3)]);
    }
}
