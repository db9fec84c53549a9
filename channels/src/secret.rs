//! Comparing a presented secret with the expected one in constant time: the one copy,
//! used by the Telegram webhook's secret header and the gateway's bearer token.

use subtle::{Choice, ConstantTimeEq};

/// Whether `given` equals `expected`. The time depends on the length of `given` only:
/// never on where the two differ, nor on the expected secret's length (the expected
/// bytes are cycled to the given length and the lengths compared like the bytes).
pub fn secret_eq(given: &[u8], expected: &[u8]) -> bool {
    let mut same = (given.len() as u64).ct_eq(&(expected.len() as u64));
    for (g, e) in given.iter().zip(expected.iter().cycle()) {
        same &= g.ct_eq(e);
    }
    bool::from(same & Choice::from(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_same_bytes_match() {
        assert!(secret_eq(b"s3cret", b"s3cret"));
        assert!(secret_eq(b"", b""));
        for wrong in [&b""[..], b"s3cre", b"s3cret!", b"S3cret", b"s3crets3cret"] {
            assert!(!secret_eq(wrong, b"s3cret"), "{wrong:?}");
        }
        assert!(!secret_eq(b"x", b""));
    }
}
