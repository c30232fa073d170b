//! LINE's webhook signature: `x-line-signature` = Base64(HMAC-SHA256(channel secret, raw body)),
//! checked in constant time on the raw bytes before anything parses them.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{KeyInit, Mac};
use sha2::Sha256;

type HmacSha256 = hmac::Hmac<Sha256>;

/// The header value LINE would send for `body`.
pub fn sign(secret: &str, body: &[u8]) -> String {
    let mut mac = HmacSha256::new_from_slice(secret.as_bytes()).expect("HMAC takes any key length");
    mac.update(body);
    STANDARD.encode(mac.finalize().into_bytes())
}

/// Whether `header` can be a signature at all (Base64 of 32 bytes): checked before a body is
/// read, so a request without one is refused without reading what it sends.
pub fn well_formed(header: Option<&[u8]>) -> bool {
    header
        .and_then(|h| STANDARD.decode(h.trim_ascii()).ok())
        .is_some_and(|d| d.len() == 32)
}

/// True only when `header` is the Base64 of the body's HMAC. The comparison of the MAC is
/// constant-time (hmac's `verify_slice`); a header that is not Base64 of 32 bytes is false.
pub fn verify(secret: &str, body: &[u8], header: Option<&[u8]>) -> bool {
    let Some(h) = header else {
        return false;
    };
    let Ok(given) = STANDARD.decode(h.trim_ascii()) else {
        return false;
    };
    let mut mac = HmacSha256::new_from_slice(secret.as_bytes()).expect("HMAC takes any key length");
    mac.update(body);
    mac.verify_slice(&given).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Generated signatures are well formed; anything of another length, or not Base64, is not.
    #[test]
    fn only_signature_shaped_headers_are_well_formed() {
        let mut rng = crate::test_rng::Rng::new(4303);
        for _ in 0..200 {
            let n = rng.below(64);
            let body: Vec<u8> = (0..n).map(|_| rng.below(256) as u8).collect();
            let sig = sign("secret", &body);
            assert!(well_formed(Some(sig.as_bytes())), "{sig}");
            let other = STANDARD.encode(&body);
            assert_eq!(well_formed(Some(other.as_bytes())), n == 32, "{other}");
            let bad = format!("{}!", &sig[..sig.len() - 1]);
            assert!(!well_formed(Some(bad.as_bytes())), "{bad}");
        }
        assert!(!well_formed(None));
        assert!(!well_formed(Some(b"")));
    }

    #[test]
    fn known_vector() {
        // RFC 4231 test case 2 (key "Jefe"), Base64 of its HMAC-SHA256.
        let sig = sign("Jefe", b"what do ya want for nothing?");
        assert_eq!(sig, "W9zBRr9gdU5qBCQmCJV1x1oAPwidJzmDnexYuWTsOEM=");
    }

    #[test]
    fn only_the_right_signature_of_the_exact_body_passes() {
        let secret = "0123456789abcdef0123456789abcdef";
        let bodies: Vec<Vec<u8>> = (0..40)
            .map(|i| {
                format!(r#"{{"destination":"U{i}","events":[{{"n":"テスト{i}😀"}}]}}"#).into_bytes()
            })
            .collect();
        for b in &bodies {
            let good = sign(secret, b);
            assert!(verify(secret, b, Some(good.as_bytes())));
            assert!(!verify(secret, b, None));
            assert!(!verify("another-secret", b, Some(good.as_bytes())));
            // One flipped byte of the body, or of the signature.
            let mut tampered = b.clone();
            tampered[b.len() / 2] ^= 1;
            assert!(!verify(secret, &tampered, Some(good.as_bytes())));
            let mut raw = STANDARD.decode(&good).unwrap();
            raw[0] ^= 0x80;
            assert!(!verify(secret, b, Some(STANDARD.encode(&raw).as_bytes())));
            // Truncated, not Base64, empty.
            assert!(!verify(secret, b, Some(&good.as_bytes()[..20])));
            assert!(!verify(secret, b, Some(b"!!not base64!!")));
            assert!(!verify(secret, b, Some(b"")));
        }
    }
}
