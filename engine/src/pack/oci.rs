//! Packs over OCI, the channel WebAssembly components already travel on: a
//! pack is an OCI artifact whose one layer is the pack archive
//! ([`super::archive::MEDIA_TYPE`]) and whose config is a small JSON
//! document naming the pack.
//!
//! `oci://host[:port]/repository:tag` (or `@sha256:…`). Loopback
//! registries (`localhost`, `127.0.0.1`, `[::1]`) and the hosts in
//! `CAUTILUS_OCI_INSECURE` (comma-separated) are spoken to over plain HTTP,
//! every other over HTTPS. Credentials come from `CAUTILUS_OCI_USERNAME`
//! and `CAUTILUS_OCI_PASSWORD`, else the registry is used anonymously.
//!
//! A pulled layer is hashed and compared with the digest the registry's
//! manifest states before anything reads it.

use std::collections::BTreeMap;

use oci_client::client::{ClientConfig, ClientProtocol, Config, ImageLayer};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};

use super::PackError;
use super::archive::{MEDIA_TYPE, digest};
use super::manifest::Manifest;

/// The media type of a pack artifact's config blob.
pub const CONFIG_MEDIA_TYPE: &str = "application/vnd.cautilus.pack.config.v1+json";

/// The URL scheme of a registry reference.
pub const SCHEME: &str = "oci://";

/// Whether `source` names a registry (`oci://…`).
pub fn is_oci(source: &str) -> bool {
    source.starts_with(SCHEME)
}

fn parse(reference: &str) -> Result<Reference, PackError> {
    let bare = reference.strip_prefix(SCHEME).unwrap_or(reference);
    bare.parse::<Reference>().map_err(|e| PackError::Oci {
        reference: reference.to_string(),
        message: format!("not a registry reference ({e}); write oci://host[:port]/repository:tag"),
    })
}

fn client(reference: &Reference) -> Client {
    let mut plain: Vec<String> = ["localhost", "127.0.0.1", "[::1]"]
        .iter()
        .map(ToString::to_string)
        .collect();
    if let Ok(hosts) = std::env::var("CAUTILUS_OCI_INSECURE") {
        plain.extend(
            hosts
                .split(',')
                .map(|h| h.trim().to_string())
                .filter(|h| !h.is_empty()),
        );
    }
    // The protocol is chosen by host, port included or not.
    let registry = reference.resolve_registry().to_string();
    if let Some((host, _port)) = registry.rsplit_once(':')
        && plain.iter().any(|p| p == host)
    {
        plain.push(registry.clone());
    }
    crate::tls::install_crypto_provider();
    Client::new(ClientConfig {
        protocol: ClientProtocol::HttpsExcept(plain),
        ..ClientConfig::default()
    })
}

fn auth() -> RegistryAuth {
    match (
        std::env::var("CAUTILUS_OCI_USERNAME"),
        std::env::var("CAUTILUS_OCI_PASSWORD"),
    ) {
        (Ok(user), Ok(password)) if !user.is_empty() => RegistryAuth::Basic(user, password),
        _ => RegistryAuth::Anonymous,
    }
}

fn block_on<F: std::future::Future>(future: F) -> Result<F::Output, PackError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| PackError::Other(format!("cannot start the network runtime: {e}")))?;
    Ok(runtime.block_on(future))
}

/// Publishes an archive as `reference`; returns the manifest's URL.
pub fn push(reference: &str, archive: &[u8], manifest: &Manifest) -> Result<String, PackError> {
    let image = parse(reference)?;
    let config = serde_json::json!({
        "name": manifest.pack.name,
        "version": manifest.pack.version,
        "wit": manifest.pack.wit,
        "description": manifest.pack.description,
    });
    let annotations = BTreeMap::from([
        (
            "org.opencontainers.image.title".to_string(),
            format!("{}-{}.tgz", manifest.pack.name, manifest.pack.version),
        ),
        (
            "org.opencontainers.image.version".to_string(),
            manifest.pack.version.clone(),
        ),
    ]);
    let layer = ImageLayer::new(archive.to_vec(), MEDIA_TYPE.to_string(), Some(annotations));
    let config = Config::new(
        serde_json::to_vec(&config).expect("serializable"),
        CONFIG_MEDIA_TYPE.to_string(),
        None,
    );
    let client = client(&image);
    let pushed = block_on(client.push(&image, &[layer], config, &auth(), None))?;
    pushed
        .map(|response| response.manifest_url)
        .map_err(|e| PackError::Oci {
            reference: reference.to_string(),
            message: format!("cannot publish: {e}"),
        })
}

/// Pulls the pack archive published as `reference`; returns its bytes and
/// their digest, checked against the digest the registry's manifest gives.
pub fn pull(reference: &str) -> Result<(Vec<u8>, String), PackError> {
    let image = parse(reference)?;
    let fail = |message: String| PackError::Oci {
        reference: reference.to_string(),
        message,
    };
    let client = client(&image);
    let pulled = block_on(client.pull(&image, &auth(), vec![MEDIA_TYPE]))?
        .map_err(|e| fail(format!("cannot fetch it: {e}")))?;
    let [layer] = pulled.layers.as_slice() else {
        return Err(fail(format!(
            "a pack has one layer ({MEDIA_TYPE}); this artifact has {}",
            pulled.layers.len()
        )));
    };
    let stated = pulled
        .manifest
        .as_ref()
        .and_then(|m| m.layers.first())
        .map(|d| d.digest.clone())
        .ok_or_else(|| fail("the registry gave no manifest for it".into()))?;
    let actual = digest(&layer.data);
    if actual != stated {
        return Err(fail(format!(
            "its layer hashes to {actual} but the registry's manifest states {stated}: refusing it"
        )));
    }
    Ok((layer.data.to_vec(), actual))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_parse_with_and_without_the_scheme() {
        let r = parse("oci://127.0.0.1:5000/acme/evals:0.1.0").unwrap();
        assert_eq!(r.registry(), "127.0.0.1:5000");
        assert_eq!(r.repository(), "acme/evals");
        assert_eq!(r.tag(), Some("0.1.0"));
        assert!(is_oci("oci://x/y:z") && !is_oci("./x.tgz"));
        let error = parse("oci://").unwrap_err().to_string();
        assert!(
            error.contains("oci://host[:port]/repository:tag"),
            "{error}"
        );
    }
}
