//! Sites for spdylab: a page as a tree of Resources — built-in profiles from the
//! source studies, built-in test pages (`priorities`: the HTTP/2
//! prioritization test), user sites in TOML, content generated
//! deterministically in real formats, layouts (origin, mirror, shards:N) and
//! the mapping of hosts onto shards. No I/O.

#![forbid(unsafe_code)]

pub mod content;
pub mod critical;
mod file;
pub mod har;
mod layout;
mod model;
pub mod preload;
pub mod priorities;
mod profiles;
mod recorded;
mod tree;

pub use file::parse as parse_toml;
pub use layout::{Layout, MAX_SHARDS};
pub use model::{Kind, Resource, Reveal, SiteError};
pub use preload::Preload;
pub use profiles::{builtin, builtin_names, BUILTIN, DEFAULT_SEED, OBJECTS_FORM, TESTS};
pub use recorded::Recorded;
pub use tree::Site;
