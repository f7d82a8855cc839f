//! The data of a Site: what a resource is (host, path, kind, size, parent, and
//! how the parent reveals it) and why a site is not valid. Content is
//! generated from it (`content`); the validated tree is `tree::Site`.

use serde::Serialize;
use std::fmt;

/// What a resource is; decides its format and Content-Type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Html,
    Css,
    Js,
    Png,
    Font,
    Flash,
    Other,
}

impl Kind {
    pub const ALL: [Kind; 7] = [
        Kind::Html,
        Kind::Css,
        Kind::Js,
        Kind::Png,
        Kind::Font,
        Kind::Flash,
        Kind::Other,
    ];

    pub fn content_type(self) -> &'static str {
        match self {
            Kind::Html => "text/html; charset=utf-8",
            Kind::Css => "text/css",
            Kind::Js => "application/javascript",
            Kind::Png => "image/png",
            Kind::Font => "font/woff",
            Kind::Flash => "application/x-shockwave-flash",
            Kind::Other => "application/octet-stream",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::Html => "html",
            Kind::Css => "css",
            Kind::Js => "js",
            Kind::Png => "png",
            Kind::Font => "font",
            Kind::Flash => "flash",
            Kind::Other => "other",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a parent reveals a resource to the browser.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Reveal {
    /// The page itself.
    Root,
    /// A tag in the HTML head (stylesheets, scripts).
    Head,
    /// A tag in the HTML body (images, scripts, embeds), found as the body streams in.
    Body,
    /// A `url()` in a stylesheet, known once the stylesheet is complete.
    Css,
    /// Injected by a script once the script has arrived and run.
    Script,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Resource {
    pub host: String,
    pub path: String,
    pub kind: Kind,
    pub size: usize,
    /// Index of the parent in `Site::resources`; None for the root.
    pub parent: Option<usize>,
    pub reveal: Reveal,
}

impl Resource {
    pub fn url(&self, scheme: &str) -> String {
        format!("{scheme}://{}{}", self.host, self.path)
    }
}

/// Why a Site is not valid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteError(pub String);

impl fmt::Display for SiteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SiteError {}
