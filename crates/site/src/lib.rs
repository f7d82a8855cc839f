//! Sites for spdylab: a page as a tree of Resources — built-in profiles from the
//! source studies, user sites in TOML, content generated deterministically in
//! real formats, layouts (origin, mirror, shards:N) and the mapping of hosts
//! onto shards. No I/O.

#![forbid(unsafe_code)]

pub mod content;
mod file;
pub mod har;
mod layout;
mod model;
mod profiles;
mod recorded;
mod tree;

pub use file::parse as parse_toml;
pub use layout::{Layout, MAX_SHARDS};
pub use model::{Kind, Resource, Reveal, SiteError};
pub use profiles::{builtin, BUILTIN, DEFAULT_SEED};
pub use recorded::Recorded;
pub use tree::Site;
