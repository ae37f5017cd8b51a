//! Small blocks recycled in front of the plugin's allocator.
//!
//! A plugin that works on JSON trees allocates and frees a great many
//! small blocks (map entries, short strings, vectors of a few values), and
//! the same sizes over and over, call after call. [`SmallBlocks`] keeps
//! the blocks of up to [`LARGEST`] bytes it is given back in one free list
//! per size class (multiples of [`GRANULE`]), and hands them out again
//! before it asks the allocator behind it: a hit is a few loads and
//! stores, where a general-purpose allocator searches its bins and splits
//! and merges free space. Larger blocks, and blocks aligned to more than
//! [`GRANULE`], go straight to the allocator behind.
//!
//! A small block is never given back to the allocator behind: a class's
//! list holds at most the most blocks of that class ever live at once,
//! which is bounded by the instance's memory limit like any allocation.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::UnsafeCell;
use std::ptr;

/// Block sizes (and alignments) are multiples of this.
pub const GRANULE: usize = 16;
/// The number of size classes: blocks of 16, 32, … bytes.
const CLASSES: usize = 16;
/// The largest block kept in a free list.
pub const LARGEST: usize = GRANULE * CLASSES;

/// An allocator that recycles small blocks and takes the rest from `A`.
pub struct SmallBlocks<A> {
    inner: A,
    /// The first free block of each class; a free block's first bytes
    /// hold the address of the next one (null ends the list).
    free: UnsafeCell<[*mut u8; CLASSES]>,
}

impl<A> SmallBlocks<A> {
    pub const fn new(inner: A) -> Self {
        Self {
            inner,
            free: UnsafeCell::new([ptr::null_mut(); CLASSES]),
        }
    }
}

// SAFETY: the free lists are touched without synchronization, so an
// instance may only be shared where there is a single thread: WebAssembly
// without the threads proposal (the only place the SDK installs it).
#[cfg(all(target_family = "wasm", not(target_feature = "atomics")))]
unsafe impl<A: Sync> Sync for SmallBlocks<A> {}

/// The size class of `layout`, when its blocks are recycled.
fn class(layout: Layout) -> Option<usize> {
    (layout.size() <= LARGEST && layout.align() <= GRANULE)
        .then(|| layout.size().saturating_sub(1) / GRANULE)
}

/// The layout of the blocks of `class`, as the allocator behind gives them.
fn block(class: usize) -> Layout {
    Layout::from_size_align((class + 1) * GRANULE, GRANULE).expect("a small power-of-two layout")
}

unsafe impl<A: GlobalAlloc> GlobalAlloc for SmallBlocks<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let Some(class) = class(layout) else {
            // SAFETY: forwarded as `alloc` was called.
            return unsafe { self.inner.alloc(layout) };
        };
        // SAFETY: single-threaded (see `Sync`), and no reference to the
        // lists outlives this call.
        let free = unsafe { &mut *self.free.get() };
        let head = free[class];
        if head.is_null() {
            // SAFETY: `block(class)` has a non-zero size.
            return unsafe { self.inner.alloc(block(class)) };
        }
        // SAFETY: `head` is a free block of this class, aligned to
        // `GRANULE`, whose first bytes `dealloc` set to the next one.
        free[class] = unsafe { head.cast::<*mut u8>().read() };
        head
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if class(layout).is_none() {
            // SAFETY: forwarded as `alloc_zeroed` was called.
            return unsafe { self.inner.alloc_zeroed(layout) };
        }
        // SAFETY: as `alloc`; the block holds at least `layout.size()` bytes.
        unsafe {
            let block = self.alloc(layout);
            if !block.is_null() {
                block.write_bytes(0, layout.size());
            }
            block
        }
    }

    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        let Some(class) = class(layout) else {
            // SAFETY: a block of this layout came from the allocator behind.
            return unsafe { self.inner.dealloc(block, layout) };
        };
        // SAFETY: single-threaded (see `Sync`); `block` is a block of this
        // class (same layout as allocated), at least `GRANULE` bytes and
        // aligned to it, and no longer used by the caller.
        unsafe {
            let free = &mut *self.free.get();
            block.cast::<*mut u8>().write(free[class]);
            free[class] = block;
        }
    }

    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller guarantees `new_size` rounded up to the
        // alignment does not overflow `isize`.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        match (class(layout), class(new_layout)) {
            // SAFETY: both sizes are the allocator behind's.
            (None, None) => unsafe { self.inner.realloc(block, layout, new_size) },
            // The block already has room for the new size.
            (Some(old), Some(new)) if old == new => block,
            // SAFETY: a new block, the contents copied, the old one freed.
            _ => unsafe {
                let moved = self.alloc(new_layout);
                if !moved.is_null() {
                    ptr::copy_nonoverlapping(block, moved, layout.size().min(new_size));
                    self.dealloc(block, layout);
                }
                moved
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use std::alloc::System;

    use super::*;

    fn layout(size: usize, align: usize) -> Layout {
        Layout::from_size_align(size, align).unwrap()
    }

    #[test]
    fn sizes_fall_in_their_classes() {
        assert_eq!(class(layout(1, 1)), Some(0));
        assert_eq!(class(layout(16, 8)), Some(0));
        assert_eq!(class(layout(17, 1)), Some(1));
        assert_eq!(class(layout(LARGEST, 16)), Some(CLASSES - 1));
        assert_eq!(class(layout(LARGEST + 1, 1)), None);
        assert_eq!(class(layout(8, 32)), None);
    }

    #[test]
    fn a_freed_block_is_given_again_for_its_class_only() {
        let blocks = SmallBlocks::new(System);
        unsafe {
            let a = blocks.alloc(layout(24, 8));
            assert_eq!(a as usize % GRANULE, 0);
            a.write_bytes(0xab, 24);
            blocks.dealloc(a, layout(24, 8));
            // Another class does not take it; its own does.
            let b = blocks.alloc(layout(8, 8));
            assert_ne!(a, b);
            let c = blocks.alloc(layout(32, 16));
            assert_eq!(a, c);
            for block in [(b, 8), (c, 32)] {
                blocks.dealloc(block.0, layout(block.1, 8));
            }
        }
    }

    #[test]
    fn blocks_hold_their_contents_through_reallocation() {
        let blocks = SmallBlocks::new(System);
        unsafe {
            // Grow from 1 byte through every class and past the largest,
            // then shrink back: the bytes written first survive each move.
            let mut size = 1;
            let mut block = blocks.alloc(layout(size, 1));
            block.write(7);
            for next in (2..=LARGEST + 64).chain((1..LARGEST + 64).rev()) {
                block = blocks.realloc(block, layout(size, 1), next);
                assert!(!block.is_null());
                assert_eq!(block.read(), 7, "after {size} -> {next}");
                block.add(next - 1).write(1);
                size = next;
            }
            blocks.dealloc(block, layout(size, 1));
        }
    }

    #[test]
    fn many_live_blocks_never_overlap_and_zeroed_ones_are_zero() {
        let blocks = SmallBlocks::new(System);
        let mut live: Vec<(*mut u8, Layout)> = Vec::new();
        unsafe {
            for round in 0..3u8 {
                for i in 1..600usize {
                    let l = layout(i % 300 + 1, [1, 2, 4, 8, 16, 32][i % 6]);
                    let p = if i % 3 == 0 {
                        let p = blocks.alloc_zeroed(l);
                        assert!((0..l.size()).all(|k| p.add(k).read() == 0));
                        p
                    } else {
                        blocks.alloc(l)
                    };
                    assert_eq!(p as usize % l.align(), 0);
                    p.write_bytes(round.wrapping_add(i as u8), l.size());
                    live.push((p, l));
                }
                // Each block still holds its own byte: none overlaps another.
                for (i, (p, l)) in live.iter().enumerate() {
                    let want = round.wrapping_add((i + 1) as u8);
                    assert!((0..l.size()).all(|k| p.add(k).read() == want));
                }
                for (p, l) in live.drain(..) {
                    blocks.dealloc(p, l);
                }
            }
        }
    }
}
