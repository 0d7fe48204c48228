//! Allocation of the large flat arrays (per physical or logical page).
//!
//! Random accesses over hundreds of megabytes of simulator state miss the TLB on nearly every
//! access with 4 KB pages; asking the kernel for transparent huge pages roughly halves the cost
//! of a random page write on large devices. Where the advice is unavailable it is a no-op.

use crate::flash::Ppn;

/// A vector of `len` copies of `value`, backed by huge pages when the kernel allows.
pub fn filled_vec<T: Copy>(len: usize, value: T) -> Vec<T> {
    let mut v: Vec<T> = Vec::with_capacity(len);
    advise_huge_pages(v.as_mut_ptr() as *mut u8, len * std::mem::size_of::<T>());
    v.resize(len, value);
    v
}

/// A vector of `len` zero integers, backed by huge pages when the kernel allows. The memory is
/// only touched when first written, as with `vec![0; len]`.
pub fn zeroed_vec<T: Copy + Default + Into<u64>>(len: usize) -> Vec<T> {
    let mut v: Vec<T> = vec![T::default(); len];
    debug_assert!(T::default().into() == 0);
    advise_huge_pages(v.as_mut_ptr() as *mut u8, len * std::mem::size_of::<T>());
    v
}

/// A vector of `len` unmapped pages (`None`), untouched until first written like
/// [`zeroed_vec`]: a map the size of the device costs no resident memory where it stays unused
/// (an FTL's own map, replaced by preconditioning's layout, or a device only partly written).
pub fn unmapped_vec(len: usize) -> Vec<Option<Ppn>> {
    let zeros = std::mem::ManuallyDrop::new(zeroed_vec::<u32>(len));
    let (ptr, len, capacity) = (zeros.as_ptr() as *mut Option<Ppn>, zeros.len(), zeros.capacity());
    // SAFETY: `Ppn` is a `repr(transparent)` `NonZeroU32`, so `Option<Ppn>` has `u32`'s size and
    // alignment and `None` is the all-zero pattern (a guaranteed niche); the allocation changes
    // hands whole, with the same layout, and the original vector is never dropped.
    unsafe { Vec::from_raw_parts(ptr, len, capacity) }
}

/// Hints the CPU to bring `value`'s cache line in; never faults, never changes anything.
#[inline(always)]
pub fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint; the address comes from a live reference.
    unsafe {
        std::arch::x86_64::_mm_prefetch(value as *const T as *const i8, std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// Below this size huge pages do not pay off.
const HUGE_PAGE_MIN_BYTES: usize = 4 << 20;

#[cfg(target_os = "linux")]
fn advise_huge_pages(ptr: *mut u8, bytes: usize) {
    const HUGE: usize = 2 << 20;
    if bytes < HUGE_PAGE_MIN_BYTES {
        return;
    }
    let start = (ptr as usize).div_ceil(HUGE) * HUGE;
    let end = (ptr as usize + bytes) / HUGE * HUGE;
    if end > start {
        // SAFETY: the range lies inside an allocation this process owns; MADV_HUGEPAGE only
        // changes how the kernel backs it, never its contents. Failure is harmless.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_ptr: *mut u8, _bytes: usize) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filled_vec_has_the_value_everywhere() {
        let v = filled_vec(3 << 20, 7u32);
        assert_eq!(v.len(), 3 << 20);
        assert!(v.iter().all(|&x| x == 7));
        assert_eq!(filled_vec(0, 1u8).len(), 0);
        let z: Vec<u64> = zeroed_vec(5 << 20);
        assert!(z.iter().all(|&x| x == 0));
        let mut m = unmapped_vec(5 << 20);
        assert!(m.iter().all(Option::is_none));
        m[7] = Some(Ppn::new(0));
        assert_eq!(m[7].map(Ppn::get), Some(0));
    }
}
