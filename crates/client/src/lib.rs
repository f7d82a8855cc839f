//! spdylab's browser model: loads a Site's page as a browser of 2014 did —
//! discovering resources from the bytes that arrive, scheduling them on
//! connections per protocol — over real TCP and TLS, and reports timings.

pub mod discover;
mod load;
pub mod schedule;

pub use load::users;
pub use load::{fetch_spdy3, load, Entry, Fetched, LoadConfig, LoadResult, Timings};
