//! The process's memory allocator: jemalloc, for everything that links this crate (the
//! server, its tests and its benches, so what is measured is what ships).
//!
//! Why not the system's: a turn allocates on one thread and frees on another (an HTTP worker,
//! a chat's session, the run, the group commit's writer), and glibc's malloc pays for that in
//! its arenas' locks and in consolidating their free lists. On the stored path at 1,000
//! requests a second, glibc's malloc and free were a quarter of the process's CPU; with
//! jemalloc the process uses about a tenth less CPU (`cargo bench --bench overhead`).
//!
//! And memory goes back: what passivated chats freed is returned to the system when more than
//! `KEPT_FREE_HEAP_BYTES` is held free (`start_heap_trimmer`), not kept resident.

use std::ffi::CStr;

#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// Free memory the allocator may keep resident before it is asked to give it back.
pub const KEPT_FREE_HEAP_BYTES: u64 = 64 * 1024 * 1024;

/// How often the free memory is looked at.
pub const FREE_HEAP_CHECK: std::time::Duration = std::time::Duration::from_secs(30);

/// Purges every arena: 4096 is `MALLCTL_ARENAS_ALL`, the index that names them all in an
/// `arena.<i>.*` name.
const PURGE_ALL_ARENAS: &CStr = c"arena.4096.purge";

/// Reads a `size_t` statistic, as of the last `epoch` advance.
fn read_size(name: &CStr) -> Option<u64> {
    let mut value: libc::size_t = 0;
    let mut len = std::mem::size_of::<libc::size_t>();
    // SAFETY: `name` is NUL-terminated; `value` and `len` are a `size_t` and its size, as
    // jemalloc's `stats.*` sizes are; nothing is written (`newp` null, `newlen` 0).
    let code = unsafe {
        tikv_jemalloc_sys::mallctl(
            name.as_ptr(),
            (&raw mut value).cast(),
            &raw mut len,
            std::ptr::null_mut(),
            0,
        )
    };
    (code == 0).then_some(value as u64)
}

/// Refreshes the statistics jemalloc caches (they are read as of the last advance).
fn advance_epoch() {
    let mut epoch: u64 = 1;
    let len = std::mem::size_of::<u64>();
    // SAFETY: `epoch` takes a `uint64_t` written through `newp`; nothing is read back.
    unsafe {
        tikv_jemalloc_sys::mallctl(
            c"epoch".as_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            (&raw mut epoch).cast(),
            len,
        );
    }
}

/// Heap bytes the program has allocated and not freed (`stats.allocated`).
pub fn heap_in_use() -> Option<u64> {
    advance_epoch();
    read_size(c"stats.allocated")
}

/// Bytes the allocator holds resident beyond what is allocated: freed memory not yet given
/// back, and its own bookkeeping.
fn held_free() -> Option<u64> {
    advance_epoch();
    let resident = read_size(c"stats.resident")?;
    let allocated = read_size(c"stats.allocated")?;
    Some(resident.saturating_sub(allocated))
}

/// Gives freed memory back to the operating system when the allocator holds more than
/// `KEPT_FREE_HEAP_BYTES` of it (every arena's unused dirty pages purged). Blocking for a few
/// milliseconds on a large heap: called on the blocking pool. Returns whether it purged.
pub fn give_back_free_heap() -> bool {
    if held_free().is_none_or(|free| free <= KEPT_FREE_HEAP_BYTES) {
        return false;
    }
    // SAFETY: `arena.<all>.purge` reads and writes nothing (`oldp`, `newp` null, lengths 0).
    let code = unsafe {
        tikv_jemalloc_sys::mallctl(
            PURGE_ALL_ARENAS.as_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
        )
    };
    code == 0
}

/// Every `FREE_HEAP_CHECK`, gives freed memory back (see `give_back_free_heap`).
pub fn start_heap_trimmer() {
    tokio::spawn(async {
        let mut ticks = tokio::time::interval(FREE_HEAP_CHECK);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            match tokio::task::spawn_blocking(give_back_free_heap).await {
                Ok(true) => tracing::debug!("gave freed heap memory back to the system"),
                Ok(false) => {}
                Err(err) => tracing::warn!(%err, "could not give freed heap memory back"),
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_heap_in_use_counts_what_is_allocated_and_not_freed() {
        let before = heap_in_use().unwrap();
        let block = vec![7u8; 32 * 1024 * 1024];
        let holding = heap_in_use().unwrap();
        // Other tests allocate meanwhile; 32 MiB stands well above their noise.
        assert!(
            holding >= before + 24 * 1024 * 1024,
            "{before} then {holding} with 32 MiB held"
        );
        drop(std::hint::black_box(block));
        let after = heap_in_use().unwrap();
        assert!(
            after + 24 * 1024 * 1024 <= holding,
            "{holding} then {after}"
        );
    }

    #[test]
    fn heap_freed_in_pieces_is_given_back_once_more_than_the_kept_amount_is_free() {
        // 256 MiB in 8 KiB blocks, one in a hundred kept so the freed ones cannot simply be
        // whole extents handed back.
        let blocks: Vec<Vec<u8>> = (0..32_768).map(|i| vec![i as u8; 8 * 1024]).collect();
        let kept: Vec<Vec<u8>> = blocks
            .into_iter()
            .enumerate()
            .filter_map(|(i, block)| (i % 100 == 0).then_some(block))
            .collect();
        let held = held_free().unwrap();
        assert!(
            give_back_free_heap(),
            "about 250 MiB were free ({held} held)"
        );
        let left = held_free().unwrap();
        assert!(
            left < held,
            "still {left} held free after a purge (was {held})"
        );
        assert_eq!(kept.len(), 328);
    }
}
