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
//! A class's list keeps at most [`KEPT_BYTES`] of blocks; a block freed
//! past that goes back to the allocator behind, so a call that built and
//! dropped a large tree does not leave its memory tied to one size class
//! for the rest of the instance's life (at most 16 × 256 KiB stay kept).

use std::alloc::{GlobalAlloc, Layout};
use std::cell::UnsafeCell;
use std::ptr;

/// Block sizes (and alignments) are multiples of this.
pub const GRANULE: usize = 16;
/// The number of size classes: blocks of 16, 32, … bytes.
const CLASSES: usize = 16;
/// The largest block kept in a free list.
pub const LARGEST: usize = GRANULE * CLASSES;
/// The most bytes of free blocks one class keeps.
pub const KEPT_BYTES: usize = 256 * 1024;

/// An allocator that recycles small blocks and takes the rest from `A`.
pub struct SmallBlocks<A> {
    inner: A,
    /// The first free block of each class; a free block's first bytes
    /// hold the address of the next one (null ends the list).
    free: UnsafeCell<[*mut u8; CLASSES]>,
    /// How many blocks each list holds.
    kept: UnsafeCell<[usize; CLASSES]>,
}

impl<A> SmallBlocks<A> {
    pub const fn new(inner: A) -> Self {
        Self {
            inner,
            free: UnsafeCell::new([ptr::null_mut(); CLASSES]),
            kept: UnsafeCell::new([0; CLASSES]),
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
fn block_layout(class: usize) -> Layout {
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
        let (free, kept) = unsafe { (&mut *self.free.get(), &mut *self.kept.get()) };
        let head = free[class];
        if head.is_null() {
            // SAFETY: `block_layout(class)` has a non-zero size.
            return unsafe { self.inner.alloc(block_layout(class)) };
        }
        // SAFETY: `head` is a free block of this class, aligned to
        // `GRANULE`, whose first bytes `dealloc` set to the next one.
        free[class] = unsafe { head.cast::<*mut u8>().read() };
        kept[class] -= 1;
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
        // class (same layout as allocated, so the allocator behind gave it
        // as `block_layout(class)`), at least `GRANULE` bytes and aligned
        // to it, and no longer used by the caller.
        unsafe {
            let (free, kept) = (&mut *self.free.get(), &mut *self.kept.get());
            if (kept[class] + 1) * block_layout(class).size() > KEPT_BYTES {
                return self.inner.dealloc(block, block_layout(class));
            }
            block.cast::<*mut u8>().write(free[class]);
            free[class] = block;
            kept[class] += 1;
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
            blocks.dealloc(b, layout(8, 8));
            blocks.dealloc(c, layout(32, 16));
        }
    }

    #[test]
    fn blocks_hold_their_contents_through_reallocation() {
        let blocks = SmallBlocks::new(System);
        unsafe {
            // Grow from 1 byte through every class and past the largest,
            // then shrink back: every byte that fits survives each move.
            let fill = |k: usize| (k % 251) as u8;
            let mut size = 1;
            let mut block = blocks.alloc(layout(size, 1));
            block.write(fill(0));
            for next in (2..=LARGEST + 64).chain((1..LARGEST + 64).rev()) {
                block = blocks.realloc(block, layout(size, 1), next);
                assert!(!block.is_null());
                for k in 0..size.min(next) {
                    assert_eq!(
                        block.add(k).read(),
                        fill(k),
                        "byte {k} after {size} -> {next}"
                    );
                }
                for k in size.min(next)..next {
                    block.add(k).write(fill(k));
                }
                size = next;
            }
            blocks.dealloc(block, layout(size, 1));
        }
    }

    #[test]
    fn a_class_keeps_a_bounded_number_of_free_blocks() {
        let blocks = SmallBlocks::new(System);
        let l = layout(LARGEST, 16);
        let many = KEPT_BYTES / LARGEST + 10;
        unsafe {
            let live: Vec<*mut u8> = (0..many).map(|_| blocks.alloc(l)).collect();
            for &p in &live {
                blocks.dealloc(p, l);
            }
            let kept = (*blocks.kept.get())[CLASSES - 1];
            assert_eq!(kept, KEPT_BYTES / LARGEST);
            // The list still hands out each block it kept, once.
            let again: Vec<*mut u8> = (0..kept).map(|_| blocks.alloc(l)).collect();
            assert!(again.iter().all(|p| live.contains(p)));
            let mut distinct = again.clone();
            distinct.sort();
            distinct.dedup();
            assert_eq!(distinct.len(), again.len());
            assert_eq!((*blocks.kept.get())[CLASSES - 1], 0);
            for p in again {
                blocks.dealloc(p, l);
            }
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
