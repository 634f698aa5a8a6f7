//! What the packer puts next to the widget's runtime (`runtime/*.js`), produced natively here so
//! `cargo xtask` itself never compiles Leptos: the widget build runs
//! `src/bin/giftgenius-fallback.rs`, which writes [`packer_input`] to a file the packer reads.

use crate::i18n::{Lang, Msg};
use crate::{RenderContext, Theme, ViewState, render_to_html};

/// The file the packer reads: the runtime's modules in their order (`runtime`: `{file, source}`
/// each, comments and all; the packer strips them) and the data block it reads (`data`,
/// [`fallback_data`]).
pub fn packer_input() -> serde_json::Value {
    let runtime: Vec<_> =
        crate::RUNTIME_JS.iter().map(|(file, source)| serde_json::json!({ "file": file, "source": source })).collect();
    serde_json::json!({ "runtime": runtime, "data": fallback_data() })
}

/// What the runtime reads from `#giftgenius-fallback-data`, from the widget and contract
/// crates themselves so nothing is written twice: its `ui/initialize` params, the markup of the
/// two states it shows without a server result ("Purchase cancelled" with nothing to go back to,
/// and a tool call the host cancelled), rendered natively by the same Leptos views the wasm
/// uses, and the contract's strings (`giftgenius_types::wire`, and the kept screens' keys of
/// `crate::runtime`). Markup and the runtime's few sentences come once per language (`en`,
/// `es`, `pt`), from the same catalogs.
pub fn fallback_data() -> serde_json::Value {
    let per_language = |f: &dyn Fn(Lang) -> serde_json::Value| {
        Lang::ALL.iter().map(|l| (l.code().to_string(), f(*l))).collect::<serde_json::Map<_, _>>()
    };
    let render = |state: ViewState| {
        per_language(&|l| render_to_html(&state, &RenderContext::new(Theme::Light, l.code())).into())
    };
    serde_json::json!({
        "initialize": crate::runtime::initialize_params(),
        "cancelled": render(ViewState::Cancelled),
        "toolCancelled": render(ViewState::ToolCancelled { reason: None, retry: None }),
        "text": per_language(&|l| serde_json::json!({
            "unreachable": l.t(Msg::Unreachable),
            "needsFix": l.t(Msg::NeedsFix),
        })),
        "wire": crate::runtime::wire(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use giftgenius_types::wire;

    #[test]
    fn fallback_data_comes_from_the_widget_crate() {
        let data = fallback_data();
        // The ui/initialize params (name, version, protocol) of the crate, not a copy of them.
        assert_eq!(data["initialize"], crate::runtime::initialize_params());
        assert_eq!(data["initialize"]["appInfo"]["version"], env!("CARGO_PKG_VERSION"));
        assert_eq!(data["initialize"]["protocolVersion"], crate::runtime::PROTOCOL_VERSION);
        // The contract's strings, from giftgenius_types::wire (the packer's tests check that the
        // runtime spells none of them).
        assert_eq!(data["wire"], crate::runtime::wire());
        assert_eq!(data["wire"]["html"], wire::META_HTML);
        assert_eq!(data["wire"]["store"], wire::CHECKOUT_STORAGE_PREFIX);
        assert_eq!(data["wire"]["viewUuid"], wire::META_VIEW_UUID);
        let stopped = data["toolCancelled"]["en"].as_str().expect("tool-cancelled markup");
        assert!(stopped.contains(r#"data-state="tool-cancelled""#), "{stopped}");
        assert!(!stopped.contains(r#"data-action="retry""#), "the fallback never retries a cancelled call");
        // The cancelled screen is the widget's own SSR markup.
        let cancelled = data["cancelled"]["en"].as_str().expect("cancelled markup");
        let en = RenderContext::new(Theme::Light, "en");
        assert_eq!(cancelled, render_to_html(&ViewState::Cancelled, &en));
        assert!(data["cancelled"]["pt"].as_str().expect("in Portuguese too").contains("Compra cancelada"));
        assert!(data["text"]["es"]["unreachable"].as_str().expect("runtime text").contains("GiftGenius"));
        assert!(cancelled.contains(r#"data-state="cancelled""#) && cancelled.contains("Purchase cancelled"));
    }

    #[test]
    fn the_packer_gets_the_runtime_source_and_the_data() {
        let input = packer_input();
        let files: Vec<_> = crate::RUNTIME_JS.iter().map(|(file, _)| serde_json::json!(file)).collect();
        let given: Vec<_> = input["runtime"].as_array().expect("a list").iter().map(|m| m["file"].clone()).collect();
        assert_eq!(given, files);
        assert_eq!(input["runtime"][0]["source"], crate::RUNTIME_JS[0].1);
        assert_eq!(input["data"], fallback_data());
    }

    #[test]
    fn every_runtime_file_is_packed_once_with_the_entry_first() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("runtime");
        let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
            .expect("widget/runtime")
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.ends_with(".js"))
            .collect();
        on_disk.sort();
        let mut listed: Vec<String> = crate::RUNTIME_JS.iter().map(|(file, _)| file.to_string()).collect();
        assert_eq!(listed[0], "main.js", "the entry opens the closure");
        listed.sort();
        assert_eq!(listed, on_disk, "widget/runtime/*.js and RUNTIME_JS name the same files, each once");
        for (file, source) in crate::RUNTIME_JS {
            let on_disk = std::fs::read_to_string(dir.join(file)).expect("readable");
            assert_eq!(&on_disk, source, "{file}");
            assert!(source.starts_with("// "), "{file} opens with a comment saying what it is for");
        }
    }
}
