//! Rules that govern the agentic tool loop: call identity and loop detection, truncation of
//! long tool results, replacement of base64 images in results, and the UI's result preview.
//! Everything here is pure (no I/O, no clock), and every walk over JSON is iterative, so a
//! pathologically deep value cannot overflow the stack.
//!
//! One file per rule: `calls` (call identity and loop detection), `images` (base64 images out
//! of results), `truncate` (long results cut for the model), `preview` (the UI's one-line
//! preview of a result).

mod calls;
mod images;
mod preview;
mod truncate;

pub use calls::{CallKey, LOOP_WINDOW, LoopDetector, MAX_REPEATS, canonical_json};
pub use images::{MIN_RAW_IMAGE_BASE64_CHARS, strip_base64_images};
pub use preview::{PREVIEW_MAX_CHARS, result_preview};
pub use truncate::{MAX_RESULT_CHARS, truncate_result};
