//! SCRAM-SHA-256 (RFC 5802 with RFC 7677's SHA-256; PostgreSQL's "SASL Authentication" section)
//! for PostgreSQL logins whose password is a Varve token.
//!
//! The token file keeps, for each token, only SCRAM's StoredKey and ServerKey (as PostgreSQL's
//! `pg_authid` does), never the token or the salted password. A client may log in under any user
//! name, so the server does not know which token to expect when it sends its salt: every token
//! uses the one salt [`SALT`] (tokens are 160 random bits, so a salt against guessing adds
//! nothing), and the client's proof is checked against each token's StoredKey in turn.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use ring::{digest, hmac, pbkdf2};

/// The salt of every token's salted password.
pub(crate) const SALT: &[u8] = b"varve-token-scram-sha-256";

/// PBKDF2 iterations of the salted password (RFC 7677's minimum and PostgreSQL's default).
pub(crate) const ITERATIONS: u32 = 4096;

/// The mechanism name announced to clients.
pub(crate) const MECHANISM: &str = "SCRAM-SHA-256";

/// A token's SCRAM keys: `StoredKey = H(HMAC(SaltedPassword, "Client Key"))` and `ServerKey =
/// HMAC(SaltedPassword, "Server Key")` (RFC 5802, section 3).
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct ScramKeys {
    pub(crate) stored_key: [u8; 32],
    pub(crate) server_key: [u8; 32],
}

impl std::fmt::Debug for ScramKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ScramKeys(..)")
    }
}

impl ScramKeys {
    /// The keys of `token` with [`SALT`] and [`ITERATIONS`].
    pub(crate) fn of_token(token: &str) -> ScramKeys {
        let mut salted = [0u8; 32];
        let iterations = std::num::NonZeroU32::new(ITERATIONS).expect("4096 is not zero");
        pbkdf2::derive(
            pbkdf2::PBKDF2_HMAC_SHA256,
            iterations,
            SALT,
            token.as_bytes(),
            &mut salted,
        );
        let client_key = mac(&salted, b"Client Key");
        ScramKeys {
            stored_key: sha256(&client_key),
            server_key: mac(&salted, b"Server Key"),
        }
    }
}

fn mac(key: &[u8], message: &[u8]) -> [u8; 32] {
    let tag = hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, key), message);
    let mut out = [0u8; 32];
    out.copy_from_slice(tag.as_ref());
    out
}

fn sha256(data: &[u8]) -> [u8; 32] {
    let d = digest::digest(&digest::SHA256, data);
    let mut out = [0u8; 32];
    out.copy_from_slice(d.as_ref());
    out
}

/// The server's side of one exchange after the client's first message.
#[derive(Debug)]
pub(crate) struct Exchange {
    gs2_header: String,
    client_first_bare: String,
    server_first: String,
    nonce: String,
}

impl Exchange {
    /// Reads the client's first message (`n,,n=user,r=nonce`) and makes the server's first
    /// (`r=nonce+server nonce,s=salt,i=iterations`), which [`Exchange::server_first`] returns.
    ///
    /// Errors: a message that is not SCRAM's, or one asking for channel binding (`p=`), which
    /// this server does not offer.
    pub(crate) fn start(client_first: &[u8]) -> Result<Exchange, String> {
        let text = std::str::from_utf8(client_first).map_err(|_| "the SCRAM message is not UTF-8".to_string())?;
        let mut parts = text.splitn(3, ',');
        let (flag, authzid, bare) = match (parts.next(), parts.next(), parts.next()) {
            (Some(f), Some(a), Some(b)) => (f, a, b),
            _ => return Err("malformed SCRAM client-first message".into()),
        };
        if flag.starts_with("p=") {
            return Err("SCRAM channel binding (SCRAM-SHA-256-PLUS) is not offered: use SCRAM-SHA-256".into());
        }
        if flag != "n" && flag != "y" {
            return Err("malformed SCRAM client-first message".into());
        }
        let client_nonce = bare
            .split(',')
            .find_map(|f| f.strip_prefix("r="))
            .filter(|n| !n.is_empty())
            .ok_or("the SCRAM client-first message has no nonce")?;
        let mut random = [0u8; 18];
        getrandom::fill(&mut random).map_err(|e| format!("random nonce: {e}"))?;
        let nonce = format!("{client_nonce}{}", STANDARD.encode(random));
        let server_first = format!("r={nonce},s={},i={ITERATIONS}", STANDARD.encode(SALT));
        Ok(Exchange {
            gs2_header: format!("{flag},{authzid},"),
            client_first_bare: bare.to_string(),
            server_first,
            nonce,
        })
    }

    /// The server-first message to send.
    pub(crate) fn server_first(&self) -> &str {
        &self.server_first
    }

    /// Checks the client's final message (`c=binding,r=nonce,p=proof`) against each candidate's
    /// SCRAM keys (every token with keys, `auth::Tokens::scram_entries`); returns the candidate
    /// it proves and the server-final message (`v=signature`).
    ///
    /// Errors: a malformed message, a wrong nonce or binding, or a proof no token matches.
    pub(crate) fn finish<'t, T>(
        &self,
        client_final: &[u8],
        candidates: impl IntoIterator<Item = (&'t T, &'t ScramKeys)>,
    ) -> Result<(&'t T, String), String> {
        let text = std::str::from_utf8(client_final).map_err(|_| "the SCRAM message is not UTF-8".to_string())?;
        let (without_proof, proof) = text
            .rsplit_once(",p=")
            .ok_or("the SCRAM client-final message has no proof")?;
        let proof = STANDARD
            .decode(proof)
            .map_err(|_| "the SCRAM proof is not base64".to_string())?;
        let mut binding = None;
        let mut nonce = None;
        for f in without_proof.split(',') {
            if let Some(v) = f.strip_prefix("c=") {
                binding = Some(v);
            } else if let Some(v) = f.strip_prefix("r=") {
                nonce = Some(v);
            }
        }
        if binding != Some(STANDARD.encode(&self.gs2_header).as_str()) {
            return Err("SCRAM channel binding mismatch".into());
        }
        if nonce != Some(self.nonce.as_str()) {
            return Err("SCRAM nonce mismatch".into());
        }
        if proof.len() != 32 {
            return Err("password authentication failed: the password is not a Varve token".into());
        }
        let auth_message = format!("{},{},{}", self.client_first_bare, self.server_first, without_proof);
        for (entry, keys) in candidates {
            let signature = mac(&keys.stored_key, auth_message.as_bytes());
            let mut client_key = [0u8; 32];
            for (k, (p, s)) in client_key.iter_mut().zip(proof.iter().zip(signature.iter())) {
                *k = p ^ s;
            }
            if same(&sha256(&client_key), &keys.stored_key) {
                let server_signature = mac(&keys.server_key, auth_message.as_bytes());
                return Ok((entry, format!("v={}", STANDARD.encode(server_signature))));
            }
        }
        Err("password authentication failed: the password is not a token of this server's token file".into())
    }
}

/// Compares in time independent of where the bytes differ.
fn same(a: &[u8; 32], b: &[u8; 32]) -> bool {
    a.iter().zip(b.iter()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::Tokens;

    /// A client's side of the exchange, as RFC 5802 section 3 computes it.
    fn client_final(token: &str, client_first_bare: &str, server_first: &str) -> String {
        let nonce = server_first.split(',').next().unwrap().strip_prefix("r=").unwrap();
        let without_proof = format!("c={},r={nonce}", STANDARD.encode("n,,"));
        let mut salted = [0u8; 32];
        pbkdf2::derive(
            pbkdf2::PBKDF2_HMAC_SHA256,
            std::num::NonZeroU32::new(ITERATIONS).unwrap(),
            SALT,
            token.as_bytes(),
            &mut salted,
        );
        let client_key = mac(&salted, b"Client Key");
        let auth = format!("{client_first_bare},{server_first},{without_proof}");
        let signature = mac(&sha256(&client_key), auth.as_bytes());
        let proof: Vec<u8> = client_key.iter().zip(signature.iter()).map(|(a, b)| a ^ b).collect();
        format!("{without_proof},p={}", STANDARD.encode(proof))
    }

    #[test]
    fn a_token_logs_in_and_another_does_not() {
        let (token, entry) = crate::auth::new_token(crate::Scope::Read, Some("iot")).unwrap();
        let tokens = Tokens::parse(&entry.line()).unwrap();
        let first = "n=anyone,r=abcdef";
        let ex = Exchange::start(format!("n,,{first}").as_bytes()).unwrap();
        let fin = client_final(&token, first, ex.server_first());
        let (found, server_final) = ex.finish(fin.as_bytes(), tokens.scram_entries()).unwrap();
        assert_eq!(found.id, entry.id);
        assert!(server_final.starts_with("v="));

        let ex = Exchange::start(format!("n,,{first}").as_bytes()).unwrap();
        let fin = client_final("varve_wrong", first, ex.server_first());
        assert!(ex.finish(fin.as_bytes(), tokens.scram_entries()).is_err());
        assert!(Exchange::start(b"p=tls-server-end-point,,n=,r=x").is_err());
    }
}
