//! The built-in server's QUIC and HTTP/3 against hostile peers: each test
//! runs one attack on `spdylab serve`'s h3 while legitimate h3 clients
//! (spdylab's own and aioquic) keep fetching, and checks that the server
//! stays up, bounded in memory, serves every legitimate request, and never
//! sends an unvalidated address more than 3× what it received.
