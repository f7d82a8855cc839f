//! spdylab's browser model: loads a Site's page as a browser of 2014 did —
//! discovering resources from the bytes that arrive, scheduling them on
//! connections per protocol — over real TCP and TLS, and reports timings
//! (`page`); virtual users for load tests (`users`); the connections both use
//! (`conn`); for imported pages, discovery from the import's tree (`replay`);
//! Chrome's request priorities and their signals on the wire (`priority`);
//! the HTTP/2 prioritization test driven by the model (`priority_test`);
//! 103 Early Hints read as Chromium reads them (`hints`); the HTTP cache
//! the repeat view keeps between two loads (`cache`).

#![forbid(unsafe_code)]

pub mod cache;
pub mod conn;
pub mod discover;
mod grease;
pub mod headers;
pub mod hints;
pub mod ink;
pub mod page;
pub mod paint;
mod pq;
pub mod priority;
pub mod priority_test;
pub mod render;
pub mod replay;
pub mod schedule;
mod style;
pub mod users;

pub use conn::spdy3::{fetch as fetch_spdy3, FetchError, Fetched};
pub use headers::{HeaderSet, RequestHeaders};
pub use page::{
    load_page, load_page_full, load_page_keeping_connections, load_page_reusing, Entry,
    HintsAndPushes, Knobs, OpenConnections, PageConfig, PageResult, Reuse, SharedCache, Timings,
};
pub use paint::{FilmFrame, Paint};
pub use priority::{Priority, RequestPriority};
pub use render::BrowserCost;
pub use schedule::Pool;
