//! Random bearer secrets and their stored form. Secrets are 256 random bits, so a fast
//! SHA-256 of them is safe to store and look up by; passwords, which are guessable, get argon2.

use std::sync::LazyLock;

use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rand::RngCore;
use rand::rngs::OsRng;
use sha2::{Digest, Sha256};

/// Bytes of randomness in every token we issue.
const TOKEN_BYTES: usize = 32;

/// A new random token with a readable prefix (`cq_` for API keys, `cqs_` for sessions...).
pub fn new_token(prefix: &str) -> String {
    let mut bytes = [0u8; TOKEN_BYTES];
    OsRng.fill_bytes(&mut bytes);
    format!("{prefix}{}", URL_SAFE_NO_PAD.encode(bytes))
}

/// The stored form of a token: lowercase hex SHA-256.
pub fn hash_token(token: &str) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digest = Sha256::digest(token.as_bytes());
    let mut hex = String::with_capacity(digest.len() * 2);
    for byte in digest {
        hex.push(char::from(HEX[usize::from(byte >> 4)]));
        hex.push(char::from(HEX[usize::from(byte & 0x0f)]));
    }
    hex
}

pub fn hash_password(password: &str) -> Result<String, argon2::password_hash::Error> {
    let salt = SaltString::generate(&mut OsRng);
    Ok(Argon2::default()
        .hash_password(password.as_bytes(), &salt)?
        .to_string())
}

/// A hash made once with the same parameters as real ones, checked against when there is no
/// real hash (unknown user, user without a password) so that costs the same time as a wrong
/// password and does not tell which usernames exist.
static DUMMY_HASH: LazyLock<String> = LazyLock::new(|| {
    // Hashing a fixed password with a fresh salt and default parameters cannot fail; if it
    // did, the empty string fails to parse: unknown users are still refused, only faster.
    hash_password("colloquy: no such password").unwrap_or_default()
});

/// Checks `password` against `stored`, or — when there is nothing stored — spends the same work
/// on a dummy hash and answers `false`. Slow on purpose: call it off the async runtime.
pub fn verify_password_or_dummy(password: &str, stored: Option<&str>) -> bool {
    match stored {
        Some(stored) => verify_password(password, stored),
        None => {
            verify_password(password, &DUMMY_HASH);
            false
        }
    }
}

/// Constant-time check of a password against a stored argon2 hash; a corrupt hash is a mismatch.
pub fn verify_password(password: &str, stored: &str) -> bool {
    PasswordHash::new(stored)
        .map(|hash| {
            Argon2::default()
                .verify_password(password.as_bytes(), &hash)
                .is_ok()
        })
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_verify_only_against_their_own_hash() {
        let hash = hash_password("correct horse").unwrap();
        assert!(hash.starts_with("$argon2"));
        assert!(verify_password("correct horse", &hash));
        assert!(!verify_password("wrong horse", &hash));
        assert!(!verify_password("correct horse", "not a hash"));
    }

    #[test]
    fn without_a_stored_hash_nothing_verifies() {
        assert!(!verify_password_or_dummy(
            "colloquy: no such password",
            None
        ));
        assert!(!verify_password_or_dummy("", None));
        let hash = hash_password("correct horse").unwrap();
        assert!(verify_password_or_dummy("correct horse", Some(&hash)));
    }

    #[test]
    fn tokens_are_random_and_hashes_are_stable() {
        let a = new_token("cq_");
        let b = new_token("cq_");
        assert_ne!(a, b);
        assert!(a.starts_with("cq_") && a.len() > 40);
        assert_eq!(hash_token(&a), hash_token(&a));
        assert_eq!(hash_token(&a).len(), 64);
        // Stored hashes stay valid: the digest of "abc" (FIPS 180-2), in lowercase hex.
        assert_eq!(
            hash_token("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
