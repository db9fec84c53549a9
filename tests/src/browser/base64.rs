//! Just enough base64 for WebDriver screenshots (no base64 crate among the dependencies).

use anyhow::anyhow;

/// Decodes standard (RFC 4648) base64, ignoring whitespace; enough for WebDriver screenshots.
pub(super) fn decode(input: &str) -> anyhow::Result<Vec<u8>> {
    fn sextet(c: u8) -> Option<u32> {
        match c {
            b'A'..=b'Z' => Some(u32::from(c - b'A')),
            b'a'..=b'z' => Some(u32::from(c - b'a') + 26),
            b'0'..=b'9' => Some(u32::from(c - b'0') + 52),
            b'+' => Some(62),
            b'/' => Some(63),
            _ => None,
        }
    }
    let mut out = Vec::with_capacity(input.len() / 4 * 3);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in input.bytes() {
        if c.is_ascii_whitespace() {
            continue;
        }
        if c == b'=' {
            break;
        }
        let v = sextet(c).ok_or_else(|| anyhow!("invalid base64 byte {c:#04x}"))?;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            // Truncation to the low byte is the point here.
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests fail loudly by design
mod tests {
    use super::decode;

    #[test]
    fn decodes_padded_and_unpadded() {
        assert_eq!(decode("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(decode("aGVsbG8h").unwrap(), b"hello!");
        assert_eq!(decode("aGk\n=").unwrap(), b"hi");
        assert_eq!(decode("").unwrap(), b"");
        assert_eq!(decode("/+8=").unwrap(), [0xff, 0xef]);
        assert!(decode("a*b").is_err());
    }
}
