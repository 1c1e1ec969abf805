//! What a run reports, low enough that tools and chats can use it without knowing the loop:
//! `events` (`RunEvent`, `StopReason`, `RunError`, `ProgressKind`) and `log` (`RunLog`, the
//! append-only event log clients subscribe to, and `RunRegistry`, the live runs by id).

pub mod events;
pub mod log;
