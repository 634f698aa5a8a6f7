//! How to render, as opposed to what: the host's theme and locale.

/// The host's colour scheme; the root element carries it as `data-theme` for the CSS.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Theme {
    #[default]
    Light,
    Dark,
}

impl Theme {
    pub const fn as_str(self) -> &'static str {
        match self {
            Theme::Light => "light",
            Theme::Dark => "dark",
        }
    }

    /// Reads a host's theme name; anything but "dark" is light, because light is the safe default.
    pub fn parse(name: &str) -> Self {
        if name.trim().eq_ignore_ascii_case("dark") { Theme::Dark } else { Theme::Light }
    }
}

/// Theme and locale for one render. Same values give the same HTML in SSR and in wasm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderContext {
    pub theme: Theme,
    /// BCP 47 tag from the host, e.g. "en-US" or "de-DE". Used for prices and `lang`.
    pub locale: String,
    /// The host opens links for us (`ui/open-link` or `openExternal`): an outbound link's click
    /// goes through the host instead of navigating. Never part of the rendered HTML.
    pub host_opens_links: bool,
}

impl RenderContext {
    pub const DEFAULT_LOCALE: &'static str = "en-US";

    pub fn new(theme: Theme, locale: impl Into<String>) -> Self {
        Self { theme, locale: locale.into(), host_opens_links: false }
    }

    /// The same context, with links opened through the host when `yes`.
    pub fn with_host_links(mut self, yes: bool) -> Self {
        self.host_opens_links = yes;
        self
    }

    /// The `lang` attribute value: the host's tag if it looks like one, else the default,
    /// so a garbage locale cannot end up in markup as-is.
    pub fn lang(&self) -> &str {
        let tag = self.locale.trim();
        let plausible = !tag.is_empty()
            && tag.len() <= 35
            && tag.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if plausible { tag } else { Self::DEFAULT_LOCALE }
    }
}

impl Default for RenderContext {
    fn default() -> Self {
        Self::new(Theme::Light, Self::DEFAULT_LOCALE)
    }
}
