//! Property tests of layouts (issue 16): a layout moves resources between host
//! names and nothing else — every resource keeps its kind, size, parent and
//! reveal (so the tree's shape), its body keeps its length, and each parent's
//! body references its children at their new URLs. Mirror leaves one host,
//! shards:N min(N, resources) hosts.

use proptest::prelude::*;
use site::{builtin, content, Kind, Layout, Resource, Reveal, Site, BUILTIN};

fn any_layout() -> impl Strategy<Value = Layout> {
    prop_oneof![
        Just(Layout::Origin),
        Just(Layout::Mirror),
        (1usize..=12).prop_map(Layout::Shards),
    ]
}

/// A random page: an HTML root, children on a few hosts revealed by the head
/// or the body, some stylesheets revealing images, some paths shared across hosts.
fn any_site() -> impl Strategy<Value = Site> {
    (
        1usize..30,
        proptest::collection::vec((0usize..4, 0usize..3, 0usize..4, 100usize..5000), 30),
        any::<u64>(),
    )
        .prop_map(|(n, picks, seed)| {
            let hosts = ["www.a.test", "static.a.test", "img.b.test", "x.test"];
            let mut rs = vec![Resource {
                host: hosts[0].into(),
                path: "/".into(),
                kind: Kind::Html,
                size: 40_000,
                parent: None,
                reveal: Reveal::Root,
            }];
            let mut css = Vec::new();
            for (i, &(h, what, p, size)) in picks.iter().take(n).enumerate() {
                let (kind, parent, reveal) = match what {
                    0 => (Kind::Css, 0, Reveal::Head),
                    1 if !css.is_empty() => (Kind::Png, css[p % css.len()], Reveal::Css),
                    _ => (Kind::Png, 0, Reveal::Body),
                };
                if kind == Kind::Css {
                    css.push(rs.len());
                }
                rs.push(Resource {
                    host: hosts[h].into(),
                    // Paths repeat across hosts: a mirror must keep them apart.
                    path: format!("/r{}.{}", i % 5, kind.name()),
                    kind,
                    size: if kind == Kind::Css { size + 4000 } else { size },
                    parent: Some(parent),
                    reveal,
                });
            }
            // Same path on one host twice is not a site: drop such repeats.
            let mut seen = std::collections::HashSet::new();
            let mut keep = vec![true; rs.len()];
            for (i, r) in rs.iter().enumerate() {
                if !seen.insert((r.host.clone(), r.path.clone())) {
                    keep[i] = false;
                }
            }
            let mut map = vec![None; rs.len()];
            let mut out = Vec::new();
            for (i, r) in rs.into_iter().enumerate() {
                let parent_kept = r.parent.is_none_or(|p| map[p].is_some());
                if keep[i] && parent_kept {
                    map[i] = Some(out.len());
                    out.push(Resource {
                        parent: r.parent.map(|p| map[p].unwrap()),
                        ..r
                    });
                }
            }
            Site::new("random", "", seed, out).expect("generated site is valid")
        })
}

fn check(s: &Site, layout: Layout) -> Result<(), TestCaseError> {
    let t = layout
        .apply(s)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(t.resources.len(), s.resources.len());
    for (a, b) in s.resources.iter().zip(&t.resources) {
        prop_assert_eq!(a.kind, b.kind);
        prop_assert_eq!(a.size, b.size);
        prop_assert_eq!(a.parent, b.parent);
        prop_assert_eq!(a.reveal, b.reveal);
    }
    for i in 0..t.resources.len() {
        let body = t.body(i);
        prop_assert_eq!(body.len(), t.resources[i].size);
        prop_assert_eq!(t.depth(i), s.depth(i));
        if matches!(t.resources[i].kind, Kind::Html | Kind::Css) {
            let text = String::from_utf8(body).unwrap();
            for c in t.children(i) {
                prop_assert!(
                    text.contains(&content::reference(c)),
                    "{}",
                    content::reference(c)
                );
            }
        }
    }
    let hosts = t.hosts().len();
    match layout {
        Layout::Origin => prop_assert_eq!(t.resources, s.resources.clone()),
        Layout::Mirror => prop_assert_eq!(hosts, 1),
        Layout::Shards(n) => prop_assert_eq!(hosts, n.min(s.resources.len())),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn a_layout_keeps_bytes_kinds_and_tree(s in any_site(), layout in any_layout()) {
        check(&s, layout)?;
    }

    #[test]
    fn built_in_sites_take_every_layout(i in 0..BUILTIN.len(), seed in any::<u64>(), layout in any_layout()) {
        check(&builtin(BUILTIN[i], seed).unwrap(), layout)?;
    }
}
