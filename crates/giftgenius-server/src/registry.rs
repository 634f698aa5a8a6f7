//! `giftgenius-server registry-json`: the MCP registry's `server.json` for this deployment, a
//! remote server over Streamable HTTP, made from `--registry-name`, the crate's version and
//! `--public-url` (never written by hand, so it cannot disagree with what is deployed).
//!
//! The shape is the registry's server schema of 2025-12-11 (`SCHEMA_URL`): `name` in
//! reverse-DNS with one `/` (`io.github.OWNER/giftgenius` for a GitHub sign-in, `com.example/…`
//! for a DNS one), `description` of at most 100 characters, `version`, and
//! `remotes: [{type: "streamable-http", url}]`. The URL must be https: the registry lists
//! servers anyone can reach.
//!
//! With `--registry-image REF` the document also lists the container image as an OCI package
//! (`packages: [{registryType: "oci", identifier: REF, transport: streamable-http}]`): the
//! registry checks that the image carries the label `io.modelcontextprotocol.server.name`
//! with this name, which `cargo xtask image` sets (`IMAGE_NAME_LABEL`).

use anyhow::{Context, bail, ensure};
use serde_json::{Value, json};

use crate::config::Config;

pub const SCHEMA_URL: &str = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";

/// The label an OCI image carries for the registry to accept it as this server's package.
pub const IMAGE_NAME_LABEL: &str = "io.modelcontextprotocol.server.name";

/// Where the image serves MCP when run as its documentation says (`-p 8000:8000`).
pub const IMAGE_LOCAL_URL: &str = "http://localhost:8000/mcp";

/// What the registry shows under the name (at most 100 characters).
pub const DESCRIPTION: &str =
    "Gift ideas ranked for the person and occasion; buys one only after the user confirms it.";

/// The `server.json` document, or why the flags cannot make one (naming the flag to pass).
pub fn server_json(config: &Config) -> anyhow::Result<Value> {
    let name = config
        .registry_name
        .as_deref()
        .context("pass --registry-name in reverse-DNS form, e.g. --registry-name io.github.OWNER/giftgenius")?;
    check_name(name)?;
    let public_url = config
        .public_url
        .as_deref()
        .context("pass --public-url: the https URL clients reach this server at, e.g. https://gifts.example.com")?;
    let url = url::Url::parse(public_url).with_context(|| format!("--public-url {public_url:?} is not a URL"))?;
    ensure!(
        url.scheme() == "https" && url.host_str().is_some() && url.query().is_none() && url.fragment().is_none(),
        "--public-url must be an https URL without query or fragment for the registry, e.g. https://gifts.example.com"
    );
    let mut document = json!({
        "$schema": SCHEMA_URL,
        "name": name,
        "title": "GiftGenius",
        "description": DESCRIPTION,
        "version": env!("CARGO_PKG_VERSION"),
        "remotes": [{
            "type": "streamable-http",
            "url": format!("{}/mcp", public_url.trim_end_matches('/')),
        }],
    });
    if let Some(image) = config.registry_image.as_deref() {
        check_image(image)?;
        document["packages"] = json!([{
            "registryType": "oci",
            "identifier": image,
            "transport": {"type": "streamable-http", "url": IMAGE_LOCAL_URL},
        }]);
    }
    Ok(document)
}

/// An image reference the registry takes: `[REGISTRY/]NAMESPACE/NAME:TAG` or `…@sha256:…`,
/// pinned (a tag other than `latest`, or a digest) so the listing names one build.
fn check_image(image: &str) -> anyhow::Result<()> {
    let example = "e.g. --registry-image ghcr.io/OWNER/giftgenius:0.1.0";
    let ok_chars = image.bytes().all(|b| b.is_ascii_alphanumeric() || b"./:_-@".contains(&b));
    ensure!(
        ok_chars && !image.is_empty() && image.len() <= 255,
        "--registry-image {image:?} is not an image reference, {example}"
    );
    let (path, pinned) = match image.split_once('@') {
        Some((path, digest)) => (path, digest.strip_prefix("sha256:").is_some_and(|h| h.len() == 64)),
        None => match image.rsplit_once(':').filter(|(_, tag)| !tag.contains('/')) {
            Some((path, tag)) => (path, !tag.is_empty() && tag != "latest"),
            None => (image, false),
        },
    };
    ensure!(
        path.contains('/') && !path.starts_with('/') && !path.ends_with('/'),
        "--registry-image {image:?} needs a namespace and a name, {example}"
    );
    ensure!(
        pinned,
        "--registry-image {image:?} must be pinned to a version tag (not `latest`) or a sha256 digest, {example}"
    );
    Ok(())
}

/// `NAMESPACE/SERVER`: the namespace reverse-DNS labels (two or more, letters, digits and
/// inner hyphens), the server part letters, digits, `.`, `_`, `-`, starting and ending with a
/// letter or digit; 3–200 characters in all.
fn check_name(name: &str) -> anyhow::Result<()> {
    let example = "e.g. io.github.OWNER/giftgenius";
    let Some((namespace, server)) = name.split_once('/') else {
        bail!(
            "--registry-name {name:?} needs one `/` between the reverse-DNS namespace and the server name, {example}"
        );
    };
    let label_ok = |label: &str| {
        !label.is_empty()
            && label.len() <= 63
            && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !label.starts_with('-')
            && !label.ends_with('-')
    };
    let labels: Vec<&str> = namespace.split('.').collect();
    ensure!(
        labels.len() >= 2 && labels.iter().all(|l| label_ok(l)),
        "--registry-name {name:?}: the namespace before `/` must be reverse-DNS (dot-separated labels of letters, \
         digits and inner hyphens), {example}"
    );
    let edge_ok = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    ensure!(
        server.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
            && edge_ok(server.chars().next())
            && edge_ok(server.chars().last()),
        "--registry-name {name:?}: the server name after `/` takes letters, digits, `.`, `_` and `-`, starting and \
         ending with a letter or digit, {example}"
    );
    ensure!((3..=200).contains(&name.len()), "--registry-name must be 3 to 200 characters, {example}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_reverse_dns_with_one_slash() {
        for good in ["io.github.alice/giftgenius", "com.example/gift-genius.v2", "io.github.A-b/x_1"] {
            check_name(good).unwrap_or_else(|e| panic!("{good}: {e}"));
        }
        for bad in [
            "giftgenius",
            "github/giftgenius",
            "io.github.alice/gift/genius",
            "io..github/x",
            "io.github.-alice/x",
            "io.github.alice/-x",
            "io.github.alice/",
            "io.github.al ice/x",
            "io.github.alice/x<script>",
        ] {
            let why = check_name(bad).unwrap_err().to_string();
            assert!(why.contains("--registry-name"), "{bad}: {why}");
        }
    }

    #[test]
    fn images_are_pinned_references() {
        let digest = format!("ghcr.io/acme/giftgenius@sha256:{}", "a".repeat(64));
        for good in ["ghcr.io/acme/giftgenius:0.1.0", "localhost:5000/acme/gg:1", "acme/giftgenius:v2", &digest] {
            check_image(good).unwrap_or_else(|e| panic!("{good}: {e}"));
        }
        for bad in [
            "giftgenius:0.1.0",
            "ghcr.io/acme/giftgenius",
            "ghcr.io/acme/giftgenius:latest",
            "localhost:5000/acme/gg",
            "ghcr.io/acme/giftgenius@sha256:abc",
            "ghcr.io/acme/gift genius:1",
            "",
        ] {
            let why = check_image(bad).unwrap_err().to_string();
            assert!(why.contains("--registry-image"), "{bad}: {why}");
        }
    }

    #[test]
    fn the_description_fits_the_registry() {
        assert!((1..=100).contains(&DESCRIPTION.chars().count()), "{}", DESCRIPTION.chars().count());
    }
}
