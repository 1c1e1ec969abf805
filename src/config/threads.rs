//! The thread settings of the numeric libraries, which read them from the environment once:
//! candle's pool for element-wise operations (`CANDLE_NUM_THREADS`) and the rayon pool its
//! matrix products use (`RAYON_NUM_THREADS`). Colloquy runs the MiniLM network on several
//! threads of its own (documents two at a time, a document's windows in parallel batches);
//! candle's pool on top of that makes its workers spin at a barrier while other threads want
//! the same cores, which cost two thirds of the CPU time when embedding. One thread each
//! measured three times the documents per second on two cores.

/// The variables set, each to "1", unless the operator set them.
const SINGLE_THREADED: [&str; 2] = ["CANDLE_NUM_THREADS", "RAYON_NUM_THREADS"];

/// Makes the numeric libraries single-threaded unless the environment says otherwise.
///
/// # Safety
/// Must be called before the process starts any other thread (first thing in `main`): it
/// writes the environment, which another thread reading it at the same time would race.
pub unsafe fn single_threaded_kernels() {
    for name in SINGLE_THREADED {
        if std::env::var_os(name).is_none() {
            // SAFETY: the caller guarantees no other thread exists yet.
            unsafe { std::env::set_var(name, "1") };
        }
    }
}
