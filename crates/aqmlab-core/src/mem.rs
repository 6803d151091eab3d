//! Memory hints for the large per-flow arrays: huge pages and prefetches.
//! Neither changes what the program computes, only how fast its loads are.
//!
//! At 10^4 flows and more the per-flow state (flows, their access links,
//! packets) spans tens to hundreds of megabytes, read at random: with 4 KiB
//! pages nearly every access also misses the TLB (2048 entries cover
//! 8 MiB) and walks the page table. Linux backs a region with 2 MiB pages
//! when asked (`madvise(MADV_HUGEPAGE)`; transparent huge pages in mode
//! `madvise`, the default of most distributions), which makes one TLB
//! entry cover 512 times as much.

/// Regions smaller than this are not worth a system call (and cannot hold
/// a whole 2 MiB page).
const HUGE_FROM: usize = 4 << 20;

/// An empty vector with room for `n` elements, its storage advised for
/// huge pages (see [`advise_huge`]) before anything is written to it, so
/// that the kernel can back it with them from the first touch.
pub fn huge_vec<T>(n: usize) -> Vec<T> {
    let v = Vec::with_capacity(n);
    advise_huge(&v);
    v
}

/// Ask the kernel to back the storage of `v` (its whole capacity) with
/// transparent huge pages. A hint: where the system has none, or another
/// policy, nothing changes.
pub fn advise_huge<T>(v: &Vec<T>) {
    let bytes = v.capacity().saturating_mul(std::mem::size_of::<T>());
    if bytes < HUGE_FROM {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let start = v.as_ptr() as usize;
        // The whole pages inside the storage (madvise wants page-aligned
        // ranges; a 2 MiB page is used only where one fits whole anyway).
        let (from, to) = (
            (start + PAGE - 1) & !(PAGE - 1),
            (start + bytes) & !(PAGE - 1),
        );
        if to > from {
            linux::madvise_huge(from, to - from);
        }
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::ffi::{c_int, c_void};

    /// `MADV_HUGEPAGE` (include/uapi/asm-generic/mman-common.h).
    const MADV_HUGEPAGE: c_int = 14;

    extern "C" {
        /// The C library's `madvise(2)`.
        fn madvise(addr: *mut c_void, len: usize, advice: c_int) -> c_int;
    }

    /// `madvise(addr, len, MADV_HUGEPAGE)`, its result ignored (a hint).
    pub(super) fn madvise_huge(addr: usize, len: usize) {
        // SAFETY: MADV_HUGEPAGE only sets a flag on the memory areas that
        // overlap [addr, addr + len): it neither reads nor writes the
        // memory, nor maps, unmaps or changes the protection of any page,
        // so no Rust object can observe it (the kernel may later move the
        // contents to a huge page, unchanged, as it may move any page).
        // On a range that is not mapped or not page-aligned it fails with
        // an error code and does nothing. The callee has the C signature
        // declared above (POSIX, glibc and musl).
        let _ = unsafe { madvise(addr as *mut c_void, len, MADV_HUGEPAGE) };
    }
}

/// Start loading the cache line of `x` into the caches (all levels), so
/// that a later read finds it there. A hint: it never faults, whatever the
/// address, and changes nothing the program can observe.
#[inline(always)]
pub fn prefetch<T>(x: &T) {
    prefetch_ptr((x as *const T).cast::<u8>());
}

/// [`prefetch`] the line of any address (never dereferenced).
#[inline(always)]
pub fn prefetch_ptr(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: `_mm_prefetch` requires the `sse` target feature, which
        // every x86_64 processor has (it is part of the x86_64 baseline,
        // enabled for every x86_64 target). PREFETCHT0 is a hint: it reads
        // no memory architecturally, never faults (whatever the address,
        // valid or not), and writes nothing; the pointer is not
        // dereferenced by the program.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p.cast::<i8>()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// [`prefetch`] every cache line `x` may straddle: its first and last
/// byte's (for objects of at most 64 bytes, such as a packet).
#[inline(always)]
pub fn prefetch_all<T>(x: &T) {
    prefetch(x);
    if std::mem::size_of::<T>() > 1 {
        let last = (x as *const T)
            .cast::<u8>()
            .wrapping_add(std::mem::size_of::<T>() - 1);
        prefetch_ptr(last);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hints change nothing observable: a huge vector is an ordinary
    /// empty one with the room asked for, and prefetching (any address)
    /// leaves values as they were.
    #[test]
    fn hints_change_nothing() {
        let mut v: Vec<u64> = huge_vec(1 << 20);
        assert!(v.is_empty() && v.capacity() >= 1 << 20);
        v.extend(0..1 << 20);
        advise_huge(&v);
        let small: Vec<u8> = huge_vec(10);
        assert!(small.capacity() >= 10);
        for x in v.iter().step_by(4099) {
            prefetch(x);
            prefetch_all(x);
        }
        prefetch_ptr(std::ptr::null());
        prefetch_ptr(usize::MAX as *const u8);
        assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64));
    }
}
