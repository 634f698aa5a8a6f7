//! How to render, as opposed to what: the host's theme, locale and display mode.

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

/// How the host shows the view (MCP Apps `displayMode`): in the conversation, over the whole
/// window, or as a floating picture-in-picture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(not(target_arch = "wasm32"), derive(serde::Serialize, schemars::JsonSchema))]
#[cfg_attr(not(target_arch = "wasm32"), serde(rename_all = "lowercase"))]
pub enum DisplayMode {
    #[default]
    Inline,
    Fullscreen,
    Pip,
}

impl DisplayMode {
    pub const fn as_str(self) -> &'static str {
        match self {
            DisplayMode::Inline => "inline",
            DisplayMode::Fullscreen => "fullscreen",
            DisplayMode::Pip => "pip",
        }
    }

    /// A host's mode name; `None` for anything the spec does not define.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "inline" => Some(DisplayMode::Inline),
            "fullscreen" => Some(DisplayMode::Fullscreen),
            "pip" => Some(DisplayMode::Pip),
            _ => None,
        }
    }
}

/// Theme, locale and display for one render. Same values give the same HTML in SSR and in wasm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderContext {
    pub theme: Theme,
    /// BCP 47 tag from the host, e.g. "en-US" or "de-DE". Used for prices and `lang`.
    pub locale: String,
    /// The host has its own payment sheet (`window.openai.requestCheckout`): the confirm card
    /// offers paying there next to Confirm. Never part of the server's markup, which renders
    /// that button hidden for the runtime to show where the host has the sheet.
    pub host_checkout: bool,
    /// How the host currently shows the view; the root carries it as `data-display-mode` when
    /// it is not the default inline.
    pub display_mode: DisplayMode,
    /// The host declared `fullscreen` among its available display modes, so the view offers a
    /// button to enter (or leave) it. Without that declaration there is no such button.
    pub can_fullscreen: bool,
}

impl RenderContext {
    pub const DEFAULT_LOCALE: &'static str = "en-US";

    pub fn new(theme: Theme, locale: impl Into<String>) -> Self {
        Self {
            theme,
            locale: locale.into(),
            host_checkout: false,
            display_mode: DisplayMode::Inline,
            can_fullscreen: false,
        }
    }

    /// The same context, with the host's payment sheet offered when `yes`.
    pub fn with_host_checkout(mut self, yes: bool) -> Self {
        self.host_checkout = yes;
        self
    }

    /// The same context, shown in `mode`, with a full-screen toggle when `can_fullscreen`.
    pub fn with_display(mut self, mode: DisplayMode, can_fullscreen: bool) -> Self {
        self.display_mode = mode;
        self.can_fullscreen = can_fullscreen;
        self
    }

    /// `data-display-mode` of the root: absent inline, so the default markup stays unchanged.
    pub fn display_attribute(&self) -> Option<&'static str> {
        (self.display_mode != DisplayMode::Inline).then(|| self.display_mode.as_str())
    }

    /// The language the person reads: from the host's locale, English when it is not one of ours.
    pub fn language(&self) -> crate::i18n::Lang {
        crate::i18n::Lang::from_locale(&self.locale)
    }

    /// The `lang` attribute value: the host's tag if it looks like one and names the language
    /// the text is in, else that language's code, so a garbage locale never ends up in markup.
    pub fn lang(&self) -> &str {
        let tag = self.locale.trim();
        let plausible = !tag.is_empty()
            && tag.len() <= 35
            && tag.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        let language = self.language();
        let primary = tag.split(['-', '_']).next().unwrap_or("");
        // The text is in `language`: a locale of another language (de-DE) reads English, so it says "en".
        if plausible && primary.eq_ignore_ascii_case(language.code()) { tag } else { language.code() }
    }
}

impl Default for RenderContext {
    fn default() -> Self {
        Self::new(Theme::Light, Self::DEFAULT_LOCALE)
    }
}
