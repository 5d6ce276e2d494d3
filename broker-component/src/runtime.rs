//! The runtime a `#![no_std]` guest needs on wasm32-wasip2: an allocator, a panic handler,
//! `cabi_realloc` and libc's `mem*` functions. Without std the component imports exactly the
//! `broker` world (no `wasi:cli/*`, `wasi:io/*` from std's panic and print machinery).

use core::alloc::{GlobalAlloc, Layout};
use core::arch::wasm32;
use core::cell::UnsafeCell;

#[global_allocator]
static ALLOC: Heap =
    Heap(UnsafeCell::new(dlmalloc::Dlmalloc::new_with_allocator(Pages { donated: UnsafeCell::new(false) })));

/// dlmalloc over this instance's linear memory. The linker gives the component 1 MiB of initial
/// memory (see the host's guest_build.rs); its free part, from `__heap_base` up, becomes dlmalloc's
/// first segment, and only a call needing more grows memory. An instance that never grows its
/// memory lets the host's pooling allocator reuse the slot without changing page protections
/// (an `mprotect` that shrinks them costs a TLB shootdown on every core, on every call).
struct Heap(UnsafeCell<dlmalloc::Dlmalloc<Pages>>);

// SAFETY: the component is single-threaded (wasm32-wasip2 without threads): no two calls into
// the allocator can overlap.
unsafe impl Sync for Heap {}

unsafe impl GlobalAlloc for Heap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: single-threaded (see `Sync`), so this is the only live reference.
        unsafe { (*self.0.get()).malloc(layout.size(), layout.align()) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as in `alloc`; `ptr` came from this allocator with `layout`.
        unsafe { (*self.0.get()).free(ptr, layout.size(), layout.align()) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as in `alloc`.
        unsafe { (*self.0.get()).calloc(layout.size(), layout.align()) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as in `dealloc`.
        unsafe { (*self.0.get()).realloc(ptr, layout.size(), layout.align(), new_size) }
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
// link the target's self-contained libc.a, whose memcmp/memcpy/memset make no WASI calls.
#[link(name = "c")]
unsafe extern "C" {}

/// The canonical ABI's allocator entry point. wit-bindgen only provides one for targets where std
/// does not, so a no_std wasip2 guest exports its own.
///
/// # Safety
/// Called by the host's canonical-ABI lowering with either `old_len == 0` (fresh allocation) or a
/// pointer/size pair previously returned by this function with the same `align`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cabi_realloc(old: *mut u8, old_len: usize, align: usize, new_len: usize) -> *mut u8 {
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
