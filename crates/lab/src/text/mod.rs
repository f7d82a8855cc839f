//! What the commands print for a person: each command's table and summary as
//! lines of text, from the lab's results. The CLI only prints these lines; the
//! layout (columns, n/a cells, notes under a table) is decided and tested here.

pub mod bench;
pub mod calibrate;
pub mod compare;
pub mod crosscheck;

pub mod loadtest;
pub mod peers;
pub mod priorities;
pub mod profiles;
pub mod record;
pub mod serve;
pub mod sites;
