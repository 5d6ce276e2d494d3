//! The runtime a `#![no_std]` guest needs on wasm32-wasip2: an allocator, a panic handler,
//! `cabi_realloc` and libc's `mem*` functions. Without std the component imports exactly the
//! `broker` world (no `wasi:cli/*`, `wasi:io/*` from std's panic and print machinery).
//!
//! One of the two places `unsafe` is allowed: each block says why it is sound.
#![allow(unsafe_code)]

use core::alloc::{GlobalAlloc, Layout};
use core::arch::wasm32;
use core::cell::UnsafeCell;

#[global_allocator]
static ALLOC: Heap = Heap {
    dl: UnsafeCell::new(dlmalloc::Dlmalloc::new_with_allocator(Pages { donated: UnsafeCell::new(false) })),
    arena: UnsafeCell::new(Arena { next: 0, end: 0 }),
};

/// The component's heap: dlmalloc over this instance's linear memory, with small blocks carved
/// from an arena instead.
///
/// The linker gives the component 1 MiB of initial memory (see the host's guest_build.rs); its
/// free part, from `__heap_base` up, becomes dlmalloc's first segment, and only a call needing
/// more grows memory. An instance that never grows its memory lets the host's pooling allocator
/// reuse the slot without changing page protections, which costs every core a TLB flush.
///
/// Every call runs in a fresh instance whose memory is thrown away when it returns, and a call's
/// small blocks (JSON map nodes, keys, short strings) mostly live until then anyway. So blocks of
/// at most `SMALL` bytes are bumped out of 64 KiB arena chunks (taken from dlmalloc) and never
/// freed, sparing the JSON-heavy guest dlmalloc's bookkeeping for them. Larger blocks (buffers,
/// long strings) stay with dlmalloc and are reused. docs/engineering-log.md ("Third round: what was
/// profiled and fixed") has what each of these cost before.
struct Heap {
    dl: UnsafeCell<dlmalloc::Dlmalloc<Pages>>,
    arena: UnsafeCell<Arena>,
}

const SMALL: usize = 512;
const SMALL_ALIGN: usize = 16;
const ARENA_CHUNK: usize = 64 * 1024;

struct Arena {
    next: usize,
    end: usize,
}

fn is_small(size: usize, align: usize) -> bool {
    size <= SMALL && align <= SMALL_ALIGN
}

// SAFETY: the component is single-threaded (wasm32-wasip2 without threads): no two calls into
// the allocator can overlap.
unsafe impl Sync for Heap {}

impl Heap {
    /// SAFETY: single-threaded (see `Sync`), and no caller holds the result across another call
    /// into the allocator.
    #[allow(clippy::mut_from_ref)]
    unsafe fn dl(&self) -> &mut dlmalloc::Dlmalloc<Pages> {
        unsafe { &mut *self.dl.get() }
    }

    /// A small block from the arena; a new chunk when the current one is used up.
    ///
    /// SAFETY: as `dl`.
    unsafe fn bump(&self, size: usize, align: usize) -> *mut u8 {
        let arena = unsafe { &mut *self.arena.get() };
        let mut at = arena.next.next_multiple_of(align);
        if arena.next == 0 || at + size > arena.end {
            let chunk = unsafe { self.dl().malloc(ARENA_CHUNK, SMALL_ALIGN) };
            if chunk.is_null() {
                return chunk;
            }
            arena.end = chunk as usize + ARENA_CHUNK;
            at = chunk as usize;
        }
        arena.next = at + size;
        at as *mut u8
    }
}

unsafe impl GlobalAlloc for Heap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: single-threaded (see `Sync`).
        unsafe {
            if is_small(layout.size(), layout.align()) {
                self.bump(layout.size(), layout.align())
            } else {
                self.dl().malloc(layout.size(), layout.align())
            }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // Small blocks are left to the end of the call (see `Heap`). A dlmalloc block shrunk
        // below `SMALL` by `realloc` is left the same way: a few bytes until the instance goes.
        if !is_small(layout.size(), layout.align()) {
            // SAFETY: as in `alloc`; a block not small by its layout came from dlmalloc.
            unsafe { self.dl().free(ptr, layout.size(), layout.align()) }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as in `alloc`; an arena block may be reused dlmalloc memory, so it is zeroed.
        unsafe {
            if is_small(layout.size(), layout.align()) {
                let p = self.bump(layout.size(), layout.align());
                if !p.is_null() {
                    core::ptr::write_bytes(p, 0, layout.size());
                }
                p
            } else {
                self.dl().calloc(layout.size(), layout.align())
            }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let (old, align) = (layout.size(), layout.align());
        if !is_small(old, align) {
            // SAFETY: a block not small by its layout came from dlmalloc.
            return unsafe { self.dl().realloc(ptr, old, align, new_size) };
        }
        // SAFETY: as in `alloc`; `ptr` is a small block of `old` bytes.
        unsafe {
            let arena = &mut *self.arena.get();
            if new_size <= old {
                return ptr;
            }
            // the arena's newest block grows in place while its chunk has room
            if ptr as usize + old == arena.next && ptr as usize + new_size <= arena.end && new_size <= SMALL {
                arena.next = ptr as usize + new_size;
                return ptr;
            }
            let moved = self.alloc(Layout::from_size_align_unchecked(new_size, align));
            if !moved.is_null() {
                core::ptr::copy_nonoverlapping(ptr, moved, old);
            }
            moved
        }
    }
}

const PAGE: usize = 64 * 1024;

unsafe extern "C" {
    /// Set by the linker: the first byte after static data and the stack.
    static __heap_base: u8;
}

/// Where dlmalloc gets memory: first the free end of the initial memory, then `memory.grow`.
struct Pages {
    donated: UnsafeCell<bool>,
}

// SAFETY: single-threaded, see `Heap`.
unsafe impl Send for Pages {}

// SAFETY: every region handed out is memory this instance owns and nothing else uses: the
// initial memory above `__heap_base` (given once) or pages freshly added by `memory.grow`.
unsafe impl dlmalloc::Allocator for Pages {
    fn alloc(&self, size: usize) -> (*mut u8, usize, u32) {
        // SAFETY: single-threaded, see `Heap`.
        let donated = unsafe { &mut *self.donated.get() };
        if !*donated {
            *donated = true;
            let base = (&raw const __heap_base) as usize;
            let end = wasm32::memory_size(0) * PAGE;
            if end > base && end - base >= size {
                return (base as *mut u8, end - base, 0);
            }
        }
        let pages = size.div_ceil(PAGE);
        match wasm32::memory_grow(0, pages) {
            usize::MAX => (core::ptr::null_mut(), 0, 0),
            prev => ((prev * PAGE) as *mut u8, pages * PAGE, 0),
        }
    }

    fn remap(&self, _ptr: *mut u8, _old: usize, _new: usize, _can_move: bool) -> *mut u8 {
        core::ptr::null_mut()
    }

    fn free_part(&self, _ptr: *mut u8, _old: usize, _new: usize) -> bool {
        false
    }

    fn free(&self, _ptr: *mut u8, _size: usize) -> bool {
        false
    }

    fn can_release_part(&self, _flags: u32) -> bool {
        false
    }

    fn allocates_zeros(&self) -> bool {
        // The initial memory above `__heap_base` is zero at instantiation, as are grown pages.
        true
    }

    fn page_size(&self) -> usize {
        PAGE
    }
}

/// A panic aborts the call with a trap; the host reports it as a tool error and starts the next
/// call on a fresh instance, so no state is lost.
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    core::arch::wasm32::unreachable()
}

// compiler_builtins ships no mem* functions for wasm32-wasip2 (libc is expected to supply them):
// link the target's self-contained libc.a, whose memcpy/memset make no WASI calls.
#[link(name = "c")]
unsafe extern "C" {}

/// libc's `memcmp`, eight bytes at a time: every JSON map lookup and insert compares keys with
/// it, and the self-contained libc's version goes byte by byte (docs/engineering-log.md, "Second round",
/// has its share of a call). Defined here, the archive's is not linked.
///
/// # Safety
/// `a` and `b` must be readable for `n` bytes, as for C's `memcmp`.
#[unsafe(no_mangle)]
pub(crate) unsafe extern "C" fn memcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    let mut i = 0;
    // SAFETY: every read is below `n` bytes from `a` and `b`, which the caller guarantees are
    // readable; the 8-byte reads are unaligned reads.
    unsafe {
        while i + 8 <= n {
            if a.add(i).cast::<u64>().read_unaligned() != b.add(i).cast::<u64>().read_unaligned() {
                break;
            }
            i += 8;
        }
        while i < n {
            let (x, y) = (*a.add(i), *b.add(i));
            if x != y {
                return i32::from(x) - i32::from(y);
            }
            i += 1;
        }
    }
    0
}

/// The canonical ABI's allocator entry point. wit-bindgen only provides one for targets where std
/// does not, so a no_std wasip2 guest exports its own.
///
/// # Safety
/// Called by the host's canonical-ABI lowering with either `old_len == 0` (fresh allocation) or a
/// pointer/size pair previously returned by this function with the same `align`.
#[unsafe(no_mangle)]
pub(crate) unsafe extern "C" fn cabi_realloc(old: *mut u8, old_len: usize, align: usize, new_len: usize) -> *mut u8 {
    use alloc::alloc::{Layout, alloc, handle_alloc_error, realloc};
    // SAFETY: the canonical ABI guarantees `align` is a power of two no larger than 8 and that
    // `old`/`old_len` describe a live allocation made here with the same alignment.
    unsafe {
        let layout = Layout::from_size_align_unchecked(new_len, align);
        let ptr = if old_len == 0 {
            if new_len == 0 {
                return align as *mut u8;
            }
            alloc(layout)
        } else {
            realloc(old, Layout::from_size_align_unchecked(old_len, align), new_len)
        };
        if ptr.is_null() {
            handle_alloc_error(layout);
        }
        ptr
    }
}
