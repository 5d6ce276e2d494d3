//! The runtime a `#![no_std]` guest needs on wasm32-wasip2: an allocator, a panic handler,
//! `cabi_realloc` and libc's `mem*` functions. Without std the component imports exactly the
//! `broker` world (no `wasi:cli/*`, `wasi:io/*` from std's panic and print machinery).

#[global_allocator]
static ALLOC: dlmalloc::GlobalDlmalloc = dlmalloc::GlobalDlmalloc;

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
