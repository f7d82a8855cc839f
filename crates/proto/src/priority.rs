//! A server's stream scheduler, sans-I/O: which open stream sends the next
//! chunk of its response. One scheduler serves HTTP/2 (RFC 7540's dependency
//! tree, as Chrome sends it: HEADERS' priority fields and PRIORITY frames; or
//! RFC 9218's `priority` header and PRIORITY_UPDATE when the client gives no
//! tree) and HTTP/3 and SPDY/3.1 (urgency alone). `Policy::Ignore` is what a
//! server that ignores priorities does: round robin over the streams with
//! data, one chunk each, in the order the requests came.
//!
//! The shell feeds it what the client said (`open`, `reprioritize`), which
//! streams have data it may send now (`ready`: a response queued and room in
//! the flow-control window), and what it sent (`sent`); `next` answers. No
//! clock, no bytes: unit tests drive it alone. Like nghttp2 and h2o, a tree's
//! siblings share by weight with stride scheduling (each child's pass grows by
//! bytes / weight; the least pass goes next), a stream that has data sends
//! before its descendants, and closed streams stay in the tree for a while
//! (RFC 9113 §5.3.4) so that a client's dependency on a stream the server
//! already finished still places the new one where the client meant.

use std::collections::{BTreeSet, HashMap, VecDeque};

/// What a client said about one stream's priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// RFC 7540 §5.3: a parent (0: the root), a weight 1..=256, exclusive.
    Tree {
        parent: u32,
        weight: u16,
        exclusive: bool,
    },
    /// RFC 9218: urgency 0 (first) ..= 7, and whether it may share.
    Urgency { urgency: u8, incremental: bool },
}

/// RFC 9218's defaults: urgency 3, not incremental.
pub const DEFAULT_URGENCY: Signal = Signal::Urgency {
    urgency: 3,
    incremental: false,
};

/// RFC 7540's default weight (a stream with no priority fields).
pub const DEFAULT_WEIGHT: u16 = 16;

/// Whether the server honours priorities (`--server-priorities on|off`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Policy {
    #[default]
    Honour,
    /// Round robin over the streams with data, one chunk each, by arrival.
    Ignore,
}

/// Closed streams kept in the tree (as placeholders) at most; the oldest go
/// first, their children moving up to their parent.
const KEEP_CLOSED: usize = 64;

/// The parent of a node out of the tree while it moves.
const DETACHED: u32 = u32::MAX;

/// A pass unit: a chunk of bytes over weight 256 advances a pass by bytes.
const STRIDE: u64 = 256;

#[derive(Debug, Clone)]
struct Node {
    parent: u32,
    weight: u16,
    children: Vec<u32>,
    /// Has data to send now.
    ready: bool,
    /// Ready nodes in this subtree, itself included.
    ready_below: usize,
    /// Stride scheduling among siblings.
    pass: u64,
    /// The pass its child served last had then: a child that wakes up
    /// starts there (nghttp2's `descendant_last_cycle`), in O(1) rather
    /// than by looking at every sibling.
    vtime: u64,
    /// Open (a request this connection is answering), or kept after closing.
    open: bool,
    urgency: u8,
    incremental: bool,
    /// Arrival order.
    seq: u64,
}

impl Node {
    fn new(parent: u32, weight: u16, seq: u64) -> Node {
        Node {
            parent,
            weight: weight.clamp(1, 256),
            children: Vec::new(),
            ready: false,
            ready_below: 0,
            pass: 0,
            vtime: 0,
            open: false,
            urgency: 3,
            incremental: false,
            seq,
        }
    }
}

/// The scheduler of one connection (see the module doc).
#[derive(Debug, Clone)]
pub struct Scheduler {
    policy: Policy,
    /// Every stream in the tree, and the root (0).
    nodes: HashMap<u32, Node>,
    /// Whether any stream brought tree fields: then the tree decides (as
    /// Chrome's h2), else urgency (RFC 9218 clients, h3, SPDY).
    tree: bool,
    seq: u64,
    closed: VecDeque<u32>,
    /// Ready streams by (urgency, incremental, seq, id), for urgency order.
    by_urgency: BTreeSet<(u8, bool, u64, u32)>,
    /// The last incremental stream served, per urgency: round robin goes on
    /// after it.
    last_incremental: [u64; 8],
    /// Round robin by arrival for `Policy::Ignore`: the last served seq.
    last_any: u64,
    /// Ready streams by (seq, id), for `Policy::Ignore`.
    by_seq: BTreeSet<(u64, u32)>,
}

impl Scheduler {
    pub fn new(policy: Policy) -> Scheduler {
        let mut nodes = HashMap::new();
        nodes.insert(0, Node::new(0, 256, 0));
        Scheduler {
            policy,
            nodes,
            tree: false,
            seq: 0,
            closed: VecDeque::new(),
            by_urgency: BTreeSet::new(),
            last_incremental: [0; 8],
            last_any: 0,
            by_seq: BTreeSet::new(),
        }
    }

    pub fn policy(&self) -> Policy {
        self.policy
    }

    /// A stream opens with what its request said: tree fields (h2's HEADERS),
    /// urgency (a `priority` header), either or both. A stream already in
    /// the tree (a PRIORITY frame came first) keeps its place unless `tree`
    /// is given.
    pub fn open(&mut self, id: u32, tree: Option<Signal>, urgency: Option<Signal>) {
        if id == 0 {
            return;
        }
        if !self.nodes.contains_key(&id) {
            self.seq += 1;
            let seq = self.seq;
            self.nodes
                .insert(id, Node::new(DETACHED, DEFAULT_WEIGHT, seq));
            self.attach(id, 0, false);
        } else if let Some(pos) = self.closed.iter().position(|&c| c == id) {
            self.closed.remove(pos);
        }
        if let Some(n) = self.nodes.get_mut(&id) {
            n.open = true;
        }
        if let Some(t @ Signal::Tree { .. }) = tree {
            self.reprioritize(id, t);
        }
        let u = match urgency {
            Some(u @ Signal::Urgency { .. }) => u,
            _ => DEFAULT_URGENCY,
        };
        self.reprioritize(id, u);
    }

    /// A new signal for a stream: a PRIORITY frame (which may name a stream
    /// not yet open: it is placed now and opens later) or a PRIORITY_UPDATE.
    pub fn reprioritize(&mut self, id: u32, signal: Signal) {
        if id == 0 {
            return;
        }
        match signal {
            Signal::Tree {
                parent,
                weight,
                exclusive,
            } => {
                self.tree = true;
                if !self.nodes.contains_key(&id) {
                    self.seq += 1;
                    let seq = self.seq;
                    self.nodes.insert(id, Node::new(DETACHED, weight, seq));
                    self.attach(id, 0, false);
                    self.keep_closed(id);
                }
                // A stream cannot depend on itself (RFC 9113 §5.3.1: a
                // stream error the h2 crate does not raise): ignored.
                if parent == id {
                    return;
                }
                // Unknown parent: the default priority (§5.3.1).
                let (parent, weight, exclusive) = if self.nodes.contains_key(&parent) {
                    (parent, weight, exclusive)
                } else {
                    (0, DEFAULT_WEIGHT, false)
                };
                // Moving under one's own descendant: that descendant moves
                // to our old parent first (§5.3.3).
                if self.is_descendant(parent, id) {
                    let old_parent = self.nodes[&id].parent;
                    self.detach(parent);
                    self.attach(parent, old_parent, false);
                }
                self.detach(id);
                if let Some(n) = self.nodes.get_mut(&id) {
                    n.weight = weight.clamp(1, 256);
                }
                self.attach(id, parent, exclusive);
            }
            Signal::Urgency {
                urgency,
                incremental,
            } => {
                let Some(n) = self.nodes.get(&id) else {
                    return;
                };
                let (was_ready, seq, old) = (n.ready, n.seq, (n.urgency, n.incremental));
                if was_ready {
                    self.by_urgency.remove(&(old.0, old.1, seq, id));
                }
                let n = self.nodes.get_mut(&id).expect("present");
                n.urgency = urgency.min(7);
                n.incremental = incremental;
                if was_ready {
                    self.by_urgency
                        .insert((urgency.min(7), incremental, seq, id));
                }
            }
        }
    }

    /// Whether `id` may send now (data queued, window open).
    pub fn ready(&mut self, id: u32, ready: bool) {
        let Some(n) = self.nodes.get_mut(&id) else {
            return;
        };
        if n.ready == ready || !n.open {
            return;
        }
        n.ready = ready;
        let key = (n.urgency, n.incremental, n.seq, id);
        if ready {
            self.by_urgency.insert(key);
            self.by_seq.insert((key.2, id));
        } else {
            self.by_urgency.remove(&key);
            self.by_seq.remove(&(key.2, id));
        }
        let delta: isize = if ready { 1 } else { -1 };
        self.add_ready_up(id, delta);
        if ready {
            // A subtree waking up starts at its parent's virtual time
            // (no credit saved from idling).
            self.level_pass(id);
        }
    }

    /// The stream that sends the next chunk, if any may.
    pub fn next(&self) -> Option<u32> {
        if self.by_urgency.is_empty() {
            return None;
        }
        match self.policy {
            Policy::Ignore => self
                .by_seq
                .range((self.last_any + 1, 0)..)
                .next()
                .or_else(|| self.by_seq.first())
                .map(|k| k.1),
            Policy::Honour if self.tree => self.next_in_tree(),
            Policy::Honour => self.next_by_urgency(),
        }
    }

    /// `id` sent `bytes` of its response.
    pub fn sent(&mut self, id: u32, bytes: usize) {
        let Some(n) = self.nodes.get(&id) else {
            return;
        };
        let (seq, urgency) = (n.seq, n.urgency);
        self.last_any = seq;
        self.last_incremental[urgency as usize] = seq;
        // Each edge from the root down to `id` advances by bytes / weight.
        // Its parent's virtual time moves to the pass it was served at.
        let mut at = id;
        while at != 0 {
            let Some(n) = self.nodes.get_mut(&at) else {
                break;
            };
            let served_at = n.pass;
            n.pass += bytes as u64 * STRIDE / u64::from(n.weight);
            at = n.parent;
            if let Some(p) = self.nodes.get_mut(&at) {
                p.vtime = p.vtime.max(served_at);
            }
        }
    }

    /// The stream's response is done (or reset): it sends no more, and stays
    /// in the tree for a while as a placeholder — once the client has sent a
    /// tree; before that no dependency can name it, and it goes at once.
    pub fn close(&mut self, id: u32) {
        self.ready(id, false);
        if !self.tree && self.nodes.get(&id).is_some_and(|n| n.children.is_empty()) {
            self.detach(id);
            self.nodes.remove(&id);
            return;
        }
        if let Some(n) = self.nodes.get_mut(&id) {
            n.open = false;
            self.keep_closed(id);
        }
    }

    /// Streams known (open and kept), for tests and bounds.
    pub fn len(&self) -> usize {
        self.nodes.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn keep_closed(&mut self, id: u32) {
        if !self.closed.contains(&id) {
            self.closed.push_back(id);
        }
        while self.closed.len() > KEEP_CLOSED {
            let Some(old) = self.closed.pop_front() else {
                break;
            };
            if self.nodes.get(&old).is_some_and(|n| !n.open) {
                self.remove(old);
            }
        }
    }

    /// Takes a closed node out; its children move up to its parent.
    fn remove(&mut self, id: u32) {
        let Some(node) = self.nodes.get(&id) else {
            return;
        };
        let (parent, children) = (node.parent, node.children.clone());
        self.detach(id);
        for c in children {
            self.detach(c);
            self.attach(c, parent, false);
        }
        self.nodes.remove(&id);
    }

    fn is_descendant(&self, mut node: u32, of: u32) -> bool {
        let mut hops = 0;
        while node != 0 && hops <= self.nodes.len() {
            if node == of {
                return true;
            }
            node = self.nodes.get(&node).map_or(0, |n| n.parent);
            hops += 1;
        }
        false
    }

    fn add_ready_up(&mut self, id: u32, delta: isize) {
        let mut at = Some(id);
        let mut hops = 0;
        while let Some(a) = at {
            let Some(n) = self.nodes.get_mut(&a) else {
                break;
            };
            n.ready_below = n.ready_below.saturating_add_signed(delta);
            at = (a != 0).then_some(n.parent);
            hops += 1;
            if hops > self.nodes.len() + 1 {
                break;
            }
        }
    }

    /// A subtree waking up starts at its parent's virtual time at every
    /// level (no credit saved from idling). Only the tree uses passes.
    fn level_pass(&mut self, id: u32) {
        if !self.tree {
            return;
        }
        let mut at = id;
        let mut hops = 0;
        while at != 0 && hops <= self.nodes.len() {
            let Some(parent) = self.nodes.get(&at).map(|n| n.parent) else {
                return;
            };
            let Some(floor) = self.nodes.get(&parent).map(|p| p.vtime) else {
                return;
            };
            if let Some(n) = self.nodes.get_mut(&at) {
                n.pass = n.pass.max(floor);
            }
            at = parent;
            hops += 1;
        }
    }

    /// Takes `id` from its parent's children (its subtree goes with it).
    fn detach(&mut self, id: u32) {
        let Some(n) = self.nodes.get(&id) else {
            return;
        };
        let (parent, below) = (n.parent, n.ready_below as isize);
        let attached = self.nodes.get_mut(&parent).is_some_and(|p| {
            match p.children.iter().position(|&c| c == id) {
                Some(i) => {
                    p.children.remove(i);
                    true
                }
                None => false,
            }
        });
        if attached && below > 0 {
            self.add_ready_up(parent, -below);
        }
        if let Some(n) = self.nodes.get_mut(&id) {
            n.parent = DETACHED;
        }
    }

    /// Puts a detached `id` under `parent`; exclusive: the parent's other
    /// children become `id`'s.
    fn attach(&mut self, id: u32, parent: u32, exclusive: bool) {
        let others: Vec<u32> = match self.nodes.get(&parent) {
            Some(p) if exclusive => p.children.iter().copied().filter(|&c| c != id).collect(),
            _ => Vec::new(),
        };
        self.link(id, parent);
        for c in others {
            self.detach(c);
            self.link(c, id);
        }
    }

    fn link(&mut self, id: u32, parent: u32) {
        let below = self.nodes[&id].ready_below as isize;
        if let Some(n) = self.nodes.get_mut(&id) {
            n.parent = parent;
        }
        if let Some(p) = self.nodes.get_mut(&parent) {
            p.children.push(id);
        }
        if below > 0 {
            self.add_ready_up(parent, below);
            self.level_pass(id);
        }
    }

    fn next_in_tree(&self) -> Option<u32> {
        let mut at = 0;
        for _ in 0..=self.nodes.len() {
            let n = &self.nodes[&at];
            if at != 0 && n.ready {
                return Some(at);
            }
            at = *n
                .children
                .iter()
                .filter(|c| self.nodes[c].ready_below > 0)
                .min_by_key(|c| (self.nodes[c].pass, self.nodes[c].seq))?;
        }
        None
    }

    fn next_by_urgency(&self) -> Option<u32> {
        let &(urgency, _, _, _) = self.by_urgency.first()?;
        let level = self
            .by_urgency
            .range((urgency, false, 0, 0)..(urgency + 1, false, 0, 0));
        // Non-incremental first, one at a time in arrival order (RFC 9218
        // §10); then the incremental ones share, round robin.
        let mut incremental = level.clone().filter(|k| k.1).peekable();
        if let Some(k) = level.clone().find(|k| !k.1) {
            return Some(k.3);
        }
        let last = self.last_incremental[urgency as usize];
        incremental
            .clone()
            .find(|k| k.2 > last)
            .or_else(|| incremental.peek().copied())
            .map(|k| k.3)
    }
}

/// An RFC 9218 Priority field value (`u=1, i`), as a `Signal::Urgency`:
/// unknown members and bad values are ignored (§4: the defaults stand).
pub fn parse_priority_field(value: &str) -> Signal {
    let (mut urgency, mut incremental) = (3u8, false);
    for member in value.split(',') {
        let member = member.trim();
        let (key, val) = match member.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim())),
            None => (member, None),
        };
        // Parameters (`;…`) are ignored.
        let val = val.map(|v| v.split(';').next().unwrap_or("").trim());
        match (key, val) {
            ("u", Some(v)) => {
                if let Ok(u) = v.parse::<u8>() {
                    if u <= 7 {
                        urgency = u;
                    }
                }
            }
            ("i", None) | ("i", Some("?1")) => incremental = true,
            ("i", Some("?0")) => incremental = false,
            _ => {}
        }
    }
    Signal::Urgency {
        urgency,
        incremental,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHUNK: usize = 16_384;

    /// Serves `total[id]` bytes per stream in chunks until all are done,
    /// returning the order of (id, chunk) as sent.
    fn drain(s: &mut Scheduler, left: &mut HashMap<u32, usize>) -> Vec<u32> {
        let mut order = Vec::new();
        while let Some(id) = s.next() {
            let n = left[&id].min(CHUNK);
            s.sent(id, n);
            *left.get_mut(&id).unwrap() -= n;
            order.push(id);
            if left[&id] == 0 {
                s.close(id);
            }
            assert!(order.len() < 10_000, "no end");
        }
        order
    }

    fn tree(parent: u32, weight: u16, exclusive: bool) -> Option<Signal> {
        Some(Signal::Tree {
            parent,
            weight,
            exclusive,
        })
    }

    fn urgency(u: u8, i: bool) -> Option<Signal> {
        Some(Signal::Urgency {
            urgency: u,
            incremental: i,
        })
    }

    #[test]
    fn chrome_exclusive_chain_is_sequential_and_a_later_high_goes_first() {
        let mut s = Scheduler::new(Policy::Honour);
        let mut left = HashMap::new();
        // Chrome: each LOW depends exclusively on the LOW before it.
        let mut prev = 0;
        for id in [1, 3, 5, 7] {
            s.open(id, tree(prev, 183, true), None);
            s.ready(id, true);
            left.insert(id, 3 * CHUNK);
            prev = id;
        }
        // Two chunks of stream 1 go, then a HIGH arrives on the root,
        // exclusive: above every LOW.
        for _ in 0..2 {
            let id = s.next().unwrap();
            assert_eq!(id, 1);
            s.sent(id, CHUNK);
            *left.get_mut(&id).unwrap() -= CHUNK;
        }
        s.open(9, tree(0, 256, true), None);
        s.ready(9, true);
        left.insert(9, 2 * CHUNK);
        let order = drain(&mut s, &mut left);
        assert_eq!(order, vec![9, 9, 1, 3, 3, 3, 5, 5, 5, 7, 7, 7]);
    }

    #[test]
    fn siblings_share_by_weight() {
        let mut s = Scheduler::new(Policy::Honour);
        s.open(1, tree(0, 200, false), None);
        s.open(3, tree(0, 100, false), None);
        s.ready(1, true);
        s.ready(3, true);
        let mut counts = HashMap::new();
        for _ in 0..300 {
            let id = s.next().unwrap();
            s.sent(id, CHUNK);
            *counts.entry(id).or_insert(0) += 1;
        }
        assert_eq!(counts[&1], 200);
        assert_eq!(counts[&3], 100);
    }

    #[test]
    fn a_sibling_waking_up_saves_no_credit_from_its_idle_time() {
        let mut s = Scheduler::new(Policy::Honour);
        s.open(1, tree(0, 16, false), None);
        s.open(3, tree(0, 16, false), None);
        s.ready(1, true);
        for _ in 0..10 {
            assert_eq!(s.next(), Some(1));
            s.sent(1, CHUNK);
        }
        // 3 had nothing to send while 1 sent ten chunks: now they alternate,
        // 3 does not send ten in a row.
        s.ready(3, true);
        let order: Vec<u32> = (0..6)
            .map(|_| {
                let id = s.next().unwrap();
                s.sent(id, CHUNK);
                id
            })
            .collect();
        assert_eq!(order.iter().filter(|&&id| id == 3).count(), 3, "{order:?}");
    }

    #[test]
    fn a_parent_with_data_goes_before_its_children_and_a_blocked_one_lets_them() {
        let mut s = Scheduler::new(Policy::Honour);
        s.open(1, tree(0, 16, false), None);
        s.open(3, tree(1, 16, false), None);
        s.ready(1, true);
        s.ready(3, true);
        assert_eq!(s.next(), Some(1));
        // Flow control holds 1 back: its child may send.
        s.ready(1, false);
        assert_eq!(s.next(), Some(3));
        s.ready(1, true);
        assert_eq!(s.next(), Some(1));
    }

    #[test]
    fn a_priority_frame_raises_a_stream_already_queued() {
        let mut s = Scheduler::new(Policy::Honour);
        let mut prev = 0;
        for id in [1, 3, 5] {
            s.open(id, tree(prev, 183, true), None);
            s.ready(id, true);
            prev = id;
        }
        assert_eq!(s.next(), Some(1));
        // Chrome raises stream 5 (a visible image) to HIGH: a PRIORITY frame
        // putting it on the root, exclusive.
        s.reprioritize(5, tree(0, 256, true).unwrap());
        assert_eq!(s.next(), Some(5));
        // Moving 1 under its own descendant 3: 3 first moves up (§5.3.3).
        s.reprioritize(1, tree(3, 16, true).unwrap());
        s.close(5);
        assert_eq!(s.next(), Some(3));
    }

    #[test]
    fn a_dependency_on_a_finished_stream_still_places_the_new_one() {
        let mut s = Scheduler::new(Policy::Honour);
        s.open(1, tree(0, 183, true), None);
        s.open(3, tree(1, 183, true), None);
        s.close(1);
        s.open(5, tree(3, 183, true), None);
        s.open(7, tree(1, 256, true), None);
        for id in [3, 5, 7] {
            s.ready(id, true);
        }
        // 7 went under the closed 1, above 3 and 5.
        assert_eq!(s.next(), Some(7));
    }

    #[test]
    fn closed_streams_kept_are_bounded() {
        let mut s = Scheduler::new(Policy::Honour);
        let mut prev = 0;
        for i in 0..1000u32 {
            let id = 2 * i + 1;
            s.open(id, tree(prev, 183, true), None);
            s.ready(id, true);
            s.sent(id, 10);
            s.close(id);
            prev = id;
        }
        assert!(s.len() <= KEEP_CLOSED + 1, "{}", s.len());
        assert_eq!(s.next(), None);
    }

    #[test]
    fn urgency_orders_then_non_incremental_in_turn_then_incremental_share() {
        let mut s = Scheduler::new(Policy::Honour);
        let mut left = HashMap::new();
        for (id, u, i) in [(1, 3, true), (3, 3, true), (5, 3, false), (7, 1, false)] {
            s.open(id, None, urgency(u, i));
            s.ready(id, true);
            left.insert(id, 2 * CHUNK);
        }
        let order = drain(&mut s, &mut left);
        assert_eq!(order, vec![7, 7, 5, 5, 1, 3, 1, 3]);
    }

    #[test]
    fn a_priority_update_moves_a_queued_stream() {
        let mut s = Scheduler::new(Policy::Honour);
        s.open(0, None, None);
        s.open(4, None, urgency(2, true));
        s.open(8, None, urgency(2, true));
        s.ready(4, true);
        s.ready(8, true);
        s.reprioritize(
            8,
            Signal::Urgency {
                urgency: 0,
                incremental: false,
            },
        );
        assert_eq!(s.next(), Some(8));
    }

    #[test]
    fn ignore_is_round_robin_by_arrival_whatever_was_said() {
        let mut s = Scheduler::new(Policy::Ignore);
        let mut left = HashMap::new();
        for (id, w) in [(1, 1), (3, 256), (5, 100)] {
            s.open(id, tree(0, w, true), urgency(7 - (id as u8 % 7), false));
            s.ready(id, true);
            left.insert(id, 2 * CHUNK);
        }
        assert_eq!(drain(&mut s, &mut left), vec![1, 3, 5, 1, 3, 5]);
    }

    #[test]
    fn priority_field_values() {
        assert_eq!(parse_priority_field("u=1, i"), urgency(1, true).unwrap());
        assert_eq!(parse_priority_field("u=0"), urgency(0, false).unwrap());
        assert_eq!(
            parse_priority_field("i=?1;x, u=5"),
            urgency(5, true).unwrap()
        );
        assert_eq!(parse_priority_field("u=9, i=?0"), DEFAULT_URGENCY);
        assert_eq!(parse_priority_field("garbage,,=,u="), DEFAULT_URGENCY);
    }

    /// The tree's bookkeeping, recomputed: counts, parents, no orphan.
    fn check(s: &Scheduler) {
        for (&id, n) in &s.nodes {
            let below: usize = n.children.iter().map(|c| s.nodes[c].ready_below).sum();
            assert_eq!(n.ready_below, below + n.ready as usize, "counts at {id}");
            for c in &n.children {
                assert_eq!(s.nodes[c].parent, id, "parent of {c}");
            }
            if id != 0 {
                assert!(s.nodes[&n.parent].children.contains(&id), "{id} orphaned");
            }
        }
    }

    #[test]
    fn any_sequence_of_calls_stays_consistent() {
        // A deterministic pseudo-random walk over every call: no panic, and
        // `next` only ever names an open, ready stream.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut rand = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let mut s = Scheduler::new(Policy::Honour);
        let mut ready = std::collections::HashSet::new();
        for _ in 0..20_000 {
            let id = (rand(40) * 2 + 1) as u32;
            match rand(6) {
                0 => s.open(
                    id,
                    tree(rand(82) as u32, rand(300) as u16, rand(2) == 0),
                    None,
                ),
                1 => s.reprioritize(
                    id,
                    tree(rand(82) as u32, 1 + rand(256) as u16, rand(2) == 0).unwrap(),
                ),
                2 => {
                    s.ready(id, true);
                    if s.nodes.get(&id).is_some_and(|n| n.open) {
                        ready.insert(id);
                    }
                }
                3 => {
                    s.ready(id, false);
                    ready.remove(&id);
                }
                4 => {
                    s.close(id);
                    ready.remove(&id);
                }
                _ => {
                    if let Some(n) = s.next() {
                        assert!(ready.contains(&n), "{n} not ready");
                        s.sent(n, CHUNK);
                    } else {
                        assert!(ready.is_empty(), "{ready:?} ready but none chosen");
                    }
                }
            }
            check(&s);
        }
    }
}
