//! What a SQLite query connection may not do, set on its raw handle before the query runs:
//! open or create another file (`ATTACH`, and `VACUUM INTO`, which attaches its target),
//! load an extension, or build a string or blob larger than the result may hold
//! (`SQLITE_LIMIT_LENGTH`). An authorizer and limits inside SQLite, not a reading of the text.
//! All of `execute_sql`'s unsafe code is here.

use std::ffi::{CStr, c_char, c_int, c_void};
use std::ptr::NonNull;

use libsqlite3_sys as ffi;

use super::tool::MAX_QUERY_CHARS;

/// The largest string or blob SQLite may build for a query whose result holds `max_bytes`: one
/// byte more than the result (so a value past it is refused, never held), and never less than
/// the longest query's text (UTF-8, up to 4 bytes a character), which the same limit bounds.
pub fn length_cap(max_bytes: usize) -> usize {
    (max_bytes + 1).max(MAX_QUERY_CHARS * 4)
}

/// Sets the guards on `db`: the authorizer, no extension loading, no attached database, and
/// strings and blobs of at most `length_cap` bytes.
pub fn guard(db: NonNull<ffi::sqlite3>, length_cap: usize) {
    let db = db.as_ptr();
    let cap = c_int::try_from(length_cap).unwrap_or(c_int::MAX);
    // SAFETY: `db` is the live handle of a connection the caller holds locked; these calls only
    // change its settings, and `authorize` is a plain function that keeps no state.
    unsafe {
        ffi::sqlite3_set_authorizer(db, Some(authorize), std::ptr::null_mut());
        ffi::sqlite3_db_config(
            db,
            ffi::SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION,
            0 as c_int,
            std::ptr::null_mut::<c_int>(),
        );
        ffi::sqlite3_limit(db, ffi::SQLITE_LIMIT_ATTACHED, 0);
        ffi::sqlite3_limit(db, ffi::SQLITE_LIMIT_LENGTH, cap);
    }
}

/// SQLite's authorizer: denies `ATTACH` (which `VACUUM` runs too, for its target file) and
/// calls of `load_extension`; allows the rest, which the read-only connection bounds.
unsafe extern "C" fn authorize(
    _data: *mut c_void,
    action: c_int,
    _first: *const c_char,
    second: *const c_char,
    _database: *const c_char,
    _trigger: *const c_char,
) -> c_int {
    let refused = match action {
        ffi::SQLITE_ATTACH => true,
        // For a function call, the second argument is the function's name.
        ffi::SQLITE_FUNCTION if !second.is_null() => {
            // SAFETY: SQLite passes a NUL-terminated name that lives through this call.
            let name = unsafe { CStr::from_ptr(second) };
            name.to_bytes().eq_ignore_ascii_case(b"load_extension")
        }
        _ => false,
    };
    if refused {
        ffi::SQLITE_DENY
    } else {
        ffi::SQLITE_OK
    }
}
